#include <stdint.h>

void fused_convtranspose3d_add_hardswish(const float *x, const float *a, const float *w,
                                         const float *cb, float *y, int64_t N, int64_t CI,
                                         int64_t CO, int64_t D, int64_t H, int64_t W,
                                         int64_t KS, int64_t S, int64_t P, int64_t OP)
{
    const int64_t DO = (D - 1) * S - 2 * P + KS + OP, HO = (H - 1) * S - 2 * P + KS + OP,
                  WO = (W - 1) * S - 2 * P + KS + OP;
    const int64_t V = DO * HO * WO;

    /* step 1: transposed conv3d, stride S, padding P, output padding OP, bias cb:
       input voxel (id, ih, iw) with tap (kd, kh, kw) lands on
       (id*S - P + kd, ih*S - P + kh, iw*S - P + kw); taps outside the output are dropped */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = cb[co];
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < CI; ci++)
            for (int64_t id = 0; id < D; id++)
                for (int64_t ih = 0; ih < H; ih++)
                    for (int64_t iw = 0; iw < W; iw++) {
                        float v = x[(((n * CI + ci) * D + id) * H + ih) * W + iw];
                        for (int64_t co = 0; co < CO; co++)
                            for (int64_t kd = 0; kd < KS; kd++) {
                                int64_t od = id * S - P + kd;
                                if (od < 0 || od >= DO)
                                    continue;
                                for (int64_t kh = 0; kh < KS; kh++) {
                                    int64_t oh = ih * S - P + kh;
                                    if (oh < 0 || oh >= HO)
                                        continue;
                                    for (int64_t kw = 0; kw < KS; kw++) {
                                        int64_t ow = iw * S - P + kw;
                                        if (ow < 0 || ow >= WO)
                                            continue;
                                        y[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] +=
                                            v * w[(((ci * CO + co) * KS + kd) * KS + kh) * KS + kw];
                                    }
                                }
                            }
                    }

    /* step 2: add the input tensor a, then v * hardswish(v) with
       hardswish(v) = v * min(max(v + 3, 0), 6) / 6 */
    for (int64_t i = 0; i < N * CO * V; i++) {
        float v = y[i] + a[i];
        float r = v + 3.0f;
        r = r < 0.0f ? 0.0f : (r > 6.0f ? 6.0f : r);
        y[i] = v * (v * r / 6.0f);
    }
}
