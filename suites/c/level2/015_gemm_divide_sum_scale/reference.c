#include <stdint.h>
#include <stdlib.h>

void fused_gemm_divide_sum_scale(const float *x, const float *w, float *y, float s,
                                 int64_t M, int64_t K, int64_t N)
{
    float *z = malloc((size_t)(M * N) * sizeof(float));

    /* step 1: z = x @ w^T (no bias) */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            z[m * N + n] = acc;
        }

    /* step 2: divide by 2 */
    for (int64_t i = 0; i < M * N; i++)
        z[i] = z[i] / 2.0f;

    /* step 3: sum over each row */
    for (int64_t m = 0; m < M; m++) {
        double acc = 0.0;
        for (int64_t n = 0; n < N; n++)
            acc += z[m * N + n];
        y[m] = (float)acc;
    }

    /* step 4: scale by s */
    for (int64_t m = 0; m < M; m++)
        y[m] *= s;
    free(z);
}
