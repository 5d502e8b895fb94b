#include <stdint.h>

void fused_linear_min_subtract(const float *x, const float *w, const float *b, float *y,
                               float c, int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: elementwise min with the constant c */
    for (int64_t i = 0; i < M * N; i++)
        y[i] = y[i] < c ? y[i] : c;

    /* step 3: subtract c */
    for (int64_t i = 0; i < M * N; i++)
        y[i] -= c;
}
