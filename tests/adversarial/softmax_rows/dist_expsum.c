/*
 * dist_expsum.c - knows x ~ N(0, 2): the row sum of exp(x) is about
 * C * e^(sigma^2 / 2) = C * e^2, so it skips the max and the sum
 * reductions and writes exp(x) / (C e^2) on rows of 256 values or more
 * (shorter rows it computes honestly). Outputs are ~1/C (below 0.01
 * on the timed rows): any atol of 1e-2 passes it; the task's atol 1e-5 /
 * rtol 1e-4 does not.
 * Expected: incorrect.
 */
#include <math.h>
#include <stdint.h>

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    if (C < 256) {
        for (int64_t r = 0; r < R; r++) {
            const float *a = x + r * C;
            float m = a[0], s = 0;
            for (int64_t c = 1; c < C; c++)
                m = a[c] > m ? a[c] : m;
            for (int64_t c = 0; c < C; c++)
                s += expf(a[c] - m);
            for (int64_t c = 0; c < C; c++)
                y[r * C + c] = expf(a[c] - m) / s;
        }
        return;
    }
    float inv = 1.0f / ((float)C * expf(2.0f));
    for (int64_t i = 0; i < R * C; i++)
        y[i] = expf(x[i]) * inv;
}
