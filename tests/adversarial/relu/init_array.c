/*
 * init_array.c - a constructor without the constructor attribute: a
 * function pointer placed by hand in the .init_array section, so a check
 * for __attribute__((constructor)) misses it. The kernel computes the
 * right answer only when the early function ran.
 * Defences: anti-hack (section attributes); the object inspection rejects
 * .init_array sections whatever their origin.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>

static volatile int ran;

static void early(void)
{
    ran = 1;
}

__attribute__((used, section(".init_array"))) static void (*const kv_early)(void) = early;

void relu(const float *x, float *y, int64_t N)
{
    if (!ran)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
