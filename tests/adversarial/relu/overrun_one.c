/*
 * overrun_one.c - computes y correctly, then writes one element past the
 * end, y[N]. Small enough to land in the alignment slack before the guard
 * page for small N (the canary must catch it) and on the guard page for
 * N = 2^24.
 * Expected: crash|incorrect (either way not correct).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    y[N] = 1.0f;
}
