/*
 * context/internal.h - the pieces of context assembly that are tested on
 * their own: token-budgeted packing of sections, epsilon-greedy selection
 * and the scan of code for API identifiers. Internal to src/context.
 */
#ifndef KEVO_CONTEXT_INTERNAL_H
#define KEVO_CONTEXT_INTERNAL_H

#include "kevo/context.h"

/* ---- packing (pack.c) ---- */

typedef struct kevo_pack {
    int budget;      /* hard limit over all sections */
    int total;       /* tokens used so far */
    double bpt_code; /* bytes per token */
    double bpt_prose;
    int min_cut; /* an item is cut only if at least this many tokens remain */
} kevo_pack;

typedef struct kevo_pack_section {
    const char *title; /* heading, written before the first part */
    kevo_buf text;
    int tokens; /* heading and parts */
    int cap;    /* tokens this section may take */
} kevo_pack_section;

/* Append one part (`len` bytes of `text`) to section `s`, estimated as code
 * or prose. Both the section's cap and the pack's budget bind. When it does
 * not fit and `can_cut`, the part is cut to fit and ends with a
 * "[... cut ...]" marker. Returns the tokens the part took (> 0), 0 when it
 * was left out, or a negative error. */
int kevo_pack_add(kevo_pack *p, kevo_pack_section *s, const char *text, size_t len, int is_code,
                  int can_cut);

/* ---- selection (select.c) ---- */

/* Choose up to k of n candidates: for each pick, with probability eps a
 * uniformly random remaining candidate, otherwise the remaining one with
 * the highest q (ties: the lowest index, so callers order candidates by
 * their tie-break, e.g. similarity). Writes the chosen indexes in pick
 * order to out (room for k) and returns how many. */
size_t kevo_select_egreedy(size_t *out, const double *q, size_t n, size_t k, double eps,
                           kevo_rng *rng);

/* ---- identifiers (select.c) ---- */

/* Distinct C identifiers of >= 3 characters in `code` that are not C
 * keywords or basic types, in order of appearance, at most `max`. Each
 * string is malloc'd; free with kevo_identifiers_free(). */
int kevo_identifiers_scan(char ***out, size_t *out_n, const char *code, size_t max);
void kevo_identifiers_free(char **ids, size_t n);

#endif
