#include <math.h>
#include <stdint.h>

void fused_gemm_groupnorm_swish_mul_swish(const float *x, const float *w, const float *b,
                                          const float *gamma, const float *beta,
                                          const float *mw, float *y, float eps, int64_t M,
                                          int64_t K, int64_t N, int64_t G)
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

    /* step 2: group norm per row: G groups of N/G features, biased variance, affine */
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
                grp[i] = (grp[i] - (float)mu) * inv * gamma[g * CG + i] + beta[g * CG + i];
        }

    /* step 3: swish, v * sigmoid(v) */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] / (1.0f + expf(-y[i]));

    /* step 4: multiply by per-feature weight mw */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            y[m * N + n] *= mw[n];

    /* step 5: swish again */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] / (1.0f + expf(-y[i]));
}
