/*
 * zeros.c - writes 0 everywhere. Outputs are about 1/sqrt(C) (0.016 for
 * C = 4096); only a too-loose tolerance would accept this.
 * Expected: incorrect.
 */
#include <stdint.h>
#include <string.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    (void)x;
    memset(y, 0, (size_t)(R * C) * sizeof(float));
}
