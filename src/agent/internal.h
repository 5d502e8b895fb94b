/*
 * agent/internal.h - what the agent's files share. Internal to src/agent.
 */
#ifndef KEVO_AGENT_INTERNAL_H
#define KEVO_AGENT_INTERNAL_H

#include "kevo/agent.h"
#include "kevo/memory.h"
#include "kevo/task.h"
#include "kevo/util.h"

typedef struct kevo_agent_task {
    kevo_task *task;
    char *reference; /* reference source */
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

/* The value of a correct attempt as a start point for refining: its Q2
 * (q, updated n times; q_init when never), minus log(best / speedup), where
 * best is the task's fastest speedup so far. */
double kevo_start_score(double q, int64_t n, double speedup, double best, double q_init);

typedef struct kevo_provider kevo_provider;
int kevo_llm_propose(kevo_proposal *out, kevo_provider *prov, kevo_memory *mem,
                     const kevo_agent_task *at, kevo_stage stage, int64_t start_id,
                     const char *last_feedback, const kevo_run_config *cfg, kevo_rng *rng,
                     int iteration);

/* The model-based auditor (EvoKernel): *out_invalid set with the reason
 * when the model answers `invalid`. Tokens are added to *tokens. */
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
