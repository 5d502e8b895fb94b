/*
 * agent/run.c - a run: for each task, drafting until the first correct
 * kernel, then refining from start points chosen by their learned Q2
 * (EvoKernel), every attempt judged by the verifier and recorded with its
 * edges, reward and Q updates in one transaction (src/memory). A killed
 * run resumes from the store: each task continues at the iteration after
 * its last recorded attempt, so at most the attempt in flight is lost.
 */
#include "agent/internal.h"
#include "kevo/llm.h"
#include "kevo/recipe.h"
#include "kevo/sys/backend.h"
#include "kevo/verify.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kevo_run_config_init(kevo_run_config *c)
{
    memset(c, 0, sizeof(*c));
    c->generator = "builtin";
    c->strategy = "evo";
    c->backend = "c";
    c->db_path = "kevo.db";
    c->iterations = 30;
    c->seed = 1;
    c->retrieval = "value";
    c->context = "active";
    c->temperature = -1;
    c->memory = true;
    c->epsilon = 0.1;
    c->alpha = 0.3;
    c->q_init = 0.5;
    c->lambda = 3;
    c->pool_n = 6;
}

const char *kevo_run_config_check(const kevo_run_config *c)
{
    if (!(c->epsilon >= 0 && c->epsilon <= 1))
        return "epsilon (--epsilon) must be in [0, 1]";
    if (!(c->alpha > 0 && c->alpha <= 1))
        return "alpha (--alpha) must be in (0, 1]";
    if (!(c->q_init >= -1 && c->q_init <= 1))
        return "q_init (--q-init) must be in [-1, 1], the range of the rewards";
    if (c->lambda < 1 || c->lambda > 100)
        return "lambda (--lambda) must be an integer in [1, 100]";
    if (c->pool_n < 0 || c->pool_n > 100)
        return "pool_n (--pool-n) must be an integer in [0, 100]";
    return NULL;
}

void kevo_proposal_clear(kevo_proposal *p)
{
    free(p->source);
    free(p->failure);
    free(p->recipes_json);
    memset(p, 0, sizeof(*p));
}

static char *config_json(const kevo_run_config *c, char **dirs, size_t ndirs)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *paths = cJSON_AddArrayToObject(o, "paths");
    for (size_t i = 0; i < c->npaths; i++)
        cJSON_AddItemToArray(paths, cJSON_CreateString(c->paths[i]));
    cJSON *tasks = cJSON_AddArrayToObject(o, "task_dirs");
    for (size_t i = 0; i < ndirs; i++)
        cJSON_AddItemToArray(tasks, cJSON_CreateString(dirs[i]));
    cJSON_AddStringToObject(o, "generator", c->generator);
    cJSON_AddStringToObject(o, "strategy", c->strategy);
    cJSON_AddStringToObject(o, "backend", c->backend);
    cJSON_AddNumberToObject(o, "iterations", c->iterations);
    cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    cJSON_AddStringToObject(o, "retrieval", c->retrieval);
    cJSON_AddStringToObject(o, "context", c->context);
    cJSON_AddNumberToObject(o, "token_budget", c->token_budget);
    if (c->model)
        cJSON_AddStringToObject(o, "model", c->model);
    if (c->api_base)
        cJSON_AddStringToObject(o, "api_base", c->api_base);
    if (c->replay_path)
        cJSON_AddStringToObject(o, "replay", c->replay_path);
    cJSON_AddBoolToObject(o, "memory", c->memory);
    cJSON_AddNumberToObject(o, "epsilon", c->epsilon);
    cJSON_AddNumberToObject(o, "alpha", c->alpha);
    cJSON_AddNumberToObject(o, "q_init", c->q_init);
    cJSON_AddNumberToObject(o, "lambda", c->lambda);
    cJSON_AddNumberToObject(o, "pool_n", c->pool_n);
    cJSON_AddBoolToObject(o, "normalize", c->normalize);
    cJSON_AddBoolToObject(o, "quick_timing", c->quick_timing);
    cJSON_AddNumberToObject(o, "refine_with_builtin", c->refine_with_builtin);
    cJSON_AddBoolToObject(o, "audit", c->audit);
    cJSON_AddBoolToObject(o, "reflect", c->reflect);
    if (c->memory_from)
        cJSON_AddStringToObject(o, "memory_from", c->memory_from);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* Restore a run's configuration (for --resume). Strings point into `root`. */
static int config_from_json(kevo_run_config *c, char ***dirs, size_t *ndirs, cJSON *root)
{
    const cJSON *v;
    if ((v = cJSON_GetObjectItem(root, "generator")) && cJSON_IsString(v))
        c->generator = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "strategy")) && cJSON_IsString(v))
        c->strategy = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "backend")) && cJSON_IsString(v))
        c->backend = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "retrieval")) && cJSON_IsString(v))
        c->retrieval = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "context")) && cJSON_IsString(v))
        c->context = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "token_budget")) && cJSON_IsNumber(v))
        c->token_budget = v->valueint;
    if ((v = cJSON_GetObjectItem(root, "model")) && cJSON_IsString(v) && !c->model)
        c->model = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "api_base")) && cJSON_IsString(v) && !c->api_base)
        c->api_base = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "replay")) && cJSON_IsString(v) && !c->replay_path)
        c->replay_path = v->valuestring;
    if ((v = cJSON_GetObjectItem(root, "iterations")) && cJSON_IsNumber(v))
        c->iterations = v->valueint;
    if ((v = cJSON_GetObjectItem(root, "seed")) && cJSON_IsNumber(v))
        c->seed = (uint64_t)v->valuedouble;
    if ((v = cJSON_GetObjectItem(root, "memory")))
        c->memory = cJSON_IsTrue(v);
    if ((v = cJSON_GetObjectItem(root, "epsilon")) && cJSON_IsNumber(v))
        c->epsilon = v->valuedouble;
    if ((v = cJSON_GetObjectItem(root, "alpha")) && cJSON_IsNumber(v))
        c->alpha = v->valuedouble;
    if ((v = cJSON_GetObjectItem(root, "q_init")) && cJSON_IsNumber(v))
        c->q_init = v->valuedouble;
    if ((v = cJSON_GetObjectItem(root, "lambda")) && cJSON_IsNumber(v))
        c->lambda = v->valueint;
    if ((v = cJSON_GetObjectItem(root, "pool_n")) && cJSON_IsNumber(v))
        c->pool_n = v->valueint;
    if ((v = cJSON_GetObjectItem(root, "normalize")))
        c->normalize = cJSON_IsTrue(v);
    /* a stored configuration is input like any other */
    const char *bad = kevo_run_config_check(c);
    if (bad)
        return kevo_error_set(KEVO_EINVAL, "the run's stored configuration: %s", bad);
    if ((v = cJSON_GetObjectItem(root, "audit")))
        c->audit = cJSON_IsTrue(v);
    if ((v = cJSON_GetObjectItem(root, "reflect")))
        c->reflect = cJSON_IsTrue(v);
    if ((v = cJSON_GetObjectItem(root, "refine_with_builtin")) && cJSON_IsNumber(v))
        c->refine_with_builtin = v->valuedouble;
    if ((v = cJSON_GetObjectItem(root, "quick_timing")))
        c->quick_timing = cJSON_IsTrue(v);
    const cJSON *t = cJSON_GetObjectItem(root, "task_dirs");
    if (!cJSON_IsArray(t))
        return kevo_error_set(KEVO_EINVAL, "the run's stored configuration has no task list");
    *ndirs = (size_t)cJSON_GetArraySize(t);
    *dirs = calloc(*ndirs + 1, sizeof(char *));
    size_t k = 0;
    for (const cJSON *d = t->child; d; d = d->next)
        (*dirs)[k++] = strdup(d->valuestring);
    return 0;
}

double kevo_start_score(double q, int64_t n, double speedup, double best, double q_init)
{
    /* an untried start point is valued optimistically; every start point
     * pays for how much slower it is than the best (log ratio, the units of
     * the reward): a refinement of it must gain that much just to catch up.
     * Without this, the draft that gave an 18x child kept the high Q that
     * child earned it and was refined again instead of the 18x kernel. */
    if (n == 0)
        q = q_init;
    if (speedup > 0 && best > 0)
        q += log(speedup / best);
    return q;
}

/* Start point for refining: epsilon-greedy over Q2 among the task's correct
 * attempts in this run (heuristic/random: the fastest one). */
static int pick_start(kevo_attempt **out, kevo_memory *mem, const char *task, int64_t run,
                      const kevo_run_config *cfg, kevo_rng *rng)
{
    *out = NULL;
    kevo_attempt_filter f = {0};
    f.run_id = run;
    f.task = task;
    f.correct_only = 1;
    f.best_first = 1;
    kevo_attempt_list *list = NULL;
    int error = kevo_memory_attempt_list(&list, mem, &f);
    if (error < 0 || list->n == 0) {
        kevo_attempt_list_free(list);
        return error;
    }
    size_t pick = 0; /* best_first: index 0 is the fastest */
    if (!strcmp(cfg->strategy, "refine")) {
        /* iterative refinement: continue from the newest correct kernel */
        for (size_t i = 1; i < list->n; i++)
            if (list->attempts[i].id > list->attempts[pick].id)
                pick = i;
    } else if (!strcmp(cfg->retrieval, "value") && cfg->memory) {
        if (kevo_rng_uniform(rng) < cfg->epsilon) {
            pick = (size_t)(kevo_rng_uniform(rng) * (double)list->n);
        } else {
            double best = -INFINITY;
            for (size_t i = 0; i < list->n; i++) {
                double q;
                int64_t n = 0;
                kevo_memory_q_start_get(&q, &n, mem, list->attempts[i].id);
                q = kevo_start_score(q, n, list->attempts[i].speedup, list->attempts[0].speedup,
                                     cfg->q_init);
                if (q > best + 1e-12) {
                    best = q;
                    pick = i;
                }
            }
        }
    }
    error = kevo_memory_attempt_get(out, mem, list->attempts[pick].id);
    kevo_attempt_list_free(list);
    return error;
}

static bool source_seen(kevo_memory *mem, const char *task, int64_t run, const char *src)
{
    kevo_attempt_list *list = NULL;
    bool seen = false;
    if (kevo_memory_attempts_of_task(&list, mem, task, run) < 0)
        return false;
    for (size_t i = 0; i < list->n && !seen; i++)
        seen = list->attempts[i].source && !strcmp(list->attempts[i].source, src);
    kevo_attempt_list_free(list);
    return seen;
}

static char *gates_json(const kevo_eval_result *r, const kevo_task *t)
{
    char *full = NULL;
    kevo_eval_result_json(&full, r, t, false);
    cJSON *o = cJSON_Parse(full);
    free(full);
    char *g = o ? cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "gates")) : strdup("[]");
    cJSON_Delete(o);
    return g;
}

/* The feedback of the task's latest attempt in this run (drafting shows it). */
static char *latest_feedback(kevo_memory *mem, const char *task, int64_t run)
{
    kevo_attempt_filter f = {0};
    f.run_id = run;
    f.task = task;
    f.newest_first = 1;
    f.limit = 1;
    kevo_attempt_list *list = NULL;
    char *fb = NULL;
    if (kevo_memory_attempt_list(&list, mem, &f) == 0 && list->n && list->attempts[0].feedback)
        fb = strdup(list->attempts[0].feedback);
    kevo_attempt_list_free(list);
    return fb;
}

/* One task's remaining iterations. *worked: whether it ran any (a resumed
 * run skips tasks already complete). */
static int run_task(bool *worked, kevo_memory *mem, kevo_provider *prov, int64_t run,
                    const char *dir, size_t index, size_t total, const kevo_run_config *cfg)
{
    *worked = false;
    int error = 0;
    kevo_agent_task at = {0};
    kevo_evaluator *ev = NULL;
    kevo_attempt_list *done_list = NULL;
    if ((error = kevo_task_load(&at.task, dir)) < 0)
        goto done;
    if ((error = kevo_file_read(&at.reference, NULL, at.task->reference_path)) < 0)
        goto done;
    kevo_memory_task mt = {0};
    mt.name = at.task->name;
    mt.level = at.task->level;
    mt.category = at.task->category;
    mt.description = at.task->description;
    mt.reference = at.reference;
    mt.suite_path = dir;
    if ((error = kevo_memory_task_upsert(mem, &mt, NULL)) < 0)
        goto done;
    if ((error = kevo_memory_attempts_of_task(&done_list, mem, at.task->name, run)) < 0)
        goto done;
    int start_iter = (int)done_list->n;
    if (start_iter >= cfg->iterations) {
        if (!cfg->quiet)
            printf("[%zu/%zu] %-28s already complete (%d attempts)\n", index + 1, total,
                   at.task->name, start_iter);
        goto done;
    }
    *worked = true;
    kevo_eval_options eo;
    kevo_eval_options_default(&eo);
    eo.backend = cfg->backend;
    if (cfg->quick_timing) {
        eo.min_time_s = 0.2;
        eo.min_samples = 5;
        eo.max_time_s = 10;
    }
    if ((error = kevo_evaluator_new(&ev, at.task, &eo)) < 0)
        goto done;
    kevo_learn_config lc;
    kevo_learn_config_init(&lc);
    lc.alpha = cfg->alpha;
    lc.q_init = cfg->q_init;
    lc.normalize = cfg->normalize;
    double best = 0;
    for (size_t i = 0; i < done_list->n; i++)
        if (done_list->attempts[i].speedup > best)
            best = done_list->attempts[i].speedup;
    for (int it = start_iter; it < cfg->iterations; it++) {
        if (cfg->stop && *cfg->stop) {
            error = KEVO_EINTR;
            goto done;
        }
        kevo_rng rng;
        uint64_t key[2] = {cfg->seed, (uint64_t)it};
        kevo_rng_seed(&rng, kevo_hash64(key, sizeof(key), kevo_hash64(at.task->name,
                                                                      strlen(at.task->name), 0)));
        kevo_attempt *start = NULL;
        bool passk = prov && !strcmp(cfg->strategy, "passk");
        if (!passk && (error = pick_start(&start, mem, at.task->name, run, cfg, &rng)) < 0)
            goto done;
        kevo_proposal prop = {0};
        kevo_attempt a = {0};
        a.run_id = run;
        a.task = at.task->name;
        a.backend = cfg->backend;
        a.generator = cfg->generator;
        a.iteration = it;
        bool use_builtin = !prov || (start && cfg->refine_with_builtin > 0 &&
                                     kevo_rng_uniform(&rng) < cfg->refine_with_builtin);
        if (!use_builtin) {
            a.stage = start ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT;
            a.parent_id = start ? start->id : 0;
            /* pass@k: independent samples, no feedback, no memory */
            char *fb = start || passk ? NULL : latest_feedback(mem, at.task->name, run);
            kevo_run_config local = *cfg;
            if (passk)
                local.memory = false;
            if (!strcmp(cfg->strategy, "refine"))
                local.context = "passive";
            error = kevo_llm_propose(&prop, prov, mem, &at, a.stage, a.parent_id, fb, &local,
                                     &rng, it);
            free(fb);
            if (error < 0) {
                kevo_attempt_free(start);
                goto done;
            }
        } else if (!start) {
            /* drafting: the built-in generator's first draft is the task's own
             * reference (on OpenCL: ported as is, one work-item) */
            a.stage = KEVO_STAGE_DRAFT;
            if (!strcmp(cfg->backend, "opencl")) {
                if (kevo_recipe_port_opencl(&prop.source, at.reference, at.task->name) < 0) {
                    prop.failure = strdup(kevo_error_last());
                    kevo_error_clear();
                }
                snprintf(prop.summary, sizeof(prop.summary), "reference, ported");
            } else { /* c: kevo_agent_run refuses the built-in generator elsewhere */
                prop.source = strdup(at.reference);
                snprintf(prop.summary, sizeof(prop.summary), "draft from the reference");
            }
        } else {
            a.stage = KEVO_STAGE_REFINE;
            a.parent_id = start->id;
            a.generator = "builtin";
            for (int tries = 0; tries < 6; tries++) {
                kevo_proposal_clear(&prop);
                if ((error = kevo_builtin_propose(&prop, mem, &at, start->id, start->source,
                                                  start->recipes_json, cfg, &rng)) < 0) {
                    kevo_attempt_free(start);
                    goto done;
                }
                if (prop.exhausted || !prop.source ||
                    !source_seen(mem, at.task->name, run, prop.source))
                    break;
            }
        }
        kevo_eval_result r = {0};
        char *gates = NULL;
        if (prop.exhausted) {
            a.verdict = KEVO_VERDICT_COMPILE_ERROR;
            a.feedback = "no recipe applies to this start point";
            a.source = start ? start->source : at.reference;
        } else if (!prop.source) {
            a.verdict = KEVO_VERDICT_COMPILE_ERROR;
            a.feedback = prop.failure ? prop.failure : "the generator produced no candidate";
            a.source = "";
        } else {
            if ((error = kevo_evaluator_eval(ev, prop.source, &r)) < 0) {
                kevo_attempt_free(start);
                kevo_proposal_clear(&prop);
                goto done;
            }
            a.verdict = r.verdict;
            a.feedback = r.feedback;
            a.source = prop.source;
            gates = gates_json(&r, at.task);
            a.gates_json = gates;
            if (r.has_latency) {
                a.candidate_us = r.latency.candidate_us;
                a.reference_us = r.latency.reference_us;
                a.speedup = r.latency.speedup;
            }
        }
        a.recipes_json = prop.recipes_json;
        int64_t extra[2] = {0, 0}; /* auditor and reflection tokens */
        char *audit_reason = NULL, *audit_feedback = NULL, *audit_gates = NULL;
        char *lesson = NULL;
        bool compiled = kevo_verdict_compiled(a.verdict);
        if (prov && cfg->audit && compiled && prop.source) {
            /* EvoKernel's model-based auditor, after the static gate */
            bool invalid = false;
            if ((error = kevo_llm_audit(&invalid, &audit_reason, prov, &at, prop.source, cfg,
                                        extra)) < 0) {
                kevo_eval_result_clear(&r);
                free(gates);
                kevo_proposal_clear(&prop);
                kevo_attempt_free(start);
                goto done;
            }
            if (invalid) {
                kevo_buf b = {0};
                kevo_buf_printf(&b, "Rejected by the model-based auditor: %s",
                                audit_reason ? audit_reason : "(no reason given)");
                audit_feedback = kevo_buf_detach(&b);
                cJSON *g = cJSON_Parse(gates ? gates : "[]");
                cJSON *j = cJSON_CreateObject();
                cJSON_AddStringToObject(j, "name", "audit");
                cJSON_AddBoolToObject(j, "ok", false);
                cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
                cJSON_AddItemToArray(msgs, cJSON_CreateString(audit_reason ? audit_reason : ""));
                if (g)
                    cJSON_AddItemToArray(g, j);
                else
                    cJSON_Delete(j);
                audit_gates = g ? cJSON_PrintUnformatted(g) : NULL;
                cJSON_Delete(g);
                a.verdict = KEVO_VERDICT_REJECTED;
                a.feedback = audit_feedback;
                a.gates_json = audit_gates;
                a.candidate_us = a.reference_us = a.speedup = 0;
            }
        }
        if (prov && cfg->reflect && prop.source &&
            (error = kevo_llm_reflect(&lesson, prov, &at, prop.source, kevo_verdict_name(a.verdict), a.feedback, cfg,
                                      extra)) < 0) {
            free(audit_reason);
            free(audit_feedback);
            free(audit_gates);
            kevo_eval_result_clear(&r);
            free(gates);
            kevo_proposal_clear(&prop);
            kevo_attempt_free(start);
            goto done;
        }
        a.tokens_prompt = prop.tokens_prompt + extra[0];
        a.tokens_completion = prop.tokens_completion + extra[1];
        a.tokens_estimated = prop.tokens_estimated;
        int64_t id = 0;
        error = kevo_memory_attempt_record(mem, &a, prop.used, prop.nused, &lc, &id);
        if (error == 0 && lesson) {
            char title[160];
            snprintf(title, sizeof(title), "reflection on %s, iteration %d (%s)", at.task->name,
                     it + 1, kevo_verdict_name(a.verdict));
            kevo_item item = {0};
            item.kind = KEVO_ITEM_EXPERIENCE;
            item.title = title;
            item.body = lesson;
            item.category = at.task->category;
            item.task = at.task->name;
            item.backend = cfg->backend;
            item.tags = "reflection";
            error = kevo_memory_item_add_distilled(mem, &item, id, NULL);
        }
        free(lesson);
        free(audit_reason);
        free(audit_feedback);
        free(audit_gates);
        if (a.speedup > best)
            best = a.speedup;
        if (error == 0 && !cfg->quiet)
        {
            char sp[32] = "";
            if (a.speedup > 0)
                snprintf(sp, sizeof(sp), "%.2fx", a.speedup);
            printf("[%zu/%zu] %-24s iter %2d/%d %-6s %-24.24s %-13s %7s  best %.2fx\n",
                   index + 1, total, at.task->name, it + 1, cfg->iterations,
                   a.stage == KEVO_STAGE_DRAFT ? "draft" : "refine", prop.summary, kevo_verdict_name(a.verdict), sp,
                   best);
        }
        fflush(stdout);
        free(gates);
        kevo_eval_result_clear(&r);
        kevo_proposal_clear(&prop);
        kevo_attempt_free(start);
        if (error < 0)
            goto done;
    }
done:
    kevo_attempt_list_free(done_list);
    kevo_evaluator_free(ev);
    kevo_task_free(at.task);
    free(at.reference);
    return error;
}

/* --jobs N: N tasks in flight, each worker with its own store connection;
 * the verifier's timing slot keeps latency measurements from overlapping. */
typedef struct {
    const kevo_run_config *cfg;
    kevo_provider *prov;
    int64_t run_id;
    char **dirs;
    size_t ndirs;
    kevo_memory *mem; /* worker 0's store */
    pthread_mutex_t lock;
    size_t next;
    int error; /* first fatal error, or KEVO_EINTR */
    bool first_taken;
    double t0;       /* when the run (or its resumption) started */
    size_t finished; /* tasks done, of ndirs */
    size_t worked;   /* of which ran attempts (not already complete) */
} worker_shared;

/* Run-level progress after a task: how far, how long, about how much is
 * left (from the mean wall time of the tasks that ran attempts). */
static void progress(worker_shared *ws, bool worked)
{
    pthread_mutex_lock(&ws->lock);
    ws->finished++;
    ws->worked += worked;
    double elapsed = kevo_now_s() - ws->t0;
    size_t left = ws->ndirs - ws->finished;
    if (!ws->cfg->quiet && ws->worked > 0 && left > 0) {
        long e = (long)elapsed, r = (long)(elapsed / (double)ws->worked * (double)left);
        printf("-- %zu of %zu tasks done, %ldm%02lds elapsed, about %ldm%02lds left\n",
               ws->finished, ws->ndirs, e / 60, e % 60, r / 60, r % 60);
        fflush(stdout);
    }
    pthread_mutex_unlock(&ws->lock);
}

static void *worker(void *arg)
{
    worker_shared *ws = arg;
    kevo_memory *mem = NULL;
    pthread_mutex_lock(&ws->lock);
    if (!ws->first_taken) {
        ws->first_taken = true;
        mem = ws->mem;
    }
    pthread_mutex_unlock(&ws->lock);
    bool own = mem == NULL;
    if (own && kevo_memory_open(&mem, ws->cfg->db_path) < 0) {
        pthread_mutex_lock(&ws->lock);
        if (!ws->error)
            ws->error = kevo_error_set(KEVO_EIO, "%s", kevo_error_last());
        pthread_mutex_unlock(&ws->lock);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&ws->lock);
        size_t i = ws->next++;
        bool stop = ws->error != 0 || i >= ws->ndirs;
        pthread_mutex_unlock(&ws->lock);
        if (stop)
            break;
        bool worked = false;
        int error =
            run_task(&worked, mem, ws->prov, ws->run_id, ws->dirs[i], i, ws->ndirs, ws->cfg);
        progress(ws, worked);
        if (error < 0) {
            /* a task that cannot be evaluated (broken reference) is reported and the
             * run goes on; running out of memory or disk, a dead provider, or the
             * user's stop end it */
            if (error != KEVO_EINTR)
                fprintf(stderr, "kevo run: %s: %s\n", ws->dirs[i], kevo_error_last());
            if (error == KEVO_EINTR || error == KEVO_ENOMEM || error == KEVO_EIO ||
                error == KEVO_ETIMEOUT || error == KEVO_EINFRA) {
                pthread_mutex_lock(&ws->lock);
                if (!ws->error)
                    ws->error = error;
                pthread_mutex_unlock(&ws->lock);
            }
        }
    }
    if (own)
        kevo_memory_free(mem);
    return NULL;
}

int kevo_agent_run(int64_t *out_run_id, const kevo_run_config *cfg_in)
{
    kevo_run_config cfg = *cfg_in;
    kevo_memory *mem = NULL;
    char **dirs = NULL;
    size_t ndirs = 0;
    char *cfgtext = NULL;
    cJSON *stored = NULL;
    kevo_run *run = NULL;
    int error = 0;
    int64_t run_id = 0;
    kevo_provider *prov = NULL;
    if (!kevo_backend_find(cfg.backend))
        return kevo_error_set(KEVO_EINVAL, "unknown backend '%s'", cfg.backend);
    if (!strcmp(cfg.generator, "builtin") && strcmp(cfg.backend, "c") != 0 &&
        strcmp(cfg.backend, "opencl") != 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the built-in generator writes C and OpenCL candidates, not %s: "
                              "use an LLM generator (--generator openai) for --backend %s",
                              cfg.backend, cfg.backend);
    if ((error = kevo_memory_open(&mem, cfg.db_path)) < 0)
        goto done;
    if (cfg.resume_run) {
        if ((error = kevo_memory_run_get(&run, mem, cfg.resume_run)) < 0)
            goto done;
        stored = cJSON_Parse(run->config_json);
        if (!stored) {
            error = kevo_error_set(KEVO_EINVAL, "run %lld: stored configuration is not JSON",
                                   (long long)cfg.resume_run);
            goto done;
        }
        if ((error = config_from_json(&cfg, &dirs, &ndirs, stored)) < 0)
            goto done;
        run_id = cfg.resume_run;
    } else {
        if (cfg.memory_from) {
            kevo_import_stats is;
            if ((error = kevo_memory_import(mem, cfg.memory_from, &is)) < 0)
                goto done;
        }
        for (size_t i = 0; i < cfg.npaths; i++) {
            char **found = NULL;
            size_t k = 0;
            if ((error = kevo_task_find(&found, &k, cfg.paths[i])) < 0)
                goto done;
            if (k == 0) {
                kevo_task_dirs_free(found, k);
                error = kevo_error_set(KEVO_EINVAL, "%s: no task.json found under it",
                                       cfg.paths[i]);
                goto done;
            }
            char **m = realloc(dirs, (ndirs + k + 1) * sizeof(char *));
            if (!m) {
                error = kevo_error_set(KEVO_ENOMEM, "out of memory");
                goto done;
            }
            dirs = m;
            memcpy(dirs + ndirs, found, k * sizeof(char *));
            ndirs += k;
            free(found);
        }
        /* validate every task before spending time on any; keep those that
         * list the backend (task.json "backends", default ["c"]) */
        size_t kept = 0, found_total = ndirs;
        for (size_t i = 0; i < ndirs; i++) {
            kevo_task *t = NULL;
            if ((error = kevo_task_load(&t, dirs[i])) < 0)
                goto done;
            bool listed = false;
            for (size_t b = 0; b < t->nbackends; b++)
                listed = listed || !strcmp(t->backends[b], cfg.backend);
            kevo_task_free(t);
            if (listed)
                dirs[kept++] = dirs[i];
            else
                free(dirs[i]);
        }
        ndirs = kept;
        if (ndirs == 0) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "none of the %zu tasks lists backend '%s' in its task.json "
                                   "field 'backends'",
                                   found_total, cfg.backend);
            goto done;
        }
        if (kept < found_total && !cfg.quiet)
            fprintf(stderr,
                    "kevo run: %zu of %zu tasks list backend '%s' (task.json 'backends'); "
                    "running those\n",
                    kept, found_total, cfg.backend);
        if (cfg.max_tasks > 0 && (size_t)cfg.max_tasks < ndirs) {
            for (size_t i = (size_t)cfg.max_tasks; i < ndirs; i++)
                free(dirs[i]);
            ndirs = (size_t)cfg.max_tasks;
        }
        cfgtext = config_json(&cfg, dirs, ndirs);
        if ((error = kevo_memory_run_begin(mem, cfgtext, &run_id)) < 0)
            goto done;
    }
    *out_run_id = run_id;
    if (strcmp(cfg.generator, "builtin")) {
        kevo_llm_config lc;
        kevo_llm_config_init(&lc);
        lc.api_base = cfg.api_base;
        lc.model = cfg.model;
        if (cfg.temperature >= 0)
            lc.temperature = cfg.temperature;
        if (cfg.max_tokens > 0)
            lc.max_tokens = cfg.max_tokens;
        lc.replay_path = cfg.replay_path;
        lc.stop_flag = cfg.stop;
        kevo_llm_config_apply_env(&lc);
        if ((error = kevo_llm_provider_new(&prov, cfg.generator, &lc)) < 0)
            goto done;
        if (cfg.record_path) {
            kevo_provider *wrapped = NULL;
            if ((error = kevo_llm_recorder_wrap(&wrapped, prov, cfg.record_path)) < 0)
                goto done;
            prov = wrapped;
        }
    }
    if (!cfg.quiet)
        printf("run %lld: %zu tasks, %d iterations each, generator %s, store %s\n",
               (long long)run_id, ndirs, cfg.iterations, cfg.generator, cfg.db_path);
    {
        int jobs = cfg.jobs > 0 ? cfg.jobs : 1;
        if ((size_t)jobs > ndirs)
            jobs = (int)ndirs;
        worker_shared ws = {.cfg = &cfg, .prov = prov, .run_id = run_id, .dirs = dirs,
                            .ndirs = ndirs, .mem = mem, .t0 = kevo_now_s()};
        pthread_mutex_init(&ws.lock, NULL);
        pthread_t *threads = calloc((size_t)jobs, sizeof(pthread_t));
        for (int j = 1; j < jobs; j++)
            pthread_create(&threads[j], NULL, worker, &ws);
        worker(&ws); /* this thread is worker 0 and uses the open store */
        for (int j = 1; j < jobs; j++)
            pthread_join(threads[j], NULL);
        free(threads);
        pthread_mutex_destroy(&ws.lock);
        error = ws.error;
    }
    kevo_memory_run_finish(mem, run_id, error == KEVO_EINTR ? "interrupted" : "finished");
done:
    kevo_llm_provider_free(prov);
    kevo_task_dirs_free(dirs, ndirs);
    free(cfgtext);
    cJSON_Delete(stored);
    kevo_run_free(run);
    kevo_memory_free(mem);
    return error;
}
