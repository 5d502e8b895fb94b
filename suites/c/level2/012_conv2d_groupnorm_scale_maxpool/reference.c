#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv2d_groupnorm_scale_maxpool(const float *x, const float *w, const float *cb,
                                          const float *gamma, const float *beta,
                                          const float *sc, float *y, float eps, float lo,
                                          float hi, int64_t N, int64_t CI, int64_t CO,
                                          int64_t H, int64_t W, int64_t KS, int64_t G,
                                          int64_t MP)
{
    const int64_t HO = H - KS + 1, WO = W - KS + 1;
    const int64_t HP = HO / MP, WP = WO / MP, CG = CO / G;
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

    /* step 2: group norm (G groups of CO/G channels, biased variance), affine gamma/beta */
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            float *grp = &z[(n * CO + g * CG) * HO * WO];
            const int64_t cnt = CG * HO * WO;
            double mu = 0.0, var = 0.0;
            for (int64_t i = 0; i < cnt; i++)
                mu += grp[i];
            mu /= (double)cnt;
            for (int64_t i = 0; i < cnt; i++)
                var += (grp[i] - mu) * (grp[i] - mu);
            var /= (double)cnt;
            float inv = 1.0f / sqrtf((float)var + eps);
            for (int64_t c = g * CG; c < (g + 1) * CG; c++)
                for (int64_t p = 0; p < HO * WO; p++) {
                    float *v = &z[(n * CO + c) * HO * WO + p];
                    *v = (*v - (float)mu) * inv * gamma[c] + beta[c];
                }
        }

    /* step 3: multiply by per-channel scale sc */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                z[(n * CO + co) * HO * WO + p] *= sc[co];

    /* step 4: max pool MP x MP, stride MP, trailing rows/columns dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float mx = -INFINITY;
                    for (int64_t dh = 0; dh < MP; dh++)
                        for (int64_t dw = 0; dw < MP; dw++) {
                            float v = z[((n * CO + co) * HO + MP * ph + dh) * WO + MP * pw + dw];
                            mx = v > mx ? v : mx;
                        }
                    y[((n * CO + co) * HP + ph) * WP + pw] = mx;
                }

    /* step 5: clamp to [lo, hi] */
    for (int64_t i = 0; i < N * CO * HP * WP; i++)
        y[i] = y[i] < lo ? lo : (y[i] > hi ? hi : y[i]);
    free(z);
}
