#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_conv3d_min_softmax(const float *x, const float *w, const float *cb, float *y,
                              int64_t N, int64_t CI, int64_t CO, int64_t D, int64_t H,
                              int64_t W, int64_t KS)
{
    const int64_t DO = D - KS + 1, HO = H - KS + 1, WO = W - KS + 1;
    const int64_t A = HO * WO;
    float *z = malloc((size_t)(N * CO * DO * A) * sizeof(float));

    /* step 1: conv3d, stride 1, no padding, with bias cb */
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
                        z[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] = acc;
                    }

    /* step 2: minimum over the depth axis */
    for (int64_t nc = 0; nc < N * CO; nc++)
        for (int64_t p = 0; p < A; p++) {
            float mn = INFINITY;
            for (int64_t od = 0; od < DO; od++) {
                float v = z[(nc * DO + od) * A + p];
                mn = v < mn ? v : mn;
            }
            y[nc * A + p] = mn;
        }

    /* step 3: softmax over the CO channels at every (h, w), max-subtracted */
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < A; p++) {
            float mx = -INFINITY;
            for (int64_t co = 0; co < CO; co++)
                mx = y[(n * CO + co) * A + p] > mx ? y[(n * CO + co) * A + p] : mx;
            float s = 0.0f;
            for (int64_t co = 0; co < CO; co++) {
                y[(n * CO + co) * A + p] = expf(y[(n * CO + co) * A + p] - mx);
                s += y[(n * CO + co) * A + p];
            }
            for (int64_t co = 0; co < CO; co++)
                y[(n * CO + co) * A + p] /= s;
        }
    free(z);
}
