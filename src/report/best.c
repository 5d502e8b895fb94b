/*
 * report/best.c - kevo_report_best_kernels(): per task of a run, its best
 * correct attempt (what `kevo best` writes out), chosen the way the
 * metrics and the HTML page choose a task's best kernel: the first attempt
 * in decision order with the highest speedup.
 *
 * Joins load.c's loaders (the run, its attempts, the tasks table) to a
 * choice made in memory; like api.c it calls no kevo_memory_* read itself
 * (no_store.h below makes sure) and never writes the store. It writes no
 * file either: that is the command's (src/cli/cmd_best.c).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "no_store.h"

void kevo_best_kernels_free(kevo_best_kernels *b)
{
    if (!b)
        return;
    free(b->per_task);
    kevo_attempt_list_free(b->list_);
    kevo_memory_task_array_free(b->tasks_);
    kevo_run_free(b->run);
    free(b);
}

static int cmp_task_by_name(const void *a, const void *b)
{
    const kevo_memory_task *x = *(const kevo_memory_task *const *)a;
    const kevo_memory_task *y = *(const kevo_memory_task *const *)b;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Each task's folder from the tasks table (NULL when the table does not
 * have the task, or has no folder for it). */
static int suite_paths_assign(kevo_best_kernels *b)
{
    const kevo_memory_task_array *all = b->tasks_;
    const kevo_memory_task **idx = calloc(all->n + 1, sizeof(*idx));
    if (!idx)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < all->n; i++)
        idx[i] = &all->tasks[i];
    qsort(idx, all->n, sizeof(*idx), cmp_task_by_name);
    for (size_t k = 0; k < b->ntasks; k++) {
        kevo_memory_task key = {.name = b->per_task[k].task};
        const kevo_memory_task *pkey = &key;
        const kevo_memory_task **hit = bsearch(&pkey, idx, all->n, sizeof(*idx), cmp_task_by_name);
        if (hit && (*hit)->suite_path && *(*hit)->suite_path)
            b->per_task[k].suite_path = (*hit)->suite_path;
    }
    free(idx);
    return 0;
}

/* The entry of task `name`, appended when new (tasks in the order they
 * first appear, as kevo_run_metrics.per_task). Linear: a run's tasks are
 * few next to its attempts' evaluation. */
static kevo_best_kernel *task_entry(kevo_best_kernels *b, const char *name)
{
    for (size_t k = b->ntasks; k-- > 0;)
        if (!strcmp(b->per_task[k].task, name))
            return &b->per_task[k];
    b->per_task[b->ntasks] = (kevo_best_kernel){.task = name};
    return &b->per_task[b->ntasks++];
}

static int choose_best(kevo_best_kernels *b)
{
    const kevo_attempt_list *list = b->list_;
    if (!(b->per_task = calloc(list->n + 1, sizeof(*b->per_task))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory choosing the best kernels");
    for (size_t i = 0; i < list->n; i++) {
        const kevo_attempt *a = &list->attempts[i];
        if (!a->task)
            continue;
        kevo_best_kernel *t = task_entry(b, a->task);
        if (a->verdict != KEVO_VERDICT_CORRECT)
            continue;
        /* strictly greater: the first of equal speedups stays */
        if (!t->attempt || a->speedup > t->attempt->speedup)
            t->attempt = a;
    }
    return 0;
}

int kevo_report_best_kernels(kevo_best_kernels **out, kevo_memory *mem, int64_t run_id)
{
    int error = 0;
    kevo_best_kernels *b = calloc(1, sizeof(*b));
    *out = NULL;
    if (!b) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if ((error = kevo_report__run_load(&b->run, &b->list_, &b->run_id, mem, run_id)) < 0 ||
        (error = kevo_report__tasks_load(&b->tasks_, mem)) < 0)
        goto done;
    if ((error = choose_best(b)) < 0 || (error = suite_paths_assign(b)) < 0)
        goto done;
    *out = b;
    b = NULL;
done:
    kevo_best_kernels_free(b);
    return error;
}
