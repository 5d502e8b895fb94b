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
#include "kevo/llm.h" /* the LLM settings' enums */
#include "kevo/memory.h" /* kevo_stage */
#include "kevo/verdict.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The run's choices, parsed from their names once (the command line and a
 * resumed run's stored configuration alike); inside kevo they are compared
 * as enums. *_name() give the stored names; *_parse() return KEVO_EINVAL
 * naming the field and the accepted names. */
typedef enum {
    KEVO_STRATEGY_EVO,    /* the full method */
    KEVO_STRATEGY_REFINE, /* the papers' iterative-refinement baseline: this task's history
                             only, the newest correct kernel as the start point */
    KEVO_STRATEGY_PASSK,  /* independent samples, no feedback, no memory (LLM generators) */
    KEVO_STRATEGY_COUNT
} kevo_strategy;
typedef enum {
    KEVO_RETRIEVAL_VALUE,     /* epsilon-greedy over learned Q (the method) */
    KEVO_RETRIEVAL_HEURISTIC, /* similarity only, fastest start point */
    KEVO_RETRIEVAL_RANDOM,    /* built-in: recipes at random */
    KEVO_RETRIEVAL_COUNT
} kevo_retrieval;
typedef enum {
    KEVO_RUN_CONTEXT_ACTIVE,  /* selected, token-budgeted context (KOPE) */
    KEVO_RUN_CONTEXT_PASSIVE, /* recent history, no selection */
    KEVO_RUN_CONTEXT_COUNT
} kevo_run_context;

const char *kevo_strategy_name(kevo_strategy s);
int kevo_strategy_parse(kevo_strategy *out, const char *name);
const char *kevo_retrieval_name(kevo_retrieval r);
int kevo_retrieval_parse(kevo_retrieval *out, const char *name);
typedef enum {
    KEVO_START_SCORE_Q2,         /* the start point's learned Q2 (EvoKernel) */
    KEVO_START_SCORE_Q2_LATENCY, /* Q2 + log(speedup / best): kevo's latency-aware score */
    KEVO_START_SCORE_COUNT
} kevo_start_score;

const char *kevo_run_context_name(kevo_run_context c);
const char *kevo_start_score_name(kevo_start_score s);
int kevo_start_score_parse(kevo_start_score *out, const char *name);
int kevo_run_context_parse(kevo_run_context *out, const char *name);

/* ---- what a run reports while it works ---------------------------------
 *
 * The agent tells an observer what happens as events; it knows nothing of
 * terminals. Without an observer (library users, tests) it prints each
 * event's plain line (kevo_run_event_line) on stdout (failures on stderr),
 * as `kevo run` piped does. The observer is called from the task workers'
 * threads, never two calls at once (the agent serialises them); a call
 * should return quickly (the worker waits), must not call back into the
 * run, and owns nothing it is handed: the event and its strings live for
 * the call only. */
typedef enum {
    KEVO_RUN_EVENT_RUN_STARTED,      /* run_id, total, iterations, generator, db_path */
    KEVO_RUN_EVENT_TASK_STARTED,     /* index, task, first_iteration: it will run attempts */
    KEVO_RUN_EVENT_ATTEMPT_PHASE,    /* index, task, iteration, stage, phase */
    KEVO_RUN_EVENT_ATTEMPT_FINISHED, /* + summary, verdict, speedup, best */
    KEVO_RUN_EVENT_TASK_SKIPPED,     /* index, task, message: why it cannot run */
    KEVO_RUN_EVENT_TASK_COMPLETE,    /* index, task, attempts: already complete (resume) */
    KEVO_RUN_EVENT_TASK_FAILED,      /* index, task_dir, message: the run goes on or stops */
    KEVO_RUN_EVENT_TASK_FINISHED,    /* index, task_dir: done with it, whatever the end */
    KEVO_RUN_EVENT_PROGRESS,         /* done, worked, total, elapsed_s, left_s */
    KEVO_RUN_EVENT_COUNT
} kevo_run_event_kind;

typedef enum {
    KEVO_ATTEMPT_PROPOSING, /* the generator (recipes, or the LLM) is at work */
    KEVO_ATTEMPT_VERIFYING, /* the verifier's gates: compile, correctness, timing */
    KEVO_ATTEMPT_PHASE_COUNT
} kevo_attempt_phase;

/* "proposing", "verifying". Static. */
const char *kevo_attempt_phase_name(kevo_attempt_phase p);

/* One event. Fields not listed for its kind are zero / NULL. */
typedef struct kevo_run_event {
    kevo_run_event_kind kind;
    int64_t run_id;
    size_t index;          /* the task's position in the run, from 0 */
    size_t total;          /* the run's tasks */
    const char *task;      /* the task's name */
    const char *task_dir;  /* the task's folder */
    /* RUN_STARTED */
    int iterations;        /* per task */
    const char *generator, *db_path;
    /* TASK_STARTED, ATTEMPT_*: iteration from 0 (first_iteration > 0 on resume) */
    int first_iteration, iteration;
    kevo_stage stage;      /* draft or refine */
    kevo_attempt_phase phase;
    /* ATTEMPT_FINISHED */
    const char *summary;   /* what the generator did ("" when nothing) */
    kevo_verdict verdict;
    double speedup;        /* 0 when not timed */
    double best;           /* the task's best speedup so far in this run */
    /* TASK_COMPLETE */
    int attempts;
    /* TASK_SKIPPED, TASK_FAILED */
    const char *message;
    /* PROGRESS (after every task, run-wide) */
    size_t done;           /* tasks finished, skipped or already complete */
    size_t worked;         /* of which ran attempts */
    double elapsed_s;      /* since the run (or its resumption) started */
    double left_s;         /* estimate from the mean task time; < 0 when unknown */
} kevo_run_event;

#define KEVO_RUN_OBSERVER_VERSION 1
typedef struct kevo_run_observer {
    unsigned version; /* KEVO_RUN_OBSERVER_VERSION */
    void *ctx;
    void (*on_event)(void *ctx, const kevo_run_event *ev);
} kevo_run_observer;

/* An event's plain line, the one printed without an observer. text is ""
 * when the event prints nothing (phases, task starts; with quiet all but
 * the skip and failure lines); to_stderr for failures. verdict_at and
 * verdict_len mark the verdict's name in an attempt's line (len 0 when
 * none), for a renderer that colours it. text has no newline. */
typedef struct kevo_run_line {
    char text[512];
    bool to_stderr;
    size_t verdict_at, verdict_len;
} kevo_run_line;
void kevo_run_event_line(kevo_run_line *out, const kevo_run_event *ev, bool quiet);

typedef struct kevo_run_config {
    const char **paths;      /* suites or task folders */
    size_t npaths;
    const char *generator;   /* "builtin" (default) or a registered LLM provider's name */
    kevo_strategy strategy;  /* evo (default) */
    const char *backend;     /* a registered backend's name, default "c" */
    const char *db_path;     /* default "kevo.db" */
    int iterations;          /* per task, default 30 */
    uint64_t seed;           /* default 1 */
    kevo_retrieval retrieval; /* value (default) */
    kevo_run_context context; /* active (default) */
    kevo_start_score start_score; /* how refine start points are valued: q2 (default) */
    int token_budget;        /* context tokens per prompt; 0 = the memory's default (6000) */
    /* LLM generators */
    const char *api_base, *model; /* flags; else KEVO_API_BASE / KEVO_MODEL */
    double temperature;           /* < 0: none sent (KEVO_TEMPERATURE, else the server's) */
    int max_tokens;          /* <= 0: provider default */
    kevo_llm_tokens_param max_tokens_param;     /* the budget's field; AUTO (default):
                                                   KEVO_MAX_TOKENS_PARAM, else learnt */
    kevo_llm_reasoning_effort reasoning_effort; /* DEFAULT: KEVO_REASONING_EFFORT, else none */
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
    int audit;               /* the model-based auditor (EvoKernel App. C.2) between the
                                static gate and the compile: -1 (default) on for LLM
                                generators; 0 off (--no-audit); 1 asked for (--audit) */
    bool reflect;            /* LLM runs: an LLM reflection per attempt, stored as experience */
    double refine_with_builtin; /* LLM runs: share of refine iterations given to the
                                   zero-token built-in recipes (0 = none) */
    bool quick_timing;       /* shorter latency gate (demo, tests) */
    int64_t resume_run;      /* continue this run id */
    const char *memory_from; /* import an exported memory before starting */
    bool quiet;              /* the default printer prints only skip and failure lines;
                                an observer gets every event regardless */
    const kevo_run_observer *observer; /* NULL: the default printer (borrowed) */
    volatile sig_atomic_t *stop; /* set by a signal handler: finish the attempt in flight, stop */
} kevo_run_config;

void kevo_run_config_init(kevo_run_config *cfg);
/* 0 when the configuration can run; KEVO_EINVAL saying what is wrong (a
 * value out of range, an unknown generator or backend, a combination that
 * does not make sense). The command line and a resumed run's stored
 * configuration both pass through it. */
int kevo_run_config_check(const kevo_run_config *cfg);

/* Run (or resume) a whole run; progress goes to cfg->observer, else is
 * printed on stdout. *out_run_id gets the run id. Returns 0 when every task ran its budget, KEVO_EINTR when
 * stopped by the user (the run can be resumed), negative on errors. */
int kevo_agent_run(int64_t *out_run_id, const kevo_run_config *cfg);

/* ---- shared work: many worker processes, one store (docs/distributed.md) */

/* `kevo submit`: a new run with cfg's configuration whose tasks (those of
 * cfg->paths that list cfg->backend) are queued in the store at
 * cfg->db_path, each with its folder's files (a bundle: workers need no
 * shared filesystem). Everything is checked before anything is written;
 * the run and its rows are written in one transaction. *out_tasks: how
 * many were queued. KEVO_EINVAL naming the task for bad input (a task
 * twice, a folder too large to carry). */
int kevo_agent_submit(int64_t *out_run_id, size_t *out_tasks, const kevo_run_config *cfg);

typedef struct kevo_worker_config {
    const char *db_path;  /* the shared store (a PostgreSQL URL, or a SQLite file) */
    const char *db_label; /* how to name it in lines (redacted); NULL = db_path */
    const char *const *backends; /* claim only these; NULL/0 = every backend this
                                    machine can run */
    size_t nbackends;
    int jobs;          /* tasks worked at once (threads), default 1 */
    bool until_idle;   /* exit once no task of our backends is queued or running
                          (else wait for work forever) */
    double lease_s;    /* lease length, default 60 s; renewed every quarter */
    double poll_s;     /* wait between claims when there is nothing, default 2 s */
    bool quiet;        /* as kevo_run_config.quiet, and no worker lines */
    const kevo_run_observer *observer; /* the tasks' events; NULL: plain lines */
    /* The worker's own lines (claimed, finished, lease lost); NULL: stdout. */
    void (*on_line)(void *ctx, const char *line);
    void *ctx;
    volatile sig_atomic_t *stop; /* set by a signal handler: finish the attempts in
                                    flight, hand their tasks back, return */
} kevo_worker_config;

void kevo_worker_config_init(kevo_worker_config *wc);

typedef struct kevo_worker_stats {
    int64_t tasks_done, tasks_failed, leases_lost;
    char error[512]; /* the fatal error that ended it, "" when none */
} kevo_worker_stats;

/* `kevo worker`: claim tasks (a lease renewed while working) from the
 * store's unfinished runs whose backend is ours, run each from its last
 * recorded attempt to the run's budget with the shared memory, mark it
 * done (failed, with the reason, when it cannot be evaluated). A lost
 * lease stops the task after the attempt in flight; the user's stop hands
 * the task back at once. Returns 0 (until_idle: no work left), KEVO_EINTR
 * when stopped, negative when the store or the machine fail. */
int kevo_agent_worker(kevo_worker_stats *out, const kevo_worker_config *wc);

#ifdef __cplusplus
}
#endif
#endif
