#include <stdint.h>
#include <math.h>

/* KernelBench's level1/96: F.smooth_l1_loss(predictions, targets), beta = 1,
 * reduction mean over all B*D values, one scalar y[0]. */
void huber_loss(const float *pred, const float *target, float *y, int64_t B, int64_t D,
                float beta)
{
    double tot = 0.0;
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float r = fabsf(pred[b * D + d] - target[b * D + d]);
            s += r < beta ? 0.5f * r * r / beta : r - 0.5f * beta;
        }
        tot += s;
    }
    y[0] = (float)(tot / ((double)B * (double)D));
}
