#include <stdint.h>

void matmul_batched(const float *A, const float *B, float *C,
                    int64_t BATCH, int64_t M, int64_t N, int64_t K)
{
    for (int64_t bi = 0; bi < BATCH; bi++) {
        const float *Ab = A + bi * M * K;
        const float *Bb = B + bi * K * N;
        float *Cb = C + bi * M * N;
        for (int64_t i = 0; i < M; i++) {
            float *c = Cb + i * N;
            for (int64_t j = 0; j < N; j++)
                c[j] = 0.0f;
            for (int64_t k = 0; k < K; k++) {
                float a = Ab[i * K + k];
                const float *b = Bb + k * N;
                for (int64_t j = 0; j < N; j++)
                    c[j] += a * b[j];
            }
        }
    }
}
