/*
 * pp_openmp_hidden.c - hides inline asm from every view of the source but
 * the real compile, through a macro whose value differs between them:
 * _OPENMP is defined when parsing with -fopenmp (as a gate may do for every
 * candidate, to accept OpenMP code) but not when this candidate is built,
 * since it has no `// kevo: cflags -fopenmp` hint. So the asm sits in an
 * inactive region for the gate and in an active one for the build. The
 * system call is clone(SIGCHLD), i.e. fork; the child exits at once.
 * Computes y only when the process was created, so a hole shows up as
 * `correct`.
 * Defences: the gate preprocesses with exactly the build's flags and
 * forced includes (or judges the built object: no syscall instruction in
 * a C kernel); at run time seccomp kills clone without CLONE_THREAD.
 * Expected: rejected; without anti-hack: crash (SIGSYS).
 */
#include <stdint.h>

#ifndef _OPENMP
static long kv_clone_sigchld(void)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(56L /* clone */), "D"(17L /* SIGCHLD */), "S"(0L), "d"(0L)
                     : "rcx", "r11", "memory");
    return ret;
}

static void kv_exit_group(void)
{
    __asm__ volatile("syscall" : : "a"(231L), "D"(0L) : "rcx", "r11", "memory");
}
#else
static long kv_clone_sigchld(void)
{
    return -1;
}

static void kv_exit_group(void)
{
}
#endif

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
