#include <stdint.h>

void fused_conv2d_hardswish_relu(const float *x, const float *w, const float *cb, float *y,
                                 int64_t N, int64_t CI, int64_t CO, int64_t H, int64_t W,
                                 int64_t KS)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1;
    const int64_t total = N * CO * HO * WO;

    /* step 1: conv2d, stride 1, no padding, with bias cb */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t oh = 0; oh < HO; oh++)
                for (int64_t ow = 0; ow < WO; ow++) {
                    float acc = cb[co];
                    for (int64_t ci = 0; ci < CI; ci++)
                        for (int64_t kh = 0; kh < KS; kh++)
                            for (int64_t kw = 0; kw < KS; kw++)
                                acc += x[((n * CI + ci) * H + oh + kh) * W + ow + kw] *
                                       w[((co * CI + ci) * KS + kh) * KS + kw];
                    y[((n * CO + co) * HO + oh) * WO + ow] = acc;
                }

    /* step 2: HardSwish, v * min(max(v + 3, 0), 6) / 6 */
    for (int64_t i = 0; i < total; i++) {
        float r = y[i] + 3.0f;
        r = r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r);
        y[i] = y[i] * r / 6.0f;
    }

    /* step 3: ReLU */
    for (int64_t i = 0; i < total; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}
