/*
 * raw_kill.c - probes whether it may signal other processes: kill(-1, 0)
 * (signal 0 only checks permission; it harms nothing) through a raw system
 * call. Were kill allowed, kill(-1, SIGKILL) would take down every process
 * of the sandbox uid: the reference runner, other evaluations. Computes
 * the right answer only when the probe succeeded, so a hole shows up as
 * `correct`.
 * Defences: anti-hack (inline asm); seccomp refuses kill (EPERM) -> y
 * unwritten -> incorrect.
 * Expected: rejected; without anti-hack: incorrect|crash.
 */
#include <stdint.h>

static long raw_syscall(long n, long a, long b, long c, long d)
{
    long ret;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

void relu(const float *x, float *y, int64_t N)
{
    if (raw_syscall(62 /* kill */, -1, 0, 0, 0) != 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
