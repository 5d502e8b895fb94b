#include <math.h>
#include <stdint.h>

void fused_convtranspose2d_gelu_groupnorm(const float *x, const float *w, const float *cb,
                                          const float *gamma, const float *beta, float *y,
                                          float eps, int64_t N, int64_t CI, int64_t CO,
                                          int64_t H, int64_t W, int64_t KS, int64_t S,
                                          int64_t G)
{
    const int64_t HO = (H - 1) * S + KS, WO = (W - 1) * S + KS;
    const int64_t V = HO * WO, CG = CO / G;

    /* step 1: transposed conv2d, stride S, no padding, bias cb: input pixel (ih, iw)
       with tap (kh, kw) lands on (ih*S + kh, iw*S + kw) */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = cb[co];
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

    /* step 2: exact GELU */
    for (int64_t i = 0; i < N * CO * V; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));

    /* step 3: group norm (G groups of CO/G channels, biased variance), affine gamma/beta */
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            float *grp = &y[(n * CO + g * CG) * V];
            const int64_t cnt = CG * V;
            double mu = 0.0, var = 0.0;
            for (int64_t i = 0; i < cnt; i++)
                mu += grp[i];
            mu /= (double)cnt;
            for (int64_t i = 0; i < cnt; i++)
                var += (grp[i] - mu) * (grp[i] - mu);
            var /= (double)cnt;
            float inv = 1.0f / sqrtf((float)var + eps);
            for (int64_t c = g * CG; c < (g + 1) * CG; c++)
                for (int64_t p = 0; p < V; p++) {
                    float *v = &y[(n * CO + c) * V + p];
                    *v = (*v - (float)mu) * inv * gamma[c] + beta[c];
                }
        }
}
