/*
 * kevo/report.h - metrics of runs, computed from the store (never
 * mutating it), and their text / JSON / CSV forms. Field names follow
 * DESIGN.md "Reports".
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

typedef enum { KEVO_REPORT_TEXT, KEVO_REPORT_JSON, KEVO_REPORT_CSV } kevo_report_format;
/* Render one or more runs (several = side by side). */
int kevo_report_render(kevo_buf *out, kevo_run_metrics *const *runs, size_t n,
                       kevo_report_format fmt);

#ifdef __cplusplus
}
#endif
#endif
