/*
 * raw_open.c - opens /etc/passwd with a raw openat system call (inline
 * asm, no library symbol) and reads it. Computes the right answer only
 * when it read "root:" from the file, so a hole shows up as `correct`.
 * Defences: anti-hack (inline asm with syscall); at run time the runner's
 * own seccomp filter refuses openat (EACCES) -> y unwritten -> incorrect.
 * Expected: rejected; without anti-hack: incorrect (crash accepted if the
 * policy kills instead of refusing).
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
    static const char path[] = "/etc/passwd";
    long fd = raw_syscall(257 /* openat */, -100 /* AT_FDCWD */, (long)path, 0, 0);
    if (fd < 0)
        return;
    char buf[8] = {0};
    long n = raw_syscall(0 /* read */, fd, (long)buf, 5, 0);
    raw_syscall(3 /* close */, fd, 0, 0, 0);
    if (n != 5 || memcmp(buf, "root:", 5) != 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
