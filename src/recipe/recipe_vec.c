/*
 * recipe/recipe_vec.c - the `vectorize` recipe: explicit SIMD with GCC
 * vector extensions. W iterations of a loop run in the W lanes of one
 * vector: the float locals whose values depend on the loop variable become
 * vectors, every access contiguous in it (`x[e + j]`) a vector load or
 * store, float sum reductions vector accumulators summed after the loop;
 * uniform values stay scalars (GCC broadcasts a scalar operand). A scalar
 * remainder loop runs the original body for the last iterations. The
 * vector type is declared in the rewritten block, a scalar broadcast as
 * `(e) - (vf){0}` (exact, and folded away when e is a vector), with the machine's widest
 * vector by default (`vector_size(__BIGGEST_ALIGNMENT__)` under
 * -march=native: no intrinsics, the same text on AVX2, AVX-512 and NEON).
 *
 * Applied to a loop that holds the reduction loop (the `j` loop of a
 * dot-product matmul), this is outer-loop vectorisation: with `unroll_jam`
 * on the loop above it first, F x W accumulators stay in registers across
 * the reduction (register blocking). Applied to a reduction loop (`k` of
 * `acc += x[m*K+k] * w[n*K+k]`), it vectorises the sum GCC keeps scalar
 * without -ffast-math.
 *
 * Checks: the loop is simple, independent across iterations (the scalar and
 * store checks of access.c, as omp_parallel), carries no pragma and holds
 * no OpenMP one; its body (inner loop headers aside) is straight-line float
 * arithmetic (+ - * /, no calls, casts, comparisons, conditionals, commas,
 * pointer dereferences, ++/--); every value depending on the loop variable
 * is a float; every access depending on it is `x[e + j]` of a float array
 * with e not depending on it; inner loop headers do not depend on it.
 *
 * Inside the vectorised loop, an array a nested loop writes at one
 * subscript it does not change is kept in a vector register across that
 * loop (register promotion, find_promotions()).
 *
 * Must not: change anything outside the loop statement, or add pragmas.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MAX_RED 16

typedef struct vec_ctx {
    const kevo_recipe_model *m;
    int l;
    const kevo_rloop *L;
    bool *varying; /* per variable: its value depends on the loop variable */
    bool *local;   /* per variable: declared inside the loop's body */
    kevo_rscalars sc;
    char why[400];
} vec_ctx;

static void vec_ctx_free(vec_ctx *c)
{
    free(c->varying);
    free(c->local);
    c->varying = c->local = NULL;
}

/* Whether token t lies in the header of a loop nested inside c->L. */
static bool in_inner_header(const vec_ctx *c, unsigned t)
{
    const kevo_recipe_model *m = c->m;
    for (size_t k = (size_t)c->l + 1; k < m->n_loop; k++) {
        const kevo_rloop *I = &m->loop[k];
        if (I->t_for >= c->L->t_end)
            break;
        if (t >= I->t_for && t <= I->t_rparen)
            return true;
    }
    return false;
}

static bool tok_var_varying(const vec_ctx *c, unsigned t)
{
    int v = c->m->tok[t].var;
    return v >= 0 && (v == c->L->var || c->varying[v]);
}

static bool range_varying(const vec_ctx *c, unsigned a, unsigned b)
{
    for (unsigned t = a; t < b; t++)
        if (tok_var_varying(c, t))
            return true;
    return false;
}

static bool is_reduction_var(const vec_ctx *c, int v)
{
    for (size_t i = 0; i < c->sc.n_red; i++)
        if (c->sc.red_var[i] == v)
            return true;
    return false;
}

static const char *const forbidden_punct[] = {
    "?",  ":",  "<",  ">",  "<=", ">=", "==", "!=", "&&", "||",  "!",   "&",  "|",  "^",
    "%",  "<<", ">>", "~",  "++", "--", "->", ".",  ",",  "&=",  "|=",  "^=", "%=", "<<=",
    ">>="};
static const char *const forbidden_kw[] = {"if",    "else",   "while", "do",       "switch",
                                           "case",  "return", "goto",  "break",    "continue",
                                           "sizeof", "double", "asm",   "__asm__"};

/* The straight-line float arithmetic check on the body, inner loop headers
 * aside. */
static bool body_is_arithmetic(vec_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    for (unsigned t = L->t_body; t < L->t_end; t++) {
        if (in_inner_header(c, t) || kevo_rtok_is(m, t, "for"))
            continue;
        size_t n;
        const char *s = kevo_rtok_text(m, t, &n);
        unsigned line = kevo_recipe_line(m, m->tok[t].start);
        if (m->tok[t].kind == KEVO_CTOK_PUNCT) {
            for (size_t i = 0; i < sizeof(forbidden_punct) / sizeof(*forbidden_punct); i++)
                if (kevo_rtok_is(m, t, forbidden_punct[i])) {
                    snprintf(c->why, sizeof(c->why),
                             "'%.*s' at line %u: vectorize handles straight-line float "
                             "arithmetic (+ - * /) only",
                             (int)n, s, line);
                    return false;
                }
            if (kevo_rtok_is(m, t, "*") && t > 0) {
                /* unary * (a dereference) follows an operator or an opening bracket */
                unsigned p = t - 1;
                bool operand_before = m->tok[p].kind == KEVO_CTOK_IDENT ||
                                      m->tok[p].kind == KEVO_CTOK_LITERAL ||
                                      kevo_rtok_is(m, p, ")") || kevo_rtok_is(m, p, "]");
                /* `const float *b = ...`: a declarator (a pointer local that
                 * depends on the loop variable is refused as not a float) */
                bool decl = m->tok[p].kind == KEVO_CTOK_KEYWORD;
                if (!operand_before && !decl) {
                    snprintf(c->why, sizeof(c->why),
                             "a pointer dereference at line %u: vectorize handles float "
                             "arithmetic on array elements and float locals",
                             line);
                    return false;
                }
            }
            if (kevo_rtok_is(m, t, "(") && t + 1 < L->t_end &&
                (m->tok[t + 1].kind == KEVO_CTOK_KEYWORD ||
                 (m->tok[t + 1].kind == KEVO_CTOK_IDENT && m->tok[t + 1].var < 0))) {
                snprintf(c->why, sizeof(c->why),
                         "a cast at line %u: vectorize handles float arithmetic without casts",
                         line);
                return false;
            }
            continue;
        }
        if (m->tok[t].kind == KEVO_CTOK_KEYWORD) {
            for (size_t i = 0; i < sizeof(forbidden_kw) / sizeof(*forbidden_kw); i++)
                if (kevo_rtok_is(m, t, forbidden_kw[i])) {
                    snprintf(c->why, sizeof(c->why),
                             "'%s' at line %u: vectorize handles straight-line float "
                             "arithmetic only",
                             forbidden_kw[i], line);
                    return false;
                }
            continue;
        }
        if (m->tok[t].kind == KEVO_CTOK_IDENT && t + 1 < L->t_end &&
            kevo_rtok_is(m, t + 1, "(") && m->tok[t].var < 0) {
            snprintf(c->why, sizeof(c->why),
                     "the call of '%.*s' at line %u: vectorize handles float arithmetic "
                     "without calls",
                     (int)n, s, line);
            return false;
        }
    }
    return true;
}

/* Mark the locals whose values depend on the loop variable (a fixpoint over
 * initialisers and assignments). */
static int mark_varying(vec_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    int error = kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end);
    if (error < 0)
        return error;
    for (bool changed = true; changed;) {
        changed = false;
        for (unsigned t = L->t_body; t < L->t_end; t++) {
            int v = m->tok[t].var;
            if (v < 0 || !m->tok[t].is_decl || c->varying[v] || !kevo_rtok_is(m, t + 1, "="))
                continue;
            unsigned e = kevo_recipe_expr_end(m, t + 2, L->t_end);
            if (range_varying(c, t + 2, e))
                c->varying[v] = changed = true;
        }
        for (size_t i = 0; i < nw; i++) {
            int v = w[i].var;
            if (w[i].kind != KEVO_WRITE_SCALAR || v < 0 || !c->local[v] || c->varying[v])
                continue;
            unsigned e = kevo_recipe_expr_end(m, w[i].t_op + 1, L->t_end);
            if (range_varying(c, w[i].t_op + 1, e))
                c->varying[v] = changed = true;
        }
    }
    free(w);
    return 0;
}

/* Whether the (single) use of the loop variable at token j inside the
 * subscript [lb, rb] is an additive term with coefficient +1. */
static bool additive_at(const kevo_recipe_model *m, unsigned lb, unsigned rb, unsigned j)
{
    unsigned a = j, b = j; /* the term's extent */
    for (;;) {
        bool plus_before = kevo_rtok_is(m, a - 1, "+") || a - 1 == lb ||
                           (kevo_rtok_is(m, a - 1, "(") && kevo_rtok_match(m, a - 1) == b + 1);
        bool ok_after = kevo_rtok_is(m, b + 1, "+") || kevo_rtok_is(m, b + 1, "-") ||
                        b + 1 == rb || kevo_rtok_is(m, b + 1, ")");
        if (!ok_after)
            return false;
        if (a - 1 == lb)
            return true;
        if (kevo_rtok_is(m, a - 1, "+")) {
            /* `e + j`: what precedes must not bind tighter than +: fine; but
             * `e - (x + j)` negates: look through the enclosing groups */
            unsigned p = a - 1;
            int depth = 0;
            while (p > lb) {
                p--;
                if (kevo_rtok_is(m, p, ")") || kevo_rtok_is(m, p, "]"))
                    depth++;
                else if (kevo_rtok_is(m, p, "(") || kevo_rtok_is(m, p, "[")) {
                    if (depth == 0)
                        break;
                    depth--;
                } else if (depth == 0 && (kevo_rtok_is(m, p, "*") || kevo_rtok_is(m, p, "/")))
                    ; /* e*f + j: the product is another term */
                else if (depth == 0 && kevo_rtok_is(m, p, "-") && p + 1 == a - 1)
                    return false;
            }
            if (p == lb)
                return true;
            if (!kevo_rtok_is(m, p, "("))
                return false;
            /* the group (… + j …) must itself be an additive term */
            unsigned close = kevo_rtok_match(m, p);
            if (close == (unsigned)-1)
                return false;
            if (kevo_rtok_is(m, close + 1, "*") || kevo_rtok_is(m, close + 1, "/") ||
                kevo_rtok_is(m, close + 1, "%"))
                return false;
            if (p > lb + 1 &&
                (kevo_rtok_is(m, p - 1, "-") || kevo_rtok_is(m, p - 1, "*") ||
                 kevo_rtok_is(m, p - 1, "/") || m->tok[p - 1].kind == KEVO_CTOK_IDENT))
                return false;
            a = p;
            b = close;
            if (a - 1 == lb)
                return kevo_rtok_is(m, b + 1, "+") || kevo_rtok_is(m, b + 1, "-") || b + 1 == rb;
            continue;
        }
        if (!plus_before)
            return false;
        /* `(j ...)` group: widen to it */
        unsigned close = kevo_rtok_match(m, a - 1);
        if (close == (unsigned)-1)
            return false;
        a = a - 1;
        b = close;
        if (kevo_rtok_is(m, b + 1, "*") || kevo_rtok_is(m, b + 1, "/") ||
            kevo_rtok_is(m, b + 1, "%"))
            return false;
        if (a - 1 != lb && !kevo_rtok_is(m, a - 1, "+") && !kevo_rtok_is(m, a - 1, "("))
            return false;
    }
}

/* Check every subscript in the body: a subscript depending on the loop
 * variable must be `e + j` of a float array, e independent of it. */
static bool accesses_contiguous(vec_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    for (unsigned t = L->t_body; t + 1 < L->t_end; t++) {
        if (in_inner_header(c, t) || !kevo_rtok_is(m, t + 1, "[") || m->tok[t].var < 0)
            continue;
        unsigned lb = t + 1, rb = kevo_rtok_match(m, lb);
        int x = m->tok[t].var;
        unsigned line = kevo_recipe_line(m, m->tok[t].start);
        if (rb == (unsigned)-1)
            return false;
        if (kevo_rtok_is(m, rb + 1, "[")) {
            snprintf(c->why, sizeof(c->why),
                     "'%s' at line %u has several subscripts: vectorize handles flat arrays",
                     m->var[x].name, line);
            return false;
        }
        if (!range_varying(c, lb + 1, rb)) {
            if (!m->var[x].elem_f32) {
                snprintf(c->why, sizeof(c->why),
                         "'%s' at line %u is not an array of float", m->var[x].name, line);
                return false;
            }
            continue;
        }
        unsigned uses = 0, at = 0;
        for (unsigned k = lb + 1; k < rb; k++) {
            int v = m->tok[k].var;
            if (v == L->var) {
                uses++;
                at = k;
            } else if (v >= 0 && c->varying[v]) {
                snprintf(c->why, sizeof(c->why),
                         "the subscript of '%s' at line %u uses '%s', which depends on '%s'",
                         m->var[x].name, line, m->var[v].name, m->var[L->var].name);
                return false;
            } else if (kevo_rtok_is(m, k, "[")) {
                snprintf(c->why, sizeof(c->why),
                         "the subscript of '%s' at line %u reads an array: vectorize needs "
                         "contiguous accesses, not gathers",
                         m->var[x].name, line);
                return false;
            }
        }
        if (uses != 1 || !additive_at(m, lb, rb, at)) {
            snprintf(c->why, sizeof(c->why),
                     "'%s[...]' at line %u is not contiguous in '%s' (vectorize needs "
                     "subscripts 'e + %s' with e independent of it)",
                     m->var[x].name, line, m->var[L->var].name, m->var[L->var].name);
            return false;
        }
        if (!m->var[x].elem_f32) {
            snprintf(c->why, sizeof(c->why), "'%s' at line %u is not an array of float",
                     m->var[x].name, line);
            return false;
        }
    }
    return true;
}

/* The next named scalar operand at or after *t in [*t, b): a variable token
 * outside subscripts and not itself subscripted (an array name), skipping
 * the headers of inner loops; -1 at the end. */
static int next_operand(const vec_ctx *c, unsigned *t, unsigned b, int *depth)
{
    const kevo_recipe_model *m = c->m;
    for (; *t < b; (*t)++) {
        if (in_inner_header(c, *t))
            continue;
        if (kevo_rtok_is(m, *t, "["))
            (*depth)++;
        else if (kevo_rtok_is(m, *t, "]"))
            (*depth)--;
        int v = m->tok[*t].var;
        if (*depth == 0 && v >= 0 && !kevo_rtok_is(m, *t + 1, "["))
            return v;
    }
    return -1;
}

/* Outside subscripts, the loop variable is not used and every value that
 * depends on it is a float (a float vector lane). */
static bool operands_float(vec_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    int depth = 0;
    for (unsigned t = L->t_body;; t++) {
        int v = next_operand(c, &t, L->t_end, &depth);
        if (v < 0)
            return true;
        unsigned line = kevo_recipe_line(m, m->tok[t].start);
        if (v == L->var) {
            snprintf(c->why, sizeof(c->why),
                     "'%s' is used outside a subscript at line %u: vectorize needs the loop "
                     "variable in subscripts only",
                     m->var[v].name, line);
            return false;
        }
        if (c->varying[v] && !m->var[v].is_f32) {
            snprintf(c->why, sizeof(c->why), "'%s' (line %u) depends on '%s' and is not a float",
                     m->var[v].name, line, m->var[L->var].name);
            return false;
        }
    }
}

/* The named scalars of a statement whose value depends on the loop
 * variable, tokens [a, b): floats only (GCC broadcasts a float scalar; an
 * integer or double operand does not convert to a float vector). */
static bool statement_operands_float(vec_ctx *c, unsigned a, unsigned b)
{
    const kevo_recipe_model *m = c->m;
    int depth = 0;
    for (unsigned t = a;; t++) {
        int v = next_operand(c, &t, b, &depth);
        if (v < 0)
            return true;
        if (!m->var[v].is_f32) {
            snprintf(c->why, sizeof(c->why),
                     "'%s' at line %u is not a float but takes part in arithmetic that "
                     "depends on '%s'",
                     m->var[v].name, kevo_recipe_line(m, m->tok[t].start),
                     m->var[c->L->var].name);
            return false;
        }
    }
}

/* Whether loop l can be vectorised; fills c (the caller frees it). */
static bool vec_check(vec_ctx *c, const kevo_recipe_model *m, int l)
{
    vec_ctx_free(c);
    memset(c, 0, sizeof(*c));
    c->m = m;
    c->l = l;
    c->L = &m->loop[l];
    const kevo_rloop *L = c->L;
    if (!L->simple) {
        snprintf(c->why, sizeof(c->why), "%s",
                 L->why[0] ? L->why : "the loop is not `for (T i = a; i < b; i++)`");
        return false;
    }
    if (L->early_exit) {
        kevo_recipe_early_exit_why(c->why, sizeof(c->why), L);
        return false;
    }
    if (kevo_recipe_vector_tail(m, l)) {
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u is the remainder of a vectorised loop (it starts at "
                 "'%s')",
                 L->line, m->var[m->tok[L->t_lb0].var].name);
        return false;
    }
    if (L->n_pragmas > 0) {
        int n;
        const char *t = kevo_recipe_pragma_text(m, l, ~0u, &n);
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u carries '%.*s': vectorize the loop itself, then add "
                 "pragmas to the loops around it",
                 L->line, n, t);
        return false;
    }
    int a = kevo_recipe_collapsed_into(m, l);
    if (a >= 0) {
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u is collapsed into the omp loop at line %u", L->line,
                 m->loop[a].line);
        return false;
    }
    for (size_t k = (size_t)l + 1; k < m->n_loop && m->loop[k].t_for < L->t_end; k++)
        if (m->loop[k].pragma_flags & KEVO_PRAGMA_OMP_ANY) {
            snprintf(c->why, sizeof(c->why),
                     "the loop at line %u inside it carries an OpenMP pragma", m->loop[k].line);
            return false;
        }
    if (kevo_recipe_scalars(&c->sc, m, L->t_body, L->t_end, L->t_end) < 0 ||
        kevo_recipe_stores_indexed(m, L->t_body, L->t_end, &L->var, 1) < 0 ||
        kevo_recipe_same_index(m, L->t_body, L->t_end) < 0) {
        snprintf(c->why, sizeof(c->why), "loop at line %u: %s", L->line, kevo_error_last());
        kevo_error_clear();
        return false;
    }
    if (c->sc.n_priv > 0) {
        snprintf(c->why, sizeof(c->why),
                 "'%s' is declared outside the loop at line %u and assigned inside it: declare "
                 "it inside",
                 m->var[c->sc.priv[0]].name, L->line);
        return false;
    }
    for (size_t i = 0; i < c->sc.n_red; i++) {
        int v = c->sc.red_var[i];
        if (strcmp(c->sc.red_op[i], "+") != 0 || !m->var[v].is_f32) {
            snprintf(c->why, sizeof(c->why),
                     "the reduction of '%s' (%s) at line %u: vectorize sums floats only",
                     m->var[v].name, c->sc.red_op[i], L->line);
            return false;
        }
    }
    if (!body_is_arithmetic(c))
        return false;
    c->varying = calloc(m->n_var ? m->n_var : 1, sizeof(bool));
    c->local = calloc(m->n_var ? m->n_var : 1, sizeof(bool));
    if (!c->varying || !c->local) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        return false;
    }
    for (size_t v = 0; v < m->n_var; v++)
        c->local[v] = kevo_recipe_declared_in(m, (int)v, L->t_body, L->t_end);
    if (mark_varying(c) < 0) {
        snprintf(c->why, sizeof(c->why), "%s", kevo_error_last());
        kevo_error_clear();
        return false;
    }
    /* inner loop headers must not depend on the loop variable */
    for (size_t k = (size_t)l + 1; k < m->n_loop && m->loop[k].t_for < L->t_end; k++) {
        const kevo_rloop *I = &m->loop[k];
        if (range_varying(c, I->t_lparen, I->t_rparen)) {
            snprintf(c->why, sizeof(c->why),
                     "the header of the loop at line %u depends on '%s'", I->line,
                     m->var[L->var].name);
            return false;
        }
    }
    if (!accesses_contiguous(c) || !operands_float(c))
        return false;
    /* every statement writing a varying target: float operands only */
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if (kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end) < 0) {
        snprintf(c->why, sizeof(c->why), "%s", kevo_error_last());
        kevo_error_clear();
        return false;
    }
    bool ok = true, any = false;
    for (size_t i = 0; i < nw && ok; i++) {
        unsigned e = kevo_recipe_expr_end(m, w[i].t_op + 1, L->t_end);
        bool target = (w[i].kind == KEVO_WRITE_SCALAR && w[i].var >= 0 &&
                       (c->varying[w[i].var] || is_reduction_var(c, w[i].var))) ||
                      (w[i].kind == KEVO_WRITE_ELEMENT && range_varying(c, w[i].t_idx0, w[i].t_idx1));
        if (!target && range_varying(c, w[i].t_op + 1, e)) {
            snprintf(c->why, sizeof(c->why),
                     "the value stored at line %u depends on '%s' but its target does not",
                     kevo_recipe_line(m, m->tok[w[i].t_op].start), m->var[L->var].name);
            ok = false;
        }
        if (target) {
            any = true;
            ok = statement_operands_float(c, w[i].t_op + 1, e);
        }
    }
    free(w);
    for (unsigned t = L->t_body; ok && t < L->t_end; t++) {
        int v = m->tok[t].var;
        if (v >= 0 && m->tok[t].is_decl && c->varying[v] && kevo_rtok_is(m, t + 1, "="))
            ok = statement_operands_float(c, t + 2, kevo_recipe_expr_end(m, t + 2, L->t_end));
    }
    if (ok && !any) {
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u stores nothing that depends on '%s'", L->line,
                 m->var[L->var].name);
        ok = false;
    }
    return ok;
}

/* ---- the rewrite --------------------------------------------------------- */

typedef struct ins {
    unsigned off;
    int key;      /* order at one offset: openers outer first, closers inner first */
    unsigned end; /* > off: replace [off, end) */
    char text[320];
} ins;

typedef struct ins_list {
    ins *v;
    size_t n, cap;
} ins_list;

static int ins_add(ins_list *l, unsigned off, unsigned end, int key, const char *text)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        ins *v = realloc(l->v, nc * sizeof(*v));
        if (!v)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        l->v = v;
        l->cap = nc;
    }
    ins *i = &l->v[l->n];
    i->off = off;
    i->end = end;
    i->key = key;
    if ((size_t)snprintf(i->text, sizeof(i->text), "%s", text) >= sizeof(i->text))
        return kevo_error_set(KEVO_EINVAL, "an edit of %zu characters (at most %zu)", strlen(text),
                              sizeof(i->text) - 1);
    l->n++;
    return 0;
}

static int ins_cmp(const void *a, const void *b)
{
    const ins *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->key - y->key;
}

enum { K_WRAP_OPEN = 0, K_ACC_OPEN = 1, K_REPLACE = 2, K_ACC_CLOSE = 3, K_WRAP_CLOSE = 4 };

/* ---- register promotion ---------------------------------------------------
 * Inside a loop I nested in the vectorised loop, a contiguous access x[idx]
 * whose subscript does not change in I (no variable of it is I's, declared
 * in I or written in I) and that I writes is kept in a vector register for
 * the whole of I: loaded before I, stored after it. That is what keeps C's
 * row in registers across the k loop of a row-update matmul
 * (`c[j] += a * b[j]`), which GCC will not do itself through the
 * may_alias vector type. Every access of x in I must be at that subscript,
 * and no array I reads that derives from the same parameter as x may be
 * left unpromoted (the task contract: distinct parameters do not overlap). */

typedef struct promo {
    int var;          /* the array */
    unsigned lb, rb;  /* the subscript's brackets (of its first access) */
    int loop;         /* I */
    char name[64];    /* the register */
} promo;

/* Whether tokens [a, b) use a variable declared or written in loop I (its
 * induction variable included). */
static bool changes_in(const kevo_recipe_model *m, const kevo_rloop *I, const kevo_rwrite *w,
                       size_t nw, unsigned a, unsigned b)
{
    for (unsigned t = a; t < b; t++) {
        int v = m->tok[t].var;
        if (v < 0)
            continue;
        if (v == I->var || kevo_recipe_declared_in(m, v, I->t_body, I->t_end))
            return true;
        for (size_t i = 0; i < nw; i++)
            if (w[i].var == v && w[i].t_op >= I->t_body && w[i].t_op < I->t_end &&
                w[i].kind == KEVO_WRITE_SCALAR)
                return true;
    }
    return false;
}

/* The promotions of the loops directly inside c->L. *out malloc'd. */
static int find_promotions(promo **out, size_t *out_n, const vec_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    kevo_rwrite *w = NULL;
    size_t nw = 0, n = 0;
    promo *p = NULL;
    *out = NULL;
    *out_n = 0;
    int error = kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end);
    if (error < 0)
        return error;
    if (!(p = calloc(m->n_tok ? m->n_tok : 1, sizeof(*p)))) {
        free(w);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t k = (size_t)c->l + 1; k < m->n_loop && m->loop[k].t_for < L->t_end; k++) {
        if (m->loop[k].parent != c->l)
            continue;
        const kevo_rloop *I = &m->loop[k];
        size_t first = n;
        /* candidates: arrays written in I at a contiguous, I-invariant subscript */
        for (size_t i = 0; i < nw; i++) {
            if (w[i].kind != KEVO_WRITE_ELEMENT || w[i].t_op < I->t_body ||
                w[i].t_op >= I->t_end || !range_varying(c, w[i].t_idx0, w[i].t_idx1) ||
                changes_in(m, I, w, nw, w[i].t_idx0, w[i].t_idx1))
                continue;
            bool dup = false;
            for (size_t q = first; q < n; q++)
                dup |= p[q].var == w[i].var;
            if (dup)
                continue;
            p[n].var = w[i].var;
            p[n].lb = w[i].t_idx0;
            p[n].rb = w[i].t_idx1 - 1;
            p[n].loop = (int)k;
            n++;
        }
        /* every access of a candidate in I at its subscript; no unpromoted
         * array of the same root read in I */
        for (size_t q = first; q < n; q++) {
            bool ok = kevo_recipe_root_param(m, p[q].var) >= 0;
            for (unsigned t = I->t_body; ok && t + 1 < I->t_end; t++) {
                int v = m->tok[t].var;
                if (v < 0 || !kevo_rtok_is(m, t + 1, "["))
                    continue;
                unsigned rb = kevo_rtok_match(m, t + 1);
                if (v == p[q].var) {
                    ok = rb != (unsigned)-1 && kevo_rtok_same(m, t + 1, rb + 1, p[q].lb, p[q].rb + 1);
                    continue;
                }
                bool promoted = false;
                for (size_t r = first; r < n; r++)
                    promoted |= p[r].var == v;
                if (!promoted && kevo_recipe_root_param(m, v) == kevo_recipe_root_param(m, p[q].var))
                    ok = false;
            }
            if (!ok) {
                p[q] = p[--n];
                q--;
            }
        }
    }
    free(w);
    *out = p;
    *out_n = n;
    return 0;
}

/* ---- the last window ------------------------------------------------------
 * The columns a vector loop leaves (N % W of them) run, in the register-
 * blocking case, the whole reduction loop once per column, in scalars: for
 * matmul_rect at N=777 the 9 such columns cost about a fifth of the kernel.
 * When at least one whole vector fits, they run instead as one more vector
 * iteration over the last W columns, [N - W, N): the lanes before the first
 * remaining column (already done by the vector loop) are computed again
 * and thrown away; only the remaining lanes are stored, one by one. That
 * is exact for those lanes (the same operations in the same order as the
 * scalar loop), and safe when the body's only effects are its stores:
 * no reduction across iterations (it would count those lanes twice), no
 * scalar written that outlives the body, and every store either a register
 * promoted across an inner loop (stored back after it) or a store at the
 * body's top level; a store inside an inner loop would be made twice. */

typedef struct window {
    const char *lane0; /* the first lane to store */
    const char *lane;  /* the lane loop's variable */
    const char *tmp;   /* a top-level store's vector */
} window;

/* Whether token t lies inside a loop nested in c->L. */
static bool in_inner_loop(const vec_ctx *c, unsigned t)
{
    const kevo_recipe_model *m = c->m;
    for (size_t k = (size_t)c->l + 1; k < m->n_loop && m->loop[k].t_for < c->L->t_end; k++)
        if (t >= m->loop[k].t_for && t < m->loop[k].t_end)
            return true;
    return false;
}

/* A top-level element store the window writes lane by lane: `x[idx] op
 * rhs;` with a subscript that moves with the loop variable. */
static bool window_store(const vec_ctx *c, const kevo_rwrite *w)
{
    const kevo_recipe_model *m = c->m;
    return w->kind == KEVO_WRITE_ELEMENT && !in_inner_loop(c, w->t_op) &&
           range_varying(c, w->t_idx0, w->t_idx1) && w->t_idx1 == w->t_lhs1 &&
           w->t_idx1 >= w->t_idx0 + 3 && kevo_rtok_match(m, w->t_idx0) == w->t_idx1 - 1 &&
           kevo_rtok_is(m, kevo_recipe_expr_end(m, w->t_op + 1, c->L->t_end), ";");
}

static bool window_ok(const vec_ctx *c, const promo *pr, size_t npr)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if (c->sc.n_red > 0 || L->n_children == 0 ||
        kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end) < 0) {
        kevo_error_clear();
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < nw && ok; i++) {
        if (w[i].kind == KEVO_WRITE_SCALAR) {
            ok = w[i].var >= 0 && kevo_recipe_declared_in(m, w[i].var, L->t_body, L->t_end);
        } else if (w[i].kind == KEVO_WRITE_ELEMENT && in_inner_loop(c, w[i].t_op)) {
            bool promoted = false;
            for (size_t q = 0; q < npr; q++) {
                const kevo_rloop *I = &m->loop[pr[q].loop];
                promoted |= pr[q].var == w[i].var && w[i].t_op > I->t_body && w[i].t_op < I->t_end;
            }
            ok = promoted;
        } else {
            ok = window_store(c, &w[i]);
        }
    }
    free(w);
    return ok;
}

/* The vector body: the loop body's text with the edits of the lanes; with
 * `win`, the last window's (its stores lane by lane from win->lane0). */
static int vector_body(kevo_buf *out, const vec_ctx *c, const char *vt, const char *vz,
                       char red_names[][64], promo *pr, size_t npr, const window *win)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    ins_list il = {0};
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if ((error = kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end)) < 0)
        return error;
    char lanes[256] = "";
    if (win)
        snprintf(lanes, sizeof(lanes),
                 "for (int %s = %s; %s < (int)(sizeof(%s) / sizeof(float)); %s++)", win->lane,
                 win->lane0, win->lane, vt, win->lane);
    /* the window's top-level stores: `{ vf tmp = [(x[idx]) op] rhs; for
     * (lanes) (&x[idx])[lane] = tmp[lane]; }`; their left-hand sides get no
     * other edit */
    bool *skip = NULL;
    if (win && !(skip = calloc(m->n_tok ? m->n_tok : 1, sizeof(*skip)))) {
        free(w);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t i = 0; win && i < nw && error == 0; i++) {
        if (w[i].kind != KEVO_WRITE_ELEMENT || in_inner_loop(c, w[i].t_op))
            continue;
        char text[320];
        size_t on;
        const char *op = kevo_rtok_text(m, w[i].t_op, &on);
        int ln = (int)(m->tok[w[i].t_lhs1 - 1].end - m->tok[w[i].t_lhs0].start);
        const char *lhs = m->src + m->tok[w[i].t_lhs0].start;
        /* x[e] lane by lane: x[(e) + lane], an element store the later
         * recipes read like any other */
        int bn = (int)(m->tok[w[i].t_idx0].start - m->tok[w[i].t_lhs0].start);
        int en = (int)(m->tok[w[i].t_idx1 - 2].end - m->tok[w[i].t_idx0 + 1].start);
        const char *e = m->src + m->tok[w[i].t_idx0 + 1].start;
        if (on == 1)
            snprintf(text, sizeof(text), "{ %s %s =", vt, win->tmp); /* the blank after the
                                                                         operator stays */
        else
            snprintf(text, sizeof(text), "{ %s %s = (*(%s *)&%.*s) %.1s", vt, win->tmp, vt, ln, lhs,
                     op);
        error = ins_add(&il, m->tok[w[i].t_lhs0].start, m->tok[w[i].t_op].end, K_REPLACE, text);
        unsigned semi = kevo_recipe_expr_end(m, w[i].t_op + 1, L->t_end);
        if (error == 0 &&
            (size_t)snprintf(text, sizeof(text), " %s %.*s[(%.*s) + %s] = %s[%s]; }", lanes, bn,
                             lhs, en, e, win->lane, win->tmp, win->lane) >= sizeof(text))
            error = kevo_error_set(KEVO_EINVAL, "a store too long for the last window");
        if (error == 0)
            error = ins_add(&il, m->tok[semi].end, 0, K_WRAP_CLOSE + 1, text);
        for (unsigned t = w[i].t_lhs0; t < w[i].t_lhs1; t++)
            skip[t] = true;
    }
    /* a scalar broadcasts as `(e) - zero`: exact for every e (-0.0 too), and
     * GCC folds it away when e is a vector already */
    char close[128];
    snprintf(close, sizeof(close), ") - %s", vz);
    /* wrapped right-hand sides of writes to vector targets */
    for (size_t i = 0; i < nw && error == 0; i++) {
        bool target = (w[i].kind == KEVO_WRITE_SCALAR && w[i].var >= 0 &&
                       (c->varying[w[i].var] || is_reduction_var(c, w[i].var))) ||
                      (w[i].kind == KEVO_WRITE_ELEMENT && range_varying(c, w[i].t_idx0, w[i].t_idx1));
        if (!target)
            continue;
        unsigned e = kevo_recipe_expr_end(m, w[i].t_op + 1, L->t_end);
        if ((error = ins_add(&il, m->tok[w[i].t_op + 1].start, 0, K_WRAP_OPEN, "(")) == 0)
            error = ins_add(&il, m->tok[e - 1].end, 0, K_WRAP_CLOSE, close);
    }
    for (unsigned t = L->t_body; t < L->t_end && error == 0; t++) {
        int v = m->tok[t].var;
        if (in_inner_header(c, t) || (skip && skip[t]))
            continue;
        /* declarations of varying locals: the type and the initialiser */
        if (v >= 0 && m->tok[t].is_decl && c->varying[v]) {
            unsigned k = t;
            while (k > L->t_body && !kevo_rtok_is(m, k, "float"))
                k--;
            if (!kevo_rtok_is(m, k, "float")) {
                error = kevo_error_set(KEVO_ERROR, "recipe bug: no float type for '%s'",
                                       m->var[v].name);
                break;
            }
            error = ins_add(&il, m->tok[k].start, m->tok[k].end, K_REPLACE, vt);
            if (error == 0 && kevo_rtok_is(m, t + 1, "=")) {
                unsigned e = kevo_recipe_expr_end(m, t + 2, L->t_end);
                if ((error = ins_add(&il, m->tok[t + 2].start, 0, K_WRAP_OPEN, "(")) == 0)
                    error = ins_add(&il, m->tok[e - 1].end, 0, K_WRAP_CLOSE, close);
            }
            continue;
        }
        /* reduction variables: their vector accumulators */
        if (v >= 0 && is_reduction_var(c, v)) {
            for (size_t i = 0; i < c->sc.n_red; i++)
                if (c->sc.red_var[i] == v)
                    error = ins_add(&il, m->tok[t].start, m->tok[t].end, K_REPLACE, red_names[i]);
            continue;
        }
        /* contiguous accesses: vector loads and stores, or the register of
         * a promoted one */
        if (v >= 0 && kevo_rtok_is(m, t + 1, "[")) {
            unsigned rb = kevo_rtok_match(m, t + 1);
            const promo *hit = NULL;
            for (size_t q = 0; q < npr && !hit; q++) {
                const kevo_rloop *I = &m->loop[pr[q].loop];
                if (pr[q].var == v && t > I->t_body && t < I->t_end)
                    hit = &pr[q];
            }
            if (hit) {
                error = ins_add(&il, m->tok[t].start, m->tok[rb].end, K_REPLACE, hit->name);
                t = rb;
                continue;
            }
            if (range_varying(c, t + 2, rb)) {
                char open[96];
                snprintf(open, sizeof(open), "(*(%s%s *)&", m->var[v].elem_const ? "const " : "",
                         vt);
                if ((error = ins_add(&il, m->tok[t].start, 0, K_ACC_OPEN, open)) == 0)
                    error = ins_add(&il, m->tok[rb].end, 0, K_ACC_CLOSE, ")");
            }
            continue;
        }
        /* floating literals without the f suffix: float (a double constant
         * does not convert to a float vector) */
        if (m->tok[t].kind == KEVO_CTOK_LITERAL) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            bool fp = false, suffix = n > 0 && (s[n - 1] == 'f' || s[n - 1] == 'F');
            bool hex = n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
            for (size_t i = 0; i < n; i++)
                fp |= s[i] == '.' || (!hex && (s[i] == 'e' || s[i] == 'E'));
            if (fp && !suffix) {
                if ((error = ins_add(&il, m->tok[t].start, 0, K_ACC_OPEN, "((float)")) == 0)
                    error = ins_add(&il, m->tok[t].end, 0, K_ACC_CLOSE, ")");
            }
        }
    }
    free(w);
    free(skip);
    /* the loads before and the stores after each promoting loop */
    for (size_t q = 0; q < npr && error == 0; q++) {
        const kevo_rloop *I = &m->loop[pr[q].loop];
        char text[320];
        const char *xn = m->var[pr[q].var].name;
        int il0 = (int)(m->tok[pr[q].rb].end - m->tok[pr[q].lb].start);
        const char *idx = m->src + m->tok[pr[q].lb].start;
        /* above the loop's pragmas, if any: a pragma must stay right above
         * its loop, on a line of its own */
        unsigned at = m->tok[I->t_for].start;
        bool own_line = I->n_pragmas > 0;
        if (own_line)
            at = kevo_recipe_line_begin(m, m->dir[I->pragmas[0]].start);
        if (at < m->tok[L->t_body].start) {
            /* the loop is the whole (brace-less) body: its pragma lies
             * outside the copied body and is not kept */
            at = m->tok[I->t_for].start;
            own_line = false;
        }
        snprintf(text, sizeof(text), "%s %s = (*(%s *)&%s%.*s);%s", vt, pr[q].name, vt, xn, il0,
                 idx, own_line ? "\n" : " ");
        if ((error = ins_add(&il, at, 0, K_WRAP_OPEN - 1, text)) < 0)
            break;
        if (win) {
            if (kevo_rtok_match(m, pr[q].lb) != pr[q].rb) {
                error =
                    kevo_error_set(KEVO_EINVAL, "a subscript of more than one [] in the window");
                break;
            }
            if ((size_t)snprintf(text, sizeof(text), " %s %s[(%.*s) + %s] = %s[%s];", lanes, xn,
                                 il0 - 2, idx + 1, win->lane, pr[q].name,
                                 win->lane) >= sizeof(text)) {
                error = kevo_error_set(KEVO_EINVAL, "a store too long for the last window");
                break;
            }
        } else
            snprintf(text, sizeof(text), " (*(%s *)&%s%.*s) = %s;", vt, xn, il0, idx, pr[q].name);
        error = ins_add(&il, m->tok[I->t_end - 1].end, 0, K_WRAP_CLOSE + 1, text);
    }
    if (error < 0)
        goto done;
    qsort(il.v, il.n, sizeof(*il.v), ins_cmp);
    unsigned pos = m->tok[L->t_body].start, end = m->tok[L->t_end - 1].end;
    for (size_t i = 0; i < il.n && error == 0; i++) {
        const ins *x = &il.v[i];
        if (x->off < pos) {
            error = kevo_error_set(KEVO_ERROR, "recipe bug: overlapping vector edits");
            break;
        }
        if ((error = kevo_buf_printf(out, "%.*s%s", (int)(x->off - pos), m->src + pos, x->text)) <
            0)
            break;
        pos = x->end > x->off ? x->end : x->off;
    }
    if (error == 0)
        error = kevo_buf_printf(out, "%.*s", (int)(end - pos), m->src + pos);
done:
    free(il.v);
    return error;
}

#define TEXT(a, b) (int)(m->tok[(b)-1].end - m->tok[(a)].start), m->src + m->tok[(a)].start

static int vec_rewrite(kevo_recipe_out *out, const vec_ctx *c, long width)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = c->L;
    kevo_buf b = {0}, ub = {0}, body = {0}, wbody = {0};
    promo *pr = NULL;
    size_t npr = 0;
    char vt[64], je[64], lane[64], vz[96], wexpr[128], bytes[32];
    char names[4 + VEC_MAX_RED][64];
    char red[VEC_MAX_RED][64];
    int error = 0;
    if (c->sc.n_red > VEC_MAX_RED)
        return kevo_error_set(KEVO_EINVAL, "more than %d reductions", VEC_MAX_RED);
    const char *jn = m->var[L->var].name;
    kevo_recipe_fresh_name(vt, sizeof(vt), m, "vf", "", NULL, 0);
    snprintf(names[0], sizeof(names[0]), "%s", vt);
    kevo_recipe_fresh_name(je, sizeof(je), m, jn, "_vend", names, 1);
    snprintf(names[1], sizeof(names[1]), "%s", je);
    size_t nt = 2;
    for (size_t i = 0; i < c->sc.n_red; i++) {
        kevo_recipe_fresh_name(red[i], sizeof(red[i]), m, m->var[c->sc.red_var[i]].name, "_vec",
                               names, nt);
        memcpy(names[nt++], red[i], sizeof(red[i]));
    }
    kevo_recipe_fresh_name(lane, sizeof(lane), m, "lane", "", names, nt);
    snprintf(vz, sizeof(vz), "(%s){0}", vt);
    unsigned ty0 = m->tok[L->t_type0].start, ty1 = m->tok[L->t_type1 - 1].end;
    int tyn = (int)(ty1 - ty0);
    const char *ty = m->src + ty0;
    if (width == 0) {
        snprintf(bytes, sizeof(bytes), "__BIGGEST_ALIGNMENT__");
        snprintf(wexpr, sizeof(wexpr), "(%.*s)(sizeof(%s) / sizeof(float))", tyn, ty, vt);
    } else {
        snprintf(bytes, sizeof(bytes), "%ld", 4 * width);
        snprintf(wexpr, sizeof(wexpr), "%ld", width);
    }
    bool single = L->t_ub1 == L->t_ub0 + 1;
    if (L->cond_op == KEVO_COND_LE)
        error = kevo_buf_printf(&ub, "((%.*s) + 1)", TEXT(L->t_ub0, L->t_ub1));
    else
        error = kevo_buf_printf(&ub, single ? "%.*s" : "(%.*s)", TEXT(L->t_ub0, L->t_ub1));
    if (error < 0 || (error = find_promotions(&pr, &npr, c)) < 0)
        goto done;
    for (size_t q = 0; q < npr; q++) {
        char taken[2 + VEC_MAX_RED + 32][64];
        size_t ntk = 0;
        for (size_t i = 0; i < nt && ntk < sizeof(taken) / sizeof(taken[0]); i++)
            memcpy(taken[ntk++], names[i], sizeof(names[i]));
        for (size_t r = 0; r < q && ntk < sizeof(taken) / sizeof(taken[0]); r++)
            memcpy(taken[ntk++], pr[r].name, sizeof(pr[r].name));
        kevo_recipe_fresh_name(pr[q].name, sizeof(pr[q].name), m, m->var[pr[q].var].name, "_reg",
                               taken, ntk);
    }
    if ((error = vector_body(&body, c, vt, vz, red, pr, npr, NULL)) < 0)
        goto done;
    /* the last window (above): its body, or none when it does not apply */
    char lane0[64], vout[64];
    snprintf(names[nt++], sizeof(names[0]), "%s", lane);
    kevo_recipe_fresh_name(lane0, sizeof(lane0), m, jn, "_lane0", names, nt);
    snprintf(names[nt++], sizeof(names[0]), "%s", lane0);
    kevo_recipe_fresh_name(vout, sizeof(vout), m, "vout", "", names, nt);
    window win = {.lane0 = lane0, .lane = lane, .tmp = vout};
    bool windowed = window_ok(c, pr, npr);
    int werr = windowed ? vector_body(&wbody, c, vt, vz, red, pr, npr, &win) : 0;
    if (werr < 0) {
        if (werr != KEVO_EINVAL) {
            error = werr;
            goto done;
        }
        kevo_error_clear(); /* the scalar columns, then */
        windowed = false;
    }
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    const char *u = kevo_buf_cstr(&ub);
    char lb[256];
    snprintf(lb, sizeof(lb), "(%.*s)", TEXT(L->t_lb0, L->t_lb1));
    error = kevo_buf_printf(
        &b,
        "{\n%.*s    typedef float %s __attribute__((vector_size(%s), aligned(4), may_alias));\n"
        "%.*s    const %.*s %s = %s + (%s - %s > 0 ? (%s - %s) / %s * %s : 0);\n",
        (int)il, ind, vt, bytes, (int)il, ind, tyn, ty, je, lb, u, lb, u, lb, wexpr, wexpr);
    for (size_t i = 0; i < c->sc.n_red && error == 0; i++)
        error = kevo_buf_printf(&b, "%.*s    %s %s = %s;\n", (int)il, ind, vt, red[i], vz);
    if (error == 0)
        error = kevo_buf_printf(&b, "%.*s    for (%.*s %s = %s; %s < %s; %s += %s) %s%s%s\n",
                                (int)il, ind, tyn, ty, jn, lb, jn, je, jn, wexpr,
                                L->body_compound ? "" : "{ ", kevo_buf_cstr(&body),
                                L->body_compound ? "" : " }");
    for (size_t i = 0; i < c->sc.n_red && error == 0; i++)
        error = kevo_buf_printf(&b,
                                "%.*s    for (%.*s %s = 0; %s < %s; %s++)\n"
                                "%.*s        %s += %s[%s];\n",
                                (int)il, ind, tyn, ty, lane, lane, wexpr, lane, (int)il, ind,
                                m->var[c->sc.red_var[i]].name, red[i], lane);
    if (error == 0 && windowed)
        error =
            kevo_buf_printf(&b,
                            "%.*s    if (%s < %s && %s - %s >= %s) {\n"
                            "%.*s        const %.*s %s = %s - %s;\n"
                            "%.*s        const int %s = (int)(%s - %s);\n"
                            "%.*s        %s%s%s\n"
                            "%.*s    } else\n    ",
                            (int)il, ind, je, u, u, lb, wexpr, (int)il, ind, tyn, ty, jn, u, wexpr,
                            (int)il, ind, lane0, je, jn, (int)il, ind, L->body_compound ? "" : "{ ",
                            kevo_buf_cstr(&wbody), L->body_compound ? "" : " }", (int)il, ind);
    if (error == 0)
        error = kevo_buf_printf(&b, "%.*s    for (%.*s %s = %s; %s < %s; %s++) %.*s\n%.*s}",
                                (int)il, ind, tyn, ty, jn, je, jn, u, jn,
                                TEXT(L->t_body, L->t_end), (int)il, ind);
    if (error == 0)
        error = kevo_cparse_edits_add(&out->edits, m->tok[L->t_for].start,
                                      m->tok[L->t_end - 1].end, "%s", kevo_buf_cstr(&b));
    out->cflags = "-O3 -march=native";
done:
    free(pr);
    kevo_buf_free(&b);
    kevo_buf_free(&ub);
    kevo_buf_free(&body);
    kevo_buf_free(&wbody);
    return error;
}

/* Whether tokens [t0, t1) are one variable named `*_vend`, the end of the
 * vector loop vectorize writes. */
static bool is_vend(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    if (t1 != t0 + 1 || m->tok[t0].var < 0)
        return false;
    const char *name = m->var[m->tok[t0].var].name;
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, "_vend");
}

bool kevo_recipe_vector_tail(const kevo_recipe_model *m, int l)
{
    return is_vend(m, m->loop[l].t_lb0, m->loop[l].t_lb1);
}

bool kevo_recipe_vector_loop(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    return (L->sized_step || (L->strided && L->step > 1)) && is_vend(m, L->t_ub0, L->t_ub1);
}

int kevo_recipe__vectorize_pick(const kevo_recipe_model *m, bool holding_loops)
{
    return kevo_recipe__vectorize_pick_within(m, holding_loops, 0, (unsigned)m->n_tok);
}

int kevo_recipe__vectorize_pick_within(const kevo_recipe_model *m, bool holding_loops,
                                       unsigned t0, unsigned t1)
{
    vec_ctx c = {0};
    int best = -1, best_score = -1;
    for (size_t l = 0; l < m->n_loop; l++) {
        if ((holding_loops && m->loop[l].n_children == 0) || m->loop[l].t_for < t0 ||
            m->loop[l].t_end > t1)
            continue;
        if (!vec_check(&c, m, (int)l))
            continue;
        int score = (m->loop[l].n_children > 0 ? 1000 : 0) + m->loop[l].level;
        if (score > best_score) {
            best = (int)l;
            best_score = score;
        }
    }
    vec_ctx_free(&c);
    return best;
}

int kevo_recipe_vectorize_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                const char *source, const long *params)
{
    (void)source;
    int error = 0;
    vec_ctx c = {0};
    long width = params[1];
    if (width != 0 && width != 4 && width != 8 && width != 16)
        return kevo_error_set(KEVO_EINVAL, "width %ld: 0 (the machine's), 4, 8 or 16", width);
    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    int pick = -1;
    if (params[0] >= 0) {
        if (kevo_recipe_loop_index_check(m, params[0]) < 0)
            return KEVO_EINVAL;
        pick = (int)params[0];
        if (!vec_check(&c, m, pick)) {
            error = kevo_error_set(KEVO_EINVAL, "%s", c.why);
            goto done;
        }
    } else {
        /* the first qualifying loop that holds loops (register blocking),
         * else the deepest qualifying one */
        int best = -1, best_score = -1;
        char first_why[400] = "";
        for (size_t l = 0; l < m->n_loop; l++) {
            if (!vec_check(&c, m, (int)l)) {
                if (!first_why[0])
                    snprintf(first_why, sizeof(first_why), "%s", c.why);
                continue;
            }
            int score = (m->loop[l].n_children > 0 ? 1000 : 0) + m->loop[l].level;
            if (score > best_score) {
                best = (int)l;
                best_score = score;
            }
        }
        if (best < 0) {
            error = kevo_error_set(KEVO_EINVAL, "no loop qualifies; the first: %s", first_why);
            goto done;
        }
        pick = best;
        if (!vec_check(&c, m, pick)) {
            error = kevo_error_set(KEVO_ERROR, "recipe bug: %s", c.why);
            goto done;
        }
    }
    error = vec_rewrite(out, &c, width);
done:
    vec_ctx_free(&c);
    return error;
}
