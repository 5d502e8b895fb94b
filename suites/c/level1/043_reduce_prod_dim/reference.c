#include <stdint.h>

void reduce_prod_dim(const float *x, float *y, int64_t B, int64_t D, int64_t E)
{
    for (int64_t b = 0; b < B; b++) {
        const float *xb = x + b * D * E;
        float *yb = y + b * E;
        for (int64_t e = 0; e < E; e++)
            yb[e] = xb[e];
        for (int64_t d = 1; d < D; d++)
            for (int64_t e = 0; e < E; e++)
                yb[e] *= xb[d * E + e];
    }
}
