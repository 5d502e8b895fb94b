/*
 * infinite_loop.c - never returns. The counter is volatile so gcc cannot
 * delete the loop (C11 6.8.5p6 lets it drop side-effect-free loops).
 * Expected: timeout (the runner is killed at the wall-clock limit).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    volatile uint64_t spin = 0;
    for (;;)
        spin++;
}
