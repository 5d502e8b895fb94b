/*
 * report/render.c - kevo_report_render(): the text, JSON and CSV forms of
 * run metrics (several runs = side by side).
 *
 * Renders only what it is handed: no store (no kevo_memory_* call), no
 * metric computed here (metrics.c, which also pairs two runs), no HTML
 * (html.c).
 */
#include "kevo/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "no_store.h"

/* key: text, or null when the text is empty (the metrics' "unknown"). */
static void add_text_or_null(cJSON *o, const char *key, const char *text)
{
    if (text[0])
        cJSON_AddStringToObject(o, key, text);
    else
        cJSON_AddNullToObject(o, key);
}

/* {"1": x, "5": y, "10": z}: the k not above the run's attempts per task */
static cJSON *pass_json(const kevo_paper_rates *r)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t j = 0; j < r->npass_at_k; j++) {
        char k[16];
        snprintf(k, sizeof(k), "%d", r->pass_at_k[j].k);
        cJSON_AddNumberToObject(o, k, r->pass_at_k[j].value);
    }
    return o;
}

/* The papers' rates of a run or a level (the run's geomean_speedup and
 * fast_1 are already its own fields). */
static void rates_json(cJSON *o, const kevo_paper_rates *r, bool level)
{
    if (level) {
        cJSON_AddNumberToObject(o, "tasks", r->tasks);
        cJSON_AddNumberToObject(o, "fast_1", r->fast_1);
        cJSON_AddNumberToObject(o, "geomean_speedup", r->geomean_speedup);
    }
    cJSON_AddNumberToObject(o, "cr_per_kernel", r->cr_per_kernel);
    cJSON_AddNumberToObject(o, "acc", r->acc);
    cJSON_AddNumberToObject(o, "round1_cr", r->round1_cr);
    cJSON_AddNumberToObject(o, "round1_acc", r->round1_acc);
    cJSON_AddItemToObject(o, "pass_at_k", pass_json(r));
    cJSON_AddNumberToObject(o, "pass_at_k_tasks", r->pass_at_k_tasks);
}

static cJSON *run_json(const kevo_run_metrics *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run_id", (double)m->run_id);
    cJSON_AddStringToObject(o, "status", m->status);
    cJSON *cfg = cJSON_Parse(m->config_json);
    cJSON_AddItemToObject(o, "config", cfg ? cfg : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "tasks", m->tasks);
    cJSON_AddNumberToObject(o, "attempts", m->attempts);
    cJSON_AddNumberToObject(o, "compiled_rate", m->compiled_rate);
    cJSON_AddNumberToObject(o, "correct_rate", m->correct_rate);
    cJSON_AddNumberToObject(o, "attempt_compiled_rate", m->attempt_compiled_rate);
    cJSON_AddNumberToObject(o, "attempt_correct_rate", m->attempt_correct_rate);
    cJSON_AddNumberToObject(o, "fast_1", m->fast_1);
    cJSON_AddNumberToObject(o, "fast_2", m->fast_2);
    cJSON_AddNumberToObject(o, "geomean_speedup", m->geomean_speedup);
    cJSON_AddNumberToObject(o, "median_speedup_vs_first_draft", m->median_speedup_vs_first_draft);
    cJSON_AddNumberToObject(o, "speedup_vs_first_draft_iqr_low", m->iqr_low);
    cJSON_AddNumberToObject(o, "speedup_vs_first_draft_iqr_high", m->iqr_high);
    cJSON_AddNumberToObject(o, "mean_iterations_to_first_correct", m->mean_iters_to_first_correct);
    cJSON_AddNumberToObject(o, "mean_iterations_to_first_speedup", m->mean_iters_to_first_speedup);
    cJSON_AddNumberToObject(o, "share_reaching_1_1x", m->speedup_1_1_rate);
    cJSON_AddNumberToObject(o, "tokens_prompt", (double)m->tokens_prompt);
    cJSON_AddNumberToObject(o, "tokens_completion", (double)m->tokens_completion);
    cJSON_AddNumberToObject(o, "tokens_total", (double)(m->tokens_prompt + m->tokens_completion));
    cJSON_AddNumberToObject(o, "tokens_per_solved_task", m->tokens_per_solved_task);
    cJSON_AddNumberToObject(o, "builtin_attempts", m->builtin_attempts);
    cJSON_AddNumberToObject(o, "tokens_saved_estimate", m->tokens_saved_estimate);
    cJSON_AddNumberToObject(o, "wall_s", m->wall_s);
    /* the papers' forms */
    rates_json(o, &m->paper, false);
    cJSON_AddNumberToObject(o, "geomean_speedup_all_tasks", m->geomean_speedup_all_tasks);
    cJSON_AddBoolToObject(o, "tokens_estimated", m->tokens_estimated);
    if (m->roof_tasks > 0 && isfinite(m->median_roof_fraction))
        cJSON_AddNumberToObject(o, "median_roof_fraction", m->median_roof_fraction);
    else
        cJSON_AddNullToObject(o, "median_roof_fraction");
    cJSON_AddNumberToObject(o, "roof_tasks", m->roof_tasks);
    add_text_or_null(o, "roof_note", m->roof_note);
    if (m->roof_peaks_known) {
        const kevo_peaks *p = &m->roof_peaks;
        cJSON *pk = cJSON_AddObjectToObject(o, "roof_peaks");
        add_text_or_null(pk, "measured", p->measured);
        cJSON_AddNumberToObject(pk, "fp32_gflops", p->fp32_gflops);
        cJSON_AddNumberToObject(pk, "dram_gbs", p->mem_gbs);
        cJSON_AddNumberToObject(pk, "threads", p->threads);
        add_text_or_null(pk, "machine", p->machine);
    } else {
        cJSON_AddNullToObject(o, "roof_peaks");
    }
    cJSON *iters = cJSON_AddArrayToObject(o, "by_iteration");
    for (size_t i = 0; i < m->niterations; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "iteration", m->by_iteration[i].iteration);
        cJSON_AddNumberToObject(j, "cr_per_kernel", m->by_iteration[i].cr_per_kernel);
        cJSON_AddNumberToObject(j, "acc", m->by_iteration[i].acc);
        cJSON_AddItemToArray(iters, j);
    }
    cJSON *levels = cJSON_AddArrayToObject(o, "per_level");
    for (size_t i = 0; i < m->nlevels; i++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "level", m->per_level[i].level);
        rates_json(j, &m->per_level[i].r, true);
        cJSON_AddItemToArray(levels, j);
    }
    cJSON *tasks = cJSON_AddArrayToObject(o, "per_task");
    for (size_t k = 0; k < m->ntasks; k++) {
        const kevo_task_metrics *t = &m->per_task[k];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "task", t->task);
        cJSON_AddNumberToObject(j, "attempts", t->attempts);
        cJSON_AddBoolToObject(j, "compiled", t->compiled);
        cJSON_AddBoolToObject(j, "correct", t->correct);
        cJSON_AddNumberToObject(j, "first_correct_iteration", t->first_correct_iter);
        cJSON_AddNumberToObject(j, "first_speedup_iteration", t->first_speedup_iter);
        cJSON_AddNumberToObject(j, "best_speedup", t->best_speedup);
        add_text_or_null(j, "baseline", t->baseline); /* null: nothing of the task was timed */
        cJSON_AddNumberToObject(j, "speedup_vs_first_draft", t->speedup_vs_first);
        add_text_or_null(j, "machine", t->machine);
        if (t->roof_known) { /* null: not computable (kevo_task_metrics.roof_known) */
            cJSON_AddNumberToObject(j, "roof_fraction", t->roof_fraction);
            cJSON_AddStringToObject(j, "roof_bottleneck",
                                    t->roof_memory_bound ? "memory" : "compute");
        } else {
            cJSON_AddNullToObject(j, "roof_fraction");
            cJSON_AddNullToObject(j, "roof_bottleneck");
        }
        cJSON_AddItemToArray(tasks, j);
    }
    cJSON *machines = cJSON_AddArrayToObject(o, "machines");
    for (size_t k = 0; k < m->nmachines; k++) {
        const kevo_machine_metrics *x = &m->per_machine[k];
        cJSON *j = cJSON_CreateObject();
        add_text_or_null(j, "id", x->id);
        cJSON_AddStringToObject(j, "hostname", x->hostname);
        cJSON_AddStringToObject(j, "cpu", x->cpu);
        cJSON_AddStringToObject(j, "gpu", x->gpu);
        cJSON_AddNumberToObject(j, "attempts", x->attempts);
        cJSON_AddNumberToObject(j, "correct", x->correct);
        cJSON_AddNumberToObject(j, "tasks_correct", x->tasks);
        cJSON_AddNumberToObject(j, "geomean_speedup", x->geomean_speedup);
        cJSON_AddItemToArray(machines, j);
    }
    return o;
}

static int render_json(kevo_buf *out, kevo_run_metrics *const *runs, size_t n, double paired,
                       int npaired)
{
    cJSON *root;
    if (n == 1) {
        root = run_json(runs[0]);
    } else {
        root = cJSON_CreateObject();
        cJSON *arr = cJSON_AddArrayToObject(root, "runs");
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(arr, run_json(runs[i]));
        if (n == 2) {
            /* null when no task was solved by both */
            if (npaired)
                cJSON_AddNumberToObject(root, "paired_geomean_ratio", paired);
            else
                cJSON_AddNullToObject(root, "paired_geomean_ratio");
            cJSON_AddNumberToObject(root, "paired_tasks", npaired);
        }
    }
    char *s = cJSON_Print(root);
    kevo_buf_puts(out, s);
    kevo_buf_puts(out, "\n");
    free(s);
    cJSON_Delete(root);
    return kevo_buf_error(out);
}

static int render_csv(kevo_buf *out, kevo_run_metrics *const *runs, size_t n)
{
    kevo_buf_puts(out, "run_id,task,attempts,compiled,correct,first_correct_iteration,"
                       "best_speedup,speedup_vs_first_draft,baseline,roof_fraction\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < runs[i]->ntasks; k++) {
            const kevo_task_metrics *t = &runs[i]->per_task[k];
            char roof[32] = ""; /* empty: not computable */
            if (t->roof_known)
                snprintf(roof, sizeof(roof), "%.4f", t->roof_fraction);
            kevo_buf_printf(out, "%lld,%s,%d,%d,%d,%d,%.4f,%.4f,%s,%s\n",
                            (long long)runs[i]->run_id, t->task, t->attempts, t->compiled,
                            t->correct, t->first_correct_iter, t->best_speedup,
                            t->speedup_vs_first, t->baseline[0] ? t->baseline : "", roof);
        }
    return kevo_buf_error(out);
}

/* The text table of one run's tasks. */
static void render_task_table(kevo_buf *out, const kevo_run_metrics *m)
{
    kevo_buf_printf(out, "%-32s %8s %8s %12s %10s %10s %7s  %s\n", "task", "attempts",
                    "correct", "first iter", "best", "vs draft", "roof", "over");
    for (size_t k = 0; k < m->ntasks; k++) {
        const kevo_task_metrics *t = &m->per_task[k];
        char roof[32] = "-";
        if (t->roof_known)
            snprintf(roof, sizeof(roof), "%.0f%%%c", 100 * t->roof_fraction,
                     t->roof_memory_bound ? 'm' : 'c');
        kevo_buf_printf(out, "%-32s %8d %8s %12d %9.2fx %9.2fx %7s  %s\n", t->task,
                        t->attempts, t->correct ? "yes" : "no", t->first_correct_iter,
                        t->best_speedup, t->speedup_vs_first, roof,
                        t->baseline[0] ? t->baseline : "-");
    }
    kevo_buf_puts(out, "\nover: what each speedup is measured against (c-reference: the "
                       "task's single-threaded C reference; torch-eager-cpu: its PyTorch "
                       "module, eager, same cores; -: nothing timed)\nroof: the fastest "
                       "correct kernel's share of the roofline bound (m: memory-bound, c: "
                       "compute-bound; -: not computable)\n");
    if (m->roof_note[0])
        kevo_buf_printf(out, "roof: %s\n", m->roof_note);
    if (m->roof_peaks_known)
        kevo_buf_printf(out,
                        "roof: against the peaks `kevo calibrate` measured %s (%.1f GFLOP/s "
                        "fp32, %.1f GB/s DRAM, %d threads); bandwidths move with a shared "
                        "machine's load\n",
                        m->roof_peaks.measured[0] ? m->roof_peaks.measured
                                                  : "at an unrecorded time",
                        m->roof_peaks.fp32_gflops, m->roof_peaks.mem_gbs, m->roof_peaks.threads);
    kevo_buf_puts(out, "\n");
    if (m->nmachines < 2)
        return;
    /* workers on several machines: every speedup is one machine's ratio;
     * the summary per machine keeps them apart */
    kevo_buf_printf(out, "measured on %zu machines (each speedup on one; summaries per "
                         "machine):\n", m->nmachines);
    kevo_buf_printf(out, "  %-10s %-16s %-34s %8s %8s %6s %8s\n", "machine", "host", "cpu",
                    "attempts", "correct", "tasks", "geomean");
    for (size_t k = 0; k < m->nmachines; k++) {
        const kevo_machine_metrics *x = &m->per_machine[k];
        kevo_buf_printf(out, "  %-10.8s %-16.16s %-34.34s %8d %8d %6d %7.2fx\n",
                        x->id[0] ? x->id : "unknown", x->hostname[0] ? x->hostname : "-",
                        x->cpu[0] ? x->cpu : "-", x->attempts, x->correct, x->tasks,
                        x->geomean_speedup);
    }
    kevo_buf_puts(out, "\n");
}

/* pass@k rows, for the k some run has. */
static void render_pass_at_k(kevo_buf *out, kevo_run_metrics *const *runs, size_t n)
{
    static const int ks[KEVO_REPORT_PASS_K_MAX] = {1, 5, 10};
    for (size_t j = 0; j < KEVO_REPORT_PASS_K_MAX; j++) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= runs[i]->paper.npass_at_k > j;
        if (!any)
            break;
        char label[40];
        snprintf(label, sizeof(label), "pass@%d (draft samples)", ks[j]);
        kevo_buf_printf(out, "%-34s", label);
        for (size_t i = 0; i < n; i++) {
            if (runs[i]->paper.npass_at_k > j)
                kevo_buf_printf(out, " %13.1f%%", 100 * runs[i]->paper.pass_at_k[j].value);
            else
                kevo_buf_printf(out, " %14s", "-");
        }
        kevo_buf_puts(out, "\n");
    }
}

#define ROW(label, fmtspec, expr)                                                                  \
    do {                                                                                           \
        kevo_buf_printf(out, "%-34s", label);                                                      \
        for (size_t i = 0; i < n; i++) {                                                           \
            const kevo_run_metrics *m = runs[i];                                                   \
            kevo_buf_printf(out, " " fmtspec, expr);                                               \
        }                                                                                          \
        kevo_buf_puts(out, "\n");                                                                  \
    } while (0)

/* text: per-task table of the first run, then the summary side by side */
static int render_text(kevo_buf *out, kevo_run_metrics *const *runs, size_t n, double paired,
                       int npaired)
{
    if (n == 1)
        render_task_table(out, runs[0]);
    kevo_buf_printf(out, "%-34s", "run");
    for (size_t i = 0; i < n; i++)
        kevo_buf_printf(out, " %14lld", (long long)runs[i]->run_id);
    kevo_buf_puts(out, "\n");
    ROW("tasks", "%14d", m->tasks);
    ROW("attempts", "%14d", m->attempts);
    ROW("compiled_rate (per operator)", "%13.1f%%", 100 * m->compiled_rate);
    ROW("correct_rate (per operator)", "%13.1f%%", 100 * m->correct_rate);
    ROW("correct_rate (per attempt)", "%13.1f%%", 100 * m->attempt_correct_rate);
    ROW("round1_cr (first attempt)", "%13.1f%%", 100 * m->paper.round1_cr);
    ROW("round1_acc (first attempt)", "%13.1f%%", 100 * m->paper.round1_acc);
    render_pass_at_k(out, runs, n);
    ROW("fast_1 (correct and faster)", "%13.1f%%", 100 * m->fast_1);
    ROW("fast_2 (correct and >2x faster)", "%13.1f%%", 100 * m->fast_2);
    ROW("geomean_speedup vs reference", "%13.2fx", m->geomean_speedup);
    ROW("median_speedup_vs_first_draft", "%13.2fx", m->median_speedup_vs_first_draft);
    kevo_buf_printf(out, "%-34s", "median roof fraction (best)");
    for (size_t i = 0; i < n; i++) {
        if (runs[i]->roof_tasks > 0 && isfinite(runs[i]->median_roof_fraction))
            kevo_buf_printf(out, " %13.1f%%", 100 * runs[i]->median_roof_fraction);
        else
            kevo_buf_printf(out, " %14s", "-");
    }
    kevo_buf_puts(out, "\n");
    ROW("  IQR low", "%13.2fx", m->iqr_low);
    ROW("  IQR high", "%13.2fx", m->iqr_high);
    ROW("iterations to first correct", "%14.1f", m->mean_iters_to_first_correct);
    ROW("share reaching >= 1.1x", "%13.1f%%", 100 * m->speedup_1_1_rate);
    ROW("iterations to first >= 1.1x", "%14.1f", m->mean_iters_to_first_speedup);
    ROW("tokens_prompt", "%14lld", (long long)m->tokens_prompt);
    ROW("tokens_completion", "%14lld", (long long)m->tokens_completion);
    ROW("tokens estimated", "%14s", m->tokens_estimated ? "yes" : "no");
    ROW("built-in (zero-token) attempts", "%14d", m->builtin_attempts);
    ROW("tokens saved (estimate)", "%14.0f", m->tokens_saved_estimate);
    ROW("wall time (s)", "%14.0f", m->wall_s);
    if (n == 2 && npaired)
        kevo_buf_printf(out, "%-34s %14.3f  (over %d task(s) both solved)\n",
                        "paired geomean ratio (A / B)", paired, npaired);
    else if (n == 2)
        kevo_buf_printf(out, "%-34s %14s  (no task solved by both)\n",
                        "paired geomean ratio (A / B)", "-");
    return kevo_buf_error(out);
}
#undef ROW

int kevo_report_render(kevo_buf *out, kevo_run_metrics *const *runs, size_t n,
                       kevo_report_format fmt)
{
    if (fmt == KEVO_REPORT_HTML)
        return kevo_error_set(KEVO_EINVAL, "report: HTML needs the store; use kevo_report_html()");
    double paired = NAN;
    int npaired = 0;
    int error = 0;
    if (n == 2 && fmt != KEVO_REPORT_CSV &&
        (error = kevo_report_paired(&paired, &npaired, runs[0], runs[1])) < 0)
        return error;
    if (fmt == KEVO_REPORT_JSON)
        return render_json(out, runs, n, paired, npaired);
    if (fmt == KEVO_REPORT_CSV)
        return render_csv(out, runs, n);
    return render_text(out, runs, n, paired, npaired);
}
