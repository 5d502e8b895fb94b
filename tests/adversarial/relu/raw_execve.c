/*
 * raw_execve.c - replaces the runner with /bin/true through a raw execve
 * (inline asm). Were exec allowed, the runner would vanish mid-protocol.
 * Defences: anti-hack (inline asm with syscall); the runner's seccomp
 * filter kills execve (crash, SIGSYS). If execve merely failed the kernel
 * leaves y unwritten (incorrect).
 * Expected: rejected; without anti-hack: crash|incorrect.
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
    static const char prog[] = "/bin/true";
    const char *argv[] = {prog, 0};
    const char *envp[] = {0};
    raw_syscall(59 /* execve */, (long)prog, (long)argv, (long)envp, 0);
    /* only reached when execve failed */
    (void)x;
    (void)y;
    (void)N;
}
