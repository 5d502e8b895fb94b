#include <stdint.h>

/* ConvTranspose2d as KernelBench's level1/57: square KxK kernel, stride 1,
 * padding 0, output_padding 0, groups 1, bias=False; the weight is
 * w[C][OC][K][K] (input channels first):
 * y[n][oc][ih+kh][iw+kw] += x[n][c][ih][iw] * w[c][oc][kh][kw]. */
void conv_transpose2d(const float *x, const float *w, float *y,
                      int64_t N, int64_t C, int64_t H, int64_t W, int64_t OC, int64_t K)
{
    int64_t OH = H + K - 1;
    int64_t OW = W + K - 1;
    for (int64_t i = 0; i < N * OC * OH * OW; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    float xv = x[((n * C + c) * H + ih) * W + iw];
                    for (int64_t oc = 0; oc < OC; oc++)
                        for (int64_t kh = 0; kh < K; kh++)
                            for (int64_t kw = 0; kw < K; kw++)
                                y[((n * OC + oc) * OH + ih + kh) * OW + iw + kw] +=
                                    xv * w[((c * OC + oc) * K + kh) * K + kw];
                }
}
