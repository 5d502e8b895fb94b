#include <stdint.h>

void fused_convtranspose2d_bias_clamp(const float *x, const float *w, const float *cb,
                                      const float *b, float *y, float s, int64_t N,
                                      int64_t CI, int64_t CO, int64_t H, int64_t W,
                                      int64_t KS, int64_t S, int64_t P, int64_t OP)
{
    const int64_t HO = (H - 1) * S - 2 * P + KS + OP, WO = (W - 1) * S - 2 * P + KS + OP;
    const int64_t total = N * CO * HO * WO;

    /* step 1: transposed conv2d, stride S, padding P, output padding OP, conv bias cb:
       input pixel (ih, iw) with tap (kh, kw) lands on (ih*S - P + kh, iw*S - P + kw);
       taps landing outside the HO x WO output are dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                y[(n * CO + co) * HO * WO + p] = cb[co];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                    for (int64_t co = 0; co < CO; co++)
                        for (int64_t kh = 0; kh < KS; kh++)
                            for (int64_t kw = 0; kw < KS; kw++) {
                                int64_t oh = ih * S - P + kh, ow = iw * S - P + kw;
                                if (oh < 0 || oh >= HO || ow < 0 || ow >= WO)
                                    continue;
                                y[((n * CO + co) * HO + oh) * WO + ow] +=
                                    v * w[((ci * CO + co) * KS + kh) * KS + kw];
                            }
                }

    /* step 2: add the per-channel bias b */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                y[(n * CO + co) * HO * WO + p] += b[co];

    /* step 3: clamp to [0, 1], multiply by s, clamp to [0, 1] again, divide by s */
    for (int64_t i = 0; i < total; i++) {
        float v = y[i];
        v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        v = v * s;
        v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        y[i] = v / s;
    }
}
