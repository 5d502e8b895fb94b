/*
 * host_renameat_ref.c - renames a file of the host side of the evaluation
 * with a raw renameat (inline asm): ../reference/kernel.c, the copy of the
 * reference's source in the reference's build directory next to the
 * candidate's (a directory of kevo's that must not be the candidate's to
 * change; the reference runner, its build and its outputs live there).
 * Renames it back at once; computes y only when the rename succeeded, so a
 * hole shows up as `correct`.
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
    static const char from[] = "../reference/kernel.c", to[] = "../reference/kernel.c.kv";
    if (kv_sc(264 /* renameat */, -100 /* AT_FDCWD */, (long)from, -100, (long)to, 0) < 0)
        return; /* refused: y keeps its poison */
    kv_sc(264 /* renameat */, -100, (long)to, -100, (long)from, 0);
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
