#include <math.h>
#include <stdint.h>

void fused_gemm_layernorm_gelu(const float *x, const float *w, const float *b,
                               const float *gamma, const float *beta, float *y,
                               float eps, int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: layer norm over each row (biased variance), affine gamma/beta */
    for (int64_t m = 0; m < M; m++) {
        float *row = &y[m * N];
        double mu = 0.0, var = 0.0;
        for (int64_t n = 0; n < N; n++)
            mu += row[n];
        mu /= (double)N;
        for (int64_t n = 0; n < N; n++)
            var += (row[n] - mu) * (row[n] - mu);
        var /= (double)N;
        float inv = 1.0f / sqrtf((float)var + eps);
        for (int64_t n = 0; n < N; n++)
            row[n] = (row[n] - (float)mu) * inv * gamma[n] + beta[n];
    }

    /* step 3: exact GELU */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));
}
