/*
 * kevo/agent.h - runs: the drafting -> refining loop over a suite, with the
 * experience memory, a generator (built-in recipes, or an LLM provider),
 * the verifier, resume after a kill, and a clean stop on Ctrl-C.
 *
 * The agent orchestrates; it does not format reports (src/report) and does
 * not judge kernels (src/verify).
 */
#ifndef KEVO_AGENT_H
#define KEVO_AGENT_H

#include "kevo/common.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_run_config {
    const char **paths;      /* suites or task folders */
    size_t npaths;
    const char *generator;   /* "builtin" (default), "openai", "replay" */
    const char *strategy;    /* "evo" (default): the full method; "refine": the papers'
                                iterative-refinement baseline (this task's history only,
                                newest correct kernel as start point); "passk": independent
                                samples, no feedback, no memory (LLM generators only) */
    const char *backend;     /* "c" */
    const char *db_path;     /* default "kevo.db" */
    int iterations;          /* per task, default 30 */
    uint64_t seed;           /* default 1 */
    const char *retrieval;   /* "value" (default) | "heuristic" | "random" */
    const char *context;     /* "active" (default) | "passive" (recent history, no selection) */
    int token_budget;        /* context tokens per prompt; 0 = the memory's default (6000) */
    /* LLM generators */
    const char *api_base, *model; /* flags; else KEVO_API_BASE / KEVO_MODEL */
    double temperature;      /* < 0: provider default */
    int max_tokens;          /* <= 0: provider default */
    const char *replay_path; /* --generator replay: the recording */
    const char *record_path; /* --record FILE: append every exchange */
    bool memory;             /* false: --memory off (no cross-task Q, no experience) */
    /* The method's hyper-parameters, one flag each (docs/memory.md): the same
     * values drive selection (context), learning (Q updates) and the
     * built-in generator's arms. */
    double epsilon;          /* exploration rate, default 0.1 */
    double alpha;            /* Q step size, default 0.3 */
    double q_init;           /* Q0 of an item or start point never updated, default 0.5 */
    int lambda;              /* candidate pool = lambda * pool_n items, default 3 */
    int pool_n;              /* N: experience items selected per prompt, default 6 */
    bool normalize;          /* z-score refine rewards (App. A form), default off */
    int max_tasks;           /* 0 = all */
    int jobs;                /* tasks in flight (default 1) */
    bool audit;              /* LLM runs: the model-based anti-hacking auditor */
    bool reflect;            /* LLM runs: an LLM reflection per attempt, stored as experience */
    double refine_with_builtin; /* LLM runs: share of refine iterations given to the
                                   zero-token built-in recipes (0 = none) */
    bool quick_timing;       /* shorter latency gate (demo, tests) */
    int64_t resume_run;      /* continue this run id */
    const char *memory_from; /* import an exported memory before starting */
    bool quiet;
    volatile sig_atomic_t *stop; /* set by a signal handler: finish the attempt in flight, stop */
} kevo_run_config;

void kevo_run_config_init(kevo_run_config *cfg);
/* NULL when the hyper-parameters are in range, else what is wrong (static). */
const char *kevo_run_config_check(const kevo_run_config *cfg);

/* Run (or resume) a whole run; prints progress on stdout. *out_run_id gets
 * the run id. Returns 0 when every task ran its budget, KEVO_EINTR when
 * stopped by the user (the run can be resumed), negative on errors. */
int kevo_agent_run(int64_t *out_run_id, const kevo_run_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
