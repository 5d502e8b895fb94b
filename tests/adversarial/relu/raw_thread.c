/*
 * raw_thread.c - the background-thread cheat without any library symbol:
 * on the first call it starts a worker thread with a raw clone(CLONE_VM |
 * CLONE_THREAD ...) (inline asm; seccomp allows it, OpenMP needs it); every
 * call then posts (x, y, N) to the worker and returns at once, so the
 * timed call costs nothing and y is filled "later".
 * Defences: anti-hack (inline asm with syscall); at run time the runner
 * copies the outputs the instant the kernel returns, so the worker loses
 * the race -> poison left in y.
 * Expected: rejected; without anti-hack: incorrect (crash accepted).
 */
#include <stdint.h>

static const float *volatile job_x;
static float *volatile job_y;
static volatile int64_t job_n;
static volatile uint64_t posted, done;
static volatile int started;
static unsigned char worker_stack[1 << 16] __attribute__((aligned(64)));

__attribute__((used, noinline)) void kv_worker_main(void)
{
    for (;;) {
        uint64_t p = posted;
        if (p == done) {
            __builtin_ia32_pause();
            continue;
        }
        const float *x = job_x;
        float *y = job_y;
        int64_t n = job_n;
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        done = p;
    }
}

static long spawn_thread(void *stack_top)
{
    long ret;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    /* clone(CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM, stack_top); the child
     * runs kv_worker_main on its own stack and never returns here. */
    __asm__ volatile("syscall\n\t"
                     "testq %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xorl %%ebp, %%ebp\n\t"
                     "call kv_worker_main\n\t"
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
    if (!started) {
        started = 1;
        spawn_thread(worker_stack + sizeof(worker_stack));
    }
    job_x = x;
    job_y = y;
    job_n = N;
    posted = posted + 1;
    /* return at once: the worker finishes "in the background" */
}
