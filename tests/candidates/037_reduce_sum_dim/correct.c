// kevo: cflags -fopenmp
/*
 * correct.c (reduce_sum_dim) - the work is cut into (b, 2048-wide e chunk)
 * tiles shared out by OpenMP; each tile accumulates its D slices in a
 * local, cache-resident array with vectorised adds and is stored once.
 * Handles E not a multiple of the chunk (E = 1, 3, 5, 13).
 */
#include <omp.h>
#include <stdint.h>

#define EC 2048

void reduce_sum_dim(const float *x, float *y, int64_t B, int64_t D, int64_t E)
{
    int64_t nchunks = (E + EC - 1) / EC;
#pragma omp parallel for schedule(static) if (B * D * E > 65536)
    for (int64_t t = 0; t < B * nchunks; t++) {
        int64_t b = t / nchunks;
        int64_t e0 = (t % nchunks) * EC;
        int64_t len = E - e0 < EC ? E - e0 : EC;
        float acc[EC];
        const float *xb = x + b * D * E + e0;
#pragma omp simd
        for (int64_t e = 0; e < len; e++)
            acc[e] = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            const float *row = xb + d * E;
#pragma omp simd
            for (int64_t e = 0; e < len; e++)
                acc[e] += row[e];
        }
        float *yb = y + b * E + e0;
        for (int64_t e = 0; e < len; e++)
            yb[e] = acc[e];
    }
}
