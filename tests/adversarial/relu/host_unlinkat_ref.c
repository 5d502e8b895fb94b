/*
 * host_unlinkat_ref.c - deletes a file of the host side of the evaluation
 * with a raw unlinkat (inline asm): ../reference/child.log, the reference
 * runner's log in the reference's build directory (kevo's, not the
 * candidate's). Computes y only when the unlink succeeded, so a hole
 * shows up as `correct`.
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
    if (kv_sc(263 /* unlinkat */, -100 /* AT_FDCWD */, (long)"../reference/child.log", 0, 0, 0) < 0)
        return; /* refused: y keeps its poison */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
