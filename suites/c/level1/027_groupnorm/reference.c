#include <math.h>
#include <stdint.h>

void groupnorm(const float *x, const float *gamma, const float *beta, float *y,
               int64_t N, int64_t C, int64_t H, int64_t W, int64_t G, float eps)
{
    int64_t HW = H * W;
    int64_t CG = C / G;
    int64_t len = CG * HW;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t g = 0; g < G; g++) {
            const float *xg = x + (n * C + g * CG) * HW;
            float *yg = y + (n * C + g * CG) * HW;
            double s = 0.0;
            for (int64_t i = 0; i < len; i++)
                s += xg[i];
            double mean = s / (double)len;
            double v = 0.0;
            for (int64_t i = 0; i < len; i++) {
                double d = xg[i] - mean;
                v += d * d;
            }
            double var = v / (double)len;
            double inv = 1.0 / sqrt(var + (double)eps);
            for (int64_t cc = 0; cc < CG; cc++) {
                int64_t c = g * CG + cc;
                for (int64_t i = 0; i < HW; i++) {
                    int64_t k = cc * HW + i;
                    yg[k] = (float)((xg[k] - mean) * inv) * gamma[c] + beta[c];
                }
            }
        }
    }
}
