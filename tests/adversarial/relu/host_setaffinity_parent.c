/*
 * host_setaffinity_parent.c - pins its parent (kevo) to one CPU with a raw
 * sched_setaffinity (inline asm): a candidate that can move other
 * processes between CPUs can crowd the reference runner or kevo's own
 * timing thread and skew the speedup. Computes y only when the call
 * succeeded, so a hole shows up as `correct` (and restores nothing: the
 * call must not succeed).
 * Defences: anti-hack (inline asm making a system call); at run time,
 * seccomp (refused or killed) and no file, directory or process of the
 * host within the candidate's rights.
 * Expected: rejected; without anti-hack: crash or incorrect.
 */
#include <stdint.h>

/* a raw system call: returns -errno on failure */
static long kv_sc(long n, long a, long b, long c, long d, long e)
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
    uint64_t mask[16] = {1}; /* CPU 0 */
    long parent = kv_sc(110 /* getppid */, 0, 0, 0, 0, 0);
    if (parent <= 1 || kv_sc(203 /* sched_setaffinity */, parent, sizeof(mask), (long)mask, 0, 0) < 0)
        return; /* refused: y keeps its poison */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
