#include <math.h>
#include <stdint.h>

void fused_gemm_scale_hardtanh_gelu(const float *x, const float *w, const float *b,
                                    float *y, float s, int64_t M, int64_t K, int64_t N)
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

    /* step 3: hardtanh, clamp to [-2, 2] */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] < -2.0f ? -2.0f : (y[i] > 2.0f ? 2.0f : y[i]);

    /* step 4: exact GELU */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));
}
