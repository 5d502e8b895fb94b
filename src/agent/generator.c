/*
 * agent/generator.c - the generators behind one interface (internal.h):
 * the built-in draft (the backend's first draft from the reference), the
 * built-in refiner (recipes, builtin_gen.c) and the LLM generator
 * (llm_gen.c); which one proposes an iteration.
 * Must not: judge or record a candidate.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kevo_proposal_clear(kevo_proposal *p)
{
    free(p->source);
    free(p->failure);
    free(p->recipes_json);
    memset(p, 0, sizeof(*p));
}

/* Drafting: the built-in generator's first draft is the backend's, from
 * the task's reference (C: the reference itself; OpenCL: ported as is, one
 * work-item). No draft is a failed attempt, not a failed run. */
static int draft_propose(const kevo_generator *gen, kevo_attempt_state *st, kevo_proposal *out)
{
    const kevo_backend *be = kevo_backend_find(st->cfg->backend);
    const char *summary = "draft from the reference";
    if (!kevo_agent__builtin_supports(be))
        return kevo_error_set(KEVO_EINVAL, "the built-in generator has no draft for backend '%s'",
                              st->cfg->backend);
    if (be->draft(be, st->at->task, st->at->c_start, &out->source, &summary) < 0) {
        if (!(out->failure = strdup(kevo_error_last())))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        kevo_error_clear();
    }
    snprintf(out->summary, sizeof(out->summary), "%s", summary ? summary : "");
    return 0;
}

/* Refining with recipes: the transfer move first where it has one
 * (builtin_transfer.c), else one recipe; a proposal whose source was
 * already tried in this run is drawn again, up to six times. */
static int refine_propose(const kevo_generator *gen, kevo_attempt_state *st, kevo_proposal *out)
{
    int error = kevo_builtin__transfer(out, st->mem, st->at, st->start, st->cfg);
    if (error < 0)
        return error;
    if (error == 1 && !kevo_agent__seen(st, out->source))
        return 0;
    for (int tries = 0; tries < 6; tries++) {
        kevo_proposal_clear(out);
        if ((error = kevo_builtin_propose(out, st->mem, st->at, st->start->id, st->start->source,
                                          st->start->recipes_json, st->cfg, &st->rng)) < 0)
            return error;
        if (out->exhausted || !out->source || !kevo_agent__seen(st, out->source))
            break;
    }
    return 0;
}

static int llm_propose(const kevo_generator *gen, kevo_attempt_state *st, kevo_proposal *out)
{
    return kevo_llm_propose(out, st);
}

const kevo_generator kevo_generator_builtin_draft = {"builtin", draft_propose, true};
const kevo_generator kevo_generator_builtin_refine = {"builtin", refine_propose, true};
const kevo_generator kevo_generator_llm = {NULL, llm_propose, false};

const kevo_generator *kevo_agent__choose(kevo_attempt_state *st)
{
    const kevo_run_config *cfg = st->cfg;
    bool builtin = !st->prov || (st->start && cfg->refine_with_builtin > 0 &&
                                 kevo_rng_uniform(&st->rng) < cfg->refine_with_builtin);
    if (!builtin)
        return &kevo_generator_llm;
    return st->start ? &kevo_generator_builtin_refine : &kevo_generator_builtin_draft;
}
