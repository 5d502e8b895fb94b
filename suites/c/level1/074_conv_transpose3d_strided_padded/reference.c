#include <stdint.h>

/* KernelBench problem
 * level1/73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped.py:
 * ConvTranspose3d, no bias, by its scatter definition: every input element
 * x[n][c][i..] adds x * w[c][j][k..] to output channel g*OCG + j (g = the group of c)
 * at the position i*stride - padding + k*dilation of each axis, where that lies
 * inside the output. */
void conv_transpose3d_strided_padded(const float *x, const float *w, float *y, int64_t N, int64_t C,
                                     int64_t OC, int64_t D, int64_t H, int64_t W)
{
    const int64_t KD = 3, KH = 3, KW = 3;    /* kernel */
    const int64_t SD = 2, SH = 2, SW = 2;    /* stride */
    const int64_t PD = 1, PH = 1, PW = 1;    /* padding */
    const int64_t OPD = 0, OPH = 0, OPW = 0; /* output_padding */
    const int64_t DLD = 1, DLH = 1, DLW = 1; /* dilation */
    const int64_t G = 1;                     /* groups */
    const int64_t CG = C / G, OCG = OC / G;
    const int64_t OD = (D - 1) * SD - 2 * PD + DLD * (KD - 1) + OPD + 1;
    const int64_t OH = (H - 1) * SH - 2 * PH + DLH * (KH - 1) + OPH + 1;
    const int64_t OW = (W - 1) * SW - 2 * PW + DLW * (KW - 1) + OPW + 1;

    for (int64_t i = 0; i < N * OC * OD * OH * OW; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const int64_t g = c / CG;
            const float *xc = x + (n * C + c) * D * H * W;
            for (int64_t id = 0; id < D; id++)
                for (int64_t ih = 0; ih < H; ih++)
                    for (int64_t iw = 0; iw < W; iw++) {
                        const float xv = xc[(id * H + ih) * W + iw];
                        for (int64_t j = 0; j < OCG; j++) {
                            float *yo = y + (n * OC + g * OCG + j) * OD * OH * OW;
                            const float *wj = w + (c * OCG + j) * KD * KH * KW;
                            for (int64_t kd = 0; kd < KD; kd++) {
                                const int64_t od = id * SD - PD + kd * DLD;
                                if (od < 0 || od >= OD)
                                    continue;
                                for (int64_t kh = 0; kh < KH; kh++) {
                                    const int64_t oh = ih * SH - PH + kh * DLH;
                                    if (oh < 0 || oh >= OH)
                                        continue;
                                    for (int64_t kw = 0; kw < KW; kw++) {
                                        const int64_t ow = iw * SW - PW + kw * DLW;
                                        if (ow < 0 || ow >= OW)
                                            continue;
                                        yo[(od * OH + oh) * OW + ow] +=
                                            xv * wj[(kd * KH + kh) * KW + kw];
                                    }
                                }
                            }
                        }
                    }
        }
}
