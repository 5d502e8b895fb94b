#include <stdint.h>

void fused_gemm_scale_residual(const float *x, const float *w, const float *b,
                               const float *r, float *y, float s, int64_t M,
                               int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: scale by s */
    for (int64_t i = 0; i < M * N; i++)
        y[i] *= s;

    /* step 3: residual add */
    for (int64_t i = 0; i < M * N; i++)
        y[i] += r[i];
}
