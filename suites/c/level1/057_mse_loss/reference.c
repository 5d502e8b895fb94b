#include <stdint.h>

void mse_loss(const float *pred, const float *target, float *y, int64_t B, int64_t D)
{
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float diff = pred[b * D + d] - target[b * D + d];
            s += diff * diff;
        }
        y[b] = s / (float)D;
    }
}
