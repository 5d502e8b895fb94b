/*
 * incorrect.c (layernorm_lastdim) - uses the unbiased variance (divides by
 * C - 1) where the task asks for the biased one (divide by C). Nearly
 * invisible for C = 4096 (relative change ~1e-4), clearly wrong for the
 * check sizes C = 2, 5, 13.
 */
#include <math.h>
#include <stdint.h>

void layernorm_lastdim(const float *x, const float *gamma, const float *beta, float *y,
                       int64_t R, int64_t C, float eps)
{
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double s = 0.0;
        for (int64_t c = 0; c < C; c++)
            s += xr[c];
        double mean = s / (double)C;
        double v = 0.0;
        for (int64_t c = 0; c < C; c++)
            v += (xr[c] - mean) * (xr[c] - mean);
        double var = v / (double)(C - 1); /* bug: biased variance divides by C */
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t c = 0; c < C; c++)
            yr[c] = (float)((xr[c] - mean) * inv) * gamma[c] + beta[c];
    }
}
