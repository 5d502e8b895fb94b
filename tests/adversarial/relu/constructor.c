/*
 * constructor.c - an __attribute__((constructor)) (and a destructor) that
 * run before/after the harness: code outside the timed region, before the
 * runner installs its own seccomp filter. The kernel computes the right
 * answer only when the constructor ran, so a hole shows up as `correct`.
 * Defences: anti-hack (constructor attribute); the object inspection
 * rejects .init_array/.fini_array sections even without the anti-hack gate.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>

static volatile int ran;

__attribute__((constructor)) static void before_main(void)
{
    ran = 1;
}

__attribute__((destructor)) static void after_main(void)
{
    ran = 2;
}

void relu(const float *x, float *y, int64_t N)
{
    if (!ran)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
