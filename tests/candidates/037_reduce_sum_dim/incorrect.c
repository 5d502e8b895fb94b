/*
 * incorrect.c (reduce_sum_dim) - off by one: zeroes y and then sums the
 * slices d = 1 .. D-1, forgetting slice 0 (a mix-up between "initialise
 * with the first slice" and "initialise with zero").
 */
#include <stdint.h>
#include <string.h>

void reduce_sum_dim(const float *x, float *y, int64_t B, int64_t D, int64_t E)
{
    memset(y, 0, (size_t)(B * E) * sizeof(float));
    for (int64_t b = 0; b < B; b++)
        for (int64_t d = 1; d < D; d++) /* bug: slice 0 missing */
            for (int64_t e = 0; e < E; e++)
                y[b * E + e] += x[(b * D + d) * E + e];
}
