/*
 * recipe/private.c - scratch buffers private to each iteration of a loop.
 *
 * The suite's references keep a row of partial results in a buffer they
 * allocate once, before the loop over rows (logsumexp's running sums,
 * argmax's best values, rmsnorm's squares, attention's probabilities):
 *
 *     float *sum = malloc((size_t)E * sizeof(float));
 *     for (int64_t b = 0; b < B; b++) {          // L
 *         for (int64_t e = 0; e < E; e++)         // F: fills sum[0..E)
 *             sum[e] = 0.0f;
 *         for (int64_t d = 0; d < D; d++)
 *             for (int64_t e = 0; e < E; e++)     // reads sum[0..E) again
 *                 sum[e] += expf(...);
 *         ...
 *     }
 *
 * Every iteration of L writes the elements it reads before reading them,
 * so what one iteration leaves in the buffer is never seen by the next:
 * each thread can run its iterations on a buffer of its own
 * (omp_parallel). kevo_recipe_private_buffers() finds such buffers, by
 * these rules (each a decline naming the line):
 *   - the buffer is a pointer declared at the kernel's top level before L,
 *     `T *v = [cast] malloc(...)` or `calloc(...)`, one declarator, whose
 *     size reads only variables nothing writes between it and L, and calls
 *     nothing else; the pointer is never assigned or its address taken;
 *   - outside L it is only tested (`!v`) before L and freed (`free(v)`)
 *     after it: nothing reads what the last iteration left;
 *   - inside L every use is `v[u]`, u the variable of a loop inside L;
 *   - the first use in L is a store `v[u] = e;` (e not reading v) at the
 *     top level of the body of a loop F that stands at the top level of
 *     L's body (no condition, no `continue` before the store, no early
 *     exit): each iteration of L writes v[A..X) first, F's bounds A..X;
 *   - every other use is in F indexed by F's variable, or after F indexed
 *     by the variable of a loop with F's bounds, text for text (and
 *     nothing in L writes what those bounds read): it touches only
 *     elements this iteration of L has written already.
 * Must not: edit text.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Brace depth of token t below the kernel body's `{` (0: its top level). */
static int depth_at(const kevo_recipe_model *m, unsigned t)
{
    int depth = 0;
    for (unsigned u = m->t_fbody + 1; u < t && u < m->n_tok; u++) {
        if (kevo_rtok_is(m, u, "{"))
            depth++;
        else if (kevo_rtok_is(m, u, "}"))
            depth--;
    }
    return depth;
}

/* Whether t starts a statement that nothing before it conditions: the
 * token before it closes one (`;`, `}`) or opens a block (`{`). */
static bool plain_statement(const kevo_recipe_model *m, unsigned t)
{
    return t > 0 && (kevo_rtok_is(m, t - 1, ";") || kevo_rtok_is(m, t - 1, "{") ||
                     kevo_rtok_is(m, t - 1, "}"));
}

/* The loop inside L (r) whose variable is var and which holds token t, or -1. */
static int index_loop(const kevo_recipe_model *m, int r, int var, unsigned t)
{
    for (int k = kevo_recipe_loop_of(m, t); k >= 0 && k != r; k = m->loop[k].parent)
        if (m->loop[k].var == var)
            return k;
    return -1;
}

/* Whether loops a and b have the same bounds, text for text. */
static bool same_bounds(const kevo_recipe_model *m, const kevo_rloop *a, const kevo_rloop *b)
{
    return a->simple && b->simple && a->cond_op == b->cond_op &&
           kevo_rtok_same(m, a->t_lb0, a->t_lb1, b->t_lb0, b->t_lb1) &&
           kevo_rtok_same(m, a->t_ub0, a->t_ub1, b->t_ub0, b->t_ub1);
}

/* Whether any write in w[0..nw) assigns a variable named in tokens [a, b). */
static bool reads_written(const kevo_recipe_model *m, unsigned a, unsigned b, const kevo_rwrite *w,
                          size_t nw)
{
    for (unsigned t = a; t < b; t++)
        for (size_t i = 0; i < nw; i++)
            if (m->tok[t].var >= 0 && w[i].kind == KEVO_WRITE_SCALAR && w[i].var == m->tok[t].var)
                return true;
    return false;
}

/* The initialiser [*i0, *i1) of v's declaration at d when it is `[cast]
 * malloc(...)` or `calloc(...)`, the declaration's only declarator. */
static bool allocation(const kevo_recipe_model *m, unsigned d, unsigned *i0, unsigned *i1)
{
    if (!kevo_rtok_is(m, d + 1, "="))
        return false;
    *i0 = d + 2;
    *i1 = kevo_recipe_expr_end(m, *i0, (unsigned)m->n_tok);
    if (*i1 >= m->n_tok || !kevo_rtok_is(m, *i1, ";"))
        return false;
    unsigned t = *i0;
    if (kevo_rtok_is(m, t, "(")) { /* a cast */
        unsigned c = kevo_rtok_match(m, t);
        if (c == (unsigned)-1)
            return false;
        t = c + 1;
    }
    if (!(kevo_rtok_is(m, t, "malloc") || kevo_rtok_is(m, t, "calloc")) ||
        !kevo_rtok_is(m, t + 1, "("))
        return false;
    unsigned c = kevo_rtok_match(m, t + 1);
    if (c == (unsigned)-1 || c + 1 != *i1)
        return false;
    /* no other call in the size */
    for (unsigned u = t + 2; u < c; u++)
        if (m->tok[u].kind == KEVO_CTOK_IDENT && m->tok[u].var < 0 &&
            kevo_rtok_is(m, u + 1, "("))
            return false;
    return true;
}

/* Whether buffer v is private to the iterations of loop r; *why otherwise. */
/* w[0..nw): the writes of loop r; all[0..nall): the kernel's. */
static bool private_buffer(kevo_rprivate *out, const kevo_recipe_model *m, int r, int v,
                           const kevo_rwrite *w, size_t nw, const kevo_rwrite *all, size_t nall,
                           char *why, size_t why_size)
{
    const kevo_rloop *L = &m->loop[r];
    const char *name = m->var[v].name;
    unsigned d = kevo_recipe_decl_token(m, v);
    unsigned i0 = 0, i1 = 0;
    if (d == (unsigned)-1 || d >= L->t_for || depth_at(m, d) != 0 || kevo_recipe_loop_of(m, d) >= 0 ||
        m->var[v].vtype != KEVO_VTYPE_POINTER || m->var[v].is_param ||
        !allocation(m, d, &i0, &i1)) {
        snprintf(why, why_size,
                 "'%s' is not a buffer the kernel allocates before the loop at line %u "
                 "(`T *%s = malloc(...);` at its top level)",
                 name, L->line, name);
        return false;
    }
    for (size_t i = 0; i < nall; i++)
        if (all[i].kind == KEVO_WRITE_SCALAR && all[i].var == v) {
            snprintf(why, why_size, "'%s' is assigned at line %u", name,
                     kevo_recipe_line(m, m->tok[all[i].t_op].start));
            return false;
        }
    /* the size reads the same values at L as at the declaration */
    for (unsigned t = i0; t < i1; t++)
        for (size_t i = 0; i < nall; i++)
            if (m->tok[t].var >= 0 && all[i].kind == KEVO_WRITE_SCALAR &&
                all[i].var == m->tok[t].var && all[i].t_op > i1 && all[i].t_op < L->t_end) {
                snprintf(why, why_size, "the size of '%s' reads '%s', written at line %u", name,
                         m->var[m->tok[t].var].name,
                         kevo_recipe_line(m, m->tok[all[i].t_op].start));
                return false;
            }

    /* F: the loop of the first use in L */
    int f = -1;
    unsigned first = (unsigned)-1;
    for (unsigned t = d + 1; t < m->n_tok; t++) {
        if (m->tok[t].var != v)
            continue;
        unsigned line = kevo_recipe_line(m, m->tok[t].start);
        bool inside = t >= L->t_for && t < L->t_end;
        if (!inside) {
            bool tested = t < L->t_for && kevo_rtok_is(m, t - 1, "!");
            bool freed = t >= L->t_end && kevo_rtok_is(m, t - 2, "free") &&
                         kevo_rtok_is(m, t - 1, "(") && kevo_rtok_is(m, t + 1, ")");
            if (!tested && !freed) {
                snprintf(why, why_size,
                         "'%s' is used at line %u outside the loop at line %u (only `!%s` before "
                         "it and `free(%s)` after it keep it private)",
                         name, line, L->line, name, name);
                return false;
            }
            continue;
        }
        int u = kevo_rtok_is(m, t + 1, "[") ? m->tok[t + 2].var : -1;
        int k = u >= 0 && kevo_rtok_is(m, t + 3, "]") ? index_loop(m, r, u, t) : -1;
        if (k < 0) {
            snprintf(why, why_size,
                     "'%s' at line %u is not indexed by the variable of a loop inside the one at "
                     "line %u",
                     name, line, L->line);
            return false;
        }
        const kevo_rloop *K = &m->loop[k];
        if (f < 0) {
            /* the first use: a plain store at the top of F's body, F at
             * the top of L's body */
            const kevo_rloop *F = K;
            bool ok = F->parent == r && F->simple && !F->early_exit &&
                      plain_statement(m, F->t_for) && kevo_recipe_loop_of(m, t) == k &&
                      ((t == F->t_body && !F->body_compound) || plain_statement(m, t)) &&
                      kevo_rtok_is(m, t + 4, "=") &&
                      depth_at(m, F->t_for) + (F->body_compound ? 1 : 0) == depth_at(m, t);
            for (unsigned b = F->t_body; ok && b < t; b++)
                ok = !kevo_rtok_is(m, b, "continue");
            unsigned e = ok ? kevo_recipe_expr_end(m, t + 5, F->t_end) : t;
            ok = ok && e < F->t_end && !kevo_recipe_uses_var(m, t + 5, e, v);
            if (!ok) {
                snprintf(why, why_size,
                         "the first use of '%s' in the loop at line %u (line %u) is not a store "
                         "`%s[i] = ...;` that every iteration of a loop at the top of its body "
                         "makes first",
                         name, L->line, line, name);
                return false;
            }
            f = k;
            first = t;
            continue;
        }
        const kevo_rloop *F = &m->loop[f];
        bool in_f = t >= F->t_for && t < F->t_end;
        bool ok = in_f ? k == f : (K->t_for >= F->t_end && same_bounds(m, K, F));
        if (!ok) {
            snprintf(why, why_size,
                     "'%s' at line %u may read an element the store at line %u has not written "
                     "in this iteration (its loop does not have the bounds of the loop at line "
                     "%u)",
                     name, line, kevo_recipe_line(m, m->tok[first].start), F->line);
            return false;
        }
    }
    if (f < 0) {
        snprintf(why, why_size, "'%s' is not used in the loop at line %u", name, L->line);
        return false;
    }
    const kevo_rloop *F = &m->loop[f];
    if (reads_written(m, F->t_lb0, F->t_lb1, w, nw) || reads_written(m, F->t_ub0, F->t_ub1, w, nw)) {
        snprintf(why, why_size, "the bounds of the loop at line %u that fills '%s' change in the "
                                "loop at line %u",
                 F->line, name, L->line);
        return false;
    }
    out->var = v;
    out->t_decl = d;
    out->t_init0 = i0;
    out->t_init1 = i1;
    return true;
}

int kevo_recipe_private_buffers(kevo_rprivate *out, size_t max, size_t *n,
                                const kevo_recipe_model *m, int r, char *why, size_t why_size)
{
    const kevo_rloop *L = &m->loop[r];
    kevo_rwrite *w = NULL, *all = NULL;
    size_t nw = 0, nall = 0;
    int error = 0;
    *n = 0;
    why[0] = '\0';
    if ((error = kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end)) < 0 ||
        (error = kevo_recipe_writes(&all, &nall, m, m->t_fbody, (unsigned)m->n_tok)) < 0)
        goto done;
    for (size_t i = 0; i < nw; i++) {
        int v = w[i].var;
        if (w[i].kind != KEVO_WRITE_ELEMENT || v < 0 || kevo_recipe_declared_in(m, v, L->t_for, L->t_end) ||
            m->var[v].vtype != KEVO_VTYPE_POINTER || kevo_recipe_root_param(m, v) >= 0)
            continue; /* a kernel buffer, or the loop's own: not a candidate */
        bool seen = false; /* judged at an earlier store */
        for (size_t k = 0; k < i && !seen; k++)
            seen = w[k].var == v && w[k].kind == KEVO_WRITE_ELEMENT;
        if (seen)
            continue;
        char reason[320];
        kevo_rprivate p;
        if (private_buffer(&p, m, r, v, w, nw, all, nall, reason, sizeof(reason))) {
            if (*n < max)
                out[(*n)++] = p;
        } else if (!why[0]) {
            snprintf(why, why_size, "%s", reason);
        }
    }
done:
    free(w);
    free(all);
    return error;
}
