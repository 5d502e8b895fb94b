#include <math.h>
#include <stdint.h>

void instancenorm(const float *x, float *y, int64_t N, int64_t C, int64_t H, int64_t W, float eps)
{
    int64_t HW = H * W;
    for (int64_t p = 0; p < N * C; p++) {
        const float *xp = x + p * HW;
        float *yp = y + p * HW;
        double s = 0.0;
        for (int64_t i = 0; i < HW; i++)
            s += xp[i];
        double mean = s / (double)HW;
        double v = 0.0;
        for (int64_t i = 0; i < HW; i++) {
            double d = xp[i] - mean;
            v += d * d;
        }
        double var = v / (double)HW;
        double inv = 1.0 / sqrt(var + (double)eps);
        for (int64_t i = 0; i < HW; i++)
            yp[i] = (float)((xp[i] - mean) * inv);
    }
}
