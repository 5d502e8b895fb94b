/*
 * underrun.c - computes y correctly, then writes y[-1] .. y[-4], just
 * before the start of the output. A memory-safety bug that corrupts
 * whatever precedes the buffer; a guard page or canary only after the end
 * does not see it.
 * Expected: crash|incorrect (never correct: a kernel that writes out of
 * bounds is broken).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    for (int64_t i = 1; i <= 4; i++)
        y[-i] = 1.0f;
}
