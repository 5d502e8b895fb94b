#include <stdint.h>
#include <stdlib.h>
#include <math.h>

void logsumexp_dim(const float *x, float *y, int64_t B, int64_t D, int64_t E)
{
    float *sum = malloc((size_t)E * sizeof(float));
    if (!sum)
        return; /* outputs stay unwritten: the verifier reports it */
    for (int64_t b = 0; b < B; b++) {
        const float *xb = x + b * D * E;
        float *yb = y + b * E;
        /* y holds the running max, then the result */
        for (int64_t e = 0; e < E; e++)
            yb[e] = xb[e];
        for (int64_t d = 1; d < D; d++)
            for (int64_t e = 0; e < E; e++)
                if (xb[d * E + e] > yb[e])
                    yb[e] = xb[d * E + e];
        for (int64_t e = 0; e < E; e++)
            sum[e] = 0.0f;
        for (int64_t d = 0; d < D; d++)
            for (int64_t e = 0; e < E; e++)
                sum[e] += expf(xb[d * E + e] - yb[e]);
        for (int64_t e = 0; e < E; e++)
            yb[e] += logf(sum[e]);
    }
    free(sum);
}
