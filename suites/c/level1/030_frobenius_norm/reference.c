#include <math.h>
#include <stdint.h>

void frobenius_norm(const float *x, float *y, int64_t N, int64_t C, int64_t H, int64_t W)
{
    int64_t total = N * C * H * W;
    double ss = 0.0;
    for (int64_t i = 0; i < total; i++)
        ss += (double)x[i] * x[i];
    double inv = 1.0 / sqrt(ss);
    for (int64_t i = 0; i < total; i++)
        y[i] = (float)(x[i] * inv);
}
