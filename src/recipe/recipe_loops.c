/*
 * recipe/recipe_loops.c - the recipes that restructure loop nests:
 *   interchange  swap a loop with the loop that is its whole body;
 *   tile         strip-mine a perfect nest of 2-3 simple rectangular loops
 *                into tile loops and min-bounded point loops.
 * Both rewrite loop headers in place (the braces of the original nest stay
 * where they are) and decline on imperfect nests, non-rectangular bounds,
 * loops carrying pragmas, scalars that are neither reductions nor private,
 * and arrays written at one index and read at another.
 *
 * Must not: add pragmas or flags (see recipe_omp.c).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loop index from a `loop` parameter; -1 picks with `pick`. */
static int loop_param(const kevo_recipe_model *m, long which)
{
    if (which >= (long)m->n_loop) {
        kevo_error_set(KEVO_EINVAL,
                       "loop index %ld is out of range: the kernel has %zu for loops, numbered "
                       "from 0 in source order",
                       which, m->n_loop);
        return -1;
    }
    return (int)which;
}

/* The dependence heuristics shared by both recipes, on loop l's body. */
static int reorder_safe(const kevo_recipe_model *m, int l)
{
    int error;
    kevo_rscalars sc;
    const kevo_rloop *L = &m->loop[l];
    if ((error = kevo_recipe_scalars(&sc, m, L->t_body, L->t_end, L->t_end)) < 0)
        return error;
    return kevo_recipe_same_index(m, L->t_body, L->t_end);
}

/* ---- interchange -------------------------------------------------------- */

/* Nothing in the headers of loops o and c may be written inside o's body. */
static int bounds_invariant(const kevo_recipe_model *m, int o, int c)
{
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    const kevo_rloop *O = &m->loop[o], *C = &m->loop[c];
    if ((error = kevo_recipe_writes(&w, &nw, m, O->t_body, O->t_end)) < 0)
        return error;
    for (size_t i = 0; i < nw; i++) {
        int v = w[i].var;
        if (v < 0 || v == C->var)
            continue;
        const kevo_rloop *hit = kevo_recipe_uses_var(m, O->t_lparen, O->t_rparen, v)   ? O
                                : kevo_recipe_uses_var(m, C->t_lparen, C->t_rparen, v) ? C
                                                                                       : NULL;
        if (hit) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "'%s' in the header of the loop at line %u is written inside "
                                   "the nest (line %u)",
                                   m->var[v].name, hit->line,
                                   kevo_recipe_line(m, m->tok[w[i].t_op].start));
            break;
        }
    }
    free(w);
    return error;
}

/* When loop o's body is `{ decls; C }` (declarations with initialisers,
 * then its only inner loop C as the last statement), the declarations can
 * move into C's body (sinking: recomputed each iteration of C) when nothing
 * they read is written in C's body and C's header does not use them. *d0
 * gets the first declaration's token; the child in *child. 0 when the body
 * is not of that form (no sinking possible: *child = -1). */
static int sinkable(const kevo_recipe_model *m, int o, int *child, unsigned *d0)
{
    const kevo_rloop *O = &m->loop[o];
    *child = -1;
    if (O->n_children != 1 || !O->body_compound)
        return 0;
    int c = -1;
    for (size_t k = (size_t)o + 1; k < m->n_loop; k++)
        if (m->loop[k].parent == o) {
            c = (int)k;
            break;
        }
    const kevo_rloop *C = &m->loop[c];
    /* C must be the last statement: only the closing brace after it */
    if (C->t_end + 1 != O->t_end || !kevo_rtok_is(m, C->t_end, "}"))
        return 0;
    unsigned first = O->t_body + 1;
    if (first >= C->t_for)
        return 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    int error = kevo_recipe_writes(&w, &nw, m, first, C->t_for);
    if (error < 0)
        return error;
    bool ok = nw == 0 && C->n_pragmas == 0;
    free(w);
    /* declarations only: each statement holds a declaring name followed by `=` */
    for (unsigned t = first; ok && t < C->t_for;) {
        unsigned semi = t;
        bool decl = false;
        int depth = 0;
        while (semi < C->t_for && !(depth == 0 && kevo_rtok_is(m, semi, ";"))) {
            if (kevo_rtok_is(m, semi, "(") || kevo_rtok_is(m, semi, "[") ||
                kevo_rtok_is(m, semi, "{"))
                depth++;
            else if (kevo_rtok_is(m, semi, ")") || kevo_rtok_is(m, semi, "]") ||
                     kevo_rtok_is(m, semi, "}"))
                depth--;
            if (m->tok[semi].is_decl && kevo_rtok_is(m, semi + 1, "="))
                decl = true;
            if (depth < 0 || kevo_rtok_is(m, semi, "{"))
                ok = false;
            semi++;
        }
        if (semi >= C->t_for || !decl)
            ok = false;
        t = semi + 1;
    }
    if (!ok)
        return 0;
    /* nothing the declarations read or declare is written in C's body
     * (sinking would recompute it each iteration), except a pointer that
     * C's body stores through: `float *yr = y + i * n;` sinks into a body
     * that stores yr[j] (the pointer is recomputed, the same elements are
     * stored), but not a declaration reading yr[0] after it, nor `float
     * acc = 0.0f;` above `acc += ...`, nor an array the body stores into;
     * C's header does not use what they declare */
    if ((error = kevo_recipe_writes(&w, &nw, m, C->t_body, C->t_end)) < 0)
        return error;
    for (size_t i = 0; i < nw && ok; i++) {
        bool through = w[i].kind == KEVO_WRITE_ELEMENT && w[i].var >= 0 &&
                       m->var[w[i].var].vtype == KEVO_VTYPE_POINTER;
        for (unsigned t = first; ok && w[i].var >= 0 && t < C->t_for; t++)
            if (m->tok[t].var == w[i].var && !(through && m->tok[t].is_decl))
                ok = false;
    }
    free(w);
    for (unsigned t = first; ok && t < C->t_for; t++)
        if (m->tok[t].is_decl && m->tok[t].var >= 0 &&
            kevo_recipe_uses_var(m, C->t_lparen, C->t_rparen, m->tok[t].var))
            ok = false;
    if (!ok)
        return 0;
    *child = c;
    *d0 = first;
    return 0;
}

/* Interchange loop o with its inner loop (sinking the declarations between
 * them, see sinkable()); with dry, only the checks. */
static int interchange_pair(kevo_recipe_out *out, const kevo_recipe_model *m, int o, bool dry)
{
    int error = 0;
    char why[320];
    const kevo_rloop *O = &m->loop[o];
    int c = O->sole_child;
    unsigned d0 = 0;
    if (c < 0) {
        if ((error = sinkable(m, o, &c, &d0)) < 0)
            return error;
        if (c < 0) {
            kevo_recipe_not_perfect_why(why, sizeof(why), m, o);
            return kevo_error_set(KEVO_EINVAL,
                                  "%s; interchange needs the inner loop to be the whole body of "
                                  "the outer one, or to follow only declarations it can sink "
                                  "into the inner loop",
                                  why);
        }
    }
    const kevo_rloop *C = &m->loop[c];
    if (O->n_pragmas > 0)
        return kevo_recipe_pragma_decline(m, "loop transforms", o);
    if (C->n_pragmas > 0)
        return kevo_recipe_pragma_decline(m, "loop transforms", c);
    int a = kevo_recipe_collapsed_into(m, o);
    if (a >= 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is collapsed into the omp loop at line %u",
                              O->line, m->loop[a].line);
    char ee[96];
    if (O->early_exit || C->early_exit)
        return kevo_error_set(KEVO_EINVAL, "%s",
                              kevo_recipe_early_exit_why(ee, sizeof(ee), O->early_exit ? O : C));
    if (!O->canonical)
        return kevo_error_set(KEVO_EINVAL, "%s", O->why);
    if (!C->canonical)
        return kevo_error_set(KEVO_EINVAL, "%s", C->why);
    if (kevo_recipe_uses_var(m, C->t_lparen, C->t_rparen, O->var) ||
        kevo_recipe_uses_var(m, O->t_lparen, O->t_rparen, C->var))
        return kevo_error_set(KEVO_EINVAL,
                              "the header of the loop at line %u uses '%s' of the loop at line %u: "
                              "the bounds must not depend on the swapped induction variables",
                              C->line, m->var[O->var].name, O->line);
    if ((error = bounds_invariant(m, o, c)) < 0)
        return error;
    if ((error = reorder_safe(m, o)) < 0)
        return error;
    if (dry)
        return 0;

    unsigned o0 = m->tok[O->t_for].start, o1 = m->tok[O->t_rparen].end;
    unsigned c0 = m->tok[C->t_for].start, c1 = m->tok[C->t_rparen].end;
    if ((error = kevo_cparse_edits_add(&out->edits, o0, o1, "%.*s", (int)(c1 - c0), m->src + c0)) <
            0 ||
        (error = kevo_cparse_edits_add(&out->edits, c0, c1, "%.*s", (int)(o1 - o0), m->src + o0)) <
            0)
        return error;
    if (d0) {
        /* sink: the declarations move to the start of the inner body */
        unsigned s0 = m->tok[d0].start;
        size_t il;
        const char *ind = kevo_recipe_indent(m, c0, &il);
        kevo_buf decls = {0};
        error = kevo_buf_printf(&decls, "%.*s", (int)(m->tok[C->t_for - 1].end - s0), m->src + s0);
        if (error == 0)
            error = kevo_cparse_edits_add(&out->edits, s0, c0, "%s", "");
        if (error == 0 && C->body_compound)
            error = kevo_cparse_edits_add(&out->edits, m->tok[C->t_body].end,
                                          m->tok[C->t_body].end, "\n%.*s    %s", (int)il, ind,
                                          kevo_buf_cstr(&decls));
        else if (error == 0) {
            /* the body a loop with pragmas above it: the block opens above them (a
             * pragma must stay directly above its loop) */
            int b = -1;
            for (size_t k = (size_t)c + 1; k < m->n_loop && b < 0; k++)
                if (m->loop[k].t_for == C->t_body && m->loop[k].n_pragmas > 0)
                    b = (int)k;
            if (b >= 0) {
                unsigned at = kevo_recipe_line_begin(m, m->dir[m->loop[b].pragmas[0]].start);
                error = kevo_cparse_edits_add(&out->edits, at, at, "%.*s    {\n%.*s    %s\n",
                                              (int)il, ind, (int)il, ind, kevo_buf_cstr(&decls));
            } else {
                error = kevo_cparse_edits_add(&out->edits, m->tok[C->t_body].start,
                                              m->tok[C->t_body].start, "{\n%.*s    %s\n%.*s    ",
                                              (int)il, ind, kevo_buf_cstr(&decls), (int)il, ind);
            }
            if (error == 0)
                error = kevo_cparse_edits_add(&out->edits, m->tok[C->t_end - 1].end,
                                              m->tok[C->t_end - 1].end, "\n%.*s}", (int)il, ind);
        }
        kevo_buf_free(&decls);
    }
    return error;
}

int kevo_recipe_interchange_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params)
{
    (void)source;
    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    if (params[0] >= 0) {
        int o = loop_param(m, params[0]);
        if (o < 0)
            return KEVO_EINVAL;
        if (m->loop[o].n_children == 0)
            return kevo_error_set(KEVO_EINVAL,
                                  "the loop at line %u has no inner loop to swap with",
                                  m->loop[o].line);
        return interchange_pair(out, m, o, false);
    }
    /* -1: the parent of the first innermost loop whose pair can be swapped
     * (the classic "make the innermost loop stride-1" swap); the reason of
     * the first innermost loop's pair when none can */
    int first = -1;
    for (size_t l = 0; l < m->n_loop; l++) {
        if (m->loop[l].n_children > 0)
            continue;
        int o = m->loop[l].parent;
        if (o < 0)
            continue;
        if (first < 0)
            first = o;
        if (interchange_pair(out, m, o, true) == 0)
            return interchange_pair(out, m, o, false);
        kevo_error_clear();
    }
    if (first < 0) {
        size_t inner = 0;
        while (inner < m->n_loop && m->loop[inner].n_children > 0)
            inner++;
        return kevo_error_set(KEVO_EINVAL,
                              "the first innermost loop (line %u) has no enclosing loop to swap "
                              "with",
                              m->loop[inner < m->n_loop ? inner : 0].line);
    }
    return interchange_pair(out, m, first, false);
}

/* ---- tile --------------------------------------------------------------- */

static bool has_word_const(const char *p, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++)
        if (memcmp(p + i, "const", 5) == 0 && (i == 0 || p[i - 1] == ' ') &&
            (i + 5 == n || p[i + 5] == ' '))
            return true;
    return false;
}

#define TEXT(a, b) (int)(m->tok[(b)-1].end - m->tok[(a)].start), m->src + m->tok[(a)].start

int kevo_recipe_tile_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params)
{
    int error = 0;
    char why[320];
    kevo_buf ub = {0}, points = {0};
    char names[3][64];
    (void)source;

    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    int depth = (int)params[1];
    int root = -1;
    if (params[0] < 0) {
        int first_nest = -1;
        for (size_t l = 0; l < m->n_loop && root < 0; l++) {
            if (m->loop[l].n_children == 0)
                continue;
            if (first_nest < 0)
                first_nest = (int)l;
            if (m->loop[l].n_pragmas == 0 && kevo_recipe_collapsed_into(m, (int)l) < 0 &&
                kevo_recipe_band(m, (int)l, depth, false, NULL, 0) >= 2)
                root = (int)l;
        }
        if (root < 0) {
            if (first_nest < 0)
                return kevo_error_set(KEVO_EINVAL, "tile needs a nest of at least 2 loops; the "
                                                   "kernel has no nested loops");
            if (m->loop[first_nest].n_pragmas > 0)
                return kevo_recipe_pragma_decline(m, "loop transforms", first_nest);
            kevo_recipe_band(m, first_nest, depth, false, why, sizeof(why));
            return kevo_error_set(KEVO_EINVAL,
                                  "tile needs a perfect nest of at least 2 simple, rectangular "
                                  "loops and none qualifies: %s",
                                  why);
        }
    } else if ((root = loop_param(m, params[0])) < 0) {
        return KEVO_EINVAL;
    }
    if (m->loop[root].n_pragmas > 0)
        return kevo_recipe_pragma_decline(m, "loop transforms", root);
    int a = kevo_recipe_collapsed_into(m, root);
    if (a >= 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is collapsed into the omp loop at line %u",
                              m->loop[root].line, m->loop[a].line);
    int d = kevo_recipe_band(m, root, depth, false, why, sizeof(why));
    if (d < 2)
        return kevo_error_set(KEVO_EINVAL,
                              "tile needs a perfect nest of at least 2 simple, rectangular loops "
                              "at line %u: %s",
                              m->loop[root].line, why);
    if ((error = reorder_safe(m, root)) < 0)
        return error;

    int nest[3];
    for (int k = 0; k < d; k++)
        nest[k] = kevo_recipe_nest_loop(m, root, k);
    const kevo_rloop *last = &m->loop[nest[d - 1]];
    size_t ilen;
    const char *indent = kevo_recipe_indent(m, m->tok[last->t_for].start, &ilen);

    for (int k = 0; k < d; k++) {
        const kevo_rloop *L = &m->loop[nest[k]];
        long size = params[2 + k];
        unsigned ty0 = m->tok[L->t_type0].start, ty1 = m->tok[L->t_type1 - 1].end;
        if (has_word_const(m->src + ty0, ty1 - ty0)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the induction variable of the loop at line %u "
                                   "is const",
                                   L->line);
            goto done;
        }
        kevo_recipe_fresh_name(names[k], sizeof(names[k]), m, m->var[L->var].name, "_tile", names,
                               (size_t)k);
        kevo_buf_clear(&ub);
        bool single = L->t_ub1 == L->t_ub0 + 1;
        if (L->cond_op == KEVO_COND_LE)
            error = kevo_buf_printf(&ub, "((%.*s) + 1)", TEXT(L->t_ub0, L->t_ub1));
        else
            error = kevo_buf_printf(&ub, single ? "%.*s" : "(%.*s)", TEXT(L->t_ub0, L->t_ub1));
        if (error < 0)
            goto done;
        /* tile loop, in place of the original header */
        if ((error =
                 kevo_cparse_edits_add(&out->edits, m->tok[L->t_for].start, m->tok[L->t_rparen].end,
                                       "for (%.*s %s = %.*s; %s < %s; %s += %ld)", (int)(ty1 - ty0),
                                       m->src + ty0, names[k], TEXT(L->t_lb0, L->t_lb1), names[k],
                                       kevo_buf_cstr(&ub), names[k], size)) < 0)
            goto done;
        /* point loop, bounded by the tile and by the original bound */
        if ((error = kevo_buf_printf(&points, "\n%.*s%*s", (int)ilen, indent, 4 * (k + 1), "")) <
                0 ||
            (error = kevo_buf_printf(&points,
                                     "for (%.*s %s = %s; %s < (%s + %ld < %s ? %s + %ld : %s); "
                                     "%s++)",
                                     (int)(ty1 - ty0), m->src + ty0, m->var[L->var].name, names[k],
                                     m->var[L->var].name, names[k], size, kevo_buf_cstr(&ub),
                                     names[k], size, kevo_buf_cstr(&ub), m->var[L->var].name)) < 0)
            goto done;
    }
    error = kevo_cparse_edits_add(&out->edits, m->tok[last->t_rparen].end,
                                  m->tok[last->t_rparen].end, "%s", kevo_buf_cstr(&points));
done:
    kevo_buf_free(&ub);
    kevo_buf_free(&points);
    return error;
}
