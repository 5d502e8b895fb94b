/*
 * system.c - runs a shell command with system(). Computes the right answer
 * only when the command ran, so a hole shows up as `correct`.
 * Defences: anti-hack (process APIs); the object inspection (system);
 * seccomp kills the fork/clone underneath, and the runner forbids exec.
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>
#include <stdlib.h>

void relu(const float *x, float *y, int64_t N)
{
    if (system("true") != 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
