/*
 * harness/peaks.c - measures this machine's peaks for the roofline: a
 * bandwidth curve (all cores, working sets from 32 KiB to 1 GiB, two
 * points per doubling; at each size the best of three ways to stream
 * float arrays: a = b * s + c, the same with non-temporal stores (x86),
 * and a read-only sum of b and c, each repeated until a trial takes 10 ms,
 * the best of 3 to 12 trials, about 100 ms of work per way and size; a
 * point is the best of its size and every larger one) and the fp32 FMA
 * throughput (independent vector FMA chains in registers, all cores,
 * 256-bit and, where the compiler targets it, 512-bit vectors: the faster
 * counts, best of 8 trials of about 25 ms). Built by `kevo calibrate` with the
 * candidates' flags (-O3 -march=native -fopenmp) and run once; prints one
 * JSON object in the cache's format (kevo/roofline.h, version 2). kevo's
 * own trusted code; it reads no input and writes only stdout.
 */
#include <math.h>
#include <stdint.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#define MIN_WS (32.0 * 1024)
#define MAX_WS (1024.0 * 1024 * 1024)
#define TRIAL_S 0.01
#define MIN_TRIALS 3
#define MAX_TRIALS 12
#define SIZE_S 0.1

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* `reps` passes of a = b * s + c over [0, n), each thread on its own
 * slice (the slice it first touched), no barrier between passes: what the
 * memory level can stream, not what a fork-join costs. The empty asm makes
 * the compiler store and reload every pass. */
static double triad(float *a, const float *b, const float *c, size_t n, long reps)
{
    double t0 = now();
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        float *restrict pa = a;
        const float *restrict pb = b, *restrict pc = c;
        for (long r = 0; r < reps; r++) {
            for (size_t i = lo; i < hi; i++)
                pa[i] = pb[i] * 0.5f + pc[i];
            __asm__ volatile("" : : "r"(pa) : "memory");
        }
    }
    return now() - t0;
}

/* The same passes with non-temporal stores (a written around the
 * caches, no write-allocate read of it): what a kernel with streaming
 * stores reaches, above the plain triad on most x86 machines once the
 * arrays leave the caches. 0 where there are no such stores (not x86). */
static double triad_nt(float *a, const float *b, const float *c, size_t n, long reps)
{
#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
#if defined(__AVX512F__)
#define NT_W 16
#define NT_STEP(p, x, y) _mm512_stream_ps(p, _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x), _mm512_set1_ps(0.5f)), _mm512_loadu_ps(y)))
#elif defined(__AVX__)
#define NT_W 8
#define NT_STEP(p, x, y) _mm256_stream_ps(p, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x), _mm256_set1_ps(0.5f)), _mm256_loadu_ps(y)))
#else
#define NT_W 4
#define NT_STEP(p, x, y) _mm_stream_ps(p, _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(x), _mm_set1_ps(0.5f)), _mm_loadu_ps(y)))
#endif
    double t0 = now();
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        for (long r = 0; r < reps; r++) {
            size_t i = lo;
            for (; i < hi && ((uintptr_t)(a + i) & (NT_W * 4 - 1)); i++)
                a[i] = b[i] * 0.5f + c[i];
            for (; i + NT_W <= hi; i += NT_W)
                NT_STEP(a + i, b + i, c + i);
            for (; i < hi; i++)
                a[i] = b[i] * 0.5f + c[i];
            _mm_sfence();
            __asm__ volatile("" : : "r"(a) : "memory");
        }
    }
    return now() - t0;
#undef NT_W
#undef NT_STEP
#else
    (void)a, (void)b, (void)c, (void)n, (void)reps;
    return 0;
#endif
}

#if defined(__AVX512F__)
typedef float vr __attribute__((vector_size(64), aligned(4), may_alias));
#else
typedef float vr __attribute__((vector_size(32), aligned(4), may_alias));
#endif
#define VR_W ((size_t)(sizeof(vr) / sizeof(float)))
static volatile float read_sink;

/* `reps` passes of a sum of b and c over [0, n) (a is not touched): what
 * the memory level delivers to a kernel that only reads (a reduction),
 * above the triad where writing back costs the level bandwidth. Four
 * vector accumulators, explicit vectors: no -ffast-math needed. */
static double read_only(float *a, const float *b, const float *c, size_t n, long reps)
{
    (void)a;
    double t0 = now();
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t lo = n * t / nt, hi = n * (t + 1) / nt;
        vr s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
        float tail = 0;
        for (long r = 0; r < reps; r++) {
            size_t i = lo;
            for (; i + 2 * VR_W <= hi; i += 2 * VR_W) {
                s0 += *(const vr *)(b + i);
                s1 += *(const vr *)(b + i + VR_W);
                s2 += *(const vr *)(c + i);
                s3 += *(const vr *)(c + i + VR_W);
            }
            for (; i < hi; i++)
                tail += b[i] + c[i];
            __asm__ volatile("" : : : "memory");
        }
        vr s = s0 + s1 + s2 + s3;
        for (size_t j = 0; j < VR_W; j++)
            tail += s[j];
        if (tail == 12345.f)
            read_sink = tail;
    }
    return now() - t0;
}

typedef double (*stream_fn)(float *a, const float *b, const float *c, size_t n, long reps);

/* The best GB/s of one way of streaming, trials of at least TRIAL_S each:
 * at least MIN_TRIALS, more while the size has had less than SIZE_S of
 * work (MAX_TRIALS at most). Short trials, best taken: on a machine shared
 * with other processes some trial runs undisturbed, as some of a kernel's
 * timed calls do, and the bound must not sit below what a kernel can
 * reach. `per` bytes counted per element (no write-allocate counted). */
static double bandwidth_of(stream_fn f, double per, float *a, const float *b, const float *c,
                           size_t n)
{
    double bytes = per * (double)n;
    long reps = 1;
    double t = f(a, b, c, n, reps), spent = t;
    if (t <= 0)
        return 0; /* not on this machine */
    while (t < TRIAL_S) {
        long next = (long)((double)reps * 1.2 * TRIAL_S / (t > 1e-7 ? t : 1e-7));
        reps = next > reps ? next : reps + 1;
        t = f(a, b, c, n, reps);
        spent += t;
    }
    double best = bytes * (double)reps / t;
    for (int k = 1; k < MAX_TRIALS && (k < MIN_TRIALS || spent < SIZE_S); k++) {
        t = f(a, b, c, n, reps);
        spent += t;
        if (bytes * (double)reps / t > best)
            best = bytes * (double)reps / t;
    }
    return best / 1e9;
}

/* A working set of `ws` bytes streamed the three ways, the best GB/s: the
 * bound is what kevo's own code reaches there, whichever way (a bound only
 * the triad reached read 1.1-1.4 for kernels that only read or stream
 * their stores: docs/performance.md). */
static double bandwidth(float *a, const float *b, const float *c, double ws)
{
    size_t n3 = (size_t)(ws / 12.0), n2 = (size_t)(ws / 8.0);
    double best = bandwidth_of(triad, 12.0, a, b, c, n3);
    double nt = bandwidth_of(triad_nt, 12.0, a, b, c, n3);
    double ro = bandwidth_of(read_only, 8.0, a, b, c, n2);
    best = nt > best ? nt : best;
    return ro > best ? ro : best;
}

typedef float v8 __attribute__((vector_size(32)));
#ifdef __AVX512F__
typedef float v16 __attribute__((vector_size(64)));
#endif

/* 10 independent chains hide the FMA latency without spilling on
 * 16-register machines. Returns GFLOP/s over all threads, best of 8. */
#define FMA_BODY(V, W)                                                                         \
    double best = 0;                                                                           \
    for (int rep = 0; rep < 8; rep++) {                                                        \
        long iters = 10000000 / (W / 8);                                                       \
        double t0 = now();                                                                     \
        float sink = 0;                                                                        \
        _Pragma("omp parallel reduction(+ : sink)")                                            \
        {                                                                                      \
            V m, k;                                                                            \
            for (int j = 0; j < W; j++)                                                        \
                m[j] = 0.999999f, k[j] = 1e-7f * (omp_get_thread_num() + 1);                   \
            /* distinct starts: ten chains from one start are one chain to     \
             * GCC 12 (one FMA per iteration, then x0 + ... + x9 as 10 adds:   \
             * on a Zen 4 a "peak" of 576 GFLOP/s, 2.5x the 226 it has) */     \
            V x0 = k * 1, x1 = k * 2, x2 = k * 3, x3 = k * 4, x4 = k * 5, x5 = k * 6;          \
            V x6 = k * 7, x7 = k * 8, x8 = k * 9, x9 = k * 10;                                 \
            for (long i = 0; i < iters; i++) {                                                 \
                x0 = x0 * m + k; x1 = x1 * m + k; x2 = x2 * m + k; x3 = x3 * m + k;            \
                x4 = x4 * m + k; x5 = x5 * m + k; x6 = x6 * m + k; x7 = x7 * m + k;            \
                x8 = x8 * m + k; x9 = x9 * m + k;                                              \
            }                                                                                  \
            V s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9;                             \
            for (int j = 0; j < W; j++)                                                        \
                sink += s[j];                                                                  \
        }                                                                                      \
        double t = now() - t0;                                                                 \
        double fl = 2.0 * 10 * W * (double)iters * omp_get_max_threads() / t / 1e9;           \
        if (fl > best)                                                                         \
            best = fl;                                                                         \
        if (sink == 12345.f)                                                                   \
            printf(" ");                                                                       \
    }                                                                                          \
    return best;

static double fma8(void) { FMA_BODY(v8, 8) }
#ifdef __AVX512F__
static double fma16(void) { FMA_BODY(v16, 16) }
#endif

int main(void)
{
    size_t nmax = (size_t)(MAX_WS / 8.0); /* the read-only way's two arrays */
    size_t len = (nmax * 4 + 63) / 64 * 64;
    float *a = aligned_alloc(64, len), *b = aligned_alloc(64, len), *c = aligned_alloc(64, len);
    if (!a || !b || !c)
        return 1;
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        for (size_t i = nmax * t / nt; i < nmax * (t + 1) / nt; i++)
            a[i] = 0, b[i] = 1, c[i] = 2;
    }
    size_t ns[64];
    double gbs[64];
    int np = 0;
    for (double ws = MIN_WS; ws <= MAX_WS * 1.0001 && np < 64; ws *= sqrt(2.0)) {
        ns[np] = (size_t)(ws / 12.0);
        gbs[np] = bandwidth(a, b, c, 12.0 * (double)ns[np]);
        np++;
    }
    /* A smaller working set streams at least as fast as a larger one; a
     * point well below its larger neighbour was disturbed (another process
     * on a shared machine): measured again, twice at most, the best kept. */
    for (int i = np - 2; i >= 0; i--)
        for (int k = 0; k < 2 && gbs[i] < 0.9 * gbs[i + 1]; k++) {
            double again = bandwidth(a, b, c, 12.0 * (double)ns[i]);
            if (again > gbs[i])
                gbs[i] = again;
        }
    /* and what a larger set reached, a smaller one reaches too: each point
     * is the best of its size and every larger one (a dip that stayed is
     * noise, and a bound below what kernels reach would read above 100%) */
    for (int i = np - 2; i >= 0; i--)
        if (gbs[i] < gbs[i + 1])
            gbs[i] = gbs[i + 1];
    printf("{\"version\": 2, \"bandwidth\": [");
    for (int i = 0; i < np; i++)
        printf("%s{\"bytes\": %.0f, \"gbs\": %.2f}", i ? ", " : "", 12.0 * (double)ns[i], gbs[i]);
    double last = gbs[np - 1];
    double fl = fma8();
#ifdef __AVX512F__
    double f16 = fma16();
    if (f16 > fl)
        fl = f16;
#endif
    printf("], \"mem_gbs\": %.2f, \"fp32_gflops\": %.2f, \"threads\": %d, \"a0\": %g}\n", last, fl,
           omp_get_max_threads(), (double)a[0]);
    free(a);
    free(b);
    free(c);
    return 0;
}
