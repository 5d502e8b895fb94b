/*
 * segfault.c - writes through a NULL pointer.
 * Expected: crash (SIGSEGV), not infra_error.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    volatile float *p = (volatile float *)0;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    *p = y[0];
}
