// kevo: cflags -fopenmp
/*
 * relu_box4.c - RACY on purpose: ReLU as a scatter, iteration j adds a
 * quarter of relu(x[j+k]) into y[j+k] for k < 4, so 4 neighbouring
 * iterations add into each element and threads collide only in the 3
 * elements where their shares meet. Input to bench/race_probe.sh.
 */
#include <stdint.h>
void relu(const float *x, float *y, int64_t N)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++)
        y[i] = 0.0f;
#pragma omp parallel for schedule(static)
    for (int64_t j = 1 - 4; j < N; j++)
        for (int64_t k = 0; k < 4; k++)
            if (j + k >= 0 && j + k < N)
                y[j + k] += (x[j + k] > 0.0f ? x[j + k] : 0.0f) * (1.0f / 4);
}
