#include <stdint.h>

void matmul_trans_b(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)
{
    for (int64_t i = 0; i < M; i++) {
        const float *a = A + i * K;
        for (int64_t j = 0; j < N; j++) {
            const float *b = B + j * K;
            float s = 0.0f;
            for (int64_t k = 0; k < K; k++)
                s += a[k] * b[k];
            C[i * N + j] = s;
        }
    }
}
