#include <math.h>
#include <stdint.h>

void fused_convtranspose3d_batchnorm_subtract(const float *x, const float *w, const float *cb,
                                              const float *gamma, const float *beta, float *y,
                                              float eps, int64_t N, int64_t CI, int64_t CO,
                                              int64_t D, int64_t H, int64_t W, int64_t KS,
                                              int64_t S, int64_t P)
{
    const int64_t DO = (D - 1) * S - 2 * P + KS, HO = (H - 1) * S - 2 * P + KS,
                  WO = (W - 1) * S - 2 * P + KS;
    const int64_t V = DO * HO * WO;

    /* step 1: transposed conv3d, stride S, padding P, bias cb: input voxel (id, ih, iw)
       with tap (kd, kh, kw) lands on (id*S - P + kd, ih*S - P + kh, iw*S - P + kw);
       taps landing outside the output are dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = cb[co];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t id = 0; id < D; id++)
                for (int64_t ih = 0; ih < H; ih++)
                    for (int64_t iw = 0; iw < W; iw++) {
                        float v = x[(((n * CI + ci) * D + id) * H + ih) * W + iw];
                        for (int64_t co = 0; co < CO; co++)
                            for (int64_t kd = 0; kd < KS; kd++) {
                                int64_t od = id * S - P + kd;
                                if (od < 0 || od >= DO)
                                    continue;
                                for (int64_t kh = 0; kh < KS; kh++) {
                                    int64_t oh = ih * S - P + kh;
                                    if (oh < 0 || oh >= HO)
                                        continue;
                                    for (int64_t kw = 0; kw < KS; kw++) {
                                        int64_t ow = iw * S - P + kw;
                                        if (ow < 0 || ow >= WO)
                                            continue;
                                        y[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] +=
                                            v * w[(((ci * CO + co) * KS + kd) * KS + kh) * KS + kw];
                                    }
                                }
                            }
                    }

    /* step 2: training-mode batch norm: per channel, mean and biased variance over the
       batch and all voxels, then affine gamma/beta */
    for (int64_t co = 0; co < CO; co++) {
        double mu = 0.0, var = 0.0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t p = 0; p < V; p++)
                mu += y[(n * CO + co) * V + p];
        mu /= (double)(N * V);
        for (int64_t n = 0; n < N; n++)
            for (int64_t p = 0; p < V; p++) {
                double d = y[(n * CO + co) * V + p] - mu;
                var += d * d;
            }
        var /= (double)(N * V);
        float inv = 1.0f / sqrtf((float)var + eps);
        for (int64_t n = 0; n < N; n++)
            for (int64_t p = 0; p < V; p++) {
                float *v = &y[(n * CO + co) * V + p];
                *v = (*v - (float)mu) * inv * gamma[co] + beta[co];
            }
    }

    /* step 3: subtract each (sample, channel)'s mean over its voxels */
    for (int64_t nc = 0; nc < N * CO; nc++) {
        double mu = 0.0;
        for (int64_t p = 0; p < V; p++)
            mu += y[nc * V + p];
        float m = (float)(mu / (double)V);
        for (int64_t p = 0; p < V; p++)
            y[nc * V + p] -= m;
    }
}
