#include <stdint.h>

void matvec(const float *A, const float *x, float *y, int64_t M, int64_t K)
{
    for (int64_t i = 0; i < M; i++) {
        const float *a = A + i * K;
        float s = 0.0f;
        for (int64_t k = 0; k < K; k++)
            s += a[k] * x[k];
        y[i] = s;
    }
}
