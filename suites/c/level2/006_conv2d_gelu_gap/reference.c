#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_gelu_gap(const float *x, const float *w, const float *cb, float *y,
                           int64_t N, int64_t CI, int64_t CO, int64_t H, int64_t W,
                           int64_t KS)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1;
    float *z = malloc((size_t)(N * CO * HO * WO) * sizeof(float));

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
                    z[((n * CO + co) * HO + oh) * WO + ow] = acc;
                }

    /* step 2: exact GELU */
    for (int64_t i = 0; i < N * CO * HO * WO; i++)
        z[i] = 0.5f * z[i] * (1.0f + erff(z[i] * 0.70710678118654752f));

    /* step 3: global average pool over HO x WO */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++) {
            double s = 0.0;
            for (int64_t p = 0; p < HO * WO; p++)
                s += z[(n * CO + co) * HO * WO + p];
            y[n * CO + co] = (float)(s / (double)(HO * WO));
        }
    free(z);
}
