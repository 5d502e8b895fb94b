#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_matmul_maxpool_sum_scale(const float *x, const float *w, const float *b, float *y,
                                    float s, int64_t M, int64_t K, int64_t N, int64_t PK)
{
    float *z = malloc((size_t)N * sizeof(float));

    for (int64_t m = 0; m < M; m++) {
        /* step 1: row m of x @ w^T + b */
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            z[n] = acc;
        }

        /* step 2: max pool over the features, window PK, stride PK, trailing remainder
           dropped; step 3: sum the N/PK maxima; step 4: multiply by s */
        float acc = 0.0f;
        for (int64_t j = 0; j < N / PK; j++) {
            float mx = -INFINITY;
            for (int64_t t = 0; t < PK; t++)
                mx = z[j * PK + t] > mx ? z[j * PK + t] : mx;
            acc += mx;
        }
        y[m] = acc * s;
    }
    free(z);
}
