#include <stdint.h>
#include <math.h>

/* KernelBench's level1/99: nn.TripletMarginLoss(margin = 1.0) with its
 * defaults p = 2, eps = 1e-6, swap = False, reduction mean: with
 * d(a, x) = ||a - x + eps||_2 (torch.pairwise_distance), y[0] =
 * (1/B) sum_b max(0, d(anchor[b], positive[b]) - d(anchor[b], negative[b])
 * + margin). */
void triplet_margin_loss(const float *anchor, const float *positive, const float *negative,
                         float *y, int64_t B, int64_t D, float margin)
{
    const float eps = 1e-6f;
    double tot = 0.0;
    for (int64_t b = 0; b < B; b++) {
        float sp = 0.0f, sn = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float dp = anchor[b * D + d] - positive[b * D + d] + eps;
            float dn = anchor[b * D + d] - negative[b * D + d] + eps;
            sp += dp * dp;
            sn += dn * dn;
        }
        float l = sqrtf(sp) - sqrtf(sn) + margin;
        tot += l > 0.0f ? l : 0.0f;
    }
    y[0] = (float)(tot / (double)B);
}
