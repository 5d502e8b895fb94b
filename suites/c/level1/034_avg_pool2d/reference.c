#include <stdint.h>

/* AvgPool2d(kernel_size K, stride S, padding P), count_include_pad = true
 * (PyTorch's default): every window sum is divided by K*K. */
void avg_pool2d(const float *x, float *y, int64_t N, int64_t C, int64_t H, int64_t W,
                int64_t K, int64_t S, int64_t P)
{
    int64_t OH = (H + 2 * P - K) / S + 1;
    int64_t OW = (W + 2 * P - K) / S + 1;
    for (int64_t nc = 0; nc < N * C; nc++) {
        const float *xp = x + nc * H * W;
        float *yp = y + nc * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++) {
            for (int64_t ow = 0; ow < OW; ow++) {
                float s = 0.0f;
                for (int64_t kh = 0; kh < K; kh++) {
                    int64_t ih = oh * S - P + kh;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t kw = 0; kw < K; kw++) {
                        int64_t iw = ow * S - P + kw;
                        if (iw < 0 || iw >= W)
                            continue;
                        s += xp[ih * W + iw];
                    }
                }
                yp[oh * OW + ow] = s / (float)(K * K);
            }
        }
    }
}
