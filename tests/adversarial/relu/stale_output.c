/*
 * stale_output.c - returns without writing y, hoping the output buffer
 * still holds a previous (correct) result, e.g. the reference's. kevo
 * poisons outputs with NaN before every call.
 * Expected: incorrect.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    (void)x;
    (void)y;
    (void)N;
}
