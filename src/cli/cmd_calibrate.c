/*
 * cli/cmd_calibrate.c - `kevo calibrate [--show]`: measure this machine's
 * bandwidth curve (working sets 32 KiB to 1 GiB) and fp32 FMA peak once,
 * cache them for the roofline (eval results, refine diagnosis, report),
 * and print them. Must not: compute anything itself (kevo/roofline.h).
 */
#include "commands.h"
#include "opts.h"
#include "kevo/roofline.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int kevo_cmd_calibrate(int argc, char **argv)
{
    kevo_peaks p;
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"show", no_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    kevo_opts o;
    kevo_opts_init(&o, "kevo calibrate", argc, argv, table, "h");
    int c;
    bool show = false;
    while ((c = kevo_opts_next(&o)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        if (c == 'h') {
            printf("usage: kevo calibrate [--show]\n"
                   "measures the memory bandwidth at working sets from 32 KiB to 1 GiB (each\n"
                   "cache level and DRAM) and the fp32 FMA peak, all cores, and caches them in\n"
                   "%s\n"
                   "  --show             print the cached peaks without measuring\n",
                   kevo_peaks_path());
            return KEVO_EXIT_OK;
        }
        show = true;
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (nops)
        return kevo_opts_usage(&o, "unexpected argument '%s'", ops[0]);
    if (show) {
        if (kevo_peaks_load(&p) < 0) {
            fprintf(stderr, "kevo calibrate: %s\n", kevo_error_last());
            return KEVO_EXIT_NEGATIVE;
        }
    } else {
        printf("measuring peaks (10-30 s)...\n");
        fflush(stdout);
        if (kevo_peaks_measure(&p) < 0) {
            fprintf(stderr, "kevo calibrate: %s\n", kevo_error_last());
            return KEVO_EXIT_INFRA;
        }
    }
    printf("bandwidth (a = b * s + c, %d threads), by working set:\n", p.threads);
    for (size_t i = 0; i < p.npoints; i++) {
        double b = p.curve[i].bytes;
        const char *unit = b >= 1 << 30 ? "GiB" : b >= 1 << 20 ? "MiB" : "KiB";
        double div = b >= 1 << 30 ? 1 << 30 : b >= 1 << 20 ? 1 << 20 : 1 << 10;
        printf("  %8.1f %s  %8.2f GB/s\n", b / div, unit, p.curve[i].gbs);
    }
    printf("memory bandwidth  %.2f GB/s (the largest working set)\nfp32 FMA          %.2f "
           "GFLOP/s\nthreads           %d\nmeasured          %s\ncache             %s\n",
           p.mem_gbs, p.fp32_gflops, p.threads, p.measured[0] ? p.measured : "(not recorded)",
           kevo_peaks_path());
    return KEVO_EXIT_OK;
}
