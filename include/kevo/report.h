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
#include "kevo/roofline.h"
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
    double best_speedup;       /* over the baseline; 0 = none */
    char baseline[24];         /* what the speedups are over: "c-reference" (the task's C
                                  reference) or "torch-eager-cpu" (its PyTorch module) */
    double first_correct_us, best_us;
    double first_correct_speedup;
    double speedup_vs_first;   /* best speedup / speedup of the first correct kernel */
    int64_t tokens_prompt, tokens_completion;
    /* the papers' forms (docs/report.md "Definitions") */
    int level;                 /* from the store's tasks table; 0 = unknown */
    bool round1_compiled;      /* the task's first attempt (smallest iteration) compiled */
    bool round1_correct;       /* ... was correct */
    int first_compiled_iter;   /* 1-based smallest iteration of a compiled attempt; 0 = none */
    int first_correct_min_iter; /* 1-based smallest iteration of a correct attempt; 0 = none */
    int draft_samples;         /* draft-stage attempts: the pass@k samples */
    int draft_correct;         /* ... of them correct */
    char machine[33];          /* the machine that measured the best speedup ("" unknown) */
    char best_us_machine[33];  /* the machine that measured best_us ("" unknown) */
    /* the fastest correct kernel against the roofline (kevo/roofline.h), from
     * the task's flops/bytes (its task.json at the tasks table's suite_path)
     * and best_us; roof_known false (JSON null) without `kevo calibrate`'s
     * peaks, without the task's folder, with flops "0" (unknown), when
     * nothing was timed, or when best_us was measured on another machine
     * than the peaks */
    bool roof_known;
    double roof_fraction;      /* achieved / min(fp32 peak, intensity x bw(bytes)) */
    bool roof_memory_bound;    /* the bound is the bandwidth's */
} kevo_task_metrics;

/* A run's attempts measured on one machine (kevo_attempt.machine). A
 * speedup is a ratio of two timings on one machine (the kernel and its
 * baseline, interleaved); a run whose workers ran on several machines is
 * also summarised per machine, each over the best speedups measured
 * there, so that no figure mixes machines. */
typedef struct kevo_machine_metrics {
    char id[33];       /* "" = attempts of stores before machines were kept */
    char hostname[64]; /* from the store's machines; "" unknown */
    char cpu[128];
    char gpu[128];
    int attempts, correct;
    int tasks;              /* tasks with a correct kernel measured here */
    double geomean_speedup; /* kevo_report_geomean over those tasks' best here */
} kevo_machine_metrics;

/* The k of pass@k a report gives, those not above the run's attempts per
 * task (the largest attempt count of one of its tasks). */
#define KEVO_REPORT_PASS_K_MAX 3 /* k = 1, 5, 10 */

typedef struct kevo_pass_at_k {
    int k;
    double value; /* mean over the tasks with a draft sample */
} kevo_pass_at_k;

/* The rates the papers give, over some set of tasks (a run's, a level's). */
typedef struct kevo_paper_rates {
    int tasks;
    double cr_per_kernel;      /* share of tasks with a compiled attempt (CR) */
    double acc;                /* share of tasks with a correct attempt (Acc) */
    double round1_cr, round1_acc; /* the same over each task's first attempt only */
    double fast_1;
    double geomean_speedup;    /* kevo_report_geomean over the tasks with a correct kernel */
    kevo_pass_at_k pass_at_k[KEVO_REPORT_PASS_K_MAX];
    size_t npass_at_k;
    int pass_at_k_tasks;       /* tasks with at least one draft sample (averaged over) */
} kevo_paper_rates;

/* Cumulative rates after iterations 1..iteration of every task. */
typedef struct kevo_iteration_rates {
    int iteration; /* 1-based */
    double cr_per_kernel, acc;
} kevo_iteration_rates;

typedef struct kevo_level_rates {
    int level; /* 0 = unknown */
    kevo_paper_rates r;
} kevo_level_rates;

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
    /* the papers' forms (docs/report.md "Definitions"); paper.cr_per_kernel
     * and paper.acc equal compiled_rate and correct_rate */
    kevo_paper_rates paper;
    kevo_iteration_rates *by_iteration; /* [i - 1] = after iteration i */
    size_t niterations;
    kevo_level_rates *per_level; /* ascending level */
    size_t nlevels;
    bool tokens_estimated;            /* some attempt's token counts are estimates */
    double geomean_speedup_all_tasks; /* kevo_report_geomean over every task (failed = 1.0x) */
    kevo_machine_metrics *per_machine; /* by first attempt measured there */
    size_t nmachines;
    /* the roofline (kevo_task_metrics.roof_*): the median over the tasks
     * with a known fraction (roof_tasks of them; NaN, JSON null, when
     * none); roof_note says why none can be known ("" when peaks were
     * read: e.g. "no machine peaks yet (run `kevo calibrate`)"), or how
     * many fractions read above 1 (the calibration below what the run
     * reached) */
    int roof_tasks;
    double median_roof_fraction;
    char roof_note[200];
    /* the peaks the fractions are against (roof_peaks_known false without
     * them): a shared machine's bandwidths move with its load, so the
     * report says which calibration, and of when, it used */
    bool roof_peaks_known;
    kevo_peaks roof_peaks;
} kevo_run_metrics;

/* The one geometric mean of best speedups: exp(mean(ln v)) over the given
 * tasks, v = the task's best correct speedup, or 1.0 (the reference stands)
 * for a task with no correct kernel or none with a measured (positive)
 * speedup. Which tasks are given is the caller's; 0 when there are none.
 * geomean_speedup gives the tasks with a correct kernel,
 * geomean_speedup_all_tasks every task, bench/compare_runs.py the tasks
 * of every compared run. */
double kevo_report_geomean(const kevo_task_metrics *const *tasks, size_t n);
/* A task's value in kevo_report_geomean(). */
double kevo_report_best_value(const kevo_task_metrics *t);

/* --compare A B: over the tasks (by name) that both runs solved, the
 * geometric mean of best speedup in a / best speedup in b (values as in
 * kevo_report_geomean), and how many tasks that is. *out_ratio is NaN when
 * no task is paired. Returns 0 or KEVO_ENOMEM. */
int kevo_report_paired(double *out_ratio, int *out_tasks, const kevo_run_metrics *a,
                       const kevo_run_metrics *b);

/* Metrics of one run (run_id 0 = the latest). *out is the caller's. */
int kevo_report_metrics(kevo_run_metrics **out, kevo_memory *mem, int64_t run_id);
void kevo_run_metrics_free(kevo_run_metrics *m);

typedef enum {
    KEVO_REPORT_TEXT,
    KEVO_REPORT_JSON,
    KEVO_REPORT_CSV,
    KEVO_REPORT_HTML /* needs the store: kevo_report_html() */
} kevo_report_format;
/* Render one or more runs (several = side by side), appending to `out`;
 * for two runs, JSON and text add their paired geometric-mean ratio.
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

/* One task of a run and its best correct kernel (`kevo best`). */
typedef struct kevo_best_kernel {
    const char *task;            /* borrowed from the run's attempts */
    const kevo_attempt *attempt; /* the best correct attempt; NULL = none correct */
    const char *suite_path;      /* the task's folder from the tasks table; NULL = unknown */
} kevo_best_kernel;

typedef struct kevo_best_kernels {
    int64_t run_id;
    kevo_run *run;              /* the run's record (uid, config_json) */
    kevo_best_kernel *per_task; /* in the order of kevo_run_metrics.per_task */
    size_t ntasks;
    kevo_attempt_list *list_;       /* owns the attempts; private */
    kevo_memory_task_array *tasks_; /* owns the suite paths; private */
} kevo_best_kernels;

/* Per task of run `run_id` (0 = the latest), its best correct attempt,
 * chosen as kevo_report_metrics() and the HTML page choose it: the first
 * attempt (decision order) with the highest speedup, the first correct one
 * when none has a speedup. Only reads the store. *out is the caller's,
 * freed by kevo_best_kernels_free() (NULL is a no-op); everything it
 * points to lives as long as it. Returns 0, KEVO_ENOTFOUND (no runs, or
 * no run `run_id`), KEVO_ENOMEM or a store error. */
int kevo_report_best_kernels(kevo_best_kernels **out, kevo_memory *mem, int64_t run_id);
void kevo_best_kernels_free(kevo_best_kernels *b);

#ifdef __cplusplus
}
#endif
#endif
