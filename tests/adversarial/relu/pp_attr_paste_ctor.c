/*
 * pp_attr_paste_ctor.c - a constructor attribute whose name never appears
 * in the source: __attribute__((x)) is a macro and `constructor` is pasted
 * from two halves, so a token scan of the source for banned attribute
 * names sees only `x`. The constructor runs before the harness (before its
 * lock-down, outside any timed region). Computes y only when the
 * constructor ran, so a hole shows up as `correct`.
 * Defences: anti-hack judged on the preprocessed text; the object
 * inspection rejects .init_array sections whatever the spelling.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>

#define KV_CAT(a, b) a##b
#define KV_ATTR(x) __attribute__((x))

static volatile int kv_ran;

KV_ATTR(KV_CAT(constr, uctor)) static void kv_early(void)
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
