/*
 * kevo/roofline.h - this machine's peaks (memory bandwidth, fp32 FMA
 * throughput), measured once by `kevo calibrate` and cached, and the
 * roofline diagnosis of a kernel from its task's flops/bytes and latency.
 */
#ifndef KEVO_ROOFLINE_H
#define KEVO_ROOFLINE_H

#include "kevo/common.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_peaks {
    double mem_gbs;     /* triad bandwidth, all cores */
    double fp32_gflops; /* vector FMA throughput, all cores */
    int threads;
} kevo_peaks;

/* The cache file: $KEVO_PEAKS, else $XDG_CACHE_HOME/kevo/peaks.json, else
 * $HOME/.cache/kevo/peaks.json. Static storage. */
const char *kevo_peaks_path(void);
/* Measure (builds and runs harness/peaks.c with -O3 -march=native
 * -fopenmp) and write the cache. */
int kevo_peaks_measure(kevo_peaks *out);
/* Read the cache; KEVO_ENOTFOUND when `kevo calibrate` never ran. */
int kevo_peaks_load(kevo_peaks *out);

/* One line a person and an LLM can act on, e.g. "achieved 7.1 GB/s (79% of
 * the 9.0 GB/s measured peak) and 0.9 GFLOP/s (1% of 150): memory-bound;
 * ...". peaks may be NULL (then only achieved rates). *out is the caller's. */
int kevo_roofline_diagnose(char **out, double flops, double bytes, double latency_us,
                           const kevo_peaks *peaks);

#ifdef __cplusplus
}
#endif
#endif
