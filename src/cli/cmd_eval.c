/*
 * cli/cmd_eval.c - `kevo eval TASK_DIR CANDIDATE [--json]`: judge one
 * kernel by hand (or as the validate step of an external coding agent).
 * Parses flags and prints; the gates live in src/verify.
 */
#include "commands.h"
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
            "  --keep                 keep the build directory for inspection\n"
            "  --unsafe-skip-antihack skip the static gate (to test the runtime sandbox)\n"
            "\n"
            "exit status: 0 correct, 1 another verdict, 2 bad input, 3 kevo's own failure\n");
}

static void print_text(const kevo_task *t, const char *cand, const kevo_eval_result *r,
                       bool ref_cached)
{
    printf("task       %s (%s)\n", t->name, t->dir);
    printf("candidate  %s\n", cand);
    printf("reference  %s\n", ref_cached ? "outputs from the reference cache"
                                          : "built and run for this evaluation");
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
    if (r->verdict != KEVO_VERDICT_CORRECT && r->feedback && *r->feedback)
        printf("feedback   %s\n", r->feedback);
}

int kevo_cmd_eval(int argc, char **argv)
{
    const char *task_dir = NULL, *cand_path = NULL;
    bool json = false;
    kevo_eval_options o;
    kevo_eval_options_default(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return KEVO_EXIT_OK;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--quick")) {
            o.min_time_s = 0.3;
            o.min_samples = 5;
        } else if (!strcmp(a, "--no-latency")) {
            o.skip_latency = true;
        } else if (!strcmp(a, "--no-cache")) {
            o.no_reference_cache = true;
        } else if (!strcmp(a, "--keep")) {
            o.keep_workdir = true;
        } else if (!strcmp(a, "--unsafe-skip-antihack")) {
            o.skip_antihack = true;
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            o.backend = argv[++i];
        } else if (!strcmp(a, "--min-time") && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            o.min_time_s = strtod(v, &end);
            if (end == v || *end || !(o.min_time_s > 0)) {
                fprintf(stderr, "kevo eval: --min-time must be a positive number of seconds\n");
                return KEVO_EXIT_USAGE;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "kevo eval: unknown option '%s' (see kevo eval --help)\n", a);
            return KEVO_EXIT_USAGE;
        } else if (!task_dir) {
            task_dir = a;
        } else if (!cand_path) {
            cand_path = a;
        } else {
            fprintf(stderr, "kevo eval: unexpected argument '%s'\n", a);
            return KEVO_EXIT_USAGE;
        }
    }
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
    char *source = NULL;
    kevo_eval_result r = {0};
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
    if ((error = kevo_file_read(&source, NULL, cand_path)) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (strspn(source, " \t\r\n") == strlen(source)) {
        fprintf(stderr, "kevo eval: %s: the candidate file is empty\n", cand_path);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
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
    if ((error = kevo_evaluator_eval(ev, source, &r)) < 0) {
        fprintf(stderr, "kevo eval: %s\n", kevo_error_last());
        rc = KEVO_EXIT_INFRA;
        goto done;
    }
    if (json) {
        char *text = NULL;
        kevo_eval_result_json(&text, &r, task, true);
        printf("%s\n", text);
        free(text);
    } else {
        print_text(task, cand_path, &r, kevo_evaluator_reference_cached(ev));
    }
    rc = r.verdict == KEVO_VERDICT_CORRECT       ? KEVO_EXIT_OK
         : r.verdict == KEVO_VERDICT_INFRA_ERROR ? KEVO_EXIT_INFRA
                                                 : KEVO_EXIT_NEGATIVE;
done:
    kevo_eval_result_clear(&r);
    kevo_evaluator_free(ev);
    kevo_task_free(task);
    free(source);
    return rc;
}
