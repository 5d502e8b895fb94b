/*
 * report/model.h - internal to src/report: everything a report shows,
 * loaded from the store once (load.c) into plain memory, and the calls
 * between the loader, the metrics and the renderers.
 *
 * The split is the point: load.c is the only file of src/report that
 * calls the store (kevo_memory_*); metrics.c computes from what it was
 * handed; the renderers (render.c, html*.c, svg.c) only read a model or
 * metrics and never reach the store, the file system or the clock beyond
 * the page's generation time and nonce. A model is read-only once loaded.
 */
#ifndef KEVO_REPORT_MODEL_H
#define KEVO_REPORT_MODEL_H

#include "kevo/memory.h" /* the record types only; the store is load.c's */
#include "kevo/report.h"
#include "kevo/roofline.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs one HTML page compares at most. */
#define KEVO_REPORT__MAX_RUNS 4
/* Iterations beyond this are counted at this one (a corrupt store must not
 * make a renderer allocate per-iteration arrays of any size). */
#define KEVO_REPORT__MAX_ITERS 10000

/* An attempt's 0-based iteration, clamped to [0, KEVO_REPORT__MAX_ITERS). */
static inline int kevo_report__clamp_iter(int it)
{
    return it < 0 ? 0 : it >= KEVO_REPORT__MAX_ITERS ? KEVO_REPORT__MAX_ITERS - 1 : it;
}

/* One task of one run. */
typedef struct kevo_report__task {
    const kevo_task_metrics *tm; /* borrowed from the run's metrics */
    size_t *att;                 /* indices into the run's list, decision order */
    size_t natt, catt;
    int first_compiled, first_correct; /* 1-based iteration; 0 = none */
    size_t best;                       /* index into the list; SIZE_MAX = none */
    double flops, bytes;               /* from task.json; 0 = unknown */
} kevo_report__task;

/* One run: its record, its attempts, its tasks in the metrics' order. */
typedef struct kevo_report__run {
    const kevo_run_metrics *m; /* borrowed */
    kevo_run *run;
    kevo_attempt_list *list;
    kevo_report__task *tasks; /* m->ntasks */
    size_t *by_name;          /* indices into tasks, sorted by name */
    int iters;                /* iterations seen (largest iteration + 1) */
} kevo_report__run;

/* An item with a learned Q at one stage. */
typedef struct kevo_report__q_entry {
    const kevo_item *item; /* borrowed from the model's items */
    double q;
    int64_t updates;
} kevo_report__q_entry;

/* The items with a learned Q at one stage, highest Q first (then more
 * updates, then lower id). */
typedef struct kevo_report__q_stage {
    kevo_stage stage;
    kevo_report__q_entry *e;
    size_t n;
} kevo_report__q_stage;

/* One `used` edge of an attempt of runs[run]. */
typedef struct kevo_report__use {
    int64_t item;
    int stage;
    int run;
} kevo_report__use;

typedef struct kevo_report__model {
    kevo_report__run *runs;
    size_t nruns;     /* 1 .. KEVO_REPORT__MAX_RUNS */
    char *store_path; /* as the store names itself */
    bool have_peaks;  /* `kevo calibrate` peaks were found */
    kevo_peaks peaks;
    kevo_item_list *items;     /* every item, without bodies */
    kevo_report__q_stage q[2]; /* draft (Q1), refine (Q2) */
    kevo_report__use *uses;    /* sorted by item, stage, run */
    size_t nuses;
} kevo_report__model;

/* The run `run_id` (0 = the latest) and its attempts in decision order;
 * *out_id is the id resolved. *out_run and *out_list are the caller's
 * (kevo_run_free, kevo_attempt_list_free), NULL on error. Returns 0,
 * KEVO_ENOTFOUND (no runs yet, no such run) or a store error. */
int kevo_report__run_load(kevo_run **out_run, kevo_attempt_list **out_list, int64_t *out_id,
                          kevo_memory *mem, int64_t run_id);

/* All an HTML page about runs[0..n) shows, from `mem` (only read);
 * `runs` stay borrowed and must outlive the model. *out is the caller's
 * (kevo_report__model_free). Returns 0, KEVO_ENOMEM or a store error. */
int kevo_report__model_load(kevo_report__model **out, kevo_memory *mem,
                            kevo_run_metrics *const *runs, size_t n);
void kevo_report__model_free(kevo_report__model *model);

/* Index of the task named `name` in v->tasks, or -1. */
long kevo_report__task_find(const kevo_report__run *v, const char *name);
/* How many `used` edges item has at `stage` in runs[run]. */
size_t kevo_report__use_count(const kevo_report__model *model, int64_t item, kevo_stage stage,
                              size_t run);

/* Every task of the store (their levels, for the metrics); *out is the
 * caller's (kevo_memory_task_array_free). Returns 0 or a store error. */
int kevo_report__tasks_load(kevo_memory_task_array **out, kevo_memory *mem);

/* The hostname, CPU and GPU of each of m's machines, from the store's
 * machines (left "" for one the store does not know). */
int kevo_report__machines_name(kevo_run_metrics *m, kevo_memory *mem);

/* The metrics of one loaded run (metrics.c; no store); `tasks` (may be
 * NULL: every level unknown) gives each task's level. *out is the
 * caller's. Returns 0 or KEVO_ENOMEM. */
int kevo_report__metrics_compute(kevo_run_metrics **out, int64_t run_id, const kevo_run *run,
                                 const kevo_attempt_list *list,
                                 const kevo_memory_task_array *tasks);

/* The roofline fields of m (kevo_task_metrics.roof_*, median_roof_fraction,
 * roof_note) from each task's work, flops[k] and bytes[k] for
 * m->per_task[k] (0 = unknown), and the peaks (NULL: none, `why` says
 * why; metrics.c, no store). */
void kevo_report__roofline_compute(kevo_run_metrics *m, const double *flops, const double *bytes,
                                   const kevo_peaks *peaks, const char *why);

/* The work (flops, bytes at the timed sizes) of m's solved tasks from their
 * task.json at the suite_path `tasks` records, and this machine's peaks,
 * then kevo_report__roofline_compute (load.c: the file system, no store
 * call). Returns 0 or KEVO_ENOMEM; an unreadable task stays unknown. */
int kevo_report__roofline_load(kevo_run_metrics *m, const kevo_memory_task_array *tasks);

/* pass@k of one task with n samples of which c are correct: the unbiased
 * estimator 1 - C(n-c, k) / C(n, k); with fewer samples than k, 1 when
 * any is correct and 0 otherwise (all n are drawn). */
double kevo_report__pass_at_k(int n, int c, int k);

/* The HTML page of a loaded model, appended to `out` (html.c; no store).
 * Returns 0, KEVO_ENOMEM; `out` may hold a partial page on error. */
int kevo_report__html_render(kevo_buf *out, const kevo_report__model *model);

#endif
