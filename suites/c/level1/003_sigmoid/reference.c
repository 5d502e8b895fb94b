#include <math.h>
#include <stdint.h>

void sigmoid(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = 1.0f / (1.0f + expf(-v));
    }
}
