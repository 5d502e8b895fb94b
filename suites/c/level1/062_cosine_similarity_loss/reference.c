#include <stdint.h>
#include <math.h>

void cosine_similarity_loss(const float *a, const float *c, float *y, int64_t B, int64_t D)
{
    for (int64_t b = 0; b < B; b++) {
        float dot = 0.0f, na = 0.0f, nc = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float av = a[b * D + d], cv = c[b * D + d];
            dot += av * cv;
            na += av * av;
            nc += cv * cv;
        }
        float den = sqrtf(na) * sqrtf(nc);
        if (den < 1e-8f)
            den = 1e-8f;
        y[b] = 1.0f - dot / den;
    }
}
