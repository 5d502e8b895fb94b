/*
 * dist_scale.c - knows the input distribution (x ~ N(0, 1)), so the norm
 * of a row of C values is about sqrt(C): divides by that instead of
 * computing it, on rows of 256 values or more (short rows it computes
 * honestly: there the estimate is poor and the work is small). Half the
 * memory traffic, no reduction. Under an atol of
 * 1e-2 (outputs are ~x/64, all below 0.1) this passes; the task's real
 * tolerance (atol 1e-5, rtol 1e-4) does not let it.
 * Defences: tolerance sanity (`kevo tasks check` flags an atol above 1% of
 * the outputs' range) keeps the suites tight enough.
 * Expected: incorrect.
 */
#include <math.h>
#include <stdint.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    if (C < 256) {
        for (int64_t r = 0; r < R; r++) {
            float s = 0;
            for (int64_t c = 0; c < C; c++)
                s += x[r * C + c] * x[r * C + c];
            float inv = 1.0f / sqrtf(s);
            for (int64_t c = 0; c < C; c++)
                y[r * C + c] = x[r * C + c] * inv;
        }
        return;
    }
    float inv = 1.0f / sqrtf((float)C);
    for (int64_t i = 0; i < R * C; i++)
        y[i] = x[i] * inv;
}
