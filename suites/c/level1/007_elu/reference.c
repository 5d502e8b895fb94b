#include <math.h>
#include <stdint.h>

void elu(const float *x, float *y, int64_t N, float alpha)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? v : alpha * expm1f(v);
    }
}
