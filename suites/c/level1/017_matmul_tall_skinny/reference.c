#include <stdint.h>

void matmul_tall_skinny(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)
{
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++)
            c[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++)
                c[j] += a * b[j];
        }
    }
}
