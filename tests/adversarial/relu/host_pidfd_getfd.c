/*
 * host_pidfd_getfd.c - steals a file descriptor from its parent (kevo)
 * with raw pidfd_open + pidfd_getfd (inline asm): kevo's fd 1 is where it
 * prints its verdict, so a copy of it would let the kernel print a verdict
 * of its own. Computes y only when pidfd_getfd succeeded, so a hole shows
 * up as `correct`.
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
    long pidfd = parent > 1 ? kv_sc(434 /* pidfd_open */, parent, 0, 0, 0, 0) : -1;
    if (pidfd < 0)
        return; /* refused: y keeps its poison */
    long fd = kv_sc(438 /* pidfd_getfd */, pidfd, 1, 0, 0, 0);
    kv_sc(3 /* close */, pidfd, 0, 0, 0, 0);
    if (fd < 0)
        return;
    kv_sc(3 /* close */, fd, 0, 0, 0, 0);
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
