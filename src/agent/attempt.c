/*
 * agent/attempt.c - one attempt, one pass: propose (a generator) -> judge
 * (the verifier's gates; on LLM runs the model-based auditor is one of
 * them, between the static gate and the compile: task_loop.c) ->
 * record (the attempt, its edges, reward and Q updates in one transaction,
 * plus a reflection item when asked for) -> the state moves on; the run's
 * observer hears of each phase and of the outcome (events.c). Must not:
 * choose a start point (kevo_context_start_point) or read back from the
 * store what it has just written.
 */
#include "internal.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the judge concluded. `a` points into the strings below, the
 * proposal and the state; judged_clear() frees only what is here. */
typedef struct judged {
    kevo_attempt a;
    kevo_eval_result r;
    char *gates;         /* the gates array as JSON */
    char *lesson;        /* the reflection */
    int64_t extra[2];    /* reflection tokens */
} judged;

static void judged_clear(judged *j)
{
    kevo_eval_result_clear(&j->r);
    free(j->gates);
    free(j->lesson);
    memset(j, 0, sizeof(*j));
}

/* The gates. A proposal without a candidate is a compile_error without
 * running any. */
static int judge_gates(judged *j, const kevo_attempt_state *st, kevo_evaluator *ev,
                       const kevo_proposal *p)
{
    kevo_attempt *a = &j->a;
    if (p->exhausted) {
        a->verdict = KEVO_VERDICT_COMPILE_ERROR;
        a->feedback = "no recipe applies to this start point";
        a->source = st->start ? st->start->source
                    : st->at->c_start ? st->at->c_start : st->at->reference;
        return 0;
    }
    if (!p->source) {
        a->verdict = KEVO_VERDICT_COMPILE_ERROR;
        a->feedback = p->failure ? p->failure : "the generator produced no candidate";
        a->source = "";
        return 0;
    }
    int error = kevo_evaluator_eval(ev, p->source, &j->r);
    if (error < 0)
        return error;
    a->verdict = j->r.verdict;
    a->feedback = j->r.feedback;
    a->source = p->source;
    if ((error = kevo_eval_result_gates_json(&j->gates, &j->r)) < 0)
        return error;
    a->gates_json = j->gates;
    if (j->r.has_latency) {
        a->candidate_us = j->r.latency.candidate_us;
        a->reference_us = j->r.latency.reference_us;
        a->speedup = j->r.latency.speedup;
        a->baseline = j->r.latency.baseline;
    }
    return 0;
}

/* The machine that measures here (its id goes with every attempt). */
static kevo_machine this_machine;
static pthread_once_t this_machine_once = PTHREAD_ONCE_INIT;
static void read_this_machine(void)
{
    kevo_machine_get(&this_machine);
}

/* A stable uid for this run's attempt at this iteration of the task on the
 * backend: 32 hex digits from the run's uid (unique across stores) and
 * those three, so that recording it again is a no-op. */
static void attempt_uid(char *out, size_t cap, const kevo_attempt_state *st)
{
    char key[512];
    int n = snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%d", st->run_uid, st->at->task->name,
                     st->cfg->backend, st->iteration);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof(key) ? (size_t)n : sizeof(key) - 1;
    uint64_t h1 = kevo_hash64(key, len, 0x6b65766f61747431ull);
    uint64_t h2 = kevo_hash64(key, len, h1 ^ 0x9e3779b97f4a7c15ull);
    snprintf(out, cap, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

/* Record the attempt (one transaction) and, when there is one, the
 * reflection on it as an experience item distilled from it (not when the
 * attempt's uid was recorded before: the reflection was too). */
static int record(const judged *j, kevo_attempt_state *st, const kevo_proposal *p)
{
    int64_t id = 0;
    int error = kevo_memory_attempt_record(st->mem, &j->a, p->used, p->nused,
                                           &st->derived->learn, &id);
    if (error < 0 || error == KEVO_MEMORY_RECORDED_BEFORE || !j->lesson)
        return error < 0 ? error : 0;
    const kevo_task *t = st->at->task;
    char title[160];
    snprintf(title, sizeof(title), "reflection on %s, iteration %d (%s)", t->name,
             st->iteration + 1, kevo_verdict_name(j->a.verdict));
    kevo_item item = {.kind = KEVO_ITEM_EXPERIENCE,
                      .title = title,
                      .body = j->lesson,
                      .category = t->category,
                      .task = t->name,
                      .backend = st->cfg->backend,
                      .tags = "reflection"};
    return kevo_memory_item_add_distilled(st->mem, &item, id, NULL);
}

int kevo_agent__advance(kevo_attempt_state *st, const kevo_attempt *a)
{
    if (a->speedup > st->best)
        st->best = a->speedup;
    return kevo_agent__turn_add(st, a);
}

/* The attempt's event: a phase (finished false) or its outcome. */
static void emit_attempt(const kevo_attempt_state *st, size_t index, size_t total,
                         kevo_attempt_phase phase, const judged *j, const kevo_proposal *p)
{
    kevo_run_event ev = {.kind = j ? KEVO_RUN_EVENT_ATTEMPT_FINISHED : KEVO_RUN_EVENT_ATTEMPT_PHASE,
                         .run_id = st->run_id,
                         .index = index,
                         .total = total,
                         .task = st->at->task->name,
                         .task_dir = st->at->task->dir,
                         .iterations = st->cfg->iterations,
                         .iteration = st->iteration,
                         .stage = st->start ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                         .phase = phase,
                         .best = st->best};
    if (j) {
        ev.stage = j->a.stage;
        ev.summary = p->summary;
        ev.verdict = j->a.verdict;
        ev.speedup = j->a.speedup;
    }
    kevo_agent__emit(st->cfg, &ev);
}

int kevo_agent__attempt(kevo_attempt_state *st, kevo_evaluator *ev, size_t index, size_t total)
{
    kevo_proposal p = {0};
    judged j = {0};
    const kevo_generator *gen = kevo_agent__choose(st);
    emit_attempt(st, index, total, KEVO_ATTEMPT_PROPOSING, NULL, NULL);
    if (gen->computes)
        kevo_verify_busy_begin();
    int error = gen->propose(gen, st, &p);
    if (gen->computes)
        kevo_verify_busy_end();
    if (error < 0)
        goto done;
    kevo_attempt *a = &j.a;
    a->run_id = st->run_id;
    a->task = st->at->task->name;
    a->backend = st->cfg->backend;
    a->generator = gen->name ? gen->name : st->cfg->generator;
    a->iteration = st->iteration;
    a->stage = st->start ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT;
    a->parent_id = st->start ? st->start->id : 0;
    a->recipes_json = p.recipes_json;
    pthread_once(&this_machine_once, read_this_machine);
    a->machine = this_machine.id;
    char uid[40];
    if (st->run_uid[0]) {
        attempt_uid(uid, sizeof(uid), st);
        a->uid = uid;
    }
    st->audit_tokens[0] = st->audit_tokens[1] = 0;
    emit_attempt(st, index, total, KEVO_ATTEMPT_VERIFYING, NULL, NULL);
    if ((error = judge_gates(&j, st, ev, &p)) < 0)
        goto done;
    if (st->prov && st->cfg->reflect && p.source &&
        (error = kevo_llm_reflect(&j.lesson, st->prov, st->at, p.source,
                                  kevo_verdict_name(a->verdict), a->feedback, st->cfg,
                                  j.extra)) < 0)
        goto done;
    a->tokens_prompt = p.tokens_prompt + j.extra[0] + st->audit_tokens[0];
    a->tokens_completion = p.tokens_completion + j.extra[1] + st->audit_tokens[1];
    a->tokens_estimated = p.tokens_estimated;
    if ((error = record(&j, st, &p)) < 0 || (error = kevo_agent__advance(st, a)) < 0)
        goto done;
    emit_attempt(st, index, total, KEVO_ATTEMPT_VERIFYING, &j, &p);
done:
    judged_clear(&j);
    kevo_proposal_clear(&p);
    return error;
}
