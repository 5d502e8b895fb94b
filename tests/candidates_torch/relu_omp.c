// kevo: cflags -O3 -fopenmp
#include <stdint.h>
void t_relu(const float *restrict x, float *restrict y, int64_t batch_size, int64_t dim)
{
    int64_t n = batch_size * dim;
#pragma omp parallel for simd
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0.0f;
}
