#include <stdint.h>
#include <math.h>

void triplet_margin_loss(const float *anchor, const float *positive, const float *negative,
                         float *y, int64_t B, int64_t D, float margin)
{
    for (int64_t b = 0; b < B; b++) {
        float sp = 0.0f, sn = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float dp = anchor[b * D + d] - positive[b * D + d];
            float dn = anchor[b * D + d] - negative[b * D + d];
            sp += dp * dp;
            sn += dn * dn;
        }
        float l = sqrtf(sp) - sqrtf(sn) + margin;
        y[b] = l > 0.0f ? l : 0.0f;
    }
}
