/*
 * recipe/recipe_fuse.c - the fuse recipe: fuse a loop nest with the loop
 * nest that is the next statement after it in the same block, so that what
 * the first (the producer) writes is consumed while it is still in cache
 * instead of in another pass over memory (the Level 2 "GEMM or conv, then
 * scale, bias, activation" pattern). Two forms, tried in this order:
 *
 *   epilogue     the consumer is a perfect nest of simple loops from 0 (a
 *                flat `for (i = 0; i < M * N; i++)` or, e.g., `n, co, p <
 *                HO * WO`) whose body touches the producer's output only at
 *                the element its iterations enumerate, and the producer
 *                writes that output only at an index that enumerates the
 *                same range once, in order, from its enclosing loops
 *                (`y[m * N + n]` under `m < M, n < N`; `((n*CO + co)*HO +
 *                oh)*WO + ow`). The consumer's body moves to the end of the
 *                producer's innermost enclosing loop, its loop variables
 *                replaced by the producer's (`y[i]` -> `y[m * N + n]`, `p` ->
 *                `(oh * WO + ow)`), and the consumer loop is removed.
 *   same header  both outer loops have the same header; the consumer reads
 *                what the producer writes only at indices the producer wrote
 *                in the same iteration. Result: one loop, the producer's body
 *                then the consumer's (clashing declarations renamed).
 *
 * Index equality is decided on integer polynomials (sums of products of
 * variables and literals; const locals that are products, such as `total =
 * N * CO * HO * WO`, are expanded), so `m * N + n`, `n + N * m` and the
 * bound `N * M` are recognised in any order; sizes are assumed
 * non-negative, as they are. These are heuristics on one function, like the
 * rest of access.c, and the correctness gate judges the result.
 *
 * The consumer's variables are replaced rather than declared (`const T i =
 * ...`) so that the fused body indexes the arrays with the producer's own
 * index text: the textual checks of the other recipes (omp_parallel's
 * stores and same-index checks, tile) then see one index per array.
 *
 * Must not: reorder the consumer's iterations (they run in their original
 * order, interleaved with the producer's), fuse across pragmas, early exits
 * or aliasing pointer locals, or edit anything outside the two nests.
 */
#include "model.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- integer polynomials over variables --------------------------------- */

#define POLY_TERMS 48
#define POLY_DEG 12

typedef struct mono {
    long coef;
    int n;
    int f[POLY_DEG]; /* variable indices, sorted */
} mono;

typedef struct poly {
    int n;
    bool bad; /* overflowed the fixed capacity */
    mono t[POLY_TERMS];
} poly;

static int mono_cmp_f(const mono *a, const mono *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = 0; i < a->n; i++)
        if (a->f[i] != b->f[i])
            return a->f[i] < b->f[i] ? -1 : 1;
    return 0;
}

static void poly_zero(poly *p)
{
    p->n = 0;
    p->bad = false;
}

static void poly_add_mono(poly *p, const mono *x)
{
    if (x->coef == 0)
        return;
    for (int i = 0; i < p->n; i++)
        if (mono_cmp_f(&p->t[i], x) == 0) {
            p->t[i].coef += x->coef;
            if (p->t[i].coef == 0)
                p->t[i] = p->t[--p->n];
            return;
        }
    if (p->n == POLY_TERMS) {
        p->bad = true;
        return;
    }
    p->t[p->n++] = *x;
}

static void poly_const(poly *p, long c)
{
    poly_zero(p);
    mono x = {.coef = c, .n = 0};
    poly_add_mono(p, &x);
}

static void poly_var(poly *p, int v)
{
    poly_zero(p);
    mono x = {.coef = 1, .n = 1, .f = {v}};
    poly_add_mono(p, &x);
}

/* p += s * q */
static void poly_axpy(poly *p, long s, const poly *q)
{
    p->bad |= q->bad;
    for (int i = 0; i < q->n; i++) {
        mono x = q->t[i];
        x.coef *= s;
        poly_add_mono(p, &x);
    }
}

/* *out = a * b (out may not alias a or b) */
static void poly_mul(poly *out, const poly *a, const poly *b)
{
    poly_zero(out);
    out->bad = a->bad || b->bad;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) {
            const mono *x = &a->t[i], *y = &b->t[j];
            if (x->n + y->n > POLY_DEG) {
                out->bad = true;
                return;
            }
            mono r = {.coef = x->coef * y->coef, .n = 0};
            int p = 0, q = 0;
            while (p < x->n || q < y->n)
                r.f[r.n++] = q >= y->n || (p < x->n && x->f[p] <= y->f[q]) ? x->f[p++] : y->f[q++];
            poly_add_mono(out, &r);
        }
}

static bool poly_eq(const poly *a, const poly *b)
{
    if (a->bad || b->bad || a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++) {
        bool found = false;
        for (int j = 0; j < b->n && !found; j++)
            found = mono_cmp_f(&a->t[i], &b->t[j]) == 0 && a->t[i].coef == b->t[j].coef;
        if (!found)
            return false;
    }
    return true;
}

/* ---- the fusion context ------------------------------------------------- */

typedef struct fuse_ctx {
    const kevo_recipe_model *m;
    unsigned r0, r1; /* tokens of both nests */
    kevo_rwrite *w;  /* writes in [r0, r1) */
    size_t nw;
    kevo_rwrite *fw; /* writes anywhere in the kernel's body */
    size_t nfw;
    int sym[16]; /* loop variables that stand for themselves */
    size_t n_sym;
    int sub_var[8]; /* variables replaced by a polynomial */
    const poly *sub[8];
    size_t n_sub;
    int depth; /* const expansion depth */
} fuse_ctx;

static bool written_in(const fuse_ctx *c, int v)
{
    for (size_t i = 0; i < c->nw; i++)
        if (c->w[i].var == v)
            return true;
    return false;
}

/* A variable that keeps one value through both nests: an integer parameter
 * or local declared before them and not written in them. */
static bool is_invariant(const fuse_ctx *c, int v)
{
    const kevo_recipe_model *m = c->m;
    if (v < 0 || m->var[v].vtype != KEVO_VTYPE_INT)
        return false;
    if (!m->var[v].is_param &&
        (m->var[v].decl_off == UINT_MAX || m->var[v].decl_off >= m->tok[c->r0].start))
        return false;
    return !written_in(c, v);
}

/* End of an expression starting at t: the first `,` `;` or unmatched
 * closing bracket at depth 0. */
static unsigned expr_end(const kevo_recipe_model *m, unsigned t)
{
    int depth = 0;
    for (unsigned k = t; k < m->n_tok; k++) {
        size_t n;
        const char *p = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", p[0]))
            depth++;
        else if (n == 1 && strchr(")]}", p[0])) {
            if (--depth < 0)
                return k;
        } else if (depth == 0 && n == 1 && (p[0] == ',' || p[0] == ';'))
            return k;
    }
    return (unsigned)m->n_tok;
}

/* Whether the declaration holding token d says `const` before its first
 * declarator. */
static bool decl_is_const(const kevo_recipe_model *m, unsigned d)
{
    for (unsigned k = d; k-- > 0;) {
        if (kevo_rtok_is(m, k, ";") || kevo_rtok_is(m, k, "{") || kevo_rtok_is(m, k, "}") ||
            kevo_rtok_is(m, k, "("))
            return false;
        if (kevo_rtok_is(m, k, "const"))
            return true;
    }
    return false;
}

static bool parse_sum(fuse_ctx *c, unsigned *t, unsigned t1, poly *out);

static bool parse_primary(fuse_ctx *c, unsigned *t, unsigned t1, poly *out)
{
    const kevo_recipe_model *m = c->m;
    if (*t >= t1)
        return false;
    if (kevo_rtok_is(m, *t, "(")) {
        unsigned close = kevo_rtok_match(m, *t);
        if (close == (unsigned)-1 || close >= t1)
            return false;
        unsigned k = *t + 1;
        if (!parse_sum(c, &k, close, out) || k != close)
            return false;
        *t = close + 1;
        return true;
    }
    if (m->tok[*t].kind == KEVO_CTOK_LITERAL) {
        size_t n;
        const char *p = kevo_rtok_text(m, *t, &n);
        char buf[32];
        if (n == 0 || n >= sizeof(buf) || !isdigit((unsigned char)p[0]))
            return false;
        memcpy(buf, p, n);
        buf[n] = 0;
        char *end;
        long v = strtol(buf, &end, 10);
        while (*end == 'l' || *end == 'L' || *end == 'u' || *end == 'U')
            end++;
        if (*end || (buf[0] == '0' && n > 1 && isdigit((unsigned char)buf[1])))
            return false;
        poly_const(out, v);
        (*t)++;
        return true;
    }
    int v = m->tok[*t].var;
    if (v < 0 || m->tok[*t].kind != KEVO_CTOK_IDENT)
        return false;
    if (*t + 1 < t1 && (kevo_rtok_is(m, *t + 1, "[") || kevo_rtok_is(m, *t + 1, "(")))
        return false;
    for (size_t i = 0; i < c->n_sub; i++)
        if (c->sub_var[i] == v) {
            *out = *c->sub[i];
            (*t)++;
            return true;
        }
    for (size_t i = 0; i < c->n_sym; i++)
        if (c->sym[i] == v) {
            poly_var(out, v);
            (*t)++;
            return true;
        }
    if (!is_invariant(c, v))
        return false;
    poly_var(out, v);
    (*t)++;
    /* a const local that is a product (`total = N * CO * HO * WO`) stands
     * for that product, so that it equals the same product written out */
    unsigned d = kevo_recipe_decl_token(m, v);
    if (d == (unsigned)-1 || m->var[v].is_param || c->depth >= 6 || !kevo_rtok_is(m, d + 1, "=") ||
        !decl_is_const(m, d))
        return true;
    unsigned e0 = d + 2, e1 = expr_end(m, e0), k = e0;
    for (unsigned i = e0; i < e1; i++) /* the initializer's values must still hold */
        for (size_t j = 0; j < c->nfw; j++)
            if (m->tok[i].var >= 0 && c->fw[j].var == m->tok[i].var)
                return true;
    poly *init = malloc(sizeof(*init));
    if (!init)
        return true;
    c->depth++;
    bool ok = parse_sum(c, &k, e1, init) && k == e1 && init->n == 1 && !init->bad;
    c->depth--;
    if (ok)
        *out = *init;
    free(init);
    return true;
}

static bool parse_unary(fuse_ctx *c, unsigned *t, unsigned t1, poly *out)
{
    if (*t < t1 && (kevo_rtok_is(c->m, *t, "-") || kevo_rtok_is(c->m, *t, "+"))) {
        bool neg = kevo_rtok_is(c->m, *t, "-");
        (*t)++;
        if (!parse_unary(c, t, t1, out))
            return false;
        if (neg)
            for (int i = 0; i < out->n; i++)
                out->t[i].coef = -out->t[i].coef;
        return true;
    }
    return parse_primary(c, t, t1, out);
}

static bool parse_product(fuse_ctx *c, unsigned *t, unsigned t1, poly *out)
{
    if (!parse_unary(c, t, t1, out))
        return false;
    bool ok = true;
    poly *f = NULL, *r = NULL;
    while (ok && *t < t1 && kevo_rtok_is(c->m, *t, "*")) {
        (*t)++;
        if ((!f && !(f = malloc(sizeof(*f)))) || (!r && !(r = malloc(sizeof(*r))))) {
            ok = false;
            break;
        }
        if (!(ok = parse_unary(c, t, t1, f)))
            break;
        poly_mul(r, out, f);
        *out = *r;
    }
    free(f);
    free(r);
    return ok && !out->bad;
}

static bool parse_sum(fuse_ctx *c, unsigned *t, unsigned t1, poly *out)
{
    if (!parse_product(c, t, t1, out))
        return false;
    poly *q = NULL;
    bool ok = true;
    while (*t < t1 && (kevo_rtok_is(c->m, *t, "+") || kevo_rtok_is(c->m, *t, "-"))) {
        long s = kevo_rtok_is(c->m, *t, "-") ? -1 : 1;
        (*t)++;
        if ((!q && !(q = malloc(sizeof(*q)))) || !(ok = parse_product(c, t, t1, q)))
            break;
        poly_axpy(out, s, q);
    }
    free(q);
    return ok && !out->bad;
}

/* Polynomial of tokens [t0,t1), all of them. */
static bool poly_of(fuse_ctx *c, unsigned t0, unsigned t1, poly *out)
{
    unsigned t = t0;
    return t0 < t1 && parse_sum(c, &t, t1, out) && t == t1;
}

/* ---- small helpers ------------------------------------------------------ */

#define TEXT(a, b) (int)(m->tok[(b)-1].end - m->tok[(a)].start), m->src + m->tok[(a)].start

/* The first token at or after t that is not a comment. */
static unsigned next_code(const kevo_recipe_model *m, unsigned t)
{
    while (t < m->n_tok && m->tok[t].kind == KEVO_CTOK_COMMENT)
        t++;
    return t;
}

/* The last token before t that is not a comment ((unsigned)-1 if none). */
static unsigned prev_code(const kevo_recipe_model *m, unsigned t)
{
    while (t-- > 0)
        if (m->tok[t].kind != KEVO_CTOK_COMMENT)
            return t;
    return (unsigned)-1;
}

static unsigned tok_line(const kevo_recipe_model *m, unsigned t)
{
    return kevo_recipe_line(m, m->tok[t].start);
}

static bool is_array_var(const kevo_recipe_model *m, int v)
{
    return v >= 0 && (m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY);
}

static bool is_ancestor(const kevo_recipe_model *m, int a, int l)
{
    for (; l >= 0; l = m->loop[l].parent)
        if (l == a)
            return true;
    return false;
}

/* Whether loop c is an unconditional statement of its parent's body. */
static bool unconditional_child(const kevo_recipe_model *m, int c)
{
    const kevo_rloop *C = &m->loop[c], *P = &m->loop[C->parent];
    if (C->t_for == next_code(m, P->t_body))
        return true;
    if (!P->body_compound)
        return false;
    int depth = 0;
    for (unsigned k = P->t_body + 1; k < C->t_for; k++) {
        if (kevo_rtok_is(m, k, "{"))
            depth++;
        else if (kevo_rtok_is(m, k, "}"))
            depth--;
    }
    unsigned p = prev_code(m, C->t_for);
    return depth == 0 &&
           (kevo_rtok_is(m, p, ";") || kevo_rtok_is(m, p, "{") || kevo_rtok_is(m, p, "}"));
}

/* Index tokens inside `v[ ... ]` at token t (t names v): *i0,*i1 the
 * tokens between the brackets. False when v is not subscripted once. */
static bool subscript_at(const kevo_recipe_model *m, unsigned t, unsigned t1, unsigned *i0,
                         unsigned *i1)
{
    if (t + 1 >= t1 || !kevo_rtok_is(m, t + 1, "["))
        return false;
    unsigned close = kevo_rtok_match(m, t + 1);
    if (close == (unsigned)-1 || close >= t1 || kevo_rtok_is(m, close + 1, "["))
        return false;
    if (t > 0 && kevo_rtok_is(m, t - 1, "&"))
        return false; /* &v[...]: an alias, not an access */
    *i0 = t + 2;
    *i1 = close;
    return close > t + 2;
}

/* Names of the variables declared in tokens [t0,t1). */
static bool declares_name(const kevo_recipe_model *m, unsigned t0, unsigned t1, const char *name)
{
    for (unsigned t = t0; t < t1; t++)
        if (m->tok[t].is_decl && m->tok[t].var >= 0 &&
            strcmp(m->var[m->tok[t].var].name, name) == 0)
            return true;
    return false;
}

/* Pointer locals used in [t0,t1) must not alias another array: declared
 * without reference to another pointer (e.g. from malloc) and never
 * assigned in the nests. */
static int no_pointer_alias(const fuse_ctx *c, unsigned t0, unsigned t1)
{
    const kevo_recipe_model *m = c->m;
    for (unsigned t = t0; t < t1; t++) {
        int v = m->tok[t].var;
        if (!is_array_var(m, v) || m->var[v].is_param)
            continue;
        for (size_t i = 0; i < c->nw; i++)
            if (c->w[i].var == v && c->w[i].kind == KEVO_WRITE_SCALAR)
                return kevo_error_set(KEVO_EINVAL,
                                      "the pointer '%s' is assigned at line %u: kevo cannot tell "
                                      "which array it points into",
                                      m->var[v].name, tok_line(m, c->w[i].t_op));
        unsigned d = kevo_recipe_decl_token(m, v);
        if (d == (unsigned)-1 || !kevo_rtok_is(m, d + 1, "="))
            continue;
        unsigned e1 = expr_end(m, d + 2);
        for (unsigned k = d + 2; k < e1; k++)
            if (is_array_var(m, m->tok[k].var))
                return kevo_error_set(KEVO_EINVAL,
                                      "'%s' (line %u) points into '%s': fuse does not follow "
                                      "pointers into arrays",
                                      m->var[v].name, tok_line(m, (unsigned)d),
                                      m->var[m->tok[k].var].name);
    }
    return 0;
}

/* ---- text emission ------------------------------------------------------ */

typedef struct emit_map {
    int rename_var[16]; /* variables whose tokens get another name or text */
    const char *rename_text[16];
    bool rename_paren[16]; /* wrap the text in parentheses (unless alone in []) */
    size_t n_rename;
    int idx_var[16]; /* arrays whose subscript is replaced by idx_text */
    size_t n_idx;
    const char *idx_text;
} emit_map;

/* Append the gap text [a,b) re-indented: after each newline, `base`
 * leading bytes are replaced by `target`. */
static void put_reindented(kevo_buf *b, const char *src, unsigned a, unsigned bnd, size_t base,
                           const char *target)
{
    for (unsigned k = a; k < bnd; k++) {
        kevo_buf_put(b, src + k, 1);
        if (src[k] != '\n')
            continue;
        size_t skip = 0;
        while (skip < base && k + 1 < bnd && (src[k + 1] == ' ' || src[k + 1] == '\t')) {
            k++;
            skip++;
        }
        if (k + 1 >= bnd || src[k + 1] != '\n')
            kevo_buf_puts(b, target);
    }
}

/* Append tokens [t0,t1) with the substitutions of map, re-indented. */
static void emit_tokens(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                        const emit_map *map, size_t base, const char *target)
{
    unsigned at = m->tok[t0].start;
    for (unsigned t = t0; t < t1; t++) {
        put_reindented(b, m->src, at, m->tok[t].start, base, target);
        at = m->tok[t].end;
        int v = m->tok[t].var;
        bool done = false;
        for (size_t i = 0; i < map->n_idx && !done && v >= 0; i++) {
            unsigned i0, i1;
            if (map->idx_var[i] == v && subscript_at(m, t, t1, &i0, &i1)) {
                kevo_buf_printf(b, "%s[%s]", m->var[v].name, map->idx_text);
                t = i1;
                at = m->tok[i1].end;
                done = true;
            }
        }
        for (size_t i = 0; i < map->n_rename && !done && v >= 0; i++) {
            if (map->rename_var[i] != v)
                continue;
            bool alone = t > 0 && kevo_rtok_is(m, t - 1, "[") && kevo_rtok_is(m, t + 1, "]");
            kevo_buf_printf(b, map->rename_paren[i] && !alone ? "(%s)" : "%s", map->rename_text[i]);
            done = true;
        }
        if (!done)
            kevo_buf_put(b, m->src + m->tok[t].start, m->tok[t].end - m->tok[t].start);
    }
}

/* Leading whitespace of the line holding token t. */
static size_t indent_of(const kevo_recipe_model *m, unsigned t, const char **p)
{
    size_t n;
    *p = kevo_recipe_indent(m, m->tok[t].start, &n);
    return n;
}

/* Append the comments between two statements [a,b) (bytes), each line
 * re-indented to target, as lines before the moved code. */
static void emit_comments(kevo_buf *b, const kevo_recipe_model *m, unsigned a, unsigned bnd,
                          size_t base, const char *target)
{
    while (a < bnd && isspace((unsigned char)m->src[a]))
        a++;
    while (bnd > a && isspace((unsigned char)m->src[bnd - 1]))
        bnd--;
    if (bnd <= a)
        return;
    kevo_buf_printf(b, "\n%s", target);
    put_reindented(b, m->src, a, bnd, base, target);
}

/* Edits that put `text` (starting with a newline) at the end of loop l's
 * body, wrapping a single-statement body in braces. */
static int append_to_body(kevo_recipe_out *out, const kevo_recipe_model *m, int l, const char *text)
{
    const kevo_rloop *L = &m->loop[l];
    if (L->body_compound)
        return kevo_cparse_edits_add(&out->edits, m->tok[L->t_end - 2].end,
                                     m->tok[L->t_end - 2].end, "%s", text);
    const char *ind;
    size_t n = indent_of(m, L->t_for, &ind);
    int error =
        kevo_cparse_edits_add(&out->edits, m->tok[L->t_rparen].end, m->tok[L->t_rparen].end, " {");
    if (error < 0)
        return error;
    return kevo_cparse_edits_add(&out->edits, m->tok[L->t_end - 1].end, m->tok[L->t_end - 1].end,
                                 "%s\n%.*s}", text, (int)n, ind);
}

/* Indentation of the statements of loop l's body. */
static void body_indent(char *buf, size_t size, const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    const char *p;
    size_t n;
    unsigned first = L->body_compound ? L->t_body + 1 : L->t_body;
    if (first < L->t_end - (L->body_compound ? 1u : 0u) &&
        tok_line(m, first) != tok_line(m, L->t_for)) {
        n = indent_of(m, first, &p);
        snprintf(buf, size, "%.*s", (int)n, p);
    } else {
        n = indent_of(m, L->t_for, &p);
        snprintf(buf, size, "%.*s    ", (int)n, p);
    }
}

/* ---- shared facts about a pair ------------------------------------------ */

typedef struct pair_info {
    int p, c;        /* the loops */
    unsigned p0, p1; /* producer body tokens [p0,p1) */
    unsigned c0, c1; /* consumer tokens [c0, c1): from its `for` to its end */
    int arrays[16];  /* arrays both use, written by at least one ("shared") */
    size_t n_arrays;
} pair_info;

static bool in_list(const int *v, size_t n, int x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Scalars: the consumer must not read a scalar declared outside both that
 * the producer writes, nor write one the producer uses. */
static int scalar_flow(const fuse_ctx *c, const pair_info *pi, unsigned cb0, unsigned cb1)
{
    const kevo_recipe_model *m = c->m;
    for (size_t i = 0; i < c->nw; i++) {
        const kevo_rwrite *w = &c->w[i];
        int v = w->var;
        if (w->kind != KEVO_WRITE_SCALAR || v < 0 ||
            kevo_recipe_declared_in(m, v, pi->p0 - 1, pi->c1) || v == m->loop[pi->p].var)
            continue;
        bool by_producer = w->t_op < pi->p1;
        unsigned o0 = by_producer ? cb0 : pi->p0, o1 = by_producer ? cb1 : pi->p1;
        if (kevo_recipe_uses_var(m, o0, o1, v))
            return kevo_error_set(
                KEVO_EINVAL,
                "'%s' is written by the loop at line %u (line %u) and used by "
                "the loop at line %u: a scalar flows between the loops",
                m->var[v].name, by_producer ? m->loop[pi->p].line : m->loop[pi->c].line,
                tok_line(m, w->t_op), by_producer ? m->loop[pi->c].line : m->loop[pi->p].line);
    }
    return 0;
}

/* The arrays both loops use, at least one writing it. */
static int shared_arrays(const fuse_ctx *c, pair_info *pi, unsigned cb0, unsigned cb1)
{
    const kevo_recipe_model *m = c->m;
    pi->n_arrays = 0;
    for (unsigned t = cb0; t < cb1; t++) {
        int v = m->tok[t].var;
        if (!is_array_var(m, v) || in_list(pi->arrays, pi->n_arrays, v) ||
            kevo_recipe_declared_in(m, v, cb0, cb1) || !kevo_recipe_uses_var(m, pi->p0, pi->p1, v))
            continue;
        bool written = false;
        for (size_t i = 0; i < c->nw && !written; i++)
            written = c->w[i].var == v && c->w[i].kind != KEVO_WRITE_SCALAR;
        /* passed bare (to a call, into a pointer): it may be written there */
        for (unsigned k = pi->p0; k < cb1 && !written; k++)
            if (m->tok[k].var == v && (k < pi->p1 || k >= cb0))
                written = !kevo_rtok_is(m, k + 1, "[");
        if (written && pi->n_arrays == 16)
            return kevo_error_set(KEVO_EINVAL,
                                  "the loops at lines %u and %u share more than 16 arrays",
                                  m->loop[pi->p].line, m->loop[pi->c].line);
        if (written)
            pi->arrays[pi->n_arrays++] = v;
    }
    return 0;
}

static bool top_level_decl(const kevo_recipe_model *m, unsigned b0, unsigned b1, unsigned t);

/* ---- epilogue fusion ---------------------------------------------------- */

/* Horner text of chain loops [a,b]: `(l_a * B_a+1 + l_a+1) * B_a+2 + ...`. */
static void horner_text(kevo_buf *b, const kevo_recipe_model *m, const int *chain, int a, int z)
{
    kevo_buf acc = {0};
    kevo_buf_puts(&acc, m->var[m->loop[chain[a]].var].name);
    for (int i = a + 1; i <= z; i++) {
        const kevo_rloop *L = &m->loop[chain[i]];
        kevo_buf next = {0};
        bool single_bound = L->t_ub1 == L->t_ub0 + 1 && L->cond_op == KEVO_COND_LT;
        bool paren_acc = i > a + 1;
        if (L->cond_op == KEVO_COND_LE)
            kevo_buf_printf(&next,
                            paren_acc ? "(%s) * ((%.*s) + 1) + %s" : "%s * ((%.*s) + 1) + %s",
                            kevo_buf_cstr(&acc), TEXT(L->t_ub0, L->t_ub1), m->var[L->var].name);
        else
            kevo_buf_printf(&next,
                            paren_acc ? (single_bound ? "(%s) * %.*s + %s" : "(%s) * (%.*s) + %s")
                                      : (single_bound ? "%s * %.*s + %s" : "%s * (%.*s) + %s"),
                            kevo_buf_cstr(&acc), TEXT(L->t_ub0, L->t_ub1), m->var[L->var].name);
        kevo_buf_free(&acc);
        acc = next;
    }
    kevo_buf_puts(b, kevo_buf_cstr(&acc));
    kevo_buf_free(&acc);
}

/* Trip-count polynomial of a simple loop from 0: b or b + 1. */
static bool trip_poly(fuse_ctx *c, const kevo_rloop *L, poly *out)
{
    poly lb;
    if (!poly_of(c, L->t_lb0, L->t_lb1, &lb) || lb.n != 0)
        return false;
    if (!poly_of(c, L->t_ub0, L->t_ub1, out))
        return false;
    if (L->cond_op == KEVO_COND_LE) {
        poly one;
        poly_const(&one, 1);
        poly_axpy(out, 1, &one);
    }
    return !out->bad;
}

typedef struct epi_state {
    int chain[16]; /* producer loops from p down to the innermost enclosing one */
    int n_chain;
    int cons[8]; /* consumer loops, outer to inner */
    int n_cons;
    poly bound[16], cbound[8], idx, enumer, g[8];
    int group_end[8]; /* consumer loop j covers chain loops (group_end[j-1], group_end[j]] */
} epi_state;

/* KEVO_EINVAL with the reason when loop L is not a plain counted loop
 * (kevo_rloop.simple) or can leave early; 0 otherwise. */
static int loop_plain(const kevo_rloop *L)
{
    if (!L->simple)
        return kevo_error_set(KEVO_EINVAL, "%s", L->why);
    char ee[96];
    if (L->early_exit)
        return kevo_error_set(KEVO_EINVAL, "%s", kevo_recipe_early_exit_why(ee, sizeof(ee), L));
    return 0;
}

static int epilogue(kevo_recipe_out *out, fuse_ctx *c, pair_info *pi)
{
    const kevo_recipe_model *m = c->m;
    int error = 0;
    epi_state *s = calloc(1, sizeof(*s));
    kevo_buf text = {0}, idx_text = {0}, sub_text[8] = {{0}};
    poly *tmp = malloc(sizeof(*tmp));
    if (!s || !tmp) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory fusing loops");
        goto done;
    }
    const kevo_rloop *P = &m->loop[pi->p];

    /* the consumer: a perfect nest of simple loops from 0 */
    for (int l = pi->c;;) {
        const kevo_rloop *L = &m->loop[l];
        if (s->n_cons == 8) {
            error = kevo_error_set(KEVO_EINVAL, "the nest at line %u is deeper than 8 loops",
                                   m->loop[pi->c].line);
            goto done;
        }
        if ((error = loop_plain(L)) < 0)
            goto done;
        s->cons[s->n_cons++] = l;
        if (L->sole_child >= 0) {
            l = L->sole_child;
            continue;
        }
        if (L->n_children > 0) {
            char why[320];
            kevo_recipe_not_perfect_why(why, sizeof(why), m, l);
            error = kevo_error_set(KEVO_EINVAL,
                                   "the consumer at line %u is not elementwise: %s; fuse moves a "
                                   "perfect nest whose body touches the output element by element "
                                   "(a reduction over the output, such as a sum, max or softmax "
                                   "over a row, needs the whole row first)",
                                   m->loop[pi->c].line, why);
            goto done;
        }
        break;
    }
    const kevo_rloop *CI = &m->loop[s->cons[s->n_cons - 1]];
    unsigned b0 = CI->t_body, b1 = CI->t_end;
    for (unsigned t = b0; t < b1; t++)
        if (kevo_rtok_is(m, t, "continue") || kevo_rtok_is(m, t, "while") ||
            kevo_rtok_is(m, t, "do") || kevo_rtok_is(m, t, "switch")) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the body of the loop at line %u has '%.*s' (line %u): fuse "
                                   "moves only straight-line elementwise bodies",
                                   CI->line, TEXT(t, t + 1), tok_line(m, t));
            goto done;
        }
    /* the consumer writes no scalar declared outside its body */
    for (size_t i = 0; i < c->nw; i++) {
        const kevo_rwrite *w = &c->w[i];
        if (w->t_op < b0 || w->t_op >= b1)
            continue;
        if (w->kind == KEVO_WRITE_SCALAR && w->var >= 0 &&
            !kevo_recipe_declared_in(m, w->var, b0, b1)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u writes '%s' (line %u), declared outside "
                                   "it: a reduction over the output (a sum or max) is not an "
                                   "elementwise epilogue",
                                   m->loop[pi->c].line, m->var[w->var].name, tok_line(m, w->t_op));
            goto done;
        }
        if (w->kind != KEVO_WRITE_SCALAR && w->kind != KEVO_WRITE_ELEMENT) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u stores through a pointer expression "
                                   "(line %u)",
                                   m->loop[pi->c].line, tok_line(m, w->t_op));
            goto done;
        }
    }
    if ((error = shared_arrays(c, pi, b0, b1)) < 0)
        goto done;
    if (pi->n_arrays == 0) {
        error = kevo_error_set(KEVO_EINVAL,
                               "the loop at line %u uses no array that the loop at line %u "
                               "writes, nor writes one it uses: nothing to fuse",
                               m->loop[pi->c].line, P->line);
        goto done;
    }

    /* the producer's innermost loop holding every use of the shared arrays */
    int lca = -1;
    unsigned first_use = 0;
    for (unsigned t = pi->p0; t < pi->p1; t++) {
        if (!in_list(pi->arrays, pi->n_arrays, m->tok[t].var))
            continue;
        int l = kevo_recipe_loop_of(m, t);
        if (lca < 0) {
            lca = l;
            first_use = t;
        }
        while (!is_ancestor(m, lca, l))
            lca = m->loop[lca].parent;
    }
    int chain_rev[16], n = 0;
    for (int l = lca; l >= 0; l = l == pi->p ? -1 : m->loop[l].parent) {
        if (n == 16) {
            error =
                kevo_error_set(KEVO_EINVAL, "the nest at line %u is deeper than 16 loops", P->line);
            goto done;
        }
        chain_rev[n++] = l;
    }
    s->n_chain = n;
    for (int i = 0; i < n; i++)
        s->chain[i] = chain_rev[n - 1 - i];
    for (int i = 0; i < n; i++) {
        const kevo_rloop *L = &m->loop[s->chain[i]];
        c->sym[c->n_sym++] = L->var;
        if ((error = loop_plain(L)) < 0)
            goto done;
        if (i > 0 && !unconditional_child(m, s->chain[i])) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u does not run once per iteration of the "
                                   "loop at line %u (it is under a condition)",
                                   L->line, m->loop[s->chain[i - 1]].line);
            goto done;
        }
    }
    for (unsigned t = pi->p0; t < pi->p1; t++) {
        if (kevo_rtok_is(m, t, "while") || kevo_rtok_is(m, t, "do")) {
            error = kevo_error_set(KEVO_EINVAL, "the nest at line %u has a '%.*s' loop (line %u)",
                                   P->line, TEXT(t, t + 1), tok_line(m, t));
            goto done;
        }
        if (kevo_rtok_is(m, t, "continue") && in_list(s->chain, (size_t)n, kevo_recipe_loop_of(m, t))) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "'continue' at line %u skips the end of the loop at line %u, "
                                   "where the consumer would run",
                                   tok_line(m, t), m->loop[kevo_recipe_loop_of(m, t)].line);
            goto done;
        }
    }
    /* chain bounds are invariant; the index enumerates them in order */
    poly_zero(&s->enumer);
    for (int i = 0; i < n; i++) {
        const kevo_rloop *L = &m->loop[s->chain[i]];
        size_t keep = c->n_sym;
        c->n_sym = 0; /* bounds may not use loop variables */
        bool ok = trip_poly(c, L, &s->bound[i]);
        c->n_sym = keep;
        if (!ok) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u does not run from 0 to a bound that "
                                   "is a product of sizes unchanged by the nests ('%.*s')",
                                   L->line, TEXT(L->t_lparen + 1, L->t_rparen));
            goto done;
        }
        poly_mul(tmp, &s->enumer, &s->bound[i]);
        s->enumer = *tmp;
        poly v;
        poly_var(&v, L->var);
        poly_axpy(&s->enumer, 1, &v);
    }
    /* every producer use of a shared array is one subscript, same index */
    bool have_idx = false;
    unsigned ix0 = 0, ix1 = 0; /* the producer's index tokens, when used as the text */
    for (unsigned t = pi->p0; t < pi->p1; t++) {
        int v = m->tok[t].var;
        if (!in_list(pi->arrays, pi->n_arrays, v))
            continue;
        unsigned i0, i1;
        if (!subscript_at(m, t, pi->p1, &i0, &i1) || !poly_of(c, i0, i1, tmp)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "'%s' is used at line %u in a form fuse cannot follow (not "
                                   "one subscript that is a sum of products of the loop "
                                   "variables and sizes)",
                                   m->var[v].name, tok_line(m, t));
            goto done;
        }
        if (!have_idx) {
            s->idx = *tmp;
            have_idx = true;
            kevo_buf_printf(&idx_text, "%.*s", TEXT(i0, i1));
            ix0 = i0;
            ix1 = i1;
            for (unsigned k = i0; k < i1; k++)
                if (m->tok[k].var >= 0 && !in_list(c->sym, c->n_sym, m->tok[k].var) &&
                    !is_invariant(c, m->tok[k].var)) {
                    kevo_buf_clear(&idx_text);
                    horner_text(&idx_text, m, s->chain, 0, n - 1);
                    ix0 = ix1 = 0;
                    break;
                }
        } else if (!poly_eq(tmp, &s->idx)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "'%s' is used at two indices in the nest at line %u "
                                   "('%s' at line %u, '%.*s' at line %u)",
                                   m->var[v].name, P->line, kevo_buf_cstr(&idx_text),
                                   tok_line(m, first_use), TEXT(i0, i1), tok_line(m, t));
            goto done;
        }
    }
    if (!poly_eq(&s->idx, &s->enumer)) {
        kevo_buf h = {0};
        horner_text(&h, m, s->chain, 0, n - 1);
        error = kevo_error_set(KEVO_EINVAL,
                               "the index '%s' (line %u) does not provably enumerate the "
                               "iterations of the loops at lines %u..%u once each (expected "
                               "'%s')",
                               kevo_buf_cstr(&idx_text), tok_line(m, first_use), P->line,
                               m->loop[s->chain[n - 1]].line, kevo_buf_cstr(&h));
        kevo_buf_free(&h);
        goto done;
    }

    /* consumer bounds: consecutive groups of the producer's bounds */
    int at = 0;
    for (int j = 0; j < s->n_cons; j++) {
        const kevo_rloop *L = &m->loop[s->cons[j]];
        poly lb;
        if (!poly_of(c, L->t_lb0, L->t_lb1, &lb) || lb.n != 0) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u does not run from 0 ('%s = %.*s'): its "
                                   "iterations are not the producer's elements from the first",
                                   L->line, m->var[L->var].name, TEXT(L->t_lb0, L->t_lb1));
            goto done;
        }
        size_t keep = c->n_sym;
        c->n_sym = 0;
        bool ok = trip_poly(c, L, &s->cbound[j]);
        c->n_sym = keep;
        poly prod;
        poly_const(&prod, 1);
        bool matched = false;
        while (ok && at < n && !matched) {
            poly_mul(tmp, &prod, &s->bound[at++]);
            prod = *tmp;
            matched = poly_eq(&prod, &s->cbound[j]) &&
                      (j < s->n_cons - 1 || at == n); /* the last group takes the rest */
            if (matched && j == s->n_cons - 1)
                break;
        }
        if (!ok || !matched || (j == s->n_cons - 1 && at != n)) {
            char range[160];
            snprintf(range, sizeof(range), "%.*s", TEXT(L->t_ub0, L->t_ub1));
            kevo_buf h = {0};
            for (int i = 0; i < n; i++) {
                const kevo_rloop *B = &m->loop[s->chain[i]];
                kevo_buf_printf(&h, "%s%.*s", i ? " * " : "", TEXT(B->t_ub0, B->t_ub1));
            }
            error = kevo_error_set(KEVO_EINVAL,
                                   "the range of the loop at line %u ('%s' < %s) is not provably "
                                   "the producer's: the loops at lines %u..%u write '%s' at "
                                   "'%s' over %s",
                                   L->line, m->var[L->var].name, range, P->line,
                                   m->loop[s->chain[n - 1]].line, m->var[pi->arrays[0]].name,
                                   kevo_buf_cstr(&idx_text), kevo_buf_cstr(&h));
            kevo_buf_free(&h);
            goto done;
        }
        s->group_end[j] = at - 1;
    }
    /* each consumer variable from its group of producer variables */
    emit_map map = {.idx_text = kevo_buf_cstr(&idx_text)};
    for (int j = 0; j < s->n_cons; j++) {
        int a = j == 0 ? 0 : s->group_end[j - 1] + 1, z = s->group_end[j];
        poly_zero(&s->g[j]);
        for (int i = a; i <= z; i++) {
            poly_mul(tmp, &s->g[j], &s->bound[i]);
            s->g[j] = *tmp;
            poly v;
            poly_var(&v, m->loop[s->chain[i]].var);
            poly_axpy(&s->g[j], 1, &v);
        }
        int cv = m->loop[s->cons[j]].var;
        c->sub_var[c->n_sub] = cv;
        c->sub[c->n_sub++] = &s->g[j];
        if (s->n_cons == 1)
            kevo_buf_puts(&sub_text[j], kevo_buf_cstr(&idx_text));
        else
            horner_text(&sub_text[j], m, s->chain, a, z);
        bool identity =
            a == z && strcmp(m->var[m->loop[s->chain[a]].var].name, m->var[cv].name) == 0;
        if (!identity) {
            map.rename_var[map.n_rename] = cv;
            map.rename_text[map.n_rename] = kevo_buf_cstr(&sub_text[j]);
            map.rename_paren[map.n_rename++] = a != z || s->n_cons == 1;
        }
    }
    /* the consumer touches each shared array only at the enumerated element */
    for (unsigned t = b0; t < b1; t++) {
        int v = m->tok[t].var;
        if (!in_list(pi->arrays, pi->n_arrays, v))
            continue;
        unsigned i0, i1;
        if (!subscript_at(m, t, b1, &i0, &i1) || !poly_of(c, i0, i1, tmp) ||
            !poly_eq(tmp, &s->idx)) {
            unsigned e = i1 > t ? i1 + 1 : t + 1;
            if (!subscript_at(m, t, b1, &i0, &i1))
                e = t + 1;
            error =
                kevo_error_set(KEVO_EINVAL,
                               "the loop at line %u uses '%.*s' (line %u): only the element "
                               "that the loop at line %u wrote in the same iteration ('%s[%s]') "
                               "may be touched",
                               m->loop[pi->c].line, TEXT(t, e), tok_line(m, t), P->line,
                               m->var[v].name, kevo_buf_cstr(&idx_text));
            goto done;
        }
        if (!in_list(map.idx_var, map.n_idx, v))
            map.idx_var[map.n_idx++] = v;
        t = i1;
    }
    for (size_t i = 0; i < pi->n_arrays; i++)
        if (!in_list(map.idx_var, map.n_idx, pi->arrays[i]))
            map.idx_var[map.n_idx++] = pi->arrays[i];
    if ((error = scalar_flow(c, pi, b0, b1)) < 0)
        goto done;
    /* names: what the moved body refers to must mean the same inside the
     * producer, and its own declarations must not hide the new index text */
    for (unsigned t = b0; t < b1; t++) {
        int v = m->tok[t].var;
        if (v < 0 || kevo_recipe_declared_in(m, v, b0, b1) || in_list(c->sub_var, c->n_sub, v))
            continue;
        if (declares_name(m, pi->p0, pi->p1, m->var[v].name)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "'%s' (line %u) is declared inside the nest at line %u too: "
                                   "moved there, it would name another variable",
                                   m->var[v].name, tok_line(m, t), P->line);
            goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        const kevo_rloop *L = &m->loop[s->chain[i]];
        const char *clash =
            declares_name(m, b0, b1, m->var[L->var].name) ? m->var[L->var].name : NULL;
        for (unsigned k = L->t_ub0; k < L->t_ub1 && !clash; k++)
            if (m->tok[k].var >= 0 && declares_name(m, b0, b1, m->var[m->tok[k].var].name))
                clash = m->var[m->tok[k].var].name;
        for (unsigned k = ix0; k < ix1 && !clash; k++)
            if (m->tok[k].var >= 0 && declares_name(m, b0, b1, m->var[m->tok[k].var].name))
                clash = m->var[m->tok[k].var].name;
        if (clash) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "the loop at line %u declares '%s', which the fused index "
                                   "uses: rename it first",
                                   m->loop[pi->c].line, clash);
            goto done;
        }
    }
    if ((error = no_pointer_alias(c, pi->p0, pi->c1)) < 0)
        goto done;

    /* emit */
    int L = s->chain[n - 1];
    char target[128];
    body_indent(target, sizeof(target), m, L);
    const char *cind;
    size_t base = indent_of(m, CI->t_for, &cind);
    unsigned bt0 = b0, bt1 = b1;
    if (!CI->body_compound)
        base = indent_of(m, b0, &cind);
    /* a braced body goes in without its braces (as statements the other
     * recipes read) unless one of its declarations would clash there */
    bool strip = CI->body_compound && b1 > b0 + 2;
    for (unsigned t = b0; t < b1 && strip; t++)
        if (m->tok[t].is_decl && m->tok[t].var >= 0 && top_level_decl(m, b0, b1, t) &&
            declares_name(m, pi->p0, pi->p1, m->var[m->tok[t].var].name))
            strip = false;
    if (strip) {
        char cb[128];
        body_indent(cb, sizeof(cb), m, s->cons[s->n_cons - 1]);
        base = strlen(cb);
        bt0 = b0 + 1;
        bt1 = b1 - 1;
    }
    emit_comments(&text, m, m->tok[pi->p1 - 1].end, m->tok[pi->c0].start,
                  indent_of(m, pi->c0, &cind), target);
    kevo_buf_printf(&text, "\n%s", target);
    emit_tokens(&text, m, bt0, bt1, &map, base, target);
    if ((error = kevo_buf_error(&text)) < 0 || (error = kevo_buf_error(&idx_text)) < 0)
        goto done;
    if ((error = append_to_body(out, m, L, kevo_buf_cstr(&text))) < 0)
        goto done;
    error = kevo_cparse_edits_add(&out->edits, m->tok[pi->p1 - 1].end, m->tok[pi->c1 - 1].end, "%s",
                                  "");
done:
    for (int j = 0; j < 8; j++)
        kevo_buf_free(&sub_text[j]);
    kevo_buf_free(&text);
    kevo_buf_free(&idx_text);
    free(tmp);
    free(s);
    return error;
}

/* ---- same-header fusion ------------------------------------------------- */

/* The loop between `from` (inclusive, innermost) and `stop` (exclusive)
 * whose induction variable is named `name`, or -1. */
static int enclosing_named(const kevo_recipe_model *m, int from, int stop, const char *name)
{
    for (int l = from; l >= 0 && l != stop; l = m->loop[l].parent)
        if (m->loop[l].var >= 0 && strcmp(m->var[m->loop[l].var].name, name) == 0)
            return l;
    return -1;
}

/* Whether the index [i0,i1) of a use at token t names the same elements as
 * the write whose index is [w0,w1) at token wt: the same text, arithmetic
 * on the outer variable, invariant sizes, and inner loop variables whose
 * loops have the same header on both sides. */
static bool same_iteration_index(fuse_ctx *c, const pair_info *pi, unsigned t, unsigned i0,
                                 unsigned i1, unsigned wt, unsigned w0, unsigned w1)
{
    const kevo_recipe_model *m = c->m;
    if (!kevo_rtok_same(m, i0, i1, w0, w1))
        return false;
    poly *tmp = malloc(sizeof(*tmp));
    bool ok = tmp && poly_of(c, i0, i1, tmp) && poly_of(c, w0, w1, tmp);
    free(tmp);
    if (!ok)
        return false;
    const char *outer = m->var[m->loop[pi->p].var].name;
    bool uses_outer = false;
    for (unsigned k = i0; k < i1; k++) {
        int v = m->tok[k].var;
        if (v < 0)
            continue;
        const char *name = m->var[v].name;
        if (strcmp(name, outer) == 0) {
            uses_outer = true;
            continue;
        }
        if (is_invariant(c, v))
            continue;
        int top_u = t < pi->p1 ? pi->p : pi->c, top_w = wt < pi->p1 ? pi->p : pi->c;
        int lu = enclosing_named(m, kevo_recipe_loop_of(m, t), top_u, name);
        int lw = enclosing_named(m, kevo_recipe_loop_of(m, wt), top_w, name);
        if (lu < 0 || lw < 0)
            return false;
        const kevo_rloop *U = &m->loop[lu], *W = &m->loop[lw];
        if (!kevo_rtok_same(m, U->t_lparen, U->t_rparen + 1, W->t_lparen, W->t_rparen + 1))
            return false;
        for (unsigned h = U->t_lparen; h < U->t_rparen; h++) {
            int hv = m->tok[h].var;
            if (hv >= 0 && hv != U->var && !is_invariant(c, hv) &&
                strcmp(m->var[hv].name, outer) != 0)
                return false;
        }
    }
    return uses_outer;
}

/* Top-level declarations of a compound body [b0,b1): tokens declared at
 * brace depth 1 outside parentheses. */
static bool top_level_decl(const kevo_recipe_model *m, unsigned b0, unsigned b1, unsigned t)
{
    int braces = 0, parens = 0;
    for (unsigned k = b0; k < t && k < b1; k++) {
        if (kevo_rtok_is(m, k, "{"))
            braces++;
        else if (kevo_rtok_is(m, k, "}"))
            braces--;
        else if (kevo_rtok_is(m, k, "("))
            parens++;
        else if (kevo_rtok_is(m, k, ")"))
            parens--;
    }
    return braces == 1 && parens == 0;
}

static bool top_level_name(const kevo_recipe_model *m, const kevo_rloop *L, const char *name)
{
    if (!L->body_compound)
        return false;
    for (unsigned t = L->t_body; t < L->t_end; t++)
        if (m->tok[t].is_decl && m->tok[t].var >= 0 &&
            strcmp(m->var[m->tok[t].var].name, name) == 0 &&
            top_level_decl(m, L->t_body, L->t_end, t))
            return true;
    return false;
}

static int same_header(kevo_recipe_out *out, fuse_ctx *c, pair_info *pi)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *P = &m->loop[pi->p], *C = &m->loop[pi->c];
    int error = 0;
    kevo_buf text = {0};
    char names[16][64];
    emit_map map = {0};

    if (!kevo_rtok_same(m, P->t_lparen, P->t_rparen + 1, C->t_lparen, C->t_rparen + 1))
        return kevo_error_set(KEVO_EINVAL,
                              "the loops at line %u and line %u have different headers ('%.*s' "
                              "and '%.*s')",
                              P->line, C->line, TEXT(P->t_lparen, P->t_rparen + 1),
                              TEXT(C->t_lparen, C->t_rparen + 1));
    if (!P->simple)
        return kevo_error_set(KEVO_EINVAL, "%s", P->why);
    for (unsigned h = P->t_lparen; h < P->t_rparen; h++) {
        int v = m->tok[h].var;
        if (v >= 0 && v != P->var && written_in(c, v))
            return kevo_error_set(KEVO_EINVAL,
                                  "'%s' in the header of the loop at line %u is written in the "
                                  "loops",
                                  m->var[v].name, P->line);
    }
    bool loops_inside = false;
    for (unsigned t = pi->p0; t < pi->p1; t++)
        loops_inside |= kevo_rtok_is(m, t, "while") || kevo_rtok_is(m, t, "do");
    for (unsigned t = pi->p0; t < pi->p1; t++)
        if (kevo_rtok_is(m, t, "continue") && (loops_inside || kevo_recipe_loop_of(m, t) == pi->p))
            return kevo_error_set(KEVO_EINVAL,
                                  "'continue' at line %u would skip the body of the loop at "
                                  "line %u",
                                  tok_line(m, t), C->line);
    /* loop variables of both nests may appear in indices (checked below) */
    for (size_t l = 0; l < m->n_loop && c->n_sym < 16; l++)
        if (m->loop[l].var >= 0 && m->loop[l].t_for >= P->t_for && m->loop[l].t_end <= C->t_end)
            c->sym[c->n_sym++] = m->loop[l].var;
    if ((error = shared_arrays(c, pi, C->t_body, C->t_end)) < 0)
        return error;
    for (size_t a = 0; a < pi->n_arrays; a++) {
        int v = pi->arrays[a];
        bool p_writes = false;
        for (size_t i = 0; i < c->nw && !p_writes; i++)
            p_writes = c->w[i].var == v && c->w[i].t_op >= pi->p0 && c->w[i].t_op < pi->p1;
        unsigned wr0 = p_writes ? pi->p0 : C->t_body, wr1 = p_writes ? pi->p1 : C->t_end;
        for (unsigned t = pi->p0; t < C->t_end; t++) {
            if (m->tok[t].var != v || (t >= pi->p1 && t < C->t_body))
                continue;
            unsigned i0, i1;
            bool ok = subscript_at(m, t, C->t_end, &i0, &i1);
            for (size_t i = 0; i < c->nw && ok; i++) {
                const kevo_rwrite *w = &c->w[i];
                if (w->var != v || w->kind != KEVO_WRITE_ELEMENT || w->t_op < wr0 || w->t_op >= wr1)
                    continue;
                ok = false;
                if (same_iteration_index(c, pi, t, i0, i1, w->t_lhs0, w->t_idx0 + 1,
                                         w->t_idx1 - 1)) {
                    ok = true;
                    break;
                }
            }
            if (!ok) {
                unsigned e = subscript_at(m, t, C->t_end, &i0, &i1) ? i1 + 1 : t + 1;
                return kevo_error_set(KEVO_EINVAL,
                                      "'%.*s' (line %u) is not an element that the loop at line "
                                      "%u writes in the same iteration: '%s' flows between "
                                      "iterations of the loops at lines %u and %u",
                                      TEXT(t, e), tok_line(m, t), p_writes ? P->line : C->line,
                                      m->var[v].name, P->line, C->line);
            }
        }
    }
    if ((error = scalar_flow(c, pi, C->t_body, C->t_end)) < 0)
        return error;
    if ((error = no_pointer_alias(c, pi->p0, C->t_end)) < 0)
        return error;
    /* names: the consumer's top-level declarations that clash are renamed;
     * what it refers to outside must not be hidden by the producer's */
    for (unsigned t = C->t_body; t < C->t_end; t++) {
        int v = m->tok[t].var;
        if (v < 0 || v == C->var)
            continue;
        const char *name = m->var[v].name;
        if (!kevo_recipe_declared_in(m, v, C->t_body, C->t_end)) {
            if (top_level_name(m, P, name))
                return kevo_error_set(KEVO_EINVAL,
                                      "'%s' (line %u) is declared in the body of the loop at "
                                      "line %u too: merged, it would name another variable",
                                      name, tok_line(m, t), P->line);
            continue;
        }
        if (!m->tok[t].is_decl || !top_level_decl(m, C->t_body, C->t_end, t) ||
            !top_level_name(m, P, name) || in_list(map.rename_var, map.n_rename, v))
            continue;
        if (map.n_rename == 16)
            return kevo_error_set(KEVO_EINVAL, "too many clashing declarations at line %u",
                                  C->line);
        kevo_recipe_fresh_name(names[map.n_rename], sizeof(names[0]), m, name, "_2", names,
                               map.n_rename);
        map.rename_var[map.n_rename] = v;
        map.rename_text[map.n_rename] = names[map.n_rename];
        map.rename_paren[map.n_rename++] = false;
    }

    char target[128];
    body_indent(target, sizeof(target), m, pi->p);
    const char *ind;
    unsigned s0 = C->body_compound ? C->t_body + 1 : C->t_body;
    unsigned s1 = C->body_compound ? C->t_end - 1 : C->t_end;
    char cbase[128];
    body_indent(cbase, sizeof(cbase), m, pi->c);
    emit_comments(&text, m, m->tok[pi->p1 - 1].end, m->tok[pi->c0].start,
                  indent_of(m, pi->c0, &ind), target);
    if (s1 > s0) {
        kevo_buf_printf(&text, "\n%s", target);
        emit_tokens(&text, m, s0, s1, &map, strlen(cbase), target);
    }
    if ((error = kevo_buf_error(&text)) < 0)
        goto done;
    if ((error = append_to_body(out, m, pi->p, kevo_buf_cstr(&text))) < 0)
        goto done;
    error = kevo_cparse_edits_add(&out->edits, m->tok[pi->p1 - 1].end, m->tok[pi->c1 - 1].end, "%s",
                                  "");
done:
    kevo_buf_free(&text);
    return error;
}

/* ---- entry -------------------------------------------------------------- */

/* The loop that is the next statement after loop p in the same block, or
 * -1. */
static int next_loop(const kevo_recipe_model *m, int p)
{
    const kevo_rloop *P = &m->loop[p];
    for (size_t l = (size_t)p + 1; l < m->n_loop; l++)
        if (m->loop[l].t_for == next_code(m, P->t_end) && m->loop[l].parent == P->parent)
            return (int)l;
    return -1;
}

static int try_pair(kevo_recipe_out *out, const kevo_recipe_model *m, int p)
{
    int error = 0;
    const kevo_rloop *P = &m->loop[p];
    int cl = next_loop(m, p);
    if (cl < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is not followed by a loop in the same block",
                              P->line);
    const kevo_rloop *C = &m->loop[cl];
    unsigned before = prev_code(m, P->t_for);
    if (!(kevo_rtok_is(m, before, ";") || kevo_rtok_is(m, before, "{") ||
          kevo_rtok_is(m, before, "}")))
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is the body of a statement, not one of a "
                              "block's statements",
                              P->line);
    unsigned o0 = m->tok[P->t_for].start, o1 = m->tok[C->t_end - 1].end;
    for (size_t d = 0; d < m->n_dir; d++)
        if ((m->dir[d].start >= o0 && m->dir[d].start < o1) ||
            (m->dir[d].attached && (in_list(P->pragmas, (size_t)P->n_pragmas, (int)d))))
            return kevo_error_set(KEVO_EINVAL,
                                  "'%.*s' (line %u) lies in or on the loops at lines %u and %u: "
                                  "apply fuse before pragma recipes",
                                  (int)(m->dir[d].end - m->dir[d].start), m->src + m->dir[d].start,
                                  kevo_recipe_line(m, m->dir[d].start), P->line, C->line);
    int a = kevo_recipe_collapsed_into(m, p);
    if (a >= 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is collapsed into the omp loop at line %u",
                              P->line, m->loop[a].line);
    char ee[96];
    if (P->early_exit || C->early_exit)
        return kevo_error_set(KEVO_EINVAL, "%s",
                              kevo_recipe_early_exit_why(ee, sizeof(ee), P->early_exit ? P : C));

    fuse_ctx c = {.m = m, .r0 = P->t_for, .r1 = C->t_end};
    if ((error = kevo_recipe_writes(&c.w, &c.nw, m, P->t_for, C->t_end)) < 0 ||
        (error = kevo_recipe_writes(&c.fw, &c.nfw, m, m->t_fbody, (unsigned)m->n_tok)) < 0) {
        free(c.w);
        return error;
    }
    pair_info pi = {
        .p = p, .c = cl, .p0 = P->t_body, .p1 = P->t_end, .c0 = C->t_for, .c1 = C->t_end};
    char first[600];
    if ((error = epilogue(out, &c, &pi)) != KEVO_EINVAL)
        goto done;
    snprintf(first, sizeof(first), "%s", kevo_error_last());
    kevo_cparse_edits_free(&out->edits);
    memset(&out->edits, 0, sizeof(out->edits));
    c.n_sym = c.n_sub = 0;
    bool same = kevo_rtok_same(m, P->t_lparen, P->t_rparen + 1, C->t_lparen, C->t_rparen + 1);
    if ((error = same_header(out, &c, &pi)) != KEVO_EINVAL)
        goto done;
    if (same) {
        char second[600];
        snprintf(second, sizeof(second), "%s", kevo_error_last());
        error = kevo_error_set(KEVO_EINVAL,
                               "loops at lines %u and %u: as an epilogue: %s; as loops with the "
                               "same header: %s",
                               P->line, C->line, first, second);
    } else {
        error =
            kevo_error_set(KEVO_EINVAL, "loops at lines %u and %u: %s", P->line, C->line, first);
    }
done:
    if (error < 0) {
        kevo_cparse_edits_free(&out->edits);
        memset(&out->edits, 0, sizeof(out->edits));
    }
    free(c.w);
    free(c.fw);
    return error;
}

int kevo_recipe_fuse_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params)
{
    (void)source;
    if (m->n_loop < 2)
        return kevo_error_set(KEVO_EINVAL, "the kernel has fewer than two for loops");
    if (kevo_recipe_loop_index_check(m, params[0]) < 0)
        return KEVO_EINVAL;
    if (params[0] >= 0)
        return try_pair(out, m, (int)params[0]);
    char first[1400] = "";
    for (size_t l = 0; l < m->n_loop; l++) {
        if (next_loop(m, (int)l) < 0)
            continue;
        int error = try_pair(out, m, (int)l);
        if (error != KEVO_EINVAL)
            return error;
        if (!first[0])
            snprintf(first, sizeof(first), "%s", kevo_error_last());
    }
    if (!first[0])
        return kevo_error_set(KEVO_EINVAL, "no loop is followed by another loop in the same block");
    return kevo_error_set(KEVO_EINVAL, "no pair of loops qualifies; the first: %s", first);
}
