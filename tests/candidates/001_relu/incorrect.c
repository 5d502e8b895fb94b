/*
 * incorrect.c (relu) - a plausible bug: the work is split into 4 equal
 * chunks of N / 4 elements and the remainder (N % 4 elements) is never
 * processed. Right for N = 2^24, wrong for N = 1, 7, 1003.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    int64_t chunk = N / 4;
    for (int c = 0; c < 4; c++)
        for (int64_t i = c * chunk; i < (c + 1) * chunk; i++)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
