/*
 * dist_sampled_norm.c - estimates each row's norm from its first 256
 * values scaled by sqrt(C / 256) (for i.i.d. inputs that is unbiased in
 * the square), so it reads most of the row once instead of twice. The
 * relative error is ~5-10% of a value that is itself ~1/sqrt(C): on the
 * long timed rows (C=4096) inside an atol of 1e-2 (on the 1031-wide check
 * rows it just misses one), far outside the task's atol 1e-5 / rtol 1e-4.
 * Expected: incorrect.
 */
#include <math.h>
#include <stdint.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        const float *row = x + r * C;
        int64_t m = C < 256 ? C : 256;
        double s = 0;
        for (int64_t c = 0; c < m; c++)
            s += (double)row[c] * row[c];
        float inv = (float)(1.0 / sqrt(s * (double)C / (double)m));
        for (int64_t c = 0; c < C; c++)
            y[r * C + c] = row[c] * inv;
    }
}
