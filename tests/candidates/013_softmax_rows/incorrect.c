/*
 * incorrect.c (softmax_rows) - off-by-one in the normalising sum: the sum
 * loop stops at C - 1, so every row is divided by a sum that misses its
 * last term (each row then sums to more than 1). Badly wrong for C = 2,
 * about 1/C relative error for large C (beyond rtol 1e-4).
 */
#include <math.h>
#include <stdint.h>

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        float m = xr[0];
        for (int64_t c = 1; c < C; c++)
            if (xr[c] > m)
                m = xr[c];
        float s = 0.0f;
        for (int64_t c = 0; c < C; c++)
            yr[c] = expf(xr[c] - m);
        for (int64_t c = 0; c < C - 1; c++) /* bug: misses the last term */
            s += yr[c];
        for (int64_t c = 0; c < C; c++)
            yr[c] /= s;
    }
}
