#include <stdint.h>

void fused_gemm_scale_residual(const float *x, const float *w, const float *b, float *y,
                               float s, int64_t M, int64_t K, int64_t N)
{
    /* step 1: z = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: scale by s, then add the unscaled GEMM output back: y = z*s + z */
    for (int64_t i = 0; i < M * N; i++) {
        float z = y[i];
        y[i] = z * s + z;
    }
}
