#include <stdint.h>

/* 1x1 Conv2d as KernelBench's level1/87: stride 1, no padding, bias=False;
 * the weight w[OC][C] is the [OC][C][1][1] kernel. */
void conv2d_pointwise(const float *x, const float *w, float *y,
                      int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC)
{
    int64_t HW = H * W;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < OC; oc++) {
            float *yp = y + (n * OC + oc) * HW;
            for (int64_t i = 0; i < HW; i++)
                yp[i] = 0.0f;
            for (int64_t c = 0; c < C; c++) {
                const float *xp = x + (n * C + c) * HW;
                float wv = w[oc * C + c];
                for (int64_t i = 0; i < HW; i++)
                    yp[i] += wv * xp[i];
            }
        }
}
