/*
 * recipe/recipe_kblock.c - the `kblock` recipe: cache blocking of the
 * reduction loop of a register-blocked nest (what `register_block` writes).
 * The loop A around a vector loop `j += W` holding the reduction loop
 * `for (T k = a; k < b; k++)` (the rows of a matmul) runs once per block of
 * `kc` values of k, each pass carrying the partial sums through memory:
 *
 *     for (T k_kb = (a); k_kb == (a) || k_kb < (b); k_kb += KC) {
 *         const T k_ke = (b) - k_kb > KC ? k_kb + KC : (b);
 *         A, every `for (T k = a; k < b; k++)` in it now `k_kb .. k_ke`
 *     }
 *
 * so that the kc rows of the packed operand one pass reads (kc x N floats)
 * stay in L2 for all of A's rows, instead of the whole operand streaming
 * from L3 or DRAM once per block of rows. Each sum still adds its terms in
 * the order k = a, a+1, ...: the results are bit for bit the unblocked
 * kernel's.
 *
 * What makes the passes add up, checked on A's writes (anything else
 * declines, naming the line):
 *   - inside a reduction loop: `acc += ...` / `acc -= ...` into an
 *     accumulator declared in A, or `X[i] += ...` into memory at an index
 *     that does not move with k (in-memory accumulation), or locals of the
 *     loop;
 *   - each accumulator is stored after its loop (`X[i] = acc`, the vector
 *     store `(*(vf *)&X[i]) = (acc) - (vf){0}`, or the lane stores of a
 *     last window `X[(i) + lane] = acc[lane]`, directly or through a copy
 *     `vf vout = (acc) - ...`); it starts either from what it is stored to
 *     (a row-update matmul: the pass reads the sums so far) or from a
 *     constant, which the first pass keeps and later passes replace with a
 *     load of the stored element;
 *   - other stores to memory lie in statements of A's body before every
 *     statement holding a reduction loop (the zeroing of C's row: the first
 *     pass only) or after every one (an epilogue: the last pass only);
 *   - the memory A writes is read only there, in the accumulator's start
 *     and at the element an accumulation writes; no call but to pure math
 *     functions; the bounds a, b are neither declared nor written in A.
 * An `omp parallel for` on A stays on A (one parallel region per pass).
 *
 * Must not: reorder any sum, or touch loops other than the blocked nests.
 */
#include "model.h"

#include "kevo/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_MAX_K 64   /* reduction loops in one blocked nest */
#define KB_MAX_ACC 64 /* accumulators in one blocked nest */
#define KB_MAX_STMT 32

typedef struct kb_acc {
    int var;
    unsigned t_decl;           /* the declaring name */
    unsigned t_init0, t_init1; /* its initialiser */
    unsigned t_type0;          /* first type token (the declaration's start) */
    bool from_constant;        /* starts from a constant: rewritten */
    char load[1024];           /* the element it is stored to, as an rvalue */
    bool stored;
} kb_acc;

typedef struct kb_nest {
    const kevo_recipe_model *m;
    int A, R;
    int ks[KB_MAX_K];
    size_t nk;
    kb_acc acc[KB_MAX_ACC];
    size_t nacc;
    int alias_of[KB_MAX_ACC * 2][2]; /* copy var, accumulator index */
    size_t nalias;
    unsigned guard_t[KB_MAX_STMT]; /* first token of a guarded statement */
    unsigned guard_end[KB_MAX_STMT];
    bool guard_first[KB_MAX_STMT]; /* prologue (first pass) or epilogue (last) */
    size_t nguard;
    kevo_rwrite *w;
    size_t nw;
    char why[300];
} kb_nest;

static bool decline(kb_nest *n, unsigned t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool decline(kb_nest *n, unsigned t, const char *fmt, ...)
{
    int k =
        snprintf(n->why, sizeof(n->why), "line %u: ", kevo_recipe_line(n->m, n->m->tok[t].start));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->why + k, sizeof(n->why) - (size_t)k, fmt, ap);
    va_end(ap);
    return false;
}

static const char *var_name(const kevo_recipe_model *m, unsigned t)
{
    return m->tok[t].var >= 0 ? m->var[m->tok[t].var].name : "?";
}

/* The k loop containing token t (its body), or -1. */
static int k_loop_of(const kb_nest *n, unsigned t)
{
    for (size_t i = 0; i < n->nk; i++) {
        const kevo_rloop *L = &n->m->loop[n->ks[i]];
        if (t > L->t_rparen && t < L->t_end)
            return n->ks[i];
    }
    return -1;
}

/* Whether token t is in the header of some loop of A (its induction
 * variable's increment). */
static bool in_loop_header(const kb_nest *n, unsigned t)
{
    const kevo_recipe_model *m = n->m;
    for (size_t l = 0; l < m->n_loop; l++)
        if (m->loop[l].t_lparen < t && t < m->loop[l].t_rparen &&
            m->loop[l].t_for > m->loop[n->A].t_for && m->loop[l].t_end <= m->loop[n->A].t_end)
            return true;
    return false;
}

static bool in_A(const kb_nest *n, int v)
{
    const kevo_rloop *A = &n->m->loop[n->A];
    return kevo_recipe_declared_in(n->m, v, A->t_body, A->t_end);
}

/* An array declared in A: memory of each pass, not carried across them. */
static bool own_array(const kb_nest *n, int v)
{
    return in_A(n, v) && n->m->var[v].vtype != KEVO_VTYPE_POINTER;
}

static int acc_index(const kb_nest *n, int v)
{
    for (size_t i = 0; i < n->nacc; i++)
        if (n->acc[i].var == v)
            return (int)i;
    for (size_t i = 0; i < n->nalias; i++)
        if (n->alias_of[i][0] == v)
            return n->alias_of[i][1];
    return -1;
}

/* Tokens [a, b) as the source spells them. */
static void tokens_text(char *buf, size_t size, const kevo_recipe_model *m, unsigned a, unsigned b)
{
    if (b <= a) {
        buf[0] = '\0';
        return;
    }
    unsigned s = m->tok[a].start, e = m->tok[b - 1].end;
    snprintf(buf, size, "%.*s", (int)(e - s), m->src + s);
}

/* The end (exclusive) of the statement starting at token t, before t1. */
static unsigned stmt_end(const kevo_recipe_model *m, unsigned t, unsigned t1)
{
    if (t >= t1)
        return t1;
    if (kevo_rtok_is(m, t, "{")) {
        unsigned c = kevo_rtok_match(m, t);
        return c == (unsigned)-1 || c >= t1 ? t1 : c + 1;
    }
    if (kevo_rtok_is(m, t, "for") || kevo_rtok_is(m, t, "while") || kevo_rtok_is(m, t, "switch") ||
        kevo_rtok_is(m, t, "if")) {
        unsigned c = t + 1 < t1 ? kevo_rtok_match(m, t + 1) : (unsigned)-1;
        if (c == (unsigned)-1 || c >= t1)
            return t1;
        unsigned e = stmt_end(m, c + 1, t1);
        if (kevo_rtok_is(m, t, "if") && e < t1 && kevo_rtok_is(m, e, "else"))
            e = stmt_end(m, e + 1, t1);
        return e;
    }
    if (kevo_rtok_is(m, t, "do")) {
        unsigned e = stmt_end(m, t + 1, t1); /* body, then while (...) ; */
        return e + 1 < t1 ? stmt_end(m, e + 1, t1) + 1 : t1;
    }
    unsigned e = kevo_recipe_expr_end(m, t, t1);
    while (e < t1 && !kevo_rtok_is(m, e, ";")) /* `int a = 1, b = 2;` */
        e = kevo_recipe_expr_end(m, e + 1, t1);
    return e < t1 ? e + 1 : t1;
}

static const char *const pure_calls[] = {
    "sqrtf", "sqrt", "expf",  "exp",  "logf",  "log",  "fabsf",  "fabs",
    "fmaxf", "fmax", "fminf", "fmin", "tanhf", "tanh", "sizeof", "__builtin_expect",
    NULL};

static bool pure_call(const kevo_recipe_model *m, unsigned t)
{
    size_t k;
    const char *s = kevo_rtok_text(m, t, &k);
    for (size_t i = 0; pure_calls[i]; i++)
        if (strlen(pure_calls[i]) == k && !memcmp(pure_calls[i], s, k))
            return true;
    return false;
}

/* `( ... )` around [a, b): strip one pair. */
static void strip_parens(const kevo_recipe_model *m, unsigned *a, unsigned *b)
{
    while (*b > *a + 1 && kevo_rtok_is(m, *a, "(") && kevo_rtok_match(m, *a) == *b - 1) {
        (*a)++;
        (*b)--;
    }
}

/* The reduction loops of A: simple loops named like R with R's bounds. */
static bool find_k_loops(kb_nest *n)
{
    const kevo_recipe_model *m = n->m;
    const kevo_rloop *A = &m->loop[n->A], *R = &m->loop[n->R];
    const char *kname = m->var[R->var].name;
    n->nk = 0;
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        if (L->t_for <= A->t_for || L->t_end > A->t_end || !L->simple || L->step != 1 ||
            L->cond_op != KEVO_COND_LT || L->var < 0 || strcmp(m->var[L->var].name, kname) ||
            !kevo_rtok_same(m, L->t_lb0, L->t_lb1, R->t_lb0, R->t_lb1) ||
            !kevo_rtok_same(m, L->t_ub0, L->t_ub1, R->t_ub0, R->t_ub1))
            continue;
        if (k_loop_of(n, L->t_for) >= 0)
            return decline(n, L->t_for, "a reduction loop over %s inside another", kname);
        if (n->nk == KB_MAX_K)
            return decline(n, L->t_for, "more than 64 reduction loops over %s", kname);
        n->ks[n->nk++] = (int)l;
    }
    /* the bounds must read the same in every pass */
    for (int side = 0; side < 2; side++) {
        unsigned a = side ? R->t_ub0 : R->t_lb0, b = side ? R->t_ub1 : R->t_lb1;
        for (unsigned t = a; t < b; t++) {
            int v = m->tok[t].var;
            if (v < 0 && m->tok[t].kind == KEVO_CTOK_IDENT && t + 1 < b &&
                kevo_rtok_is(m, t + 1, "("))
                return decline(n, t, "the bound of %s calls a function", kname);
            if (v < 0)
                continue;
            if (in_A(n, v) || v == A->var)
                return decline(n, t,
                               "the bound of the reduction loop reads %s, declared "
                               "by the loop to block",
                               m->var[v].name);
            for (size_t i = 0; i < n->nw; i++)
                if (n->w[i].var == v && !in_loop_header(n, n->w[i].t_op))
                    return decline(n, n->w[i].t_op,
                                   "the loop to block writes %s, which the bound of "
                                   "the reduction loop reads",
                                   m->var[v].name);
        }
    }
    return true;
}

/* Text without spaces and without parentheses around all of it: `(
 * *(vf *)&c_0[j] )` and `*(vf*)&c_0[j]` compare equal. */
static void normalise(char *s)
{
    size_t n = 0;
    for (size_t i = 0; s[i]; i++)
        if (s[i] != ' ')
            s[n++] = s[i];
    s[n] = '\0';
    while (n >= 2 && s[0] == '(' && s[n - 1] == ')') {
        int depth = 0;
        size_t i = 0;
        for (; i < n; i++) {
            depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
            if (depth == 0)
                break;
        }
        if (i != n - 1)
            break; /* `(a) + (b)`: not one pair around all */
        memmove(s, s + 1, n - 2);
        n -= 2;
        s[n] = '\0';
    }
}

/* The declaration of accumulator a: `TYPE name = INIT;`. */
static bool acc_decl(kb_nest *n, kb_acc *a)
{
    const kevo_recipe_model *m = n->m;
    unsigned d = (unsigned)m->n_tok;
    for (unsigned t = m->loop[n->A].t_body; t < m->loop[n->A].t_end; t++)
        if (m->tok[t].var == a->var && m->tok[t].is_decl)
            d = t;
    if (d == m->n_tok || !kevo_rtok_is(m, d + 1, "="))
        return decline(n, d < m->n_tok ? d : m->loop[n->A].t_for,
                       "accumulator %s is not declared with an initialiser in the "
                       "loop to block",
                       m->var[a->var].name);
    unsigned t = d;
    while (t > 0 &&
           (m->tok[t - 1].kind == KEVO_CTOK_IDENT || m->tok[t - 1].kind == KEVO_CTOK_KEYWORD) &&
           m->tok[t - 1].var < 0)
        t--;
    if (t == d || !(kevo_rtok_is(m, t - 1, ";") || kevo_rtok_is(m, t - 1, "{") ||
                    kevo_rtok_is(m, t - 1, "}")))
        return decline(n, d, "accumulator %s: not a plain `TYPE name = value;`",
                       m->var[a->var].name);
    a->t_decl = d;
    a->t_type0 = t;
    a->t_init0 = d + 2;
    a->t_init1 = kevo_recipe_expr_end(m, d + 2, m->loop[n->A].t_end);
    if (!kevo_rtok_is(m, a->t_init1, ";"))
        return decline(n, d, "accumulator %s: one declaration per statement", m->var[a->var].name);
    return true;
}

/* The store of accumulator a at write w: the element it writes, as an
 * rvalue, into a->load (all stores of a must agree). */
static bool acc_store(kb_nest *n, kb_acc *a, const kevo_rwrite *w, unsigned r0, unsigned r1)
{
    const kevo_recipe_model *m = n->m;
    char load[1024];
    unsigned i0 = w->t_idx0, i1 = w->t_idx1; /* `[ ... ]` */
    strip_parens(m, &r0, &r1);
    bool lane = r1 >= r0 + 4 && kevo_rtok_is(m, r1 - 1, "]") && kevo_rtok_is(m, r1 - 3, "[") &&
                m->tok[r1 - 2].var >= 0;
    if (lane) { /* X[(B) + lane] = acc[lane]: the vector at X[B] */
        int lv = m->tok[r1 - 2].var;
        if (!(i1 >= i0 + 5 && kevo_rtok_is(m, i1 - 3, "+") && m->tok[i1 - 2].var == lv))
            return decline(n, w->t_op,
                           "accumulator %s stored lane by lane at an index that is "
                           "not `base + lane`",
                           m->var[a->var].name);
        char base[400], type[120];
        unsigned b0 = i0 + 1, b1 = i1 - 3;
        strip_parens(m, &b0, &b1);
        tokens_text(base, sizeof(base), m, b0, b1);
        tokens_text(type, sizeof(type), m, a->t_type0, a->t_decl);
        snprintf(load, sizeof(load), "(*(%s *)&%s[%s])", type, m->var[w->var].name, base);
    } else {
        char lhs[1024], idx[400], type[120];
        tokens_text(lhs, sizeof(lhs), m, w->t_lhs0, w->t_lhs1);
        normalise(lhs);
        tokens_text(idx, sizeof(idx), m, i0, i1);
        tokens_text(type, sizeof(type), m, a->t_type0, a->t_decl);
        /* `(*(vf *)&X[i]) = ` (the write is the whole), or `*(vf *)&X[i] = ` (the
         * write is X[i], the cast before it) */
        bool vector_store =
            !strncmp(lhs, "*(", 2) || (w->t_lhs0 >= 2 && kevo_rtok_is(m, w->t_lhs0 - 1, "&") &&
                                       kevo_rtok_is(m, w->t_lhs0 - 2, ")"));
        bool scalar_acc = m->var[a->var].vtype == KEVO_VTYPE_FLOAT;
        if (vector_store == scalar_acc) /* `C[i] = acc[0]` of a vector: the load would read past */
            return decline(n, w->t_op, "accumulator %s is stored as %s", m->var[a->var].name,
                           scalar_acc ? "a vector" : "one element");
        if (vector_store)
            snprintf(load, sizeof(load), "(*(%s *)&%s%s)", type, m->var[w->var].name, idx);
        else
            snprintf(load, sizeof(load), "%s%s", m->var[w->var].name, idx);
    }
    if (a->stored && strcmp(a->load, load))
        return decline(n, w->t_op, "accumulator %s is stored to two places", m->var[a->var].name);
    snprintf(a->load, sizeof(a->load), "%s", load);
    a->stored = true;
    /* the element's address must read the same at the accumulator's start */
    for (unsigned t = w->t_lhs0; t < w->t_lhs1; t++) {
        int v = m->tok[t].var;
        if (v < 0 || (lane && t == i1 - 2))
            continue;
        if (in_A(n, v) && m->var[v].decl_off > m->tok[a->t_decl].start)
            return decline(n, w->t_op, "accumulator %s is stored at an index declared after it",
                           m->var[a->var].name);
        for (size_t k = 0; k < n->nw; k++)
            if (n->w[k].var == v && n->w[k].t_op > a->t_decl && n->w[k].t_op < w->t_op &&
                n->w[k].kind == KEVO_WRITE_SCALAR)
                return decline(n, w->t_op,
                               "the index accumulator %s is stored at changes after "
                               "it starts",
                               m->var[a->var].name);
    }
    return true;
}

/* The first token of the top-level statement of A's body that holds
 * token t, and its end in *end; (unsigned)-1 when none does. */
static unsigned top_stmt(const kb_nest *n, unsigned t, unsigned *end)
{
    const kevo_recipe_model *m = n->m;
    const kevo_rloop *A = &m->loop[n->A];
    for (unsigned s = A->t_body + 1; s < A->t_end - 1;) {
        unsigned e = stmt_end(m, s, A->t_end - 1);
        if (e <= s)
            break;
        if (t >= s && t < e) {
            *end = e;
            return s;
        }
        s = e;
    }
    *end = 0;
    return (unsigned)-1;
}

static bool holds_k(const kb_nest *n, unsigned s, unsigned e)
{
    for (size_t i = 0; i < n->nk; i++)
        if (n->m->loop[n->ks[i]].t_for >= s && n->m->loop[n->ks[i]].t_for < e)
            return true;
    return false;
}

static bool guarded(const kb_nest *n, unsigned t)
{
    for (size_t g = 0; g < n->nguard; g++)
        if (t >= n->guard_t[g] && t < n->guard_end[g])
            return true;
    return false;
}

static bool add_guard(kb_nest *n, unsigned t)
{
    const kevo_recipe_model *m = n->m;
    unsigned e, s = top_stmt(n, t, &e);
    if (s == (unsigned)-1 || holds_k(n, s, e))
        return decline(n, t, "a store beside the reduction loop in its statement (%s)",
                       var_name(m, t));
    for (size_t g = 0; g < n->nguard; g++)
        if (n->guard_t[g] == s)
            return true;
    /* before every statement holding a reduction loop, or after every one */
    bool before = true, after = true;
    const kevo_rloop *A = &m->loop[n->A];
    for (unsigned q = A->t_body + 1; q < A->t_end - 1;) {
        unsigned qe = stmt_end(m, q, A->t_end - 1);
        if (qe <= q)
            break;
        if (holds_k(n, q, qe)) {
            if (q < s)
                before = false;
            if (q > s)
                after = false;
        }
        q = qe;
    }
    if (!before && !after)
        return decline(n, t, "a store between two statements holding reduction loops (%s)",
                       var_name(m, t));
    if (n->nguard == KB_MAX_STMT)
        return decline(n, t, "too many statements to guard");
    n->guard_t[n->nguard] = s;
    n->guard_end[n->nguard] = e;
    n->guard_first[n->nguard++] = before;
    return true;
}

/* Whether write w's variable (ELEMENT) is memory A writes, by root. */
static int root_of(const kevo_recipe_model *m, int v)
{
    int r = kevo_recipe_root_param(m, v);
    return r >= 0 ? r : v;
}

/* Whether v, declared in reduction loop K, is the variable of a loop in K
 * whose bounds do not read K's: the same elements for every k. */
static bool inner_index(const kevo_recipe_model *m, const kevo_rloop *K, int v)
{
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        if (L->var == v && L->canonical && L->t_for > K->t_for && L->t_end <= K->t_end &&
            !kevo_recipe_uses_var(m, L->t_lb0, L->t_lb1, K->var) &&
            !kevo_recipe_uses_var(m, L->t_ub0, L->t_ub1, K->var))
            return true;
    }
    return false;
}

static bool check_writes(kb_nest *n)
{
    const kevo_recipe_model *m = n->m;
    /* pass 1: accumulations inside the reduction loops */
    for (size_t i = 0; i < n->nw; i++) {
        const kevo_rwrite *w = &n->w[i];
        int kl = k_loop_of(n, w->t_op);
        if (kl < 0 || in_loop_header(n, w->t_op))
            continue;
        const kevo_rloop *K = &m->loop[kl];
        bool add = kevo_rtok_is(m, w->t_op, "+=") || kevo_rtok_is(m, w->t_op, "-=");
        if (w->var >= 0 && kevo_recipe_declared_in(m, w->var, K->t_body, K->t_end))
            continue; /* a local of the reduction loop */
        if (w->kind == KEVO_WRITE_SCALAR && w->var >= 0 && in_A(n, w->var) && add) {
            if (acc_index(n, w->var) < 0) {
                if (n->nacc == KB_MAX_ACC)
                    return decline(n, w->t_op, "more than 64 accumulators (%s)",
                                   var_name(m, w->t_lhs0));
                n->acc[n->nacc++] = (kb_acc){.var = w->var};
            }
            continue;
        }
        if (w->kind == KEVO_WRITE_ELEMENT && w->var >= 0 && !own_array(n, w->var) && add &&
            !kevo_recipe_uses_var(m, w->t_idx0, w->t_idx1, K->var)) {
            for (unsigned t = w->t_idx0; t < w->t_idx1; t++)
                if (m->tok[t].var >= 0 &&
                    kevo_recipe_declared_in(m, m->tok[t].var, K->t_body, K->t_end) &&
                    !inner_index(m, K, m->tok[t].var))
                    return decline(n, w->t_op,
                                   "an accumulation into %s at an index that moves "
                                   "with the reduction",
                                   m->var[w->var].name);
            continue; /* in-memory accumulation: the pass adds to what is there */
        }
        return decline(n, w->t_op,
                       "the reduction loop writes %s other than by `+=` into an "
                       "accumulator or an element that does not move with it",
                       var_name(m, w->t_lhs0));
    }
    for (size_t a = 0; a < n->nacc; a++)
        if (!acc_decl(n, &n->acc[a]))
            return false;
    /* copies of accumulators: locals initialised from one, outside the reduction loops */
    for (unsigned t = m->loop[n->A].t_body; t < m->loop[n->A].t_end; t++) {
        if (!m->tok[t].is_decl || m->tok[t].var < 0 || acc_index(n, m->tok[t].var) >= 0 ||
            !kevo_rtok_is(m, t + 1, "=") || k_loop_of(n, t) >= 0)
            continue;
        unsigned e = kevo_recipe_expr_end(m, t + 2, m->loop[n->A].t_end);
        int from = -1;
        for (unsigned q = t + 2; q < e; q++)
            if (m->tok[q].var >= 0 && acc_index(n, m->tok[q].var) >= 0)
                from = acc_index(n, m->tok[q].var);
        if (from >= 0 && n->nalias < KB_MAX_ACC * 2) {
            n->alias_of[n->nalias][0] = m->tok[t].var;
            n->alias_of[n->nalias++][1] = from;
        }
    }
    /* pass 2: everything outside the reduction loops */
    for (size_t i = 0; i < n->nw; i++) {
        const kevo_rwrite *w = &n->w[i];
        if (k_loop_of(n, w->t_op) >= 0 || in_loop_header(n, w->t_op))
            continue;
        if (w->var < 0 || w->kind == KEVO_WRITE_DEREF || w->kind == KEVO_WRITE_UNKNOWN)
            return decline(n, w->t_op, "a store kblock cannot read (%s)", var_name(m, w->t_lhs0));
        if (w->kind == KEVO_WRITE_SCALAR) {
            if (!in_A(n, w->var))
                return decline(n, w->t_op, "the loop to block writes %s, declared outside it",
                               m->var[w->var].name);
            if (acc_index(n, w->var) >= 0)
                return decline(n, w->t_op, "accumulator %s is written outside its reduction loop",
                               m->var[w->var].name);
            continue;
        }
        if (own_array(n, w->var))
            return decline(n, w->t_op, "a store into %s, an array of the loop to block",
                           m->var[w->var].name);
        unsigned r0 = w->t_op + 1, r1 = kevo_recipe_expr_end(m, r0, m->loop[n->A].t_end);
        int a = -1;
        for (unsigned t = r0; t < r1; t++) {
            int v = m->tok[t].var;
            int k = v >= 0 ? acc_index(n, v) : -1;
            if (k >= 0 && a >= 0 && k != a)
                return decline(n, w->t_op, "one store of two accumulators (%s)", m->var[v].name);
            if (k >= 0)
                a = k;
        }
        if (a >= 0) {
            if (!kevo_rtok_is(m, w->t_op, "="))
                return decline(n, w->t_op, "accumulator %s is not stored by `=`",
                               m->var[n->acc[a].var].name);
            if (!acc_store(n, &n->acc[a], w, r0, r1))
                return false;
            continue;
        }
        if (!add_guard(n, w->t_op))
            return false;
    }
    for (size_t a = 0; a < n->nacc; a++) {
        kb_acc *c = &n->acc[a];
        if (!c->stored)
            return decline(n, c->t_decl, "accumulator %s is never stored", m->var[c->var].name);
        char init[512];
        unsigned i0 = c->t_init0, i1 = c->t_init1;
        strip_parens(m, &i0, &i1);
        tokens_text(init, sizeof(init), m, i0, i1);
        char load[1024];
        snprintf(load, sizeof(load), "%s", c->load);
        normalise(init);
        normalise(load);
        if (!strcmp(init, load))
            continue; /* starts from what it stores: the sums so far */
        bool constant = true;
        for (unsigned t = c->t_init0; t < c->t_init1 && constant; t++)
            if (m->tok[t].var >= 0 ||
                (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "(")))
                constant = false;
        if (!constant)
            return decline(n, c->t_decl,
                           "accumulator %s starts from neither a constant nor what "
                           "it stores",
                           m->var[c->var].name);
        c->from_constant = true;
    }
    return true;
}

/* The memory A writes is read only where a pass reads its own sums. */
static bool check_reads(kb_nest *n)
{
    const kevo_recipe_model *m = n->m;
    const kevo_rloop *A = &m->loop[n->A];
    int roots[64];
    size_t nr = 0;
    for (size_t i = 0; i < n->nw && nr < 64; i++)
        if (n->w[i].kind == KEVO_WRITE_ELEMENT && n->w[i].var >= 0)
            roots[nr++] = root_of(m, n->w[i].var);
    for (unsigned t = A->t_body; t < A->t_end; t++) {
        int v = m->tok[t].var;
        if (kevo_rtok_is(m, t, "__attribute__") && kevo_rtok_is(m, t + 1, "(")) {
            unsigned c = kevo_rtok_match(m, t + 1);
            if (c != (unsigned)-1 && c < A->t_end)
                t = c; /* `vector_size(64)` is no call */
            continue;
        }
        if (m->tok[t].kind == KEVO_CTOK_IDENT && v < 0 && kevo_rtok_is(m, t + 1, "(") &&
            !pure_call(m, t)) {
            char name[64];
            tokens_text(name, sizeof(name), m, t, t + 1);
            return decline(n, t, "a call (%s) in the loop to block", name);
        }
        if (v < 0 || m->tok[t].is_decl || guarded(n, t) ||
            (m->var[v].vtype != KEVO_VTYPE_POINTER && m->var[v].vtype != KEVO_VTYPE_ARRAY))
            continue; /* a value, not memory */
        bool written = false;
        for (size_t r = 0; r < nr && !written; r++)
            written = root_of(m, v) == roots[r];
        if (!written)
            continue;
        bool ok = false;
        for (size_t i = 0; i < n->nw && !ok; i++)
            ok = t >= n->w[i].t_lhs0 && t < n->w[i].t_lhs1;
        for (size_t a = 0; a < n->nacc && !ok; a++)
            ok = !n->acc[a].from_constant && t >= n->acc[a].t_init0 && t < n->acc[a].t_init1;
        if (!ok && !kevo_rtok_is(m, t + 1, "[") && !(t > 0 && kevo_rtok_is(m, t - 1, "*"))) {
            /* `float *c_0 = C + i * N;`: an address, not a read */
            unsigned s = t;
            while (s > A->t_body && !kevo_rtok_is(m, s, "=") && !kevo_rtok_is(m, s, ";"))
                s--;
            ok = kevo_rtok_is(m, s, "=") && s > 0 && m->tok[s - 1].is_decl &&
                 m->tok[s - 1].var >= 0 && m->var[m->tok[s - 1].var].vtype == KEVO_VTYPE_POINTER;
        }
        if (!ok)
            return decline(n, t,
                           "reads %s, which the loop to block writes, beside its "
                           "accumulation",
                           m->var[v].name);
    }
    return true;
}

/* Loop l: a vector loop (`j += W`) whose child is a simple loop; *r it. */
static bool vector_with_reduction(const kevo_recipe_model *m, int l, int *r)
{
    const kevo_rloop *V = &m->loop[l];
    if (!(V->sized_step || (V->strided && V->step > 1)))
        return false;
    for (size_t c = (size_t)l + 1; c < m->n_loop && m->loop[c].t_for < V->t_end; c++)
        if (m->loop[c].parent == l && m->loop[c].simple && m->loop[c].step == 1 &&
            m->loop[c].cond_op == KEVO_COND_LT && m->loop[c].var >= 0 &&
            /* not a tile's point loop: its bounds read the tile loop's variable */
            !kevo_recipe_uses_var(m, m->loop[c].t_lb0, m->loop[c].t_lb1, V->var) &&
            !kevo_recipe_uses_var(m, m->loop[c].t_ub0, m->loop[c].t_ub1, V->var)) {
            *r = (int)c;
            return true;
        }
    return false;
}

static bool nest_check(kb_nest *n)
{
    const kevo_recipe_model *m = n->m;
    const kevo_rloop *A = &m->loop[n->A];
    if (!A->canonical || !A->declared || A->early_exit || !A->body_compound)
        return decline(n, A->t_for,
                       "the loop to block is not a canonical `for (T i = a; ...) "
                       "{ ... }` that runs to its end");
    if (A->pragma_flags & ~(unsigned)(KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR))
        return decline(n, A->t_for,
                       "the loop to block carries a pragma other than `omp parallel "
                       "for`");
    for (int p = 0; p < A->n_pragmas; p++)
        if (kevo_recipe_pragma_collapse(m, A->pragmas[p]) > 1)
            return decline(n, A->t_for, "the loop to block is collapsed into another");
    const kevo_rloop *R = &m->loop[n->R];
    if (R->t_lb1 == R->t_lb0 + 1 && m->tok[R->t_lb0].var >= 0) {
        const char *lb = m->var[m->tok[R->t_lb0].var].name;
        size_t ll = strlen(lb);
        if (ll > 3 && !strcmp(lb + ll - 3, "_kb"))
            return decline(n, R->t_for, "blocked already (the reduction starts at %s)", lb);
    }
    free(n->w);
    n->w = NULL;
    int error = kevo_recipe_writes(&n->w, &n->nw, m, A->t_body, A->t_end);
    if (error < 0)
        return decline(n, A->t_for, "%s", kevo_error_last());
    return find_k_loops(n) && check_writes(n) && check_reads(n);
}

static int nest_rewrite(kevo_recipe_out *out, kb_nest *n, long kc)
{
    const kevo_recipe_model *m = n->m;
    const kevo_rloop *A = &m->loop[n->A], *R = &m->loop[n->R];
    char kb[64], ke[64], lb[400], ub[400], type[120];
    char taken[1][64];
    kevo_recipe_fresh_name(kb, sizeof(kb), m, m->var[R->var].name, "_kb", NULL, 0);
    snprintf(taken[0], sizeof(taken[0]), "%s", kb);
    kevo_recipe_fresh_name(ke, sizeof(ke), m, m->var[R->var].name, "_ke", taken, 1);
    tokens_text(lb, sizeof(lb), m, R->t_lb0, R->t_lb1);
    tokens_text(ub, sizeof(ub), m, R->t_ub0, R->t_ub1);
    tokens_text(type, sizeof(type), m, R->t_type0, R->t_type1);
    unsigned first = m->tok[A->t_for].start;
    if (A->n_pragmas > 0)
        first = m->dir[A->pragmas[0]].start;
    size_t il;
    const char *ind = kevo_recipe_indent(m, first, &il);
    /* a loop sharing its line with the one around it (`for (...) for (...)`,
     * what `tile` writes) is blocked where it starts, not at the line's */
    unsigned at = A->n_pragmas > 0 || A->at_line_start ? kevo_recipe_line_begin(m, first) : first;
    int error =
        kevo_cparse_edits_add(&out->edits, at, at,
                              "%.*sfor (%s %s = (%s); %s == (%s) || %s < (%s); %s += %ld) {\n"
                              "%.*s    const %s %s = (%s) - %s > %ld ? %s + %ld : (%s);\n",
                              (int)il, ind, type, kb, lb, kb, lb, kb, ub, kb, kc, (int)il, ind,
                              type, ke, ub, kb, kc, kb, kc, ub);
    if (error < 0)
        return error;
    unsigned close = m->tok[A->t_end - 1].end;
    if ((error = kevo_cparse_edits_add(&out->edits, close, close, "\n%.*s}", (int)il, ind)) < 0)
        return error;
    for (size_t i = 0; i < n->nk; i++) {
        const kevo_rloop *L = &m->loop[n->ks[i]];
        if ((error = kevo_cparse_edits_add(&out->edits, m->tok[L->t_lb0].start,
                                           m->tok[L->t_lb1 - 1].end, "%s", kb)) < 0 ||
            (error = kevo_cparse_edits_add(&out->edits, m->tok[L->t_ub0].start,
                                           m->tok[L->t_ub1 - 1].end, "%s", ke)) < 0)
            return error;
    }
    for (size_t g = 0; g < n->nguard; g++) {
        unsigned off = m->tok[n->guard_t[g]].start;
        const char *pass = n->guard_first[g] ? kb : ke, *edge = n->guard_first[g] ? lb : ub;
        /* a loop under pragmas: the guard opens a block above them (no
         * statement may come between a pragma and its loop) */
        const kevo_rloop *G = NULL;
        for (size_t l = 0; l < m->n_loop && !G; l++)
            if (m->loop[l].t_for == n->guard_t[g] && m->loop[l].n_pragmas > 0)
                G = &m->loop[l];
        if (G) {
            unsigned p_at = m->dir[G->pragmas[0]].start;
            size_t p_il = 0;
            const char *p_ind = kevo_recipe_indent(m, p_at, &p_il);
            if ((error = kevo_cparse_edits_add(&out->edits, p_at, p_at,
                                               "if (%s == (%s)) {\n%.*s", pass, edge,
                                               (int)p_il, p_ind)) < 0 ||
                (error = kevo_cparse_edits_add(&out->edits, m->tok[n->guard_end[g] - 1].end,
                                               m->tok[n->guard_end[g] - 1].end, "\n%.*s}",
                                               (int)p_il, p_ind)) < 0)
                return error;
            continue;
        }
        if ((error = kevo_cparse_edits_add(&out->edits, off, off, "if (%s == (%s)) ", pass,
                                           edge)) < 0)
            return error;
    }
    for (size_t a = 0; a < n->nacc; a++) {
        const kb_acc *c = &n->acc[a];
        if (!c->from_constant)
            continue;
        char init[512];
        tokens_text(type, sizeof(type), m, c->t_type0, c->t_decl);
        tokens_text(init, sizeof(init), m, c->t_init0, c->t_init1);
        bool braces = kevo_rtok_is(m, c->t_init0, "{"); /* `v8 acc = {0}`: a compound literal */
        if ((error = kevo_cparse_edits_add(
                 &out->edits, m->tok[c->t_init0].start, m->tok[c->t_init1 - 1].end,
                 "%s == (%s) ? (%s)%s%s%s : (%s)(%s)", kb, lb, type, braces ? "" : "(", init,
                 braces ? "" : ")", type, c->load)) < 0)
            return error;
    }
    return 0;
}

int kevo_recipe_kblock_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                             const long *params)
{
    (void)source;
    long kc = params[0];
    int done = 0, error = 0;
    unsigned last_end = 0;
    char why[300] = "no register-blocked nest: a loop around a vector loop (`j += W`) that holds "
                    "a reduction loop `for (T k = a; k < b; k++)`";
    if (kc < 1)
        return kevo_error_set(KEVO_EINVAL, "kc %ld: the block must hold at least one k", kc);
    for (size_t l = 0; l < m->n_loop && error == 0; l++) {
        int r = -1;
        int A = m->loop[l].parent;
        if (A < 0 || !vector_with_reduction(m, (int)l, &r) || m->loop[A].t_for < last_end)
            continue; /* a nest already blocked holds this vector loop */
        kb_nest n = {.m = m, .A = A, .R = r};
        if (nest_check(&n)) {
            error = nest_rewrite(out, &n, kc);
            last_end = m->loop[A].t_end;
            done++;
        } else if (!done) {
            snprintf(why, sizeof(why), "%s", n.why);
        }
        free(n.w);
    }
    if (error < 0)
        return error;
    return done ? 0 : kevo_error_set(KEVO_EINVAL, "%s", why);
}
