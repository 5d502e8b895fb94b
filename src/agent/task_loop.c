/*
 * agent/task_loop.c - one task's iterations: load the task and its
 * reference, build the evaluator once, restore the state from the task's
 * recorded attempts (a resumed run continues at the iteration after the
 * last one), then one attempt per iteration, each from the start point the
 * one policy (kevo_context_start_point) picks; the observer hears when
 * the task starts, is skipped or is already complete. Must not: judge, or
 * pass the state along through the store.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The verifier's audit gate: EvoKernel's model-based auditor (App. C.2) on
 * a candidate that passed the static gate, before it is compiled. */
static int audit_gate(void *arg, const char *source, bool *valid, char **reason)
{
    kevo_attempt_state *st = arg;
    bool invalid = true;
    int error = kevo_llm_audit(&invalid, reason, st->prov, st->at, source, st->cfg,
                               st->audit_tokens);
    *valid = error == 0 && !invalid;
    return error;
}

/* The state from what was recorded for the task in this run: each
 * attempt as if it had just been made. */
static int restore(kevo_attempt_state *st, const kevo_attempt_list *done)
{
    int error = 0;
    for (size_t i = 0; i < done->n && error == 0; i++)
        error = kevo_agent__advance(st, &done->attempts[i]);
    return error;
}

static int upsert_task(kevo_memory *mem, const kevo_agent_task *at, const char *dir)
{
    kevo_memory_task mt = {.name = at->task->name,
                           .level = at->task->level,
                           .category = at->task->category,
                           .description = at->task->description,
                           .reference = at->reference,
                           .suite_path = dir};
    return kevo_memory_task_upsert(mem, &mt, NULL);
}

/* The id of the first attempt `f` lists (0: none): the task's draft, or
 * its fastest kernel, in this run. */
static int first_listed(int64_t *id, kevo_attempt_state *st, const kevo_attempt_filter *f)
{
    kevo_attempt_list *list = NULL;
    *id = 0;
    int error = kevo_memory_attempt_list(&list, st->mem, f);
    if (error == KEVO_ENOTFOUND) {
        kevo_error_clear();
        return 0;
    }
    if (error == 0 && list->n == 1)
        *id = list->attempts[0].id;
    kevo_attempt_list_free(list);
    return error;
}

/* What the open arms of attempt `a` promise (kevo_builtin_open_gain);
 * nothing when it has no source. */
static int ply_gain(kevo_ply_view *v, kevo_attempt_state *st, const kevo_attempt *a)
{
    *v = (kevo_ply_view){0};
    return !a->source ? 0
                      : kevo_builtin_open_gain(&v->gain, &v->novel, st->mem, st->at, a->id,
                                               a->source, a->recipes_json, st->cfg);
}

/* Attempt `id` (*out, NULL when it has no source) and what its open arms
 * promise (ply_gain). */
static int ply_view(kevo_ply_view *v, kevo_attempt **out, kevo_attempt_state *st, int64_t id)
{
    kevo_attempt *a = NULL;
    *v = (kevo_ply_view){0};
    *out = NULL;
    int error = kevo_memory_attempt_get(&a, st->mem, id);
    if (error == 0 && a->source && (error = ply_gain(v, st, a)) == 0) {
        *out = a;
        return 0;
    }
    kevo_attempt_free(a);
    return error;
}

bool kevo_agent__ply_novel_holds(kevo_ply_view draft, double ahead)
{
    return draft.gain > 0 && draft.novel && ahead < draft.gain;
}

kevo_ply kevo_agent__ply_pick(kevo_ply_view draft, kevo_ply_view best, double ahead)
{
    bool best_leads = best.gain > 0 && ahead >= KEVO_PLY_AHEAD && ahead * best.gain > draft.gain;
    if (draft.gain > 0 && (kevo_agent__ply_novel_holds(draft, ahead) || !best_leads))
        return KEVO_PLY_DRAFT;
    return best.gain > 0 ? KEVO_PLY_BEST : KEVO_PLY_NONE;
}

double kevo_agent__ply_ahead(double best_speedup, double draft_speedup, const char *draft_source,
                             const char *reference)
{
    if (draft_source && reference && !strcmp(draft_source, reference))
        draft_speedup = 1.0;
    return draft_speedup > 0 && best_speedup > 0 ? best_speedup / draft_speedup : 0;
}

/* The built-in generator's plies, before the start rule's pick: the task's
 * draft in this run or its fastest kernel, by kevo_agent__ply_pick. Decided
 * from the store alone, so a resumed run decides as the killed one would
 * have. */
static int plies(kevo_attempt_state *st)
{
    const kevo_run_config *cfg = st->cfg;
    kevo_attempt_filter f = {.run_id = st->run_id,
                             .task = st->at->task->name,
                             .backend = cfg->backend,
                             .correct_only = 1,
                             .stage = KEVO_STAGE_DRAFT,
                             .limit = 1,
                             .no_source = 1};
    int64_t draft = 0, best = 0;
    kevo_attempt *d = NULL, *b = NULL;
    kevo_ply_view dv = {0}, bv = {0};
    double ahead = 0;
    int error = first_listed(&draft, st, &f);
    if (error == 0 && draft)
        error = ply_view(&dv, &d, st, draft);
    f.stage = 0;
    f.best_first = 1;
    if (error == 0 && (error = first_listed(&best, st, &f)) == 0 && best && best != draft &&
        d && (error = kevo_memory_attempt_get(&b, st->mem, best)) == 0)
        ahead = kevo_agent__ply_ahead(b->speedup, d->speedup, d->source, st->at->reference);
    /* a draft whose novel arm holds the root ply (kevo_agent__ply_pick)
     * keeps it whatever the fastest kernel's arms promise: not weighed */
    if (error == 0 && b && !kevo_agent__ply_novel_holds(dv, ahead))
        error = ply_gain(&bv, st, b);
    kevo_ply pick = error < 0 ? KEVO_PLY_NONE : kevo_agent__ply_pick(dv, bv, ahead);
    kevo_attempt **taken = pick == KEVO_PLY_DRAFT ? &d : pick == KEVO_PLY_BEST ? &b : NULL;
    if (taken && *taken) {
        kevo_attempt_free(st->start);
        st->start = *taken;
        *taken = NULL;
    }
    kevo_attempt_free(d);
    kevo_attempt_free(b);
    return error;
}

/* This iteration's random source and start point (none when drafting, for
 * pass@k, or when the task has no correct kernel yet). */
static int begin_iteration(kevo_attempt_state *st, int it)
{
    const kevo_run_config *cfg = st->cfg;
    const char *name = st->at->task->name;
    uint64_t key[2] = {cfg->seed, (uint64_t)it};
    kevo_rng_seed(&st->rng, kevo_hash64(key, sizeof(key), kevo_hash64(name, strlen(name), 0)));
    st->iteration = it;
    kevo_attempt_free(st->start);
    st->start = NULL;
    if (st->prov && cfg->strategy == KEVO_STRATEGY_PASSK)
        return 0;
    kevo_start_query q = {.task = name,
                          .backend = cfg->backend,
                          .run_id = st->run_id,
                          .rule = st->derived->start_rule,
                          .epsilon = cfg->epsilon,
                          .q_init = cfg->q_init,
                          .climb = st->derived->start_climb};
    int error = kevo_context_start_point(&st->start, st->mem, &q, &st->rng);
    if (error == KEVO_ENOTFOUND) {
        kevo_error_clear();
        return 0;
    }
    if (error == 0 && st->derived->start_plies && !st->prov)
        error = plies(st);
    return error;
}

int kevo_agent__run_task(bool *worked, kevo_memory *mem, kevo_provider *prov, int64_t run,
                         const char *dir, const char *suite_path, size_t index, size_t total,
                         const kevo_run_config *cfg)
{
    *worked = false;
    kevo_agent_task at = {0};
    kevo_evaluator *ev = NULL;
    kevo_attempt_list *done_list = NULL;
    kevo_derived derived;
    kevo_agent__derive(&derived, cfg);
    kevo_attempt_state st = {.mem = mem, .at = &at, .cfg = cfg, .derived = &derived,
                             .prov = prov, .run_id = run};
    kevo_run_event event = {.run_id = run, .index = index, .total = total, .task_dir = dir,
                         .iterations = cfg->iterations};
    int error = 0;
    if ((error = kevo_task_load(&at.task, dir)) < 0 ||
        (error = kevo_file_read(&at.reference, NULL, at.task->reference_path)) < 0 ||
        (at.task->draft_path && (error = kevo_file_read(&at.draft, NULL,
                                                        at.task->draft_path)) < 0))
        goto done;
    at.c_start = at.task->torch ? at.draft : at.reference;
    event.task = at.task->name;
    if (!prov && !at.c_start) {
        /* the built-in generator transforms C; a PyTorch module is none */
        event.kind = KEVO_RUN_EVENT_TASK_SKIPPED;
        event.message = "a PyTorch-defined task without a C draft (task.json \"draft\"); the "
                     "built-in generator needs one (an LLM generator does not)";
        kevo_agent__emit(cfg, &event);
        goto done;
    }
    if ((error = upsert_task(mem, &at, suite_path)) < 0 ||
        (error = kevo_memory_attempts_of_task(&done_list, mem, at.task->name, run)) < 0)
        goto done;
    if (run) {
        kevo_run *r = NULL;
        if ((error = kevo_memory_run_get(&r, mem, run)) < 0)
            goto done;
        snprintf(st.run_uid, sizeof(st.run_uid), "%s", r->uid ? r->uid : "");
        kevo_run_free(r);
    }
    int first = (int)done_list->n;
    if (first >= cfg->iterations) {
        event.kind = KEVO_RUN_EVENT_TASK_COMPLETE;
        event.attempts = first;
        kevo_agent__emit(cfg, &event);
        goto done;
    }
    *worked = true;
    if (prov && derived.audit) {
        derived.eval.audit = audit_gate;
        derived.eval.audit_arg = &st;
    }
    /* said before the evaluator builds the reference, which takes a while */
    event.kind = KEVO_RUN_EVENT_TASK_STARTED;
    event.first_iteration = first;
    kevo_agent__emit(cfg, &event);
    if ((error = kevo_evaluator_new(&ev, at.task, &derived.eval)) < 0 ||
        (error = restore(&st, done_list)) < 0)
        goto done;
    for (int it = first; it < cfg->iterations && error == 0; it++) {
        if (cfg->stop && *cfg->stop)
            error = KEVO_EINTR;
        else if ((error = begin_iteration(&st, it)) == 0)
            error = kevo_agent__attempt(&st, ev, index, total);
    }
done:
    kevo_attempt_free(st.start);
    kevo_agent__turns_free(&st);
    kevo_attempt_list_free(done_list);
    kevo_evaluator_free(ev);
    kevo_task_free(at.task);
    free(at.reference);
    free(at.draft);
    return error;
}
