/*
 * cli/cmd_report.c - `kevo report [--run ID] [--compare A B] [--format
 * text|json|csv|html] [-o FILE] [--db PATH]`: what a run achieved, from
 * the store. Parses flags and prints; the metrics and renderers live in
 * src/report.
 */
#include "commands.h"
#include "kevo/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo report [--run ID | --compare RUN_A RUN_B] [--format text|json|csv|html]\n"
            "                   [-o FILE] [--db PATH]\n"
            "  --run ID           the run to report (default: the latest)\n"
            "  --compare A B      two runs side by side (html: on the same axes), with the\n"
            "                     geomean of best A / best B over the tasks both solved\n"
            "  --format FMT       text (default), json, csv, or html (one self-contained page)\n"
            "  -o, --output FILE  write to FILE (atomically) instead of stdout\n"
            "  --db PATH          the store (default kevo.db)\n");
}

int kevo_cmd_report(int argc, char **argv)
{
    const char *db = "kevo.db", *format = "text", *output = NULL;
    int64_t ids[2] = {0, 0};
    size_t nids = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return KEVO_EXIT_OK;
        } else if (!strcmp(a, "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            format = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            output = argv[++i];
        } else if (!strcmp(a, "--run") && i + 1 < argc) {
            ids[0] = atoll(argv[++i]);
            nids = 1;
        } else if (!strcmp(a, "--compare") && i + 2 < argc) {
            ids[0] = atoll(argv[++i]);
            ids[1] = atoll(argv[++i]);
            nids = 2;
        } else {
            fprintf(stderr, "kevo report: unknown or incomplete option '%s'\n", a);
            usage(stderr);
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
    else if (!strcmp(format, "html"))
        fmt = KEVO_REPORT_HTML;
    else {
        fprintf(stderr, "kevo report: --format must be text, json, csv or html\n");
        return KEVO_EXIT_USAGE;
    }
    if (output && !*output) {
        fprintf(stderr, "kevo report: -o needs a file name\n");
        return KEVO_EXIT_USAGE;
    }
    if (nids == 0)
        nids = 1;
    kevo_memory *mem = NULL;
    kevo_run_metrics *runs[2] = {NULL, NULL};
    int rc = KEVO_EXIT_OK, error;
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
    if (fmt == KEVO_REPORT_HTML)
        error = kevo_report_html(&out, mem, runs, nids);
    else
        error = kevo_report_render(&out, runs, nids, fmt);
    if (error < 0) {
        fprintf(stderr, "kevo report: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    if (output) {
        if (kevo_file_write(output, out.ptr ? out.ptr : "", out.len) < 0) {
            fprintf(stderr, "kevo report: %s\n", kevo_error_last());
            rc = KEVO_EXIT_INFRA;
            goto done;
        }
        fprintf(stderr, "kevo report: wrote %s (%zu bytes)\n", output, out.len);
    } else {
        fputs(kevo_buf_cstr(&out), stdout);
    }
done:
    kevo_buf_free(&out);
    kevo_run_metrics_free(runs[0]);
    kevo_run_metrics_free(runs[1]);
    kevo_memory_free(mem);
    return rc;
}
