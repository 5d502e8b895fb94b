/*
 * cli/cmd_calibrate.c - `kevo calibrate [--show]`: measure this machine's
 * memory bandwidth and fp32 FMA peaks once and cache them for the roofline
 * diagnosis shown when refining.
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
                   "measures memory bandwidth and fp32 FMA peaks (all cores) and caches them in\n"
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
