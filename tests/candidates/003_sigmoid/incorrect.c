/*
 * incorrect.c (sigmoid) - the same stable two-branch form, with the
 * branches' roles confused: for negative x it returns 1 / (1 + exp(x))
 * (that is sigmoid(-x)) instead of exp(x) / (1 + exp(x)).
 */
#include <math.h>
#include <stdint.h>

void sigmoid(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        if (v >= 0.0f) {
            y[i] = 1.0f / (1.0f + expf(-v));
        } else {
            float e = expf(v);
            y[i] = 1.0f / (1.0f + e); /* bug: should be e / (1 + e) */
        }
    }
}
