#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* RMSNorm as KernelBench's level1/36 defines it: over dim 1 (the channels)
 * of an NCHW tensor, no weight: y = x / sqrt(mean_c(x^2) + eps). The sum of
 * squares of each (n, h, w) is accumulated channel by channel in a scratch
 * row so that the input is read in order. */
void rmsnorm_lastdim(const float *x, float *y, int64_t N, int64_t C, int64_t H, int64_t W,
                     float eps)
{
    int64_t HW = H * W;
    double *ss = malloc((size_t)(HW > 0 ? HW : 1) * sizeof(double));
    if (!ss)
        return;
    for (int64_t n = 0; n < N; n++) {
        const float *xn = x + n * C * HW;
        float *yn = y + n * C * HW;
        for (int64_t i = 0; i < HW; i++)
            ss[i] = 0.0;
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < HW; i++)
                ss[i] += (double)xn[c * HW + i] * xn[c * HW + i];
        for (int64_t i = 0; i < HW; i++)
            ss[i] = 1.0 / sqrt(ss[i] / (double)C + (double)eps);
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < HW; i++)
                yn[c * HW + i] = (float)(xn[c * HW + i] * ss[i]);
    }
    free(ss);
}
