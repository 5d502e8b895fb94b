#include <stdint.h>
#include <stdlib.h>

void fused_dwconv_pwconv_relu6(const float *x, const float *wd, const float *bd,
                               const float *wp, const float *bp, float *y, int64_t N,
                               int64_t C, int64_t CO, int64_t H, int64_t W)
{
    float *h = malloc((size_t)(N * C * H * W) * sizeof(float));

    /* step 1: depthwise conv2d, 3x3 kernel per channel, stride 1, zero padding 1, bias bd */
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < H; oh++)
                for (int64_t ow = 0; ow < W; ow++) {
                    float acc = bd[c];
                    for (int64_t kh = 0; kh < 3; kh++)
                        for (int64_t kw = 0; kw < 3; kw++) {
                            int64_t ih = oh + kh - 1, iw = ow + kw - 1;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            acc += x[((n * C + c) * H + ih) * W + iw] * wd[(c * 3 + kh) * 3 + kw];
                        }
                    h[((n * C + c) * H + oh) * W + ow] = acc;
                }

    /* step 2: ReLU6, clamp to [0, 6] */
    for (int64_t i = 0; i < N * C * H * W; i++)
        h[i] = h[i] < 0.0f ? 0.0f : (h[i] > 6.0f ? 6.0f : h[i]);

    /* step 3: pointwise (1x1) conv2d C -> CO, bias bp */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < H * W; p++) {
                float acc = bp[co];
                for (int64_t c = 0; c < C; c++)
                    acc += wp[co * C + c] * h[(n * C + c) * H * W + p];
                y[(n * CO + co) * H * W + p] = acc;
            }

    /* step 4: ReLU6 */
    for (int64_t i = 0; i < N * CO * H * W; i++)
        y[i] = y[i] < 0.0f ? 0.0f : (y[i] > 6.0f ? 6.0f : y[i]);
    free(h);
}
