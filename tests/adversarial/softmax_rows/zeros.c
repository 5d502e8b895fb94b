/*
 * zeros.c - writes 0 everywhere. Softmax outputs are about 1/C (5e-4 for
 * C = 2048), so a loose absolute tolerance would let this pass; the task's
 * atol = 1e-5 must not.
 * Expected: incorrect.
 */
#include <stdint.h>
#include <string.h>

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    (void)x;
    memset(y, 0, (size_t)(R * C) * sizeof(float));
}
