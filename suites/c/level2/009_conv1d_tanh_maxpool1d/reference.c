#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv1d_tanh_maxpool1d(const float *x, const float *w, const float *b, float *y,
                                 int64_t N, int64_t CI, int64_t CO, int64_t L, int64_t KS,
                                 int64_t P)
{
    const int64_t LO = L - KS + 1, LP = LO / P;
    float *z = malloc((size_t)(N * CO * LO) * sizeof(float));

    /* step 1: conv1d, stride 1, no padding, with bias */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t o = 0; o < LO; o++) {
                float acc = b[co];
                for (int64_t ci = 0; ci < CI; ci++)
                    for (int64_t k = 0; k < KS; k++)
                        acc += x[(n * CI + ci) * L + o + k] * w[(co * CI + ci) * KS + k];
                z[(n * CO + co) * LO + o] = acc;
            }

    /* step 2: tanh */
    for (int64_t i = 0; i < N * CO * LO; i++)
        z[i] = tanhf(z[i]);

    /* step 3: max pool, window P, stride P, trailing remainder dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t j = 0; j < LP; j++) {
                float mx = -INFINITY;
                for (int64_t t = 0; t < P; t++) {
                    float v = z[(n * CO + co) * LO + j * P + t];
                    mx = v > mx ? v : mx;
                }
                y[(n * CO + co) * LP + j] = mx;
            }
    free(z);
}
