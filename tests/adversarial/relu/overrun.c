/*
 * overrun.c - computes y correctly, then writes y[N] .. y[N+15] (64 bytes
 * past the end). The runner puts every output right before a PROT_NONE
 * guard page with a canary in the alignment slack.
 * Expected: crash (a report of the canary as incorrect is also accepted).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    for (int64_t i = N; i < N + 16; i++)
        y[i] = 0.0f;
}
