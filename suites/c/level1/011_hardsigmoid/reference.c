#include <stdint.h>

void hardsigmoid(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        float r = v / 6.0f + 0.5f;
        y[i] = r > 1.0f ? 1.0f : (r < 0.0f ? 0.0f : r);
    }
}
