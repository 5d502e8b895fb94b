/*
 * host_symlinkat_tmp.c - plants a symlink to /etc/shadow in the host's
 * /tmp with a raw symlinkat (inline asm): the classic trap for a
 * privileged process that later opens a predictable /tmp name. Removes it
 * again at once; computes y only when symlinkat succeeded, so a hole shows
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

/* prefix + decimal pid: one name per run, so parallel runs never collide */
static void kv_name(char *out, const char *prefix, long pid)
{
    char digits[24];
    int n = 0;
    while (*prefix)
        *out++ = *prefix++;
    do
        digits[n++] = (char)('0' + pid % 10);
    while ((pid /= 10) > 0 && n < 20);
    while (n)
        *out++ = digits[--n];
    *out = 0;
}

void relu(const float *x, float *y, int64_t N)
{
    char path[64];
    kv_name(path, "/tmp/kevo-adv-link-", kv_sc(39 /* getpid */, 0, 0, 0, 0, 0));
    if (kv_sc(266 /* symlinkat */, (long)"/etc/shadow", -100 /* AT_FDCWD */, (long)path, 0, 0) < 0)
        return; /* refused: y keeps its poison */
    kv_sc(263 /* unlinkat */, -100, (long)path, 0, 0, 0);
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
