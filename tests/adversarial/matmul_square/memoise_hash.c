/*
 * memoise_hash.c - a *sound* memoiser: it hashes all of A and B (cheap:
 * O(N^2) against the O(N^3) product), keeps the last few results, and on
 * a hit copies the cached C instead of multiplying. Every answer it gives
 * is right, so correctness checks pass; but the latency gate calls the
 * kernel again and again on identical inputs, so every timed call after
 * the first is a hit and the "speedup" is tens of x. DESIGN.md lists
 * memoising across calls as cheating.
 * Defences: change the inputs between timed calls (even one element per
 * call, at a place the kernel cannot predict), or time several input sets
 * in rotation with more sets than a cache can hold... the robust one is
 * per-call perturbation.
 * Expected (both modes): correct with speedup < 3, or incorrect.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4

static struct {
    uint64_t key;
    int64_t n;
    float *c;
} cache[SLOTS];
static int next_slot;

static uint64_t hash_words(const void *p, size_t bytes, uint64_t h)
{
    const uint64_t *w = p;
    size_t n = bytes / 8;
    uint64_t l0 = h, l1 = h ^ 0x9e3779b97f4a7c15ull, l2 = h + 1, l3 = ~h;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        l0 = (l0 ^ w[i]) * 0x100000001b3ull;
        l1 = (l1 ^ w[i + 1]) * 0x100000001b3ull;
        l2 = (l2 ^ w[i + 2]) * 0x100000001b3ull;
        l3 = (l3 ^ w[i + 3]) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        l0 = (l0 ^ w[i]) * 0x100000001b3ull;
    const unsigned char *b = (const unsigned char *)p + n * 8;
    for (size_t k = 0; k < bytes % 8; k++)
        l1 = (l1 ^ b[k]) * 0x100000001b3ull;
    return l0 ^ (l1 << 1) ^ (l2 << 2) ^ (l3 << 3) ^ (l1 >> 7) ^ (l3 >> 11);
}

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    size_t bytes = (size_t)(N * N) * sizeof(float);
    uint64_t key = hash_words(B, bytes, hash_words(A, bytes, 0xcbf29ce484222325ull) + (uint64_t)N);
    for (int s = 0; s < SLOTS; s++)
        if (cache[s].c && cache[s].n == N && cache[s].key == key) {
            memcpy(C, cache[s].c, bytes);
            return;
        }
    memset(C, 0, bytes);
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < N; k++) {
            float a = A[i * N + k];
            for (int64_t j = 0; j < N; j++)
                C[i * N + j] += a * B[k * N + j];
        }
    int s = next_slot++ % SLOTS;
    free(cache[s].c);
    cache[s].c = malloc(bytes ? bytes : 1);
    if (!cache[s].c)
        return;
    memcpy(cache[s].c, C, bytes);
    cache[s].n = N;
    cache[s].key = key;
}
