// kevo: cflags -fopenmp -ffast-math
/*
 * correct.c (sigmoid) - numerically symmetric form evaluated on |x|:
 * e = exp(-|x|) never overflows, s = 1 / (1 + e), and for negative x the
 * result is 1 - s = e / (1 + e). -ffast-math lets gcc use the vectorised
 * libmvec expf; OpenMP splits large N. Inputs are finite (normal, std 3).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

void sigmoid(const float *x, float *y, int64_t N)
{
#pragma omp parallel for simd schedule(static) if (N > 65536)
    for (int64_t i = 0; i < N; i++) {
        float v = x[i];
        float e = expf(-fabsf(v));
        float s = 1.0f / (1.0f + e);
        y[i] = v >= 0.0f ? s : e * s;
    }
}
