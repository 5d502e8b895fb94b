#include <stdint.h>

void matmul_3d_tensor(const float *A, const float *B, float *C,
                      int64_t BATCH, int64_t M, int64_t N, int64_t K)
{
    for (int64_t bi = 0; bi < BATCH; bi++) {
        for (int64_t i = 0; i < M; i++) {
            const float *a = A + (bi * M + i) * K;
            float *c = C + (bi * M + i) * N;
            for (int64_t j = 0; j < N; j++)
                c[j] = 0.0f;
            for (int64_t k = 0; k < K; k++) {
                float av = a[k];
                const float *b = B + k * N;
                for (int64_t j = 0; j < N; j++)
                    c[j] += av * b[j];
            }
        }
    }
}
