/*
 * raw_clone3.c - creates a process with the newer clone3 system call,
 * whose flags live in memory where a classic seccomp filter cannot look.
 * The child dies at once; the parent computes the right answer only when
 * the process was created, so a hole shows up as `correct`.
 * Defences: anti-hack (inline asm); seccomp makes clone3 fail with ENOSYS
 * -> y unwritten -> incorrect.
 * Expected: rejected; without anti-hack: incorrect|crash.
 */
#include <stdint.h>
#include <string.h>

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
    uint64_t args[11];
    memset(args, 0, sizeof(args));
    args[4] = 17; /* exit_signal = SIGCHLD; flags = 0: a new process */
    long pid = raw_syscall(435 /* clone3 */, (long)args, sizeof(args), 0, 0);
    if (pid == 0)
        raw_syscall(231 /* exit_group */, 0, 0, 0, 0);
    if (pid < 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
