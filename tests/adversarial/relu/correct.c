/*
 * correct.c - plain, correct ReLU written differently from the reference
 * (a branch-free select). The control case: kevo must say `correct` and
 * report a latency with a positive speedup (about 1x).
 * Expected: correct (both with and without the anti-hack gate).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}
