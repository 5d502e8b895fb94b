#include <math.h>
#include <stdint.h>

void fused_convtranspose2d_subtract_tanh(const float *x, const float *w, const float *cb,
                                         const float *b, float *y, int64_t N, int64_t CI,
                                         int64_t CO, int64_t H, int64_t W, int64_t KS,
                                         int64_t S, int64_t P, int64_t OP)
{
    const int64_t HO = (H - 1) * S - 2 * P + KS + OP, WO = (W - 1) * S - 2 * P + KS + OP;
    const int64_t V = HO * WO;

    /* step 1: transposed conv2d, stride S, padding P, output padding OP, bias cb:
       input pixel (ih, iw) with tap (kh, kw) lands on (ih*S - P + kh, iw*S - P + kw);
       taps outside the HO x WO output are dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = cb[co];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                    for (int64_t co = 0; co < CO; co++)
                        for (int64_t kh = 0; kh < KS; kh++) {
                            int64_t oh = ih * S - P + kh;
                            if (oh < 0 || oh >= HO)
                                continue;
                            for (int64_t kw = 0; kw < KS; kw++) {
                                int64_t ow = iw * S - P + kw;
                                if (ow < 0 || ow >= WO)
                                    continue;
                                y[((n * CO + co) * HO + oh) * WO + ow] +=
                                    v * w[((ci * CO + co) * KS + kh) * KS + kw];
                            }
                        }
                }

    /* step 2: subtract the per-channel bias b, then tanh */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = tanhf(y[(n * CO + co) * V + p] - b[co]);
}
