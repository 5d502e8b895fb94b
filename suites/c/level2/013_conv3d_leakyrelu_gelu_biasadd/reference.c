#include <math.h>
#include <stdint.h>

void fused_conv3d_leakyrelu_gelu_biasadd(const float *x, const float *w, const float *cb,
                                         const float *b, float *y, float slope, int64_t N,
                                         int64_t CI, int64_t CO, int64_t D, int64_t H,
                                         int64_t W, int64_t KS)
{
    const int64_t DO = D - KS + 1, HO = H - KS + 1, WO = W - KS + 1;
    const int64_t total = N * CO * DO * HO * WO;

    /* step 1: conv3d, stride 1, no padding, with conv bias cb */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t od = 0; od < DO; od++)
                for (int64_t oh = 0; oh < HO; oh++)
                    for (int64_t ow = 0; ow < WO; ow++) {
                        float acc = cb[co];
                        for (int64_t ci = 0; ci < CI; ci++)
                            for (int64_t kd = 0; kd < KS; kd++)
                                for (int64_t kh = 0; kh < KS; kh++)
                                    for (int64_t kw = 0; kw < KS; kw++)
                                        acc += x[(((n * CI + ci) * D + od + kd) * H + oh + kh) * W + ow + kw] *
                                               w[(((co * CI + ci) * KS + kd) * KS + kh) * KS + kw];
                        y[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] = acc;
                    }

    /* step 2: ReLU */
    for (int64_t i = 0; i < total; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;

    /* step 3: leaky ReLU with negative slope `slope` (no-op after the ReLU, kept as in the model) */
    for (int64_t i = 0; i < total; i++)
        y[i] = y[i] >= 0.0f ? y[i] : slope * y[i];

    /* step 4: exact GELU */
    for (int64_t i = 0; i < total; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));

    /* step 5: sigmoid */
    for (int64_t i = 0; i < total; i++)
        y[i] = 1.0f / (1.0f + expf(-y[i]));

    /* step 6: add per-channel bias b */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < DO * HO * WO; p++)
                y[(n * CO + co) * DO * HO * WO + p] += b[co];
}
