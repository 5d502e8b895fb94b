// kevo: cflags -fopenmp
/*
 * correct.c (layernorm_lastdim) - one read pass per row for both moments
 * (sum and sum of squares in vectorised double accumulators, so
 * var = E[x^2] - mean^2 loses nothing at these magnitudes), then one
 * fused normalise-scale-shift pass in float. Rows in parallel.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

void layernorm_lastdim(const float *x, const float *gamma, const float *beta, float *y,
                       int64_t R, int64_t C, float eps)
{
#pragma omp parallel for schedule(static) if (R * C > 65536)
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double s = 0.0, ss = 0.0;
#pragma omp simd reduction(+ : s, ss)
        for (int64_t c = 0; c < C; c++) {
            double v = xr[c];
            s += v;
            ss += v * v;
        }
        double mean = s / (double)C;
        double var = ss / (double)C - mean * mean;
        if (var < 0.0)
            var = 0.0;
        float m = (float)mean;
        float inv = (float)(1.0 / sqrt(var + (double)eps));
#pragma omp simd
        for (int64_t c = 0; c < C; c++)
            yr[c] = (xr[c] - m) * inv * gamma[c] + beta[c];
    }
}
