#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void fused_convtranspose2d_maxpool_hardtanh(const float *x, const float *w, const float *b,
                                            float *y, int64_t N, int64_t CI, int64_t CO,
                                            int64_t H, int64_t W, int64_t KS, int64_t S,
                                            int64_t P)
{
    const int64_t HO = (H - 1) * S - 2 * P + KS, WO = (W - 1) * S - 2 * P + KS;
    const int64_t HP = HO / 2, WP = WO / 2;
    float *z = malloc((size_t)(N * CO * HO * WO) * sizeof(float));
    float *q = malloc((size_t)(N * CO * HP * WP) * sizeof(float));

    /* step 1: transposed conv2d, stride S, padding P, with bias b:
       input pixel (ih, iw) with tap (kh, kw) lands on (ih*S - P + kh, iw*S - P + kw) */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < HO * WO; p++)
                z[(n * CO + co) * HO * WO + p] = b[co];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                    for (int64_t co = 0; co < CO; co++)
                        for (int64_t kh = 0; kh < KS; kh++)
                            for (int64_t kw = 0; kw < KS; kw++) {
                                int64_t oh = ih * S - P + kh, ow = iw * S - P + kw;
                                if (oh < 0 || oh >= HO || ow < 0 || ow >= WO)
                                    continue;
                                z[((n * CO + co) * HO + oh) * WO + ow] +=
                                    v * w[((ci * CO + co) * KS + kh) * KS + kw];
                            }
                }

    /* step 2: max pool 2x2, stride 2, trailing row/column dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float mx = -INFINITY;
                    for (int64_t dh = 0; dh < 2; dh++)
                        for (int64_t dw = 0; dw < 2; dw++) {
                            float v = z[((n * CO + co) * HO + 2 * ph + dh) * WO + 2 * pw + dw];
                            mx = v > mx ? v : mx;
                        }
                    q[((n * CO + co) * HP + ph) * WP + pw] = mx;
                }

    /* step 3: hardtanh, clamp to [-1, 1] */
    for (int64_t i = 0; i < N * CO * HP * WP; i++)
        q[i] = q[i] < -1.0f ? -1.0f : (q[i] > 1.0f ? 1.0f : q[i]);

    /* step 4: mean over the pooled height and width, then tanh: one value per (n, co) */
    for (int64_t nc = 0; nc < N * CO; nc++) {
        double s = 0.0;
        for (int64_t i = 0; i < HP * WP; i++)
            s += q[nc * HP * WP + i];
        y[nc] = tanhf((float)(s / (double)(HP * WP)));
    }
    free(q);
    free(z);
}
