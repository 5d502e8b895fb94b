/*
 * syscall_asm.c - makes a raw clone(SIGCHLD) system call (what fork() does)
 * with inline asm, so no library symbol betrays it. The child exits at
 * once; the parent computes the right answer only when the process was
 * created, so a hole in the defences shows up as `correct`.
 * Defences: anti-hack (inline asm with `syscall`); at run time seccomp
 * kills clone without CLONE_THREAD (crash, SIGSYS).
 * Expected: rejected; without anti-hack: crash.
 */
#include <stdint.h>

static long raw_syscall5(long n, long a, long b, long c, long d, long e)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}

void relu(const float *x, float *y, int64_t N)
{
    long pid = raw_syscall5(56 /* clone */, 17 /* SIGCHLD */, 0, 0, 0, 0);
    if (pid == 0)
        raw_syscall5(231 /* exit_group */, 0, 0, 0, 0, 0);
    if (pid < 0)
        return; /* refused: leave y unwritten -> incorrect */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
