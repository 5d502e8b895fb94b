/*
 * interpose_memcpy.c - does no work in the kernel (which is timed) and
 * defines memcpy so that, were the harness linked against it, the copy
 * the harness makes of y right after the call would compute ReLU on the
 * fly: all the work moved outside the timed region, outputs correct,
 * infinite speedup.
 * Defences: anti-hack (definitions of libc functions); the C backend
 * localises every candidate symbol but the kernel, so the harness keeps
 * libc's memcpy and y stays poisoned.
 * Expected: rejected; without anti-hack: incorrect.
 */
#include <stddef.h>
#include <stdint.h>

static const float *saved_x;
static const float *saved_y;
static int64_t saved_n;

void relu(const float *x, float *y, int64_t N)
{
    saved_x = x;
    saved_y = y;
    saved_n = N;
}

void *memcpy(void *dst, const void *src, size_t n)
{
    if (src == (const void *)saved_y && n == (size_t)saved_n * sizeof(float)) {
        float *d = dst;
        for (int64_t i = 0; i < saved_n; i++)
            d[i] = saved_x[i] > 0.0f ? saved_x[i] : 0.0f;
        return dst;
    }
    volatile unsigned char *d = dst; /* volatile: gcc must not turn this into memcpy */
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}
