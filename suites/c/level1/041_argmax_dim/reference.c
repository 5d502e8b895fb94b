#include <stdint.h>
#include <stdlib.h>

void argmax_dim(const float *x, int64_t *y, int64_t B, int64_t D, int64_t E)
{
    float *best = malloc((size_t)E * sizeof(float));
    if (!best)
        return; /* outputs stay unwritten: the verifier reports it */
    for (int64_t b = 0; b < B; b++) {
        const float *xb = x + b * D * E;
        int64_t *yb = y + b * E;
        for (int64_t e = 0; e < E; e++) {
            best[e] = xb[e];
            yb[e] = 0;
        }
        for (int64_t d = 1; d < D; d++)
            for (int64_t e = 0; e < E; e++)
                if (xb[d * E + e] > best[e]) { /* strict: first index wins ties */
                    best[e] = xb[d * E + e];
                    yb[e] = d;
                }
    }
    free(best);
}
