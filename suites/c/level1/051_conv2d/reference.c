#include <stdint.h>

void conv2d(const float *x, const float *w, const float *b, float *y,
            int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int64_t K, int64_t P)
{
    int64_t OH = H + 2 * P - K + 1;
    int64_t OW = W + 2 * P - K + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = b[oc];
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t kh = 0; kh < K; kh++) {
                            int64_t ih = oh - P + kh;
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int64_t kw = 0; kw < K; kw++) {
                                int64_t iw = ow - P + kw;
                                if (iw < 0 || iw >= W)
                                    continue;
                                acc += x[((n * C + c) * H + ih) * W + iw] *
                                       w[((oc * C + c) * K + kh) * K + kw];
                            }
                        }
                    y[((n * OC + oc) * OH + oh) * OW + ow] = acc;
                }
}
