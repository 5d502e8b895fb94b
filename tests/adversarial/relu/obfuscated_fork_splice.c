/*
 * obfuscated_fork_splice.c - declares and calls fork() with the name split
 * by a backslash-newline (line splicing happens before tokenisation, so
 * the compiler sees `fork`, a line-based grep does not).
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>

extern int fo\
rk(void);

void relu(const float *x, float *y, int64_t N)
{
    int pid = fo\
rk();
    if (pid == 0)
        *(volatile int *)0 = 0; /* the child dies at once (SIGSEGV) */
    if (pid < 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
