/*
 * host_openat2_passwd.c - opens /etc/passwd with a raw openat2 (inline
 * asm; the newer call a filter written for openat alone misses) and reads
 * it. Computes y only when it read "root:" from the file, so a hole shows
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
    uint64_t how[3] = {0, 0, 0}; /* struct open_how: flags O_RDONLY, mode, resolve */
    long fd = kv_sc(437 /* openat2 */, -100 /* AT_FDCWD */, (long)"/etc/passwd", (long)how,
                    sizeof(how), 0);
    if (fd < 0)
        return; /* refused: y keeps its poison */
    char buf[8] = {0};
    long n = kv_sc(0 /* read */, fd, (long)buf, 5, 0, 0);
    kv_sc(3 /* close */, fd, 0, 0, 0, 0);
    if (n != 5 || buf[0] != 'r' || buf[1] != 'o' || buf[2] != 'o' || buf[3] != 't')
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
