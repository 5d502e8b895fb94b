/*
 * compile_error.c - a syntax error (missing semicolon and brace). The
 * feedback should carry gcc's message.
 * Expected: compile_error.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f
