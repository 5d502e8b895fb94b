#include <stdint.h>
#include <stdlib.h>
#include <math.h>

void sdpa_single_head(const float *q, const float *k, const float *v, float *o,
                      int64_t S, int64_t D)
{
    float *p = malloc((size_t)S * sizeof(float));
    if (!p)
        return; /* outputs stay unwritten: the verifier reports it */
    float scale = 1.0f / sqrtf((float)D);
    for (int64_t i = 0; i < S; i++) {
        float m = -INFINITY;
        for (int64_t j = 0; j < S; j++) {
            float s = 0.0f;
            for (int64_t d = 0; d < D; d++)
                s += q[i * D + d] * k[j * D + d];
            p[j] = s * scale;
            if (p[j] > m)
                m = p[j];
        }
        float sum = 0.0f;
        for (int64_t j = 0; j < S; j++) {
            p[j] = expf(p[j] - m);
            sum += p[j];
        }
        for (int64_t d = 0; d < D; d++)
            o[i * D + d] = 0.0f;
        for (int64_t j = 0; j < S; j++) {
            float wj = p[j] / sum;
            for (int64_t d = 0; d < D; d++)
                o[i * D + d] += wj * v[j * D + d];
        }
    }
    free(p);
}
