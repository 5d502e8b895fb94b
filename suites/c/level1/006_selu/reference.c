#include <math.h>
#include <stdint.h>

void selu(const float *x, float *y, int64_t N)
{
    const float SELU_ALPHA = 1.6732632423543772848f;
    const float SELU_SCALE = 1.0507009873554804934f;
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = v > 0.0f ? SELU_SCALE * v : SELU_SCALE * SELU_ALPHA * expm1f(v);
    }
}
