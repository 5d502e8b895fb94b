#include <stdint.h>
#include <math.h>

void kl_div_loss(const float *p, const float *q, float *y, int64_t B, int64_t D)
{
    for (int64_t b = 0; b < B; b++) {
        const float *pr = p + b * D;
        const float *qr = q + b * D;
        float sp = 0.0f, sq = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            sp += pr[d];
            sq += qr[d];
        }
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            float P = pr[d] / sp;
            float Q = qr[d] / sq;
            s += P * (logf(P) - logf(Q));
        }
        y[b] = s;
    }
}
