/*
 * pp_paste_asm.c - inline asm without an asm keyword in the source: the
 * keyword is pasted together by the preprocessor (__as ## m__), and the
 * instruction is split over two adjacent string literals ("sys" "call"),
 * so neither a keyword scan nor a search of string literals for "syscall"
 * sees it. The system call is clone(SIGCHLD), i.e. fork; the child exits
 * at once. Computes y only when the process was created, so a hole shows
 * up as `correct`.
 * Defences: anti-hack judged on the preprocessed text (any asm refused);
 * at run time seccomp kills clone without CLONE_THREAD.
 * Expected: rejected; without anti-hack: crash (SIGSYS).
 */
#include <stdint.h>

#define KV_CAT(a, b) a##b
#define KV_ASM KV_CAT(__as, m__)
#define KV_VOL KV_CAT(vola, tile)

static long kv_clone_sigchld(void)
{
    long ret;
    KV_ASM KV_VOL("sys"
                  "call"
                  : "=a"(ret)
                  : "a"(56L /* clone */), "D"(17L /* SIGCHLD */), "S"(0L), "d"(0L)
                  : "rcx", "r11", "memory");
    return ret;
}

static void kv_exit_group(void)
{
    KV_ASM KV_VOL("sys"
                  "call" : : "a"(231L), "D"(0L) : "rcx", "r11", "memory");
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
