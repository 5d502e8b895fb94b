/*
 * tell_values.c - tells checked calls from timed ones by the input VALUES
 * and the size. Pure C: no asm, no library call, nothing a static gate or
 * seccomp can see; it only reads its own arguments and keeps static state.
 * It fingerprints every call (N and the first 8 input values). The first 3
 * distinct inputs of each size are taken for the correctness checks (one
 * per seed) and computed honestly, and so is any later call whose inputs
 * it has seen before (a re-check of the same data) and every small size
 * (never timed). Any other call at a large size must be a timed call on
 * new (rotated) inputs: it computes the first 2% of y and returns, leaving
 * the rest as the verifier's poison.
 * Works against a verifier that compares only the outputs of checked
 * calls and re-checks with the inputs it checked before; a hole shows up
 * as `correct` with a speedup around 50x.
 * Defence: compare the outputs of every timed call, on fresh inputs,
 * against the reference's outputs for the same inputs.
 * Expected (both modes): incorrect.
 */
#include <stdint.h>
#include <string.h>

#define KV_LEARN 3   /* distinct inputs per size taken as the checks */
#define KV_MAX 256
#define KV_SMALL 65536

static uint64_t kv_seen[KV_MAX];
static int64_t kv_seen_n[KV_MAX];
static int kv_nseen;

static uint64_t kv_fingerprint(const float *x, int64_t N)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)N;
    for (int64_t i = 0; i < N && i < 8; i++) {
        uint32_t b;
        memcpy(&b, &x[i], 4);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

/* 1: compute everything, 0: the benchmark, do as little as possible */
static int kv_checked(const float *x, int64_t N)
{
    if (N < KV_SMALL)
        return 1;
    uint64_t fp = kv_fingerprint(x, N);
    int same_size = 0;
    for (int i = 0; i < kv_nseen; i++) {
        if (kv_seen[i] == fp && kv_seen_n[i] == N)
            return 1;
        same_size += kv_seen_n[i] == N;
    }
    if (same_size < KV_LEARN && kv_nseen < KV_MAX) {
        kv_seen[kv_nseen] = fp;
        kv_seen_n[kv_nseen++] = N;
        return 1;
    }
    return 0;
}

void relu(const float *x, float *y, int64_t N)
{
    int64_t n = kv_checked(x, N) ? N : N / 50;
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
