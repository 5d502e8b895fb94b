/*
 * tail_wrong.c - processes 8 elements at a time and forgets the remainder
 * when N is not a multiple of 8. Right on the timed size (N = 2^24), wrong
 * on the check sizes 1, 7 and 1003: the last elements keep the NaN poison.
 * Expected: incorrect.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i + 8 <= N; i += 8)
        for (int k = 0; k < 8; k++)
            y[i + k] = x[i + k] > 0.0f ? x[i + k] : 0.0f;
    /* bug: no remainder loop */
}
