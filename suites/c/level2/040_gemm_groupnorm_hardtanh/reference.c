#include <math.h>
#include <stdint.h>

void fused_gemm_groupnorm_hardtanh(const float *x, const float *w, const float *b,
                                   const float *gamma, const float *beta, float *y, float eps,
                                   int64_t M, int64_t K, int64_t N, int64_t G)
{
    const int64_t NG = N / G;

    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: group norm per row (G groups of N/G features, biased variance), affine */
    for (int64_t m = 0; m < M; m++)
        for (int64_t g = 0; g < G; g++) {
            float *grp = &y[m * N + g * NG];
            double mu = 0.0, var = 0.0;
            for (int64_t i = 0; i < NG; i++)
                mu += grp[i];
            mu /= (double)NG;
            for (int64_t i = 0; i < NG; i++)
                var += (grp[i] - mu) * (grp[i] - mu);
            var /= (double)NG;
            float inv = 1.0f / sqrtf((float)var + eps);
            for (int64_t i = 0; i < NG; i++)
                grp[i] = (grp[i] - (float)mu) * inv * gamma[g * NG + i] + beta[g * NG + i];
        }

    /* step 3: hardtanh, clamp to [-2, 2] */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] < -2.0f ? -2.0f : (y[i] > 2.0f ? 2.0f : y[i]);
}
