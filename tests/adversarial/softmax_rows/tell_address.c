/*
 * tell_address.c - tells checked calls from timed ones by the input and
 * output ADDRESSES. Pure C, no asm, no library call beyond expf: only its
 * arguments and static state. A verifier that checks a few calls per data
 * set and then benchmarks tends to reuse the same buffers call after call;
 * so once the kernel has been called more than 3 times in a row with the
 * same x, y and sizes, it takes the calls for the benchmark and computes
 * only the first 2% of the rows (the rest keeps the verifier's poison).
 * A call whose inputs it computed honestly before (fingerprint of the sizes
 * and the first values of x) is a re-check and gets the full work, so
 * re-checking the checked data after the timed loop does not catch it.
 * A hole shows up as `correct` with a large speedup.
 * Defence: compare the outputs of every timed call, on fresh inputs,
 * against the reference's outputs for the same inputs.
 * Expected (both modes): incorrect.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define KV_MAX 256

static const float *kv_last_x;
static const float *kv_last_y;
static int64_t kv_last_r = -1, kv_last_c = -1;
static int kv_streak;
static uint64_t kv_honest[KV_MAX];
static int kv_nhonest;

static uint64_t kv_fingerprint(const float *x, int64_t R, int64_t C)
{
    uint64_t h = (1469598103934665603ull ^ (uint64_t)R) * 1099511628211ull ^ (uint64_t)C;
    for (int64_t i = 0; i < R * C && i < 8; i++) {
        uint32_t b;
        memcpy(&b, &x[i], 4);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

static void kv_row(const float *x, float *y, int64_t C)
{
    float m = x[0];
    for (int64_t c = 1; c < C; c++)
        m = x[c] > m ? x[c] : m;
    double s = 0.0;
    for (int64_t c = 0; c < C; c++) {
        y[c] = expf(x[c] - m);
        s += y[c];
    }
    float inv = (float)(1.0 / s);
    for (int64_t c = 0; c < C; c++)
        y[c] *= inv;
}

void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    if (x == kv_last_x && y == kv_last_y && R == kv_last_r && C == kv_last_c) {
        kv_streak++;
    } else {
        kv_streak = 0;
        kv_last_x = x;
        kv_last_y = y;
        kv_last_r = R;
        kv_last_c = C;
    }
    uint64_t fp = kv_fingerprint(x, R, C);
    int known = 0;
    for (int i = 0; i < kv_nhonest && !known; i++)
        known = kv_honest[i] == fp;
    int64_t rows = R;
    if (kv_streak >= 3 && !known && R * C >= 65536)
        rows = R / 50 + 1; /* the same buffers again and again: the benchmark */
    else if (!known && kv_nhonest < KV_MAX)
        kv_honest[kv_nhonest++] = fp;
    for (int64_t r = 0; r < rows; r++)
        kv_row(x + r * C, y + r * C, C);
}
