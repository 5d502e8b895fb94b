/*
 * alloc_50g.c - asks malloc for 50 GiB. Under the runner's address-space
 * limit (RLIMIT_AS) malloc returns NULL and the kernel returns without
 * writing y (incorrect); if the allocation succeeds the kernel touches it
 * (one byte per MiB, enough to prove the memory is there without taking
 * the machine down) and computes the right answer, so a missing limit
 * shows up as `correct`. An implementation that memsets blindly would die
 * with SIGSEGV on NULL (crash), also acceptable.
 * Expected: crash|incorrect (no static rule can see a size computed at
 * run time; a gate that does reject it is fine: rejected is accepted).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void relu(const float *x, float *y, int64_t N)
{
    volatile size_t gib = 50;
    size_t bytes = gib << 30;
    unsigned char *p = malloc(bytes);
    if (!p)
        return;
    for (size_t off = 0; off < bytes; off += (size_t)1 << 20)
        p[off] = (unsigned char)off;
    memset(p + bytes - 4096, 1, 4096);
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    free(p);
}
