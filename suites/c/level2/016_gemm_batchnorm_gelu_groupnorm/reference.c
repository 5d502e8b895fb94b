#include <math.h>
#include <stdint.h>

void fused_gemm_batchnorm_gelu_groupnorm(const float *x, const float *w, const float *b,
                                         const float *bn_gamma, const float *bn_beta,
                                         const float *bn_mean, const float *bn_var,
                                         const float *gn_gamma, const float *gn_beta,
                                         float *y, float eps, int64_t M, int64_t K,
                                         int64_t N, int64_t G)
{
    const int64_t CG = N / G;

    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: batch norm over features, inference mode (running mean / variance) */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            y[m * N + n] = (y[m * N + n] - bn_mean[n]) / sqrtf(bn_var[n] + eps) * bn_gamma[n] +
                           bn_beta[n];

    /* step 3: exact GELU */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));

    /* step 4: group norm per row: G groups of N/G features, biased variance, affine */
    for (int64_t m = 0; m < M; m++)
        for (int64_t g = 0; g < G; g++) {
            float *grp = &y[m * N + g * CG];
            double mu = 0.0, var = 0.0;
            for (int64_t i = 0; i < CG; i++)
                mu += grp[i];
            mu /= (double)CG;
            for (int64_t i = 0; i < CG; i++)
                var += (grp[i] - mu) * (grp[i] - mu);
            var /= (double)CG;
            float inv = 1.0f / sqrtf((float)var + eps);
            for (int64_t i = 0; i < CG; i++)
                grp[i] = (grp[i] - (float)mu) * inv * gn_gamma[g * CG + i] + gn_beta[g * CG + i];
        }
}
