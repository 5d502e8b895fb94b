/*
 * memory/filter.c - remove every trace of some tasks from the memory (e.g.
 * the test operators before a memory is shared or used for a transfer
 * experiment): their attempts and edges, the items of those tasks or
 * distilled from those attempts, emptied runs, their names in run configs;
 * then recompute what those attempts had taught the remaining items (Q and
 * reward statistics) by replaying the remaining attempts, and compact the
 * file so deleted text does not linger on disk.
 */
#include "internal.h"
#include "map.h"

#include "kevo/util.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct id_vec {
    int64_t *v;
    size_t n, cap;
} id_vec;

static int vec_push(id_vec *v, int64_t id)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        int64_t *p = realloc(v->v, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory filtering the memory");
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = id;
    return 0;
}

/* Push `id` once, using `seen` as the set. */
static int set_add(kevo_map *seen, id_vec *v, int64_t id)
{
    if (kevo_map_get(seen, id, NULL))
        return 0;
    int error = kevo_map_put(seen, id, 1);
    return error < 0 ? error : vec_push(v, id);
}

typedef struct filter_ctx {
    kevo_memory *mem;
    kevo_map attempts_seen, items_seen, affected_seen, runs_seen;
    id_vec attempts, items, affected, runs;
} filter_ctx;

static int collect_attempt(void *arg, const kevo_attempt *a)
{
    filter_ctx *fc = arg;
    int error = set_add(&fc->attempts_seen, &fc->attempts, a->id);
    if (error == 0 && a->run_id)
        error = set_add(&fc->runs_seen, &fc->runs, a->run_id);
    return error;
}

static int collect_item(void *arg, const kevo_item *it, double score)
{
    filter_ctx *fc = arg;
    return set_add(&fc->items_seen, &fc->items, it->id);
}

static int collect_distilled(void *arg, const kevo_distilled_edge *e)
{
    filter_ctx *fc = arg;
    return set_add(&fc->items_seen, &fc->items, e->item_id);
}

static int collect_used(void *arg, const kevo_used_edge *e)
{
    filter_ctx *fc = arg;
    return set_add(&fc->affected_seen, &fc->affected, e->used.item_id);
}

/* ---- Q replay --------------------------------------------------------- */

typedef struct replay_ctx {
    id_vec attempts; /* attempts that used the item, by id */
} replay_ctx;

/* an edge recorded with no_credit never updated the item's Q */
static int replay_edge_cb(void *arg, const kevo_used_edge *e)
{
    return e->used.no_credit ? 0 : vec_push(&((replay_ctx *)arg)->attempts, e->attempt_id);
}

typedef struct reward_acc {
    int found;
    kevo_stage stage;
    double reward;
    double raw;
    int infra;
} reward_acc;

static int reward_cb(void *arg, const kevo_attempt *a)
{
    reward_acc *r = arg;
    r->found = 1;
    r->stage = a->stage;
    r->reward = a->reward;
    r->raw = a->reward_raw;
    r->infra = a->verdict == KEVO_VERDICT_INFRA_ERROR;
    return 1;
}

/* Recompute Q(item, draft) and Q(item, refine) from the remaining attempts
 * that used the item, in decision order, with their stored rewards. */
static int replay_item(kevo_memory *mem, int64_t item_id, const kevo_learn_config *cfg)
{
    kevo_store *s = mem->store;
    replay_ctx rc = {0};
    kevo_q_row rows[3] = {{0}};
    int error = s->used_each(s, 0, item_id, replay_edge_cb, &rc);
    if (error < 0)
        goto done;
    for (int st = KEVO_STAGE_DRAFT; st <= KEVO_STAGE_REFINE; st++)
        rows[st] = (kevo_q_row){KEVO_Q_ITEM, item_id, (kevo_stage)st, cfg->q_init, 0};
    for (size_t i = 0; i < rc.attempts.n; i++) {
        reward_acc r = {0};
        if ((error = s->attempt_each(s, rc.attempts.v[i], NULL, reward_cb, &r)) < 0)
            goto done;
        if (!r.found || r.infra || (r.stage != KEVO_STAGE_DRAFT && r.stage != KEVO_STAGE_REFINE))
            continue;
        kevo_q_row *row = &rows[r.stage];
        row->q = kevo_memory_q_step(row->q, r.reward, cfg->alpha);
        row->n++;
    }
    for (int st = KEVO_STAGE_DRAFT; st <= KEVO_STAGE_REFINE && error == 0; st++)
        error = s->q_set(s, &rows[st]);
done:
    free(rc.attempts.v);
    return error;
}

static int stats_cb(void *arg, const kevo_attempt *a)
{
    kevo_reward_stats *st = arg;
    if (a->verdict == KEVO_VERDICT_INFRA_ERROR)
        return 0;
    st->n++;
    double d = a->reward_raw - st->mean;
    st->mean += d / (double)st->n;
    st->m2 += d * (a->reward_raw - st->mean);
    return 0;
}

/* Recompute the refine reward statistics if there were any. */
static int replay_reward_stats(kevo_memory *mem)
{
    kevo_store *s = mem->store;
    kevo_reward_stats cur, st = {.stage = KEVO_STAGE_REFINE};
    int error = s->reward_stats_get(s, KEVO_STAGE_REFINE, &cur);
    if (error < 0 || cur.n == 0)
        return error;
    kevo_attempt_filter f = {.stage = KEVO_STAGE_REFINE};
    if ((error = s->attempt_each(s, 0, &f, stats_cb, &st)) < 0)
        return error;
    return s->reward_stats_set(s, &st);
}

/* ---- full relearning (normalised rewards) ----------------------------- */

typedef struct refine_row {
    int64_t id, parent;
    double raw;
    int infra;
} refine_row;

typedef struct refine_vec {
    refine_row *v;
    size_t n, cap;
} refine_vec;

static int refine_collect_cb(void *arg, const kevo_attempt *a)
{
    refine_vec *rv = arg;
    if (rv->n == rv->cap) {
        size_t cap = rv->cap ? rv->cap * 2 : 256;
        refine_row *p = realloc(rv->v, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory relearning");
        rv->v = p;
        rv->cap = cap;
    }
    rv->v[rv->n++] = (refine_row){a->id, a->parent_id, a->reward_raw,
                                  a->verdict == KEVO_VERDICT_INFRA_ERROR};
    return 0;
}

static int used_item_cb(void *arg, const kevo_used_edge *e)
{
    filter_ctx *fc = arg;
    return set_add(&fc->affected_seen, &fc->affected, e->used.item_id);
}

/* With normalised refine rewards every refine reward depended on all the
 * earlier ones, the deleted included: recompute them in decision order,
 * then every Q-value from scratch. Exactly what recording the remaining
 * attempts alone would have produced. */
static int relearn_all(kevo_memory *mem, filter_ctx *fc, const kevo_learn_config *cfg,
                       kevo_filter_stats *fs)
{
    kevo_store *s = mem->store;
    refine_vec rv = {0};
    kevo_map q2 = {0};
    id_vec parents = {0};
    double *q2v = NULL;
    int64_t *q2n = NULL;
    kevo_attempt_filter f = {.stage = KEVO_STAGE_REFINE, .no_source = 1};
    int error = s->attempt_each(s, 0, &f, refine_collect_cb, &rv);
    if (error < 0)
        goto done;
    kevo_reward_stats st = {.stage = KEVO_STAGE_REFINE};
    for (size_t i = 0; i < rv.n; i++) {
        if (rv.v[i].infra)
            continue;
        /* as when recorded: against the rewards before this one (App. A) */
        double r = kevo_memory_reward_normalize(rv.v[i].raw, st.n, st.mean, st.m2, cfg->var_floor,
                                                cfg->clip);
        st.n++;
        double d = rv.v[i].raw - st.mean;
        st.mean += d / (double)st.n;
        st.m2 += d * (rv.v[i].raw - st.mean);
        if ((error = s->attempt_set_reward(s, rv.v[i].id, r)) < 0)
            goto done;
        /* Q2 of the start point, in the same order */
        if (!rv.v[i].parent)
            continue;
        int64_t slot = 0;
        if (!kevo_map_get(&q2, rv.v[i].parent, &slot)) {
            slot = (int64_t)parents.n;
            if ((error = vec_push(&parents, rv.v[i].parent)) < 0 ||
                (error = kevo_map_put(&q2, rv.v[i].parent, slot)) < 0)
                goto done;
            double *nq = realloc(q2v, parents.n * sizeof(*nq));
            int64_t *nn = nq ? realloc(q2n, parents.n * sizeof(*nn)) : NULL;
            if (nq)
                q2v = nq;
            if (!nq || !nn) {
                error = kevo_error_set(KEVO_ENOMEM, "out of memory relearning");
                goto done;
            }
            q2n = nn;
            q2v[slot] = cfg->q_init;
            q2n[slot] = 0;
        }
        q2v[slot] = kevo_memory_q_step(q2v[slot], r, cfg->alpha);
        q2n[slot]++;
    }
    if ((error = s->reward_stats_set(s, &st)) < 0)
        goto done;
    for (size_t i = 0; i < parents.n; i++) {
        kevo_q_row row = {KEVO_Q_START, parents.v[i], KEVO_STAGE_REFINE, q2v[i], q2n[i]};
        if ((error = s->q_set(s, &row)) < 0)
            goto done;
    }
    /* every item anyone used */
    if ((error = s->used_each(s, 0, 0, used_item_cb, fc)) < 0)
        goto done;
    for (size_t i = 0; i < fc->affected.n; i++) {
        if (kevo_map_get(&fc->items_seen, fc->affected.v[i], NULL))
            continue;
        if ((error = replay_item(mem, fc->affected.v[i], cfg)) < 0)
            goto done;
        fs->q_recomputed++;
    }
done:
    free(rv.v);
    kevo_map_free(&q2);
    free(parents.v);
    free(q2v);
    free(q2n);
    return error;
}

/* ---- run configs ------------------------------------------------------ */

static int name_listed(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return 1;
    return 0;
}

/* Remove, recursively, array elements equal to a name and object members
 * keyed by a name or whose value is a name. Returns 1 when changed. */
static int scrub_json(cJSON *node, const char *const *names, size_t n)
{
    int changed = 0;
    cJSON *child = node->child;
    while (child) {
        cJSON *next = child->next;
        int drop = (cJSON_IsString(child) && name_listed(child->valuestring, names, n)) ||
                   (cJSON_IsObject(node) && name_listed(child->string, names, n));
        if (drop) {
            cJSON_Delete(cJSON_DetachItemViaPointer(node, child));
            changed = 1;
        } else if (cJSON_IsArray(child) || cJSON_IsObject(child)) {
            changed |= scrub_json(child, names, n);
        }
        child = next;
    }
    return changed;
}

typedef struct run_acc {
    id_vec ids;
    char **configs;
    size_t cap;
} run_acc;

static int run_collect_cb(void *arg, const kevo_run *r)
{
    run_acc *ra = arg;
    if (ra->ids.n == ra->cap) {
        size_t cap = ra->cap ? ra->cap * 2 : 16;
        char **p = realloc(ra->configs, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        ra->configs = p;
        ra->cap = cap;
    }
    char *c = strdup(r->config_json ? r->config_json : "{}");
    if (!c)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = vec_push(&ra->ids, r->id);
    if (error < 0) {
        free(c);
        return error;
    }
    ra->configs[ra->ids.n - 1] = c;
    return 0;
}

static int one_attempt_cb(void *arg, const kevo_attempt *a)
{
    *(int *)arg = 1;
    return 1;
}

static int scrub_runs(kevo_memory *mem, const char *const *names, size_t n, const id_vec *touched,
                      kevo_filter_stats *fs)
{
    kevo_store *s = mem->store;
    run_acc ra = {0};
    int error = s->run_each(s, 0, run_collect_cb, &ra);
    if (error < 0)
        goto done;
    for (size_t i = 0; i < ra.ids.n; i++) {
        int was_touched = 0;
        for (size_t j = 0; j < touched->n && !was_touched; j++)
            was_touched = touched->v[j] == ra.ids.v[i];
        if (was_touched) {
            int any = 0;
            kevo_attempt_filter f = {.run_id = ra.ids.v[i], .limit = 1};
            if ((error = s->attempt_each(s, 0, &f, one_attempt_cb, &any)) < 0)
                goto done;
            if (!any) {
                if ((error = s->run_delete(s, ra.ids.v[i])) < 0)
                    goto done;
                fs->runs++;
                continue;
            }
        }
        cJSON *root = cJSON_Parse(ra.configs[i]);
        if (!root)
            continue; /* not ours to repair */
        if (scrub_json(root, names, n)) {
            char *text = cJSON_PrintUnformatted(root);
            if (!text) {
                cJSON_Delete(root);
                error = kevo_error_set(KEVO_ENOMEM, "out of memory");
                goto done;
            }
            /* keep status and finished as they are: read them back first */
            kevo_run *r = NULL;
            if ((error = kevo_memory_run_get(&r, mem, ra.ids.v[i])) == 0)
                error = s->run_update(s, r->id, r->status, r->finished, text);
            kevo_run_free(r);
            cJSON_free(text);
        }
        cJSON_Delete(root);
        if (error < 0)
            goto done;
    }
done:
    for (size_t i = 0; i < ra.ids.n; i++)
        free(ra.configs[i]);
    free(ra.configs);
    free(ra.ids.v);
    return error;
}

/* ---- the filter ------------------------------------------------------- */

static int task_found_cb(void *arg, const kevo_memory_task *t, double score)
{
    *(int *)arg = 1;
    return 1;
}

int kevo_memory_filter_tasks(kevo_memory *mem, const char *const *tasks, size_t n_tasks,
                             const kevo_learn_config *cfg, kevo_filter_stats *out)
{
    kevo_store *s = mem->store;
    kevo_learn_config defaults;
    kevo_filter_stats fs = {0};
    filter_ctx fc = {.mem = mem};
    int error = 0, in_tx = 0;
    cfg = kevo_learn_config_or_default(cfg, &defaults);
    if (n_tasks && !tasks)
        return kevo_error_set(KEVO_EINVAL, "filter: no task names given");
    if ((error = s->tx_begin(s)) < 0)
        return error;
    in_tx = 1;

    /* 1. collect what derives from the tasks */
    for (size_t t = 0; t < n_tasks; t++) {
        kevo_attempt_filter af = {.task = tasks[t]};
        kevo_item_filter itf = {.task = tasks[t], .no_body = 1};
        int found = 0;
        if ((error = s->task_each(s, tasks[t], task_found_cb, &found)) < 0)
            goto done;
        fs.tasks += (size_t)found;
        if ((error = s->attempt_each(s, 0, &af, collect_attempt, &fc)) < 0 ||
            (error = s->item_each(s, 0, &itf, collect_item, &fc)) < 0)
            goto done;
    }
    for (size_t i = 0; i < fc.attempts.n; i++) {
        if ((error = s->distilled_each(s, 0, fc.attempts.v[i], collect_distilled, &fc)) < 0 ||
            (error = s->used_each(s, fc.attempts.v[i], 0, collect_used, &fc)) < 0)
            goto done;
    }

    /* 2. delete: items, then tasks (cascading to attempts, edges, Q2) */
    for (size_t i = 0; i < fc.items.n; i++)
        if ((error = s->item_delete(s, fc.items.v[i])) < 0)
            goto done;
    for (size_t t = 0; t < n_tasks; t++)
        if ((error = s->task_delete(s, tasks[t])) < 0)
            goto done;
    /* a store whose deletes do not cascade still ends clean */
    for (size_t i = fc.attempts.n; i-- > 0;)
        if ((error = s->attempt_delete(s, fc.attempts.v[i])) < 0)
            goto done;
    fs.attempts = fc.attempts.n;
    fs.items = fc.items.n;

    /* 3. relearn what the deleted attempts had taught */
    if (fc.attempts.n && cfg->normalize) {
        if ((error = relearn_all(mem, &fc, cfg, &fs)) < 0)
            goto done;
    } else {
        for (size_t i = 0; i < fc.affected.n; i++) {
            if (kevo_map_get(&fc.items_seen, fc.affected.v[i], NULL))
                continue; /* deleted itself */
            if ((error = replay_item(mem, fc.affected.v[i], cfg)) < 0)
                goto done;
            fs.q_recomputed++;
        }
        if (fc.attempts.n && (error = replay_reward_stats(mem)) < 0)
            goto done;
    }

    /* 4. runs */
    if ((error = scrub_runs(mem, tasks, n_tasks, &fc.runs, &fs)) < 0)
        goto done;

    error = s->tx_commit(s);
    in_tx = 0;
    if (error < 0)
        goto done;
    /* 5. no deleted text left on disk */
    if (s->compact)
        error = s->compact(s);
done:
    if (in_tx)
        error = kevo_memory_tx_end(mem, error);
    if (error == 0 && out)
        *out = fs;
    kevo_map_free(&fc.attempts_seen);
    kevo_map_free(&fc.items_seen);
    kevo_map_free(&fc.affected_seen);
    kevo_map_free(&fc.runs_seen);
    free(fc.attempts.v);
    free(fc.items.v);
    free(fc.affected.v);
    free(fc.runs.v);
    return error;
}

/* One run's learning values from its stored configuration. */
static void learn_of_run(kevo_learn_config *out, const kevo_run *r)
{
    kevo_learn_config_init(out);
    cJSON *o = cJSON_Parse(r->config_json ? r->config_json : "");
    const cJSON *v;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "alpha")))
        out->alpha = v->valuedouble;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "q_init")))
        out->q_init = v->valuedouble;
    if (cJSON_IsBool(v = cJSON_GetObjectItemCaseSensitive(o, "normalize")))
        out->normalize = cJSON_IsTrue(v);
    cJSON_Delete(o);
}

int kevo_memory_learn_config_of_runs(kevo_learn_config *out, kevo_memory *mem)
{
    kevo_learn_config_init(out);
    kevo_run_list *runs = NULL;
    int error = kevo_memory_run_list(&runs, mem);
    for (size_t i = 0; error == 0 && i < runs->n; i++) {
        kevo_learn_config c;
        learn_of_run(&c, &runs->runs[i]);
        if (i == 0) {
            *out = c;
        } else if (c.alpha != out->alpha || c.q_init != out->q_init ||
                   c.normalize != out->normalize) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "runs %lld and %lld of this store learnt with different values "
                                   "(alpha %g/%g, q_init %g/%g, normalize %d/%d): relearning "
                                   "cannot reproduce both", (long long)runs->runs[0].id,
                                   (long long)runs->runs[i].id, out->alpha, c.alpha, out->q_init,
                                   c.q_init, out->normalize, c.normalize);
        }
    }
    kevo_run_list_free(runs);
    return error;
}
