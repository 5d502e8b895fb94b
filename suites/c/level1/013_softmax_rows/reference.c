#include <math.h>
#include <stdint.h>

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        float m = -INFINITY;
        for (int64_t c = 0; c < C; c++)
            if (xr[c] > m)
                m = xr[c];
        double s = 0.0;
        for (int64_t c = 0; c < C; c++) {
            float e = expf(xr[c] - m);
            yr[c] = e;
            s += e;
        }
        float inv = (float)(1.0 / s);
        for (int64_t c = 0; c < C; c++)
            yr[c] *= inv;
    }
}
