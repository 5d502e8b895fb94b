/*
 * defines_main.c - a correct kernel plus its own main(). Were the
 * candidate's main linked instead of the harness's, it would own the
 * process (it could fake the whole protocol, timings included); this one
 * just exits 0 at once.
 * Defences: anti-hack (defining main); the C backend localises every
 * symbol but the kernel, so the harness's main stays in charge.
 * Expected: rejected; without anti-hack: correct with speedup < 3.
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

int main(void)
{
    return 0;
}
