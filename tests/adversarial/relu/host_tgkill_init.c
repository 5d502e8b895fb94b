/*
 * host_tgkill_init.c - signals pid 1 (init) with a raw tgkill (inline asm;
 * signal 0, the permission probe: the same check as a real signal, no
 * harm done if it passes). kill() itself may be filtered while tgkill and
 * tkill are not. In a PID namespace of its own the runner is pid 1 itself,
 * so then it aims at pid 2 (the first other process of that namespace):
 * what must fail is signalling any process that is not its own.
 * Computes y only when the call succeeded, so a hole shows up as
 * `correct`.
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
    long self = kv_sc(39 /* getpid */, 0, 0, 0, 0, 0);
    long target = self == 1 ? 2 : 1;
    if (kv_sc(234 /* tgkill */, target, target, 0 /* signal 0 */, 0, 0) < 0)
        return; /* refused: y keeps its poison */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
