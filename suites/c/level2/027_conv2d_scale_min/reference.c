#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_scale_min(const float *x, const float *w, const float *cb, float *y,
                            float s, int64_t N, int64_t CI, int64_t CO, int64_t H,
                            int64_t W, int64_t KS)
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

    /* step 2: scale by s */
    for (int64_t i = 0; i < N * CO * HO * WO; i++)
        z[i] *= s;

    /* step 3: minimum over channels */
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < HO * WO; p++) {
            float mn = INFINITY;
            for (int64_t co = 0; co < CO; co++) {
                float v = z[(n * CO + co) * HO * WO + p];
                mn = v < mn ? v : mn;
            }
            y[n * HO * WO + p] = mn;
        }
    free(z);
}
