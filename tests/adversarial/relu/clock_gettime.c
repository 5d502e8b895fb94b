/*
 * clock_gettime.c - defines its own clock_gettime (and clock, gettimeofday)
 * that always return the same instant, so that a harness linked against
 * it would measure 0 ns and report an enormous speedup. The kernel itself
 * is correct.
 * Defences: anti-hack (definitions of libc/timer functions); the C backend
 * makes every global symbol but the kernel local (objcopy), so the
 * harness keeps libc's clock_gettime.
 * Expected: rejected; without anti-hack: correct with speedup < 3
 * (!correct-fast: the fake timer had no effect).
 */
#include <stdint.h>

/* No <time.h>: the gate must notice the definitions, not just an include. */
struct kv_timespec {
    long tv_sec;
    long tv_nsec;
};

int clock_gettime(int id, struct kv_timespec *ts)
{
    (void)id;
    ts->tv_sec = 1000;
    ts->tv_nsec = 0;
    return 0;
}

int gettimeofday(void *tv, void *tz)
{
    (void)tz;
    long *p = tv;
    p[0] = 1000;
    p[1] = 0;
    return 0;
}

long clock(void)
{
    return 0;
}

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
