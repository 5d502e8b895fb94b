/* tests/data/tasks_new/matmul.c - C = A B with A M x K, B K x N, row-major;
 * the sizes are size_t, so the task's reference wraps it (kevo passes
 * sizes as int64_t). */
#include <stddef.h>

void matmul(const float *A, const float *B, float *C, size_t M, size_t N, size_t K)
{
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            float acc = 0;
            for (size_t k = 0; k < K; k++)
                acc += A[i * K + k] * B[k * N + j];
            C[i * N + j] = acc;
        }
}
