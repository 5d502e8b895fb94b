// kevo: cflags -fopenmp
/*
 * correct_omp.c - correct ReLU parallelised with OpenMP through the
 * allow-listed build hint on the first line. Proves that the sandbox's
 * seccomp policy still lets OpenMP create its threads (clone with
 * CLONE_THREAD) and that the hint is honoured.
 * Expected: correct.
 */
#include <omp.h>
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
