#include <stdint.h>

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++)
            c[j] = 0.0f;
        for (int64_t k = 0; k < N; k++) {
            float a = A[i * N + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++)
                c[j] += a * b[j];
        }
    }
}
