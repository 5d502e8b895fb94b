/*
 * wrong_signature.c - defines relu with the wrong parameter types (double
 * buffers, int length). Were it linked against the harness it would read
 * floats as doubles. kevo compiles the candidate with the task's
 * prototype in scope, so gcc reports conflicting types.
 * Expected: compile_error (rejected is also accepted: a signature check in
 * the static gate).
 */
#include <stdint.h>

void relu(const double *x, double *y, int N)
{
    for (int i = 0; i < N; i++)
        y[i] = x[i] > 0.0 ? x[i] : 0.0;
}
