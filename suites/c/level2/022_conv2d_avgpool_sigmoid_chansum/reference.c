#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_avgpool_sigmoid_chansum(const float *x, const float *w, const float *cb,
                                          float *y, int64_t N, int64_t CI, int64_t CO,
                                          int64_t H, int64_t W, int64_t KS, int64_t PK)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1, HP = HO / PK, WP = WO / PK;
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

    /* step 2: average pool PK x PK, stride PK, trailing rows/columns dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float s = 0.0f;
                    for (int64_t dh = 0; dh < PK; dh++)
                        for (int64_t dw = 0; dw < PK; dw++)
                            s += z[((n * CO + co) * HO + PK * ph + dh) * WO + PK * pw + dw];
                    p[((n * CO + co) * HP + ph) * WP + pw] = s / (float)(PK * PK);
                }

    /* step 3: sigmoid */
    for (int64_t i = 0; i < N * CO * HP * WP; i++)
        p[i] = 1.0f / (1.0f + expf(-p[i]));

    /* step 4: sum over channels and both pooled spatial axes: one value per sample */
    for (int64_t n = 0; n < N; n++) {
        double s = 0.0;
        for (int64_t i = 0; i < CO * HP * WP; i++)
            s += p[n * CO * HP * WP + i];
        y[n] = (float)s;
    }
    free(p);
    free(z);
}
