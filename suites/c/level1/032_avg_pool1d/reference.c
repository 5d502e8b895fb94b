#include <stdint.h>

void avg_pool1d(const float *x, float *y, int64_t N, int64_t C, int64_t L,
                int64_t K, int64_t S, int64_t P)
{
    int64_t LO = (L + 2 * P - K) / S + 1;
    for (int64_t nc = 0; nc < N * C; nc++) {
        const float *xr = x + nc * L;
        float *yr = y + nc * LO;
        for (int64_t o = 0; o < LO; o++) {
            float s = 0.0f;
            for (int64_t k = 0; k < K; k++) {
                int64_t i = o * S - P + k;
                if (i >= 0 && i < L)
                    s += xr[i];
            }
            yr[o] = s / (float)K;
        }
    }
}
