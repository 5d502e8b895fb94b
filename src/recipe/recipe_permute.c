/*
 * recipe/recipe_permute.c - the `permute` recipe: reorder a loop nest whose
 * only effect is one accumulation, so that the loop along the accumulated
 * element's contiguous index runs innermost, and turn the guards on that
 * loop (`if (ow < 0 || ow >= OW) continue;`, ow affine in it) into its
 * bounds, so that the compiler can vectorise it.
 *
 * The nest it takes: a chain of simple rectangular loops (each body holds
 * at most one loop, as its last statement), every other statement a
 * declaration with an initialiser or a guard `if (cond) continue;`, and in
 * the innermost body one `p[idx] += expr;` (or -=) as the last statement,
 * the only write of the nest, to memory nothing else in the nest reads.
 * Such a nest means "for every point of the iteration box where no guard
 * holds, add expr to p[idx]", in any order; only the rounding of the sums
 * changes, which kevo's correctness gate judges. The transposed
 * convolutions written by their scatter definition are the case it is for:
 * the input's spatial loops sit above the output-channel and kernel loops,
 * so the innermost loop runs over a 3- or 5-tap kernel window with a
 * bounds test on every tap; permuted, it runs along a row of the output.
 *
 * Each declaration and guard moves to the body of the innermost loop it
 * depends on (directly or through other declarations) in the new order.
 * The lane loop (parameter `loop`, -1: the loop of the last term of the
 * accumulated index, through its declarations, whose bounds are not small
 * constants) goes innermost; the other loops keep their order.
 *
 * With `reduce`, the loops that only add into the accumulated element (a
 * convolution's input channels) run innermost instead, under the lane,
 * summing into a scalar that is added once (pick_reduce(): a loop the
 * address divides, `g = c / CG`, is cut in blocks of one quotient); the
 * guards on every position become bounds; with a width, register_block
 * follows in the same step (follow_up()); with reduce 2, acc_row does (the
 * sums of a chunk of positions kept in a row, the summed loops outside it:
 * the form for outputs written a stride apart).
 *
 * With `threads`, the result goes through omp_parallel as part of the same
 * step (follow_up()); otherwise it adds no pragma or flag (omp_parallel,
 * vectorize and the rest apply after it).
 */
#include "model.h"
#include "kevo/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 12
/* The comment above the copy of a nest kept as written beside its permuted
 * form (strides given at run time, not positive): permute declines it. */
#define PERMUTE_AS_WRITTEN "/* kevo permute: as written */"
#define MAX_STMTS 64

enum { ST_DECL, ST_GUARD };

typedef struct pstmt {
    unsigned t0, t1; /* the statement's tokens, `;` included */
    int kind;        /* ST_* */
    int var;         /* ST_DECL: the declared variable */
    unsigned e0, e1; /* ST_DECL: the initialiser; ST_GUARD: the condition */
    unsigned deps;   /* bit k: depends on chain loop k */
    int level;       /* the chain loop whose body holds it */
    bool bound;   /* ST_GUARD: becomes bounds of the lane loop (with `reduce`: of loop bound_k) */
    int bound_k;  /* the chain position whose bounds it becomes */
    bool inlined; /* with `reduce`: written into the accumulated element's address */
} pstmt;

typedef struct pnest {
    const kevo_recipe_model *m;
    int chain[MAX_CHAIN]; /* loop indices, outermost first */
    int n;
    pstmt st[MAX_STMTS];
    int n_st;
    unsigned acc0, acc1; /* the accumulation statement */
    unsigned lhs0, lhs1; /* its lvalue */
    unsigned idx0, idx1; /* the last subscript of the lvalue, inside its brackets */
    int lane;            /* chain position of the loop to run innermost */
    int sink[MAX_CHAIN]; /* chain positions of the loops to move to the bottom, */
    int n_sink;          /* outermost first: the lane last */
    unsigned outer;      /* chain bits of the loops to run outermost */
    unsigned op;         /* the accumulation's operator token (+=, -=, or = for a min/max) */
    bool acc_f32;        /* the accumulated element is a float */
    bool minmax;         /* the accumulation keeps a maximum or minimum: `p[i] = e > p[i] ? e :
                            p[i];` or `p[i] = fmaxf(p[i], e);` (and the minimum forms) */
    unsigned self0[2], self1[2]; /* with minmax: the lvalue's copies in its right-hand side */
    int n_self;
    bool require_bounds; /* decline unless a guard becomes bounds (after expand.c's split) */
    /* with `reduce`: the loops that only add into the accumulated element
     * run innermost, under the lane, summing into a scalar */
    unsigned reduce;             /* chain bits of those loops */
    unsigned strip;              /* those among them the address divides (`g = c / CG`) */
    unsigned divisor[MAX_CHAIN]; /* strip: the divisor's token */
} pnest;

static int chain_pos(const pnest *p, int var)
{
    for (int k = 0; k < p->n; k++)
        if (var >= 0 && p->m->loop[p->chain[k]].var == var)
            return k;
    return -1;
}

static int stmt_of_decl(const pnest *p, int var)
{
    for (int s = 0; s < p->n_st; s++)
        if (p->st[s].kind == ST_DECL && p->st[s].var == var)
            return s;
    return -1;
}

/* The chain loops tokens [t0,t1) depend on, through the nest's declarations. */
static unsigned deps_of(const pnest *p, unsigned t0, unsigned t1)
{
    unsigned d = 0;
    for (unsigned t = t0; t < t1; t++) {
        int v = p->m->tok[t].var;
        if (v < 0)
            continue;
        int k = chain_pos(p, v);
        if (k >= 0)
            d |= 1u << k;
        int s = stmt_of_decl(p, v);
        if (s >= 0)
            d |= p->st[s].deps;
    }
    return d;
}

/* A single token that is a positive integer constant (a literal, or a
 * variable declared from one and never written). */
static bool positive_constant(const kevo_recipe_model *m, unsigned t, long *value)
{
    long x = 0;
    if (!kevo_recipe_int_constant(m, t, &x))
        return false;
    if (value)
        *value = x;
    return x > 0;
}

/* Whether loop l runs a small, known number of times: literal lower
 * bound, a constant upper bound of at most 16. */
static bool short_loop(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    long hi = 0;
    return L->t_lb1 == L->t_lb0 + 1 && m->tok[L->t_lb0].kind == KEVO_CTOK_LITERAL &&
           L->t_ub1 == L->t_ub0 + 1 && positive_constant(m, L->t_ub0, &hi) && hi <= 16;
}

/* ---- the nest ----------------------------------------------------------- */

/* Read the chain below root into p; KEVO_EINVAL with the reason. */
static int read_nest(pnest *p, const kevo_recipe_model *m, int root)
{
    memset(p, 0, sizeof *p);
    p->m = m;
    int l = root;
    for (;;) {
        const kevo_rloop *L = &m->loop[l];
        if (p->n == MAX_CHAIN)
            return kevo_error_set(KEVO_EINVAL, "the nest at line %u is deeper than %d loops",
                                  m->loop[root].line, MAX_CHAIN);
        if (!L->simple)
            return kevo_error_set(KEVO_EINVAL, "%s", L->why[0] ? L->why : "a loop is not simple");
        if (L->n_pragmas > 0)
            return kevo_recipe_pragma_decline(m, "permute", l);
        if (L->early_exit) {
            char why[160];
            return kevo_error_set(KEVO_EINVAL, "%s",
                                  kevo_recipe_early_exit_why(why, sizeof why, L));
        }
        if (L->n_children > 1)
            return kevo_error_set(KEVO_EINVAL,
                                  "the loop at line %u holds %d loops: permute takes a chain of "
                                  "loops, one inside the other",
                                  L->line, L->n_children);
        p->chain[p->n++] = l;
        int child = -1;
        for (size_t k = (size_t)l + 1; k < m->n_loop && L->n_children == 1; k++)
            if (m->loop[k].parent == l) {
                child = (int)k;
                break;
            }
        /* the body's statements */
        unsigned b0 = L->t_body, b1 = L->t_end;
        if (L->body_compound) {
            b0++;
            b1--;
        }
        unsigned t = kevo_rtok_skip_comments(m, b0, b1);
        while (t < b1) {
            if (child >= 0 && t == m->loop[child].t_for) {
                if (kevo_rtok_skip_comments(m, m->loop[child].t_end, b1) != b1)
                    return kevo_error_set(KEVO_EINVAL,
                                          "a statement follows the loop at line %u in its "
                                          "parent's body: permute needs the inner loop last",
                                          m->loop[child].line);
                break;
            }
            if (kevo_rtok_is(m, t, "for") || kevo_rtok_is(m, t, "while") ||
                kevo_rtok_is(m, t, "do") || kevo_rtok_is(m, t, "switch") || kevo_rtok_is(m, t, "{"))
                return kevo_error_set(KEVO_EINVAL,
                                      "line %u: permute takes declarations, `if (...) continue;` "
                                      "guards and one accumulation, not this statement",
                                      kevo_recipe_line(m, m->tok[t].start));
            if (p->n_st == MAX_STMTS)
                return kevo_error_set(KEVO_EINVAL, "the nest has more than %d statements",
                                      MAX_STMTS);
            pstmt *s = &p->st[p->n_st];
            s->t0 = t;
            s->level = p->n - 1;
            if (kevo_rtok_is(m, t, "if")) {
                unsigned lp = t + 1, rp = kevo_rtok_match(m, t + 1);
                if (!kevo_rtok_is(m, lp, "(") || rp == (unsigned)-1 || rp >= b1)
                    return kevo_error_set(KEVO_EINVAL, "line %u: an `if` kevo cannot read",
                                          kevo_recipe_line(m, m->tok[t].start));
                unsigned c = kevo_rtok_skip_comments(m, rp + 1, b1), end;
                bool braced = kevo_rtok_is(m, c, "{");
                if (braced)
                    c = kevo_rtok_skip_comments(m, c + 1, b1);
                if (!kevo_rtok_is(m, c, "continue") || !kevo_rtok_is(m, c + 1, ";"))
                    return kevo_error_set(KEVO_EINVAL,
                                          "line %u: the only `if` permute moves is `if (cond) "
                                          "continue;`",
                                          kevo_recipe_line(m, m->tok[t].start));
                end = c + 2;
                if (braced) {
                    end = kevo_rtok_skip_comments(m, end, b1);
                    if (!kevo_rtok_is(m, end, "}"))
                        return kevo_error_set(KEVO_EINVAL,
                                              "line %u: the guard's block holds more than "
                                              "`continue;`",
                                              kevo_recipe_line(m, m->tok[t].start));
                    end++;
                }
                if (kevo_rtok_is(m, kevo_rtok_skip_comments(m, end, b1), "else"))
                    return kevo_error_set(KEVO_EINVAL, "line %u: a guard with an else",
                                          kevo_recipe_line(m, m->tok[t].start));
                s->kind = ST_GUARD;
                s->var = -1;
                s->e0 = lp + 1;
                s->e1 = rp;
                s->t1 = end;
            } else {
                unsigned semi = kevo_rtok_stmt_semi(m, t, b1);
                if (semi >= b1)
                    return kevo_error_set(KEVO_EINVAL, "line %u: a statement kevo cannot read",
                                          kevo_recipe_line(m, m->tok[t].start));
                unsigned d = 0;
                int decl = kevo_recipe_sole_decl(m, t, semi, &d);
                bool last = child < 0 && kevo_rtok_skip_comments(m, semi + 1, b1) == b1;
                if (decl == -1 && last) {
                    p->acc0 = t;
                    p->acc1 = semi + 1;
                    break;
                }
                if (decl < 0 || !kevo_rtok_is(m, d + 1, "="))
                    return kevo_error_set(KEVO_EINVAL,
                                          "line %u: permute moves declarations with one "
                                          "initialised name, guards and one accumulation, not "
                                          "this statement",
                                          kevo_recipe_line(m, m->tok[t].start));
                s->kind = ST_DECL;
                s->var = decl;
                s->e0 = d + 2;
                s->e1 = semi;
                s->t1 = semi + 1;
            }
            s->deps = deps_of(p, s->e0, s->e1);
            p->n_st++;
            t = kevo_rtok_skip_comments(m, s->t1, b1);
        }
        if (child < 0)
            break;
        l = child;
    }
    if (p->acc1 == 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the innermost loop of the nest at line %u does not end in an "
                              "accumulation `p[i] += e;`",
                              m->loop[root].line);
    if (p->n < 2)
        return kevo_error_set(KEVO_EINVAL, "the nest at line %u has one loop: nothing to permute",
                              m->loop[root].line);
    /* the declarations' own dependencies are complete only now for those
     * that use later ones: none can (C scope), but the deps of a guard or
     * declaration are recomputed in order to be sure */
    for (int s = 0; s < p->n_st; s++)
        p->st[s].deps = deps_of(p, p->st[s].e0, p->st[s].e1);
    return 0;
}

/* Identifiers that may be called in the nest: pure maths. */
static bool pure_call(const kevo_recipe_model *m, unsigned t)
{
    static const char *const ok[] = {"fminf", "fmaxf", "fabsf", "sqrtf", "expf",  "logf",
                                     "tanhf", "fmin",  "fmax",  "fabs",  "sqrt",  "exp",
                                     "log",   "tanh",  "erff",  "powf",  "sizeof"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (kevo_rtok_is(m, t, ok[i]))
            return true;
    return false;
}

/* Whether the write w, `p[i] = RHS;` ending at the accumulation's `;`,
 * keeps a maximum or a minimum of p[i] and one expression e: `e > p[i] ? e
 * : p[i]`, `p[i] < e ? e : p[i]` (any of < <= > >=, the branch taken when
 * the comparison holds being e), or fmaxf/fminf/fmax/fmin of p[i] and e.
 * Such updates give the same value in any order (but for the sign of a
 * zero and which NaN stays), as a sum does up to rounding. Records the
 * lvalue's copies in the right-hand side. */
static bool minmax_update(pnest *p, const kevo_rwrite *w)
{
    const kevo_recipe_model *m = p->m;
    if (!kevo_rtok_is(m, w->t_op, "="))
        return false;
    unsigned r0 = w->t_op + 1, r1 = p->acc1 - 1; /* without the `;` */
    unsigned l0 = w->t_lhs0, l1 = w->t_lhs1;
    kevo_rtok_strip_parens(m, &r0, &r1);
    if (r1 <= r0)
        return false;
    unsigned q = kevo_rtok_find_top(m, r0, r1, "?");
    if (q == r1) { /* fmaxf(a, b) */
        if (!(kevo_rtok_is(m, r0, "fmaxf") || kevo_rtok_is(m, r0, "fminf") ||
              kevo_rtok_is(m, r0, "fmax") || kevo_rtok_is(m, r0, "fmin")) ||
            !kevo_rtok_is(m, r0 + 1, "(") || kevo_rtok_match(m, r0 + 1) != r1 - 1)
            return false;
        unsigned c = kevo_rtok_find_top(m, r0 + 2, r1 - 1, ",");
        if (c == r1 - 1)
            return false;
        unsigned a0 = r0 + 2, a1 = c, b0 = c + 1, b1 = r1 - 1;
        kevo_rtok_strip_parens(m, &a0, &a1);
        kevo_rtok_strip_parens(m, &b0, &b1);
        if (kevo_rtok_same(m, a0, a1, l0, l1)) {
            p->self0[0] = a0;
            p->self1[0] = a1;
        } else if (kevo_rtok_same(m, b0, b1, l0, l1)) {
            p->self0[0] = b0;
            p->self1[0] = b1;
        } else
            return false;
        p->n_self = 1;
        p->minmax = true;
        return true;
    }
    unsigned c = kevo_rtok_find_top(m, q + 1, r1, ":");
    if (c == r1 || kevo_rtok_find_top(m, c + 1, r1, "?") != r1)
        return false;
    unsigned x0 = r0, x1 = q, t0 = q + 1, t1 = c, f0 = c + 1, f1 = r1;
    kevo_rtok_strip_parens(m, &x0, &x1);
    kevo_rtok_strip_parens(m, &t0, &t1);
    kevo_rtok_strip_parens(m, &f0, &f1);
    unsigned op = x1;
    int n_ops = 0;
    int depth = 0;
    for (unsigned t = x0; t < x1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
            depth--;
        else if (depth == 0 && (kevo_rtok_is(m, t, "<") || kevo_rtok_is(m, t, "<=") ||
                                kevo_rtok_is(m, t, ">") || kevo_rtok_is(m, t, ">=") ||
                                kevo_rtok_is(m, t, "&&") || kevo_rtok_is(m, t, "||") ||
                                kevo_rtok_is(m, t, "==") || kevo_rtok_is(m, t, "!="))) {
            op = t;
            n_ops++;
        }
    }
    if (n_ops != 1 || kevo_rtok_is(m, op, "&&") || kevo_rtok_is(m, op, "||") ||
        kevo_rtok_is(m, op, "==") || kevo_rtok_is(m, op, "!="))
        return false;
    unsigned a0 = x0, a1 = op, b0 = op + 1, b1 = x1;
    kevo_rtok_strip_parens(m, &a0, &a1);
    kevo_rtok_strip_parens(m, &b0, &b1);
    /* the comparison names the element on one side and e on the other; the
     * true branch is e, the false one the element */
    bool left_self = kevo_rtok_same(m, a0, a1, l0, l1);
    bool right_self = kevo_rtok_same(m, b0, b1, l0, l1);
    if (left_self == right_self || !kevo_rtok_same(m, f0, f1, l0, l1))
        return false;
    unsigned e0 = left_self ? b0 : a0, e1 = left_self ? b1 : a1;
    if (!kevo_rtok_same(m, t0, t1, e0, e1) || kevo_rtok_same(m, e0, e1, l0, l1))
        return false;
    p->self0[0] = left_self ? a0 : b0;
    p->self1[0] = left_self ? a1 : b1;
    p->self0[1] = f0;
    p->self1[1] = f1;
    p->n_self = 2;
    p->minmax = true;
    return true;
}

/* The dependence conditions: the accumulation is the nest's only write, to
 * memory nothing else in it reads; bounds are rectangular. */
static int check_effects(pnest *p)
{
    const kevo_recipe_model *m = p->m;
    const kevo_rloop *R = &m->loop[p->chain[0]];
    int error;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if ((error = kevo_recipe_writes(&w, &nw, m, R->t_body, R->t_end)) < 0)
        return error;
    int acc = -1;
    for (size_t i = 0; i < nw && error == 0; i++) {
        if (w[i].kind == KEVO_WRITE_SCALAR && chain_pos(p, w[i].var) >= 0 && w[i].t_op < p->acc0)
            continue; /* an inner loop's increment (simple: the body does not write it) */
        if (w[i].t_op >= p->acc0 && w[i].t_op < p->acc1 && acc < 0 &&
            w[i].kind == KEVO_WRITE_ELEMENT &&
            (kevo_rtok_is(m, w[i].t_op, "+=") || kevo_rtok_is(m, w[i].t_op, "-=") ||
             minmax_update(p, &w[i])) &&
            w[i].t_lhs0 == kevo_rtok_skip_comments(m, p->acc0, p->acc1)) {
            acc = (int)i;
            continue;
        }
        error = kevo_error_set(KEVO_EINVAL,
                               "line %u writes %s: permute takes a nest whose only write is one "
                               "accumulation `p[i] += e;` (or a maximum or minimum kept in p[i]) "
                               "in the innermost loop",
                               kevo_recipe_line(m, m->tok[w[i].t_op].start),
                               w[i].var >= 0 ? m->var[w[i].var].name : "memory");
    }
    if (error == 0 && acc < 0)
        error = kevo_error_set(KEVO_EINVAL,
                               "line %u is not an accumulation `p[i] += e;` (nor a maximum or "
                               "minimum kept in p[i])",
                               kevo_recipe_line(m, m->tok[p->acc0].start));
    if (error < 0) {
        free(w);
        return error;
    }
    p->lhs0 = w[acc].t_lhs0;
    p->lhs1 = w[acc].t_lhs1;
    p->op = w[acc].t_op;
    p->acc_f32 = w[acc].var >= 0 && m->var[w[acc].var].elem_f32;
    int target = kevo_recipe_root_param(m, w[acc].var);
    unsigned last_close = w[acc].t_idx1 - 1;
    unsigned open = kevo_rtok_match(m, last_close);
    free(w);
    if (target < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "line %u: kevo cannot tell which parameter the accumulation "
                              "writes",
                              kevo_recipe_line(m, m->tok[p->acc0].start));
    if (open == (unsigned)-1 || !kevo_rtok_is(m, last_close, "]"))
        return kevo_error_set(KEVO_EINVAL, "line %u: an lvalue kevo cannot read",
                              kevo_recipe_line(m, m->tok[p->acc0].start));
    p->idx0 = open + 1;
    p->idx1 = last_close;
    /* what the nest reads: no pointer of unknown origin, none into the
     * accumulated buffer outside the lvalue and the declarations of
     * pointers into it; calls only to pure maths */
    for (unsigned t = R->t_lparen; t < R->t_end; t++) {
        if (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "(") && m->tok[t].var < 0 &&
            !pure_call(m, t))
            return kevo_error_set(KEVO_EINVAL, "line %u calls %.*s: permute moves pure code only",
                                  kevo_recipe_line(m, m->tok[t].start),
                                  (int)(m->tok[t].end - m->tok[t].start), m->src + m->tok[t].start);
        int v = m->tok[t].var;
        if (v < 0 || (m->var[v].vtype != KEVO_VTYPE_POINTER && m->var[v].vtype != KEVO_VTYPE_ARRAY))
            continue;
        int r = kevo_recipe_root_param(m, v);
        if (r < 0)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: kevo cannot tell what '%s' points to (permute "
                                  "reorders only reads of the kernel's parameters)",
                                  kevo_recipe_line(m, m->tok[t].start), m->var[v].name);
        bool self = t >= p->lhs0 && t < p->lhs1;
        for (int k = 0; k < p->n_self; k++)
            self |= t >= p->self0[k] && t < p->self1[k];
        if (r != target || self)
            continue;
        int s = -1;
        for (int k = 0; k < p->n_st; k++)
            if (t >= p->st[k].t0 && t < p->st[k].t1)
                s = k;
        bool decl_into = s >= 0 && p->st[s].kind == ST_DECL &&
                         (m->var[p->st[s].var].vtype == KEVO_VTYPE_POINTER) &&
                         kevo_recipe_root_param(m, p->st[s].var) == target;
        if (!decl_into)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u reads '%s', which the accumulation writes: permute "
                                  "would change what it reads",
                                  kevo_recipe_line(m, m->tok[t].start), m->var[v].name);
    }
    /* rectangular: no header names a chain variable or a nest declaration */
    for (int k = 0; k < p->n; k++) {
        const kevo_rloop *L = &m->loop[p->chain[k]];
        unsigned ranges[2][2] = {{L->t_lb0, L->t_lb1}, {L->t_ub0, L->t_ub1}};
        for (int r = 0; r < 2; r++)
            for (unsigned t = ranges[r][0]; t < ranges[r][1]; t++) {
                int v = m->tok[t].var;
                if (v >= 0 && (chain_pos(p, v) >= 0 || stmt_of_decl(p, v) >= 0))
                    return kevo_error_set(KEVO_EINVAL,
                                          "the bounds of the loop at line %u use '%s', set in "
                                          "the nest: permute takes rectangular nests",
                                          L->line, m->var[v].name);
            }
    }
    for (int s = 0; s < p->n_st; s++)
        if (p->st[s].kind == ST_GUARD && p->st[s].deps == 0)
            return kevo_error_set(KEVO_EINVAL,
                                  "the guard at line %u depends on no loop of the nest",
                                  kevo_recipe_line(m, m->tok[p->st[s].t0].start));
    return 0;
}

/* The chain position of the loop to run innermost: scanning the accumulated
 * subscript's top-level terms from the last, the first term naming (through
 * the declarations) a loop that is not short; among several, the deepest.
 * `outermost`: the outermost loop that the unscaled terms at the end of the
 * subscript name (iw in a scatter's `... * OW + iw + kw`, the kernel width
 * given at run time), else as without it. -1 when none. */
static int pick_lane(const pnest *p, bool outermost)
{
    const kevo_recipe_model *m = p->m;
    unsigned end = p->idx1;
    unsigned unit = 0; /* `outermost`: the loops the unscaled last terms name */
    while (end > p->idx0) {
        int depth = 0;
        unsigned start = end;
        while (start > p->idx0) {
            unsigned t = start - 1;
            if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
                depth++;
            else if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
                depth--;
            else if (depth == 0 && (kevo_rtok_is(m, t, "+") || kevo_rtok_is(m, t, "-")))
                break;
            start = t;
        }
        unsigned d = deps_of(p, start, end);
        bool scaled = false; /* a `*` or `/` at the term's top level */
        for (unsigned t = start, dp = 0; t < end; t++) {
            if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
                dp++;
            else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
                dp--;
            else if (dp == 0 && (kevo_rtok_is(m, t, "*") || kevo_rtok_is(m, t, "/")))
                scaled = true;
        }
        if (outermost && !scaled) {
            unit |= d;
        } else {
            if (outermost && unit)
                break;
            for (int k = p->n - 1; k >= 0; k--)
                if ((d >> k & 1u) && !short_loop(m, p->chain[k]))
                    return k;
        }
        if (start == p->idx0)
            break;
        end = start - 1;
    }
    for (int k = 0; k < p->n; k++)
        if ((unit >> k & 1u) && !short_loop(m, p->chain[k]))
            return k;
    return -1;
}

/* The leaf terms of the index [t0,t1): its top-level terms, and those of a
 * parenthesised sum scaled by a factor (`(od * OH + oh) * OW`), each handed
 * to fn with its tokens, most significant first. */
static void index_leaves(const pnest *p, unsigned t0, unsigned t1,
                         void (*fn)(pnest *, unsigned, unsigned), pnest *ctx, int depth)
{
    const kevo_recipe_model *m = p->m;
    unsigned a = t0;
    while (a < t1) {
        unsigned b = a + 1;
        int dp = 0;
        for (; b < t1; b++) {
            if (kevo_rtok_is(m, b, "(") || kevo_rtok_is(m, b, "["))
                dp++;
            else if (kevo_rtok_is(m, b, ")") || kevo_rtok_is(m, b, "]"))
                dp--;
            else if (dp == 0 && (kevo_rtok_is(m, b, "+") || kevo_rtok_is(m, b, "-")) &&
                     kevo_rtok_binary_sign(m, b, t0))
                break;
        }
        unsigned s0 = a, s1 = b;
        if (s0 > t0 || kevo_rtok_is(m, s0, "+") || kevo_rtok_is(m, s0, "-"))
            s0++; /* the sign */
        /* `( S ) * X` or `X * ( S )`, X one token */
        unsigned in0 = 0, in1 = 0;
        if (s1 > s0 + 2 && kevo_rtok_is(m, s0, "(") && kevo_rtok_match(m, s0) == s1 - 3 &&
            kevo_rtok_is(m, s1 - 2, "*")) {
            in0 = s0 + 1;
            in1 = s1 - 3;
        } else if (s1 > s0 + 2 && kevo_rtok_is(m, s1 - 1, ")") &&
                   kevo_rtok_match(m, s1 - 1) == s0 + 2 && kevo_rtok_is(m, s0 + 1, "*")) {
            in0 = s0 + 3;
            in1 = s1 - 1;
        } else if (s1 > s0 + 1 && kevo_rtok_is(m, s0, "(") && kevo_rtok_match(m, s0) == s1 - 1) {
            in0 = s0 + 1;
            in1 = s1 - 1;
        }
        if (in1 > in0 && depth < 8)
            index_leaves(p, in0, in1, fn, ctx, depth + 1);
        else if (s1 > s0)
            fn(ctx, s0, s1);
        a = b;
    }
}

/* A leaf of the accumulated index that names a short loop (a kernel tap)
 * and long ones (a position of the input): the long ones join the loops to
 * sink, once each, in the order of the index. */
static void scatter_leaf(pnest *p, unsigned t0, unsigned t1)
{
    unsigned d = deps_of(p, t0, t1);
    bool tap = false;
    for (int k = 0; k < p->n; k++)
        tap |= (d >> k & 1u) && short_loop(p->m, p->chain[k]);
    if (!tap)
        return;
    for (int k = 0; k < p->n; k++) {
        if (!(d >> k & 1u) || short_loop(p->m, p->chain[k]))
            continue;
        bool have = false;
        for (int i = 0; i < p->n_sink; i++)
            have |= p->sink[i] == k;
        if (!have && p->n_sink < MAX_CHAIN)
            p->sink[p->n_sink++] = k;
    }
}

/* The loops to sink: with `scatter`, the input positions of a scatter (long
 * loops sharing an index leaf with a kernel tap), when the lane is the last
 * of them; else the lane alone. */
static void pick_sink(pnest *p, bool scatter)
{
    p->n_sink = 0;
    if (scatter)
        index_leaves(p, p->idx0, p->idx1, scatter_leaf, p, 0);
    if (p->n_sink == 0 || p->sink[p->n_sink - 1] != p->lane) {
        p->sink[0] = p->lane;
        p->n_sink = 1;
    }
}

/* Whether the operator at t only divides what comes before it. */
static bool divides(const kevo_recipe_model *m, unsigned t)
{
    return kevo_rtok_is(m, t, "/") || kevo_rtok_is(m, t, "%");
}

/* The chain loops whose iterations tokens [t0,t1) tell apart: deps_of,
 * without a use that only divides (`g = c / CG`: several c, one g). */
static unsigned select_deps(const pnest *p, unsigned t0, unsigned t1, int depth)
{
    const kevo_recipe_model *m = p->m;
    unsigned d = 0;
    for (unsigned t = t0; t < t1; t++) {
        if (kevo_rtok_is(m, t, "(")) {
            unsigned c = kevo_rtok_match(m, t);
            if (c != (unsigned)-1 && c + 1 < t1 && divides(m, c + 1)) {
                t = c;
                continue;
            }
        }
        int v = m->tok[t].var;
        if (v < 0 || (t + 1 < t1 && divides(m, t + 1)))
            continue;
        int k = chain_pos(p, v);
        if (k >= 0)
            d |= 1u << k;
        int s = stmt_of_decl(p, v);
        if (s >= 0 && depth < 8)
            d |= select_deps(p, p->st[s].e0, p->st[s].e1, depth + 1);
    }
    return d;
}

/* With `outer`: the loops that select the accumulated element (its
 * address tells their iterations apart) and are not kernel taps run
 * outermost, above the loops that only add into it (the input channels):
 * iterations of the outer ones write apart, which is what omp_parallel
 * then runs in threads. */
static void pick_outer(pnest *p, bool outer)
{
    p->outer = 0;
    if (!outer)
        return;
    unsigned sel = select_deps(p, p->lhs0, p->lhs1, 0);
    for (int k = 0; k < p->n; k++)
        if ((sel >> k & 1u) && !short_loop(p->m, p->chain[k]))
            p->outer |= 1u << k;
}

/* ---- with `reduce`: the loops that only add into the element ---------- */

/* Whether the use of a variable at t (in an expression starting at t0) is
 * `v / D` as a whole operand: D one name or literal, nothing that binds
 * tighter than `/` on its left (`x * c / D` is `(x * c) / D`). For c in
 * [c0, c0 + D), c0 a multiple of D, such a use holds one value. The
 * divisor's token into *d. */
static bool divided_use(const pnest *p, unsigned t, unsigned t0, unsigned *d)
{
    const kevo_recipe_model *m = p->m;
    if (t + 2 >= m->n_tok || !kevo_rtok_is(m, t + 1, "/"))
        return false;
    unsigned dt = t + 2;
    if (m->tok[dt].kind != KEVO_CTOK_IDENT && m->tok[dt].kind != KEVO_CTOK_LITERAL)
        return false;
    if (dt + 1 < m->n_tok && (kevo_rtok_is(m, dt + 1, "(") || kevo_rtok_is(m, dt + 1, "[") ||
                              kevo_rtok_is(m, dt + 1, "->") || kevo_rtok_is(m, dt + 1, ".")))
        return false;
    if (t > t0) {
        static const char *const ok[] = {"(", "[",  ",",  "=",  "?",  ":",  "<",
                                         ">", "<=", ">=", "==", "!=", "&&", "||"};
        unsigned q = t - 1;
        bool fine = (kevo_rtok_is(m, q, "+") || kevo_rtok_is(m, q, "-")) && kevo_rtok_binary_sign(m, q, t0);
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
            fine |= kevo_rtok_is(m, q, ok[i]);
        if (!fine)
            return false;
    }
    *d = dt;
    return true;
}

/* Whether tokens d1 and d2 name the same invariant divisor. */
static bool same_divisor(const pnest *p, unsigned d1, unsigned d2)
{
    const kevo_recipe_model *m = p->m;
    return m->tok[d1].var == m->tok[d2].var && kevo_rtok_same(m, d1, d1 + 1, d2, d2 + 1);
}

/* Whether tokens [a,b) use strip loop k only as `c / D` (one D for the
 * loop, recorded in p->divisor[k]), directly or through declarations that
 * do the same. */
static bool block_uses(pnest *p, unsigned a, unsigned b, int k)
{
    const kevo_recipe_model *m = p->m;
    int cv = m->loop[p->chain[k]].var;
    for (unsigned t = a; t < b; t++) {
        int v = m->tok[t].var;
        if (v < 0)
            continue;
        if (v == cv) {
            unsigned d;
            if (!divided_use(p, t, a, &d))
                return false;
            if (p->divisor[k] == (unsigned)-1)
                p->divisor[k] = d;
            else if (!same_divisor(p, p->divisor[k], d))
                return false;
            continue;
        }
        int s = stmt_of_decl(p, v);
        if (s >= 0 && (p->st[s].deps >> k & 1u) &&
            (select_deps(p, p->st[s].e0, p->st[s].e1, 0) >> k & 1u))
            return false; /* a declaration that holds c itself */
    }
    return true;
}

/* With `reduce`: the loops that only add into the accumulated element (its
 * address does not tell their iterations apart) run innermost, below the
 * lane, into a scalar. One whose variable the address divides (`g = c /
 * CG`) is strip-mined: blocks of D iterations from 0 (each block one g)
 * run where the selecting loops run, the iterations of a block innermost. */
static int pick_reduce(pnest *p)
{
    const kevo_recipe_model *m = p->m;
    unsigned sel = select_deps(p, p->lhs0, p->lhs1, 0), all = deps_of(p, p->lhs0, p->lhs1);
    unsigned sunk = 0;
    for (int i = 0; i < p->n_sink; i++)
        sunk |= 1u << p->sink[i];
    p->reduce = p->strip = 0;
    for (int k = 0; k < p->n; k++) {
        p->divisor[k] = (unsigned)-1;
        if (!(sel >> k & 1u) && !(sunk >> k & 1u))
            p->reduce |= 1u << k;
    }
    if (p->reduce == 0)
        return kevo_error_set(KEVO_EINVAL,
                              "every loop of the nest at line %u selects the accumulated element "
                              "or runs along it: no loop only adds into it (reduce)",
                              m->loop[p->chain[0]].line);
    if (!p->acc_f32)
        return kevo_error_set(KEVO_EINVAL,
                              "line %u accumulates into what is not a float: reduce sums floats",
                              kevo_recipe_line(m, m->tok[p->acc0].start));
    for (int k = 0; k < p->n; k++) {
        if (!(p->reduce >> k & 1u) || !(all >> k & 1u))
            continue;
        const kevo_rloop *L = &m->loop[p->chain[k]];
        if (L->cond_op != KEVO_COND_LT || L->t_lb1 != L->t_lb0 + 1 ||
            !kevo_rtok_is(m, L->t_lb0, "0"))
            return kevo_error_set(KEVO_EINVAL,
                                  "the accumulated element's address divides the variable of the "
                                  "loop at line %u, which does not run from 0 with `<`: reduce "
                                  "cannot cut it in blocks of one quotient",
                                  L->line);
        bool ok = block_uses(p, p->lhs0, p->lhs1, k);
        for (int s = 0; ok && s < p->n_st; s++)
            if ((p->st[s].deps >> k & 1u) &&
                !(select_deps(p, p->st[s].e0, p->st[s].e1, 0) >> k & 1u))
                ok = block_uses(p, p->st[s].e0, p->st[s].e1, k);
        unsigned d = p->divisor[k];
        if (ok && d != (unsigned)-1) {
            int dv = m->tok[d].var;
            if (m->tok[d].kind == KEVO_CTOK_LITERAL)
                ok = positive_constant(m, d, NULL);
            else
                ok = dv >= 0 && m->var[dv].vtype == KEVO_VTYPE_INT && chain_pos(p, dv) < 0 &&
                     stmt_of_decl(p, dv) < 0;
        }
        if (!ok || d == (unsigned)-1)
            return kevo_error_set(KEVO_EINVAL,
                                  "the accumulated element's address uses '%s' (loop at line %u) "
                                  "otherwise than as `%s / D` with one invariant D: reduce "
                                  "cannot sum over it",
                                  m->var[L->var].name, L->line, m->var[L->var].name);
        p->strip |= 1u << k;
    }
    return 0;
}

/* ---- guards to bounds ----------------------------------------------------- */

typedef struct bound {
    bool lower;   /* lane >= ceil(num / s), else lane < ceil(num / s) */
    kevo_buf num; /* the numerator's text */
    char s[64];   /* the positive constant's text */
    int rvar;     /* s is this integer parameter (positive only where checked), or -1 */
} bound;

static void text_of(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    for (unsigned t = t0; t < t1; t++)
        if (!kevo_rtok_comment(m, t))
            kevo_buf_printf(b, "%s%.*s", t > t0 ? " " : "", (int)(m->tok[t].end - m->tok[t].start),
                            m->src + m->tok[t].start);
}

/* Whether every name in [t0,t1) is an integer variable and every literal an
 * integer. */
static bool integer_tokens(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    for (unsigned t = t0; t < t1; t++) {
        if (m->tok[t].kind == KEVO_CTOK_LITERAL) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            if (strcspn(s, ".eEfFxX'\"") < n && !(n > 1 && s[0] == '0' && (s[1] | 32) == 'x'))
                return false;
        } else if (m->tok[t].kind == KEVO_CTOK_IDENT) {
            int v = m->tok[t].var;
            if (v < 0 || m->var[v].vtype != KEVO_VTYPE_INT)
                return false;
        } else if (m->tok[t].kind == KEVO_CTOK_KEYWORD)
            return false;
    }
    return true;
}

/* Whether token t names an integer parameter of the kernel that the
 * kernel never writes (a stride given at run time). */
static bool unwritten_int_param(const kevo_recipe_model *m, unsigned t)
{
    int v = m->tok[t].var;
    return v >= 0 && m->var[v].is_param && m->var[v].vtype == KEVO_VTYPE_INT &&
           !kevo_recipe_var_written(m, v);
}

/* E in [e0,e1) as lane * S + R: R's text into *rest, S's into s. S is a
 * positive constant, or, where rvar is given, an integer parameter the
 * kernel never writes (its variable into *rvar; the caller runs the
 * bounds only where it is positive). */
static bool affine_in(const pnest *p, unsigned e0, unsigned e1, int lane_var, kevo_buf *rest,
                      char *s, size_t s_len, int depth, int *rvar)
{
    const kevo_recipe_model *m = p->m;
    unsigned lane_bit = 1u << p->lane;
    while (e1 > e0 && kevo_rtok_comment(m, e1 - 1))
        e1--;
    e0 = kevo_rtok_skip_comments(m, e0, e1);
    if (e1 == e0 + 1 && depth < 4) {
        int d = stmt_of_decl(p, m->tok[e0].var);
        if (d >= 0 && (p->st[d].deps & lane_bit))
            return affine_in(p, p->st[d].e0, p->st[d].e1, lane_var, rest, s, s_len, depth + 1,
                             rvar);
    }
    if (e1 > e0 && kevo_rtok_is(m, e0, "(") && kevo_rtok_match(m, e0) == e1 - 1)
        return affine_in(p, e0 + 1, e1 - 1, lane_var, rest, s, s_len, depth, rvar);
    if (!integer_tokens(m, e0, e1))
        return false;
    bool found = false;
    kevo_buf_puts(rest, "(0");
    unsigned a = e0;
    while (a < e1) {
        /* the term [t0, b): after the binary sign at a, or from e0 with its unary sign */
        bool minus;
        unsigned t0, b;
        if (!kevo_rtok_sum_term(m, e0, e1, a, &t0, &b, &minus))
            return false;
        unsigned d = deps_of(p, t0, b);
        bool names_lane = kevo_recipe_uses_var(m, t0, b, lane_var);
        if (d & lane_bit) {
            if (!names_lane || found || minus)
                return false;
            /* lane, lane * S, S * lane, S a single positive constant */
            if (b == t0 + 1 && m->tok[t0].var == lane_var)
                snprintf(s, s_len, "1");
            else if (b == t0 + 3 && kevo_rtok_is(m, t0 + 1, "*") &&
                     (m->tok[t0].var == lane_var || m->tok[t0 + 2].var == lane_var)) {
                unsigned st = m->tok[t0].var == lane_var ? t0 + 2 : t0;
                if (m->tok[st].var == lane_var)
                    return false;
                if (!positive_constant(m, st, NULL)) {
                    if (!rvar || !unwritten_int_param(m, st) ||
                        (*rvar >= 0 && *rvar != m->tok[st].var))
                        return false;
                    *rvar = m->tok[st].var;
                }
                snprintf(s, s_len, "%.*s", (int)(m->tok[st].end - m->tok[st].start),
                         m->src + m->tok[st].start);
            } else
                return false;
            found = true;
        } else {
            kevo_buf_puts(rest, minus ? " - (" : " + (");
            text_of(rest, m, t0, b);
            kevo_buf_puts(rest, ")");
        }
        a = b;
    }
    kevo_buf_puts(rest, ")");
    return found;
}

/* The guard st as bounds of the lane loop: one bound per disjunct of its
 * condition. False (nothing added) when some disjunct is not `E op X` with
 * E affine in the lane variable and X free of it. */
static bool guard_bounds(const pnest *p, const pstmt *st, bound *out, int *n_out, int max)
{
    const kevo_recipe_model *m = p->m;
    int lane_var = m->loop[p->chain[p->lane]].var;
    unsigned lane_bit = 1u << p->lane;
    int n0 = *n_out;
    unsigned a = st->e0;
    while (a < st->e1) {
        int dp = 0;
        unsigned b = a;
        for (; b < st->e1; b++) {
            if (kevo_rtok_is(m, b, "(") || kevo_rtok_is(m, b, "["))
                dp++;
            else if (kevo_rtok_is(m, b, ")") || kevo_rtok_is(m, b, "]"))
                dp--;
            else if (dp == 0 && kevo_rtok_is(m, b, "||"))
                break;
        }
        unsigned d0 = kevo_rtok_skip_comments(m, a, b), d1 = b;
        while (d1 > d0 && kevo_rtok_comment(m, d1 - 1))
            d1--;
        while (d1 > d0 && kevo_rtok_is(m, d0, "(") && kevo_rtok_match(m, d0) == d1 - 1) {
            d0++;
            d1--;
        }
        /* one comparison at depth 0 */
        unsigned op = 0;
        int n_ops = 0;
        dp = 0;
        for (unsigned t = d0; t < d1; t++) {
            if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
                dp++;
            else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
                dp--;
            else if (dp == 0 && (kevo_rtok_is(m, t, "<") || kevo_rtok_is(m, t, "<=") ||
                                 kevo_rtok_is(m, t, ">") || kevo_rtok_is(m, t, ">=") ||
                                 kevo_rtok_is(m, t, "&&") || kevo_rtok_is(m, t, "==") ||
                                 kevo_rtok_is(m, t, "!=") || kevo_rtok_is(m, t, "?") ||
                                 kevo_rtok_is(m, t, "!"))) {
                op = t;
                n_ops++;
            }
        }
        if (n_ops != 1 || kevo_rtok_is(m, op, "&&") || kevo_rtok_is(m, op, "==") ||
            kevo_rtok_is(m, op, "!=") || kevo_rtok_is(m, op, "?") || kevo_rtok_is(m, op, "!"))
            goto fail;
        bool lt = kevo_rtok_is(m, op, "<") || kevo_rtok_is(m, op, "<=");
        bool eq = kevo_rtok_is(m, op, "<=") || kevo_rtok_is(m, op, ">=");
        unsigned l_dep = deps_of(p, d0, op) & lane_bit, r_dep = deps_of(p, op + 1, d1) & lane_bit;
        if ((l_dep != 0) == (r_dep != 0))
            goto fail;
        unsigned e0 = d0, e1 = op, x0 = op + 1, x1 = d1;
        if (r_dep) { /* X op E: E flipped-op X */
            e0 = op + 1;
            e1 = d1;
            x0 = d0;
            x1 = op;
            lt = !lt;
        }
        if (!integer_tokens(m, x0, x1) || *n_out == max)
            goto fail;
        bound *bd = &out[*n_out];
        memset(bd, 0, sizeof *bd);
        kevo_buf rest = {0};
        bd->rvar = -1;
        if (!affine_in(p, e0, e1, lane_var, &rest, bd->s, sizeof bd->s, 0,
                       p->reduce ? NULL : &bd->rvar)) {
            kevo_buf_free(&rest);
            goto fail;
        }
        /* skip when E < X (E <= X): run when lane >= ceil((X [+1] - R) / S);
         * skip when E >= X (E > X): run when lane < ceil((X [+1] - R) / S) */
        bd->lower = lt;
        kevo_buf_puts(&bd->num, "(");
        text_of(&bd->num, m, x0, x1);
        /* E <= X skipped: run when E >= X + 1; E > X skipped: run when E < X + 1 */
        kevo_buf_printf(&bd->num, ")%s - %s", lt == eq ? " + 1" : "", kevo_buf_cstr(&rest));
        kevo_buf_free(&rest);
        (*n_out)++;
        a = b < st->e1 ? b + 1 : b;
    }
    return *n_out > n0;
fail:
    for (int i = n0; i < *n_out; i++)
        kevo_buf_free(&out[i].num);
    *n_out = n0;
    return false;
}

/* Whether tokens [t0,t1) read memory, divide or call: work a guard before
 * it may have kept from running out of range. */
static bool guarded_work(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    for (unsigned t = t0; t < t1; t++) {
        if (kevo_rtok_is(m, t, "[") || kevo_rtok_is(m, t, "/") || kevo_rtok_is(m, t, "%") ||
            kevo_rtok_is(m, t, "->") ||
            (kevo_rtok_is(m, t, "(") && t > t0 && m->tok[t - 1].kind == KEVO_CTOK_IDENT))
            return true;
        if (kevo_rtok_is(m, t, "*") && !kevo_rtok_binary_sign(m, t, t0))
            return true;
    }
    return false;
}

/* ---- emitting the permuted nest ------------------------------------------- */

static void indent(kevo_buf *b, const char *ind, size_t il, int level)
{
    kevo_buf_printf(b, "%.*s", (int)il, ind);
    for (int i = 0; i < level; i++)
        kevo_buf_puts(b, "    ");
}

static void emit_stmt(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                      const char *ind, size_t il, int level)
{
    indent(b, ind, il, level);
    kevo_buf_printf(b, "%.*s\n", (int)(m->tok[t1 - 1].end - m->tok[t0].start),
                    m->src + m->tok[t0].start);
}

static void emit_header(kevo_buf *b, const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    kevo_buf_printf(b, "%.*s", (int)(m->tok[L->t_rparen].end - m->tok[L->t_for].start),
                    m->src + m->tok[L->t_for].start);
}

/* Emit tokens [t0,t1) with the variables of the strip loops in `rename`
 * written as their block variables (names[k]), and the declarations
 * marked inlined as their values (subst[s]); the source's spacing kept. */
static void emit_text_renamed(kevo_buf *b, const pnest *p, unsigned t0, unsigned t1,
                              unsigned rename, char names[][64], kevo_buf *subst)
{
    const kevo_recipe_model *m = p->m;
    size_t at = m->tok[t0].start;
    for (unsigned t = t0; t < t1; t++) {
        int v = m->tok[t].var;
        int k = v >= 0 ? chain_pos(p, v) : -1;
        int s = v >= 0 && subst ? stmt_of_decl(p, v) : -1;
        if (k >= 0 && (rename >> k & 1u)) {
            kevo_buf_printf(b, "%.*s%s", (int)(m->tok[t].start - at), m->src + at, names[k]);
            at = m->tok[t].end;
        } else if (s >= 0 && p->st[s].inlined) {
            /* a whole term of a sum takes the value bare (`+ iw + (r)`:
             * vectorize reads it as contiguous); elsewhere in brackets */
            bool bare = (t == t0 || kevo_rtok_is(m, t - 1, "+") || kevo_rtok_is(m, t - 1, "[")) &&
                        t + 1 < m->n_tok &&
                        (kevo_rtok_is(m, t + 1, "]") || kevo_rtok_is(m, t + 1, "+") ||
                         kevo_rtok_is(m, t + 1, "-"));
            kevo_buf_printf(b, "%.*s%s%s%s", (int)(m->tok[t].start - at), m->src + at,
                            bare ? "" : "(", kevo_buf_cstr(&subst[s]), bare ? "" : ")");
            at = m->tok[t].end;
        }
    }
    kevo_buf_printf(b, "%.*s", (int)(m->tok[t1 - 1].end - at), m->src + at);
}

/* With `reduce`: the bounds that loop L (chain position k_loop) takes from
 * its guards (bd[i] where bd_loop[i] == k_loop), as constants that nothing
 * writes, in the body of the loop above, then L's header on them: loop
 * recipes after this one (the jam of register_block) read them as
 * invariant. Fresh names join taken. */
static void emit_const_bounds(kevo_buf *b, const kevo_recipe_model *m, const kevo_rloop *L,
                              int k_loop, const bound *bd, const int *bd_loop, int n_bd,
                              char taken[][64], size_t max_taken, size_t *n_taken_io,
                              const char *ind, size_t il, int level)
{
    size_t n_taken = *n_taken_io;
    const char *lvn = m->var[L->var].name;
    char run[2][64];
    snprintf(run[0], sizeof run[0], "%s", "");
    snprintf(run[1], sizeof run[1], "%s", "");
    for (int k = 0; k < n_bd; k++) {
        if (bd_loop[k] != k_loop)
            continue;
        char name[64], next[64];
        char base[64];
        snprintf(next, sizeof next, "_%d", k);
        snprintf(base, sizeof base, "%.40s_b", lvn);
        kevo_recipe_fresh_name(name, sizeof name, m, base, next, taken, n_taken);
        if (n_taken < max_taken)
            snprintf(taken[n_taken++], sizeof taken[0], "%s", name);
        indent(b, ind, il, level);
        kevo_buf_printf(b,
                        "const long long %s = (long long)(%s) >= 0 ? ((long long)(%s) "
                        "+ %s - 1) / %s : -((-(long long)(%s)) / %s);\n",
                        name, kevo_buf_cstr(&bd[k].num), kevo_buf_cstr(&bd[k].num), bd[k].s,
                        bd[k].s, kevo_buf_cstr(&bd[k].num), bd[k].s);
        int side = bd[k].lower ? 0 : 1;
        char bound_name[64];
        snprintf(next, sizeof next, "_%d", k);
        snprintf(base, sizeof base, "%.40s_%s", lvn, side ? "hi" : "lo");
        kevo_recipe_fresh_name(bound_name, sizeof bound_name, m, base, next, taken, n_taken);
        if (n_taken < max_taken)
            snprintf(taken[n_taken++], sizeof taken[0], "%s", bound_name);
        indent(b, ind, il, level);
        if (!run[side][0]) {
            kevo_buf_printf(b, "const long long %s = (", bound_name);
            if (side == 0)
                text_of(b, m, L->t_lb0, L->t_lb1);
            else
                text_of(b, m, L->t_ub0, L->t_ub1);
            kevo_buf_printf(b, ")%s", side && L->cond_op == KEVO_COND_LE ? " + 1" : "");
            kevo_buf_printf(b, " %s %s ? (", side ? "<" : ">", name);
            if (side == 0)
                text_of(b, m, L->t_lb0, L->t_lb1);
            else
                text_of(b, m, L->t_ub0, L->t_ub1);
            kevo_buf_printf(b, ")%s : %s;\n", side && L->cond_op == KEVO_COND_LE ? " + 1" : "",
                            name);
        } else
            kevo_buf_printf(b, "const long long %s = %s %s %s ? %s : %s;\n", bound_name, run[side],
                            side ? "<" : ">", name, run[side], name);
        snprintf(run[side], sizeof run[side], "%s", bound_name);
    }
    indent(b, ind, il, level);
    kevo_buf_printf(b,
                    "for (%.*s %s = ", (int)(m->tok[L->t_type1 - 1].end - m->tok[L->t_type0].start),
                    m->src + m->tok[L->t_type0].start, lvn);
    if (run[0][0])
        kevo_buf_puts(b, run[0]);
    else
        text_of(b, m, L->t_lb0, L->t_lb1);
    kevo_buf_printf(b, "; %s < ", lvn);
    if (run[1][0])
        kevo_buf_puts(b, run[1]);
    else {
        kevo_buf_puts(b, "(");
        text_of(b, m, L->t_ub0, L->t_ub1);
        kevo_buf_printf(b, ")%s", L->cond_op == KEVO_COND_LE ? " + 1" : "");
    }
    kevo_buf_printf(b, "; %s++) {\n", lvn);
    *n_taken_io = n_taken;
}

#define BLOCK_BIT(k) (1u << (16 + (k)))
#define BLOCK_ENTRY(k) (MAX_CHAIN + (k))

static int permute_nest(kevo_recipe_out *out, pnest *p, bool dry)
{
    const kevo_recipe_model *m = p->m;
    /* order entries: k, chain position k; BLOCK_ENTRY(k), the blocks of
     * strip loop k */
    int order[2 * MAX_CHAIN], pos[2 * MAX_CHAIN], n = 0;
    unsigned sunk = 0;
    for (int i = 0; i < p->n_sink; i++)
        sunk |= 1u << p->sink[i];
    for (int pass = 0; pass < 2; pass++) { /* the outer loops first, then the others */
        for (int k = 0; k < p->n; k++)
            if (!(sunk >> k & 1u) && !(p->reduce >> k & 1u) &&
                (pass == 0) == ((p->outer >> k & 1u) != 0))
                order[n++] = k;
        for (int k = 0; pass == 0 && k < p->n; k++)
            if (p->strip >> k & 1u)
                order[n++] = BLOCK_ENTRY(k);
    }
    for (int i = 0; i < p->n_sink; i++)
        order[n++] = p->sink[i];
    int li = n - 1; /* the lane's entry */
    /* with `reduce`: the loop just above the lane is the one register_block
     * jams into rows; a kernel tap there (a 1-D scatter: 3 iterations) is
     * too short, so the innermost selecting loop (the output channels: the
     * rows then share each vector of the input) goes there instead */
    if (p->reduce && li > 0 && order[li - 1] < MAX_CHAIN &&
        short_loop(m, p->chain[order[li - 1]])) {
        int e = -1;
        for (int i = 0; i < li - 1; i++)
            if (order[i] < MAX_CHAIN && (p->outer >> order[i] & 1u))
                e = i;
        if (e >= 0) {
            int moved_loop = order[e];
            for (int i = e; i < li - 1; i++)
                order[i] = order[i + 1];
            order[li - 1] = moved_loop;
        }
    }
    for (int k = 0; k < p->n; k++)
        if (p->reduce >> k & 1u)
            order[n++] = k;
    for (int i = 0; i < n; i++)
        pos[order[i]] = i;

    bound bd[16];
    int n_bd = 0, bd_loop[16];
    for (int s = 0; s < p->n_st; s++) {
        pstmt *st = &p->st[s];
        st->bound = false;
        st->bound_k = p->lane;
        st->inlined = false;
        if (st->kind != ST_GUARD)
            continue;
        if (!p->reduce) {
            int n0 = n_bd;
            st->bound = (st->deps >> p->lane & 1u) && guard_bounds(p, st, bd, &n_bd, 16);
            for (int i = n0; i < n_bd; i++)
                bd_loop[i] = p->lane;
            continue;
        }
        /* with `reduce`: a guard on the positions, none on the summed
         * loops, becomes bounds of the deepest position it depends on */
        int deepest = -1, kd = -1;
        for (int k = 0; k < p->n; k++)
            if ((st->deps >> k & 1u) && pos[k] > deepest) {
                deepest = pos[k];
                kd = k;
            }
        if ((st->deps & p->reduce) || kd < 0 || !(sunk >> kd & 1u))
            continue;
        int lane = p->lane, n0 = n_bd;
        p->lane = kd;
        st->bound = guard_bounds(p, st, bd, &n_bd, 16);
        p->lane = lane;
        st->bound_k = kd;
        for (int i = n0; i < n_bd; i++)
            bd_loop[i] = kd;
    }
    /* with `reduce`: a declaration along the lane that only the element's
     * address reads, `lane * 1 + r`, is written into the address as `lane
     * + (r)`, so that vectorize sees it contiguous */
    kevo_buf subst[MAX_STMTS];
    memset(subst, 0, sizeof subst);
    int lane_var = m->loop[p->chain[p->lane]].var;
    for (int s = 0; p->reduce && s < p->n_st; s++) {
        pstmt *st = &p->st[s];
        if (st->kind != ST_DECL || !(st->deps >> p->lane & 1u) ||
            !kevo_recipe_uses_var(m, p->lhs0, p->lhs1, st->var) ||
            kevo_recipe_uses_var(m, p->op + 1, p->acc1, st->var) ||
            m->var[st->var].vtype != KEVO_VTYPE_INT)
            continue;
        bool other = false;
        for (int u = 0; u < p->n_st; u++)
            other |= u != s && !p->st[u].bound &&
                     kevo_recipe_uses_var(m, p->st[u].e0, p->st[u].e1, st->var);
        char sc[64] = "";
        kevo_buf rest = {0};
        long one = 0;
        if (!other && affine_in(p, st->e0, st->e1, lane_var, &rest, sc, sizeof sc, 0, NULL)) {
            bool unit = strcmp(sc, "1") == 0;
            for (unsigned t = st->e0; !unit && t < st->e1; t++) {
                size_t tn;
                const char *tx = kevo_rtok_text(m, t, &tn);
                unit = tn == strlen(sc) && memcmp(tx, sc, tn) == 0 &&
                       kevo_recipe_int_constant(m, t, &one) && one == 1;
            }
            if (unit) {
                st->inlined = true;
                kevo_buf_printf(&subst[s], "%s + %s", m->var[lane_var].name, kevo_buf_cstr(&rest));
            }
        }
        kevo_buf_free(&rest);
    }
    /* where each statement goes: the innermost of its loops in the new
     * order (a strip loop's blocks for one that only divides its
     * variable); one that reads memory, divides or calls goes no shallower
     * than a guard before it (which kept it from running out of range) */
    int at[MAX_STMTS];
    unsigned renamed[MAX_STMTS];
    int guard_at = -1;
    for (int s = 0; s < p->n_st; s++) {
        const pstmt *st = &p->st[s];
        unsigned d = st->deps;
        renamed[s] = 0;
        if (d & p->strip) {
            unsigned strict = select_deps(p, st->e0, st->e1, 0);
            for (int k = 0; k < p->n; k++)
                if ((p->strip >> k & 1u) && (d >> k & 1u) && !(strict >> k & 1u)) {
                    d = (d & ~(1u << k)) | BLOCK_BIT(k);
                    renamed[s] |= 1u << k;
                }
        }
        at[s] = -1;
        for (int k = 0; k < p->n; k++) {
            if (d >> k & 1u)
                at[s] = pos[k] > at[s] ? pos[k] : at[s];
            if (d & BLOCK_BIT(k))
                at[s] = pos[BLOCK_ENTRY(k)] > at[s] ? pos[BLOCK_ENTRY(k)] : at[s];
        }
        if (guarded_work(m, st->e0, st->e1) && guard_at > at[s])
            at[s] = guard_at;
        /* no shallower than the declarations it reads (one a guard pushed
         * down takes its readers with it) */
        for (int e = 0; e < s; e++)
            if (p->st[e].kind == ST_DECL && at[e] > at[s] &&
                kevo_recipe_uses_var(m, st->e0, st->e1, p->st[e].var))
                at[s] = at[e];
        if (st->kind == ST_GUARD) {
            int g = st->bound ? pos[st->bound_k] : at[s];
            guard_at = g > guard_at ? g : guard_at;
        }
    }
    if (p->reduce) /* the element's address is taken above the summed loops */
        for (int s = 0; s < p->n_st; s++)
            if (at[s] > li && p->st[s].kind == ST_DECL && !p->st[s].inlined &&
                kevo_recipe_uses_var(m, p->lhs0, p->lhs1, p->st[s].var)) {
                for (int i = 0; i < n_bd; i++)
                    kevo_buf_free(&bd[i].num);
                for (int u = 0; u < p->n_st; u++)
                    kevo_buf_free(&subst[u]);
                return kevo_error_set(KEVO_EINVAL,
                                      "line %u: '%s', which the accumulated element's address "
                                      "uses, would be declared inside the summed loops (a guard "
                                      "on them comes before it)",
                                      kevo_recipe_line(m, m->tok[p->st[s].t0].start),
                                      m->var[p->st[s].var].name);
            }
    if (p->require_bounds && n_bd == 0) {
        for (int s = 0; s < p->n_st; s++)
            kevo_buf_free(&subst[s]);
        return kevo_error_set(KEVO_EINVAL,
                              "no guard on the loop at line %u becomes its bounds: kept in "
                              "memory, the scalar would only cost passes",
                              m->loop[p->chain[p->lane]].line);
    }
    bool moved = p->reduce != 0;
    for (int i = 0; i < n; i++)
        moved |= order[i] != i;
    if (!moved && n_bd == 0) {
        for (int s = 0; s < p->n_st; s++)
            kevo_buf_free(&subst[s]);
        return kevo_error_set(KEVO_EINVAL,
                              "the innermost loop (line %u) already runs along the accumulated "
                              "index and no guard on it becomes bounds",
                              m->loop[p->chain[p->lane]].line);
    }
    if (dry) {
        for (int i = 0; i < n_bd; i++)
            kevo_buf_free(&bd[i].num);
        for (int s = 0; s < p->n_st; s++)
            kevo_buf_free(&subst[s]);
        return 0;
    }

    const kevo_rloop *R = &m->loop[p->chain[0]];
    size_t il = 0;
    const char *ind = kevo_recipe_indent(m, m->tok[R->t_for].start, &il);
    kevo_buf b = {0};
    const kevo_rloop *LL = &m->loop[p->chain[p->lane]];
    kevo_buf_printf(&b, "{ /* kevo permute: the loop at line %u %s%s */\n", LL->line,
                    p->reduce ? "along the element, the loops that only add into it innermost"
                              : "innermost",
                    n_bd ? ", its guards as bounds" : "");
    char lo[64], hi[64], tmp[64], acc[64], taken[4 + MAX_CHAIN + 32][64], blk[MAX_CHAIN][64];
    size_t n_taken = 0;
    const char *lv = m->var[LL->var].name;
    kevo_recipe_fresh_name(lo, sizeof lo, m, lv, "_lo", taken, n_taken);
    snprintf(taken[n_taken++], sizeof taken[0], "%s", lo);
    kevo_recipe_fresh_name(hi, sizeof hi, m, lv, "_hi", taken, n_taken);
    snprintf(taken[n_taken++], sizeof taken[0], "%s", hi);
    kevo_recipe_fresh_name(tmp, sizeof tmp, m, lv, "_b", taken, n_taken);
    snprintf(taken[n_taken++], sizeof taken[0], "%s", tmp);
    kevo_recipe_fresh_name(acc, sizeof acc, m, "acc", "", taken, n_taken);
    snprintf(taken[n_taken++], sizeof taken[0], "%s", acc);
    for (int k = 0; k < p->n; k++) {
        blk[k][0] = 0;
        if (p->strip >> k & 1u) {
            kevo_recipe_fresh_name(blk[k], sizeof blk[k], m, m->var[m->loop[p->chain[k]].var].name,
                                   "_blk", taken, n_taken);
            snprintf(taken[n_taken++], sizeof taken[0], "%.63s", blk[k]);
        }
    }
    for (int s = 0; s < p->n_st; s++)
        if (at[s] < 0)
            emit_stmt(&b, m, p->st[s].t0, p->st[s].t1, ind, il, 1);
    unsigned lhs_renamed = p->strip; /* the lhs uses a strip loop only divided */
    for (int i = 0; i < n; i++) {
        int level = i + 1;
        if (order[i] >= MAX_CHAIN) { /* the blocks of a strip loop */
            int k = order[i] - MAX_CHAIN;
            const kevo_rloop *L = &m->loop[p->chain[k]];
            unsigned d = p->divisor[k];
            char dtext[160];
            snprintf(dtext, sizeof dtext, "%.*s", (int)(m->tok[d].end - m->tok[d].start),
                     m->src + m->tok[d].start);
            indent(&b, ind, il, level);
            kevo_buf_printf(&b, "for (%.*s %s = 0; %s < ",
                            (int)(m->tok[L->t_type1 - 1].end - m->tok[L->t_type0].start),
                            m->src + m->tok[L->t_type0].start, blk[k], blk[k]);
            text_of(&b, m, L->t_ub0, L->t_ub1);
            if (m->tok[d].kind == KEVO_CTOK_LITERAL)
                kevo_buf_printf(&b, "; %s += %s) {\n", blk[k], dtext);
            else
                kevo_buf_printf(&b, "; %s += (%s > 0 ? %s : 1)) {\n", blk[k], dtext, dtext);
        } else {
            int l = p->chain[order[i]];
            const kevo_rloop *L = &m->loop[l];
            bool has_bounds = false;
            for (int k = 0; k < n_bd; k++)
                has_bounds |= bd_loop[k] == order[i];
            if (p->reduce && has_bounds) {
                emit_const_bounds(&b, m, L, order[i], bd, bd_loop, n_bd, taken,
                                  sizeof taken / sizeof taken[0], &n_taken, ind, il, level);
            } else if (i == li && n_bd > 0 && !p->reduce) {
                indent(&b, ind, il, level);
                kevo_buf_puts(&b, "{\n");
                indent(&b, ind, il, level + 1);
                kevo_buf_printf(&b, "long long %s = (", lo);
                text_of(&b, m, L->t_lb0, L->t_lb1);
                kevo_buf_printf(&b, "), %s = (", hi);
                text_of(&b, m, L->t_ub0, L->t_ub1);
                kevo_buf_printf(&b, ")%s;\n", L->cond_op == KEVO_COND_LE ? " + 1" : "");
                for (int k = 0; k < n_bd; k++) {
                    indent(&b, ind, il, level + 1);
                    kevo_buf_printf(&b,
                                    "{ long long %s = (long long)(%s); %s = %s >= 0 ? (%s + %s - "
                                    "1) / %s : -((-%s) / %s); if (%s %s %s) %s = %s; }\n",
                                    tmp, kevo_buf_cstr(&bd[k].num), tmp, tmp, tmp, bd[k].s, bd[k].s,
                                    tmp, bd[k].s, tmp, bd[k].lower ? ">" : "<",
                                    bd[k].lower ? lo : hi, bd[k].lower ? lo : hi, tmp);
                }
                indent(&b, ind, il, level + 1);
                kevo_buf_printf(&b, "for (%.*s %s = %s; %s < %s; %s++) {\n",
                                (int)(m->tok[L->t_type1 - 1].end - m->tok[L->t_type0].start),
                                m->src + m->tok[L->t_type0].start, lv, lo, lv, hi, lv);
                level++;
            } else if (p->strip >> order[i] & 1u) { /* the iterations of a block */
                int k = order[i];
                unsigned d = p->divisor[k];
                char dtext[160];
                snprintf(dtext, sizeof dtext, "%.*s", (int)(m->tok[d].end - m->tok[d].start),
                         m->src + m->tok[d].start);
                char step[400];
                if (m->tok[d].kind == KEVO_CTOK_LITERAL)
                    snprintf(step, sizeof step, "%s", dtext);
                else
                    snprintf(step, sizeof step, "(%s > 0 ? %s : 1)", dtext, dtext);
                kevo_buf ub = {0};
                text_of(&ub, m, L->t_ub0, L->t_ub1);
                indent(&b, ind, il, level);
                kevo_buf_printf(
                    &b, "for (%.*s %s = %s; %s < (%s + %s < (%s) ? %s + %s : (%s)); %s++) {\n",
                    (int)(m->tok[L->t_type1 - 1].end - m->tok[L->t_type0].start),
                    m->src + m->tok[L->t_type0].start, m->var[L->var].name, blk[k],
                    m->var[L->var].name, blk[k], step, kevo_buf_cstr(&ub), blk[k], step,
                    kevo_buf_cstr(&ub), m->var[L->var].name);
                kevo_buf_free(&ub);
            } else {
                indent(&b, ind, il, level);
                emit_header(&b, m, l);
                kevo_buf_puts(&b, " {\n");
            }
        }
        for (int s = 0; s < p->n_st; s++)
            if (at[s] == i && !p->st[s].bound && !p->st[s].inlined) {
                indent(&b, ind, il, level + 1);
                emit_text_renamed(&b, p, p->st[s].t0, p->st[s].t1, renamed[s], blk, NULL);
                kevo_buf_puts(&b, "\n");
            }
        if (i == li && p->reduce) {
            indent(&b, ind, il, level + 1);
            kevo_buf_printf(&b, "float %s = 0.0f;\n", acc);
        }
        if (i == n - 1 && p->reduce) {
            unsigned e0 = p->op + 1, e1 = p->acc1 - 1; /* without the `;` */
            indent(&b, ind, il, level + 1);
            kevo_buf_printf(&b, "%s %c= ", acc, kevo_rtok_is(m, p->op, "-=") ? '-' : '+');
            kevo_buf_printf(&b, "%.*s;\n", (int)(m->tok[e1 - 1].end - m->tok[e0].start),
                            m->src + m->tok[e0].start);
        } else if (i == n - 1)
            emit_stmt(&b, m, kevo_rtok_skip_comments(m, p->acc0, p->acc1), p->acc1, ind, il, level + 1);
    }
    for (int i = n - 1; i >= 0; i--) {
        int level = i + 1;
        if (i == li && p->reduce) {
            indent(&b, ind, il, level + 1);
            emit_text_renamed(&b, p, p->lhs0, p->lhs1, lhs_renamed, blk, subst);
            kevo_buf_printf(&b, " += %s;\n", acc);
        }
        if (i == li && n_bd > 0 && !p->reduce) {
            indent(&b, ind, il, level + 1);
            kevo_buf_puts(&b, "}\n");
        }
        indent(&b, ind, il, level);
        kevo_buf_puts(&b, "}\n");
    }
    indent(&b, ind, il, 0);
    kevo_buf_puts(&b, "}");
    /* strides given at run time: the bounds divide by them, so the
     * permuted nest runs where each is positive (twice: with each of them
     * 1 a constant, the common case, which the compiler then vectorises
     * with contiguous loads), the nest as written elsewhere */
    int rv[16], n_rv = 0;
    for (int i = 0; i < n_bd; i++) {
        bool seen = bd[i].rvar < 0;
        for (int k = 0; k < n_rv; k++)
            seen |= rv[k] == bd[i].rvar;
        if (!seen)
            rv[n_rv++] = bd[i].rvar;
    }
    for (int i = 0; i < n_bd; i++)
        kevo_buf_free(&bd[i].num);
    for (int s = 0; s < p->n_st; s++)
        kevo_buf_free(&subst[s]);
    if (n_rv > 0) {
        kevo_buf v = {0};
        kevo_buf_puts(&v, "{ /* kevo permute: bounds divided by ");
        for (int k = 0; k < n_rv; k++)
            kevo_buf_printf(&v, "%s%s", k ? ", " : "", m->var[rv[k]].name);
        kevo_buf_puts(&v, ", run where positive */\n");
        indent(&v, ind, il, 1);
        kevo_buf_puts(&v, "if (");
        for (int k = 0; k < n_rv; k++)
            kevo_buf_printf(&v, "%s%s > 0", k ? " && " : "", m->var[rv[k]].name);
        kevo_buf_puts(&v, ") {\n");
        indent(&v, ind, il, 2);
        kevo_buf_puts(&v, "if (");
        for (int k = 0; k < n_rv; k++)
            kevo_buf_printf(&v, "%s%s == 1", k ? " && " : "", m->var[rv[k]].name);
        kevo_buf_puts(&v, ") {\n");
        for (int k = 0; k < n_rv; k++) {
            indent(&v, ind, il, 3);
            kevo_buf_printf(&v, "const __typeof__(%s) %s = 1; /* the common case, a constant */\n",
                            m->var[rv[k]].name, m->var[rv[k]].name);
        }
        indent(&v, ind, il, 3);
        kevo_buf_printf(&v, "%s\n", kevo_buf_cstr(&b));
        indent(&v, ind, il, 2);
        kevo_buf_puts(&v, "} else\n");
        indent(&v, ind, il, 3);
        kevo_buf_printf(&v, "%s\n", kevo_buf_cstr(&b));
        indent(&v, ind, il, 1);
        kevo_buf_puts(&v, "} else {\n");
        indent(&v, ind, il, 2);
        kevo_buf_printf(&v, "%s\n", PERMUTE_AS_WRITTEN);
        indent(&v, ind, il, 2);
        kevo_buf_printf(&v, "%.*s\n", (int)(m->tok[R->t_end - 1].end - m->tok[R->t_for].start),
                        m->src + m->tok[R->t_for].start);
        indent(&v, ind, il, 1);
        kevo_buf_puts(&v, "}\n");
        indent(&v, ind, il, 0);
        kevo_buf_puts(&v, "}");
        kevo_buf_free(&b);
        b = v;
    }
    int error = kevo_cparse_edits_add(&out->edits, m->tok[R->t_for].start, m->tok[R->t_end - 1].end,
                                      "%s", kevo_buf_cstr(&b));
    kevo_buf_free(&b);
    return error;
}

/* Permute the nest rooted at loop root; `lane` the loop index to run
 * innermost (-1: pick). */
static int permute_at(kevo_recipe_out *out, const kevo_recipe_model *m, int root, long lane,
                      bool scatter, bool outer, bool reduce, bool dry, bool require_bounds)
{
    pnest *p = calloc(1, sizeof *p);
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = 0;
    unsigned before = m->loop[root].t_for;
    if (before > 0 && kevo_rtok_comment(m, before - 1)) {
        size_t n;
        const char *c = kevo_rtok_text(m, before - 1, &n);
        if (n == strlen(PERMUTE_AS_WRITTEN) && memcmp(c, PERMUTE_AS_WRITTEN, n) == 0)
            error = kevo_error_set(KEVO_EINVAL,
                                   "the nest at line %u is the copy permute kept as written "
                                   "(for strides that are not positive)",
                                   m->loop[root].line);
    }
    if (error == 0)
        error = read_nest(p, m, root);
    if (error == 0)
        error = check_effects(p);
    if (error == 0) {
        p->lane = lane >= 0 ? -1 : pick_lane(p, lane == -2);
        for (int k = 0; lane >= 0 && k < p->n; k++)
            if (p->chain[k] == lane)
                p->lane = k;
        if (p->lane < 0)
            error = lane >= 0
                        ? kevo_error_set(KEVO_EINVAL, "loop %ld is not in the nest at line %u",
                                         lane, m->loop[root].line)
                        : kevo_error_set(KEVO_EINVAL,
                                         "no loop of the nest at line %u runs along the "
                                         "accumulated index with more than a few "
                                         "iterations",
                                         m->loop[root].line);
    }
    if (error == 0) {
        pick_sink(p, scatter);
        pick_outer(p, outer);
        if (reduce && p->minmax)
            error = kevo_error_set(KEVO_EINVAL,
                                   "line %u keeps a maximum or minimum: reduce sums into a "
                                   "scalar",
                                   kevo_recipe_line(m, m->tok[p->acc0].start));
        else if (reduce)
            error = pick_reduce(p);
    }
    if (error == 0) {
        p->require_bounds = require_bounds;
        error = permute_nest(out, p, dry);
    }
    free(p);
    return error;
}

/* The steps that follow the permutation in the same candidate: with
 * `reduce` W >= 2, register_block (rows 4, width W, no packing, one vector
 * per row) on the reduced nest: reduced alone, the nest sums each element
 * in a scalar loop down the input channels, slower than the form it
 * replaces, and a search that weighs each step by its own gain would not
 * take it towards the blocked kernel; where register_block declines, so
 * does this. With `threads`, omp_parallel (every nest, collapse 2: the
 * outer loops `outer` put there; a zero fill before it too): permuted
 * alone, the nest runs on one core; where omp_parallel declines, the
 * kernel stands. */
static int follow_up(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                     long reduce, bool threads)
{
    char name[256];
    kevo_recipe_kernel_name(name, sizeof name, m);
    char *text = NULL;
    int error =
        kevo_recipe_edits_apply(&text, &out->edits, source, strlen(source), m->fn_start, m->fn_end);
    if (error < 0)
        return error;
    if (reduce == 2) {
        const long ar[2] = {-1, 256};
        char *rows = NULL;
        error = kevo_recipe_apply(&rows, "acc_row", ar, 2, text, name);
        free(text);
        if (error == KEVO_EINVAL) {
            char why[400];
            snprintf(why, sizeof why, "%s", kevo_error_last());
            return kevo_error_set(KEVO_EINVAL,
                                  "reduce 2: acc_row declines the reduced nest (%s)", why);
        }
        if (error < 0)
            return error;
        text = rows;
    } else if (reduce >= 4) {
        const long rb[4] = {4, reduce, 0, 1};
        char *blocked = NULL;
        error = kevo_recipe_apply(&blocked, "register_block", rb, 4, text, name);
        free(text);
        if (error == KEVO_EINVAL) {
            char why[400];
            snprintf(why, sizeof why, "%s", kevo_error_last());
            return kevo_error_set(KEVO_EINVAL,
                                  "reduce %ld: register_block declines the reduced nest (%s)",
                                  reduce, why);
        }
        if (error < 0)
            return error;
        text = blocked;
    }
    if (threads) {
        static const long omp[2] = {2, 1};
        char *par = NULL;
        error = kevo_recipe_apply(&par, "omp_parallel", omp, 2, text, name);
        if (error == KEVO_EINVAL)
            kevo_error_clear();
        else if (error < 0) {
            free(text);
            return error;
        } else {
            free(text);
            text = par;
        }
    }
    out->whole = text;
    return 0;
}

/* Where no nest takes it as written: a loop that keeps a sum or an
 * extreme in a scalar, split so that the element itself is accumulated
 * (expand.c), then that copy permuted, provided a guard on the loop along
 * the element becomes its bounds (the window of a pool: otherwise the
 * split only adds passes over the output); the first such loop in source
 * order where both apply. */
static int permute_split_at(kevo_recipe_out *out, const kevo_recipe_model *m, const long *params,
                            size_t *loop)
{
    char *text = NULL, name[256];
    unsigned off = 0;
    int error = kevo_recipe__expand_scalar(&text, &off, loop, m);
    if (error < 0)
        return error;
    kevo_recipe_kernel_name(name, sizeof name, m);
    kevo_recipe_model *m2 = NULL;
    kevo_recipe_out o2 = {0};
    error = kevo_recipe_model_parse(&m2, text, name);
    if (error == KEVO_EINVAL) {
        char why[400];
        snprintf(why, sizeof why, "%s", kevo_error_last());
        error = kevo_error_set(KEVO_ERROR, "recipe bug: the split kernel does not parse: %s", why);
    }
    int r2 = -1;
    for (size_t l = 0; error == 0 && l < m2->n_loop && r2 < 0; l++)
        if (m2->tok[m2->loop[l].t_for].start == off)
            r2 = (int)l;
    if (error == 0 && r2 < 0)
        error = kevo_error_set(KEVO_ERROR, "recipe bug: the split kernel lost its loop");
    if (error == 0)
        error = permute_at(&o2, m2, r2, params[0] == -2 ? -2 : -1, params[1] != 0, params[2] != 0, params[4] != 0, false,
                           true);
    if (error == 0 && (params[3] || params[4] >= 2))
        error = follow_up(&o2, m2, text, params[4], params[3] != 0);
    else if (error == 0)
        error = kevo_recipe_edits_apply(&o2.whole, &o2.edits, text, strlen(text), m2->fn_start,
                                        m2->fn_end);
    if (error == 0) {
        out->whole = o2.whole;
        o2.whole = NULL;
    }
    kevo_cparse_edits_free(&o2.edits);
    free(o2.whole);
    kevo_recipe_model_free(m2);
    free(text);
    return error;
}

static int permute_expanded(kevo_recipe_out *out, const kevo_recipe_model *m, const long *params)
{
    char first_why[400] = "";
    size_t loop = 0;
    while (loop < m->n_loop) {
        int error = permute_split_at(out, m, params, &loop); /* loop: the one split */
        if (error != KEVO_EINVAL)
            return error;
        if (!first_why[0])
            snprintf(first_why, sizeof first_why, "%s", kevo_error_last());
        kevo_error_clear();
        loop++;
    }
    return kevo_error_set(KEVO_EINVAL, "%s", first_why[0] ? first_why : "the kernel has no loop");
}

int kevo_recipe_permute_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                              const long *params)
{
    (void)source;
    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    long lane = params[0];
    if (lane < -2)
        return kevo_error_set(KEVO_EINVAL, "loop is %ld: it takes a loop index, -1 or -2", lane);
    if (params[4] != 0 && params[4] != 1 && params[4] != 2 && params[4] != 4 && params[4] != 8 &&
        params[4] != 16)
        return kevo_error_set(KEVO_EINVAL, "reduce is %ld: it takes 0, 1, 2, 4, 8 or 16",
                              params[4]);
    if (lane >= (long)m->n_loop)
        return kevo_error_set(KEVO_EINVAL,
                              "loop index %ld is out of range: the kernel has %zu for loops", lane,
                              m->n_loop);
    /* the first top-level nest that takes it (holding `lane` when given);
     * the first nest's reason when none does */
    char first_why[400] = "";
    for (size_t r = 0; r < m->n_loop; r++) {
        if (m->loop[r].parent != -1)
            continue;
        if (lane >= 0 &&
            !(m->loop[lane].t_for >= m->loop[r].t_for && m->loop[lane].t_end <= m->loop[r].t_end))
            continue;
        if (permute_at(out, m, (int)r, lane, params[1] != 0, params[2] != 0, params[4] != 0,
                       true, false) == 0) {
            int error = permute_at(out, m, (int)r, lane, params[1] != 0, params[2] != 0,
                                   params[4] != 0, false, false);
            return error == 0 && (params[3] || params[4] >= 2)
                       ? follow_up(out, m, source, params[4], params[3] != 0)
                       : error;
        }
        if (!first_why[0] && m->loop[r].n_children > 0)
            snprintf(first_why, sizeof first_why, "%s", kevo_error_last());
        kevo_error_clear();
    }
    if (lane < 0) {
        int error = permute_expanded(out, m, params);
        if (error != KEVO_EINVAL)
            return error;
        char why[400];
        snprintf(why, sizeof why, "%s", kevo_error_last());
        return kevo_error_set(KEVO_EINVAL, "%s; with a scalar kept in memory: %s",
                              first_why[0] ? first_why
                                           : "no top-level loop nest of two or more loops holds "
                                             "that loop",
                              why);
    }
    return kevo_error_set(KEVO_EINVAL, "%s",
                          first_why[0] ? first_why
                                       : "no top-level loop nest of two or more loops holds "
                                         "that loop");
}
