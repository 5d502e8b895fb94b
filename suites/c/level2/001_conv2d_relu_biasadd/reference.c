#include <stdint.h>

void fused_conv2d_relu_biasadd(const float *x, const float *w, const float *cb,
                               const float *b, float *y, int64_t N, int64_t CI,
                               int64_t CO, int64_t H, int64_t W, int64_t KS)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1;

    /* step 1: conv2d, stride 1, no padding, with conv bias cb */
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

    /* step 2: ReLU */
    for (int64_t i = 0; i < N * CO * HO * WO; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;

    /* step 3: add per-channel bias b */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                y[(n * CO + co) * HO * WO + p] += b[co];
}
