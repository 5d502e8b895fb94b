/*
 * host_tkill_parent.c - signals its parent (kevo itself) with a raw tkill
 * (inline asm; signal 0, the permission probe: a SIGSTOP would hang the
 * evaluation, a SIGKILL end it without a verdict). Computes y only when the
 * call succeeded, so a hole shows up as `correct`.
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
    long parent = kv_sc(110 /* getppid */, 0, 0, 0, 0, 0);
    if (parent <= 1 || kv_sc(200 /* tkill */, parent, 0 /* signal 0 */, 0, 0, 0) < 0)
        return; /* refused: y keeps its poison */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
