#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_avgpool_sigmoid_chansum(const float *x, const float *w, const float *cb,
                                          float *y, int64_t N, int64_t CI, int64_t CO,
                                          int64_t H, int64_t W, int64_t KS)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1, HP = HO / 2, WP = WO / 2;
    float *z = malloc((size_t)(N * CO * HO * WO) * sizeof(float));
    float *p = malloc((size_t)(N * CO * HP * WP) * sizeof(float));

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

    /* step 2: average pool 2x2, stride 2, trailing row/column dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float s = 0.0f;
                    for (int64_t dh = 0; dh < 2; dh++)
                        for (int64_t dw = 0; dw < 2; dw++)
                            s += z[((n * CO + co) * HO + 2 * ph + dh) * WO + 2 * pw + dw];
                    p[((n * CO + co) * HP + ph) * WP + pw] = s / 4.0f;
                }

    /* step 3: sigmoid */
    for (int64_t i = 0; i < N * CO * HP * WP; i++)
        p[i] = 1.0f / (1.0f + expf(-p[i]));

    /* step 4: sum over channels */
    for (int64_t n = 0; n < N; n++)
        for (int64_t q = 0; q < HP * WP; q++) {
            float s = 0.0f;
            for (int64_t co = 0; co < CO; co++)
                s += p[(n * CO + co) * HP * WP + q];
            y[n * HP * WP + q] = s;
        }
    free(p);
    free(z);
}
