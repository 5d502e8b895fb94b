/*
 * correct.c - plain i-k-j matrix multiply (the control case for this
 * folder). Expected: correct.
 */
#include <stdint.h>
#include <string.h>

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    memset(C, 0, (size_t)(N * N) * sizeof(float));
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < N; k++) {
            float a = A[i * N + k];
            for (int64_t j = 0; j < N; j++)
                C[i * N + j] += a * B[k * N + j];
        }
}
