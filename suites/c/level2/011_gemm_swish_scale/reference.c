#include <math.h>
#include <stdint.h>

void fused_gemm_swish_scale(const float *x, const float *w, const float *b, float *y,
                            float s, int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: swish, v * sigmoid(v) */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] / (1.0f + expf(-y[i]));

    /* step 3: scale by s */
    for (int64_t i = 0; i < M * N; i++)
        y[i] *= s;
}
