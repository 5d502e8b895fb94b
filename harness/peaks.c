/*
 * harness/peaks.c - measures this machine's peaks for roofline diagnosis:
 * memory bandwidth (triad a = b + s*c over arrays far larger than the
 * caches, all cores) and fp32 FMA throughput (independent vector FMA chains
 * in registers, all cores). Built by `kevo calibrate` with the candidates'
 * flags (-O3 -march=native -fopenmp) and run once; prints one JSON object.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* 8 floats: one AVX register; 10 independent chains hide the FMA latency
 * without spilling on 16-register machines. */
typedef float v8 __attribute__((vector_size(32)));

int main(void)
{
    size_t n = 1u << 25; /* 3 arrays x 128 MiB */
    float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4);
    if (!a || !b || !c)
        return 1;
#pragma omp parallel for
    for (size_t i = 0; i < n; i++)
        a[i] = 0, b[i] = 1, c[i] = 2;
    double best_bw = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
#pragma omp parallel for
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] + 0.5f * c[i];
        double t = now() - t0;
        double bw = 3.0 * n * 4 / t / 1e9; /* read b, c; write a (no write-allocate counted) */
        if (bw > best_bw)
            best_bw = bw;
    }
    double best_fl = 0;
    for (int rep = 0; rep < 5; rep++) {
        long iters = 50000000;
        double t0 = now();
        float sink = 0;
#pragma omp parallel reduction(+ : sink)
        {
            v8 x0 = {0}, x1 = {0}, x2 = {0}, x3 = {0}, x4 = {0}, x5 = {0}, x6 = {0}, x7 = {0};
            v8 x8 = {0}, x9 = {0};
            float mv = 0.999999f, kv = 1e-7f * (omp_get_thread_num() + 1);
            v8 m = {mv, mv, mv, mv, mv, mv, mv, mv}, k = {kv, kv, kv, kv, kv, kv, kv, kv};
            for (long i = 0; i < iters; i++) {
                x0 = x0 * m + k; x1 = x1 * m + k; x2 = x2 * m + k; x3 = x3 * m + k;
                x4 = x4 * m + k; x5 = x5 * m + k; x6 = x6 * m + k; x7 = x7 * m + k;
                x8 = x8 * m + k; x9 = x9 * m + k;
            }
            v8 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9;
            for (int j = 0; j < 8; j++)
                sink += s[j];
        }
        double t = now() - t0;
        double fl = 2.0 * 10 * 8 * (double)iters * omp_get_max_threads() / t / 1e9;
        if (fl > best_fl)
            best_fl = fl;
        if (sink == 12345.f)
            printf(" ");
    }
    printf("{\"mem_gbs\": %.2f, \"fp32_gflops\": %.2f, \"threads\": %d, \"a0\": %g}\n", best_bw,
           best_fl, omp_get_max_threads(), (double)a[0]);
    free(a);
    free(b);
    free(c);
    return 0;
}
