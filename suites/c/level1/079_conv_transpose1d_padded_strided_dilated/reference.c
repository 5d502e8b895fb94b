#include <stdint.h>

/* KernelBench problem
 * level1/79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__.py:
 * ConvTranspose1d, no bias, by its scatter definition: every input element
 * x[n][c][i..] adds x * w[c][j][k..] to output channel g*OCG + j (g = the group of c)
 * at the position i*stride - padding + k*dilation of each axis, where that lies
 * inside the output. */
void conv_transpose1d_padded_strided_dilated(const float *x, const float *w, float *y, int64_t N,
                                             int64_t C, int64_t OC, int64_t L)
{
    const int64_t KL = 3;  /* kernel */
    const int64_t SL = 2;  /* stride */
    const int64_t PL = 1;  /* padding */
    const int64_t OPL = 0; /* output_padding */
    const int64_t DLL = 2; /* dilation */
    const int64_t G = 1;   /* groups */
    const int64_t CG = C / G, OCG = OC / G;
    const int64_t OL = (L - 1) * SL - 2 * PL + DLL * (KL - 1) + OPL + 1;

    for (int64_t i = 0; i < N * OC * OL; i++)
        y[i] = 0.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            const int64_t g = c / CG;
            const float *xc = x + (n * C + c) * L;
            for (int64_t il = 0; il < L; il++) {
                const float xv = xc[il];
                for (int64_t j = 0; j < OCG; j++) {
                    float *yo = y + (n * OC + g * OCG + j) * OL;
                    const float *wj = w + (c * OCG + j) * KL;
                    for (int64_t kl = 0; kl < KL; kl++) {
                        const int64_t ol = il * SL - PL + kl * DLL;
                        if (ol < 0 || ol >= OL)
                            continue;
                        yo[ol] += xv * wj[kl];
                    }
                }
            }
        }
}
