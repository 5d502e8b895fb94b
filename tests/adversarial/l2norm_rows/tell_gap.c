/*
 * tell_gap.c - tells checked calls from timed ones by the TIME SINCE THE
 * LAST CALL, read with the CPU's time-stamp counter through a compiler
 * builtin (no asm text, no library call, no system call). A latency loop
 * calls the kernel in a burst, each call within moments of the previous
 * one's return; checks come with pauses for preparing and comparing data.
 * The first 3 calls at each size (the checks, one per seed) are computed
 * honestly, and so is any call whose inputs were seen on an honest call
 * (fingerprint: sizes and first values; a re-check of checked data). Any
 * other call that comes within ~2 s of the previous return is taken for
 * the benchmark: only the first 2% of the rows are normalised, the rest
 * keeps the verifier's poison.
 * A hole shows up as `correct` with a large speedup.
 * Defence: compare the outputs of every timed call, on fresh inputs,
 * against the reference's outputs for the same inputs.
 * Expected (both modes): incorrect (a gate that treats the time-stamp
 * counter as a forbidden timer may reject it instead: also safe).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define KV_MAX 256
#define KV_BURST_CYCLES 5000000000ull /* ~2 s at 2.5 GHz */

static uint64_t kv_last_return;
static uint64_t kv_honest[KV_MAX];
static int64_t kv_honest_size[KV_MAX];
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

static int64_t kv_rows(const float *x, int64_t R, int64_t C)
{
    uint64_t now = __builtin_ia32_rdtsc();
    uint64_t gap = kv_last_return ? now - kv_last_return : ~0ull;
    uint64_t fp = kv_fingerprint(x, R, C);
    int same_size = 0;
    for (int i = 0; i < kv_nhonest; i++) {
        if (kv_honest[i] == fp)
            return R;
        same_size += kv_honest_size[i] == R * C;
    }
    if (same_size < 3 || gap > KV_BURST_CYCLES || R * C < 65536) {
        if (kv_nhonest < KV_MAX) {
            kv_honest[kv_nhonest] = fp;
            kv_honest_size[kv_nhonest++] = R * C;
        }
        return R;
    }
    return R / 50 + 1; /* in a burst, on inputs never checked: the benchmark */
}

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    int64_t rows = kv_rows(x, R, C);
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * C;
        float *yr = y + r * C;
        double ss = 0.0;
        for (int64_t c = 0; c < C; c++)
            ss += (double)xr[c] * xr[c];
        float inv = (float)(1.0 / sqrt(ss));
        for (int64_t c = 0; c < C; c++)
            yr[c] = xr[c] * inv;
    }
    kv_last_return = __builtin_ia32_rdtsc();
}
