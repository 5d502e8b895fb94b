#include <stdint.h>

/* KernelBench problem
 * level1/78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__.py:
 * ConvTranspose2d, no bias, by its scatter definition: every input element
 * x[n][c][i..] adds x * w[c][j][k..] to output channel g*OCG + j (g = the group of c)
 * at the position i*stride - padding + k*dilation of each axis, where that lies
 * inside the output. */
void conv_transpose2d_asym_padded(const float *x, const float *w, float *y, int64_t N, int64_t C,
                                  int64_t OC, int64_t H, int64_t W)
{
    const int64_t KH = 3, KW = 7;   /* kernel */
    const int64_t SH = 1, SW = 1;   /* stride */
    const int64_t PH = 1, PW = 3;   /* padding */
    const int64_t OPH = 0, OPW = 0; /* output_padding */
    const int64_t DLH = 1, DLW = 1; /* dilation */
    const int64_t G = 1;            /* groups */
    const int64_t CG = C / G, OCG = OC / G;
    const int64_t OH = (H - 1) * SH - 2 * PH + DLH * (KH - 1) + OPH + 1;
    const int64_t OW = (W - 1) * SW - 2 * PW + DLW * (KW - 1) + OPW + 1;

    for (int64_t i = 0; i < N * OC * OH * OW; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const int64_t g = c / CG;
            const float *xc = x + (n * C + c) * H * W;
            for (int64_t ih = 0; ih < H; ih++)
                for (int64_t iw = 0; iw < W; iw++) {
                    const float xv = xc[ih * W + iw];
                    for (int64_t j = 0; j < OCG; j++) {
                        float *yo = y + (n * OC + g * OCG + j) * OH * OW;
                        const float *wj = w + (c * OCG + j) * KH * KW;
                        for (int64_t kh = 0; kh < KH; kh++) {
                            const int64_t oh = ih * SH - PH + kh * DLH;
                            if (oh < 0 || oh >= OH)
                                continue;
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t ow = iw * SW - PW + kw * DLW;
                                if (ow < 0 || ow >= OW)
                                    continue;
                                yo[oh * OW + ow] += xv * wj[kh * KW + kw];
                            }
                        }
                    }
                }
        }
}
