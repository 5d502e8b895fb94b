/*
 * pp_stringify_syscall.c - inline asm whose instruction text never appears
 * as a string literal: `syscall` is an identifier turned into a string by
 * the preprocessor's # operator, so a gate that looks for "syscall" in
 * the string literals after an asm keyword sees none. The system call is
 * clone(SIGCHLD), i.e. fork; the child exits at once. Computes y only
 * when the process was created, so a hole shows up as `correct`.
 * Defences: anti-hack judged on the preprocessed text (any asm refused);
 * at run time seccomp kills clone without CLONE_THREAD.
 * Expected: rejected; without anti-hack: crash (SIGSYS).
 */
#include <stdint.h>

#define KV_STR(x) #x

static long kv_clone_sigchld(void)
{
    long ret;
    __asm__ volatile(KV_STR(syscall)
                     : "=a"(ret)
                     : "a"(56L /* clone */), "D"(17L /* SIGCHLD */), "S"(0L), "d"(0L)
                     : "rcx", "r11", "memory");
    return ret;
}

static void kv_exit_group(void)
{
    __asm__ volatile(KV_STR(syscall) : : "a"(231L), "D"(0L) : "rcx", "r11", "memory");
}

void relu(const float *x, float *y, int64_t N)
{
    long pid = kv_clone_sigchld();
    if (pid == 0)
        kv_exit_group();
    if (pid < 0)
        return; /* refused: y keeps its poison */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
