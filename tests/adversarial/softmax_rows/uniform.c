/*
 * uniform.c - writes 1/C everywhere: every row sums to 1 and the values
 * have the right magnitude, but they ignore x.
 * Expected: incorrect.
 */
#include <stdint.h>

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    (void)x;
    float v = 1.0f / (float)C;
    for (int64_t i = 0; i < R * C; i++)
        y[i] = v;
}
