/*
 * kevo/memory.h - the experience graph memory: tasks, attempts and
 * knowledge items, the edges between them, stage-specific Q-values and
 * full-text (BM25) search. One SQLite file by default (kevo.db); the
 * storage sits behind the kevo_store vtable (kevo/sys/store.h) so that
 * other databases can follow.
 *
 * The graph (docs/memory.md has pictures and a worked example):
 *   nodes  runs, tasks, attempts, items (api_doc, experience, trace,
 *          best_practice, recipe)
 *   edges  refines        attempt -> its start point (kevo_attempt.parent_id)
 *          used           attempt -> each item injected into its context
 *          distilled_from item -> the attempt(s) it was distilled from
 *   values Q(item, stage) and Q2(start point), each with an update count
 *
 * This module stores and learns; it never builds prompts (src/context does)
 * and never talks to an LLM.
 *
 * Conventions:
 *   - every function returns 0 or a negative KEVO_E* code with the message
 *     in kevo_error_last();
 *   - functions that create a record take the record first and return its
 *     id through a trailing `out_id` (may be NULL); functions that return
 *     objects take `**out` first; what comes back through `**out` is the
 *     caller's and is released by the matching _free(), which accepts NULL;
 *   - strings in record structs are `const char *`: on input they are
 *     borrowed for the duration of the call (NULL allowed unless stated);
 *     in structs returned by the memory they are owned by that struct;
 *   - timestamps are Unix time in milliseconds;
 *   - a kevo_memory handle is used by one thread at a time; several
 *     handles (threads or processes) may share one file (WAL mode, 30 s
 *     busy timeout).
 */
#ifndef KEVO_MEMORY_H
#define KEVO_MEMORY_H

#include "kevo/common.h"
#include "kevo/verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_memory kevo_memory;

/* Optimisation stage. The values are stored; never renumber. */
typedef enum kevo_stage {
    KEVO_STAGE_DRAFT = 1,  /* cold start: reach a correct kernel (Q1) */
    KEVO_STAGE_REFINE = 2, /* improve a correct start point (Q2) */
} kevo_stage;

/* Knowledge item kinds. The names ("api_doc", ...) are what is stored. */
typedef enum kevo_item_kind {
    KEVO_ITEM_API_DOC = 1,       /* API reference of a backend (exact-name lookup) */
    KEVO_ITEM_EXPERIENCE = 2,    /* a distilled lesson: what was tried, what happened, why */
    KEVO_ITEM_TRACE = 3,         /* a candidate worth showing (source) */
    KEVO_ITEM_BEST_PRACTICE = 4, /* general advice, matched to bottlenecks */
    KEVO_ITEM_RECIPE = 5,        /* a transformation the built-in generator can apply */
} kevo_item_kind;
#define KEVO_ITEM_KIND_MAX 5
/* Bit of a kind in a kevo_item_filter.kinds mask. */
#define KEVO_ITEM_BIT(kind) (1u << (unsigned)(kind))

/* Names <-> values. *_name() return static strings ("?" when unknown);
 * *_parse() return KEVO_EINVAL for an unknown name. */
const char *kevo_stage_name(kevo_stage stage);
int kevo_stage_parse(kevo_stage *out, const char *name);
const char *kevo_item_kind_name(kevo_item_kind kind);
int kevo_item_kind_parse(kevo_item_kind *out, const char *name);

/* ---- opening ---------------------------------------------------------- */

/* Open (creating and migrating as needed) the store at `path`. *out is the
 * caller's; release with kevo_memory_free(). KEVO_EIO when the file cannot
 * be opened, KEVO_EINVAL when it is not a kevo store or was written by a
 * newer kevo (schema version too high). */
int kevo_memory_open(kevo_memory **out, const char *path);

/* Flags for kevo_memory_open_ex(). */
#define KEVO_MEMORY_MUST_EXIST 1u /* KEVO_ENOTFOUND instead of creating the file */
int kevo_memory_open_ex(kevo_memory **out, const char *path, unsigned flags);

/* Close the store. NULL is a no-op. */
void kevo_memory_free(kevo_memory *mem);

/* The path given at open ("" for stores opened from a vtable). Borrowed. */
const char *kevo_memory_path(const kevo_memory *mem);

/* Group several writes into one transaction (nests: inner pairs become
 * savepoints). Every kevo_memory write is already atomic on its own; use
 * this to batch (much faster) or to make several calls atomic together. */
int kevo_memory_tx_begin(kevo_memory *mem);
int kevo_memory_tx_commit(kevo_memory *mem);
int kevo_memory_tx_rollback(kevo_memory *mem);
/* A consistent read-only view for several reads (faster too): every read
 * until kevo_memory_snapshot_end() sees the same state. No writes inside. */
int kevo_memory_snapshot_begin(kevo_memory *mem);
int kevo_memory_snapshot_end(kevo_memory *mem);

/* ---- runs ------------------------------------------------------------- */

typedef struct kevo_run {
    int64_t id;
    const char *uid;         /* stable identity across export/import */
    const char *config_json; /* as given to run_begin, verbatim */
    const char *status;      /* "running" until run_finish */
    int64_t started;
    int64_t finished; /* 0 while running */
} kevo_run;

typedef struct kevo_run_list {
    kevo_run *runs;
    size_t n;
} kevo_run_list;

/* Start a run. `config_json` must be valid JSON (KEVO_EINVAL otherwise);
 * it is stored verbatim. */
int kevo_memory_run_begin(kevo_memory *mem, const char *config_json, int64_t *out_run_id);
/* Mark a run finished with `status` (e.g. "done", "stopped", "failed").
 * KEVO_ENOTFOUND for an unknown run. */
int kevo_memory_run_finish(kevo_memory *mem, int64_t run_id, const char *status);
int kevo_memory_run_get(kevo_run **out, kevo_memory *mem, int64_t run_id);
/* All runs, oldest first. */
int kevo_memory_run_list(kevo_run_list **out, kevo_memory *mem);
void kevo_run_free(kevo_run *run);
void kevo_run_list_free(kevo_run_list *list);

/* ---- tasks ------------------------------------------------------------ */

typedef struct kevo_memory_task {
    int64_t id;              /* set by the memory */
    const char *name;        /* required; unique */
    int level;               /* 0 = unknown */
    const char *category;    /* e.g. "activation" */
    const char *description; /* one line */
    const char *reference;   /* reference source */
    const char *suite_path;  /* the task's folder */
} kevo_memory_task;

typedef struct kevo_memory_task_array {
    kevo_memory_task *tasks;
    double *scores; /* search only: BM25 relevance, higher is better; else NULL */
    size_t n;
} kevo_memory_task_array;

/* Insert or update the task named t->name. On update, NULL fields (and
 * level 0) keep the stored value. */
int kevo_memory_task_upsert(kevo_memory *mem, const kevo_memory_task *t, int64_t *out_id);
/* KEVO_ENOTFOUND when no task has that name. */
int kevo_memory_task_get(kevo_memory_task **out, kevo_memory *mem, const char *name);
/* All tasks ordered by name. */
int kevo_memory_task_list(kevo_memory_task_array **out, kevo_memory *mem);
/* Tasks whose name/category/description match `query` best (BM25). */
int kevo_memory_task_search(kevo_memory_task_array **out, kevo_memory *mem, const char *query,
                            size_t limit);
void kevo_memory_task_free(kevo_memory_task *t);
void kevo_memory_task_array_free(kevo_memory_task_array *list);

/* ---- attempts --------------------------------------------------------- */

typedef struct kevo_attempt {
    int64_t id;               /* set by the memory; ignored by attempt_record */
    int64_t run_id;           /* 0 = outside any run */
    const char *task;         /* task name; required (a bare task row is created if missing) */
    const char *backend;      /* "c", "opencl", "cuda", ... */
    const char *generator;    /* "openai", "builtin", "replay", ... */
    kevo_stage stage;         /* required */
    int iteration;            /* 0-based iteration within the task's budget */
    int64_t parent_id;        /* start point this attempt refines; 0 = none */
    kevo_verdict verdict;     /* kevo/verdict.h */
    const char *gates_json;   /* the gates array as JSON text */
    const char *feedback;     /* the text the generator was/will be shown */
    const char *source;       /* candidate source */
    const char *recipes_json; /* recipes applied (JSON), NULL for LLM candidates */
    double candidate_us;      /* median latencies; 0 when not measured */
    double reference_us;
    double speedup; /* reference_us / candidate_us; 0 when not correct */
    const char *baseline; /* what reference_us timed: "c-reference" (also NULL: stores
                             before it was kept) or "torch-eager-cpu" (kevo/verify.h) */
    int64_t tokens_prompt;
    int64_t tokens_completion;
    int tokens_estimated; /* 1 when the token counts are estimates, not server counts */
    int64_t created;      /* Unix ms; 0 = now */
    /* Stable identity. NULL or "" on input: the memory makes a fresh one.
     * Given: attempt_record stores the attempt under it, or, when an
     * attempt with that uid already exists, records nothing and returns
     * KEVO_MEMORY_RECORDED_BEFORE (idempotent retries). */
    const char *uid;
    /* Set by the memory, ignored on input: */
    double reward_raw; /* the stage's reward before normalisation */
    double reward;     /* the reward the Q-values were updated with */
    /* The kevo_memory_machine.id of the machine that measured it; NULL =
     * unknown (stores before machines were kept). Appended last so that
     * designated initialisers elsewhere keep working. */
    const char *machine;
} kevo_attempt;

typedef struct kevo_attempt_list {
    kevo_attempt *attempts;
    size_t n;
} kevo_attempt_list;

/* An item that went into an attempt's context (a `used` edge). */
typedef struct kevo_used_item {
    int64_t item_id;
    kevo_stage stage;
    int rank;   /* 1-based position in the context */
    int tokens; /* tokens the item took (after any cut) */
    /* recorded as used, but the attempt's reward does not update its Q:
     * the built-in generator's retune (the recipe's parameters changed on
     * a kernel it already shaped), whose speedup over its start point says
     * what the new parameters gained, not what the recipe gains */
    bool no_credit;
} kevo_used_item;

/* Value learning. Defaults (kevo_learn_config_init):
 *   alpha 0.3      step size of Q <- Q + alpha (R - Q)
 *   q_init 0.0     the Q of an item never updated ("no evidence": above
 *                  items that hurt, below items that helped)
 *   normalize 0    z-score the refine rewards with running statistics
 *   var_floor 0.01 variance floor of that z-score (std >= 0.1)
 *   clip 3.0       normalised rewards are clipped to [-clip, clip]
 *   frozen 0       1: record the attempt, its edges and its reward, learn
 *                  nothing from it (no Q update, no distilled item, no
 *                  trace): `kevo run --memory off` */
typedef struct kevo_learn_config {
    double alpha;
    double q_init;
    int normalize;
    double var_floor;
    double clip;
    int frozen;
} kevo_learn_config;

void kevo_learn_config_init(kevo_learn_config *cfg);

/* Rewards (EvoKernel). Draft: +1 when `verdict` is correct, -1 otherwise.
 * Refine: tanh(log(start_us / new_us)) for a correct attempt, in (-1, 1);
 * -1 when not correct; 0 when a latency is missing (<= 0). */
double kevo_memory_reward_draft(kevo_verdict verdict);
double kevo_memory_reward_refine(kevo_verdict verdict, double start_us, double new_us);
/* One Monte-Carlo step: q + alpha (r - q). */
double kevo_memory_q_step(double q, double r, double alpha);
/* z-score `r` against running statistics of the rewards before it (n,
 * mean, m2 as in Welford's algorithm; EvoKernel App. A: mu_{t-1},
 * sigma_{t-1}), with std >= sqrt(var_floor), clipped to [-clip, clip].
 * Returns 0 when n < 2 (no spread to measure against yet). */
double kevo_memory_reward_normalize(double r, int64_t n, double mean, double m2, double var_floor,
                                    double clip);

/* What kevo_memory_attempt_record returns (> 0, not an error) when a->uid
 * was given and an attempt with that uid is already stored: nothing was
 * recorded (no Q update, no edge, no item) and *out_id is that attempt's
 * id. A worker retrying after a lost connection, or two workers racing on
 * one iteration, thus record it once. */
#define KEVO_MEMORY_RECORDED_BEFORE 1

/* Record one evaluated attempt, all in one transaction:
 *   - the attempt node and its refines edge (a->parent_id, which must exist
 *     and belong to the same task); with a->uid given and already stored,
 *     nothing at all (KEVO_MEMORY_RECORDED_BEFORE, see above);
 *   - one `used` edge per entry of used[0..n_used) (item ids must exist and
 *     be distinct);
 *   - the reward (draft or refine, see above; a refine attempt's start
 *     latency is its parent's candidate_us, or its own reference_us when it
 *     has no parent; when parent and attempt were measured on different
 *     known machines, a->reference_us / parent->speedup, the parent's
 *     latency re-expressed through the reference timed beside each, and a
 *     reward of 0 when that is not available), normalised when
 *     cfg->normalize;
 *   - Q <- Q + alpha (R - Q) for every used item at a->stage, and for the
 *     start point's Q2 when a refine attempt has a parent;
 *     infra_error attempts are kevo's fault: recorded, never rewarded;
 *   - a deterministic `experience` item (what was tried, verdict, speedup,
 *     why from the feedback) with a distilled_from edge; and a `trace`
 *     item holding the source when a correct attempt beats every earlier
 *     correct attempt of the task on that backend.
 * `cfg` NULL means defaults. KEVO_EINVAL for missing/invalid fields.
 * Returns 0 (recorded), KEVO_MEMORY_RECORDED_BEFORE or a negative code. */
int kevo_memory_attempt_record(kevo_memory *mem, const kevo_attempt *a, const kevo_used_item *used,
                               size_t n_used, const kevo_learn_config *cfg, int64_t *out_id);

/* Which attempts kevo_memory_attempt_list() returns; zero fields do not
 * filter. Results are ordered by id (decision order). */
typedef struct kevo_attempt_filter {
    int64_t run_id;
    const char *task;
    const char *backend;
    int64_t parent_id; /* children of this attempt */
    int64_t used_item; /* attempts that used this item (e.g. a recipe item) */
    int correct_only;  /* only verdict "correct" */
    kevo_stage stage;  /* 0 = both */
    size_t limit;      /* 0 = no limit */
    int newest_first;  /* order by id descending */
    int best_first;    /* order by speedup desc, latency asc, id (wins over newest_first) */
    int no_source;     /* leave source NULL (cheaper when only outcomes are needed) */
} kevo_attempt_filter;

int kevo_memory_attempt_get(kevo_attempt **out, kevo_memory *mem, int64_t id);
int kevo_memory_attempt_list(kevo_attempt_list **out, kevo_memory *mem,
                             const kevo_attempt_filter *filter);
/* Attempts of a run / of a task (run_id 0 = all runs), in decision order. */
int kevo_memory_attempts_of_run(kevo_attempt_list **out, kevo_memory *mem, int64_t run_id);
int kevo_memory_attempts_of_task(kevo_attempt_list **out, kevo_memory *mem, const char *task,
                                 int64_t run_id);
/* The attempts that refined `id` (what was already tried from it). */
int kevo_memory_attempt_children(kevo_attempt_list **out, kevo_memory *mem, int64_t id);
/* The best correct attempt of `task` (highest speedup, then lowest
 * latency, then earliest) in `run_id` (0 = any run) and `backend` (NULL =
 * any). KEVO_ENOTFOUND when there is none. */
int kevo_memory_attempt_best(kevo_attempt **out, kevo_memory *mem, const char *task, int64_t run_id,
                             const char *backend);
/* A candidate start point for refining: a correct attempt, its latency and
 * its Q2. */
typedef struct kevo_start_point {
    int64_t attempt_id;
    double candidate_us;
    double speedup;
    double q;  /* Q2; 0 when n == 0 */
    int64_t n; /* updates of Q2 (refinements recorded from it) */
} kevo_start_point;

/* The correct attempts of `task` (on `backend` when not NULL) with their
 * Q2, by id. *out is malloc'd (free()); KEVO_ENOTFOUND when there is none. */
int kevo_memory_start_points(kevo_start_point **out, size_t *out_n, kevo_memory *mem,
                             const char *task, const char *backend);

/* The used edges of an attempt, by rank. *out is malloc'd (free()). */
int kevo_memory_attempt_used(kevo_used_item **out, size_t *out_n, kevo_memory *mem,
                             int64_t attempt_id);
void kevo_attempt_free(kevo_attempt *a);
void kevo_attempt_list_free(kevo_attempt_list *list);

/* ---- knowledge items -------------------------------------------------- */

typedef struct kevo_item {
    int64_t id;           /* set by the memory */
    kevo_item_kind kind;  /* required */
    const char *title;    /* required; for api_doc: the exact API name */
    const char *body;     /* required */
    const char *category; /* operator category it applies to; NULL = any */
    const char *task;     /* task it came from; NULL = general */
    const char *backend;  /* backend it applies to; NULL = any */
    const char *tags;     /* free words, space separated; "bundle" marks an
                             api_doc that is always shown for its backend */
    int64_t created;      /* Unix ms; 0 = now */
    const char *uid;      /* set by the memory unless given (import, seeds) */
} kevo_item;

typedef struct kevo_item_list {
    kevo_item *items;
    double *scores; /* search only: BM25 relevance, higher is better; else NULL */
    size_t n;
} kevo_item_list;

/* Which items list/search return; zero fields do not filter. */
typedef struct kevo_item_filter {
    unsigned kinds; /* KEVO_ITEM_BIT() mask; 0 = all kinds */
    const char *category;
    const char *task;
    const char *backend; /* matches items of that backend and items with none */
    const char *tag;     /* one word that must be in tags */
    size_t limit;        /* 0 = no limit (list) / 20 (search) */
    size_t offset;       /* list only */
    int newest_first;    /* list only: order by id descending */
    int no_body;         /* leave body NULL (cheaper for pools) */
} kevo_item_filter;

int kevo_memory_item_add(kevo_memory *mem, const kevo_item *item, int64_t *out_id);
/* Add an item with a distilled_from edge to `attempt_id` (e.g. an LLM's
 * reflection on that attempt), in one transaction. attempt_id 0: none. */
int kevo_memory_item_add_distilled(kevo_memory *mem, const kevo_item *item, int64_t attempt_id,
                                   int64_t *out_id);
int kevo_memory_item_get(kevo_item **out, kevo_memory *mem, int64_t id);
int kevo_memory_item_list(kevo_item_list **out, kevo_memory *mem, const kevo_item_filter *f);
/* Full-text search (FTS5, BM25) of `query` (free text: the memory picks
 * its most selective words) over title, body, tags, category and task. */
int kevo_memory_item_search(kevo_item_list **out, kevo_memory *mem, const char *query,
                            const kevo_item_filter *f);
/* The api_doc whose title is exactly `name`, preferring `backend` over
 * backend-less items. KEVO_ENOTFOUND when none. */
int kevo_memory_item_lookup_api(kevo_item **out, kevo_memory *mem, const char *name,
                                const char *backend);
/* The attempts an item was distilled from. *out is malloc'd (free()). */
int kevo_memory_item_sources(int64_t **out, size_t *out_n, kevo_memory *mem, int64_t item_id);
void kevo_item_free(kevo_item *item);
void kevo_item_list_free(kevo_item_list *list);

/* Add the built-in knowledge (api_doc bundles for c, opencl and cuda; best
 * practices per bottleneck). Idempotent. */
int kevo_memory_seed_builtin(kevo_memory *mem);

/* ---- Q-values --------------------------------------------------------- */

/* Q of an item at a stage and how many updates made it. An item never
 * updated gives *out_n = 0 and *out_q = 0 (callers apply their q_init). */
int kevo_memory_q_get(double *out_q, int64_t *out_n, kevo_memory *mem, int64_t item_id,
                      kevo_stage stage);
/* The same for items[0..n) at once (one round trip on stores that can):
 * out_q[i], out_n[i] for item_ids[i]. */
int kevo_memory_q_get_many(double *out_q, int64_t *out_n, kevo_memory *mem,
                           const int64_t *item_ids, size_t n, kevo_stage stage);
/* Q2 of an attempt as a start point for refining. */
int kevo_memory_q_start_get(double *out_q, int64_t *out_n, kevo_memory *mem, int64_t attempt_id);

/* ---- machines --------------------------------------------------------- */

/* A machine that measured attempts (kevo_attempt.machine is its id). */
typedef struct kevo_memory_machine {
    const char *id;       /* required; stable (kevo_machine_get in kevo/util.h) */
    const char *hostname; /* NULL = keep / unknown */
    const char *cpu;      /* CPU model */
    const char *gpu;      /* GPU model; NULL or "" = none known */
    int cores;            /* logical cores; 0 = keep / unknown */
    int64_t first_seen;   /* Unix ms; set by the memory on first upsert */
    int64_t last_seen;    /* Unix ms; upsert sets it (0 = now) */
} kevo_memory_machine;

typedef struct kevo_memory_machine_array {
    kevo_memory_machine *machines;
    size_t n;
} kevo_memory_machine_array;

/* Insert or update the machine m->id: on update the non-NULL fields
 * (cores != 0) replace the stored ones and last_seen moves forward (never
 * back); first_seen is kept. KEVO_EINVAL without an id. */
int kevo_memory_machine_upsert(kevo_memory *mem, const kevo_memory_machine *m);
/* All machines ordered by id. */
int kevo_memory_machine_list(kevo_memory_machine_array **out, kevo_memory *mem);
void kevo_memory_machine_array_free(kevo_memory_machine_array *list);

/* ---- work queue -------------------------------------------------------- */

/* Shared work for many workers (`kevo submit`, `kevo worker`): one row per
 * (run, task). Operational state, not memory: work rows are left out of
 * kevo_memory_export() (and so of import and filter's relearning); a
 * run's deletion deletes its rows. The values are not stored (the names
 * are); never renumber. */
typedef enum kevo_work_state {
    KEVO_WORK_QUEUED = 1,  /* waiting for a worker */
    KEVO_WORK_RUNNING = 2, /* held by `worker` until lease_until */
    KEVO_WORK_DONE = 3,    /* finished (whatever its attempts' verdicts) */
    KEVO_WORK_FAILED = 4,  /* the worker gave up on it (error says why) */
} kevo_work_state;

/* "queued", "running", "done", "failed"; "?" when unknown. parse:
 * KEVO_EINVAL for an unknown name. */
const char *kevo_work_state_name(kevo_work_state state);
int kevo_work_state_parse(kevo_work_state *out, const char *name);

typedef struct kevo_work {
    int64_t run_id;      /* required; the run must exist */
    const char *task;    /* required; task name, unique within the run */
    const char *backend; /* required; a worker claims only its backends */
    /* The task folder as a JSON object {"task.json": "...", "reference.c":
     * "...", ...}: file name -> contents, so that a worker needs no shared
     * filesystem. Required on add; NULL in lists made without bundles. */
    const char *bundle;
    kevo_work_state state; /* add: ignored (always queued) */
    const char *worker;    /* holder (last holder once finished); NULL when queued */
    int64_t lease_until;   /* Unix ms; 0 when never claimed */
    int64_t claims;        /* times claimed (> 1: an earlier holder lost it) */
    const char *error;     /* failed: why; else NULL */
    int64_t updated;       /* Unix ms of the last change */
} kevo_work;

typedef struct kevo_work_list {
    kevo_work *work;
    size_t n;
} kevo_work_list;

/* Queue w->task of run w->run_id. KEVO_EEXISTS (naming them) when the run
 * already has that task: a task is submitted to a run once. KEVO_ENOTFOUND
 * for an unknown run; KEVO_EINVAL for missing fields or a bundle that is not
 * a JSON object of strings. */
int kevo_memory_work_add(kevo_memory *mem, const kevo_work *w);

/* Atomically take one row (oldest first: run id, then insertion) whose
 * backend is one of backends[0..n_backends) and that is either queued or
 * running with an expired lease (lease_until < now: its holder is presumed
 * dead), of a run not finished: it becomes running under `worker` with
 * lease_until = now + lease_ms and claims + 1, and comes back through *out
 * (the caller's; kevo_work_free). now_ms 0 = the clock. Never gives one row
 * to two holders, with any number of processes and machines claiming at
 * once. KEVO_ENOTFOUND (*out NULL, no message needed) when nothing is
 * claimable. `worker` must be unique per worker process (e.g. machine id,
 * pid and a random part): fencing below trusts it. Leases compare
 * wall-clock times of different machines: keep their clocks in sync well
 * within lease_ms. */
int kevo_memory_work_claim(kevo_work **out, kevo_memory *mem, const char *const *backends,
                           size_t n_backends, const char *worker, int64_t now_ms,
                           int64_t lease_ms);

/* Extend the lease of a row `worker` holds to now + lease_ms (now_ms 0 =
 * the clock). KEVO_ENOTFOUND when the row is not running under `worker`
 * (the lease was lost to another worker, or the row finished): the worker
 * must stop working on it. A lease that expired but was not yet claimed by
 * anyone is still held and renews. */
int kevo_memory_work_renew(kevo_memory *mem, int64_t run_id, const char *task, const char *worker,
                           int64_t now_ms, int64_t lease_ms);

/* Finish a row `worker` holds as KEVO_WORK_DONE or KEVO_WORK_FAILED
 * (`error` says why; NULL allowed). KEVO_ENOTFOUND when the row is not
 * running under `worker` (fenced: a worker that lost its lease cannot
 * finish what another now holds); KEVO_EINVAL for another state. When it
 * was the run's last queued or running row, the run is marked finished
 * (status "finished", as kevo_memory_run_finish) in the same transaction
 * and *out_run_finished (may be NULL) is set to 1, else 0. */
int kevo_memory_work_finish(kevo_memory *mem, int64_t run_id, const char *task, const char *worker,
                            kevo_work_state state, const char *error, int *out_run_finished);

/* The rows of run_id (0 = all runs), by run id then insertion; bundles
 * are left NULL unless with_bundle. */
int kevo_memory_work_list(kevo_work_list **out, kevo_memory *mem, int64_t run_id,
                          int with_bundle);
void kevo_work_free(kevo_work *w);
void kevo_work_list_free(kevo_work_list *list);

/* ---- the store as an artifact ----------------------------------------- */

typedef struct kevo_memory_stats {
    int64_t runs, tasks, attempts, attempts_correct, items, edges_used, edges_distilled;
    int64_t items_by_kind[KEVO_ITEM_KIND_MAX + 1]; /* indexed by kevo_item_kind */
    int64_t q_items, q_starts;                     /* Q rows */
    int schema_version;
    int64_t bytes; /* size on disk, WAL included */
} kevo_memory_stats;

int kevo_memory_stats_get(kevo_memory_stats *out, kevo_memory *mem);

/* Write the whole store as JSON lines to `path` ("-" = stdout): a header
 * line, then runs, tasks, items, machines, attempts (with their machine),
 * edges and Q rows, each in id order. Work-queue rows are operational
 * state, not memory, and are not exported. The file is written
 * atomically. */
int kevo_memory_export(kevo_memory *mem, const char *path);

typedef struct kevo_import_stats {
    size_t runs, tasks, items, attempts, edges, q_rows, machines;
    size_t skipped; /* records already present (same uid / task name) */
} kevo_import_stats;

/* Import a kevo_memory_export() file ("-" = stdin) in one transaction.
 * Records already present (same uid; tasks: same name) are skipped, so
 * importing twice is harmless; ids are kept when free and remapped
 * otherwise. Importing into an empty store reproduces the exported store
 * exactly. KEVO_EINVAL names the file, line and field of bad input.
 * `out` may be NULL. */
int kevo_memory_import(kevo_memory *mem, const char *path, kevo_import_stats *out);

typedef struct kevo_filter_stats {
    size_t tasks, attempts, items, runs, q_recomputed;
} kevo_filter_stats;

/* Remove everything derived from the named tasks: the tasks, their
 * attempts (and their edges and Q2), items of those tasks or distilled
 * from those attempts, runs left without attempts, the names inside run
 * configs (array elements, member names and member values equal to a
 * name). What those attempts taught is relearnt from the remaining ones
 * with `cfg` (NULL = defaults; pass the config the store was recorded
 * with): Q-values of the items they had updated, the reward statistics,
 * and with cfg->normalize every normalised refine reward and every Q-value
 * (normalisation made each reward depend on all earlier ones). The result
 * equals recording the remaining attempts alone. Then the file is
 * compacted so that no deleted text remains on disk. Unknown names are
 * ignored. `out` may be NULL. */
/* The learning values the store's runs were recorded with (each run's
 * stored configuration: "alpha", "q_init", "normalize"; a field a run
 * lacks counts as the library default): what relearning must use to end
 * where a store that never saw the removed attempts would. Library
 * defaults when the store has no run; KEVO_EINVAL naming two runs when
 * they disagree. */
int kevo_memory_learn_config_of_runs(kevo_learn_config *out, kevo_memory *mem);
int kevo_memory_filter_tasks(kevo_memory *mem, const char *const *tasks, size_t n_tasks,
                             const kevo_learn_config *cfg, kevo_filter_stats *out);

#ifdef __cplusplus
}
#endif
#endif
