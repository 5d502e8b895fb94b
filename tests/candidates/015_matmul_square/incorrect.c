/*
 * incorrect.c (matmul_square) - cache blocking over k with a classic tail
 * bug: the k loop runs whole blocks of 64 only (`kk + BK <= N`), so the
 * last N % 64 terms of every dot product are dropped. Right for N = 768,
 * wrong for N = 1, 2, 13 (all terms dropped) and 67.
 */
#include <stdint.h>
#include <string.h>

#define BK 64

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    memset(C, 0, (size_t)(N * N) * sizeof(float));
    for (int64_t kk = 0; kk + BK <= N; kk += BK) /* bug: partial last block skipped */
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = kk; k < kk + BK; k++) {
                float a = A[i * N + k];
                for (int64_t j = 0; j < N; j++)
                    C[i * N + j] += a * B[k * N + j];
            }
}
