// kevo: cflags -O3 -fplugin=/tmp/kv_plugin.so -Wl,--wrap=clock_gettime
/*
 * bad_cflags.c - a build hint with flags outside the allow-list: a gcc
 * plugin (arbitrary code in the compiler) and a linker option that would
 * wrap the harness's timer. The kernel is correct.
 * Expected: rejected (the hint allow-list is checked by the backend, so
 * also without the anti-hack gate).
 */
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
