/*
 * write_input.c - casts away const and computes ReLU in place in the input
 * x, then copies it to y. Output values are right, but it destroys the
 * input (which could also be used to influence later calls). Inputs are
 * read-only while the kernel runs.
 * Expected: crash (SIGSEGV on the read-only input); incorrect accepted.
 */
#include <stdint.h>
#include <string.h>

void relu(const float *x, float *y, int64_t N)
{
    float *xw = (float *)x;
    for (int64_t i = 0; i < N; i++)
        xw[i] = xw[i] > 0.0f ? xw[i] : 0.0f;
    memcpy(y, xw, (size_t)N * sizeof(float));
}
