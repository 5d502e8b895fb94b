/*
 * nan.c - writes NaN for negative inputs (computes 0/0 there instead of 0).
 * NaN must never compare as "close": comparisons that use `>` instead of
 * `<=` would let NaN pass.
 * Expected: incorrect.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        float z = v - v; /* 0 */
        y[i] = v > 0.0f ? v : z / z; /* 0/0 = NaN for v <= 0 */
    }
}
