#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_gemm_max_submean_gelu(const float *x, const float *w, const float *b, float *y,
                                 int64_t M, int64_t K, int64_t N)
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

    /* step 2: row max minus row mean */
    for (int64_t m = 0; m < M; m++) {
        float mx = -INFINITY;
        double s = 0.0;
        for (int64_t n = 0; n < N; n++) {
            mx = z[m * N + n] > mx ? z[m * N + n] : mx;
            s += z[m * N + n];
        }
        y[m] = mx - (float)(s / (double)N);
    }

    /* step 3: exact GELU */
    for (int64_t m = 0; m < M; m++)
        y[m] = 0.5f * y[m] * (1.0f + erff(y[m] * 0.70710678118654752f));
    free(z);
}
