#include <math.h>
#include <stdint.h>

void fused_gemm_batchnorm_gelu_relu(const float *x, const float *w, const float *b,
                                    const float *gamma, const float *beta, float *y, float eps,
                                    int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: training-mode batch norm: per feature, mean and biased variance over the
       M rows of the batch, then affine gamma/beta */
    for (int64_t n = 0; n < N; n++) {
        double mu = 0.0, var = 0.0;
        for (int64_t m = 0; m < M; m++)
            mu += y[m * N + n];
        mu /= (double)M;
        for (int64_t m = 0; m < M; m++)
            var += (y[m * N + n] - mu) * (y[m * N + n] - mu);
        var /= (double)M;
        float inv = 1.0f / sqrtf((float)var + eps);
        for (int64_t m = 0; m < M; m++)
            y[m * N + n] = (y[m * N + n] - (float)mu) * inv * gamma[n] + beta[n];
    }

    /* step 3: exact GELU, then ReLU */
    for (int64_t i = 0; i < M * N; i++) {
        float v = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
