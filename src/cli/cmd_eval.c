/*
 * cli/cmd_eval.c - `kevo eval TASK_DIR CANDIDATE [--json]`: judge one
 * kernel by hand (or as the validate step of an external coding agent);
 * with `--versus OTHER`, two kernels timed side by side in the same
 * rounds. Parses flags and prints; the gates live in src/verify.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "kevo/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo eval TASK_DIR CANDIDATE_FILE [options]\n"
            "\n"
            "Judge one candidate kernel against a task: anti-hack, compile, correctness\n"
            "(every size set x 3 seeds) and latency (interleaved with the reference).\n"
            "\n"
            "options:\n"
            "  --json                 print one JSON object (verdict, gates, feedback, latency)\n"
            "  --backend NAME         c (default), opencl, cuda (docs/backends/)\n"
            "  --quick                shorter latency measurement (0.3 s, 5 calls per side)\n"
            "  --no-latency           stop after the correctness gate\n"
            "  --no-cache             rebuild and re-run the reference instead of reading its\n"
            "                         cached outputs (KEVO_CACHE=off: every cache)\n"
            "  --min-time S           minimum timed seconds per side (default 1.0)\n"
            "  --versus OTHER_FILE    judge OTHER_FILE too and time the two side by side: every\n"
            "                         round runs the reference and both kernels on the same\n"
            "                         inputs, in rotating order; prints the median of the\n"
            "                         per-round ratio OTHER / CANDIDATE and its quartiles\n"
            "  --keep                 keep the build directory for inspection\n"
            "  --unsafe-skip-antihack skip the static gate (to test the runtime sandbox)\n"
            "\n"
            "exit status: 0 correct (with --versus: both), 1 another verdict, 2 bad input,\n"
            "3 kevo's own failure\n");
}

static void print_result(const kevo_eval_result *r);

static void print_text(const kevo_task *t, const char *cand, const kevo_eval_result *r,
                       bool ref_cached)
{
    printf("task       %s (%s)\n", t->name, t->dir);
    printf("candidate  %s\n", cand);
    printf("reference  %s\n", ref_cached ? "outputs from the reference cache"
                                          : "built and run for this evaluation");
    print_result(r);
}

/* The side by side line: b's time over a's per round. */
static void print_pair(const char *a, const char *b, const kevo_pair_latency *p, bool timed)
{
    if (!p->measured) {
        printf("versus     not measured: %s\n",
               timed ? "both kernels must be correct" : "--no-latency");
        return;
    }
    bool a_faster = p->ratio >= 1;
    printf("versus     time of %s / time of %s, per round: median %.3f (quartiles %.3f-%.3f, "
           "%d rounds): ",
           b, a, p->ratio, p->ratio_q1, p->ratio_q3, p->rounds);
    /* the band bench/reference_vs_itself.sh holds a single speedup to;
     * a memory-bound pair can lean further (docs/evaluation.md) */
    if (p->ratio_q1 <= 1 && p->ratio_q3 >= 1)
        printf("no clear difference (the quartiles straddle 1)\n");
    else if (p->ratio > 1 / 1.1 && p->ratio < 1.1)
        printf("no clear difference (within 10%%, the band of a kernel against itself)\n");
    else
        printf("%s is %.2fx faster\n", a_faster ? a : b, a_faster ? p->ratio : 1 / p->ratio);
}

static void print_result(const kevo_eval_result *r)
{
    for (size_t i = 0; i < r->ngates; i++) {
        const kevo_gate *g = &r->gates[i];
        printf("  %-12s %s\n", g->name, g->ok ? "ok" : "FAILED");
        const char *p = kevo_buf_cstr(&g->messages);
        while (*p) {
            const char *eol = strchr(p, '\n');
            int len = eol ? (int)(eol - p) : (int)strlen(p);
            if (len)
                printf("               %.*s\n", len, p);
            p += len + (eol ? 1 : 0);
        }
    }
    printf("verdict    %s\n", kevo_verdict_name(r->verdict));
    if (r->has_latency)
        printf("latency    candidate %.1f us, %s %.1f us (medians): speedup %.2fx over %s\n",
               r->latency.candidate_us,
               strcmp(r->latency.baseline, "torch-eager-cpu") ? "reference" : "PyTorch eager",
               r->latency.reference_us, r->latency.speedup, r->latency.baseline);
    if (r->has_roofline && r->roofline.have_bound)
        printf("roofline   %.2f GB/s, %.2f GFLOP/s: %.0f%% of the bound (%s-bound; %.2f GB/s "
               "at its working set, bound %.2f GFLOP/s)\n",
               r->roofline.gbs, r->roofline.gflops, 100 * r->roofline.fraction,
               kevo_roofline_bottleneck(&r->roofline), r->roofline.bw_gbs,
               r->roofline.bound_gflops);
    else if (r->has_roofline)
        printf("roofline   %.2f GB/s, %.2f GFLOP/s (no bound: %s)\n", r->roofline.gbs,
               r->roofline.gflops,
               r->roofline.intensity > 0 ? "no peaks, run `kevo calibrate`"
                                         : "the task's flops are unknown");
    if (r->verdict != KEVO_VERDICT_CORRECT && r->feedback && *r->feedback)
        printf("feedback   %s\n", r->feedback);
}

/* The candidate file at path into *out; an exit status. */
static int read_candidate(char **out, const char *path)
{
    if (kevo_file_read(out, NULL, path) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        return KEVO_EXIT_USAGE;
    }
    if (strspn(*out, " \t\r\n") == strlen(*out)) {
        fprintf(stderr, "kevo eval: %s: the candidate file is empty\n", path);
        return KEVO_EXIT_USAGE;
    }
    return KEVO_EXIT_OK;
}

/* A verdict's exit status; the larger of two is the worse (0 < 1 < 3). */
static int exit_of(kevo_verdict v)
{
    return v == KEVO_VERDICT_CORRECT       ? KEVO_EXIT_OK
           : v == KEVO_VERDICT_INFRA_ERROR ? KEVO_EXIT_INFRA
                                           : KEVO_EXIT_NEGATIVE;
}

int kevo_cmd_eval(int argc, char **argv)
{
    const char *task_dir = NULL, *cand_path = NULL, *other_path = NULL;
    bool json = false;
    kevo_eval_options o;
    kevo_eval_options_default(&o);
    enum { OPT_JSON = 256, OPT_QUICK, OPT_NO_LATENCY, OPT_NO_CACHE, OPT_KEEP, OPT_SKIP_ANTIHACK,
           OPT_BACKEND, OPT_MIN_TIME, OPT_VERSUS };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, OPT_JSON},
        {"quick", no_argument, NULL, OPT_QUICK},
        {"no-latency", no_argument, NULL, OPT_NO_LATENCY},
        {"no-cache", no_argument, NULL, OPT_NO_CACHE},
        {"keep", no_argument, NULL, OPT_KEEP},
        {"unsafe-skip-antihack", no_argument, NULL, OPT_SKIP_ANTIHACK},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"min-time", required_argument, NULL, OPT_MIN_TIME},
        {"versus", required_argument, NULL, OPT_VERSUS},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    kevo_opts_init(&op, "kevo eval", argc, argv, table, "h");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return KEVO_EXIT_OK;
        case OPT_JSON: json = true; break;
        case OPT_QUICK:
            o.min_time_s = 0.3;
            o.min_samples = 5;
            break;
        case OPT_NO_LATENCY: o.skip_latency = true; break;
        case OPT_NO_CACHE: o.no_reference_cache = true; break;
        case OPT_KEEP: o.keep_workdir = true; break;
        case OPT_SKIP_ANTIHACK: o.skip_antihack = true; break;
        case OPT_BACKEND: o.backend = op.arg; break;
        case OPT_VERSUS: other_path = op.arg; break;
        case OPT_MIN_TIME: {
            char *end;
            o.min_time_s = strtod(op.arg, &end);
            if (end == op.arg || *end || !(o.min_time_s > 0) || o.min_time_s > 3600)
                return kevo_opts_usage(&op, "--min-time must be a positive number of seconds "
                                            "(at most 3600), got '%s'", op.arg);
            break;
        }
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops > 2)
        return kevo_opts_usage(&op, "unexpected argument '%s'", ops[2]);
    task_dir = nops > 0 ? ops[0] : NULL;
    cand_path = nops > 1 ? ops[1] : NULL;
    if (!task_dir || !cand_path) {
        usage(stderr);
        return KEVO_EXIT_USAGE;
    }
    if (!kevo_backend_find(o.backend)) {
        fprintf(stderr, "kevo eval: unknown backend '%s'\n", o.backend);
        return KEVO_EXIT_USAGE;
    }
    int rc = KEVO_EXIT_OK, error;
    kevo_task *task = NULL;
    kevo_evaluator *ev = NULL;
    char *source = NULL, *other = NULL;
    kevo_eval_result r = {0}, r2 = {0};
    kevo_pair_latency pair = {0};
    if ((error = kevo_task_load(&task, task_dir)) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (!kevo_task_supports(task, o.backend)) {
        fprintf(stderr, "kevo eval: %s: task '%s' does not list backend '%s' in \"backends\"\n",
                task->json_path, task->name, o.backend);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if ((rc = read_candidate(&source, cand_path)) != KEVO_EXIT_OK ||
        (other_path && (rc = read_candidate(&other, other_path)) != KEVO_EXIT_OK))
        goto done;
    /* --keep: the build directory must outlive kevo, so no private scratch */
    if (!o.keep_workdir && (error = kevo_sandbox_private_scratch()) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    if ((error = kevo_evaluator_new(&ev, task, &o)) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    error = other ? kevo_evaluator_eval_pair(ev, source, other, &r, &r2, &pair)
                  : kevo_evaluator_eval(ev, source, &r);
    if (error < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = KEVO_EXIT_INFRA;
        goto done;
    }
    if (json && other) {
        char *ta = NULL, *tb = NULL;
        kevo_eval_result_json(&ta, &r, task, true);
        kevo_eval_result_json(&tb, &r2, task, true);
        printf("{\"candidate\": %s,\n\"other\": %s,\n\"versus\": ", ta ? ta : "null",
               tb ? tb : "null");
        if (pair.measured)
            printf("{\"measured\": true, \"rounds\": %d, \"ratio\": %.6g, \"ratio_q1\": "
                   "%.6g, \"ratio_q3\": %.6g}}\n",
                   pair.rounds, pair.ratio, pair.ratio_q1, pair.ratio_q3);
        else
            printf("{\"measured\": false}}\n");
        free(ta);
        free(tb);
    } else if (json) {
        char *text = NULL;
        kevo_eval_result_json(&text, &r, task, true);
        printf("%s\n", text);
        free(text);
    } else if (other) {
        bool cached = kevo_evaluator_reference_cached(ev);
        print_text(task, cand_path, &r, cached);
        printf("other      %s\n", other_path);
        print_result(&r2);
        print_pair(cand_path, other_path, &pair, !o.skip_latency);
    } else {
        print_text(task, cand_path, &r, kevo_evaluator_reference_cached(ev));
    }
    rc = exit_of(r.verdict);
    if (other && exit_of(r2.verdict) > rc)
        rc = exit_of(r2.verdict);
done:
    kevo_eval_result_clear(&r);
    kevo_eval_result_clear(&r2);
    free(other);
    kevo_evaluator_free(ev);
    kevo_task_free(task);
    free(source);
    return rc;
}
