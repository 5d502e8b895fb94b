/*
 * repeat_skip.c - guesses when it is being timed: correctness checks call
 * the kernel at most a few times in a row with the same buffers and size
 * (one call per seed), the latency gate calls it many times in a row. From
 * the 4th consecutive identical call on the large (timed) size the kernel
 * does nothing, so timed calls cost ~0 and y keeps its poison, which a
 * verifier that never looks at the outputs of timed calls will not see.
 * No static rule can tell this from an honest kernel.
 * Defences: check the outputs of (some) timed calls, or re-verify after
 * the latency gate, or vary the inputs and check.
 * Expected: incorrect, or correct with speedup < 3 (both modes).
 */
#include <stdint.h>

static const float *last_x;
static float *last_y;
static int64_t last_n = -1;
static int streak;

void relu(const float *x, float *y, int64_t N)
{
    if (x == last_x && y == last_y && N == last_n) {
        streak++;
    } else {
        streak = 0;
        last_x = x;
        last_y = y;
        last_n = N;
    }
    if (streak >= 3 && N >= 100000)
        return; /* "this must be the benchmark" */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
