/*
 * kevo/context.h - Active Context Management (KOPE) with value-driven
 * retrieval (EvoKernel): builds the context a generator sees for one
 * attempt from the experience memory, under a fixed token budget.
 *
 * One build:
 *   1. candidate pool: the lambda*N best items by BM25 for the query (task
 *      description, category, reference source; when refining also the
 *      latest feedback and the bottleneck), plus structural neighbours
 *      (the task's own earlier experience, the category's latest items);
 *   2. selection of N items: epsilon-greedy over the stage's Q (value
 *      mode), the N most similar (heuristic mode), or none (passive mode:
 *      the most recent history until the budget is full);
 *   3. refining: the start point (kevo_context_pick_start_point), what was
 *      already tried from it, best practices matched to the bottleneck;
 *   4. the API channel: the backend's fixed bundle, exact-name lookups of
 *      API identifiers in the retrieved code, the category's API notes;
 *   5. packing: per-section quotas, items cut with a marker when too long,
 *      never more than the budget.
 * The returned kevo_context lists the items that went in with their rank
 * and tokens: pass them to kevo_memory_attempt_record() so the outcome of
 * the attempt updates their Q-values.
 *
 * This module reads the memory and never writes it, never calls the
 * network and knows nothing of providers.
 */
#ifndef KEVO_CONTEXT_H
#define KEVO_CONTEXT_H

#include "kevo/memory.h"
#include "kevo/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kevo_context_mode {
    KEVO_CONTEXT_VALUE = 0,     /* epsilon-greedy over Q (the method) */
    KEVO_CONTEXT_HEURISTIC = 1, /* similarity only; best-latency start point (ablation) */
    KEVO_CONTEXT_PASSIVE = 2,   /* recent history until the budget, no selection (ablation) */
    KEVO_CONTEXT_RANDOM = 3,    /* N of the pool uniformly at random (ablation) */
} kevo_context_mode;

/* "value", "heuristic", "passive". */
const char *kevo_context_mode_name(kevo_context_mode mode);
int kevo_context_mode_parse(kevo_context_mode *out, const char *name);

/* Sections, in the order they appear in a context. */
typedef enum kevo_section_id {
    KEVO_SECTION_TASK = 0,        /* the task and its reference source */
    KEVO_SECTION_START_POINT = 1, /* refining: the start point's source and outcome */
    KEVO_SECTION_TRIED = 2,       /* refining: children of the start point */
    KEVO_SECTION_FEEDBACK = 3,    /* latest feedback and bottleneck diagnosis */
    KEVO_SECTION_EXPERIENCE = 4,  /* the selected items (passive: recent history) */
    KEVO_SECTION_PRACTICE = 5,    /* refining: best practices matched to the bottleneck */
    KEVO_SECTION_API = 6,         /* API reference */
    KEVO_SECTION_COUNT = 7
} kevo_section_id;

/* Configuration; kevo_context_config_init() sets the defaults noted. */
typedef struct kevo_context_config {
    int token_budget; /* 6000: the context never exceeds it */
    /* Share of the budget reserved per section (defaults: task 0.22, start
     * point 0.22, tried 0.08, feedback 0.10, experience 0.22, practice
     * 0.06, api 0.10). Shares of sections with nothing to show are handed
     * to the others; a section may also use what earlier-filled sections
     * left (fill order: task, start point, feedback, tried, experience,
     * practice, api). */
    double quota[KEVO_SECTION_COUNT];
    kevo_context_mode mode;       /* value */
    double epsilon;               /* 0.1: exploration rate of each pick */
    int lambda;                   /* 3: the pool holds lambda*N BM25 candidates */
    int n;                        /* 6: items selected into the context */
    double alpha;                 /* 0.3: Q step size (see kevo_context_learn_config) */
    double q_init;                /* 0.0: Q of items/start points never updated */
    double bytes_per_token_code;  /* 3.2: token estimate for code */
    double bytes_per_token_prose; /* 4.7: token estimate for prose; set both from the
                                     server's usage counts when known */
    int max_practices;            /* 2 */
    int max_api;                  /* 10 */
    int max_tried;                /* 12: children of the start point listed */
    int min_cut_tokens;           /* 48: an item cut shorter than this is left out */
    kevo_rng *rng;                /* used when kevo_context_build's rng is NULL */
} kevo_context_config;

void kevo_context_config_init(kevo_context_config *cfg);
/* The learning settings that go with a context config (alpha, q_init; the
 * rest default), for kevo_memory_attempt_record(). */
void kevo_context_learn_config(kevo_learn_config *out, const kevo_context_config *cfg);

/* What the context is for. Strings are borrowed; NULL/empty allowed except
 * task. */
typedef struct kevo_context_query {
    const char *task; /* task name (required) */
    const char *category;
    const char *description;
    const char *reference;  /* reference source */
    bool reference_torch;   /* the reference is a PyTorch module (docs/torch-tasks.md) */
    const char *backend;    /* "c", "opencl", "cuda"; NULL = any */
    kevo_stage stage;       /* required */
    const char *feedback;   /* latest feedback */
    const char *bottleneck; /* bottleneck diagnosis (roofline, profile) */
    int64_t start_point_id; /* refining: the start point; 0 = pick one */
    const kevo_attempt *start_point; /* refining: the start point itself, when the caller
                                        holds it (borrowed; wins over start_point_id) */
} kevo_context_query;

typedef struct kevo_context_section {
    kevo_section_id id;
    const char *title; /* static */
    char *text;        /* the section as it goes into a prompt, heading included */
    int tokens;        /* estimated tokens of text */
} kevo_context_section;

/* A built context. Read-only for callers; release with kevo_context_free(). */
typedef struct kevo_context {
    kevo_context_section *sections; /* non-empty sections, in kevo_section_id order */
    size_t n_sections;
    kevo_used_item *used; /* items that went in, rank = position in the context (1-based) */
    size_t n_used;
    int total_tokens; /* sum of section tokens, <= budget */
    int budget;
    kevo_stage stage;
    kevo_context_mode mode;
    int64_t start_point_id; /* refining: the start point used; else 0 */
    size_t pool_size;       /* candidates considered for the experience section */
} kevo_context;

/* Build the context for `q`. `cfg` NULL = defaults; `rng` NULL = cfg->rng,
 * and when both are NULL a fixed seed (deterministic). When refining
 * without q->start_point and q->start_point_id the start point is picked
 * with kevo_context_start_point() (value mode: KEVO_START_Q2, else
 * KEVO_START_FASTEST; every run; KEVO_ENOTFOUND when the task has no
 * correct attempt). *out is the caller's. */
int kevo_context_build(kevo_context **out, kevo_memory *mem, const kevo_context_query *q,
                       const kevo_context_config *cfg, kevo_rng *rng);

/* The whole context as one string (sections concatenated). *out is the
 * caller's (free()). */
int kevo_context_render(char **out, const kevo_context *ctx);

void kevo_context_free(kevo_context *ctx);

/* ---- start points: the one policy ------------------------------------- */

/* How the start point of a refine attempt is chosen among a task's correct
 * attempts. */
typedef enum kevo_start_rule {
    KEVO_START_Q2,         /* epsilon-greedy over Q2 (EvoKernel); never-updated ones count q_init */
    KEVO_START_Q2_LATENCY, /* epsilon-greedy over Q2 - log(best / speedup): kevo's
                              latency-aware score (kevo_context_start_score) */
    KEVO_START_FASTEST,    /* the fastest (heuristic and passive ablations) */
    KEVO_START_NEWEST,     /* the newest (the iterative-refinement baseline) */
} kevo_start_rule;

typedef struct kevo_start_query {
    const char *task;    /* required */
    const char *backend; /* NULL: any */
    int64_t run_id;      /* 0: every run */
    kevo_start_rule rule;
    double epsilon; /* exploration rate of the Q2 rules */
    double q_init;  /* Q2 of a start point never refined */
    /* Only attempts no slower than the attempt they refine are candidates
     * (the fastest always is): for a generator whose candidate is its
     * start point's text plus one step (the built-in one), a kernel slower
     * than its parent is that parent plus a step that cost time, and
     * refining it builds on the loss. */
    bool climb;
} kevo_start_query;

/* Choose the start point. Candidates (q->climb: filtered) are ordered fastest first (speedup
 * descending, then latency, then id); a tie in score goes to the faster.
 * With probability epsilon a Q2 rule takes a uniformly random candidate.
 * *out is the chosen attempt with its source (the caller's,
 * kevo_attempt_free); KEVO_ENOTFOUND when the task has no correct attempt
 * in scope. `rng` may be NULL only for the rules without exploration. */
int kevo_context_start_point(kevo_attempt **out, kevo_memory *mem, const kevo_start_query *q,
                             kevo_rng *rng);
/* The latency-aware score of a start point: its Q2 (q, updated n times;
 * q_init when never), plus log(speedup / best), best being the task's
 * fastest speedup so far: a refinement of a slower kernel must gain that
 * much just to catch up. */
double kevo_context_start_score(double q, int64_t n, double speedup, double best, double q_init);

/* Estimated tokens of `text`: ceil(bytes / 3.2) for code, ceil(bytes / 4.7)
 * for prose. NULL is 0 tokens. */
int kevo_tokens_estimate(const char *text, int is_code);
/* The same for `len` bytes at `bytes_per_token` (<= 0: 1 byte per token). */
int kevo_tokens_estimate_len(size_t len, double bytes_per_token);

#ifdef __cplusplus
}
#endif
#endif
