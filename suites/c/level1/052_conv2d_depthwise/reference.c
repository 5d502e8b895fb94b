#include <stdint.h>

/* Depthwise Conv2d as KernelBench's level1/82: groups = C (one KxK filter
 * per channel), stride 1, no padding, bias=False. */
void conv2d_depthwise(const float *x, const float *w, float *y,
                      int64_t N, int64_t C, int64_t H, int64_t W, int64_t K)
{
    int64_t OH = H - K + 1;
    int64_t OW = W - K + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const float *xp = x + (n * C + c) * H * W;
            const float *wp = w + c * K * K;
            float *yp = y + (n * C + c) * OH * OW;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = 0.0f;
                    for (int64_t kh = 0; kh < K; kh++)
                        for (int64_t kw = 0; kw < K; kw++)
                            acc += xp[(oh + kh) * W + ow + kw] * wp[kh * K + kw];
                    yp[oh * OW + ow] = acc;
                }
        }
}
