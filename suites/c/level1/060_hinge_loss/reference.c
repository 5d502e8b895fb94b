#include <stdint.h>

void hinge_loss(const float *pred, const uint8_t *label, float *y, int64_t B, int64_t D)
{
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float t = label[b * D + d] ? 1.0f : -1.0f;
            float m = 1.0f - t * pred[b * D + d];
            s += m > 0.0f ? m : 0.0f;
        }
        y[b] = s / (float)D;
    }
}
