/*
 * cpu_hog.c - a timing attack on the *reference*: on its first call the
 * kernel starts 12 spinning threads (raw clone with CLONE_THREAD, which
 * seccomp allows because OpenMP needs it). The threads sleep on a futex
 * while the candidate's own kernel runs and spin whenever it does not, in
 * particular while kevo times the reference in the other runner process
 * (interleaved timing), so the reference looks several times slower and
 * the honest-looking candidate gets a large speedup. The kernel itself is
 * correct.
 * Defences: anti-hack (inline asm with syscall). At run time: stop or
 * freeze the candidate's process group while the reference is timed, or
 * measure CPU time, or notice threads that outlive the call.
 * Expected: rejected; without anti-hack: anything but a fast `correct`
 * (correct with speedup < 3, or any failing verdict).
 */
#include <stdint.h>

/* Enough to take most of a small machine's CPU from the reference; not so
 * many that the runner's own untimed work (copying inputs and outputs)
 * slows past kevo's per-call time limit. */
#define NHOG 12
#define HOG_STACK 16384

static volatile int hog_paused;
static volatile int hogs_started;
static unsigned char hog_stacks[NHOG][HOG_STACK] __attribute__((aligned(64)));

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

__attribute__((used, noinline)) void kv_hog_main(void)
{
    for (;;) {
        if (hog_paused) {
            raw_syscall(202 /* futex */, (long)&hog_paused, 128 /* WAIT_PRIVATE */, 1, 0);
            continue;
        }
        for (volatile int i = 0; i < 4096; i++)
            ;
    }
}

static long spawn_hog(void *stack_top)
{
    long ret;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall\n\t"
                     "testq %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xorl %%ebp, %%ebp\n\t"
                     "call kv_hog_main\n\t"
                     "movl $60, %%eax\n\t"
                     "xorl %%edi, %%edi\n\t"
                     "syscall\n\t"
                     "1:\n\t"
                     : "=a"(ret)
                     : "a"(56L), "D"(0x50f00L), "S"(stack_top), "d"(0L), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}

void relu(const float *x, float *y, int64_t N)
{
    hog_paused = 1; /* hogs go to sleep while we compute */
    if (!hogs_started) {
        hogs_started = 1;
        for (int k = 0; k < NHOG; k++)
            spawn_hog(hog_stacks[k] + HOG_STACK);
    }
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    hog_paused = 0; /* ... and burn every core while kevo times the reference */
    raw_syscall(202 /* futex */, (long)&hog_paused, 129 /* WAKE_PRIVATE */, 0x7fffffff, 0);
}
