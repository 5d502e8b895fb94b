#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_gemm_gelu_gemm(const float *x, const float *w1, const float *b1, const float *w2,
                          const float *b2, float *y, int64_t M, int64_t K, int64_t HID,
                          int64_t N)
{
    float *h = malloc((size_t)(M * HID) * sizeof(float));

    /* step 1: h = x @ w1^T + b1 */
    for (int64_t m = 0; m < M; m++)
        for (int64_t j = 0; j < HID; j++) {
            float acc = b1[j];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w1[j * K + k];
            h[m * HID + j] = acc;
        }

    /* step 2: exact GELU */
    for (int64_t i = 0; i < M * HID; i++)
        h[i] = 0.5f * h[i] * (1.0f + erff(h[i] * 0.70710678118654752f));

    /* step 3: y = h @ w2^T + b2 */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b2[n];
            for (int64_t j = 0; j < HID; j++)
                acc += h[m * HID + j] * w2[n * HID + j];
            y[m * N + n] = acc;
        }
    free(h);
}
