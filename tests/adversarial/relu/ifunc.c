/*
 * ifunc.c - code that runs before main() without a constructor: the
 * resolver of a GNU indirect function runs while the dynamic loader
 * relocates the runner, before the runner installs its own seccomp filter
 * (no open, no exec). The resolver opens /etc/passwd with a raw openat
 * and remembers whether it could read "root:"; the kernel computes the
 * right answer only in that case, so the hole shows up as `correct`.
 * Defences: anti-hack (inline asm, the ifunc attribute); the object
 * inspection could reject STT_GNU_IFUNC symbols; at run time only a
 * filter in force before exec (or a runner without dynamic relocation)
 * stops the open.
 * Expected: rejected; without anti-hack: rejected|incorrect.
 */
#include <stdint.h>

static volatile int read_passwd;

static long raw_syscall(long n, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}

static void probe_impl(void)
{
}

/* Runs during relocation: no libc calls, raw system calls only. */
static void (*resolve_probe(void))(void)
{
    static const char path[] = "/etc/passwd";
    char buf[8] = {0};
    long fd = raw_syscall(257 /* openat */, -100, (long)path, 0);
    if (fd >= 0) {
        if (raw_syscall(0 /* read */, fd, (long)buf, 5) == 5 && buf[0] == 'r' && buf[1] == 'o' &&
            buf[2] == 'o' && buf[3] == 't' && buf[4] == ':')
            read_passwd = 1;
        raw_syscall(3 /* close */, fd, 0, 0);
    }
    return probe_impl;
}

void kv_probe(void) __attribute__((ifunc("resolve_probe")));

void relu(const float *x, float *y, int64_t N)
{
    kv_probe();
    if (!read_passwd)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
