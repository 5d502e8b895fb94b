#include <math.h>
#include <stdint.h>

void fused_convtranspose3d_relu_groupnorm(const float *x, const float *w, const float *gamma,
                                          const float *beta, float *y, float eps, int64_t N,
                                          int64_t CI, int64_t CO, int64_t D, int64_t H,
                                          int64_t W, int64_t KS, int64_t G)
{
    const int64_t DO = D + KS - 1, HO = H + KS - 1, WO = W + KS - 1;
    const int64_t V = DO * HO * WO, CG = CO / G;

    /* step 1: transposed conv3d, stride 1, no padding, no bias: input voxel
       (id, ih, iw) with tap (kd, kh, kw) lands on (id + kd, ih + kh, iw + kw) */
    for (int64_t i = 0; i < N * CO * V; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t id = 0; id < D; id++)
                for (int64_t ih = 0; ih < H; ih++)
                    for (int64_t iw = 0; iw < W; iw++) {
                        float v = x[(((n * CI + ci) * D + id) * H + ih) * W + iw];
                        for (int64_t co = 0; co < CO; co++)
                            for (int64_t kd = 0; kd < KS; kd++)
                                for (int64_t kh = 0; kh < KS; kh++)
                                    for (int64_t kw = 0; kw < KS; kw++)
                                        y[(((n * CO + co) * DO + id + kd) * HO + ih + kh) * WO + iw + kw] +=
                                            v * w[(((ci * CO + co) * KS + kd) * KS + kh) * KS + kw];
                    }

    /* step 2: ReLU */
    for (int64_t i = 0; i < N * CO * V; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;

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
