/*
 * cli/cmd_calibrate.c - `kevo calibrate [--show]`: measure this machine's
 * memory bandwidth and fp32 FMA peaks once and cache them for the roofline
 * diagnosis shown when refining.
 */
#include "commands.h"
#include "kevo/roofline.h"

#include <stdio.h>
#include <string.h>

int kevo_cmd_calibrate(int argc, char **argv)
{
    kevo_peaks p;
    if (argc > 1 && !strcmp(argv[1], "--help")) {
        printf("usage: kevo calibrate [--show]\nmeasures memory bandwidth and fp32 FMA peaks "
               "(all cores) and caches them in %s\n", kevo_peaks_path());
        return KEVO_EXIT_OK;
    }
    if (argc > 1 && !strcmp(argv[1], "--show")) {
        if (kevo_peaks_load(&p) < 0) {
            fprintf(stderr, "kevo calibrate: %s\n", kevo_error_last());
            return KEVO_EXIT_NEGATIVE;
        }
    } else {
        printf("measuring peaks (about 10 s)...\n");
        if (kevo_peaks_measure(&p) < 0) {
            fprintf(stderr, "kevo calibrate: %s\n", kevo_error_last());
            return KEVO_EXIT_INFRA;
        }
    }
    printf("memory bandwidth  %.2f GB/s\nfp32 FMA          %.2f GFLOP/s\nthreads           %d\n"
           "cache             %s\n", p.mem_gbs, p.fp32_gflops, p.threads, kevo_peaks_path());
    return KEVO_EXIT_OK;
}
