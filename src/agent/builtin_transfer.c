/*
 * agent/builtin_transfer.c - the built-in generator's transfer move: the
 * first refinement of a task's draft replays, on the draft, the recipe
 * chain of the fastest kernel of the most similar task of the same
 * category that the memory holds (EvoKernel's drafting from retrieved
 * experience, for an offline generator whose only experience is recipe
 * chains). One attempt reaches a stack of steps (register_block, then
 * omp_parallel, then flags) that one step per attempt reaches in three or
 * more, when the search draws them in that order at all; what follows
 * (retunes, further arms) starts from it as from any kernel.
 * Similar: the memory's BM25 ranking of the task's name and description
 * among the tasks of its category (the rest of the category after them);
 * the first three whose fastest kernels carry a chain of two steps or more
 * are tried in that order, and the first that applies to the draft, step
 * by step with every recipe's own checks, is the candidate. It uses no
 * arm item (its reward is the chain's, not one recipe's) and is made once
 * per draft: only while nothing has been tried from it.
 * Must not: copy anything but recipe names and parameters from another
 * task (its kernel text never reaches this one).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRANSFER_SEARCH 50 /* similar tasks read from the memory's ranking */
#define TRANSFER_TRIES 3   /* chains replayed on the draft at most */

/* One chain another task's fastest kernel carries. */
typedef struct donor {
    char *task;
    char *chain; /* JSON */
    double speedup;
} donor;

typedef struct donors {
    donor v[TRANSFER_TRIES];
    size_t n;
} donors;

static void donors_clear(donors *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->v[i].task);
        free(d->v[i].chain);
    }
    d->n = 0;
}

static bool same_text(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

/* Steps in a recorded chain (0 when unreadable). */
static size_t chain_steps(const char *json)
{
    kevo_recipe_step *steps = NULL;
    size_t n = 0;
    if (!json || !*json || kevo_recipe_chain_from_json(&steps, &n, json) < 0) {
        kevo_error_clear();
        return 0;
    }
    kevo_recipe_chain_free(steps);
    return n;
}

/* Task `name`'s fastest kernel on the backend, when its chain has two
 * steps or more and no donor has that chain yet: a donor. */
static int consider(donors *d, kevo_memory *mem, const char *name, const char *backend)
{
    kevo_attempt *best = NULL;
    int error = kevo_memory_attempt_best(&best, mem, name, 0, backend);
    if (error == KEVO_ENOTFOUND) {
        kevo_error_clear();
        return 0;
    }
    if (error < 0)
        return error;
    bool keep = best->speedup > 0 && chain_steps(best->recipes_json) >= 2;
    for (size_t i = 0; keep && i < d->n; i++)
        keep = !same_text(d->v[i].chain, best->recipes_json);
    if (keep) {
        donor *o = &d->v[d->n];
        o->task = strdup(name);
        o->chain = strdup(best->recipes_json);
        o->speedup = best->speedup;
        if (!o->task || !o->chain) {
            free(o->task);
            free(o->chain);
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        } else {
            d->n++;
        }
    }
    kevo_attempt_free(best);
    return error;
}

/* Whether `name` is a task of `category` other than `self`, not yet seen
 * (`seen`: the names considered so far, newline-separated). */
static bool candidate(const kevo_memory_task *t, const char *self, const char *category,
                      kevo_buf *seen)
{
    if (!t->name || !strcmp(t->name, self) || !same_text(t->category, category) ||
        kevo_agent__listed(seen->ptr, t->name))
        return false;
    kevo_buf_printf(seen, "%s\n", t->name);
    return true;
}

/* The donors, most similar first: the category's tasks in the memory's
 * ranking for this task's name and description, then the others. */
static int find_donors(donors *d, kevo_memory *mem, const kevo_task *task, const char *backend)
{
    int error = 0;
    kevo_buf query = {0}, seen = {0};
    kevo_memory_task_array *ranked = NULL, *all = NULL;
    kevo_buf_printf(&query, "%s %s %s", task->name, task->category,
                    task->description ? task->description : "");
    for (char *c = query.ptr; c && *c; c++)
        if (*c == '_')
            *c = ' ';
    error = kevo_memory_task_search(&ranked, mem, query.ptr, TRANSFER_SEARCH);
    for (size_t i = 0; error == 0 && ranked && i < ranked->n && d->n < TRANSFER_TRIES; i++)
        if (candidate(&ranked->tasks[i], task->name, task->category, &seen))
            error = consider(d, mem, ranked->tasks[i].name, backend);
    if (error == 0 && d->n < TRANSFER_TRIES)
        error = kevo_memory_task_list(&all, mem);
    for (size_t i = 0; error == 0 && all && i < all->n && d->n < TRANSFER_TRIES; i++)
        if (candidate(&all->tasks[i], task->name, task->category, &seen))
            error = consider(d, mem, all->tasks[i].name, backend);
    if (error == KEVO_ENOTFOUND) {
        kevo_error_clear();
        error = 0;
    }
    kevo_memory_task_array_free(ranked);
    kevo_memory_task_array_free(all);
    kevo_buf_free(&query);
    kevo_buf_free(&seen);
    return error;
}

/* Whether anything was tried from attempt `id`. */
static int tried_from(bool *tried, kevo_memory *mem, int64_t id)
{
    kevo_attempt_list *kids = NULL;
    int error = kevo_memory_attempt_children(&kids, mem, id);
    *tried = error == 0 && kids->n > 0;
    kevo_attempt_list_free(kids);
    if (error == KEVO_ENOTFOUND) {
        kevo_error_clear();
        error = 0;
    }
    return error;
}

int kevo_builtin__transfer(kevo_proposal *out, kevo_memory *mem, const kevo_agent_task *at,
                           const kevo_attempt *start, const kevo_run_config *cfg)
{
    const kevo_task *task = at->task;
    if (!mem || !cfg->memory || cfg->retrieval != KEVO_RETRIEVAL_VALUE ||
        cfg->strategy != KEVO_STRATEGY_EVO || !start || start->stage != KEVO_STAGE_DRAFT ||
        !start->source || chain_steps(start->recipes_json) != 0 || !task->category)
        return 0;
    bool tried = false;
    int error = tried_from(&tried, mem, start->id);
    if (error < 0 || tried)
        return error;
    donors d = {0};
    if ((error = find_donors(&d, mem, task, cfg->backend)) < 0)
        goto done;
    for (size_t i = 0; i < d.n; i++) {
        kevo_recipe_step *steps = NULL;
        size_t n = 0;
        char *src = NULL;
        if (kevo_recipe_chain_from_json(&steps, &n, d.v[i].chain) < 0 ||
            kevo_recipe_apply_chain(&src, steps, n, start->source, task->name) < 0 ||
            !strcmp(src, start->source)) {
            kevo_error_clear(); /* a step that does not apply here: the next donor */
            kevo_recipe_chain_free(steps);
            free(src);
            continue;
        }
        error = kevo_recipe_chain_to_json(&out->recipes_json, steps, n);
        kevo_recipe_chain_free(steps);
        if (error < 0) {
            free(src);
            goto done;
        }
        out->source = src;
        snprintf(out->summary, sizeof(out->summary), "transfer: %s's chain (%.2fx there)",
                 d.v[i].task, d.v[i].speedup);
        error = 1;
        goto done;
    }
done:
    donors_clear(&d);
    return error;
}
