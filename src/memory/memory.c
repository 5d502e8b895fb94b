/*
 * memory/memory.c - the kevo_memory handle: opening, transactions, runs,
 * tasks, items and attempt getters, on top of the kevo_store vtable.
 * The write path with learning lives in record.c; export/import in
 * transfer.c; filtering in filter.c; the enum name tables in names.c.
 * Nothing here builds prompts, and nothing here reaches a store other than
 * through its vtable: the direct calls are the constructors when opening
 * by path (kevo_store_pg_open for a PostgreSQL locator, see
 * kevo_conninfo_is_pg, kevo_store_sqlite_open otherwise).
 */
#include "internal.h"

#include "kevo/util.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- small shared helpers -------------------------------------------- */

int64_t kevo_memory_now_ms(void)
{
    return kevo_unix_ms();
}

void kevo_memory_uid_new(kevo_memory *mem, char out[33], const void *salt, size_t len)
{
    uint64_t seed = (uint64_t)kevo_now_ns() ^ ((uint64_t)getpid() << 40) ^ (++mem->uid_seq << 20) ^
                    (uint64_t)kevo_memory_now_ms();
    uint64_t a = kevo_hash64(salt, len, seed);
    uint64_t b = kevo_hash64(&a, sizeof(a), seed ^ 0x9e3779b97f4a7c15ULL);
    b = kevo_hash64(salt, len, b);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

int kevo_memory_tx_end(kevo_memory *mem, int error)
{
    if (error < 0) {
        char saved[2048];
        snprintf(saved, sizeof(saved), "%s", kevo_error_last());
        mem->store->tx_rollback(mem->store);
        kevo_error_set(error, "%s", saved);
        return error;
    }
    return mem->store->tx_commit(mem->store);
}

static int dup_field(const char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    char *p = strdup(src);
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory copying a record");
    *dst = p;
    return 0;
}

#define FREE_FIELD(x) free((void *)(x))

int kevo_attempt_copy(kevo_attempt *dst, const kevo_attempt *src)
{
    *dst = *src;
    dst->task = dst->backend = dst->generator = dst->gates_json = NULL;
    dst->feedback = dst->source = dst->recipes_json = dst->uid = dst->baseline = NULL;
    dst->machine = NULL;
    int error = 0;
    if ((error = dup_field(&dst->task, src->task)) < 0 ||
        (error = dup_field(&dst->backend, src->backend)) < 0 ||
        (error = dup_field(&dst->generator, src->generator)) < 0 ||
        (error = dup_field(&dst->gates_json, src->gates_json)) < 0 ||
        (error = dup_field(&dst->feedback, src->feedback)) < 0 ||
        (error = dup_field(&dst->source, src->source)) < 0 ||
        (error = dup_field(&dst->recipes_json, src->recipes_json)) < 0 ||
        (error = dup_field(&dst->uid, src->uid)) < 0 ||
        (error = dup_field(&dst->baseline, src->baseline)) < 0 ||
        (error = dup_field(&dst->machine, src->machine)) < 0)
        kevo_attempt_clear(dst);
    return error;
}

void kevo_attempt_clear(kevo_attempt *a)
{
    if (!a)
        return;
    FREE_FIELD(a->task);
    FREE_FIELD(a->backend);
    FREE_FIELD(a->generator);
    FREE_FIELD(a->gates_json);
    FREE_FIELD(a->feedback);
    FREE_FIELD(a->source);
    FREE_FIELD(a->recipes_json);
    FREE_FIELD(a->uid);
    FREE_FIELD(a->baseline);
    FREE_FIELD(a->machine);
    memset(a, 0, sizeof(*a));
}

int kevo_item_copy(kevo_item *dst, const kevo_item *src)
{
    *dst = *src;
    dst->title = dst->body = dst->category = dst->task = dst->backend = dst->tags = NULL;
    dst->uid = NULL;
    int error = 0;
    if ((error = dup_field(&dst->title, src->title)) < 0 ||
        (error = dup_field(&dst->body, src->body)) < 0 ||
        (error = dup_field(&dst->category, src->category)) < 0 ||
        (error = dup_field(&dst->task, src->task)) < 0 ||
        (error = dup_field(&dst->backend, src->backend)) < 0 ||
        (error = dup_field(&dst->tags, src->tags)) < 0 ||
        (error = dup_field(&dst->uid, src->uid)) < 0)
        kevo_item_clear(dst);
    return error;
}

void kevo_item_clear(kevo_item *it)
{
    if (!it)
        return;
    FREE_FIELD(it->title);
    FREE_FIELD(it->body);
    FREE_FIELD(it->category);
    FREE_FIELD(it->task);
    FREE_FIELD(it->backend);
    FREE_FIELD(it->tags);
    FREE_FIELD(it->uid);
    memset(it, 0, sizeof(*it));
}

int kevo_run_copy(kevo_run *dst, const kevo_run *src)
{
    *dst = *src;
    dst->uid = dst->config_json = dst->status = NULL;
    int error = 0;
    if ((error = dup_field(&dst->uid, src->uid)) < 0 ||
        (error = dup_field(&dst->config_json, src->config_json)) < 0 ||
        (error = dup_field(&dst->status, src->status)) < 0)
        kevo_run_clear(dst);
    return error;
}

void kevo_run_clear(kevo_run *r)
{
    if (!r)
        return;
    FREE_FIELD(r->uid);
    FREE_FIELD(r->config_json);
    FREE_FIELD(r->status);
    memset(r, 0, sizeof(*r));
}

int kevo_memory_task_copy(kevo_memory_task *dst, const kevo_memory_task *src)
{
    *dst = *src;
    dst->name = dst->category = dst->description = dst->reference = dst->suite_path = NULL;
    int error = 0;
    if ((error = dup_field(&dst->name, src->name)) < 0 ||
        (error = dup_field(&dst->category, src->category)) < 0 ||
        (error = dup_field(&dst->description, src->description)) < 0 ||
        (error = dup_field(&dst->reference, src->reference)) < 0 ||
        (error = dup_field(&dst->suite_path, src->suite_path)) < 0)
        kevo_memory_task_clear(dst);
    return error;
}

void kevo_memory_task_clear(kevo_memory_task *t)
{
    if (!t)
        return;
    FREE_FIELD(t->name);
    FREE_FIELD(t->category);
    FREE_FIELD(t->description);
    FREE_FIELD(t->reference);
    FREE_FIELD(t->suite_path);
    memset(t, 0, sizeof(*t));
}

/* Make room for element n of a heap array of `size`-byte elements. The
 * capacity is implicit: 8, then doubling, so growth happens when n is 0 or
 * a power of two >= 8. */
static int grow_array(void **arr, size_t n, size_t size)
{
    if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
        return 0;
    size_t cap = n ? n * 2 : 8;
    void *p = realloc(*arr, cap * size);
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory growing a list to %zu entries", cap);
    *arr = p;
    return 0;
}

int kevo_attempt_list_append_cb(void *arg, const kevo_attempt *a)
{
    kevo_attempt_list *l = arg;
    int error = grow_array((void **)&l->attempts, l->n, sizeof(*l->attempts));
    if (error < 0 || (error = kevo_attempt_copy(&l->attempts[l->n], a)) < 0)
        return error;
    l->n++;
    return 0;
}

int kevo_item_list_append_cb(void *arg, const kevo_item *it, double score)
{
    kevo_item_list *l = arg;
    int error = grow_array((void **)&l->items, l->n, sizeof(*l->items));
    if (error < 0 || (error = grow_array((void **)&l->scores, l->n, sizeof(double))) < 0)
        return error;
    if ((error = kevo_item_copy(&l->items[l->n], it)) < 0)
        return error;
    l->scores[l->n] = score;
    l->n++;
    return 0;
}

static int run_list_append_cb(void *arg, const kevo_run *r)
{
    kevo_run_list *l = arg;
    int error = grow_array((void **)&l->runs, l->n, sizeof(*l->runs));
    if (error < 0 || (error = kevo_run_copy(&l->runs[l->n], r)) < 0)
        return error;
    l->n++;
    return 0;
}

static int task_list_append_cb(void *arg, const kevo_memory_task *t, double score)
{
    kevo_memory_task_array *l = arg;
    int error = grow_array((void **)&l->tasks, l->n, sizeof(*l->tasks));
    if (error < 0 || (error = grow_array((void **)&l->scores, l->n, sizeof(double))) < 0)
        return error;
    if ((error = kevo_memory_task_copy(&l->tasks[l->n], t)) < 0)
        return error;
    l->scores[l->n] = score;
    l->n++;
    return 0;
}

const kevo_learn_config *kevo_learn_config_or_default(const kevo_learn_config *cfg,
                                                      kevo_learn_config *storage)
{
    if (cfg)
        return cfg;
    kevo_learn_config_init(storage);
    return storage;
}

void kevo_learn_config_init(kevo_learn_config *cfg)
{
    cfg->alpha = 0.3;
    cfg->q_init = 0.0;
    cfg->normalize = 0;
    cfg->var_floor = 0.01;
    cfg->clip = 3.0;
    cfg->frozen = 0;
}

/* ---- opening ---------------------------------------------------------- */

int kevo_memory_open_store(kevo_memory **out, kevo_store *store, const char *path)
{
    *out = NULL;
    if (!store)
        return kevo_error_set(KEVO_EINVAL, "memory: no store given");
    if (store->version < 1) {
        kevo_store_free(store);
        return kevo_error_set(KEVO_EINVAL, "memory: store has version 0");
    }
    kevo_memory *mem = calloc(1, sizeof(*mem));
    if (!mem || !(mem->path = strdup(path ? path : ""))) {
        free(mem);
        kevo_store_free(store);
        return kevo_error_set(KEVO_ENOMEM, "out of memory opening the memory");
    }
    mem->store = store;
    *out = mem;
    return 0;
}

int kevo_memory_open_ex(kevo_memory **out, const char *path, unsigned flags)
{
    kevo_store *store = NULL;
    int error;
    *out = NULL;
    /* postgresql:// and postgres:// are libpq URIs; "pg:" prefixes a libpq
     * key=value string. The handle keeps the redacted locator as its path
     * (kevo_memory_path): never a password. */
    if (kevo_conninfo_is_pg(path)) {
        char *shown = NULL;
        const char *conninfo = strncmp(path, "pg:", 3) ? path : path + 3;
        if ((error = kevo_store_pg_open(&store, conninfo, flags)) < 0)
            return error;
        if ((error = kevo_conninfo_redact(&shown, path)) < 0) {
            kevo_store_free(store);
            return error;
        }
        error = kevo_memory_open_store(out, store, shown);
        free(shown);
        return error;
    }
    if ((error = kevo_store_sqlite_open(&store, path, flags)) < 0)
        return error;
    return kevo_memory_open_store(out, store, path);
}

int kevo_memory_open(kevo_memory **out, const char *path)
{
    return kevo_memory_open_ex(out, path, 0);
}

void kevo_store_free(kevo_store *store)
{
    if (!store)
        return;
    if (store->free)
        store->free(store);
    free(store);
}

void kevo_memory_free(kevo_memory *mem)
{
    if (!mem)
        return;
    kevo_store_free(mem->store);
    free(mem->path);
    free(mem);
}

const char *kevo_memory_path(const kevo_memory *mem)
{
    return mem->path;
}

int kevo_memory_tx_begin(kevo_memory *mem)
{
    return mem->store->tx_begin(mem->store);
}

int kevo_memory_tx_commit(kevo_memory *mem)
{
    return mem->store->tx_commit(mem->store);
}

int kevo_memory_tx_rollback(kevo_memory *mem)
{
    return mem->store->tx_rollback(mem->store);
}

int kevo_memory_snapshot_begin(kevo_memory *mem)
{
    return mem->store->tx_begin_read(mem->store);
}

int kevo_memory_snapshot_end(kevo_memory *mem)
{
    return mem->store->tx_commit(mem->store);
}

/* ---- runs ------------------------------------------------------------- */

int kevo_memory_run_begin(kevo_memory *mem, const char *config_json, int64_t *out_run_id)
{
    if (!config_json)
        config_json = "{}";
    cJSON *parsed = cJSON_Parse(config_json);
    if (!parsed)
        return kevo_error_set(KEVO_EINVAL, "run config: not valid JSON near '%.40s'",
                              cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : config_json);
    cJSON_Delete(parsed);
    char uid[33];
    kevo_memory_uid_new(mem, uid, config_json, strlen(config_json));
    kevo_run r = {.uid = uid,
                  .config_json = config_json,
                  .status = "running",
                  .started = kevo_memory_now_ms()};
    int error = mem->store->tx_begin(mem->store);
    if (error < 0)
        return error;
    error = mem->store->run_insert(mem->store, &r, out_run_id);
    return kevo_memory_tx_end(mem, error);
}

int kevo_memory_run_finish(kevo_memory *mem, int64_t run_id, const char *status)
{
    if (!status || !*status)
        return kevo_error_set(KEVO_EINVAL, "run %lld: empty status", (long long)run_id);
    int error = mem->store->tx_begin(mem->store);
    if (error < 0)
        return error;
    error = mem->store->run_update(mem->store, run_id, status, kevo_memory_now_ms(), NULL);
    return kevo_memory_tx_end(mem, error);
}

int kevo_memory_run_list(kevo_run_list **out, kevo_memory *mem)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = mem->store->run_each(mem->store, 0, run_list_append_cb, *out);
    if (error < 0) {
        kevo_run_list_free(*out);
        *out = NULL;
    }
    return error;
}

int kevo_memory_run_get(kevo_run **out, kevo_memory *mem, int64_t run_id)
{
    kevo_run_list *l = NULL;
    *out = NULL;
    int error = 0;
    if (!(l = calloc(1, sizeof(*l))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if ((error = mem->store->run_each(mem->store, run_id, run_list_append_cb, l)) < 0)
        goto done;
    if (l->n == 0 || run_id <= 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "no run %lld", (long long)run_id);
        goto done;
    }
    if (!(*out = malloc(sizeof(**out)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    **out = l->runs[0];
    l->n = 0;
done:
    kevo_run_list_free(l);
    return error;
}

void kevo_run_free(kevo_run *run)
{
    if (!run)
        return;
    kevo_run_clear(run);
    free(run);
}

void kevo_run_list_free(kevo_run_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        kevo_run_clear(&list->runs[i]);
    free(list->runs);
    free(list);
}

/* ---- tasks ------------------------------------------------------------ */

int kevo_memory_task_upsert(kevo_memory *mem, const kevo_memory_task *t, int64_t *out_id)
{
    if (!t || !t->name || !*t->name)
        return kevo_error_set(KEVO_EINVAL, "task: missing field 'name'");
    int error = mem->store->tx_begin(mem->store);
    if (error < 0)
        return error;
    error = mem->store->task_upsert(mem->store, t, out_id);
    return kevo_memory_tx_end(mem, error);
}

int kevo_memory_task_get(kevo_memory_task **out, kevo_memory *mem, const char *name)
{
    kevo_memory_task_array *l = NULL;
    int error = 0;
    *out = NULL;
    if (!name)
        return kevo_error_set(KEVO_EINVAL, "task: no name given");
    if (!(l = calloc(1, sizeof(*l))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if ((error = mem->store->task_each(mem->store, name, task_list_append_cb, l)) < 0)
        goto done;
    if (l->n == 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "no task '%s' in the memory", name);
        goto done;
    }
    if (!(*out = malloc(sizeof(**out)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    **out = l->tasks[0];
    l->n = 0;
done:
    kevo_memory_task_array_free(l);
    return error;
}

int kevo_memory_task_list(kevo_memory_task_array **out, kevo_memory *mem)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = mem->store->task_each(mem->store, NULL, task_list_append_cb, *out);
    if (error < 0) {
        kevo_memory_task_array_free(*out);
        *out = NULL;
    }
    return error;
}

int kevo_memory_task_search(kevo_memory_task_array **out, kevo_memory *mem, const char *query,
                            size_t limit)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error =
        mem->store->task_search(mem->store, query ? query : "", limit, task_list_append_cb, *out);
    if (error < 0) {
        kevo_memory_task_array_free(*out);
        *out = NULL;
    }
    return error;
}

void kevo_memory_task_free(kevo_memory_task *t)
{
    if (!t)
        return;
    kevo_memory_task_clear(t);
    free(t);
}

void kevo_memory_task_array_free(kevo_memory_task_array *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        kevo_memory_task_clear(&list->tasks[i]);
    free(list->tasks);
    free(list->scores);
    free(list);
}

/* ---- attempts (reading) ------------------------------------------------ */

static int first_attempt(kevo_attempt **out, kevo_attempt_list *l)
{
    if (!(*out = malloc(sizeof(**out))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    **out = l->attempts[0];
    memmove(l->attempts, l->attempts + 1, (l->n - 1) * sizeof(*l->attempts));
    l->n--;
    return 0;
}

int kevo_memory_attempt_get(kevo_attempt **out, kevo_memory *mem, int64_t id)
{
    kevo_attempt_list *l = NULL;
    int error = 0;
    *out = NULL;
    if (id <= 0)
        return kevo_error_set(KEVO_ENOTFOUND, "no attempt %lld", (long long)id);
    if (!(l = calloc(1, sizeof(*l))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if ((error = mem->store->attempt_each(mem->store, id, NULL, kevo_attempt_list_append_cb, l)) <
        0)
        goto done;
    if (l->n == 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "no attempt %lld", (long long)id);
        goto done;
    }
    error = first_attempt(out, l);
done:
    kevo_attempt_list_free(l);
    return error;
}

int kevo_memory_attempt_list(kevo_attempt_list **out, kevo_memory *mem,
                             const kevo_attempt_filter *filter)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = mem->store->attempt_each(mem->store, 0, filter, kevo_attempt_list_append_cb, *out);
    if (error < 0) {
        kevo_attempt_list_free(*out);
        *out = NULL;
    }
    return error;
}

int kevo_memory_attempts_of_run(kevo_attempt_list **out, kevo_memory *mem, int64_t run_id)
{
    if (run_id <= 0) {
        *out = NULL;
        return kevo_error_set(KEVO_EINVAL, "attempts of a run: run id must be > 0");
    }
    kevo_attempt_filter f = {.run_id = run_id};
    return kevo_memory_attempt_list(out, mem, &f);
}

int kevo_memory_attempts_of_task(kevo_attempt_list **out, kevo_memory *mem, const char *task,
                                 int64_t run_id)
{
    if (!task) {
        *out = NULL;
        return kevo_error_set(KEVO_EINVAL, "attempts of a task: no task name");
    }
    kevo_attempt_filter f = {.task = task, .run_id = run_id};
    return kevo_memory_attempt_list(out, mem, &f);
}

int kevo_memory_attempt_children(kevo_attempt_list **out, kevo_memory *mem, int64_t id)
{
    if (id <= 0) {
        *out = NULL;
        return kevo_error_set(KEVO_EINVAL, "children: attempt id must be > 0");
    }
    kevo_attempt_filter f = {.parent_id = id};
    return kevo_memory_attempt_list(out, mem, &f);
}

int kevo_memory_attempt_best(kevo_attempt **out, kevo_memory *mem, const char *task, int64_t run_id,
                             const char *backend)
{
    kevo_attempt_list *l = NULL;
    *out = NULL;
    kevo_attempt_filter f = {.task = task,
                             .run_id = run_id,
                             .backend = backend,
                             .correct_only = 1,
                             .best_first = 1,
                             .limit = 1};
    int error = kevo_memory_attempt_list(&l, mem, &f);
    if (error < 0)
        return error;
    if (l->n == 0)
        error = kevo_error_set(KEVO_ENOTFOUND, "task '%s' has no correct attempt%s",
                               task ? task : "(null)", run_id ? " in that run" : "");
    else
        error = first_attempt(out, l);
    kevo_attempt_list_free(l);
    return error;
}

typedef struct start_acc {
    kevo_start_point *v;
    size_t n;
} start_acc;

static int start_append_cb(void *arg, const kevo_start_point *sp)
{
    start_acc *acc = arg;
    int error = grow_array((void **)&acc->v, acc->n, sizeof(*acc->v));
    if (error < 0)
        return error;
    acc->v[acc->n++] = *sp;
    return 0;
}

int kevo_memory_start_points(kevo_start_point **out, size_t *out_n, kevo_memory *mem,
                             const char *task, const char *backend)
{
    start_acc acc = {0};
    *out = NULL;
    *out_n = 0;
    if (!task)
        return kevo_error_set(KEVO_EINVAL, "start points: no task name");
    int error = mem->store->start_each(mem->store, task, backend, start_append_cb, &acc);
    if (error == 0 && acc.n == 0)
        error = kevo_error_set(KEVO_ENOTFOUND, "task '%s' has no correct attempt to refine", task);
    if (error < 0) {
        free(acc.v);
        return error;
    }
    *out = acc.v;
    *out_n = acc.n;
    return 0;
}

typedef struct used_acc {
    kevo_used_item *v;
    size_t n;
} used_acc;

static int used_append_cb(void *arg, const kevo_used_edge *e)
{
    used_acc *acc = arg;
    int error = grow_array((void **)&acc->v, acc->n, sizeof(*acc->v));
    if (error < 0)
        return error;
    acc->v[acc->n++] = e->used;
    return 0;
}

int kevo_memory_attempt_used(kevo_used_item **out, size_t *out_n, kevo_memory *mem,
                             int64_t attempt_id)
{
    used_acc acc = {0};
    *out = NULL;
    *out_n = 0;
    int error = mem->store->used_each(mem->store, attempt_id, 0, used_append_cb, &acc);
    if (error < 0 || attempt_id <= 0) {
        free(acc.v);
        return error;
    }
    *out = acc.v;
    *out_n = acc.n;
    return 0;
}

void kevo_attempt_free(kevo_attempt *a)
{
    if (!a)
        return;
    kevo_attempt_clear(a);
    free(a);
}

void kevo_attempt_list_free(kevo_attempt_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        kevo_attempt_clear(&list->attempts[i]);
    free(list->attempts);
    free(list);
}

/* ---- items ------------------------------------------------------------ */

int kevo_memory_item_add(kevo_memory *mem, const kevo_item *item, int64_t *out_id)
{
    return kevo_memory_item_add_distilled(mem, item, 0, out_id);
}

int kevo_memory_item_add_distilled(kevo_memory *mem, const kevo_item *item, int64_t attempt_id,
                                   int64_t *out_id)
{
    if (!item)
        return kevo_error_set(KEVO_EINVAL, "item: none given");
    if (item->kind < 1 || item->kind > KEVO_ITEM_KIND_MAX)
        return kevo_error_set(KEVO_EINVAL, "item: field 'kind' is %d, not a known kind",
                              (int)item->kind);
    if (!item->title || !*item->title)
        return kevo_error_set(KEVO_EINVAL, "item: missing field 'title'");
    if (!item->body)
        return kevo_error_set(KEVO_EINVAL, "item '%s': missing field 'body'", item->title);
    kevo_item copy = *item;
    char uid[33];
    if (!copy.uid || !*copy.uid) {
        kevo_memory_uid_new(mem, uid, item->title, strlen(item->title));
        copy.uid = uid;
    }
    if (!copy.created)
        copy.created = kevo_memory_now_ms();
    copy.id = 0;
    int error = mem->store->tx_begin(mem->store);
    if (error < 0)
        return error;
    int64_t id = 0;
    error = mem->store->item_insert(mem->store, &copy, &id);
    if (error == 0 && attempt_id > 0)
        error = mem->store->distilled_insert(mem->store, id, attempt_id);
    if (out_id)
        *out_id = id;
    return kevo_memory_tx_end(mem, error);
}

static int item_one(kevo_item **out, kevo_item_list *l)
{
    if (!(*out = malloc(sizeof(**out))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    **out = l->items[0];
    memmove(l->items, l->items + 1, (l->n - 1) * sizeof(*l->items));
    l->n--;
    return 0;
}

int kevo_memory_item_get(kevo_item **out, kevo_memory *mem, int64_t id)
{
    kevo_item_list *l = NULL;
    int error = 0;
    *out = NULL;
    if (id <= 0)
        return kevo_error_set(KEVO_ENOTFOUND, "no item %lld", (long long)id);
    if (!(l = calloc(1, sizeof(*l))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if ((error = mem->store->item_each(mem->store, id, NULL, kevo_item_list_append_cb, l)) < 0)
        goto done;
    if (l->n == 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "no item %lld", (long long)id);
        goto done;
    }
    error = item_one(out, l);
done:
    kevo_item_list_free(l);
    return error;
}

int kevo_memory_item_list(kevo_item_list **out, kevo_memory *mem, const kevo_item_filter *f)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = mem->store->item_each(mem->store, 0, f, kevo_item_list_append_cb, *out);
    if (error < 0) {
        kevo_item_list_free(*out);
        *out = NULL;
    } else if ((*out)->n) {
        free((*out)->scores);
        (*out)->scores = NULL;
    }
    return error;
}

int kevo_memory_item_search(kevo_item_list **out, kevo_memory *mem, const char *query,
                            const kevo_item_filter *f)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error =
        mem->store->item_search(mem->store, query ? query : "", f, kevo_item_list_append_cb, *out);
    if (error < 0) {
        kevo_item_list_free(*out);
        *out = NULL;
    }
    return error;
}

int kevo_memory_item_lookup_api(kevo_item **out, kevo_memory *mem, const char *name,
                                const char *backend)
{
    kevo_item_list *l = NULL;
    int error = 0;
    *out = NULL;
    if (!name || !*name)
        return kevo_error_set(KEVO_EINVAL, "api lookup: empty name");
    if (!(l = calloc(1, sizeof(*l))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if ((error = mem->store->item_lookup(mem->store, KEVO_ITEM_API_DOC, name, backend,
                                         kevo_item_list_append_cb, l)) < 0)
        goto done;
    if (l->n == 0) {
        error = kevo_error_set(KEVO_ENOTFOUND, "no api_doc named '%s'", name);
        goto done;
    }
    error = item_one(out, l);
done:
    kevo_item_list_free(l);
    return error;
}

typedef struct id_acc {
    int64_t *v;
    size_t n;
} id_acc;

static int distilled_attempt_cb(void *arg, const kevo_distilled_edge *e)
{
    id_acc *acc = arg;
    int error = grow_array((void **)&acc->v, acc->n, sizeof(*acc->v));
    if (error < 0)
        return error;
    acc->v[acc->n++] = e->attempt_id;
    return 0;
}

int kevo_memory_item_sources(int64_t **out, size_t *out_n, kevo_memory *mem, int64_t item_id)
{
    id_acc acc = {0};
    *out = NULL;
    *out_n = 0;
    if (item_id <= 0)
        return 0;
    int error = mem->store->distilled_each(mem->store, item_id, 0, distilled_attempt_cb, &acc);
    if (error < 0) {
        free(acc.v);
        return error;
    }
    *out = acc.v;
    *out_n = acc.n;
    return 0;
}

void kevo_item_free(kevo_item *item)
{
    if (!item)
        return;
    kevo_item_clear(item);
    free(item);
}

void kevo_item_list_free(kevo_item_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        kevo_item_clear(&list->items[i]);
    free(list->items);
    free(list->scores);
    free(list);
}

/* ---- Q-values and statistics ------------------------------------------ */

int kevo_memory_q_get(double *out_q, int64_t *out_n, kevo_memory *mem, int64_t item_id,
                      kevo_stage stage)
{
    int64_t n = 0;
    int error = mem->store->q_get(mem->store, KEVO_Q_ITEM, item_id, stage, out_q, &n);
    if (out_n)
        *out_n = n;
    return error;
}

int kevo_memory_q_get_many(double *out_q, int64_t *out_n, kevo_memory *mem,
                           const int64_t *item_ids, size_t n, kevo_stage stage)
{
    kevo_store *s = mem->store;
    if (n == 0)
        return 0;
    if (s->version >= 3 && s->q_get_many)
        return s->q_get_many(s, KEVO_Q_ITEM, item_ids, n, stage, out_q, out_n);
    for (size_t i = 0; i < n; i++) {
        int error = s->q_get(s, KEVO_Q_ITEM, item_ids[i], stage, &out_q[i], &out_n[i]);
        if (error < 0)
            return error;
    }
    return 0;
}

int kevo_memory_q_start_get(double *out_q, int64_t *out_n, kevo_memory *mem, int64_t attempt_id)
{
    int64_t n = 0;
    int error =
        mem->store->q_get(mem->store, KEVO_Q_START, attempt_id, KEVO_STAGE_REFINE, out_q, &n);
    if (out_n)
        *out_n = n;
    return error;
}

int kevo_memory_stats_get(kevo_memory_stats *out, kevo_memory *mem)
{
    return mem->store->stats(mem->store, out);
}
