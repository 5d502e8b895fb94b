#include <math.h>
#include <stdint.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double ss = 0.0;
        for (int64_t c = 0; c < C; c++)
            ss += (double)xr[c] * xr[c];
        double inv = 1.0 / sqrt(ss);
        for (int64_t c = 0; c < C; c++)
            yr[c] = (float)(xr[c] * inv);
    }
}
