/*
 * memory/work.c - the work queue of shared runs (`kevo submit`, `kevo
 * worker`) and the machines that measured attempts, on top of the
 * kevo_store vtable (version 2): argument checks, one transaction per call,
 * the run's end when its last row finishes, deep copies for the caller.
 * Must not: run tasks, talk to workers, or keep work rows in the memory's
 * export (they are operational state, not experience).
 */
#include "internal.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>


/* The queue and the machines came with store version 2. */
static int need_v2(kevo_memory *mem, const char *what)
{
    kevo_store *s = mem->store;
    if (s->version < 2 || !s->work_add || !s->work_claim || !s->work_renew ||
        !s->work_finish || !s->work_each || !s->machine_upsert || !s->machine_each)
        return kevo_error_set(KEVO_EINVAL, "memory: the %s store (version %u) has no %s",
                              s->name ? s->name : "?", s->version, what);
    return 0;
}

/* ---- copies ------------------------------------------------------------ */

static int dup_str(const char **dst, const char *src)
{
    *dst = NULL;
    if (src && !(*dst = strdup(src)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory copying a work row");
    return 0;
}

static void work_clear(kevo_work *w)
{
    free((void *)w->task);
    free((void *)w->backend);
    free((void *)w->bundle);
    free((void *)w->worker);
    free((void *)w->error);
    memset(w, 0, sizeof(*w));
}

static int work_copy(kevo_work *dst, const kevo_work *src)
{
    *dst = *src;
    dst->task = dst->backend = dst->bundle = dst->worker = dst->error = NULL;
    int error = 0;
    if ((error = dup_str(&dst->task, src->task)) < 0 ||
        (error = dup_str(&dst->backend, src->backend)) < 0 ||
        (error = dup_str(&dst->bundle, src->bundle)) < 0 ||
        (error = dup_str(&dst->worker, src->worker)) < 0 ||
        (error = dup_str(&dst->error, src->error)) < 0)
        work_clear(dst);
    return error;
}

void kevo_work_free(kevo_work *w)
{
    if (!w)
        return;
    work_clear(w);
    free(w);
}

void kevo_work_list_free(kevo_work_list *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        work_clear(&list->work[i]);
    free(list->work);
    free(list);
}

static int work_one_cb(void *arg, const kevo_work *w)
{
    kevo_work **out = arg;
    if (*out)
        return 0;
    kevo_work *c = calloc(1, sizeof(*c));
    if (!c)
        return kevo_error_set(KEVO_ENOMEM, "out of memory copying a work row");
    int error = work_copy(c, w);
    if (error < 0) {
        free(c);
        return error;
    }
    *out = c;
    return 0;
}

static int work_append_cb(void *arg, const kevo_work *w)
{
    kevo_work_list *l = arg;
    /* capacity 8, then doubling: grow when n is 0 or a power of two >= 8 */
    if (l->n == 0 || (l->n >= 8 && (l->n & (l->n - 1)) == 0)) {
        size_t cap = l->n ? l->n * 2 : 8;
        kevo_work *p = realloc(l->work, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory listing work");
        l->work = p;
    }
    int error = work_copy(&l->work[l->n], w);
    if (error == 0)
        l->n++;
    return error;
}

/* ---- the queue --------------------------------------------------------- */

/* A bundle is a JSON object whose members are all strings (file texts). */
static int check_bundle(const kevo_work *w)
{
    cJSON *j = cJSON_Parse(w->bundle);
    int error = 0;
    if (!j || !cJSON_IsObject(j)) {
        error = kevo_error_set(KEVO_EINVAL, "work (run %lld, task %s): field 'bundle' is not a "
                               "JSON object of file name -> contents",
                               (long long)w->run_id, w->task);
        goto done;
    }
    for (cJSON *f = j->child; f; f = f->next) {
        if (!cJSON_IsString(f)) {
            error = kevo_error_set(KEVO_EINVAL, "work (run %lld, task %s): bundle member '%s' "
                                   "is not a string (file contents)",
                                   (long long)w->run_id, w->task, f->string ? f->string : "?");
            goto done;
        }
    }
done:
    cJSON_Delete(j);
    return error;
}

int kevo_memory_work_add(kevo_memory *mem, const kevo_work *w)
{
    int error = need_v2(mem, "work queue");
    if (error < 0)
        return error;
    if (!w || w->run_id <= 0 || !w->task || !*w->task || !w->backend || !*w->backend ||
        !w->bundle)
        return kevo_error_set(KEVO_EINVAL, "work: run_id, task, backend and bundle are required "
                              "(task %s)", w && w->task ? w->task : "(null)");
    if ((error = check_bundle(w)) < 0)
        return error;
    kevo_work row = *w;
    row.state = KEVO_WORK_QUEUED;
    row.updated = kevo_memory_now_ms();
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        return error;
    error = mem->store->work_add(mem->store, &row);
    return kevo_memory_tx_end(mem, error);
}

int kevo_memory_work_claim(kevo_work **out, kevo_memory *mem, const char *const *backends,
                           size_t n_backends, const char *worker, int64_t now_ms,
                           int64_t lease_ms)
{
    *out = NULL;
    int error = need_v2(mem, "work queue");
    if (error < 0)
        return error;
    if (!worker || !*worker || n_backends == 0 || !backends || lease_ms <= 0)
        return kevo_error_set(KEVO_EINVAL, "work claim: a worker id, at least one backend and "
                              "a positive lease are required");
    for (size_t i = 0; i < n_backends; i++)
        if (!backends[i] || !*backends[i])
            return kevo_error_set(KEVO_EINVAL, "work claim: backend %zu is empty", i + 1);
    if (!now_ms)
        now_ms = kevo_memory_now_ms();
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        return error;
    error = mem->store->work_claim(mem->store, backends, n_backends, worker, now_ms, lease_ms,
                                   work_one_cb, out);
    if (error == 0 && !*out)
        error = KEVO_ENOTFOUND;
    if (error == KEVO_ENOTFOUND)
        kevo_error_set(KEVO_ENOTFOUND, "no claimable work for worker %s", worker);
    error = kevo_memory_tx_end(mem, error);
    if (error < 0) {
        kevo_work_free(*out);
        *out = NULL;
    }
    return error;
}

int kevo_memory_work_renew(kevo_memory *mem, int64_t run_id, const char *task, const char *worker,
                           int64_t now_ms, int64_t lease_ms)
{
    int error = need_v2(mem, "work queue");
    if (error < 0)
        return error;
    if (!task || !worker || lease_ms <= 0)
        return kevo_error_set(KEVO_EINVAL, "work renew: task, worker and a positive lease are "
                              "required");
    if (!now_ms)
        now_ms = kevo_memory_now_ms();
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        return error;
    error = mem->store->work_renew(mem->store, run_id, task, worker, now_ms, lease_ms);
    return kevo_memory_tx_end(mem, error);
}

typedef struct pending {
    size_t n;          /* rows queued or running */
    int64_t finished;  /* the run's finished time; 0 while it runs */
} pending;

static int pending_cb(void *arg, const kevo_work *w)
{
    pending *p = arg;
    if (w->state == KEVO_WORK_QUEUED || w->state == KEVO_WORK_RUNNING)
        p->n++;
    return 0;
}

static int run_finished_cb(void *arg, const kevo_run *r)
{
    ((pending *)arg)->finished = r->finished;
    return 0;
}

int kevo_memory_work_finish(kevo_memory *mem, int64_t run_id, const char *task, const char *worker,
                            kevo_work_state state, const char *why, int *out_run_finished)
{
    if (out_run_finished)
        *out_run_finished = 0;
    int error = need_v2(mem, "work queue");
    if (error < 0)
        return error;
    if (!task || !worker)
        return kevo_error_set(KEVO_EINVAL, "work finish: task and worker are required");
    if (state != KEVO_WORK_DONE && state != KEVO_WORK_FAILED)
        return kevo_error_set(KEVO_EINVAL, "work finish (run %lld, task %s): the state must be "
                              "done or failed, not %s",
                              (long long)run_id, task, kevo_work_state_name(state));
    int64_t now = kevo_memory_now_ms();
    pending p = {0};
    int finished = 0;
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        return error;
    if ((error = mem->store->work_finish(mem->store, run_id, task, worker, state, why, now)) < 0 ||
        (error = mem->store->work_each(mem->store, run_id, 0, pending_cb, &p)) < 0 ||
        (error = mem->store->run_each(mem->store, run_id, run_finished_cb, &p)) < 0)
        goto done;
    /* the last row: the run ends (unless it was ended already, e.g. stopped) */
    if (p.n == 0 && p.finished == 0) {
        error = mem->store->run_update(mem->store, run_id, "finished", now, NULL);
        finished = error == 0;
    }
done:
    error = kevo_memory_tx_end(mem, error);
    if (error == 0 && out_run_finished)
        *out_run_finished = finished;
    return error;
}

int kevo_memory_work_list(kevo_work_list **out, kevo_memory *mem, int64_t run_id, int with_bundle)
{
    *out = NULL;
    int error = need_v2(mem, "work queue");
    if (error < 0)
        return error;
    if (!(*out = calloc(1, sizeof(**out))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory listing work");
    if ((error = mem->store->work_each(mem->store, run_id, with_bundle, work_append_cb, *out)) <
        0) {
        kevo_work_list_free(*out);
        *out = NULL;
    }
    return error;
}

/* ---- machines ---------------------------------------------------------- */

int kevo_memory_machine_upsert(kevo_memory *mem, const kevo_memory_machine *m)
{
    int error = need_v2(mem, "machines table");
    if (error < 0)
        return error;
    if (!m || !m->id || !*m->id)
        return kevo_error_set(KEVO_EINVAL, "machine: field 'id' is required");
    kevo_memory_machine row = *m;
    if (!row.last_seen)
        row.last_seen = kevo_memory_now_ms();
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        return error;
    error = mem->store->machine_upsert(mem->store, &row);
    return kevo_memory_tx_end(mem, error);
}

static void machine_clear(kevo_memory_machine *m)
{
    free((void *)m->id);
    free((void *)m->hostname);
    free((void *)m->cpu);
    free((void *)m->gpu);
    memset(m, 0, sizeof(*m));
}

static int machine_append_cb(void *arg, const kevo_memory_machine *m)
{
    kevo_memory_machine_array *l = arg;
    kevo_memory_machine *p = realloc(l->machines, (l->n + 1) * sizeof(*p));
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory listing machines");
    l->machines = p;
    kevo_memory_machine *c = &p[l->n];
    *c = *m;
    c->id = c->hostname = c->cpu = c->gpu = NULL;
    int error = 0;
    if ((error = dup_str(&c->id, m->id)) < 0 || (error = dup_str(&c->hostname, m->hostname)) < 0 ||
        (error = dup_str(&c->cpu, m->cpu)) < 0 || (error = dup_str(&c->gpu, m->gpu)) < 0) {
        machine_clear(c);
        return error;
    }
    l->n++;
    return 0;
}

int kevo_memory_machine_list(kevo_memory_machine_array **out, kevo_memory *mem)
{
    *out = NULL;
    int error = need_v2(mem, "machines table");
    if (error < 0)
        return error;
    if (!(*out = calloc(1, sizeof(**out))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory listing machines");
    if ((error = mem->store->machine_each(mem->store, machine_append_cb, *out)) < 0) {
        kevo_memory_machine_array_free(*out);
        *out = NULL;
    }
    return error;
}

void kevo_memory_machine_array_free(kevo_memory_machine_array *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->n; i++)
        machine_clear(&list->machines[i]);
    free(list->machines);
    free(list);
}
