#include <stdint.h>
#include <math.h>

void huber_loss(const float *pred, const float *target, float *y, int64_t B, int64_t D,
                float delta)
{
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float r = fabsf(pred[b * D + d] - target[b * D + d]);
            s += r < delta ? 0.5f * r * r : delta * (r - 0.5f * delta);
        }
        y[b] = s / (float)D;
    }
}
