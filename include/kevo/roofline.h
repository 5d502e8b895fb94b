/*
 * kevo/roofline.h - this machine's peaks, measured once by `kevo calibrate`
 * and cached: a bandwidth curve (all cores, a = b * s + c streamed over
 * working sets from 32 KiB to 1 GiB, so a kernel whose data sit in a cache
 * is bounded by that cache's bandwidth, not by DRAM's) and the fp32 FMA
 * throughput; the roofline bound and fraction of one timed kernel from its
 * task's flops/bytes and latency; and the diagnosis text an LLM is shown.
 * Pure computations except kevo_peaks_measure/load/save (the cache file).
 */
#ifndef KEVO_ROOFLINE_H
#define KEVO_ROOFLINE_H

#include "kevo/common.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The cache file's format. 1 (no "version" field, one DRAM bandwidth) is
 * refused by kevo_peaks_load: its single bandwidth bounded every working
 * set, cached ones included (fractions above 1); `kevo calibrate` rewrites
 * it. */
#define KEVO_PEAKS_VERSION 2
#define KEVO_PEAKS_MAX_POINTS 64

/* One point of the bandwidth curve: `gbs` streamed over a working set of
 * `bytes` (the three arrays together; bytes moved per pass, no
 * write-allocate counted, as tasks count their `bytes`). */
typedef struct kevo_bw_point {
    double bytes;
    double gbs;
} kevo_bw_point;

/* Plain values: copy freely. */
typedef struct kevo_peaks {
    double mem_gbs;     /* the curve's largest working set (DRAM): the old single figure */
    double fp32_gflops; /* vector FMA throughput, all cores */
    int threads;
    size_t npoints;
    kevo_bw_point curve[KEVO_PEAKS_MAX_POINTS]; /* ascending bytes */
    char machine[33]; /* kevo_machine id of the measuring machine; "" unknown */
    /* when `kevo calibrate` measured them, ISO-8601 UTC ("" unknown: a file
     * written before kevo recorded it); bandwidths on a shared machine move
     * with its load, so a fraction is against the peaks of that moment */
    char measured[24];
} kevo_peaks;

/* The cache file: $KEVO_PEAKS, else $XDG_CACHE_HOME/kevo/peaks.json, else
 * $HOME/.cache/kevo/peaks.json. Static storage. */
const char *kevo_peaks_path(void);
/* Measure (builds and runs harness/peaks.c with -O3 -march=native
 * -fopenmp, all cores) and write the cache. */
int kevo_peaks_measure(kevo_peaks *out);
/* Read the cache; KEVO_ENOTFOUND when `kevo calibrate` never ran or the
 * cache is of an older format (the message says which and names `kevo
 * calibrate`), KEVO_EINVAL when it is not a peaks record. */
int kevo_peaks_load(kevo_peaks *out);
/* Write p to the cache file (its folder created). */
int kevo_peaks_save(const kevo_peaks *p);
/* The cache's JSON form and its parse (`where` names the text in
 * messages). *out is the caller's (free()). */
int kevo_peaks_to_json(char **out, const kevo_peaks *p);
int kevo_peaks_parse(kevo_peaks *out, const char *json, const char *where);

/* The bandwidth bound of a working set of `bytes`: the measured bandwidth
 * at the smallest measured size >= bytes; beyond the last point, the last
 * point's; mem_gbs without a curve. 0 when nothing is known. */
double kevo_peaks_bandwidth(const kevo_peaks *p, double bytes);

/* A timed kernel against the roofline. */
typedef struct kevo_roofline {
    double gbs, gflops;    /* achieved: bytes / latency, flops / latency */
    double intensity;      /* flops per byte */
    bool have_bound;       /* peaks known and flops > 0 (a task's "0" means unknown) */
    double bw_gbs;         /* kevo_peaks_bandwidth at the working set (the task's bytes) */
    double bound_gflops;   /* min(fp32 peak, intensity x bw_gbs) */
    double bound_gbs;      /* bound_gflops / intensity: the same roof in bytes */
    double fraction;       /* gflops / bound_gflops */
    bool memory_bound;     /* intensity x bw_gbs < fp32 peak */
} kevo_roofline;

/* Fill *out from the task's flops and bytes at the timed sizes, the
 * kernel's median latency and the peaks (NULL: achieved rates only,
 * have_bound false). KEVO_EINVAL when latency or bytes is not positive
 * (nothing to compute). */
int kevo_roofline_compute(kevo_roofline *out, double flops, double bytes, double latency_us,
                          const kevo_peaks *peaks);
/* "memory" or "compute". */
const char *kevo_roofline_bottleneck(const kevo_roofline *r);

/* One line a person and an LLM can act on, e.g. "achieved 7.1 GB/s and
 * 0.9 GFLOP/s (...); 79% of the roofline bound: memory-bound at the 9.0
 * GB/s measured for its 64 MiB working set; ...". peaks may be NULL (then
 * only achieved rates). *out is the caller's. */
int kevo_roofline_diagnose(char **out, double flops, double bytes, double latency_us,
                           const kevo_peaks *peaks);

#ifdef __cplusplus
}
#endif
#endif
