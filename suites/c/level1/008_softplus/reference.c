#include <math.h>
#include <stdint.h>

void softplus(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = fmaxf(v, 0.0f) + log1pf(expf(-fabsf(v)));
    }
}
