/*
 * kevo/report.h - metrics of runs, computed from the store (never
 * mutating it), and their text / JSON / CSV / HTML forms. Field names
 * follow DESIGN.md "Reports". The calls that take a store load what they
 * need first and then compute or render from memory (docs/report.md
 * "Layout").
 */
#ifndef KEVO_REPORT_H
#define KEVO_REPORT_H

#include "kevo/memory.h"
#include "kevo/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_task_metrics {
    char *task;
    int attempts;
    bool compiled;             /* any attempt passed the compile gate */
    bool correct;              /* any correct attempt */
    int first_correct_iter;    /* 1-based; 0 = none */
    int first_speedup_iter;    /* 1-based first attempt >= 1.1x the reference; 0 = none */
    double best_speedup;       /* over the reference; 0 = none */
    double first_correct_us, best_us;
    double first_correct_speedup;
    double speedup_vs_first;   /* best speedup / speedup of the first correct kernel */
    int64_t tokens_prompt, tokens_completion;
} kevo_task_metrics;

typedef struct kevo_run_metrics {
    int64_t run_id;
    char *config_json;
    char *status;
    int tasks;
    int attempts;
    double compiled_rate, correct_rate;             /* per operator */
    double attempt_compiled_rate, attempt_correct_rate; /* per attempt */
    double fast_1, fast_2;
    double geomean_speedup;             /* over tasks with a correct kernel */
    double median_speedup_vs_first_draft, iqr_low, iqr_high;
    double mean_iters_to_first_correct;
    double mean_iters_to_first_speedup; /* over tasks that reached >= 1.1x */
    double speedup_1_1_rate;            /* share of tasks that reached >= 1.1x */
    int64_t tokens_prompt, tokens_completion;
    double tokens_per_solved_task;
    int builtin_attempts;         /* attempts made by the built-in recipes */
    double tokens_saved_estimate; /* builtin attempts x mean tokens of an LLM attempt */
    double wall_s;
    kevo_task_metrics *per_task;
    size_t ntasks;
} kevo_run_metrics;

/* Metrics of one run (run_id 0 = the latest). *out is the caller's. */
int kevo_report_metrics(kevo_run_metrics **out, kevo_memory *mem, int64_t run_id);
void kevo_run_metrics_free(kevo_run_metrics *m);

typedef enum {
    KEVO_REPORT_TEXT,
    KEVO_REPORT_JSON,
    KEVO_REPORT_CSV,
    KEVO_REPORT_HTML /* needs the store: kevo_report_html() */
} kevo_report_format;
/* Render one or more runs (several = side by side), appending to `out`.
 * KEVO_EINVAL for KEVO_REPORT_HTML, which reads attempts, sources and
 * items from the store: use kevo_report_html(). */
int kevo_report_render(kevo_buf *out, kevo_run_metrics *const *runs, size_t n,
                       kevo_report_format fmt);

/* Render runs[0..n) (1 to 4; several = on the same axes, as --compare) as
 * one self-contained HTML page appended to `out`: summary cards whose
 * numbers are exactly the metrics' (each in an element with
 * data-metric="<JSON key>" data-value="<%.17g>"), the runs' configuration,
 * SVG figures (cumulative correct/compiled rate by iteration, best speedup
 * per task, best-so-far trajectories, tokens per iteration), a sortable
 * per-task table, the memory's highest/lowest-Q items per stage with their
 * use counts, and per task the attempt tree, best source and failure
 * feedback. `mem` is the store the metrics came from; it is only read.
 * `runs` are borrowed. Everything from the store is HTML-escaped; the page
 * loads nothing from anywhere (inline CSS/SVG/JS under a
 * Content-Security-Policy). On error `out` may hold a partial page.
 * Returns 0, KEVO_EINVAL (no run, more than 4), KEVO_ENOMEM or a store
 * error. */
int kevo_report_html(kevo_buf *out, kevo_memory *mem, kevo_run_metrics *const *runs, size_t n);

#ifdef __cplusplus
}
#endif
#endif
