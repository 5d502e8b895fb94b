// kevo: cflags -fopenmp
/*
 * correct.c (matvec) - rows shared out by OpenMP; each row's dot product
 * runs on four independent 8-float vector accumulators (GCC vector
 * extensions, so it vectorises without -ffast-math), then a scalar tail,
 * so any K (1, 5, 17, 1031, 4096) is handled.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

typedef float v8 __attribute__((vector_size(32)));

static inline v8 load8(const float *p)
{
    v8 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static float dot(const float *a, const float *x, int64_t K)
{
    v8 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    int64_t k = 0;
    for (; k + 32 <= K; k += 32) {
        s0 += load8(a + k) * load8(x + k);
        s1 += load8(a + k + 8) * load8(x + k + 8);
        s2 += load8(a + k + 16) * load8(x + k + 16);
        s3 += load8(a + k + 24) * load8(x + k + 24);
    }
    for (; k + 8 <= K; k += 8)
        s0 += load8(a + k) * load8(x + k);
    v8 s = (s0 + s1) + (s2 + s3);
    float r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; k < K; k++)
        r += a[k] * x[k];
    return r;
}

void matvec(const float *A, const float *x, float *y, int64_t M, int64_t K)
{
#pragma omp parallel for schedule(static) if (M * K > 65536)
    for (int64_t i = 0; i < M; i++)
        y[i] = dot(A + i * K, x, K);
}
