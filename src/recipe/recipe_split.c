/*
 * recipe/recipe_split.c - the `split` recipe: a loop split at the bounds
 * its guards imply (index-set splitting). A padded convolution or pool
 * tests every tap (`if (ih < 0 || ih >= H) continue;`, ih = oh * S - P +
 * kh); for most output positions the test is false at every tap, and it
 * keeps `vectorize`, and so `register_block`, off the nest. The loop L
 *
 *   for (T v = a; v < b; v++) BODY
 *
 * becomes
 *
 *   { long long v_lo = a, v_hi = b, ...     the interior, from the guards
 *     for (T v = a; v < v_lo; v++) BODY
 *     for (T v = v_lo; v < v_hi; v++) BODY'  the tests that cannot hold left out
 *     for (T v = v_hi; v < b; v++) BODY }
 *
 * and, in BODY', each inner loop whose guards it can drop in turn is split
 * the same way (oh, then ow below it); in the innermost interior the
 * integer declarations the dropped tests read are written into their uses
 * (`x[.. + (ow + kw - 1)]`: `vectorize` needs the row's variable in the
 * subscript).
 *
 * A test it drops: a disjunct `E op X` (op < <= > >=) of a guard `if (D1 ||
 * D2 ...) continue;` (or `{ continue; }`) inside L, whose sides, after the
 * integer declarations they name are replaced by their initialisers, are
 * sums of terms: exactly one `S * v` (S a positive literal, or an integer
 * that keeps its value through L: checked > 0 at run time, the interior
 * empty otherwise), terms `c * u` of loops u between L and the guard whose
 * bounds keep their values through L, and terms that keep their values
 * through L. With F = (E - X) = S * v + R and R between Rmin and Rmax (each
 * u term at its loop's first or last value), "skip when F < 0" cannot hold
 * where v >= ceil(-Rmin / S), "skip when F >= 0" where v < ceil(-Rmax / S)
 * (<= and > by one more). Where a disjunct cannot hold it is false at
 * every value the inner loops give u, and evaluating it has no effect (it
 * reads integers only), so every guard takes the branch it took: the same
 * operations in the same order, results bit for bit.
 *
 * Every variable in a dropped test is a signed integer (`int`, `long`,
 * `long long`: no unsigned wrap-around changes a comparison), a declaration
 * written into its uses is at least as wide as its initialiser's variables
 * and never written nor has its address taken, and the bounds read no
 * memory and divide nothing the loop would not have divided.
 *
 * With `then` 1, omp_parallel follows in the same step, with 2 (the
 * default) register_block and then omp_parallel, each where it applies:
 * the interior is what they take, and the search measures the step whole.
 *
 * Must not: change anything outside the loops it splits (and what the
 * recipes that follow it change).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX_GUARDS 64
#define SPLIT_MAX_DISJ 128
#define SPLIT_MAX_TERMS 24
#define SPLIT_MAX_SUB 8
#define SPLIT_MAX_DEPTH 4
#define SPLIT_MAX_NAMES 96

/* A guard `if (COND) continue;` (or `if (COND) { continue; }`) whose
 * condition assigns and calls nothing; or, the other way round, `if (C1 &&
 * C2 ...) STMT` (no else), STMT a block or an expression statement: a
 * conjunct that holds at every iteration of the interior is left out there
 * (STMT alone when none is left). */
typedef struct guard {
    unsigned t_if, t_rp, t_last; /* `if`, the condition's `)`, the statement's last token */
    bool run;                    /* `if (C1 && C2 ...) STMT`: conjuncts that run STMT */
    int d0, n_d;                 /* its disjuncts (conjuncts): disj[d0 .. d0 + n_d) */
} guard;

/* One disjunct of a guard's condition (the comparisons between `||`s), and,
 * once a split drops it, the declarations its analysis read through. */
typedef struct disj {
    int g;
    unsigned a0, a1; /* its tokens */
    int sub[SPLIT_MAX_SUB];
    int n_sub;
} disj;

enum { TERM_V, TERM_U, TERM_INV };

/* One term of F = E - X. */
typedef struct term {
    int kind;
    bool neg;
    unsigned c0, c1; /* TERM_V, TERM_U: the coefficient (c0 == c1: none, 1);
                        TERM_INV: the term */
    int loop;        /* TERM_U: the loop of u */
} term;

/* What dropping a disjunct at loop l asks of l's variable: v >= ceil(num /
 * s) (lower) or v < ceil(num / s). */
typedef struct cut {
    bool lower;
    kevo_buf num;
    kevo_buf s;    /* the coefficient's text */
    long s_lit;    /* its value when a literal, else 0 (checked at run time) */
} cut;

typedef struct sctx {
    const kevo_recipe_model *m;
    guard g[SPLIT_MAX_GUARDS];
    int n_g;
    disj d[SPLIT_MAX_DISJ];
    int n_d;
    kevo_rwrite *w; /* every write of the kernel */
    size_t nw;
    bool *addr_taken; /* per variable: `&v` somewhere */
    int scope;        /* >= 0: what the cuts read must also keep its value through this
                         loop (bounds computed before it), and divide nothing */
    /* per loop: the names of its interior's bounds, and whether an outer
     * split computes them */
    bool *named, *hoisted;
    char (*lo)[64], (*hi)[64], (*cutv)[64];
    char taken[SPLIT_MAX_NAMES][64];
    int n_taken;
    char why[400]; /* why the last loop looked at declined */
} sctx;

/* ---- tokens ------------------------------------------------------------- */

/* A decimal integer literal that fits an int, without suffix. */
static bool small_literal(const kevo_recipe_model *m, unsigned t)
{
    if (m->tok[t].kind != KEVO_CTOK_LITERAL)
        return false;
    size_t n;
    const char *s = kevo_rtok_text(m, t, &n);
    if (n == 0 || n > 9)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n == 1 || s[0] != '0'; /* no octal */
}

static bool literal_value(const kevo_recipe_model *m, unsigned t, long *v)
{
    if (!small_literal(m, t))
        return false;
    size_t n;
    const char *s = kevo_rtok_text(m, t, &n);
    *v = strtol(s, NULL, 10);
    return true;
}

static void trim(const kevo_recipe_model *m, unsigned *a0, unsigned *a1)
{
    kevo_rtok_strip_parens(m, a0, a1);
}

/* ---- what keeps its value ----------------------------------------------- */

static bool inside(const kevo_recipe_model *m, int l, unsigned off)
{
    const kevo_rloop *L = &m->loop[l];
    return off >= m->tok[L->t_for].start && off < m->tok[L->t_end - 1].end;
}

/* Whether variable v keeps its value through loop l: a signed integer
 * declared outside l (or a parameter), never written inside l, its address
 * never taken. */
static bool invariant_var(const sctx *c, int l, int v)
{
    const kevo_recipe_model *m = c->m;
    if (c->scope >= 0)
        l = c->scope;
    /* a parameter or a local of the kernel: a global could change in a
     * function the loop calls */
    if (v < 0 || m->var[v].int_rank == 0 || m->var[v].decl_off < m->fn_start ||
        m->var[v].decl_off >= m->fn_end || c->addr_taken[v] || inside(m, l, m->var[v].decl_off))
        return false;
    const kevo_rloop *L = &m->loop[l];
    for (size_t i = 0; i < c->nw; i++)
        if (c->w[i].var == v && c->w[i].t_op >= L->t_for && c->w[i].t_op < L->t_end)
            return false;
    return true;
}

/* Whether tokens [a,b) keep their value through loop l and are safe to
 * evaluate before it: small literals, invariant variables, + - * and
 * parentheses (with `divide`, also / and %: an expression the loop
 * evaluates anyway). *rank gets the widest variable's rank. */
static bool invariant_expr(const sctx *c, int l, unsigned a, unsigned b, bool divide, int *rank)
{
    static const char *const ops[] = {"+", "-", "*", "(", ")", NULL};
    static const char *const div[] = {"/", "%", NULL};
    const kevo_recipe_model *m = c->m;
    if (a >= b)
        return false;
    for (unsigned t = a; t < b; t++) {
        if (kevo_rtok_comment(m, t))
            continue;
        if (m->tok[t].kind == KEVO_CTOK_LITERAL) {
            if (!small_literal(m, t))
                return false;
        } else if (m->tok[t].kind == KEVO_CTOK_IDENT) {
            int v = m->tok[t].var;
            if (!invariant_var(c, l, v))
                return false;
            if (rank && m->var[v].int_rank > *rank)
                *rank = m->var[v].int_rank;
        } else if (!kevo_rtok_is_any(m, t, ops) && !(divide && kevo_rtok_is_any(m, t, div)))
            return false;
    }
    return true;
}

/* The loop whose induction variable is v, or -1. */
static int loop_of_var(const kevo_recipe_model *m, int v)
{
    for (size_t k = 0; v >= 0 && k < m->n_loop; k++)
        if (m->loop[k].var == v && m->loop[k].declared)
            return (int)k;
    return -1;
}

/* Whether loop u lies inside loop l's body. */
static bool loop_inside(const kevo_recipe_model *m, int u, int l)
{
    for (int p = m->loop[u].parent; p >= 0; p = m->loop[p].parent)
        if (p == l)
            return true;
    return false;
}

/* The initialiser [*i0, *i1) of variable d when it can be written into its
 * uses inside loop l: declared `T d = init` in l's body (not in a loop
 * header), a signed integer never written, its address never taken. */
static bool substitutable(const sctx *c, int l, int d, unsigned *i0, unsigned *i1)
{
    const kevo_recipe_model *m = c->m;
    if (d < 0 || m->var[d].int_rank == 0 || c->addr_taken[d] ||
        !inside(m, l, m->var[d].decl_off) || kevo_recipe_var_written(m, d))
        return false;
    unsigned t = kevo_recipe_decl_token(m, d);
    if (t == (unsigned)-1 || !kevo_rtok_is(m, t + 1, "="))
        return false;
    for (size_t k = 0; k < m->n_loop; k++)
        if (t > m->loop[k].t_for && t < m->loop[k].t_body)
            return false;
    *i0 = t + 2;
    *i1 = kevo_recipe_expr_end(m, t + 2, (unsigned)m->n_tok);
    return *i1 > *i0 && *i1 < m->n_tok;
}

/* ---- F as a sum of terms ------------------------------------------------ */

typedef struct terms {
    term t[SPLIT_MAX_TERMS];
    int n;
    int sub[SPLIT_MAX_SUB]; /* declarations read through */
    int n_sub;
} terms;

static bool add_term(terms *ts, int kind, bool neg, unsigned c0, unsigned c1, int loop)
{
    if (ts->n == SPLIT_MAX_TERMS)
        return false;
    ts->t[ts->n++] = (term){kind, neg, c0, c1, loop};
    return true;
}

static bool collect(const sctx *c, int l, unsigned e0, unsigned e1, bool neg, int rank, int depth,
                    terms *ts);

/* A loop u between l and the guards, whose variable a term may scale: it
 * counts up by a positive step from a bound that, like its test's, keeps
 * its value through l. */
static bool u_loop(const sctx *c, int l, int u, int rank)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *U = &m->loop[u];
    int r = 0;
    return loop_inside(m, u, l) && (U->simple || U->strided) && U->step > 0 &&
           (U->cond_op == KEVO_COND_LT || U->cond_op == KEVO_COND_LE) &&
           m->var[U->var].int_rank > 0 && m->var[U->var].int_rank <= rank &&
           invariant_expr(c, l, U->t_lb0, U->t_lb1, false, &r) &&
           invariant_expr(c, l, U->t_ub0, U->t_ub1, false, &r);
}

/* A single token as a coefficient: a small literal or an invariant
 * variable no wider than rank. */
static bool coefficient(const sctx *c, int l, unsigned t, int rank)
{
    const kevo_recipe_model *m = c->m;
    if (small_literal(m, t))
        return true;
    int v = m->tok[t].var;
    return m->tok[t].kind == KEVO_CTOK_IDENT && invariant_var(c, l, v) &&
           m->var[v].int_rank <= rank;
}

/* The term [t0,t1) with sign neg. */
static bool one_term(const sctx *c, int l, unsigned t0, unsigned t1, bool neg, int rank, int depth,
                     terms *ts)
{
    const kevo_recipe_model *m = c->m;
    int lv = m->loop[l].var;
    trim(m, &t0, &t1);
    if (t0 >= t1)
        return false;
    if (t1 == t0 + 1) {
        if (small_literal(m, t0))
            return add_term(ts, TERM_INV, neg, t0, t1, -1);
        int v = m->tok[t0].var;
        if (m->tok[t0].kind != KEVO_CTOK_IDENT || v < 0 || m->var[v].int_rank == 0 ||
            m->var[v].int_rank > rank)
            return false;
        if (v == lv)
            return add_term(ts, TERM_V, neg, t0, t0, -1);
        int u = loop_of_var(m, v);
        if (u >= 0 && loop_inside(m, u, l))
            return u_loop(c, l, u, rank) && add_term(ts, TERM_U, neg, t0, t0, u);
        if (invariant_var(c, l, v))
            return add_term(ts, TERM_INV, neg, t0, t1, -1);
        unsigned i0, i1;
        if (depth < SPLIT_MAX_DEPTH && ts->n_sub < SPLIT_MAX_SUB && substitutable(c, l, v, &i0, &i1)) {
            bool seen = false;
            for (int k = 0; k < ts->n_sub; k++)
                seen |= ts->sub[k] == v;
            if (!seen)
                ts->sub[ts->n_sub++] = v;
            /* d's initialiser, its variables no wider than d */
            return collect(c, l, i0, i1, neg, m->var[v].int_rank, depth + 1, ts);
        }
        return false;
    }
    if (t1 == t0 + 3 && kevo_rtok_is(m, t0 + 1, "*")) {
        for (int side = 0; side < 2; side++) {
            unsigned x = side ? t0 + 2 : t0, k = side ? t0 : t0 + 2;
            int v = m->tok[x].var;
            if (m->tok[x].kind != KEVO_CTOK_IDENT || v < 0 || m->var[v].int_rank == 0 ||
                m->var[v].int_rank > rank)
                continue;
            if (v == lv)
                return coefficient(c, l, k, rank) && add_term(ts, TERM_V, neg, k, k + 1, -1);
            int u = loop_of_var(m, v);
            if (u >= 0 && loop_inside(m, u, l))
                return coefficient(c, l, k, rank) && u_loop(c, l, u, rank) &&
                       add_term(ts, TERM_U, neg, k, k + 1, u);
        }
    }
    int r = 0;
    return invariant_expr(c, l, t0, t1, false, &r) && r <= rank &&
           add_term(ts, TERM_INV, neg, t0, t1, -1);
}

/* The sum [e0,e1) with sign neg, term by term. */
static bool collect(const sctx *c, int l, unsigned e0, unsigned e1, bool neg, int rank, int depth,
                    terms *ts)
{
    const kevo_recipe_model *m = c->m;
    trim(m, &e0, &e1);
    if (e0 >= e1)
        return false;
    unsigned a = e0;
    while (a < e1) {
        bool minus;
        unsigned t0, b;
        if (!kevo_rtok_sum_term(m, e0, e1, a, &t0, &b, &minus))
            return false;
        bool grouped = kevo_rtok_is(m, t0, "(") && kevo_rtok_match(m, t0) == b - 1;
        if (grouped) {
            if (!collect(c, l, t0 + 1, b - 1, neg ^ minus, rank, depth, ts))
                return false;
        } else if (!one_term(c, l, t0, b, neg ^ minus, rank, depth, ts))
            return false;
        a = b;
    }
    return true;
}

/* ---- a disjunct's cut ----------------------------------------------------- */

static void put_text(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    for (unsigned t = t0; t < t1; t++)
        if (!kevo_rtok_comment(m, t))
            kevo_buf_printf(b, "%s%.*s", t > t0 ? " " : "", (int)(m->tok[t].end - m->tok[t].start),
                            m->src + m->tok[t].start);
}

/* `(long long)(tokens)` */
static void put_ll(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    kevo_buf_puts(b, "(long long)(");
    put_text(b, m, t0, t1);
    kevo_buf_puts(b, ")");
}

/* The extreme (largest with max, else smallest) value of R, the terms
 * other than S * v. */
static void put_extreme(kevo_buf *b, const sctx *c, const terms *ts, bool max)
{
    const kevo_recipe_model *m = c->m;
    kevo_buf_puts(b, "(0");
    for (int i = 0; i < ts->n; i++) {
        const term *t = &ts->t[i];
        if (t->kind == TERM_V)
            continue;
        kevo_buf_puts(b, t->neg ? " - " : " + ");
        if (t->kind == TERM_INV) {
            put_ll(b, m, t->c0, t->c1);
            continue;
        }
        const kevo_rloop *U = &m->loop[t->loop];
        kevo_buf first = {0}, last = {0};
        if (t->c1 > t->c0) {
            put_ll(&first, m, t->c0, t->c1);
            kevo_buf_puts(&first, " * ");
            put_ll(&last, m, t->c0, t->c1);
            kevo_buf_puts(&last, " * ");
        }
        put_ll(&first, m, U->t_lb0, U->t_lb1);
        kevo_buf_puts(&last, "(");
        put_ll(&last, m, U->t_ub0, U->t_ub1);
        kevo_buf_puts(&last, U->cond_op == KEVO_COND_LT ? " - 1)" : ")");
        long cv = 1;
        bool known = t->c1 == t->c0 || literal_value(m, t->c0, &cv);
        /* the term is +-c*u: for -c*u, the largest is -(the smallest c*u) */
        bool want_max = max != t->neg;
        if (known) /* c >= 0: c*u grows with u */
            kevo_buf_printf(b, "(%s)", kevo_buf_cstr(want_max ? &last : &first));
        else
            kevo_buf_printf(b, "(%s %s %s ? %s : %s)", kevo_buf_cstr(&first),
                            want_max ? ">" : "<", kevo_buf_cstr(&last), kevo_buf_cstr(&first),
                            kevo_buf_cstr(&last));
        kevo_buf_free(&first);
        kevo_buf_free(&last);
    }
    kevo_buf_puts(b, ")");
}

/* Whether loop l's split can drop disjunct k; its cut into *out (the
 * caller frees num and s) and the declarations it read into c->d[k]. */
static bool disj_cut(sctx *c, int l, int k, cut *out)
{
    const kevo_recipe_model *m = c->m;
    static const char *const cmp[] = {"<", "<=", ">", ">=", NULL};
    unsigned a0 = c->d[k].a0, a1 = c->d[k].a1;
    unsigned op = 0;
    int n_ops = 0, dp = 0;
    for (unsigned t = a0; t < a1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
            dp++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
            dp--;
        else if (dp == 0 && (kevo_rtok_is_any(m, t, cmp) || kevo_rtok_is(m, t, "&&") ||
                             kevo_rtok_is(m, t, "==") || kevo_rtok_is(m, t, "!=") ||
                             kevo_rtok_is(m, t, "?") || kevo_rtok_is(m, t, "!"))) {
            op = t;
            n_ops++;
        }
    }
    if (n_ops != 1 || !kevo_rtok_is_any(m, op, cmp))
        return false;
    int rank = m->var[m->loop[l].var].int_rank;
    terms ts = {0};
    if (rank == 0 || !collect(c, l, a0, op, false, rank, 0, &ts) ||
        !collect(c, l, op + 1, a1, true, rank, 0, &ts))
        return false;
    int nv = 0;
    const term *tv = NULL;
    for (int i = 0; i < ts.n; i++)
        if (ts.t[i].kind == TERM_V) {
            nv++;
            tv = &ts.t[i];
        }
    if (nv != 1)
        return false;
    /* v on the right (`X < E`): F's terms negated, the comparison turned round */
    bool turn = tv->neg;
    if (turn)
        for (int i = 0; i < ts.n; i++)
            ts.t[i].neg = !ts.t[i].neg;
    memset(out, 0, sizeof *out);
    /* S: the coefficient of v with its sign */
    if (tv->c1 == tv->c0)
        out->s_lit = tv->neg ? -1 : 1;
    else if (literal_value(m, tv->c0, &out->s_lit))
        out->s_lit = tv->neg ? -out->s_lit : out->s_lit;
    else
        out->s_lit = 0;
    if (tv->c1 > tv->c0 && out->s_lit == 0) {
        kevo_buf_puts(&out->s, tv->neg ? "(-" : "(");
        put_ll(&out->s, m, tv->c0, tv->c1);
        kevo_buf_puts(&out->s, ")");
    } else if (out->s_lit <= 0) {
        return false; /* a constant S <= 0: no interior */
    } else
        kevo_buf_printf(&out->s, "%ld", out->s_lit);
    /* F = S*v + R; skip when F < 0 (<= 0): v >= ceil((0 (1) - Rmin) / S);
     * skip when F >= 0 (> 0): v < ceil((0 (1) - Rmax) / S) */
    bool lt = kevo_rtok_is(m, op, "<") || kevo_rtok_is(m, op, "<=");
    bool eq = kevo_rtok_is(m, op, "<=") || kevo_rtok_is(m, op, ">=");
    if (c->g[c->d[k].g].run) { /* a conjunct: STMT is skipped when it fails */
        lt = !lt;
        eq = !eq;
    }
    if (turn) /* F < 0 is -F > 0 */
        lt = !lt;
    out->lower = lt;
    kevo_buf_puts(&out->num, lt == eq ? "1 - " : "0 - ");
    put_extreme(&out->num, c, &ts, !lt);
    c->d[k].n_sub = ts.n_sub;
    memcpy(c->d[k].sub, ts.sub, sizeof ts.sub);
    return true;
}

static void cut_free(cut *x, int n)
{
    for (int i = 0; i < n; i++) {
        kevo_buf_free(&x[i].num);
        kevo_buf_free(&x[i].s);
    }
}

/* ---- guards --------------------------------------------------------------- */

/* Whether tokens [a,b) assign, increment or call. */
static bool writes_or_calls(const kevo_recipe_model *m, unsigned a, unsigned b)
{
    for (unsigned t = a; t < b; t++)
        if (kevo_rtok_assigns(m, t, true) ||
            (m->tok[t].kind == KEVO_CTOK_IDENT && m->tok[t].var < 0 && t + 1 < b &&
             kevo_rtok_is(m, t + 1, "(")))
            return true;
    return false;
}

/* The guards of the kernel and their disjuncts. */
static void find_guards(sctx *c)
{
    const kevo_recipe_model *m = c->m;
    for (unsigned t = m->t_fbody; t + 4 < m->n_tok; t++) {
        if (!kevo_rtok_is(m, t, "if") || !kevo_rtok_is(m, t + 1, "("))
            continue;
        unsigned rp = kevo_rtok_match(m, t + 1);
        if (rp == (unsigned)-1 || rp + 2 >= m->n_tok || writes_or_calls(m, t + 2, rp))
            continue;
        unsigned last;
        bool run = false;
        static const char *const stmt_kw[] = {"if", "for", "while", "do", "switch", "else",
                                              "case", "default", NULL};
        if (kevo_rtok_is(m, rp + 1, "continue") && kevo_rtok_is(m, rp + 2, ";"))
            last = rp + 2;
        else if (rp + 4 < m->n_tok && kevo_rtok_is(m, rp + 1, "{") &&
                 kevo_rtok_is(m, rp + 2, "continue") && kevo_rtok_is(m, rp + 3, ";") &&
                 kevo_rtok_is(m, rp + 4, "}"))
            last = rp + 4;
        else if (kevo_rtok_is(m, rp + 1, "{")) {
            last = kevo_rtok_match(m, rp + 1);
            run = true;
        } else if (!kevo_rtok_is_any(m, rp + 1, stmt_kw) && !kevo_rtok_comment(m, rp + 1)) {
            last = kevo_rtok_stmt_semi(m, rp + 1, (unsigned)m->n_tok);
            run = true;
        } else
            continue;
        if (last == (unsigned)-1 || last >= m->n_tok)
            continue;
        unsigned nx = kevo_rtok_skip_comments(m, last + 1, (unsigned)m->n_tok);
        if (nx < m->n_tok && kevo_rtok_is(m, nx, "else"))
            continue; /* the if statement goes on */
        if (c->n_g == SPLIT_MAX_GUARDS)
            return;
        guard *g = &c->g[c->n_g];
        *g = (guard){t, rp, last, run, c->n_d, 0};
        const char *sep = run ? "&&" : "||";
        unsigned a = t + 2;
        bool full = false;
        while (a < rp) {
            unsigned b = a;
            int dp = 0;
            for (; b < rp; b++) {
                if (kevo_rtok_is(m, b, "(") || kevo_rtok_is(m, b, "["))
                    dp++;
                else if (kevo_rtok_is(m, b, ")") || kevo_rtok_is(m, b, "]"))
                    dp--;
                else if (dp == 0 && kevo_rtok_is(m, b, sep))
                    break;
            }
            if (c->n_d == SPLIT_MAX_DISJ) {
                full = true;
                break;
            }
            unsigned d0 = a, d1 = b;
            trim(m, &d0, &d1);
            c->d[c->n_d++] = (disj){c->n_g, d0, d1, {0}, 0};
            g->n_d++;
            a = b + 1;
        }
        if (full) {
            c->n_d = g->d0;
            return;
        }
        c->n_g++;
    }
}

/* ---- which loops ------------------------------------------------------------ */

/* Whether tokens [a,b) are one name `<base><suffix>` or `<base><suffix>N`
 * (a bound split wrote). */
static bool split_name(const kevo_recipe_model *m, unsigned a, unsigned b, const char *base,
                       const char *suffix)
{
    kevo_rtok_strip_parens(m, &a, &b);
    if (b != a + 1 || m->tok[a].kind != KEVO_CTOK_IDENT)
        return false;
    size_t n, bl = strlen(base), sl = strlen(suffix);
    const char *s = kevo_rtok_text(m, a, &n);
    if (n < bl + sl || memcmp(s, base, bl) || memcmp(s + bl, suffix, sl))
        return false;
    for (size_t i = bl + sl; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* Whether loop l is a copy a split wrote: its bounds are the interior's
 * (`v < v_lo`, `v = v_lo; v < v_hi`, `v = v_hi`). Split again, a border
 * copy would only find its interior empty. */
static bool split_copy(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    const char *v = m->var[L->var].name;
    return split_name(m, L->t_ub0, L->t_ub1, v, "_lo") ||
           split_name(m, L->t_lb0, L->t_lb1, v, "_lo") ||
           split_name(m, L->t_lb0, L->t_lb1, v, "_hi");
}

/* Whether loop l has the form split takes (why says, when not). */
static bool loop_form(sctx *c, int l)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    int r = 0;
    if (!L->simple || L->step != 1)
        snprintf(c->why, sizeof c->why, "the loop at line %u is not `for (T v = a; v < b; v++)`",
                 L->line);
    else if (m->var[L->var].int_rank == 0)
        snprintf(c->why, sizeof c->why, "the loop at line %u counts with an unsigned or narrow type",
                 L->line);
    else if (L->n_pragmas > 0 || kevo_recipe_collapsed_into(m, l) >= 0)
        snprintf(c->why, sizeof c->why,
                 "the loop at line %u carries or is collapsed by a pragma: apply split before "
                 "pragma recipes",
                 L->line);
    else if (L->early_exit)
        kevo_recipe_early_exit_why(c->why, sizeof c->why, L);
    else if (split_copy(m, l))
        snprintf(c->why, sizeof c->why,
                 "the loop at line %u is a copy split wrote (its bounds are the interior's)",
                 L->line);
    else if (!invariant_expr(c, l, L->t_lb0, L->t_lb1, c->scope < 0, &r) ||
             !invariant_expr(c, l, L->t_ub0, L->t_ub1, c->scope < 0, &r))
        snprintf(c->why, sizeof c->why,
                 "the bounds of the loop at line %u are not integers that keep their values "
                 "through it",
                 L->line);
    else {
        for (size_t i = 0; i < c->nw; i++)
            if (c->w[i].kind == KEVO_WRITE_UNKNOWN && c->w[i].t_op > L->t_for &&
                c->w[i].t_op < L->t_end) {
                snprintf(c->why, sizeof c->why,
                         "the loop at line %u writes through an lvalue kevo cannot read", L->line);
                return false;
            }
        return true;
    }
    return false;
}

/* The cuts loop l's split makes: the disjuncts of the guards inside it,
 * not dropped already, that it can drop (drop[k] set, dropped left as
 * is). Returns how many (at most max), 0 when none or l has not the form. */
static int loop_cuts(sctx *c, int l, const bool *dropped, bool *drop, cut *cuts, int max)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    if (!loop_form(c, l))
        return 0;
    int n = 0;
    for (int k = 0; k < c->n_d && n < max; k++) {
        unsigned ti = c->g[c->d[k].g].t_if;
        if (dropped[k] || ti <= L->t_body || ti >= L->t_end)
            continue;
        if (disj_cut(c, l, k, &cuts[n])) {
            drop[k] = true;
            n++;
        }
    }
    if (n == 0)
        snprintf(c->why, sizeof c->why,
                 "no test of a guard `if (...) continue;` inside the loop at line %u is an "
                 "affine bound on its variable (E < X, E >= X, ...) split can drop",
                 L->line);
    return n;
}

/* ---- emitting --------------------------------------------------------------- */

/* What one copy of a loop body leaves out or rewrites. */
typedef struct copy_opts {
    const bool *dropped;       /* per disjunct: left out */
    const bool *inner;         /* per loop: replaced by its own split (NULL: none) */
    const bool *subst;         /* per variable: its uses replaced by its initialiser (NULL: none) */
    unsigned *rm0, *rm1;       /* declaration statements left out */
    int n_rm;
} copy_opts;

static int emit_split(kevo_buf *b, sctx *c, int l, const bool *dropped);

/* Whether a use at token t of a variable whose initialiser is a sum (+ - *
 * and parentheses only) reads the same without parentheses around it: it
 * is added (after `+`, or first in a bracket) and what follows binds no
 * tighter than + (so `W + ow + kw - 1`, as vectorize reads a row). */
static bool bare_sum_ok(const kevo_recipe_model *m, unsigned t)
{
    static const char *const before[] = {"+", "[", "(", NULL};
    static const char *const after[] = {"+", "-", "]", ")", ";", ",", NULL};
    return t > 0 && t + 1 < m->n_tok && kevo_rtok_is_any(m, t - 1, before) &&
           kevo_rtok_is_any(m, t + 1, after);
}

/* Tokens [t0,t1) with each variable of o->subst as its initialiser. */
static void put_subst(kevo_buf *b, const sctx *c, unsigned t0, unsigned t1, const bool *subst,
                      int depth)
{
    const kevo_recipe_model *m = c->m;
    unsigned cur = m->tok[t0].start;
    for (unsigned t = t0; t < t1; t++) {
        int v = m->tok[t].var;
        if (subst && v >= 0 && subst[v] && !m->tok[t].is_decl && depth < SPLIT_MAX_DEPTH) {
            unsigned d = kevo_recipe_decl_token(m, v);
            unsigned i1 = kevo_recipe_expr_end(m, d + 2, (unsigned)m->n_tok);
            bool bare = bare_sum_ok(m, t);
            kevo_buf_printf(b, "%.*s%s", (int)(m->tok[t].start - cur), m->src + cur,
                            bare ? "" : "(");
            put_subst(b, c, d + 2, i1, subst, depth + 1);
            kevo_buf_puts(b, bare ? "" : ")");
        } else
            kevo_buf_printf(b, "%.*s", (int)(m->tok[t].end - cur), m->src + cur);
        cur = m->tok[t].end;
    }
}

/* The previous token before t that is not a comment. */
static unsigned prev_tok(const kevo_recipe_model *m, unsigned t)
{
    while (t > 0 && kevo_rtok_comment(m, t - 1))
        t--;
    return t > 0 ? t - 1 : 0;
}

/* A statement at t left out: an empty statement where it is the body of
 * a for, if, else, while or do. */
static void put_removed(kevo_buf *b, const kevo_recipe_model *m, unsigned t)
{
    unsigned p = prev_tok(m, t);
    if (!kevo_rtok_is(m, p, ";") && !kevo_rtok_is(m, p, "{") && !kevo_rtok_is(m, p, "}"))
        kevo_buf_puts(b, " ;");
}

/* Loop l's body (from after its header's `)`) as written but for what o
 * says. */
static int put_body(kevo_buf *b, sctx *c, int l, const copy_opts *o)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    unsigned cur = m->tok[L->t_rparen].end;
    for (unsigned t = L->t_rparen + 1; t < L->t_end; t++) {
        const char *gap = m->src + cur;
        int gl = (int)(m->tok[t].start - cur);
        int k = -1;
        if (o->inner && kevo_rtok_is(m, t, "for"))
            for (size_t q = 0; q < m->n_loop; q++)
                if (m->loop[q].t_for == t && o->inner[q])
                    k = (int)q;
        if (k >= 0) {
            kevo_buf_printf(b, "%.*s", gl, gap);
            int error = emit_split(b, c, k, o->dropped);
            if (error < 0)
                return error;
            t = m->loop[k].t_end - 1;
            cur = m->tok[t].end;
            continue;
        }
        int g = -1;
        for (int q = 0; q < c->n_g && g < 0; q++)
            if (c->g[q].t_if == t)
                g = q;
        if (g >= 0) {
            const guard *G = &c->g[g];
            int kept = 0;
            for (int q = G->d0; q < G->d0 + G->n_d; q++)
                kept += !o->dropped[q];
            if (kept == G->n_d) {
                kevo_buf_printf(b, "%.*s", gl, gap);
                put_subst(b, c, t, G->t_rp + 1, o->subst, 0);
            } else if (kept == 0 && !G->run) {
                put_removed(b, m, t);
                t = G->t_last;
                cur = m->tok[t].end;
                continue;
            } else if (kept == 0) { /* STMT alone, walked on from here */
                kevo_buf_printf(b, "%.*s", gl, gap);
                t = G->t_rp;
                cur = m->tok[t + 1].start;
                continue;
            } else {
                kevo_buf_printf(b, "%.*sif (", gl, gap);
                int put = 0;
                for (int q = G->d0; q < G->d0 + G->n_d; q++)
                    if (!o->dropped[q]) {
                        if (put++)
                            kevo_buf_puts(b, G->run ? " && " : " || ");
                        put_subst(b, c, c->d[q].a0, c->d[q].a1, o->subst, 0);
                    }
                kevo_buf_puts(b, ")");
            }
            cur = m->tok[G->t_rp].end;
            t = G->t_rp;
            continue;
        }
        bool removed = false;
        for (int q = 0; q < o->n_rm && !removed; q++)
            if (o->rm0[q] == t) {
                put_removed(b, m, t);
                t = o->rm1[q];
                cur = m->tok[t].end;
                removed = true;
            }
        if (removed)
            continue;
        int v = m->tok[t].var;
        if (o->subst && v >= 0 && o->subst[v] && !m->tok[t].is_decl) {
            kevo_buf_printf(b, "%.*s", gl, gap);
            put_subst(b, c, t, t + 1, o->subst, 0);
        } else
            kevo_buf_printf(b, "%.*s", (int)(m->tok[t].end - cur), gap);
        cur = m->tok[t].end;
    }
    return 0;
}

/* The declaration statement holding declaring token d: [*s0, *s1], *s1
 * its `;`. */
static bool decl_stmt(const kevo_recipe_model *m, unsigned d, unsigned *s0, unsigned *s1)
{
    unsigned t = d;
    int dp = 0;
    while (t > 0) {
        unsigned p = t - 1;
        if (kevo_rtok_is(m, p, ")") || kevo_rtok_is(m, p, "]"))
            dp++;
        else if (kevo_rtok_is(m, p, "(") || kevo_rtok_is(m, p, "[")) {
            if (dp-- == 0)
                return false;
        } else if (dp == 0 && (kevo_rtok_is(m, p, ";") || kevo_rtok_is(m, p, "{") ||
                               kevo_rtok_is(m, p, "}")))
            break;
        t = p;
    }
    *s0 = kevo_rtok_skip_comments(m, t, d + 1);
    *s1 = kevo_rtok_stmt_semi(m, d, (unsigned)m->n_tok);
    return *s1 < m->n_tok && kevo_rtok_is(m, *s1, ";");
}

/* In the innermost interior of loop l: the declarations the dropped tests
 * read, written into their uses where every declaration of their
 * statement is one of them and no name of their initialisers is declared
 * again inside l. Fills subst (per variable) and the statements to leave
 * out. */
static void plan_subst(const sctx *c, int l, const bool *dropped, bool *subst, unsigned *rm0,
                       unsigned *rm1, int *n_rm, int max_rm)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    /* the type of a use would change under sizeof or typeof: none then */
    static const char *const typed[] = {"sizeof", "typeof", "__typeof__", "__typeof",
                                        "_Alignof", "__alignof__", NULL};
    for (unsigned t = L->t_for; t < L->t_end; t++)
        if (kevo_rtok_is_any(m, t, typed))
            return;
    for (int k = 0; k < c->n_d; k++)
        if (dropped[k])
            for (int i = 0; i < c->d[k].n_sub; i++) {
                int v = c->d[k].sub[i];
                if (inside(m, l, m->var[v].decl_off) &&
                    m->var[v].decl_off > m->tok[L->t_body].start)
                    subst[v] = true;
            }
    /* statements: all their declarations substituted, or none of them */
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t v = 0; v < m->n_var; v++) {
            if (!subst[v])
                continue;
            unsigned d = kevo_recipe_decl_token(m, (int)v), s0, s1, i0, i1;
            bool ok = d != (unsigned)-1 && decl_stmt(m, d, &s0, &s1) &&
                      substitutable(c, l, (int)v, &i0, &i1);
            for (unsigned t = ok ? s0 : 0; ok && t < s1; t++)
                if (m->tok[t].is_decl && (m->tok[t].var < 0 || !subst[m->tok[t].var]))
                    ok = false;
            /* no name of the initialiser declared again inside the loop */
            for (unsigned t = ok ? i0 : 0; ok && t < i1; t++) {
                int x = m->tok[t].var;
                if (x < 0)
                    continue;
                for (unsigned u = L->t_for; ok && u < L->t_end; u++)
                    if (m->tok[u].is_decl && m->tok[u].var != x &&
                        !strcmp(m->var[m->tok[u].var >= 0 ? m->tok[u].var : x].name,
                                m->var[x].name))
                        ok = false;
            }
            if (!ok) {
                /* this statement's declarations all stay */
                if (d != (unsigned)-1 && decl_stmt(m, d, &s0, &s1)) {
                    for (unsigned t = s0; t < s1; t++)
                        if (m->tok[t].is_decl && m->tok[t].var >= 0)
                            subst[m->tok[t].var] = false;
                }
                subst[v] = false;
                changed = true;
            }
        }
    }
    *n_rm = 0;
    for (size_t v = 0; v < m->n_var; v++) {
        unsigned s0, s1;
        if (!subst[v] || !decl_stmt(m, kevo_recipe_decl_token(m, (int)v), &s0, &s1))
            continue;
        bool seen = false;
        for (int q = 0; q < *n_rm; q++)
            seen |= rm0[q] == s0;
        if (!seen && *n_rm < max_rm) {
            rm0[*n_rm] = s0;
            rm1[(*n_rm)++] = s1;
        } else if (!seen)
            subst[v] = false; /* no room: keep it (its statement stays too) */
    }
}

/* Fresh names for loop l's interior bounds (once). */
static void name_bounds(sctx *c, int l)
{
    const kevo_recipe_model *m = c->m;
    if (c->named[l] || c->n_taken + 3 > SPLIT_MAX_NAMES)
        return;
    const char *v = m->var[m->loop[l].var].name;
    static const char *const suffix[3] = {"_lo", "_hi", "_cut"};
    char *dst[3] = {c->lo[l], c->hi[l], c->cutv[l]};
    for (int i = 0; i < 3; i++) {
        kevo_recipe_fresh_name(dst[i], 64, m, v, suffix[i], c->taken, (size_t)c->n_taken);
        snprintf(c->taken[c->n_taken++], 64, "%s", dst[i]);
    }
    c->named[l] = true;
}

/* The statements computing loop l's interior [lo, hi) from its cuts, each
 * line at indentation ind. */
static void put_bounds(kevo_buf *b, sctx *c, int l, const cut *cuts, int n_cuts, const char *ind)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    const char *lo = c->lo[l], *hi = c->hi[l], *nn = c->cutv[l];
    kevo_buf lb = {0}, ub = {0};
    kevo_rtok_put(&lb, m, L->t_lb0, L->t_lb1);
    kevo_rtok_put(&ub, m, L->t_ub0, L->t_ub1);
    kevo_buf_printf(b, "%slong long %s = (long long)(%s);\n", ind, lo, kevo_buf_cstr(&lb));
    kevo_buf_printf(b, "%slong long %s = (long long)(%s)%s;\n", ind, hi, kevo_buf_cstr(&ub),
                    L->cond_op == KEVO_COND_LE ? " + 1" : "");
    kevo_buf_printf(b, "%slong long %s;\n", ind, nn);
    kevo_buf_free(&lb);
    kevo_buf_free(&ub);
    /* strides known only at run time: checked positive, else no interior */
    kevo_buf cond = {0};
    for (int i = 0; i < n_cuts; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = cuts[j].s_lit == 0 && !strcmp(kevo_buf_cstr(&cuts[j].s), kevo_buf_cstr(&cuts[i].s));
        if (cuts[i].s_lit == 0 && !seen)
            kevo_buf_printf(&cond, "%s%s > 0", cond.len ? " && " : "", kevo_buf_cstr(&cuts[i].s));
    }
    char in[200];
    snprintf(in, sizeof in, "%s%s", ind, cond.len ? "    " : "");
    if (cond.len)
        kevo_buf_printf(b, "%sif (%s) {\n", ind, kevo_buf_cstr(&cond));
    for (int pass = 0; pass < 2; pass++) {
        bool lower = pass == 0;
        for (int i = 0; i < n_cuts; i++) {
            const cut *x = &cuts[i];
            if (x->lower != lower)
                continue;
            const char *s = kevo_buf_cstr(&x->s);
            kevo_buf_printf(b, "%s%s = %s;\n", in, nn, kevo_buf_cstr(&x->num));
            if (x->s_lit != 1) /* the ceiling of nn / s, s > 0 */
                kevo_buf_printf(b, "%s%s = %s >= 0 ? (%s + %s - 1) / %s : -(-%s / %s);\n", in, nn,
                                nn, nn, s, s, nn, s);
            kevo_buf_printf(b, "%sif (%s %s %s)\n%s    %s = %s;\n", in, nn, lower ? ">" : "<",
                            lower ? lo : hi, in, lower ? lo : hi, nn);
        }
        /* lo at most the end, hi at least lo */
        kevo_buf_printf(b, "%sif (%s %s %s)\n%s    %s = %s;\n", in, lower ? lo : hi,
                        lower ? ">" : "<", lower ? hi : lo, in, lower ? lo : hi, lower ? hi : lo);
    }
    if (cond.len)
        kevo_buf_printf(b, "%s} else\n%s    %s = %s;\n", ind, ind, lo, hi);
    kevo_buf_free(&cond);
}

/* Loop l split in three (the caller checked that it drops something), the
 * disjuncts in `dropped` already gone from every copy. The bounds of an
 * inner loop split in the interior are computed here, before the copies,
 * when they keep their values through l (so that the interior's body
 * holds the inner loop's three copies alone, as unroll_jam wants them). */
static int emit_split(kevo_buf *b, sctx *c, int l, const bool *dropped)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *L = &m->loop[l];
    int error = 0;
    bool *drop2 = calloc((size_t)c->n_d + 1, sizeof *drop2);
    bool *inner = calloc(m->n_loop + 1, sizeof *inner);
    bool *subst = calloc(m->n_var + 1, sizeof *subst);
    bool *scratch = calloc((size_t)c->n_d + 1, sizeof *scratch);
    cut cuts[SPLIT_MAX_DISJ];
    int n_cuts = 0;
    kevo_buf pre = {0}, typ = {0}, lb = {0}, test = {0};
    if (!drop2 || !inner || !subst || !scratch) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    memcpy(drop2, dropped, (size_t)c->n_d * sizeof *drop2);
    n_cuts = loop_cuts(c, l, dropped, drop2, cuts, SPLIT_MAX_DISJ);
    if (n_cuts == 0) {
        error = kevo_error_set(KEVO_ERROR, "split: recipe bug: loop %d drops nothing", l);
        goto done;
    }
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    char in1[200];
    snprintf(in1, sizeof in1, "%.*s    ", (int)il, ind);
    name_bounds(c, l);
    /* the inner loops whose own split drops more, outermost first */
    bool any_inner = false;
    for (size_t q = (size_t)l + 1; q < m->n_loop && m->loop[q].t_for < L->t_end; q++) {
        bool under = false;
        for (size_t p = (size_t)l + 1; p < q && !under; p++)
            under = inner[p] && loop_inside(m, (int)q, (int)p);
        if (under)
            continue;
        cut tmp[SPLIT_MAX_DISJ];
        memcpy(scratch, drop2, (size_t)c->n_d * sizeof *scratch);
        int n = loop_cuts(c, (int)q, drop2, scratch, tmp, SPLIT_MAX_DISJ);
        if (n > 0) {
            inner[q] = any_inner = true;
            /* the same cuts, with everything they read kept through l too */
            cut tmp2[SPLIT_MAX_DISJ];
            memcpy(scratch, drop2, (size_t)c->n_d * sizeof *scratch);
            c->scope = l;
            int n2 = loop_cuts(c, (int)q, drop2, scratch, tmp2, SPLIT_MAX_DISJ);
            c->scope = -1;
            cut_free(tmp2, n2);
            name_bounds(c, (int)q);
            if (n2 == n && c->named[q]) {
                put_bounds(&pre, c, (int)q, tmp, n, in1);
                c->hoisted[q] = true;
            }
        }
        cut_free(tmp, n);
    }
    unsigned rm0[32], rm1[32];
    int n_rm = 0;
    if (!any_inner)
        plan_subst(c, l, drop2, subst, rm0, rm1, &n_rm, 32);
    if (!c->named[l]) {
        error = kevo_error_set(KEVO_EINVAL, "split: too many loops split in one kernel");
        goto done;
    }
    const char *v = m->var[L->var].name, *lo = c->lo[l], *hi = c->hi[l];
    kevo_rtok_put(&typ, m, L->t_type0, L->t_type1);
    kevo_rtok_put(&lb, m, L->t_lb0, L->t_lb1);
    kevo_rtok_put(&test, m, L->t_semi1 + 1, L->t_semi2); /* `v < b` as written */
    const char *T = kevo_buf_cstr(&typ);
    kevo_buf_printf(b,
                    "{ /* kevo split: the loop at line %u in three; in [%s, %s) the tests on "
                    "'%s' its guards cannot pass are left out */\n",
                    L->line, lo, hi, v);
    if (!c->hoisted[l])
        put_bounds(b, c, l, cuts, n_cuts, in1);
    kevo_buf_puts(b, kevo_buf_cstr(&pre));
    copy_opts border = {dropped, NULL, NULL, NULL, NULL, 0};
    copy_opts interior = {drop2, any_inner ? inner : NULL, any_inner ? NULL : subst, rm0, rm1,
                          n_rm};
    kevo_buf_printf(b, "%sfor (%s %s = %s; %s < %s; %s++)", in1, T, v, kevo_buf_cstr(&lb), v, lo,
                    v);
    if ((error = put_body(b, c, l, &border)) < 0)
        goto done;
    kevo_buf_printf(b, "\n%sfor (%s %s = %s; %s < %s; %s++)", in1, T, v, lo, v, hi, v);
    if ((error = put_body(b, c, l, &interior)) < 0)
        goto done;
    kevo_buf_printf(b, "\n%sfor (%s %s = %s; %s; %s++)", in1, T, v, hi, kevo_buf_cstr(&test), v);
    if ((error = put_body(b, c, l, &border)) < 0)
        goto done;
    kevo_buf_printf(b, "\n%.*s}", (int)il, ind);
done:
    kevo_buf_free(&pre);
    kevo_buf_free(&typ);
    kevo_buf_free(&lb);
    kevo_buf_free(&test);
    cut_free(cuts, n_cuts);
    free(drop2);
    free(inner);
    free(subst);
    free(scratch);
    return error;
}

/* With `then`: what follows split in the same step, on the split kernel
 * (register_block, then omp_parallel: each where it applies). */
static int follow_up(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                     long then)
{
    char name[256];
    kevo_recipe_kernel_name(name, sizeof name, m);
    char *text = NULL;
    int error =
        kevo_recipe_edits_apply(&text, &out->edits, source, strlen(source), m->fn_start, m->fn_end);
    if (error < 0)
        return error;
    static const long omp[2] = {2, 1};
    const struct {
        const char *recipe;
        const long *params;
        size_t n;
    } steps[2] = {{"register_block", NULL, 0}, {"omp_parallel", omp, 2}};
    for (int i = then == 2 ? 0 : 1; i < 2; i++) {
        char *next = NULL;
        error = kevo_recipe_apply(&next, steps[i].recipe, steps[i].params, steps[i].n, text, name);
        if (error == KEVO_EINVAL) {
            kevo_error_clear();
            continue;
        }
        if (error < 0) {
            free(text);
            return error;
        }
        free(text);
        text = next;
    }
    out->whole = text;
    return 0;
}

int kevo_recipe_split_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                            const long *params)
{
    long only = params[0], then = params[1];
    if (then < 0 || then > 2)
        return kevo_error_set(KEVO_EINVAL, "then is %ld: it takes 0, 1 or 2", then);
    if (kevo_recipe_loop_index_check(m, only) < 0)
        return KEVO_EINVAL;
    int error = 0, applied = 0;
    sctx *c = calloc(1, sizeof *c);
    bool *none = NULL;
    kevo_buf first_why = {0};
    if (!c)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    c->m = m;
    c->scope = -1;
    c->addr_taken = calloc(m->n_var + 1, sizeof *c->addr_taken);
    c->named = calloc(m->n_loop + 1, sizeof *c->named);
    c->hoisted = calloc(m->n_loop + 1, sizeof *c->hoisted);
    c->lo = calloc(m->n_loop + 1, sizeof *c->lo);
    c->hi = calloc(m->n_loop + 1, sizeof *c->hi);
    c->cutv = calloc(m->n_loop + 1, sizeof *c->cutv);
    if (!c->addr_taken || !c->named || !c->hoisted || !c->lo || !c->hi || !c->cutv) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (unsigned t = m->t_fbody; t + 1 < m->n_tok; t++)
        if (kevo_rtok_is(m, t, "&") && m->tok[t + 1].var >= 0)
            c->addr_taken[m->tok[t + 1].var] = true;
    if ((error = kevo_recipe_writes(&c->w, &c->nw, m, m->t_fbody, (unsigned)m->n_tok)) < 0)
        goto done;
    find_guards(c);
    if (c->n_g == 0) {
        error = kevo_error_set(KEVO_EINVAL,
                               "no guard `if (...) continue;` whose test assigns and calls "
                               "nothing: nothing to split at");
        goto done;
    }
    none = calloc((size_t)c->n_d + 1, sizeof *none);
    bool *scratch = calloc((size_t)c->n_d + 1, sizeof *scratch);
    if (!none || !scratch) {
        free(scratch);
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    unsigned after = 0; /* loops before this token are inside one split already */
    for (size_t k = 0; k < m->n_loop; k++) {
        const kevo_rloop *L = &m->loop[k];
        if ((only >= 0 && (long)k != only) || L->t_for < after)
            continue;
        cut tmp[SPLIT_MAX_DISJ];
        memset(scratch, 0, (size_t)c->n_d * sizeof *scratch);
        int n = loop_cuts(c, (int)k, none, scratch, tmp, SPLIT_MAX_DISJ);
        cut_free(tmp, n);
        if (n == 0) {
            bool holds_guard = false;
            for (int g = 0; g < c->n_g; g++)
                holds_guard |= c->g[g].t_if > L->t_body && c->g[g].t_if < L->t_end;
            if (!first_why.len && holds_guard)
                kevo_buf_puts(&first_why, c->why);
            continue;
        }
        kevo_buf text = {0};
        if ((error = emit_split(&text, c, (int)k, none)) < 0) {
            kevo_buf_free(&text);
            break;
        }
        unsigned from = m->tok[L->t_for].start, to = m->tok[L->t_end - 1].end;
        error = kevo_cparse_edits_add(&out->edits, from, to, "%s", kevo_buf_cstr(&text));
        kevo_buf_free(&text);
        if (error < 0)
            break;
        applied++;
        after = L->t_end;
    }
    free(scratch);
    if (error == 0 && applied == 0)
        error = kevo_error_set(KEVO_EINVAL, "no loop to split: %s",
                               first_why.len ? kevo_buf_cstr(&first_why) : "no loop qualifies");
    if (error == 0 && then > 0)
        error = follow_up(out, m, source, then);
done:
    kevo_buf_free(&first_why);
    free(none);
    free(c->w);
    free(c->addr_taken);
    free(c->named);
    free(c->hoisted);
    free(c->lo);
    free(c->hi);
    free(c->cutv);
    free(c);
    return error;
}
