#include <stdint.h>

/* Conv1d as KernelBench's level1/67: stride 1, no padding, dilation 1,
 * groups 1, bias=False. */
void conv1d(const float *x, const float *w, float *y,
            int64_t N, int64_t C, int64_t L, int64_t OC, int64_t K)
{
    int64_t LO = L - K + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t o = 0; o < LO; o++) {
                float acc = 0.0f;
                for (int64_t c = 0; c < C; c++)
                    for (int64_t k = 0; k < K; k++)
                        acc += x[(n * C + c) * L + o + k] * w[(oc * C + c) * K + k];
                y[(n * OC + oc) * LO + o] = acc;
            }
}
