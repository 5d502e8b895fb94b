/*
 * kevo/verify.h - the four gates (anti-hack, compile, correctness,
 * latency), output comparison with structured feedback, timing statistics.
 * The verifier judges; it never chooses what to try next and never talks
 * to the store.
 *
 * Usage: kevo_evaluator_new() builds and runs the task's reference once
 * (expected outputs stay in kevo's memory, never on disk, never in a
 * candidate's process); kevo_evaluator_eval() judges any number of
 * candidates against it. docs/evaluation.md explains the method.
 */
#ifndef KEVO_VERIFY_H
#define KEVO_VERIFY_H

#include "kevo/roofline.h"
#include "kevo/task.h"
#include "kevo/verdict.h"
#include "kevo/util.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEVO_GATE_MAX 5
typedef struct kevo_gate {
    const char *name; /* "anti-hack", "audit", "compile", "correctness", "latency" */
    bool ran;
    bool ok;
    double seconds;
    kevo_buf messages; /* one message per line */
} kevo_gate;

typedef struct kevo_latency {
    double candidate_us, reference_us; /* medians */
    double candidate_min_us, reference_min_us;
    double candidate_cv, reference_cv; /* coefficient of variation */
    int candidate_samples, reference_samples;
    double speedup; /* reference_us / candidate_us */
    char baseline[24]; /* what the reference side is: "c-reference" (the task's
                          single-threaded C) or "torch-eager-cpu" (its PyTorch module) */
} kevo_latency;

typedef struct kevo_eval_result {
    kevo_verdict verdict;
    kevo_gate gates[KEVO_GATE_MAX];
    size_t ngates;
    char *feedback; /* what an LLM is shown: actionable, never the reference outputs */
    bool has_latency;
    kevo_latency latency;
    /* a timed kernel: its achieved rates from the task's flops/bytes at the
     * timed sizes and the candidate's median latency, and (has_bound) its
     * fraction of the roofline bound from `kevo calibrate`'s peaks */
    bool has_roofline;
    kevo_roofline roofline;
    double seconds;
} kevo_eval_result;

void kevo_eval_result_clear(kevo_eval_result *r);
/* One JSON object (DESIGN.md "Verdicts"). *out is the caller's (free()). */
int kevo_eval_result_json(char **out, const kevo_eval_result *r, const kevo_task *task,
                          bool pretty);
/* Just the "gates" array of that object, unformatted: the same bytes as
 * its "gates" member printed alone (what the store keeps as gates_json).
 * *out is the caller's (free()). Negative (KEVO_ENOMEM) when out of
 * memory. */
int kevo_eval_result_gates_json(char **out, const kevo_eval_result *r);

typedef struct kevo_eval_options {
    const char *backend;      /* default "c" */
    int seeds;                /* per size set, default 3 (minimum 3) */
    double min_time_s;        /* latency: minimum timed time per side, default 1.0 */
    int min_samples;          /* latency: minimum calls per side, default 10 */
    int max_samples;          /* latency: cap per side, default 1000 */
    double max_time_s;        /* latency: cap on the whole gate, default 30 */
    bool skip_latency;        /* stop after correctness */
    bool no_reference_cache;  /* rebuild and re-run the reference (src/verify/ref_cache.h) */
    bool skip_antihack;       /* tests of the sandbox only: the runtime defences alone */
    bool keep_workdir;        /* leave build directories for inspection */
    uint64_t mem_bytes;       /* runner address-space limit; 0 = automatic */
    /* Optional: a further judge between the static gate and the compile
     * (the model-based auditor of EvoKernel App. C.2, which the agent
     * supplies; the verifier knows nothing of models). Called with a
     * candidate that passed the static gate; sets *valid (anything but an
     * explicit yes must leave it false: fail closed) and *reason (malloc'd,
     * the callback's to give; may stay NULL). A negative return means the
     * judge could not run (its provider failed): kevo_evaluator_eval then
     * returns that error, without a verdict. The gate is named "audit". */
    int (*audit)(void *arg, const char *source, bool *valid, char **reason);
    void *audit_arg;
} kevo_eval_options;

void kevo_eval_options_default(kevo_eval_options *o);

typedef struct kevo_evaluator kevo_evaluator;

/* Build and run the reference on every size set and seed. Failures of the
 * reference are kevo's (or the task's) problem: a negative error with the
 * reason. *out is the caller's (kevo_evaluator_free). */
int kevo_evaluator_new(kevo_evaluator **out, const kevo_task *task, const kevo_eval_options *o);
/* Judge one candidate. Returns 0 with a verdict in *out (including
 * infra_error); negative only when kevo cannot work at all. */
int kevo_evaluator_eval(kevo_evaluator *ev, const char *source, kevo_eval_result *out);
/* Two candidates side by side (`kevo eval --versus`): each through the
 * gates as kevo_evaluator_eval would judge it, and when both pass the
 * correctness gate, one latency measurement for the two: every round
 * times the reference and both candidates on the same fresh inputs, in an
 * order that rotates, so that both see the same machine. Each result gets
 * its own latency against the reference; *pair the ratio of the two. */
typedef struct kevo_pair_latency {
    bool measured; /* both correct, timed in the same rounds */
    int rounds;    /* rounds that timed both */
    /* per round, b's time over a's (above 1: a is faster): median and
     * quartiles over the rounds */
    double ratio, ratio_q1, ratio_q3;
} kevo_pair_latency;
int kevo_evaluator_eval_pair(kevo_evaluator *ev, const char *source_a, const char *source_b,
                             kevo_eval_result *a, kevo_eval_result *b, kevo_pair_latency *pair);
void kevo_evaluator_free(kevo_evaluator *ev);
/* Whether the reference's outputs came from the reference cache (not
 * built and run by this evaluator). */
bool kevo_evaluator_reference_cached(const kevo_evaluator *ev);

/* Around CPU work of kevo's own that is neither a build nor a run of
 * kernel code (the built-in generator parsing and rewriting a source):
 * holds the machine's timing slot shared, as builds do, so that no latency
 * measurement of another thread or kevo process on this machine runs
 * beside it and loses a core to it. Nests with the evaluator's own holds;
 * not around waits (an LLM's answer): a measurement would wait for them. */
void kevo_verify_busy_begin(void);
void kevo_verify_busy_end(void);

/* What `kevo tasks check` reports about a task's reference. */
typedef struct kevo_reference_report {
    double build_s;
    double timed_ms;     /* median of the reference calls on the timed sizes */
    int near_constant;   /* outputs whose true values all sit within atol of one value */
    kevo_buf problems;   /* one line per problem */
} kevo_reference_report;
int kevo_evaluator_reference_report(kevo_reference_report *out, kevo_evaluator *ev);

/* ---- comparison (also used by fuzzing) ---- */
typedef struct kevo_compare_stats {
    int64_t count, mismatches, nan_actual, inf_actual;
    double max_abs, max_rel;
    int64_t max_abs_index;
    bool untouched; /* every element still holds the poison value */
} kevo_compare_stats;

/* Compare one output buffer. Appends a human/LLM-readable description of
 * the mismatches (first few coordinates, expected vs actual) to feedback
 * when there are any. dims/ndim give coordinates. */
void kevo_compare_output(kevo_compare_stats *st, kevo_buf *feedback, const char *name,
                         kevo_dtype type, const int64_t *dims, size_t ndim,
                         const void *expected, const void *actual, int64_t count,
                         double atol, double rtol);

/* Robust statistics of samples (sorted in place): median, min, CV. */
/* True when every element of actual is within atol + rtol*|expected| of
 * expected (integers: equal), with no NaN/Inf on either side. A false
 * answer is only a hint: call kevo_compare_output for the verdict. */
bool kevo_compare_allclose(kevo_dtype type, const void *expected, const void *actual,
                           int64_t count, double atol, double rtol);
void kevo_stats(double *samples, int n, double *median, double *min, double *cv);

#ifdef __cplusplus
}
#endif
#endif
