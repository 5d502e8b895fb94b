/*
 * agent/turns.c - the attempt state's turns: the task's attempts in this
 * run, oldest first. They answer which sources were already tried, what the
 * last feedback was, and hold the refinement baseline's conversation. Must
 * not: read the store (a resumed run replays its attempts into them).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

bool kevo_agent__seen(const kevo_attempt_state *st, const char *source)
{
    for (size_t i = 0; i < st->nturns; i++)
        if (!strcmp(st->turns[i].source, source))
            return true;
    return false;
}

const char *kevo_agent__last_feedback(const kevo_attempt_state *st)
{
    const char *fb = st->nturns ? st->turns[st->nturns - 1].feedback : NULL;
    return fb && *fb ? fb : NULL;
}

int kevo_agent__turn_add(kevo_attempt_state *st, const kevo_attempt *a)
{
    struct kevo_turn *v = realloc(st->turns, (st->nturns + 1) * sizeof(*v));
    if (!v)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    st->turns = v;
    struct kevo_turn *t = &v[st->nturns];
    t->source = strdup(a->source ? a->source : "");
    t->feedback = strdup(a->feedback ? a->feedback : "");
    t->verdict = a->verdict;
    t->speedup = a->speedup;
    if (!t->source || !t->feedback) {
        free(t->source);
        free(t->feedback);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    st->nturns++;
    return 0;
}

void kevo_agent__turns_free(kevo_attempt_state *st)
{
    for (size_t i = 0; i < st->nturns; i++) {
        free(st->turns[i].source);
        free(st->turns[i].feedback);
    }
    free(st->turns);
    st->turns = NULL;
    st->nturns = 0;
}
