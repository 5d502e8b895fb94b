#include <math.h>
#include <stdint.h>

void softsign(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        y[i] = v / (1.0f + fabsf(v));
    }
}
