#include <stdint.h>

void leaky_relu(const float *x, float *y, int64_t N, float negative_slope)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        float pos = v > 0.0f ? v : 0.0f;
        float neg = v < 0.0f ? v : 0.0f;
        y[i] = pos + negative_slope * neg;
    }
}
