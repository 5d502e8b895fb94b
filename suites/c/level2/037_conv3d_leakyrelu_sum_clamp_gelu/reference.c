#include <math.h>
#include <stdint.h>

void fused_conv3d_leakyrelu_sum_clamp_gelu(const float *x, const float *w, const float *cb,
                                           const float *st, float *y, float slope, int64_t N,
                                           int64_t CI, int64_t CO, int64_t D, int64_t H,
                                           int64_t W, int64_t KS)
{
    const int64_t DO = D - KS + 1, HO = H - KS + 1, WO = W - KS + 1;
    const int64_t V = DO * HO * WO;

    /* step 1: conv3d, stride 1, no padding, with bias cb */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t od = 0; od < DO; od++)
                for (int64_t oh = 0; oh < HO; oh++)
                    for (int64_t ow = 0; ow < WO; ow++) {
                        float acc = cb[co];
                        for (int64_t ci = 0; ci < CI; ci++)
                            for (int64_t kd = 0; kd < KS; kd++)
                                for (int64_t kh = 0; kh < KS; kh++)
                                    for (int64_t kw = 0; kw < KS; kw++)
                                        acc += x[(((n * CI + ci) * D + od + kd) * H + oh + kh) * W + ow + kw] *
                                               w[(((co * CI + ci) * KS + kd) * KS + kh) * KS + kw];
                        y[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] = acc;
                    }

    /* step 2: leaky ReLU (negative slope `slope`), add the per-channel tensor st,
       clamp to [-1, 1], exact GELU */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++) {
                float v = y[(n * CO + co) * V + p];
                v = v >= 0.0f ? v : slope * v;
                v += st[co];
                v = v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
                y[(n * CO + co) * V + p] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
            }
}
