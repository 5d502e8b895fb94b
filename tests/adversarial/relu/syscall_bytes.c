/*
 * syscall_bytes.c - a raw fork whose syscall instruction is spelled as
 * bytes (.byte 0x0f, 0x05) inside the asm, so a check that looks for the
 * word "syscall" in asm strings misses it. The child dies at once; the
 * parent computes the right answer only when the fork worked.
 * Defences: anti-hack (inline asm at all, or byte directives); at run time
 * seccomp kills fork (crash, SIGSYS).
 * Expected: rejected; without anti-hack: crash.
 */
#include <stdint.h>

static long sneaky(long n)
{
    long ret;
    __asm__ volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(n) : "rcx", "r11", "memory");
    return ret;
}

void relu(const float *x, float *y, int64_t N)
{
    long pid = sneaky(57 /* fork */);
    if (pid == 0)
        *(volatile int *)0 = 0; /* the child dies at once */
    if (pid < 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
