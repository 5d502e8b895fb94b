/*
 * agent/config.c - a run's configuration: its enums and their names, the
 * one check every configuration passes (the command line's and a resumed
 * run's stored one), the stored JSON form, and the one derivation of the
 * verifier's, the memory's, the context's and the provider's settings from
 * it. Must not: run anything or touch the store.
 */
#include "internal.h"
#include "kevo/llm.h"
#include "kevo/sys/backend.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

static const char *const strategy_names[KEVO_STRATEGY_COUNT] = {"evo", "refine", "passk"};
static const char *const retrieval_names[KEVO_RETRIEVAL_COUNT] = {"value", "heuristic",
                                                                  "random"};
static const char *const context_names[KEVO_RUN_CONTEXT_COUNT] = {"active", "passive"};
static const char *const start_score_names[KEVO_START_SCORE_COUNT] = {"q2", "q2-latency"};

static int parse_name(int *out, const char *const *names, int n, const char *field,
                      const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name)) {
            *out = i;
            return 0;
        }
    char known[128] = "";
    for (int i = 0; i < n; i++) {
        strncat(known, i ? (i == n - 1 ? " or " : ", ") : "", sizeof(known) - strlen(known) - 1);
        strncat(known, names[i], sizeof(known) - strlen(known) - 1);
    }
    return kevo_error_set(KEVO_EINVAL, "%s must be %s, not '%s'", field, known,
                          name ? name : "(none)");
}

#define ENUM_FUNCS(type, fn, names, count, field)                                                 \
    const char *fn##_name(type v)                                                                  \
    {                                                                                              \
        return (unsigned)v < (unsigned)(count) ? names[v] : "?";                                   \
    }                                                                                              \
    int fn##_parse(type *out, const char *name)                                                    \
    {                                                                                              \
        int v = 0;                                                                                 \
        int error = parse_name(&v, names, count, field, name);                                     \
        if (error == 0)                                                                            \
            *out = (type)v;                                                                        \
        return error;                                                                              \
    }

ENUM_FUNCS(kevo_strategy, kevo_strategy, strategy_names, KEVO_STRATEGY_COUNT, "strategy")
ENUM_FUNCS(kevo_retrieval, kevo_retrieval, retrieval_names, KEVO_RETRIEVAL_COUNT, "retrieval")
ENUM_FUNCS(kevo_run_context, kevo_run_context, context_names, KEVO_RUN_CONTEXT_COUNT, "context")
ENUM_FUNCS(kevo_start_score, kevo_start_score, start_score_names, KEVO_START_SCORE_COUNT,
           "start_score")

/* ---- defaults and the check ------------------------------------------ */

void kevo_run_config_init(kevo_run_config *c)
{
    memset(c, 0, sizeof(*c));
    c->generator = "builtin";
    c->strategy = KEVO_STRATEGY_EVO;
    c->backend = "c";
    c->db_path = "kevo.db";
    c->iterations = 30;
    c->seed = 1;
    c->retrieval = KEVO_RETRIEVAL_VALUE;
    c->context = KEVO_RUN_CONTEXT_ACTIVE;
    c->temperature = -1;
    c->memory = true;
    c->epsilon = 0.1;
    c->alpha = 0.3;
    c->q_init = 0.5;
    c->lambda = 3;
    c->pool_n = 6;
    c->audit = -1; /* on for LLM generators, unless --no-audit */
}

bool kevo_agent__builtin_supports(const kevo_backend *be)
{
    return be && be->version >= 2 && (be->flags & KEVO_BACKEND_CAP_BUILTIN_GENERATOR) && be->draft;
}

bool kevo_agent__builtin(const kevo_run_config *c)
{
    return !strcmp(c->generator, "builtin");
}

static int check_ranges(const kevo_run_config *c)
{
    if (!(c->epsilon >= 0 && c->epsilon <= 1))
        return kevo_error_set(KEVO_EINVAL, "epsilon (--epsilon) must be in [0, 1]");
    if (!(c->alpha > 0 && c->alpha <= 1))
        return kevo_error_set(KEVO_EINVAL, "alpha (--alpha) must be in (0, 1]");
    if (!(c->q_init >= -1 && c->q_init <= 1))
        return kevo_error_set(KEVO_EINVAL,
                              "q_init (--q-init) must be in [-1, 1], the range of the rewards");
    if (c->lambda < 1 || c->lambda > 100)
        return kevo_error_set(KEVO_EINVAL, "lambda (--lambda) must be an integer in [1, 100]");
    if (c->pool_n < 0 || c->pool_n > 100)
        return kevo_error_set(KEVO_EINVAL, "pool_n (--pool-n) must be an integer in [0, 100]");
    if (c->iterations < 1)
        return kevo_error_set(KEVO_EINVAL, "iterations (--iterations) must be at least 1");
    if ((unsigned)c->strategy >= KEVO_STRATEGY_COUNT ||
        (unsigned)c->retrieval >= KEVO_RETRIEVAL_COUNT ||
        (unsigned)c->context >= KEVO_RUN_CONTEXT_COUNT ||
        (unsigned)c->start_score >= KEVO_START_SCORE_COUNT)
        return kevo_error_set(KEVO_EINVAL, "strategy, retrieval or context out of range");
    return 0;
}

static int check_generator(const kevo_run_config *c)
{
    const kevo_backend *be = kevo_backend_find(c->backend ? c->backend : "");
    if (!be) {
        kevo_buf names = {0};
        kevo_backend_names_text(&names);
        int error = kevo_error_set(KEVO_EINVAL, "unknown backend '%s' (--backend: %s)",
                                   c->backend ? c->backend : "", kevo_buf_cstr(&names));
        kevo_buf_free(&names);
        return error;
    }
    bool builtin = kevo_agent__builtin(c);
    if (!builtin && !kevo_llm_provider_known(c->generator)) {
        char names[256];
        return kevo_error_set(KEVO_EINVAL, "--generator must be builtin or an LLM provider (%s), "
                              "not '%s'", kevo_llm_provider_names(names, sizeof(names)),
                              c->generator);
    }
    if (builtin && !kevo_agent__builtin_supports(be)) {
        char writes[128] = "";
        for (const char *const *n = kevo_backend_names(); *n; n++)
            if (kevo_agent__builtin_supports(kevo_backend_find(*n)))
                snprintf(writes + strlen(writes), sizeof(writes) - strlen(writes), "%s%s",
                         *writes ? " and " : "", *n);
        return kevo_error_set(KEVO_EINVAL,
                              "the built-in generator writes %s candidates, not %s: use an LLM "
                              "generator (--generator openai) for --backend %s",
                              writes, be->name, be->name);
    }
    if (builtin && c->retrieval == KEVO_RETRIEVAL_HEURISTIC)
        return kevo_error_set(KEVO_EINVAL,
                              "--retrieval heuristic is an ablation of LLM runs (the N most similar "
                              "memory items, no learned value); the built-in generator retrieves "
                              "no text: use --retrieval value (recipes by learned value) or random");
    if (builtin && (c->audit > 0 || c->reflect))
        return kevo_error_set(KEVO_EINVAL, "--audit and --reflect need an LLM generator");
    if (builtin && c->strategy == KEVO_STRATEGY_PASSK)
        return kevo_error_set(KEVO_EINVAL,
                              "--strategy passk needs an LLM generator (openai or replay): the "
                              "built-in draft is deterministic, so independent samples of it "
                              "would all be one kernel");
    if (!strcmp(c->generator, "replay") && !c->replay_path && !c->resume_run)
        return kevo_error_set(KEVO_EINVAL, "--generator replay needs --replay FILE");
    return 0;
}

int kevo_run_config_check(const kevo_run_config *c)
{
    int error = check_ranges(c);
    return error < 0 ? error : check_generator(c);
}

/* ---- the stored form ---------------------------------------------------- */

char *kevo_agent__config_json(const kevo_run_config *c, char **dirs, size_t ndirs)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *paths = cJSON_AddArrayToObject(o, "paths");
    for (size_t i = 0; i < c->npaths; i++)
        cJSON_AddItemToArray(paths, cJSON_CreateString(c->paths[i]));
    cJSON *tasks = cJSON_AddArrayToObject(o, "task_dirs");
    for (size_t i = 0; i < ndirs; i++)
        cJSON_AddItemToArray(tasks, cJSON_CreateString(dirs[i]));
    cJSON_AddStringToObject(o, "generator", c->generator);
    cJSON_AddStringToObject(o, "strategy", kevo_strategy_name(c->strategy));
    cJSON_AddStringToObject(o, "backend", c->backend);
    cJSON_AddNumberToObject(o, "iterations", c->iterations);
    cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    cJSON_AddStringToObject(o, "retrieval", kevo_retrieval_name(c->retrieval));
    cJSON_AddStringToObject(o, "context", kevo_run_context_name(c->context));
    cJSON_AddStringToObject(o, "start_score", kevo_start_score_name(c->start_score));
    cJSON_AddNumberToObject(o, "token_budget", c->token_budget);
    if (c->model)
        cJSON_AddStringToObject(o, "model", c->model);
    if (c->api_base)
        cJSON_AddStringToObject(o, "api_base", c->api_base);
    if (c->replay_path)
        cJSON_AddStringToObject(o, "replay", c->replay_path);
    /* the LLM settings the run was given (the environment's are not its) */
    if (c->temperature >= 0)
        cJSON_AddNumberToObject(o, "temperature", c->temperature);
    if (c->max_tokens > 0)
        cJSON_AddNumberToObject(o, "max_tokens", c->max_tokens);
    if (c->max_tokens_param != KEVO_LLM_TOKENS_PARAM_AUTO)
        cJSON_AddStringToObject(o, "max_tokens_param",
                                kevo_llm_tokens_param_name(c->max_tokens_param));
    if (c->reasoning_effort != KEVO_LLM_REASONING_DEFAULT)
        cJSON_AddStringToObject(o, "reasoning_effort",
                                kevo_llm_reasoning_effort_name(c->reasoning_effort));
    cJSON_AddBoolToObject(o, "memory", c->memory);
    cJSON_AddNumberToObject(o, "epsilon", c->epsilon);
    cJSON_AddNumberToObject(o, "alpha", c->alpha);
    cJSON_AddNumberToObject(o, "q_init", c->q_init);
    cJSON_AddNumberToObject(o, "lambda", c->lambda);
    cJSON_AddNumberToObject(o, "pool_n", c->pool_n);
    cJSON_AddBoolToObject(o, "normalize", c->normalize);
    cJSON_AddBoolToObject(o, "quick_timing", c->quick_timing);
    cJSON_AddNumberToObject(o, "refine_with_builtin", c->refine_with_builtin);
    cJSON_AddBoolToObject(o, "audit", !kevo_agent__builtin(c) && c->audit != 0);
    cJSON_AddBoolToObject(o, "reflect", c->reflect);
    if (c->memory_from)
        cJSON_AddStringToObject(o, "memory_from", c->memory_from);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static const char *str_of(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(root, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool num_of(double *out, const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(root, key);
    if (cJSON_IsNumber(v))
        *out = v->valuedouble;
    return cJSON_IsNumber(v);
}

static void bool_of(bool *out, const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(root, key);
    if (v)
        *out = cJSON_IsTrue(v);
}

/* The stored names go through the same parsers as the command line's. */
static int enums_from_json(kevo_run_config *c, const cJSON *root)
{
    const char *s;
    int error = 0;
    if ((s = str_of(root, "strategy")) && (error = kevo_strategy_parse(&c->strategy, s)) < 0)
        return error;
    if ((s = str_of(root, "retrieval")) && (error = kevo_retrieval_parse(&c->retrieval, s)) < 0)
        return error;
    if ((s = str_of(root, "context")) && (error = kevo_run_context_parse(&c->context, s)) < 0)
        return error;
    /* runs stored before the option existed were valued with the latency term */
    c->start_score = KEVO_START_SCORE_Q2_LATENCY;
    if ((s = str_of(root, "start_score")) &&
        (error = kevo_start_score_parse(&c->start_score, s)) < 0)
        return error;
    return 0;
}

static void numbers_from_json(kevo_run_config *c, const cJSON *root)
{
    double x = 0;
    if (num_of(&x, root, "token_budget"))
        c->token_budget = (int)x;
    if (num_of(&x, root, "iterations"))
        c->iterations = (int)x;
    if (num_of(&x, root, "seed"))
        c->seed = (uint64_t)x;
    num_of(&c->epsilon, root, "epsilon");
    num_of(&c->alpha, root, "alpha");
    num_of(&c->q_init, root, "q_init");
    if (num_of(&x, root, "lambda"))
        c->lambda = (int)x;
    if (num_of(&x, root, "pool_n"))
        c->pool_n = (int)x;
    num_of(&c->refine_with_builtin, root, "refine_with_builtin");
    bool_of(&c->memory, root, "memory");
    bool_of(&c->normalize, root, "normalize");
    bool audit = c->audit != 0;
    bool_of(&audit, root, "audit");
    c->audit = audit ? (kevo_agent__builtin(c) ? -1 : 1) : 0;
    bool_of(&c->reflect, root, "reflect");
    bool_of(&c->quick_timing, root, "quick_timing");
    /* LLM settings: as for the model, a flag given to --resume wins; a
     * stored name that does not parse keeps the default */
    if (c->temperature < 0)
        num_of(&c->temperature, root, "temperature");
    if (c->max_tokens <= 0 && num_of(&x, root, "max_tokens"))
        c->max_tokens = (int)x;
    const char *s;
    if (c->max_tokens_param == KEVO_LLM_TOKENS_PARAM_AUTO &&
        (s = str_of(root, "max_tokens_param")) &&
        kevo_llm_tokens_param_parse(&c->max_tokens_param, s) < 0)
        c->max_tokens_param = KEVO_LLM_TOKENS_PARAM_AUTO;
    if (c->reasoning_effort == KEVO_LLM_REASONING_DEFAULT &&
        (s = str_of(root, "reasoning_effort")) &&
        kevo_llm_reasoning_effort_parse(&c->reasoning_effort, s) < 0)
        c->reasoning_effort = KEVO_LLM_REASONING_DEFAULT;
}

int kevo_agent__config_from_json(kevo_run_config *c, char ***dirs, size_t *ndirs, cJSON *root)
{
    const char *s;
    int error = 0;
    if ((s = str_of(root, "generator")))
        c->generator = s;
    if ((s = str_of(root, "backend")))
        c->backend = s;
    if ((s = str_of(root, "model")) && !c->model)
        c->model = s;
    if ((s = str_of(root, "api_base")) && !c->api_base)
        c->api_base = s;
    if ((s = str_of(root, "replay")) && !c->replay_path)
        c->replay_path = s;
    numbers_from_json(c, root);
    /* a stored configuration is input like any other */
    if ((error = enums_from_json(c, root)) < 0 || (error = kevo_run_config_check(c)) < 0)
        return kevo_error_set(KEVO_EINVAL, "the run's stored configuration: %s",
                              kevo_error_last());
    const cJSON *t = cJSON_GetObjectItem(root, "task_dirs");
    if (!cJSON_IsArray(t))
        return kevo_error_set(KEVO_EINVAL, "the run's stored configuration has no task list");
    *ndirs = (size_t)cJSON_GetArraySize(t);
    if (!(*dirs = calloc(*ndirs + 1, sizeof(char *))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t k = 0;
    for (const cJSON *d = t->child; d; d = d->next) {
        if (!cJSON_IsString(d) || !((*dirs)[k++] = strdup(d->valuestring)))
            return kevo_error_set(cJSON_IsString(d) ? KEVO_ENOMEM : KEVO_EINVAL,
                                  "the run's stored task list is damaged");
    }
    return 0;
}

/* ---- the one derivation --------------------------------------------------- */

void kevo_agent__derive(kevo_derived *out, const kevo_run_config *c)
{
    memset(out, 0, sizeof(*out));
    kevo_eval_options_default(&out->eval);
    out->eval.backend = c->backend;
    if (c->quick_timing) {
        out->eval.min_time_s = 0.2;
        out->eval.min_samples = 5;
        out->eval.max_time_s = 10;
    }
    kevo_learn_config_init(&out->learn);
    out->learn.alpha = c->alpha;
    out->learn.q_init = c->q_init;
    out->learn.normalize = c->normalize;
    /* --memory off: nothing retrieved, nothing learnt (attempts are still
     * recorded, with their rewards, for the report) */
    out->learn.frozen = !c->memory;

    /* the context of LLM prompts: the same Q0, alpha, epsilon and pool */
    kevo_context_config *cc = &out->context;
    kevo_context_config_init(cc);
    if (c->token_budget > 0)
        cc->token_budget = c->token_budget;
    else if (c->context == KEVO_RUN_CONTEXT_PASSIVE)
        /* KOPE's passive baseline: agent-led context that grows with the
         * history, no budget (the token comparison is the point) */
        cc->token_budget = KEVO_PASSIVE_BUDGET;
    cc->epsilon = c->epsilon;
    cc->alpha = c->alpha;
    cc->q_init = c->q_init;
    cc->lambda = c->lambda;
    cc->n = c->pool_n;
    /* the refinement baseline sees its own history; pass@k sees no memory */
    bool passive = c->context == KEVO_RUN_CONTEXT_PASSIVE || c->strategy == KEVO_STRATEGY_REFINE;
    cc->mode = passive                                  ? KEVO_CONTEXT_PASSIVE
               : c->retrieval == KEVO_RETRIEVAL_VALUE  ? KEVO_CONTEXT_VALUE
               : c->retrieval == KEVO_RETRIEVAL_RANDOM ? KEVO_CONTEXT_RANDOM
                                                       : KEVO_CONTEXT_HEURISTIC;
    out->memory = c->memory && c->strategy != KEVO_STRATEGY_PASSK;
    out->audit = !kevo_agent__builtin(c) && c->audit != 0;
    if (!out->memory) {
        cc->n = 0;
        cc->max_practices = 0;
        cc->max_api = 0;
    }

    /* start points: one policy (kevo_context_start_point) */
    bool by_value = c->retrieval == KEVO_RETRIEVAL_VALUE && c->memory;
    /* the refinement baseline (App. D.2) reverts to the best kernel when a
     * new one is slower or wrong: it always refines the fastest. The
     * built-in generator's refinement continues from the newest. */
    kevo_start_rule refine_rule = kevo_agent__builtin(c) ? KEVO_START_NEWEST : KEVO_START_FASTEST;
    /* the built-in generator appends one recipe to its start point: a
     * kernel slower than its parent is no place to go on from (without
     * this, never-refined kernels at Q2's optimistic q_init won every
     * pick, and 69 attempts on matmul_square built a chain of 31 recipes
     * whose newest kernels ran at 0.6-0.75 of the best). Not for the
     * refinement baseline: it refines the newest kernel, as the papers' */
    out->start_climb = kevo_agent__builtin(c) && c->strategy == KEVO_STRATEGY_EVO;
    /* and it tries every promising recipe on the reference first, then on
     * the fastest kernel: a 60-attempt run on matmul_square refined the
     * reference three times (flags, unroll_jam, unroll), never with
     * register_block, which alone makes it 3.3x faster, then stacked
     * register_block on unroll_jam's jammed loop (1.4x); with the root ply
     * alone, another gave its fastest kernel (register_block, 3.1x) two
     * children, neither omp_parallel, and spread the other 48 attempts
     * over 27 slower start points (an untried one scores q_init) */
    out->start_plies = out->start_climb;
    out->start_rule = c->strategy == KEVO_STRATEGY_REFINE ? refine_rule
                      : !by_value                         ? KEVO_START_FASTEST
                      : c->start_score == KEVO_START_SCORE_Q2_LATENCY ? KEVO_START_Q2_LATENCY
                                                                      : KEVO_START_Q2;

    kevo_llm_config_init(&out->llm);
    out->llm.api_base = c->api_base;
    out->llm.model = c->model;
    if (c->temperature >= 0)
        out->llm.temperature = c->temperature;
    if (c->max_tokens > 0)
        out->llm.max_tokens = c->max_tokens;
    out->llm.max_tokens_param = c->max_tokens_param;
    out->llm.reasoning_effort = c->reasoning_effort;
    out->llm.replay_path = c->replay_path;
    out->llm.stop_flag = c->stop;
    kevo_llm_config_apply_env(&out->llm);
}
