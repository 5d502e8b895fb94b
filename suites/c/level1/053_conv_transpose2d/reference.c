#include <stdint.h>

void conv_transpose2d(const float *x, const float *w, const float *b, float *y,
                      int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int64_t K,
                      int64_t P)
{
    const int64_t S = 2;
    int64_t OH = (H - 1) * S - 2 * P + K;
    int64_t OW = (W - 1) * S - 2 * P + K;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t i = 0; i < OH * OW; i++)
                y[(n * OC + oc) * OH * OW + i] = b[oc];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float xv = x[((n * C + c) * H + ih) * W + iw];
                    for (int64_t oc = 0; oc < OC; oc++)
                        for (int64_t kh = 0; kh < K; kh++) {
                            int64_t oh = ih * S - P + kh;
                            if (oh < 0 || oh >= OH)
                                continue;
                            for (int64_t kw = 0; kw < K; kw++) {
                                int64_t ow = iw * S - P + kw;
                                if (ow < 0 || ow >= OW)
                                    continue;
                                y[((n * OC + oc) * OH + oh) * OW + ow] +=
                                    xv * w[((c * OC + oc) * K + kh) * K + kw];
                            }
                        }
                }
}
