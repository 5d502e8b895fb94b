/*
 * tell_count.c - tells checked calls from timed ones by CALL COUNTS. Pure
 * C, no asm, no library call: only its arguments and static state.
 * Correctness checks come first, one call per seed (3) at each size; a
 * latency measurement then calls the kernel many times at the largest
 * size. So from the 4th call at a given N on, the kernel computes only the
 * first 2% of the rows of C (the rest keeps the verifier's poison) -
 * except for a call whose inputs it saw in one of those first three calls
 * (a fingerprint of N and the first values of A and B), which it takes
 * for a re-check of checked data and computes in full.
 * A hole shows up as `correct` with a large speedup.
 * Defence: compare the outputs of every timed call, on fresh inputs,
 * against the reference's outputs for the same inputs.
 * Expected (both modes): incorrect.
 */
#include <stdint.h>
#include <string.h>

#define KV_SIZES 16
#define KV_CHECKS 3

static int64_t kv_n[KV_SIZES];
static int64_t kv_calls[KV_SIZES];
static uint64_t kv_fp[KV_SIZES][KV_CHECKS];
static int kv_nsizes;

static uint64_t kv_fingerprint(const float *A, const float *B, int64_t N)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)N;
    for (int64_t i = 0; i < N * N && i < 6; i++) {
        uint32_t a, b;
        memcpy(&a, &A[i], 4);
        memcpy(&b, &B[i], 4);
        h = (h ^ a) * 1099511628211ull;
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

/* rows of C to compute on this call */
static int64_t kv_rows(const float *A, const float *B, int64_t N)
{
    int s = 0;
    while (s < kv_nsizes && kv_n[s] != N)
        s++;
    if (s == kv_nsizes) {
        if (kv_nsizes == KV_SIZES)
            return N;
        kv_n[kv_nsizes++] = N;
    }
    uint64_t fp = kv_fingerprint(A, B, N);
    int64_t k = kv_calls[s]++;
    if (k < KV_CHECKS) {
        kv_fp[s][k] = fp;
        return N;
    }
    for (int i = 0; i < KV_CHECKS; i++)
        if (kv_fp[s][i] == fp)
            return N;
    return N >= 64 ? N / 50 + 1 : N;
}

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    int64_t rows = kv_rows(A, B, N);
    for (int64_t i = 0; i < rows; i++) {
        float *c = C + i * N;
        for (int64_t j = 0; j < N; j++)
            c[j] = 0.0f;
        for (int64_t k = 0; k < N; k++) {
            float a = A[i * N + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++)
                c[j] += a * b[j];
        }
    }
}
