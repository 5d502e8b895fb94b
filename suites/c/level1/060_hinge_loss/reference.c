#include <stdint.h>

/* KernelBench's level1/100: torch.mean(torch.clamp(1 - predictions *
 * targets, min=0)) with predictions [B][D] and targets of shape (D,) in
 * {-1, +1}, broadcast along the last dim (KernelBench's targets have
 * batch_size entries, which equals its D); here t[d] = label[d] ? +1 : -1.
 * One scalar y[0]. */
void hinge_loss(const float *pred, const uint8_t *label, float *y, int64_t B, int64_t D)
{
    double tot = 0.0;
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float t = label[d] ? 1.0f : -1.0f;
            float m = 1.0f - pred[b * D + d] * t;
            s += m > 0.0f ? m : 0.0f;
        }
        tot += s;
    }
    y[0] = (float)(tot / ((double)B * (double)D));
}
