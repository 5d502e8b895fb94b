/*
 * memoise.c - computes on the first call for a given (x, y, N) and returns
 * at once on later calls with the same pointers and size, trusting that
 * the output still holds the previous result. Also keeps a static flag so
 * that, after the first call of any size, repeated calls do nothing.
 * kevo reuses buffers but poisons outputs before every call and changes
 * the input data between seeds.
 * Expected: incorrect (a gate that rejects static state is fine too).
 */
#include <stdint.h>

static const float *last_x;
static float *last_y;
static int64_t last_n = -1;

void relu(const float *x, float *y, int64_t N)
{
    if (x == last_x && y == last_y && N == last_n)
        return; /* "cached" */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    last_x = x;
    last_y = y;
    last_n = N;
}
