#include <stdint.h>

/* Conv3d as KernelBench's level1/54: cubic KxKxK kernel, stride 1, no
 * padding, dilation 1, groups 1, bias=False. */
void conv3d(const float *x, const float *w, float *y,
            int64_t N, int64_t C, int64_t D, int64_t H, int64_t W, int64_t OC, int64_t K)
{
    int64_t OD = D - K + 1, OH = H - K + 1, OW = W - K + 1;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++)
            for (int64_t od = 0; od < OD; od++)
                for (int64_t oh = 0; oh < OH; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        float acc = 0.0f;
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t kd = 0; kd < K; kd++)
                                for (int64_t kh = 0; kh < K; kh++)
                                    for (int64_t kw = 0; kw < K; kw++)
                                        acc += x[(((n * C + c) * D + od + kd) * H + oh + kh) * W + ow + kw] *
                                               w[(((oc * C + c) * K + kd) * K + kh) * K + kw];
                        y[(((n * OC + oc) * OD + od) * OH + oh) * OW + ow] = acc;
                    }
}
