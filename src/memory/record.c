/*
 * memory/record.c - the write path of one evaluated attempt and the value
 * learning behind it (EvoKernel): rewards, the optional z-score
 * normalisation of refine rewards, Monte-Carlo Q updates of the items in
 * the attempt's context and of its start point, and distillation into an
 * experience (and maybe a trace) item. Everything of one attempt happens in
 * one transaction, so a crash never leaves half an attempt.
 */
#include "internal.h"

#include "kevo/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rewards ---------------------------------------------------------- */

static int is_correct(kevo_verdict verdict)
{
    return verdict == KEVO_VERDICT_CORRECT;
}

double kevo_memory_reward_draft(kevo_verdict verdict)
{
    return is_correct(verdict) ? 1.0 : -1.0;
}

double kevo_memory_reward_refine(kevo_verdict verdict, double start_us, double new_us)
{
    if (!is_correct(verdict))
        return -1.0;
    if (!(start_us > 0) || !(new_us > 0) || !isfinite(start_us) || !isfinite(new_us))
        return 0.0;
    return tanh(log(start_us / new_us));
}

double kevo_memory_q_step(double q, double r, double alpha)
{
    return q + alpha * (r - q);
}

double kevo_memory_reward_normalize(double r, int64_t n, double mean, double m2, double var_floor,
                                    double clip)
{
    if (n < 2)
        return 0.0;
    double var = m2 / (double)(n - 1);
    double floor_v = var_floor > 1e-12 ? var_floor : 1e-12;
    if (!(var >= floor_v))
        var = floor_v;
    double z = (r - mean) / sqrt(var);
    double c = clip > 0 ? clip : 3.0;
    if (z > c)
        z = c;
    if (z < -c)
        z = -c;
    return z;
}

/* Welford: fold r into (n, mean, m2). */
static void stats_add(kevo_reward_stats *st, double r)
{
    st->n++;
    double d = r - st->mean;
    st->mean += d / (double)st->n;
    st->m2 += d * (r - st->mean);
}

/* ---- validation ------------------------------------------------------- */

static int check_number(const char *name, double v)
{
    if (!isfinite(v) || v < 0)
        return kevo_error_set(KEVO_EINVAL, "attempt: field '%s' is %g (must be finite and >= 0)",
                              name, v);
    return 0;
}

static int validate(const kevo_attempt *a, const kevo_used_item *used, size_t n_used,
                    const kevo_learn_config *cfg)
{
    int error = 0;
    if (!a)
        return kevo_error_set(KEVO_EINVAL, "attempt: none given");
    if (!a->task || !*a->task)
        return kevo_error_set(KEVO_EINVAL, "attempt: missing field 'task'");
    if (a->stage != KEVO_STAGE_DRAFT && a->stage != KEVO_STAGE_REFINE)
        return kevo_error_set(KEVO_EINVAL,
                              "attempt (task %s): field 'stage' is %d, not draft/refine", a->task,
                              (int)a->stage);
    if ((unsigned)a->verdict >= KEVO_VERDICT_COUNT)
        return kevo_error_set(KEVO_EINVAL, "attempt (task %s): field 'verdict' is %d, not a "
                              "kevo_verdict", a->task, (int)a->verdict);
    if (a->parent_id < 0 || a->run_id < 0)
        return kevo_error_set(KEVO_EINVAL, "attempt (task %s): negative id", a->task);
    if ((error = check_number("candidate_us", a->candidate_us)) < 0 ||
        (error = check_number("reference_us", a->reference_us)) < 0 ||
        (error = check_number("speedup", a->speedup)) < 0)
        return error;
    if (a->tokens_prompt < 0 || a->tokens_completion < 0)
        return kevo_error_set(KEVO_EINVAL, "attempt (task %s): negative token count", a->task);
    if (n_used && !used)
        return kevo_error_set(KEVO_EINVAL, "attempt (task %s): %zu used items but no array",
                              a->task, n_used);
    for (size_t i = 0; i < n_used; i++) {
        if (used[i].item_id <= 0)
            return kevo_error_set(KEVO_EINVAL, "attempt (task %s): used item %zu has id %lld",
                                  a->task, i, (long long)used[i].item_id);
        for (size_t j = 0; j < i; j++)
            if (used[j].item_id == used[i].item_id)
                return kevo_error_set(KEVO_EINVAL, "attempt (task %s): item %lld used twice",
                                      a->task, (long long)used[i].item_id);
    }
    if (!(cfg->alpha > 0 && cfg->alpha <= 1))
        return kevo_error_set(KEVO_EINVAL, "learn config: alpha is %g (must be in (0, 1])",
                              cfg->alpha);
    return 0;
}

/* ---- store helpers ---------------------------------------------------- */

static int count_cb(void *arg, const kevo_item *it, double score)
{
    (*(size_t *)arg)++;
    return 0;
}

static int item_exists(kevo_memory *mem, int64_t id, int *out)
{
    size_t n = 0;
    kevo_item_filter f = {.no_body = 1};
    int error = mem->store->item_each(mem->store, id, &f, count_cb, &n);
    *out = n > 0;
    return error;
}

typedef struct category_acc {
    char *category;
} category_acc;

static int category_cb(void *arg, const kevo_memory_task *t, double score)
{
    category_acc *acc = arg;
    if (t->category && !(acc->category = strdup(t->category)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    return 1;
}

static int q_update(kevo_memory *mem, kevo_q_target target, int64_t id, kevo_stage stage, double r,
                    const kevo_learn_config *cfg)
{
    double q = 0;
    int64_t n = 0;
    int error = mem->store->q_get(mem->store, target, id, stage, &q, &n);
    if (error < 0)
        return error;
    if (n == 0)
        q = cfg->q_init;
    kevo_q_row row = {target, id, stage, kevo_memory_q_step(q, r, cfg->alpha), n + 1};
    return mem->store->q_set(mem->store, &row);
}

static int add_distilled_item(kevo_memory *mem, kevo_item_kind kind, char *title, char *body,
                              const char *category, const kevo_attempt *a, int64_t attempt_id,
                              const char *tags)
{
    char uid[33];
    kevo_memory_uid_new(mem, uid, body, strlen(body));
    kevo_item it = {
        .kind = kind,
        .title = title,
        .body = body,
        .category = category,
        .task = a->task,
        .backend = a->backend,
        .tags = tags,
        .created = a->created,
        .uid = uid,
    };
    int64_t item_id = 0;
    int error = mem->store->item_insert(mem->store, &it, &item_id);
    if (error == 0)
        error = mem->store->distilled_insert(mem->store, item_id, attempt_id);
    return error;
}

/* ---- the write path --------------------------------------------------- */

/* One attempt on its way into the store: its inputs, what the steps of
 * kevo_memory_attempt_record learn about it, and the node they insert. */
typedef struct record_state {
    kevo_memory *mem;
    const kevo_attempt *a;
    const kevo_used_item *used;
    size_t n_used;
    const kevo_learn_config *cfg;
    kevo_attempt *parent; /* the start point it refines, or NULL; owned */
    category_acc cat;     /* the task's category; owned */
    int new_best;         /* its source becomes a trace item */
    int infra;            /* an infrastructure error: no reward, no Q update */
    double raw, reward;
    kevo_attempt row; /* the stored node; strings borrowed from a and uid */
    char uid[33];
} record_state;

/* The parent (the start point of a refine, same task), the task's category
 * and the used items, all of which must exist. */
static int record_load_start(record_state *rs)
{
    kevo_memory *mem = rs->mem;
    const kevo_attempt *a = rs->a;
    int error = 0;
    if (a->parent_id && (error = kevo_memory_attempt_get(&rs->parent, mem, a->parent_id)) < 0) {
        if (error == KEVO_ENOTFOUND)
            error = kevo_error_set(KEVO_EINVAL, "attempt (task %s): parent_id %lld does not exist",
                                   a->task, (long long)a->parent_id);
        goto done;
    }
    if (rs->parent && strcmp(rs->parent->task, a->task) != 0) {
        error = kevo_error_set(KEVO_EINVAL, "attempt (task %s): parent %lld belongs to task %s",
                               a->task, (long long)a->parent_id, rs->parent->task);
        goto done;
    }
    if ((error = mem->store->task_each(mem->store, a->task, category_cb, &rs->cat)) < 0)
        goto done;
    for (size_t i = 0; i < rs->n_used; i++) {
        int exists = 0;
        if ((error = item_exists(mem, rs->used[i].item_id, &exists)) < 0)
            goto done;
        if (!exists) {
            error = kevo_error_set(KEVO_EINVAL, "attempt (task %s): used item %lld does not exist",
                                   a->task, (long long)rs->used[i].item_id);
            goto done;
        }
    }
done:
    return error;
}

/* The best earlier correct attempt decides whether this one is a new
 * trace; ask before inserting. */
static int record_check_best(record_state *rs)
{
    const kevo_attempt *a = rs->a;
    kevo_attempt_list *bl = NULL;
    int error = 0;
    if (!is_correct(a->verdict) || !a->source || !*a->source)
        goto done;
    kevo_attempt_filter bf = {.task = a->task,
                              .backend = a->backend,
                              .correct_only = 1,
                              .best_first = 1,
                              .limit = 1,
                              .no_source = 1};
    if ((error = kevo_memory_attempt_list(&bl, rs->mem, &bf)) < 0)
        goto done;
    rs->new_best = bl->n == 0 || a->speedup > bl->attempts[0].speedup;
done:
    kevo_attempt_list_free(bl);
    return error;
}

static int known_machine(const char *m)
{
    return m && *m;
}

/* The latency a refine attempt improves on: its start point's, or its own
 * reference's without one. Latencies of two machines do not compare: when
 * the start point was measured on another (both known), its latency here
 * is estimated as this attempt's reference latency over the start point's
 * speedup (the reference was timed beside each candidate, on its own
 * machine). Without those figures, 0: kevo_memory_reward_refine then gives
 * a correct attempt reward 0 (no evidence) rather than a reward for, or
 * against, the other machine's speed. */
static double start_latency(const kevo_attempt *a, const kevo_attempt *parent)
{
    if (!parent)
        return a->reference_us;
    if (!known_machine(a->machine) || !known_machine(parent->machine) ||
        !strcmp(a->machine, parent->machine))
        return parent->candidate_us;
    if (parent->speedup > 0 && a->reference_us > 0 && isfinite(parent->speedup))
        return a->reference_us / parent->speedup;
    return 0.0;
}

/* The raw reward and the one the Q updates use (z-scored refine rewards
 * when cfg->normalize, which folds the raw one into the stage statistics). */
static int record_reward(record_state *rs)
{
    kevo_memory *mem = rs->mem;
    const kevo_attempt *a = rs->a;
    const kevo_learn_config *cfg = rs->cfg;
    int error = 0;
    rs->infra = a->verdict == KEVO_VERDICT_INFRA_ERROR;
    rs->raw = rs->reward = 0.0;
    if (rs->infra)
        goto done;
    if (a->stage == KEVO_STAGE_DRAFT)
        rs->raw = kevo_memory_reward_draft(a->verdict);
    else
        rs->raw = kevo_memory_reward_refine(a->verdict, start_latency(a, rs->parent),
                                            a->candidate_us);
    rs->reward = rs->raw;
    if (cfg->normalize && a->stage == KEVO_STAGE_REFINE) {
        kevo_reward_stats st;
        if ((error = mem->store->reward_stats_get(mem->store, KEVO_STAGE_REFINE, &st)) < 0)
            goto done;
        st.stage = KEVO_STAGE_REFINE;
        /* App. A: against mu_{t-1}, sigma_{t-1}, the rewards before this one */
        rs->reward =
            kevo_memory_reward_normalize(rs->raw, st.n, st.mean, st.m2, cfg->var_floor, cfg->clip);
        stats_add(&st, rs->raw);
        if ((error = mem->store->reward_stats_set(mem->store, &st)) < 0)
            goto done;
    }
done:
    return error;
}

/* The attempt node (its refines edge is parent_id). */
static int record_insert_node(record_state *rs)
{
    kevo_memory *mem = rs->mem;
    const kevo_attempt *a = rs->a;
    int64_t id = 0;
    rs->row = *a;
    rs->row.id = 0;
    if (a->uid && *a->uid) {
        rs->row.uid = a->uid;
    } else {
        kevo_memory_uid_new(mem, rs->uid, a->task, strlen(a->task));
        rs->row.uid = rs->uid;
    }
    rs->row.created = a->created ? a->created : kevo_memory_now_ms();
    rs->row.reward_raw = rs->raw;
    rs->row.reward = rs->reward;
    int error = mem->store->attempt_insert(mem->store, &rs->row, &id);
    if (error == 0)
        rs->row.id = id;
    return error;
}

/* used edges and Q(item, stage) of the context's items, then Q2 of the
 * start point. */
static int record_q_updates(record_state *rs)
{
    kevo_memory *mem = rs->mem;
    const kevo_attempt *a = rs->a;
    int64_t id = rs->row.id;
    int error = 0;
    for (size_t i = 0; i < rs->n_used; i++) {
        kevo_used_item u = rs->used[i];
        if (u.stage != KEVO_STAGE_DRAFT && u.stage != KEVO_STAGE_REFINE)
            u.stage = a->stage;
        if ((error = mem->store->used_insert(mem->store, id, &u)) < 0)
            goto done;
        if (!rs->infra && !u.no_credit &&
            (error = q_update(mem, KEVO_Q_ITEM, u.item_id, a->stage, rs->reward, rs->cfg)) < 0)
            goto done;
    }
    if (!rs->infra && a->stage == KEVO_STAGE_REFINE && rs->parent)
        error = q_update(mem, KEVO_Q_START, rs->parent->id, KEVO_STAGE_REFINE, rs->reward, rs->cfg);
done:
    return error;
}

/* Distilled knowledge: an experience item always, a trace when new best. */
static int record_distill(record_state *rs)
{
    const kevo_attempt *a = rs->a, *row = &rs->row;
    const char *category = rs->cat.category;
    char *title = NULL, *body = NULL;
    char tags[64];
    snprintf(tags, sizeof(tags), "%s %s", kevo_stage_name(a->stage), kevo_verdict_name(a->verdict));
    int error = kevo_distill_experience(&title, &body, row, rs->parent, category);
    if (error < 0 || (error = add_distilled_item(rs->mem, KEVO_ITEM_EXPERIENCE, title, body,
                                                 category, row, row->id, tags)) < 0)
        goto done;
    if (!rs->new_best)
        goto done;
    free(title);
    free(body);
    title = body = NULL;
    if ((error = kevo_distill_trace(&title, &body, row)) < 0 ||
        (error = add_distilled_item(rs->mem, KEVO_ITEM_TRACE, title, body, category, row, row->id,
                                    "best")) < 0)
        goto done;
done:
    free(title);
    free(body);
    return error;
}

int kevo_memory_attempt_record(kevo_memory *mem, const kevo_attempt *a, const kevo_used_item *used,
                               size_t n_used, const kevo_learn_config *cfg, int64_t *out_id)
{
    kevo_learn_config defaults;
    cfg = kevo_learn_config_or_default(cfg, &defaults);
    record_state rs = {.mem = mem, .a = a, .used = used, .n_used = n_used, .cfg = cfg};
    int error = 0, in_tx = 0, before = 0;
    if ((error = validate(a, used, n_used, cfg)) < 0)
        goto done;
    /* one transaction: a crash never leaves half an attempt */
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        goto done;
    in_tx = 1;
    /* a caller-given uid already stored: this attempt was recorded before
     * (a retry, or another worker on the same iteration); nothing more */
    if (a->uid && *a->uid) {
        int64_t existing = 0;
        error = mem->store->find_uid(mem->store, KEVO_STORE_ATTEMPTS, a->uid, &existing);
        if (error == 0) {
            if (out_id)
                *out_id = existing;
            before = 1;
            goto done;
        }
        if (error != KEVO_ENOTFOUND)
            goto done;
        kevo_error_clear();
        error = 0;
    }
    if ((error = record_load_start(&rs)) < 0 || (error = record_check_best(&rs)) < 0 ||
        (error = record_reward(&rs)) < 0 || (error = record_insert_node(&rs)) < 0 ||
        (!cfg->frozen && ((error = record_q_updates(&rs)) < 0 ||
                          (error = record_distill(&rs)) < 0)))
        goto done;
    if (out_id)
        *out_id = rs.row.id;
done:
    if (in_tx)
        error = kevo_memory_tx_end(mem, error);
    kevo_attempt_free(rs.parent);
    free(rs.cat.category);
    return error == 0 && before ? KEVO_MEMORY_RECORDED_BEFORE : error;
}
