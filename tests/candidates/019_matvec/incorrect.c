/*
 * incorrect.c (matvec) - unrolled by 8 with 8 accumulators and no
 * remainder loop: the last K % 8 products of every row are missing.
 * Right for K = 4096, wrong for K = 1, 5, 17, 1031.
 */
#include <stdint.h>

void matvec(const float *A, const float *x, float *y, int64_t M, int64_t K)
{
    for (int64_t i = 0; i < M; i++) {
        const float *a = A + i * K;
        float s[8] = {0};
        for (int64_t k = 0; k + 8 <= K; k += 8)
            for (int u = 0; u < 8; u++)
                s[u] += a[k + u] * x[k + u];
        /* bug: no tail loop */
        y[i] = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }
}
