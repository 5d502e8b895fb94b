#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_sub_tanh_sub_avgpool(const float *x, const float *w, const float *cb,
                                       float *y, float s1, float s2, int64_t N, int64_t CI,
                                       int64_t CO, int64_t H, int64_t W, int64_t KS)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1, HP = HO / 2, WP = WO / 2;
    const int64_t total = N * CO * HO * WO;
    float *z = malloc((size_t)total * sizeof(float));

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

    /* step 2: subtract s1 */
    for (int64_t i = 0; i < total; i++)
        z[i] -= s1;

    /* step 3: tanh */
    for (int64_t i = 0; i < total; i++)
        z[i] = tanhf(z[i]);

    /* step 4: subtract s2 */
    for (int64_t i = 0; i < total; i++)
        z[i] -= s2;

    /* step 5: average pool 2x2, stride 2, trailing row/column dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float s = 0.0f;
                    for (int64_t dh = 0; dh < 2; dh++)
                        for (int64_t dw = 0; dw < 2; dw++)
                            s += z[((n * CO + co) * HO + 2 * ph + dh) * WO + 2 * pw + dw];
                    y[((n * CO + co) * HP + ph) * WP + pw] = s / 4.0f;
                }
    free(z);
}
