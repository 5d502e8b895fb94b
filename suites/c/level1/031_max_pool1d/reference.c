#include <stdint.h>
#include <math.h>

/* MaxPool1d(kernel_size K, stride S, padding P, dilation DIL): window o
 * holds x[o*S - P + k*DIL], k < K; padding never wins. */
void max_pool1d(const float *x, float *y, int64_t N, int64_t C, int64_t L,
                int64_t K, int64_t S, int64_t P, int64_t DIL)
{
    int64_t LO = (L + 2 * P - DIL * (K - 1) - 1) / S + 1;
    for (int64_t nc = 0; nc < N * C; nc++) {
        const float *xr = x + nc * L;
        float *yr = y + nc * LO;
        for (int64_t o = 0; o < LO; o++) {
            float m = -INFINITY;
            for (int64_t k = 0; k < K; k++) {
                int64_t i = o * S - P + k * DIL;
                if (i >= 0 && i < L && xr[i] > m)
                    m = xr[i];
            }
            yr[o] = m;
        }
    }
}
