// kevo: cflags -fopenmp -ffast-math
/*
 * correct.c (softmax_rows) - rows in parallel; per row a vectorised max,
 * exp(x - max) written once into y while summing with 16 independent float
 * accumulators (then added in double), and one scaling pass. The max starts
 * from x[0], not -INFINITY (-ffast-math assumes no infinities).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

static void softmax_row(const float *x, float *y, int64_t C)
{
    float m = x[0];
#pragma omp simd reduction(max : m)
    for (int64_t c = 1; c < C; c++)
        m = x[c] > m ? x[c] : m;
    float acc[16] = {0};
    int64_t c = 0;
    for (; c + 16 <= C; c += 16)
#pragma omp simd
        for (int k = 0; k < 16; k++) {
            float e = expf(x[c + k] - m);
            y[c + k] = e;
            acc[k] += e;
        }
    double s = 0.0;
    for (; c < C; c++) {
        float e = expf(x[c] - m);
        y[c] = e;
        s += e;
    }
    for (int k = 0; k < 16; k++)
        s += acc[k];
    float inv = (float)(1.0 / s);
#pragma omp simd
    for (int64_t j = 0; j < C; j++)
        y[j] *= inv;
}

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
#pragma omp parallel for schedule(static) if (R * C > 65536)
    for (int64_t r = 0; r < R; r++)
        softmax_row(x + r * C, y + r * C, C);
}
