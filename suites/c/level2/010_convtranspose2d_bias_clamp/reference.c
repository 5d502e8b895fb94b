#include <stdint.h>

void fused_convtranspose2d_bias_clamp(const float *x, const float *w, const float *b,
                                      float *y, float lo, float hi, int64_t N, int64_t CI,
                                      int64_t CO, int64_t H, int64_t W, int64_t KS,
                                      int64_t S)
{
    const int64_t HO = (H - 1) * S + KS, WO = (W - 1) * S + KS;

    /* step 1: transposed conv2d, stride S, no padding, no bias:
       every input pixel scatters x * w[ci][co] into a KS x KS output patch */
    for (int64_t i = 0; i < N * CO * HO * WO; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                    for (int64_t co = 0; co < CO; co++)
                        for (int64_t kh = 0; kh < KS; kh++)
                            for (int64_t kw = 0; kw < KS; kw++)
                                y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw] +=
                                    v * w[((ci * CO + co) * KS + kh) * KS + kw];
                }

    /* step 2: add per-channel bias */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                y[(n * CO + co) * HO * WO + p] += b[co];

    /* step 3: clamp to [lo, hi] */
    for (int64_t i = 0; i < N * CO * HO * WO; i++)
        y[i] = y[i] < lo ? lo : (y[i] > hi ? hi : y[i]);
}
