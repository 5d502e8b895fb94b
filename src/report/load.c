/*
 * report/load.c - the report's one reader of the store: a run, its
 * attempts and the tasks' levels (for the metrics), the solved tasks'
 * flops/bytes and the machine peaks (for the metrics' roofline), and for the HTML page the model of
 * report/model.h: per run its record, attempts and per-task indexes, each
 * solved task's flops/bytes from its task.json, the machine peaks, the
 * `used` edges of the runs' attempts, and the items with their learned Q
 * per stage.
 *
 * Loads only: computes no metric and renders nothing. Never writes the
 * store. No other file of src/report may call kevo_memory_*.
 */
#include "model.h"

#include "kevo/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a run and its attempts ------------------------------------------- */

/* The largest run id in the store; KEVO_ENOTFOUND when there is none. */
static int latest_run(int64_t *out, kevo_memory *mem)
{
    kevo_run_list *runs = NULL;
    int64_t id = 0;
    int error = kevo_memory_run_list(&runs, mem);
    if (error < 0)
        goto done;
    for (size_t i = 0; i < runs->n; i++)
        if (runs->runs[i].id > id)
            id = runs->runs[i].id;
    if (id == 0)
        error = kevo_error_set(KEVO_ENOTFOUND,
                               "%s: no runs recorded yet (start one with "
                               "`kevo run`)",
                               kevo_memory_path(mem));
    *out = id;
done:
    kevo_run_list_free(runs);
    return error;
}

int kevo_report__run_load(kevo_run **out_run, kevo_attempt_list **out_list, int64_t *out_id,
                          kevo_memory *mem, int64_t run_id)
{
    int error = 0;
    kevo_run *run = NULL;
    kevo_attempt_list *list = NULL;
    *out_run = NULL;
    *out_list = NULL;
    if (run_id == 0 && (error = latest_run(&run_id, mem)) < 0)
        goto done;
    if ((error = kevo_memory_run_get(&run, mem, run_id)) < 0)
        goto done;
    if ((error = kevo_memory_attempts_of_run(&list, mem, run_id)) < 0)
        goto done;
    *out_run = run;
    *out_list = list;
    *out_id = run_id;
    run = NULL;
    list = NULL;
done:
    kevo_attempt_list_free(list);
    kevo_run_free(run);
    return error;
}

int kevo_report__tasks_load(kevo_memory_task_array **out, kevo_memory *mem)
{
    *out = NULL;
    return kevo_memory_task_list(out, mem);
}

int kevo_report__machines_name(kevo_run_metrics *m, kevo_memory *mem)
{
    kevo_memory_machine_array *all = NULL;
    int error = kevo_memory_machine_list(&all, mem);
    if (error < 0)
        return error;
    for (size_t k = 0; k < m->nmachines; k++)
        for (size_t i = 0; i < all->n; i++) {
            const kevo_memory_machine *x = &all->machines[i];
            kevo_machine_metrics *y = &m->per_machine[k];
            if (!x->id || strcmp(x->id, y->id))
                continue;
            snprintf(y->hostname, sizeof(y->hostname), "%s", x->hostname ? x->hostname : "");
            snprintf(y->cpu, sizeof(y->cpu), "%s", x->cpu ? x->cpu : "");
            snprintf(y->gpu, sizeof(y->gpu), "%s", x->gpu ? x->gpu : "");
        }
    kevo_memory_machine_array_free(all);
    return 0;
}

int kevo_report__roofline_load(kevo_run_metrics *m, const kevo_memory_task_array *tasks)
{
    double *flops = calloc(m->ntasks + 1, sizeof(double));
    double *bytes = calloc(m->ntasks + 1, sizeof(double));
    int error = 0;
    if (!flops || !bytes) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_peaks peaks;
    bool have_peaks = kevo_peaks_load(&peaks) == 0;
    char why[200];
    snprintf(why, sizeof(why), "%s", have_peaks ? "" : kevo_error_last());
    for (size_t k = 0; k < m->ntasks && tasks; k++) {
        const kevo_task_metrics *t = &m->per_task[k];
        if (!have_peaks || !t->correct || !(t->best_us > 0))
            continue;
        for (size_t i = 0; i < tasks->n; i++) {
            const kevo_memory_task *mt = &tasks->tasks[i];
            if (!mt->name || strcmp(mt->name, t->task) || !mt->suite_path || !*mt->suite_path)
                continue;
            kevo_task *task = NULL;
            double f = 0, b = 0;
            if (kevo_task_load(&task, mt->suite_path) == 0 &&
                kevo_task_work(&f, &b, task) == 0 && isfinite(f) && isfinite(b)) {
                flops[k] = f > 0 ? f : 0;
                bytes[k] = b > 0 ? b : 0;
            }
            kevo_task_free(task);
            break;
        }
    }
    kevo_error_clear();
    kevo_report__roofline_compute(m, flops, bytes, have_peaks ? &peaks : NULL, why);
done:
    free(flops);
    free(bytes);
    return error;
}

/* ---- one run of the model --------------------------------------------- */

static int cmp_task_index(const void *a, const void *b, void *ctx)
{
    const kevo_report__run *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return strcmp(v->tasks[x].tm->task, v->tasks[y].tm->task);
}

long kevo_report__task_find(const kevo_report__run *v, const char *name)
{
    size_t lo = 0, hi = v->m->ntasks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(v->tasks[v->by_name[mid]].tm->task, name);
        if (c == 0)
            return (long)v->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void run_clear(kevo_report__run *v)
{
    if (v->tasks)
        for (size_t k = 0; k < v->m->ntasks; k++)
            free(v->tasks[k].att);
    free(v->tasks);
    free(v->by_name);
    kevo_attempt_list_free(v->list);
    kevo_run_free(v->run);
    memset(v, 0, sizeof(*v));
}

/* Attempt i of the run joins its task: the task's attempt index, first
 * compiled / correct iteration and best kernel. */
static int task_add_attempt(kevo_report__run *v, kevo_report__task *t, size_t i)
{
    const kevo_attempt *a = &v->list->attempts[i];
    if (t->natt == t->catt) {
        size_t cap = t->catt ? 2 * t->catt : 8;
        size_t *p = realloc(t->att, cap * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory loading run %lld",
                                  (long long)v->m->run_id);
        t->att = p;
        t->catt = cap;
    }
    t->att[t->natt++] = i;
    int it = kevo_report__clamp_iter(a->iteration) + 1;
    if (it > v->iters)
        v->iters = it;
    if (kevo_verdict_compiled(a->verdict) && (!t->first_compiled || it < t->first_compiled))
        t->first_compiled = it;
    if (a->verdict == KEVO_VERDICT_CORRECT) {
        if (!t->first_correct || it < t->first_correct)
            t->first_correct = it;
        /* the metrics' choice: the first attempt with the highest
         * speedup (the first correct one when none has a speedup) */
        if (t->best == SIZE_MAX || a->speedup > v->list->attempts[t->best].speedup)
            t->best = i;
    }
    return 0;
}

static int run_load(kevo_report__run *v, kevo_memory *mem, const kevo_run_metrics *m)
{
    int error = 0;
    int64_t id = 0;
    v->m = m;
    if ((error = kevo_report__run_load(&v->run, &v->list, &id, mem, m->run_id)) < 0)
        goto done;
    v->tasks = calloc(m->ntasks + 1, sizeof(*v->tasks));
    v->by_name = calloc(m->ntasks + 1, sizeof(*v->by_name));
    if (!v->tasks || !v->by_name) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory loading run %lld", (long long)m->run_id);
        goto done;
    }
    for (size_t k = 0; k < m->ntasks; k++) {
        v->tasks[k].tm = &m->per_task[k];
        v->tasks[k].best = SIZE_MAX;
        v->by_name[k] = k;
    }
    qsort_r(v->by_name, m->ntasks, sizeof(size_t), cmp_task_index, v);
    for (size_t i = 0; i < v->list->n; i++) {
        long k = kevo_report__task_find(v, v->list->attempts[i].task);
        if (k >= 0 && (error = task_add_attempt(v, &v->tasks[k], i)) < 0)
            goto done;
    }
done:
    return error;
}

/* ---- flops and bytes from task.json ----------------------------------- */

typedef struct task_index {
    const kevo_memory_task *t;
} task_index;

static int cmp_mem_task(const void *a, const void *b)
{
    return strcmp(((const task_index *)a)->t->name, ((const task_index *)b)->t->name);
}

/* flops/bytes of task t when its task.json is still where the run found
 * it; a task that cannot be loaded stays "unknown", not an error. */
static void task_work(kevo_report__task *t, const task_index *idx, size_t n)
{
    kevo_memory_task key = {.name = t->tm->task};
    task_index kidx = {&key};
    const task_index *hit = bsearch(&kidx, idx, n, sizeof(*idx), cmp_mem_task);
    if (!hit || !hit->t->suite_path || !*hit->t->suite_path)
        return;
    kevo_task *task = NULL;
    double flops = 0, bytes = 0;
    if (kevo_task_load(&task, hit->t->suite_path) == 0 &&
        kevo_task_work(&flops, &bytes, task) == 0) {
        t->flops = isfinite(flops) && flops > 0 ? flops : 0;
        t->bytes = isfinite(bytes) && bytes > 0 ? bytes : 0;
    }
    kevo_task_free(task);
    kevo_error_clear();
}

/* flops/bytes of every solved task of every run. */
static int roofline_load(kevo_report__model *model, kevo_memory *mem)
{
    kevo_memory_task_array *all = NULL;
    task_index *idx = NULL;
    int error = kevo_memory_task_list(&all, mem);
    if (error < 0)
        goto done;
    idx = calloc(all->n + 1, sizeof(*idx));
    if (!idx) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < all->n; i++)
        idx[i].t = &all->tasks[i];
    qsort(idx, all->n, sizeof(*idx), cmp_mem_task);
    for (size_t r = 0; r < model->nruns; r++)
        for (size_t k = 0; k < model->runs[r].m->ntasks; k++) {
            kevo_report__task *t = &model->runs[r].tasks[k];
            if (t->tm->correct && t->tm->best_us > 0)
                task_work(t, idx, all->n);
        }
done:
    free(idx);
    kevo_memory_task_array_free(all);
    return error;
}

/* ---- used edges and learned Q ----------------------------------------- */

static int cmp_use(const void *a, const void *b)
{
    const kevo_report__use *x = a, *y = b;
    if (x->item != y->item)
        return x->item < y->item ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage - y->stage;
    return x->run - y->run;
}

size_t kevo_report__use_count(const kevo_report__model *model, int64_t item, kevo_stage stage,
                              size_t run)
{
    const kevo_report__use *keys = model->uses;
    size_t n = model->nuses;
    kevo_report__use k = {item, (int)stage, (int)run};
    size_t lo = 0, hi = n;
    while (lo < hi) { /* lower bound */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_use(&keys[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t c = 0;
    while (lo + c < n && cmp_use(&keys[lo + c], &k) == 0)
        c++;
    return c;
}

/* Append the used edges of attempt `id` of runs[r]. */
static int uses_add(kevo_report__model *model, size_t *cap, kevo_memory *mem, int64_t id, size_t r)
{
    kevo_used_item *used = NULL;
    size_t nused = 0;
    int error = kevo_memory_attempt_used(&used, &nused, mem, id);
    if (error < 0)
        goto done;
    if (model->nuses + nused > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < model->nuses + nused)
            c *= 2;
        kevo_report__use *p = realloc(model->uses, c * sizeof(*p));
        if (!p) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        model->uses = p;
        *cap = c;
    }
    for (size_t u = 0; u < nused; u++)
        model->uses[model->nuses++] =
            (kevo_report__use){used[u].item_id, (int)used[u].stage, (int)r};
done:
    free(used);
    return error;
}

static int uses_load(kevo_report__model *model, kevo_memory *mem)
{
    int error = 0;
    size_t cap = 0;
    for (size_t r = 0; r < model->nruns; r++) {
        const kevo_attempt_list *l = model->runs[r].list;
        for (size_t i = 0; i < l->n; i++)
            if ((error = uses_add(model, &cap, mem, l->attempts[i].id, r)) < 0)
                goto done;
    }
    if (model->nuses)
        qsort(model->uses, model->nuses, sizeof(*model->uses), cmp_use);
done:
    return error;
}

static int cmp_q_desc(const void *a, const void *b)
{
    const kevo_report__q_entry *x = a, *y = b;
    if (x->q != y->q)
        return x->q > y->q ? -1 : 1;
    if (x->updates != y->updates)
        return x->updates > y->updates ? -1 : 1;
    return x->item->id < y->item->id ? -1 : x->item->id > y->item->id;
}

/* Every item, and per stage those with a learned (updated, finite) Q. */
static int q_load(kevo_report__model *model, kevo_memory *mem)
{
    static const kevo_stage stages[2] = {KEVO_STAGE_DRAFT, KEVO_STAGE_REFINE};
    kevo_item_filter f = {.no_body = 1};
    int error = kevo_memory_item_list(&model->items, mem, &f);
    if (error < 0)
        goto done;
    const kevo_item_list *items = model->items;
    for (int s = 0; s < 2; s++) {
        kevo_report__q_stage *qs = &model->q[s];
        qs->stage = stages[s];
        qs->e = calloc(items->n + 1, sizeof(*qs->e));
        if (!qs->e) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < items->n; i++) {
            double q = 0;
            int64_t updates = 0;
            if ((error = kevo_memory_q_get(&q, &updates, mem, items->items[i].id, stages[s])) < 0)
                goto done;
            if (updates > 0 && isfinite(q))
                qs->e[qs->n++] = (kevo_report__q_entry){&items->items[i], q, updates};
        }
        qsort(qs->e, qs->n, sizeof(*qs->e), cmp_q_desc);
    }
done:
    return error;
}

/* ---- the model -------------------------------------------------------- */

void kevo_report__model_free(kevo_report__model *model)
{
    if (!model)
        return;
    if (model->runs)
        for (size_t r = 0; r < model->nruns; r++)
            run_clear(&model->runs[r]);
    free(model->runs);
    free(model->store_path);
    kevo_item_list_free(model->items);
    free(model->q[0].e);
    free(model->q[1].e);
    free(model->uses);
    free(model);
}

int kevo_report__model_load(kevo_report__model **out, kevo_memory *mem,
                            kevo_run_metrics *const *runs, size_t n)
{
    int error = 0;
    kevo_report__model *model = calloc(1, sizeof(*model));
    const char *path = kevo_memory_path(mem);
    *out = NULL;
    if (!model || !(model->runs = calloc(n + 1, sizeof(*model->runs))) ||
        !(model->store_path = kevo_strdup(path ? path : ""))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    model->nruns = n;
    for (size_t r = 0; r < n; r++)
        if ((error = run_load(&model->runs[r], mem, runs[r])) < 0)
            goto done;
    if ((error = roofline_load(model, mem)) < 0)
        goto done;
    /* no peaks is "n/a", not an error */
    model->have_peaks = kevo_peaks_load(&model->peaks) == 0;
    if ((error = uses_load(model, mem)) < 0 || (error = q_load(model, mem)) < 0)
        goto done;
    *out = model;
    model = NULL;
done:
    kevo_report__model_free(model);
    return error;
}
