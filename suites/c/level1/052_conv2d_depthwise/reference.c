#include <stdint.h>

void conv2d_depthwise(const float *x, const float *w, const float *b, float *y,
                      int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t P)
{
    int64_t OH = H + 2 * P - K + 1;
    int64_t OW = W + 2 * P - K + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = x + (n * C + c) * H * W;
            const float *wp = w + c * K * K;
            float *yp = y + (n * C + c) * OH * OW;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = b[c];
                    for (int64_t kh = 0; kh < K; kh++) {
                        int64_t ih = oh - P + kh;
                        if (ih < 0 || ih >= H)
                            continue;
                        for (int64_t kw = 0; kw < K; kw++) {
                            int64_t iw = ow - P + kw;
                            if (iw < 0 || iw >= W)
                                continue;
                            acc += xp[ih * W + iw] * wp[kh * K + kw];
                        }
                    }
                    yp[oh * OW + ow] = acc;
                }
        }
}
