/*
 * cli/cmd_report.c - `kevo report [--run ID] [--compare A B] [--format
 * text|json|csv|html] [-o FILE] [--db PATH]`: what a run achieved, from
 * the store. Parses flags and prints; the metrics and renderers live in
 * src/report.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/report.h"

#include <stdbool.h>
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
    enum { OPT_DB = 256, OPT_FORMAT, OPT_RUN, OPT_COMPARE };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},         {"db", required_argument, NULL, OPT_DB},
        {"format", required_argument, NULL, OPT_FORMAT}, {"output", required_argument, NULL, 'o'},
        {"run", required_argument, NULL, OPT_RUN}, {"compare", required_argument, NULL, OPT_COMPARE},
        {NULL, 0, NULL, 0},
    };
    kevo_opts o;
    kevo_opts_init(&o, "kevo report", argc, argv, table, "ho:");
    int c;
    bool compare = false;
    while ((c = kevo_opts_next(&o)) != -1) {
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return KEVO_EXIT_OK;
        case OPT_DB: db = o.arg; break;
        case OPT_FORMAT: format = o.arg; break;
        case 'o': output = o.arg; break;
        case OPT_RUN:
        case OPT_COMPARE:
            if (kevo_opts_int64(&o, &ids[0], 1, INT64_MAX) < 0)
                return KEVO_EXIT_USAGE;
            nids = 1;
            compare = c == OPT_COMPARE;
            break;
        }
    }
    /* --compare A B: B is the one operand */
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (compare) {
        if (nops != 1)
            return kevo_opts_usage(&o, "--compare takes two run ids: --compare RUN_A RUN_B");
        o.arg = ops[0];
        o.flag = "--compare";
        if (kevo_opts_int64(&o, &ids[1], 1, INT64_MAX) < 0)
            return KEVO_EXIT_USAGE;
        nids = 2;
    } else if (nops > 0) {
        return kevo_opts_usage(&o, "unexpected argument '%s'", ops[0]);
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
        return kevo_opts_usage(&o, "--format must be text, json, csv or html, not '%s'", format);
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
