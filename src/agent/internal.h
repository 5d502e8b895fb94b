/*
 * agent/internal.h - what the agent's files share. Internal to src/agent.
 */
#ifndef KEVO_AGENT_INTERNAL_H
#define KEVO_AGENT_INTERNAL_H

#include "kevo/agent.h"
#include "kevo/context.h"
#include "kevo/llm.h"
#include "kevo/memory.h"
#include "kevo/recipe.h"
#include "kevo/sys/backend.h"
#include "kevo/verify.h"
#include "kevo/task.h"
#include "kevo/util.h"

typedef struct kevo_agent_task {
    kevo_task *task;
    char *reference; /* reference source (C, or a torch task's Python module) */
    char *draft;     /* a torch task's draft.c, or NULL */
    const char *c_start; /* the C the built-in generator starts from: the reference of a
                            C task, a torch task's draft; NULL when there is none */
} kevo_agent_task;

/* A generator's proposal: a candidate source and what produced it. */
typedef struct kevo_proposal {
    char *source;        /* NULL when generation failed (see failure) */
    char *failure;       /* why no usable candidate came out */
    char *recipes_json;  /* built-in: the full recipe chain from the reference */
    kevo_used_item used[64];
    size_t nused;
    int64_t tokens_prompt, tokens_completion;
    bool tokens_estimated;
    bool exhausted;      /* nothing applicable: the generator has no move */
    int context_tokens;  /* tokens of the memory context in the prompt */
    char summary[128];
} kevo_proposal;

void kevo_proposal_clear(kevo_proposal *p);

/* One built-in refinement of the start point (attempt start_id, 0 when it
 * is not recorded). */
int kevo_builtin_propose(kevo_proposal *out, kevo_memory *mem, const kevo_agent_task *at,
                         int64_t start_id, const char *start_source,
                         const char *start_recipes_json, const kevo_run_config *cfg,
                         kevo_rng *rng);

/* Whether `line` is one of the newline-separated `lines` (NULL: none). */
bool kevo_agent__listed(const char *lines, const char *line);

/* The transfer move (builtin_transfer.c): on the first refinement of a
 * task's draft (`start`, nothing tried from it yet), the recipe chain of
 * the fastest kernel of the most similar task of its category that the
 * memory holds, replayed on the draft. 1 when it made a candidate
 * (out->source, out->recipes_json, out->summary; no arm item used), 0
 * when there is none to make (no memory, value retrieval or evo strategy,
 * not a draft, something tried from it, no donor's chain applies),
 * negative on kevo's own errors. */
int kevo_builtin__transfer(kevo_proposal *out, kevo_memory *mem, const kevo_agent_task *at,
                           const kevo_attempt *start, const kevo_run_config *cfg);

/* The plies (task_loop.c): the speedup the best arm still open on attempt
 * `id` (its text `source`, its chain `recipes_json`, NULL for none) is
 * expected to give, 0 when none is open, and
 * whether one of its open arms is novel: no task of this category, this
 * trait signature or this bottleneck has tried it. Open: not yet tried
 * from it and expected to gain on this task (the mean reward behind its
 * category, signature and bottleneck Q-values above 0; when none has
 * evidence, the general Q's where above q_init, else q_init). Expected speedup:
 * that mean turned back into a factor (exp(atanh(mean)): q_init 0.5 is
 * 1.73x). Always 0 with the memory off or random retrieval (nothing to
 * rank arms by). */
int kevo_builtin_open_gain(double *gain, bool *novel, kevo_memory *mem, const kevo_agent_task *at,
                           int64_t id, const char *source, const char *recipes_json,
                           const kevo_run_config *cfg);

/* The score the built-in generator gives arm `recipe` (as a whole) on the
 * kernel `source` of task `at` (arm_value: its category, signature and
 * bottleneck Q-values, else the general one where it is above q_init,
 * else q_init), and whether it is known there. For tests. */
int kevo_builtin__arm_score(double *value, bool *known, kevo_memory *mem,
                            const kevo_agent_task *at, const char *source, const char *recipe,
                            const kevo_run_config *cfg);

/* The built-in generator's placement of a nest-shaping step (builtin_gen.c,
 * step_rank): `recipe` with params[0..np) goes into chain[0..n) (the start
 * point's, which replayed on `base` must give start_source) before the
 * first step that works on the nest it shapes. *out_source and *out_chain
 * (JSON) are the placed kernel and chain, the caller's; both NULL, and
 * *before NULL, when it has no place there (not a shaper, nothing to go
 * before, the chain does not replay to the start point, or a step no
 * longer applies); else *before names the step it went before (borrowed
 * from chain). Negative only for kevo's own errors. */
int kevo_builtin__place(char **out_source, char **out_chain, const char **before,
                        const char *base, const char *kernel, const char *start_source,
                        const kevo_recipe_step *chain, size_t n, const char *recipe,
                        const long *params, size_t np);

/* Which kernel the plies refine, before the start rule's pick. */
typedef enum kevo_ply { KEVO_PLY_NONE, KEVO_PLY_DRAFT, KEVO_PLY_BEST } kevo_ply;

/* A kernel at least this much faster than the draft is ahead of it; closer,
 * timing noise on a shared machine can make the difference. */
#define KEVO_PLY_AHEAD 1.1

/* What the plies know of one kernel: kevo_builtin_open_gain's answer. */
typedef struct kevo_ply_view {
    double gain; /* 0: nothing open (or no such kernel) */
    bool novel;
} kevo_ply_view;

/* The plies' rule between the task's draft and its fastest kernel in this
 * run (best: gain 0 when the fastest is the draft); ahead: the fastest
 * kernel's speedup over the draft's. The draft while it has an open arm
 * (the root ply: every promising recipe once on the clean reference before
 * recipes are stacked: register_block on the reference, not after an
 * unroll_jam has jammed its loop), unless the fastest kernel is ahead
 * (KEVO_PLY_AHEAD), its own best open arm is expected to take it further
 * than the draft's best would take the draft (ahead x best gain over the
 * draft's gain), and no novel arm of the draft holds the root ply
 * (kevo_agent__ply_novel_holds: what no task of its kind has tried meets
 * the clean reference first, on a cold memory -ffast-math's 7x on a
 * sigmoid is learnt there, not lost behind OpenMP's 1.4x, unless the
 * fastest kernel is already further ahead); then the fastest kernel (the best ply), as when the draft has
 * nothing open; KEVO_PLY_NONE when neither has (the start rule picks). */
kevo_ply kevo_agent__ply_pick(kevo_ply_view draft, kevo_ply_view best, double ahead);

/* Whether the draft's novel arm holds the root ply: it has one, and the
 * fastest kernel is less far ahead of it (`ahead`) than the draft's best
 * open arm is expected to take it (draft.gain; an untried arm counts at
 * q_init, 1.73x). A fastest kernel further ahead than that ends it: no
 * arm tried on the reference is expected to catch it up (conv2d's
 * register_block at 43.7x on attempt 2 of 8 had kept the draft for the
 * six attempts after it, on arms no convolution had tried, and never met
 * omp_parallel); OpenMP's 1.4x on a sigmoid does not, and -ffast-math
 * still meets the clean reference there. */
bool kevo_agent__ply_novel_holds(kevo_ply_view draft, double ahead);

/* The fastest kernel's speedup over the draft's, as the plies read it
 * (0 when either is unknown): a draft whose source is the task's
 * reference (the built-in generator's draft of a C task) runs at 1x the
 * reference by construction, so its measured speedup, two timings of one
 * program, is left out (a 0.91x reading made a no-op child look 1.1x
 * ahead, past KEVO_PLY_AHEAD, and the climb started from it). A PyTorch
 * task's C draft is not its reference: its speedup over eager is
 * measured. */
double kevo_agent__ply_ahead(double best_speedup, double draft_speedup, const char *draft_source,
                             const char *reference);

/* ---- configuration (config.c) ---------------------------------------- */

/* Everything the modules below are configured with, derived from a run's
 * configuration by one function. */
typedef struct kevo_derived {
    kevo_eval_options eval;
    kevo_learn_config learn;
    kevo_context_config context; /* LLM prompts */
    kevo_llm_config llm;
    kevo_start_rule start_rule;
    bool start_climb; /* kevo_start_query.climb: the built-in generator */
    bool start_plies; /* the built-in generator's plies (kevo_agent__ply_pick) */
    bool memory; /* the generators may use the memory (off: --memory off, pass@k) */
    bool audit;  /* LLM runs: the model-based auditor gate (on unless --no-audit) */
} kevo_derived;

void kevo_agent__derive(kevo_derived *out, const kevo_run_config *cfg);
/* The token budget of passive context when none is given: none, in effect. */
#define KEVO_PASSIVE_BUDGET (1 << 26)
bool kevo_agent__builtin(const kevo_run_config *cfg);
/* Whether the built-in generator writes candidates for this backend. */
bool kevo_agent__builtin_supports(const kevo_backend *be);
/* The stored form of a run's configuration (cJSON_Print'ed, the caller's). */
char *kevo_agent__config_json(const kevo_run_config *cfg, char **dirs, size_t ndirs);
/* Restore it for --resume: parsed and checked as the command line is.
 * Strings point into `root`. */
struct cJSON;
int kevo_agent__config_from_json(kevo_run_config *cfg, char ***dirs, size_t *ndirs,
                                 struct cJSON *root);

/* The task folders of cfg->paths that list cfg->backend, each validated
 * (run.c; also kevo submit's). */
int kevo_agent__collect_tasks(char ***dirs, size_t *ndirs, const kevo_run_config *cfg);
/* --memory-from: import an exported memory (JSON lines), or the whole of
 * another store (a SQLite file, a PostgreSQL locator) into mem. */
int kevo_agent__memory_from(kevo_memory *mem, const char *from);
/* The run's LLM provider (NULL for the built-in generator), wrapped in the
 * recorder when cfg->record_path. */
int kevo_agent__open_provider(kevo_provider **out, const kevo_run_config *cfg);

/* ---- events (events.c) ----------------------------------------------- */

/* Hand an event to cfg->observer, else print its plain line; one event at
 * a time across every worker. */
void kevo_agent__emit(const kevo_run_config *cfg, const kevo_run_event *ev);

/* ---- one attempt: propose -> judge -> record (attempt.c) -------------- */

/* What travels from one iteration of a task to the next, in memory: the
 * store is where attempts are kept, not how they are passed along. */
typedef struct kevo_attempt_state {
    kevo_memory *mem;
    const kevo_agent_task *at;
    const kevo_run_config *cfg;
    const kevo_derived *derived;
    kevo_provider *prov; /* NULL: the built-in generator only */
    int64_t run_id;
    /* The run's uid ("" outside a stored run): each attempt's uid derives
     * from it, the task, the backend and the iteration, so that an
     * iteration recorded twice (a retry, two workers racing) is stored
     * once (kevo_memory_attempt_record's KEVO_MEMORY_RECORDED_BEFORE). */
    char run_uid[72];
    int iteration;
    kevo_rng rng;          /* this iteration's, from (seed, iteration, task) */
    kevo_attempt *start;   /* this iteration's start point (owned); NULL: drafting */
    double best;           /* the task's best speedup so far */
    int64_t audit_tokens[2]; /* the auditor's tokens of this attempt (prompt, completion) */
    /* The task's attempts in this run, oldest first: the sources already
     * tried, the last feedback, and the conversation of the
     * iterative-refinement baseline (EvoKernel App. D.2). */
    struct kevo_turn {
        char *source;   /* the candidate ("" when there was none) */
        char *feedback; /* the verifier's feedback on it */
        kevo_verdict verdict;
        double speedup;
    } *turns;
    size_t nturns;
} kevo_attempt_state;

/* Append an attempt to the state's turns (copies). */
int kevo_agent__turn_add(kevo_attempt_state *st, const kevo_attempt *a);
void kevo_agent__turns_free(kevo_attempt_state *st);

/* A generator: one proposal from the state. The built-in draft, the
 * built-in refiner and the LLM generator implement it. */
typedef struct kevo_generator {
    const char *name; /* recorded as the attempt's generator; NULL: the run's --generator */
    int (*propose)(const struct kevo_generator *gen, kevo_attempt_state *st,
                   kevo_proposal *out);
    /* propose computes here (parses, rewrites) rather than waiting on a
     * server: it holds the machine's timing slot shared meanwhile
     * (kevo_verify_busy_begin), so no measurement loses a core to it */
    bool computes;
} kevo_generator;

extern const kevo_generator kevo_generator_builtin_draft;
extern const kevo_generator kevo_generator_builtin_refine;
extern const kevo_generator kevo_generator_llm;

/* Which generator proposes this iteration (consumes the state's rng as the
 * choice needs). */
const kevo_generator *kevo_agent__choose(kevo_attempt_state *st);
/* Whether a source was already recorded for the task in this run (its
 * turns). */
bool kevo_agent__seen(const kevo_attempt_state *st, const char *source);
/* The previous attempt's feedback; NULL for the first attempt or none. */
const char *kevo_agent__last_feedback(const kevo_attempt_state *st);
/* The state after a recorded attempt (also when a resumed run replays the
 * recorded ones): its feedback is the next one's, it joins the turns (so
 * its source counts as tried), its speedup may be the best. */
int kevo_agent__advance(kevo_attempt_state *st, const kevo_attempt *a);

/* One attempt of the state's iteration: propose, judge with `ev`, record
 * in one transaction, report it (kevo_agent__emit); the state moves on (feedback, best,
 * seen sources). Negative only for kevo's own failures. */
int kevo_agent__attempt(kevo_attempt_state *st, kevo_evaluator *ev, size_t index, size_t total);

/* One task's remaining iterations (task_loop.c). *worked: whether it ran
 * any. suite_path: the folder the store names for the task (kevo report
 * and kevo best read its task.json); NULL keeps the stored one (a worker
 * runs a private copy that is gone after the task; kevo submit stored the
 * submitter's folder). */
int kevo_agent__run_task(bool *worked, kevo_memory *mem, kevo_provider *prov, int64_t run,
                         const char *dir, const char *suite_path, size_t index, size_t total,
                         const kevo_run_config *cfg);

/* The LLM generator's proposal (llm_gen.c). */
int kevo_llm_propose(kevo_proposal *out, kevo_attempt_state *st);

/* The model-based auditor (EvoKernel App. C.2): the model answers one JSON
 * object {"valid": true|false, "reason": "..."}; only a boolean true lets
 * the candidate through (fail closed: false, a missing or non-boolean
 * field, no JSON at all are all invalid, with the reason). Tokens are
 * added to *tokens. */
int kevo_llm_audit(bool *out_invalid, char **out_reason, kevo_provider *prov,
                   const kevo_agent_task *at, const char *candidate, const kevo_run_config *cfg,
                   int64_t tokens[2]);
/* An LLM reflection on an attempt (a short lesson); *out NULL when the
 * reply is unusable. */
int kevo_llm_reflect(char **out, kevo_provider *prov, const kevo_agent_task *at,
                     const char *candidate, const char *verdict, const char *feedback,
                     const kevo_run_config *cfg, int64_t tokens[2]);

/* Render prompts/<backend>/<name>.md with {{key}} -> value. */
int kevo_prompt_render(char **out, const char *backend, const char *name,
                       const char *const *keys, const char *const *values, size_t n);

#endif
