/*
 * context/context.c - Active Context Management: candidate pool (BM25 +
 * structural neighbours), epsilon-greedy selection over the stage's Q,
 * start-point selection over Q2, the API channel, and per-section packing
 * under a fixed token budget. Reads the memory through kevo/memory.h only;
 * never writes it and never calls the network.
 */
#include "internal.h"
#include "kevo/sys/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDENTIFIERS_MAX 128
#define TRIED_FEEDBACK_BYTES 160
#define HISTORY_MAX 200

static const char *const section_titles[KEVO_SECTION_COUNT] = {
    "Task",
    "Start point",
    "Already tried from this start point",
    "Latest feedback",
    "Relevant experience",
    "Best practices",
    "API reference",
};

/* Order in which sections are filled (and pass on unused quota). */
static const kevo_section_id fill_order[KEVO_SECTION_COUNT] = {
    KEVO_SECTION_TASK,       KEVO_SECTION_START_POINT, KEVO_SECTION_FEEDBACK, KEVO_SECTION_TRIED,
    KEVO_SECTION_EXPERIENCE, KEVO_SECTION_PRACTICE,    KEVO_SECTION_API,
};
/* Passive mode: the history takes whatever is left at the end. */
static const kevo_section_id fill_order_passive[KEVO_SECTION_COUNT] = {
    KEVO_SECTION_TASK,     KEVO_SECTION_START_POINT, KEVO_SECTION_FEEDBACK,   KEVO_SECTION_TRIED,
    KEVO_SECTION_PRACTICE, KEVO_SECTION_API,         KEVO_SECTION_EXPERIENCE,
};

const char *kevo_context_mode_name(kevo_context_mode mode)
{
    switch (mode) {
    case KEVO_CONTEXT_VALUE:
        return "value";
    case KEVO_CONTEXT_HEURISTIC:
        return "heuristic";
    case KEVO_CONTEXT_PASSIVE:
        return "passive";
    case KEVO_CONTEXT_RANDOM:
        return "random";
    default:
        return "?";
    }
}

int kevo_context_mode_parse(kevo_context_mode *out, const char *name)
{
    for (int m = KEVO_CONTEXT_VALUE; m <= KEVO_CONTEXT_RANDOM; m++) {
        if (name && !strcmp(name, kevo_context_mode_name((kevo_context_mode)m))) {
            *out = (kevo_context_mode)m;
            return 0;
        }
    }
    return kevo_error_set(KEVO_EINVAL, "unknown context mode '%s' (value, heuristic, passive or random)",
                          name ? name : "(null)");
}

void kevo_context_config_init(kevo_context_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->token_budget = 6000;
    cfg->quota[KEVO_SECTION_TASK] = 0.22;
    cfg->quota[KEVO_SECTION_START_POINT] = 0.22;
    cfg->quota[KEVO_SECTION_TRIED] = 0.08;
    cfg->quota[KEVO_SECTION_FEEDBACK] = 0.10;
    cfg->quota[KEVO_SECTION_EXPERIENCE] = 0.22;
    cfg->quota[KEVO_SECTION_PRACTICE] = 0.06;
    cfg->quota[KEVO_SECTION_API] = 0.10;
    cfg->mode = KEVO_CONTEXT_VALUE;
    cfg->epsilon = 0.1;
    cfg->lambda = 3;
    cfg->n = 6;
    cfg->alpha = 0.3;
    cfg->q_init = 0.0;
    cfg->bytes_per_token_code = 3.2;
    cfg->bytes_per_token_prose = 4.7;
    cfg->max_practices = 2;
    cfg->max_api = 10;
    cfg->max_tried = 12;
    cfg->min_cut_tokens = 48;
    cfg->rng = NULL;
}

void kevo_context_learn_config(kevo_learn_config *out, const kevo_context_config *cfg)
{
    kevo_learn_config_init(out);
    out->alpha = cfg->alpha;
    out->q_init = cfg->q_init;
}

static int check_config(const kevo_context_config *c)
{
    if (c->token_budget <= 0)
        return kevo_error_set(KEVO_EINVAL, "context config: token_budget is %d (must be > 0)",
                              c->token_budget);
    if (!(c->epsilon >= 0 && c->epsilon <= 1))
        return kevo_error_set(KEVO_EINVAL, "context config: epsilon is %g (must be in [0, 1])",
                              c->epsilon);
    if (c->lambda < 1 || c->n < 0)
        return kevo_error_set(KEVO_EINVAL, "context config: lambda %d / n %d out of range",
                              c->lambda, c->n);
    if (c->mode < KEVO_CONTEXT_VALUE || c->mode > KEVO_CONTEXT_RANDOM)
        return kevo_error_set(KEVO_EINVAL, "context config: unknown mode %d", (int)c->mode);
    for (int s = 0; s < KEVO_SECTION_COUNT; s++)
        if (!(c->quota[s] >= 0 && c->quota[s] <= 1))
            return kevo_error_set(KEVO_EINVAL, "context config: quota of '%s' is %g",
                                  section_titles[s], c->quota[s]);
    return 0;
}

static const kevo_context_config *config_or_default(const kevo_context_config *cfg,
                                                    kevo_context_config *storage)
{
    if (cfg)
        return cfg;
    kevo_context_config_init(storage);
    return storage;
}

static kevo_rng *rng_or_default(kevo_rng *rng, const kevo_context_config *cfg, kevo_rng *storage)
{
    if (rng)
        return rng;
    if (cfg->rng)
        return cfg->rng;
    kevo_rng_seed(storage, 0x6b65766f);
    return storage;
}

/* ---- start points: the one policy --------------------------------------- */

double kevo_context_start_score(double q, int64_t n, double speedup, double best, double q_init)
{
    /* Without the latency term, the draft that gave an 18x child kept the
     * high Q that child earned it and was refined again instead of the 18x
     * kernel. */
    if (n == 0)
        q = q_init;
    if (speedup > 0 && best > 0)
        q += log(speedup / best);
    return q;
}

/* The index of the best score among the candidates, fastest first. */
static int pick_by_q2(size_t *pick, kevo_memory *mem, const kevo_attempt_list *list,
                      size_t n_cand, const kevo_start_query *q)
{
    double best = -INFINITY;
    *pick = 0;
    for (size_t i = 0; i < n_cand; i++) {
        double q2 = 0;
        int64_t n = 0;
        int error = kevo_memory_q_start_get(&q2, &n, mem, list->attempts[i].id);
        if (error < 0 && error != KEVO_ENOTFOUND)
            return error;
        double score = q->rule == KEVO_START_Q2_LATENCY
                           ? kevo_context_start_score(q2, n, list->attempts[i].speedup,
                                                      list->attempts[0].speedup, q->q_init)
                           : (n ? q2 : q->q_init);
        if (score > best + 1e-12) {
            best = score;
            *pick = i;
        }
    }
    return 0;
}

/* The climb filter: moves the attempts that are no slower than the attempt
 * they refine (and those that refine none, or one outside the list) to the
 * front, in their order, and returns how many. The fastest is always one
 * (nothing in the list is faster than it), so the result is never 0. */
static size_t climb_candidates(kevo_attempt_list *list)
{
    size_t kept = 0;
    for (size_t i = 0; i < list->n; i++) {
        const kevo_attempt *a = &list->attempts[i];
        bool keep = true;
        for (size_t j = 0; j < list->n && a->parent_id; j++)
            if (list->attempts[j].id == a->parent_id) {
                keep = a->speedup >= list->attempts[j].speedup;
                break;
            }
        if (!keep)
            continue;
        if (kept != i) { /* a swap keeps every entry owned by the list */
            kevo_attempt t = list->attempts[kept];
            list->attempts[kept] = list->attempts[i];
            list->attempts[i] = t;
        }
        kept++;
    }
    return kept;
}

int kevo_context_start_point(kevo_attempt **out, kevo_memory *mem, const kevo_start_query *q,
                             kevo_rng *rng)
{
    *out = NULL;
    if (!q || !q->task)
        return kevo_error_set(KEVO_EINVAL, "start point: no task name");
    kevo_attempt_filter f = {.run_id = q->run_id,
                             .task = q->task,
                             .backend = q->backend,
                             .correct_only = 1,
                             .best_first = 1,
                             .no_source = 1};
    kevo_attempt_list *list = NULL;
    size_t pick = 0; /* best_first: index 0 is the fastest */
    int error = kevo_memory_attempt_list(&list, mem, &f);
    if (error < 0)
        goto done;
    if (list->n == 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "task '%s' has no correct attempt to refine",
                               q->task);
        goto done;
    }
    size_t n_cand = q->climb ? climb_candidates(list) : list->n;
    if (q->rule == KEVO_START_NEWEST) {
        for (size_t i = 1; i < n_cand; i++)
            if (list->attempts[i].id > list->attempts[pick].id)
                pick = i;
    } else if (q->rule == KEVO_START_Q2 || q->rule == KEVO_START_Q2_LATENCY) {
        if (!rng) {
            error = kevo_error_set(KEVO_EINVAL, "start point: a Q2 rule needs a random source");
            goto done;
        }
        if (kevo_rng_uniform(rng) < q->epsilon)
            pick = (size_t)(kevo_rng_uniform(rng) * (double)n_cand);
        else if ((error = pick_by_q2(&pick, mem, list, n_cand, q)) < 0)
            goto done;
    }
    error = kevo_memory_attempt_get(out, mem, list->attempts[pick].id);
done:
    kevo_attempt_list_free(list);
    return error;
}

/* ---- the builder ------------------------------------------------------ */

typedef struct used_vec {
    kevo_used_item *v;
    size_t n, cap;
} used_vec;

typedef struct builder {
    kevo_memory *mem;
    const kevo_context_query *q;
    const kevo_context_config *cfg;
    kevo_rng *rng;
    kevo_pack pack;
    kevo_pack_section sec[KEVO_SECTION_COUNT];
    used_vec used[KEVO_SECTION_COUNT];
    kevo_attempt *start;
    int start_borrowed; /* start is the caller's (q->start_point) */
    kevo_attempt_list *tried;
    kevo_item_list *selected; /* experience (passive: history), with bodies */
    kevo_item_list *practices;
    kevo_item_list *api;
    size_t pool_size;
    const char *fence; /* code fence language */
} builder;

static int used_push(used_vec *u, int64_t item_id, kevo_stage stage, int tokens)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 16;
        kevo_used_item *p = realloc(u->v, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        u->v = p;
        u->cap = cap;
    }
    u->v[u->n++] = (kevo_used_item){item_id, stage, 0, tokens, false};
    return 0;
}

/* An empty heap item list. */
static int list_new(kevo_item_list **out)
{
    if (!(*out = calloc(1, sizeof(**out))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    return 0;
}

static int list_has(const kevo_item_list *l, int64_t id)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->items[i].id == id)
            return 1;
    return 0;
}

/* Move item `i` of `from` to the end of `to` (to->scores unused). */
static int list_take(kevo_item_list *to, kevo_item_list *from, size_t i)
{
    kevo_item *p = realloc(to->items, (to->n + 1) * sizeof(*p));
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    to->items = p;
    to->items[to->n++] = from->items[i];
    memmove(from->items + i, from->items + i + 1, (from->n - i - 1) * sizeof(*from->items));
    if (from->scores)
        memmove(from->scores + i, from->scores + i + 1, (from->n - i - 1) * sizeof(double));
    from->n--;
    return 0;
}

/* Append item `id` (loaded with its body) to `to`. */
static int list_add_loaded(kevo_item_list *to, kevo_memory *mem, int64_t id)
{
    kevo_item *it = NULL;
    int error = kevo_memory_item_get(&it, mem, id);
    if (error < 0)
        return error;
    kevo_item *p = realloc(to->items, (to->n + 1) * sizeof(*p));
    if (!p) {
        kevo_item_free(it);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    to->items = p;
    to->items[to->n++] = *it;
    free(it); /* the strings moved into the list */
    return 0;
}

static unsigned experience_kinds(void)
{
    return KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE) | KEVO_ITEM_BIT(KEVO_ITEM_TRACE) |
           KEVO_ITEM_BIT(KEVO_ITEM_BEST_PRACTICE) | KEVO_ITEM_BIT(KEVO_ITEM_RECIPE);
}

/* The search text: what the task is; when refining also what went wrong. */
static int query_text(kevo_buf *b, const kevo_context_query *q)
{
    int error =
        kevo_buf_printf(b, "%s %s %s\n%s\n", q->task, q->category ? q->category : "",
                        q->description ? q->description : "", q->reference ? q->reference : "");
    if (error == 0 && q->stage == KEVO_STAGE_REFINE)
        error = kevo_buf_printf(b, "%s\n%s\n", q->feedback ? q->feedback : "",
                                q->bottleneck ? q->bottleneck : "");
    return error;
}

static void item_strings_free(kevo_item *it)
{
    free((void *)it->title);
    free((void *)it->body);
    free((void *)it->category);
    free((void *)it->task);
    free((void *)it->backend);
    free((void *)it->tags);
    free((void *)it->uid);
}

/* Move the items of `more` not yet in `pool` to its end; `more` ends empty. */
static int pool_merge(kevo_item_list *pool, kevo_item_list *more)
{
    int error = 0;
    while (more->n && error == 0) {
        if (list_has(pool, more->items[0].id)) {
            item_strings_free(&more->items[0]);
            memmove(more->items, more->items + 1, (more->n - 1) * sizeof(*more->items));
            more->n--;
            continue;
        }
        error = list_take(pool, more, 0);
    }
    return error;
}

/* Candidate pool and selection of the experience section. */
static int select_experience(builder *b)
{
    const kevo_context_query *q = b->q;
    const kevo_context_config *cfg = b->cfg;
    kevo_buf text = {0};
    kevo_item_list *pool = NULL, *more = NULL;
    double *qv = NULL;
    size_t *picks = NULL;
    int error = list_new(&b->selected);
    if (error < 0 || cfg->n == 0)
        return error;
    if ((error = query_text(&text, q)) < 0 || (error = list_new(&pool)) < 0)
        goto done;
    kevo_item_filter sf = {.kinds = experience_kinds(),
                           .backend = q->backend,
                           .limit = (size_t)cfg->lambda * (size_t)cfg->n,
                           .no_body = 1};
    if ((error = kevo_memory_item_search(&more, b->mem, text.ptr, &sf)) < 0 ||
        (error = pool_merge(pool, more)) < 0)
        goto done;
    kevo_item_list_free(more);
    more = NULL;
    /* structural neighbours: this task's own latest experience, then the
     * category's latest items */
    kevo_item_filter tf = {.kinds = experience_kinds(),
                           .task = q->task,
                           .backend = q->backend,
                           .limit = (size_t)cfg->n,
                           .newest_first = 1,
                           .no_body = 1};
    if ((error = kevo_memory_item_list(&more, b->mem, &tf)) < 0 ||
        (error = pool_merge(pool, more)) < 0)
        goto done;
    kevo_item_list_free(more);
    more = NULL;
    if (q->category && *q->category) {
        kevo_item_filter cf = tf;
        cf.task = NULL;
        cf.category = q->category;
        if ((error = kevo_memory_item_list(&more, b->mem, &cf)) < 0 ||
            (error = pool_merge(pool, more)) < 0)
            goto done;
    }
    b->pool_size = pool->n;
    if (pool->n == 0)
        goto done;
    if (!(qv = calloc(pool->n, sizeof(*qv))) || !(picks = calloc(pool->n, sizeof(*picks)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    size_t k = (size_t)cfg->n, got;
    if (cfg->mode == KEVO_CONTEXT_VALUE) {
        /* the pool's Q-values in one read (one round trip to a server) */
        int64_t *ids = calloc(pool->n, sizeof(*ids)), *ns = calloc(pool->n, sizeof(*ns));
        if (!ids || !ns) {
            free(ids);
            free(ns);
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < pool->n; i++)
            ids[i] = pool->items[i].id;
        error = kevo_memory_q_get_many(qv, ns, b->mem, ids, pool->n, q->stage);
        for (size_t i = 0; i < pool->n && error == 0; i++)
            if (ns[i] == 0)
                qv[i] = cfg->q_init;
        free(ids);
        free(ns);
        if (error < 0)
            goto done;
        got = kevo_select_egreedy(picks, qv, pool->n, k, cfg->epsilon, b->rng);
    } else if (cfg->mode == KEVO_CONTEXT_RANDOM) {
        /* every pick uniform among the rest: sampling without replacement */
        got = kevo_select_egreedy(picks, qv, pool->n, k, 1.0, b->rng);
    } else {
        got = k < pool->n ? k : pool->n; /* most similar first */
        for (size_t i = 0; i < got; i++)
            picks[i] = i;
    }
    for (size_t i = 0; i < got; i++)
        if ((error = list_add_loaded(b->selected, b->mem, pool->items[picks[i]].id)) < 0)
            goto done;
done:
    kevo_buf_free(&text);
    kevo_item_list_free(pool);
    kevo_item_list_free(more);
    free(qv);
    free(picks);
    return error;
}

/* Passive mode: the task's most recent history, newest first. */
static int select_history(builder *b)
{
    kevo_item_list *recent = NULL;
    int error = list_new(&b->selected);
    if (error < 0)
        return error;
    kevo_item_filter f = {.kinds = experience_kinds(),
                          .task = b->q->task,
                          .backend = b->q->backend,
                          .limit = HISTORY_MAX,
                          .newest_first = 1,
                          .no_body = 1};
    if ((error = kevo_memory_item_list(&recent, b->mem, &f)) < 0)
        return error;
    b->pool_size = recent->n;
    /* bodies are loaded lazily while packing (most will not fit) */
    kevo_item_list_free(b->selected);
    b->selected = recent;
    return 0;
}

static int select_practices(builder *b)
{
    const kevo_context_query *q = b->q;
    kevo_buf text = {0};
    kevo_item_list *hits = NULL;
    int error = list_new(&b->practices);
    if (error < 0 || q->stage != KEVO_STAGE_REFINE || b->cfg->max_practices <= 0)
        return error;
    /* matched to the diagnosis when there is one, else to the feedback */
    const char *about = q->bottleneck && *q->bottleneck ? q->bottleneck : q->feedback;
    if (!about || !*about)
        goto done;
    if ((error = kevo_buf_puts(&text, about)) < 0)
        goto done;
    kevo_item_filter f = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_BEST_PRACTICE),
                          .backend = q->backend,
                          .limit = (size_t)b->cfg->max_practices + (size_t)b->cfg->n,
                          .no_body = 1};
    if ((error = kevo_memory_item_search(&hits, b->mem, text.ptr, &f)) < 0)
        goto done;
    for (size_t i = 0; i < hits->n && b->practices->n < (size_t)b->cfg->max_practices; i++) {
        if (list_has(b->selected, hits->items[i].id))
            continue;
        if ((error = list_add_loaded(b->practices, b->mem, hits->items[i].id)) < 0)
            goto done;
    }
done:
    kevo_buf_free(&text);
    kevo_item_list_free(hits);
    return error;
}

static int api_add(builder *b, const kevo_item *it)
{
    if ((size_t)b->cfg->max_api <= b->api->n || list_has(b->api, it->id) ||
        list_has(b->selected, it->id))
        return 0;
    return list_add_loaded(b->api, b->mem, it->id);
}

/* Collect identifiers of `code` into `ids` (distinct across calls). */
static int scan_into(char ***ids, size_t *n, const char *code)
{
    char **found = NULL;
    size_t n_found = 0;
    int error = kevo_identifiers_scan(&found, &n_found, code, IDENTIFIERS_MAX);
    for (size_t i = 0; i < n_found && error == 0; i++) {
        int seen = 0;
        for (size_t j = 0; j < *n && !seen; j++)
            seen = !strcmp((*ids)[j], found[i]);
        if (seen || *n >= IDENTIFIERS_MAX)
            continue;
        (*ids)[(*n)++] = found[i];
        found[i] = NULL;
    }
    kevo_identifiers_free(found, n_found);
    return error;
}

/* Exact-name lookups of the API identifiers in the retrieved code (the
 * selected items, the start point) and the reference. */
static int lookup_identifiers(builder *b)
{
    char **ids = calloc(IDENTIFIERS_MAX, sizeof(*ids));
    size_t n = 0;
    int error = 0;
    if (!ids)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; b->selected && i < b->selected->n && error == 0; i++)
        error = scan_into(&ids, &n, b->selected->items[i].body);
    if (error == 0 && b->start)
        error = scan_into(&ids, &n, b->start->source);
    if (error == 0)
        error = scan_into(&ids, &n, b->q->reference);
    for (size_t i = 0; i < n && error == 0 && b->api->n < (size_t)b->cfg->max_api; i++) {
        kevo_item *it = NULL;
        int rc = kevo_memory_item_lookup_api(&it, b->mem, ids[i], b->q->backend);
        if (rc == 0)
            error = api_add(b, it);
        else if (rc != KEVO_ENOTFOUND)
            error = rc;
        kevo_item_free(it);
    }
    kevo_identifiers_free(ids, n);
    return error;
}

/* The API channel: fixed bundle, exact names in retrieved code, category. */
static int select_api(builder *b)
{
    const kevo_context_query *q = b->q;
    kevo_item_list *l = NULL;
    int error = list_new(&b->api);
    if (error < 0 || b->cfg->max_api <= 0)
        return error;
    kevo_item_filter bundle = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC),
                               .backend = q->backend,
                               .tag = "bundle",
                               .no_body = 1,
                               .limit = (size_t)b->cfg->max_api};
    if ((error = kevo_memory_item_list(&l, b->mem, &bundle)) < 0)
        return error;
    for (size_t i = 0; i < l->n && error == 0; i++)
        error = api_add(b, &l->items[i]);
    kevo_item_list_free(l);
    l = NULL;
    if (b->cfg->mode == KEVO_CONTEXT_PASSIVE || error < 0)
        return error;
    if ((error = lookup_identifiers(b)) == 0 && q->category && *q->category) {
        kevo_item_filter cat = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC),
                                .backend = q->backend,
                                .category = q->category,
                                .no_body = 1,
                                .limit = (size_t)b->cfg->max_api};
        if ((error = kevo_memory_item_list(&l, b->mem, &cat)) < 0)
            return error;
        for (size_t i = 0; i < l->n && error == 0; i++)
            error = api_add(b, &l->items[i]);
        kevo_item_list_free(l);
    }
    return error;
}

/* ---- packing ---------------------------------------------------------- */

static int item_is_code(const kevo_item *it)
{
    return it->kind == KEVO_ITEM_TRACE || it->kind == KEVO_ITEM_API_DOC;
}

static int pack_items(builder *b, kevo_section_id sid, kevo_item_list *l, int lazy)
{
    kevo_buf part = {0};
    int error = 0;
    for (size_t i = 0; l && i < l->n; i++) {
        kevo_item *it = &l->items[i];
        kevo_item *loaded = NULL;
        if (lazy && !it->body) {
            if ((error = kevo_memory_item_get(&loaded, b->mem, it->id)) < 0)
                break;
            it = loaded;
        }
        kevo_buf_clear(&part);
        int code = item_is_code(it);
        if ((error = kevo_buf_printf(&part, "### %s: %s [item %lld]\n%s%s%s\n\n",
                                     kevo_item_kind_name(it->kind), it->title, (long long)it->id,
                                     code ? "```\n" : "", it->body ? it->body : "",
                                     code ? "\n```" : "")) < 0) {
            kevo_item_free(loaded);
            break;
        }
        int t = kevo_pack_add(&b->pack, &b->sec[sid], part.ptr, part.len, code, 1);
        kevo_item_free(loaded);
        if (t < 0) {
            error = t;
            break;
        }
        if (t > 0 && (error = used_push(&b->used[sid], l->items[i].id, b->q->stage, t)) < 0)
            break;
        if (b->pack.total >= b->pack.budget)
            break;
    }
    kevo_buf_free(&part);
    return error;
}

static int pack_task(builder *b)
{
    const kevo_context_query *q = b->q;
    kevo_buf part = {0};
    int error = kevo_buf_printf(&part, "Task %s", q->task);
    if (error == 0 && q->category && *q->category)
        error = kevo_buf_printf(&part, " (%s)", q->category);
    if (error == 0 && q->backend)
        error = kevo_buf_printf(&part, " for backend %s", q->backend);
    if (error == 0)
        error = kevo_buf_printf(&part, ".\n%s\n\n", q->description ? q->description : "");
    if (error < 0)
        goto done;
    kevo_pack_section *s = &b->sec[KEVO_SECTION_TASK];
    int t = kevo_pack_add(&b->pack, s, part.ptr, part.len, 0, 1);
    if (t < 0) {
        error = t;
        goto done;
    }
    if (q->reference && *q->reference) {
        kevo_buf_clear(&part);
        /* the reference is C whatever the backend, or a PyTorch module */
        if (q->reference_torch)
            error = kevo_buf_printf(&part, "Reference implementation (PyTorch; the kernel "
                                    "computes what Model.forward returns, with the module in "
                                    "training mode unless the task says otherwise; the "
                                    "inputs, the module's parameters and buffers and the "
                                    "outputs are the kernel's arguments, in the prototype's "
                                    "order; the sizes are the module's constants):\n"
                                    "```python\n%s\n```\n\n", q->reference);
        else
            error = kevo_buf_printf(&part, "Reference implementation:\n```c\n%s\n```\n\n",
                                    q->reference);
        if (error < 0)
            goto done;
        t = kevo_pack_add(&b->pack, s, part.ptr, part.len, 1, 1);
        if (t < 0)
            error = t;
    }
done:
    kevo_buf_free(&part);
    return error;
}

static int pack_start(builder *b)
{
    const kevo_attempt *a = b->start;
    kevo_buf part = {0};
    int error =
        kevo_buf_printf(&part,
                        "Attempt #%lld (%s iteration %d): %s, %.2fx over the reference, "
                        "%.1f us. Its source:\n```%s\n%s\n```\n\n",
                        (long long)a->id, kevo_stage_name(a->stage), a->iteration, kevo_verdict_name(a->verdict),
                        a->speedup, a->candidate_us, b->fence, a->source ? a->source : "");
    if (error == 0) {
        int t =
            kevo_pack_add(&b->pack, &b->sec[KEVO_SECTION_START_POINT], part.ptr, part.len, 1, 1);
        error = t < 0 ? t : 0;
    }
    kevo_buf_free(&part);
    return error;
}

static int pack_tried(builder *b)
{
    kevo_buf part = {0};
    int error = 0;
    size_t shown = 0;
    for (size_t i = 0; b->tried && i < b->tried->n && shown < (size_t)b->cfg->max_tried; i++) {
        const kevo_attempt *c = &b->tried->attempts[i];
        kevo_buf_clear(&part);
        if ((error = kevo_buf_printf(&part, "- #%lld %s", (long long)c->id, kevo_verdict_name(c->verdict))) < 0)
            break;
        if (c->verdict == KEVO_VERDICT_CORRECT && b->start->candidate_us > 0 && c->candidate_us > 0)
            error = kevo_buf_printf(&part, ", %.2fx over the reference, %.2fx vs the start point",
                                    c->speedup, b->start->candidate_us / c->candidate_us);
        if (error == 0 && c->recipes_json && *c->recipes_json)
            error = kevo_buf_printf(&part, "; recipes %.80s", c->recipes_json);
        if (error == 0 && c->feedback && *c->feedback) {
            const char *f = c->feedback;
            while (*f == '\n' || *f == ' ')
                f++;
            size_t len = strcspn(f, "\n");
            if (len > TRIED_FEEDBACK_BYTES)
                len = TRIED_FEEDBACK_BYTES;
            while (len > 0 && ((unsigned char)f[len] & 0xC0) == 0x80)
                len--;
            error = kevo_buf_printf(&part, ": %.*s", (int)len, f);
        }
        if (error == 0)
            error = kevo_buf_puts(&part, "\n");
        if (error < 0)
            break;
        int t = kevo_pack_add(&b->pack, &b->sec[KEVO_SECTION_TRIED], part.ptr, part.len, 0, 0);
        if (t < 0) {
            error = t;
            break;
        }
        if (t == 0)
            break;
        shown++;
    }
    if (error == 0 && shown) {
        int t = kevo_pack_add(&b->pack, &b->sec[KEVO_SECTION_TRIED], "\n", 1, 0, 0);
        error = t < 0 ? t : 0;
    }
    kevo_buf_free(&part);
    return error;
}

static int pack_feedback(builder *b)
{
    const kevo_context_query *q = b->q;
    kevo_buf part = {0};
    int error = 0, t = 0;
    if (q->feedback && *q->feedback) {
        if ((error = kevo_buf_printf(&part, "%s\n\n", q->feedback)) < 0)
            goto done;
        if ((t = kevo_pack_add(&b->pack, &b->sec[KEVO_SECTION_FEEDBACK], part.ptr, part.len, 0,
                               1)) < 0) {
            error = t;
            goto done;
        }
    }
    if (q->bottleneck && *q->bottleneck) {
        kevo_buf_clear(&part);
        if ((error = kevo_buf_printf(&part, "Bottleneck: %s\n\n", q->bottleneck)) < 0)
            goto done;
        if ((t = kevo_pack_add(&b->pack, &b->sec[KEVO_SECTION_FEEDBACK], part.ptr, part.len, 0,
                               1)) < 0)
            error = t;
    }
done:
    kevo_buf_free(&part);
    return error;
}

static int section_has_content(const builder *b, kevo_section_id s)
{
    const kevo_context_query *q = b->q;
    switch (s) {
    case KEVO_SECTION_TASK:
        return 1;
    case KEVO_SECTION_START_POINT:
        return b->start != NULL;
    case KEVO_SECTION_TRIED:
        return b->tried && b->tried->n > 0;
    case KEVO_SECTION_FEEDBACK:
        return (q->feedback && *q->feedback) || (q->bottleneck && *q->bottleneck);
    case KEVO_SECTION_EXPERIENCE:
        return b->selected && b->selected->n > 0;
    case KEVO_SECTION_PRACTICE:
        return b->practices && b->practices->n > 0;
    case KEVO_SECTION_API:
        return b->api && b->api->n > 0;
    default:
        return 0;
    }
}

static int fill_section(builder *b, kevo_section_id s)
{
    switch (s) {
    case KEVO_SECTION_TASK:
        return pack_task(b);
    case KEVO_SECTION_START_POINT:
        return pack_start(b);
    case KEVO_SECTION_TRIED:
        return pack_tried(b);
    case KEVO_SECTION_FEEDBACK:
        return pack_feedback(b);
    case KEVO_SECTION_EXPERIENCE:
        return pack_items(b, s, b->selected, b->cfg->mode == KEVO_CONTEXT_PASSIVE);
    case KEVO_SECTION_PRACTICE:
        return pack_items(b, s, b->practices, 0);
    case KEVO_SECTION_API:
        return pack_items(b, s, b->api, 0);
    default:
        return 0;
    }
}

static int pack_all(builder *b)
{
    const kevo_context_config *cfg = b->cfg;
    const kevo_section_id *order =
        cfg->mode == KEVO_CONTEXT_PASSIVE ? fill_order_passive : fill_order;
    double share = 0;
    int active[KEVO_SECTION_COUNT] = {0};
    for (int s = 0; s < KEVO_SECTION_COUNT; s++) {
        active[s] = section_has_content(b, (kevo_section_id)s);
        if (active[s])
            share += cfg->quota[s];
    }
    int carry = 0, error = 0;
    for (int i = 0; i < KEVO_SECTION_COUNT && error == 0; i++) {
        kevo_section_id s = order[i];
        if (!active[s])
            continue;
        int reserve = share > 0 ? (int)floor(cfg->token_budget * cfg->quota[s] / share) : 0;
        /* passive: the history takes everything left */
        if (cfg->mode == KEVO_CONTEXT_PASSIVE && s == KEVO_SECTION_EXPERIENCE)
            reserve = cfg->token_budget;
        b->sec[s].cap = reserve + carry;
        if ((error = fill_section(b, s)) < 0)
            break;
        carry = b->sec[s].cap - b->sec[s].tokens;
        if (carry < 0)
            carry = 0;
    }
    return error;
}

/* ---- build / render / free -------------------------------------------- */

static int finish(kevo_context **out, builder *b)
{
    kevo_context *ctx = calloc(1, sizeof(*ctx));
    int error = 0;
    if (!ctx)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t n_used = 0;
    for (int s = 0; s < KEVO_SECTION_COUNT; s++)
        n_used += b->used[s].n;
    ctx->sections = calloc(KEVO_SECTION_COUNT, sizeof(*ctx->sections));
    ctx->used = calloc(n_used ? n_used : 1, sizeof(*ctx->used));
    if (!ctx->sections || !ctx->used) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (int s = 0; s < KEVO_SECTION_COUNT; s++) {
        if (b->sec[s].text.len == 0)
            continue;
        kevo_context_section *cs = &ctx->sections[ctx->n_sections++];
        cs->id = (kevo_section_id)s;
        cs->title = section_titles[s];
        if (s == KEVO_SECTION_EXPERIENCE && b->cfg->mode == KEVO_CONTEXT_PASSIVE)
            cs->title = "Recent history";
        cs->tokens = b->sec[s].tokens;
        cs->text = kevo_buf_detach(&b->sec[s].text);
        ctx->total_tokens += cs->tokens;
        for (size_t i = 0; i < b->used[s].n; i++) {
            ctx->used[ctx->n_used] = b->used[s].v[i];
            ctx->used[ctx->n_used].rank = (int)ctx->n_used + 1;
            ctx->n_used++;
        }
    }
    ctx->budget = b->cfg->token_budget;
    ctx->stage = b->q->stage;
    ctx->mode = b->cfg->mode;
    ctx->start_point_id = b->start ? b->start->id : 0;
    ctx->pool_size = b->pool_size;
done:
    if (error < 0)
        kevo_context_free(ctx);
    else
        *out = ctx;
    return error;
}

/* The start point of a refine context: the caller's, the one it names, or
 * one chosen by the policy. b->start is borrowed when it is the caller's. */
static int start_of(builder *b)
{
    const kevo_context_query *q = b->q;
    if (q->start_point) {
        b->start = (kevo_attempt *)q->start_point;
        b->start_borrowed = 1;
        return 0;
    }
    if (q->start_point_id)
        return kevo_memory_attempt_get(&b->start, b->mem, q->start_point_id);
    kevo_start_query sq = {.task = q->task,
                           .backend = q->backend,
                           .rule = b->cfg->mode == KEVO_CONTEXT_VALUE ? KEVO_START_Q2
                                                                      : KEVO_START_FASTEST,
                           .epsilon = b->cfg->epsilon,
                           .q_init = b->cfg->q_init};
    return kevo_context_start_point(&b->start, b->mem, &sq, b->rng);
}

int kevo_context_build(kevo_context **out, kevo_memory *mem, const kevo_context_query *q,
                       const kevo_context_config *cfg, kevo_rng *rng)
{
    kevo_context_config defaults;
    kevo_rng local;
    builder b = {0};
    int error = 0, in_snapshot = 0;
    *out = NULL;
    cfg = config_or_default(cfg, &defaults);
    if ((error = check_config(cfg)) < 0)
        return error;
    if (!q || !q->task || !*q->task)
        return kevo_error_set(KEVO_EINVAL, "context query: missing field 'task'");
    if (q->stage != KEVO_STAGE_DRAFT && q->stage != KEVO_STAGE_REFINE)
        return kevo_error_set(KEVO_EINVAL, "context query: field 'stage' is %d", (int)q->stage);
    b.mem = mem;
    b.q = q;
    b.cfg = cfg;
    b.rng = rng_or_default(rng, cfg, &local);
    const kevo_backend *be = q->backend ? kevo_backend_find(q->backend) : NULL;
    b.fence = be && be->code_language ? be->code_language : "c"; /* for candidates */
    b.pack = (kevo_pack){.budget = cfg->token_budget,
                         .bpt_code = cfg->bytes_per_token_code,
                         .bpt_prose = cfg->bytes_per_token_prose,
                         .min_cut = cfg->min_cut_tokens};
    for (int s = 0; s < KEVO_SECTION_COUNT; s++)
        b.sec[s].title = section_titles[s];
    b.sec[KEVO_SECTION_EXPERIENCE].title = cfg->mode == KEVO_CONTEXT_PASSIVE
                                               ? "Recent history"
                                               : section_titles[KEVO_SECTION_EXPERIENCE];

    /* one consistent view of the memory for the whole build */
    if ((error = kevo_memory_snapshot_begin(mem)) < 0)
        return error;
    in_snapshot = 1;
    /* refining: the start point and what was tried from it */
    if (q->stage == KEVO_STAGE_REFINE) {
        if ((error = start_of(&b)) < 0)
            goto done;
        if (cfg->mode != KEVO_CONTEXT_PASSIVE) {
            kevo_attempt_filter cf = {.parent_id = b.start->id, .no_source = 1};
            if ((error = kevo_memory_attempt_list(&b.tried, mem, &cf)) < 0)
                goto done;
        }
    }
    if (cfg->mode == KEVO_CONTEXT_PASSIVE) {
        if ((error = select_history(&b)) < 0 || (error = list_new(&b.practices)) < 0)
            goto done;
    } else if ((error = select_experience(&b)) < 0 || (error = select_practices(&b)) < 0) {
        goto done;
    }
    if ((error = select_api(&b)) < 0 || (error = pack_all(&b)) < 0)
        goto done;
    error = finish(out, &b);
done:
    if (in_snapshot) {
        int end = kevo_memory_snapshot_end(mem);
        if (error == 0 && end < 0) {
            kevo_context_free(*out);
            *out = NULL;
            error = end;
        }
    }
    for (int s = 0; s < KEVO_SECTION_COUNT; s++) {
        kevo_buf_free(&b.sec[s].text);
        free(b.used[s].v);
    }
    if (!b.start_borrowed)
        kevo_attempt_free(b.start);
    kevo_attempt_list_free(b.tried);
    kevo_item_list_free(b.selected);
    kevo_item_list_free(b.practices);
    kevo_item_list_free(b.api);
    return error;
}

int kevo_context_render(char **out, const kevo_context *ctx)
{
    kevo_buf b = {0};
    int error = 0;
    *out = NULL;
    for (size_t i = 0; i < ctx->n_sections && error == 0; i++)
        error = kevo_buf_puts(&b, ctx->sections[i].text);
    if (error < 0) {
        kevo_buf_free(&b);
        return error;
    }
    *out = kevo_buf_detach(&b);
    return 0;
}

void kevo_context_free(kevo_context *ctx)
{
    if (!ctx)
        return;
    for (size_t i = 0; ctx->sections && i < ctx->n_sections; i++)
        free(ctx->sections[i].text);
    free(ctx->sections);
    free(ctx->used);
    free(ctx);
}
