#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_gemm_sigmoid_sum(const float *x, const float *w, const float *b,
                            float *y, int64_t M, int64_t K, int64_t N)
{
    float *z = malloc((size_t)(M * N) * sizeof(float));

    /* step 1: z = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            z[m * N + n] = acc;
        }

    /* step 2: sigmoid */
    for (int64_t i = 0; i < M * N; i++)
        z[i] = 1.0f / (1.0f + expf(-z[i]));

    /* step 3: sum over each row */
    for (int64_t m = 0; m < M; m++) {
        double s = 0.0;
        for (int64_t n = 0; n < N; n++)
            s += z[m * N + n];
        y[m] = (float)s;
    }
    free(z);
}
