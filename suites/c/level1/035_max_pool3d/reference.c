#include <stdint.h>
#include <math.h>

/* MaxPool3d(kernel_size K, stride S, padding P, dilation DIL) on every axis:
 * window (od, oh, ow) holds x[od*S - P + kd*DIL][oh*S - P + kh*DIL]
 * [ow*S - P + kw*DIL]; padding never wins. */
void max_pool3d(const float *x, float *y, int64_t N, int64_t C, int64_t D, int64_t H,
                int64_t W, int64_t K, int64_t S, int64_t P, int64_t DIL)
{
    int64_t E = DIL * (K - 1) + 1;
    int64_t OD = (D + 2 * P - E) / S + 1;
    int64_t OH = (H + 2 * P - E) / S + 1;
    int64_t OW = (W + 2 * P - E) / S + 1;
    for (int64_t nc = 0; nc < N * C; nc++) {
        const float *xp = x + nc * D * H * W;
        float *yp = y + nc * OD * OH * OW;
        for (int64_t od = 0; od < OD; od++)
        for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
            float m = -INFINITY;
            for (int64_t kd = 0; kd < K; kd++) {
                int64_t id = od * S - P + kd * DIL;
                if (id < 0 || id >= D)
                    continue;
                for (int64_t kh = 0; kh < K; kh++) {
                    int64_t ih = oh * S - P + kh * DIL;
                    if (ih < 0 || ih >= H)
                        continue;
                    for (int64_t kw = 0; kw < K; kw++) {
                        int64_t iw = ow * S - P + kw * DIL;
                        if (iw < 0 || iw >= W)
                            continue;
                        float v = xp[(id * H + ih) * W + iw];
                        if (v > m)
                            m = v;
                    }
                }
            }
            yp[(od * OH + oh) * OW + ow] = m;
        }
    }
}
