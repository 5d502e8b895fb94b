// kevo: cflags -fopenmp
/*
 * correct.c (l2norm_rows) - rows in parallel; sum of squares in vectorised
 * double accumulators, one reciprocal square root per row, one scaling
 * pass in float.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
#pragma omp parallel for schedule(static) if (R * C > 65536)
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double ss = 0.0;
#pragma omp simd reduction(+ : ss)
        for (int64_t c = 0; c < C; c++)
            ss += (double)xr[c] * (double)xr[c];
        float inv = (float)(1.0 / sqrt(ss));
#pragma omp simd
        for (int64_t c = 0; c < C; c++)
            yr[c] = xr[c] * inv;
    }
}
