#include <math.h>
#include <stdint.h>

void layernorm_lastdim(const float *x, const float *gamma, const float *beta, float *y,
                       int64_t R, int64_t C, float eps)
{
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double s = 0.0;
        for (int64_t c = 0; c < C; c++)
            s += xr[c];
        double mean = s / (double)C;
        double v = 0.0;
        for (int64_t c = 0; c < C; c++) {
            double d = xr[c] - mean;
            v += d * d;
        }
        double var = v / (double)C;
        double inv = 1.0 / sqrt(var + (double)eps);
        for (int64_t c = 0; c < C; c++)
            yr[c] = (float)((xr[c] - mean) * inv) * gamma[c] + beta[c];
    }
}
