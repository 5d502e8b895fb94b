/*
 * cli/cmd_report.c - `kevo report [--run ID] [--compare A B] [--format
 * text|json|csv] [--db PATH]`: what a run achieved, from the store.
 */
#include "cli/commands.h"
#include "kevo/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kevo_cmd_report(int argc, char **argv)
{
    const char *db = "kevo.db", *format = "text";
    int64_t ids[2] = {0, 0};
    size_t nids = 0;
    bool compare = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: kevo report [--run ID | --compare RUN_A RUN_B] [--format text|json|csv] "
                   "[--db PATH]\n(default: the latest run in kevo.db, as a text table)\n");
            return KEVO_EXIT_OK;
        } else if (!strcmp(a, "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(a, "--run") && i + 1 < argc) {
            ids[0] = atoll(argv[++i]);
            nids = 1;
        } else if (!strcmp(a, "--compare") && i + 2 < argc) {
            ids[0] = atoll(argv[++i]);
            ids[1] = atoll(argv[++i]);
            nids = 2;
            compare = true;
        } else {
            fprintf(stderr, "kevo report: unknown or incomplete option '%s'\n", a);
            return KEVO_EXIT_USAGE;
        }
    }
    kevo_report_format fmt;
    if (!strcmp(format, "text"))
        fmt = KEVO_REPORT_TEXT;
    else if (!strcmp(format, "json"))
        fmt = KEVO_REPORT_JSON;
    else if (!strcmp(format, "csv"))
        fmt = KEVO_REPORT_CSV;
    else {
        fprintf(stderr, "kevo report: --format must be text, json or csv\n");
        return KEVO_EXIT_USAGE;
    }
    if (nids == 0)
        nids = 1;
    kevo_memory *mem = NULL;
    kevo_run_metrics *runs[2] = {NULL, NULL};
    int rc = KEVO_EXIT_OK;
    kevo_buf out = {0};
    if (kevo_memory_open_ex(&mem, db, KEVO_MEMORY_MUST_EXIST) < 0) {
        fprintf(stderr, "kevo report: %s\n", kevo_error_last());
        return KEVO_EXIT_USAGE;
    }
    for (size_t i = 0; i < nids; i++)
        if (kevo_report_metrics(&runs[i], mem, ids[i]) < 0) {
            fprintf(stderr, "kevo report: %s\n", kevo_error_last());
            rc = KEVO_EXIT_USAGE;
            goto done;
        }
    (void)compare;
    kevo_report_render(&out, runs, nids, fmt);
    fputs(kevo_buf_cstr(&out), stdout);
done:
    kevo_buf_free(&out);
    kevo_run_metrics_free(runs[0]);
    kevo_run_metrics_free(runs[1]);
    kevo_memory_free(mem);
    return rc;
}
