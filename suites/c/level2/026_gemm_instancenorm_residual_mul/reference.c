#include <math.h>
#include <stdint.h>

void fused_gemm_instancenorm_residual_mul(const float *x, const float *w, const float *b,
                                          const float *r, float *y, float eps, int64_t M,
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

    /* step 2: normalize each row over its N features, biased variance, no affine */
    for (int64_t m = 0; m < M; m++) {
        float *row = &y[m * N];
        double mu = 0.0, var = 0.0;
        for (int64_t n = 0; n < N; n++)
            mu += row[n];
        mu /= (double)N;
        for (int64_t n = 0; n < N; n++)
            var += (row[n] - mu) * (row[n] - mu);
        var /= (double)N;
        float inv = 1.0f / sqrtf((float)var + eps);
        for (int64_t n = 0; n < N; n++)
            row[n] = (row[n] - (float)mu) * inv;
    }

    /* step 3: residual add r */
    for (int64_t i = 0; i < M * N; i++)
        y[i] += r[i];

    /* step 4: multiply by r */
    for (int64_t i = 0; i < M * N; i++)
        y[i] *= r[i];
}
