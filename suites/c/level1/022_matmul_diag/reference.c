#include <stdint.h>

void matmul_diag(const float *a, const float *B, float *C, int64_t N, int64_t M)
{
    for (int64_t i = 0; i < N; i++) {
        float d = a[i];
        for (int64_t j = 0; j < M; j++)
            C[i * M + j] = d * B[i * M + j];
    }
}
