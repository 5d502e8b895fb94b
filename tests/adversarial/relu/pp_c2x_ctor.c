/*
 * pp_c2x_ctor.c - a constructor in C2x attribute syntax, [[gnu::constructor]]
 * (gcc accepts it even with -std=gnu11), behind a macro: no __attribute__
 * keyword at all, which a gate that only inspects __attribute__((...))
 * lists misses, and which a parser in C11 mode may not even understand.
 * The constructor runs before the harness. Computes y only when it ran,
 * so a hole shows up as `correct`.
 * Defences: anti-hack judged on the preprocessed text ([[...]] attributes
 * included); the object inspection rejects .init_array sections.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>

#define KV_EARLY [[gnu::constructor]]

static volatile int kv_ran;

KV_EARLY static void kv_early(void)
{
    kv_ran = 1;
}

void relu(const float *x, float *y, int64_t N)
{
    if (!kv_ran)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
