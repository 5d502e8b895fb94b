#include <math.h>
#include <stdint.h>

void tanh_activation(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = tanhf(v);
    }
}
