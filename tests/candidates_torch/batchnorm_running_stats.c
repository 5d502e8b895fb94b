#include <math.h>
#include <stdint.h>
/* eval-mode BatchNorm2d (running statistics): not what KernelBench's
 * harness runs, so it must be `incorrect` */
void t_batchnorm2d(const float *x, const float *w, const float *b, const float *rm, const float *rv,
                   const int64_t *nbt, float *y, int64_t N, int64_t C, int64_t H, int64_t W)
{
    (void)nbt;
    int64_t hw = H * W;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < hw; i++) {
                int64_t k = (n * C + c) * hw + i;
                y[k] = (x[k] - rm[c]) / sqrtf(rv[c] + 1e-5f) * w[c] + b[c];
            }
}
