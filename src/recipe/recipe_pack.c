/*
 * recipe/recipe_pack.c - the `pack` recipe: packing of an operand into
 * contiguous panels, the step after register blocking that a GEMM needs.
 *
 * Its start point is a vectorised loop V (`for (T j = a; j < b; j += W)`,
 * what `vectorize` and `register_block` write) holding a reduction loop R
 * (`for (T k = c; k < d; k++)`), whose body loads W lanes of an operand,
 * `*(const vf *)&X[e + j]`, at an address that moves with k (the row of B
 * of a row-update matmul: one cache line from another page per k, the
 * stride of a row). When the address does not depend on the loops around V
 * (the rows of C), every iteration of them reads the same lanes again: the
 * recipe copies them once, before the outermost such loop A, into a buffer
 * laid out panel by panel, [j panel][k][W lanes], and the loads read it
 * instead: one contiguous stream per panel, which the prefetcher follows
 * and the TLB holds.
 *
 *   { buffer = aligned_alloc(...);            (64-byte aligned)
 *     if (buffer) { fill; A reading the buffer } else { A as it was }
 *     free(buffer); }
 *
 * Layout 1 (transposed), before vectorize: a simple loop j holding a
 * reduction loop k that writes no element, reading an operand strided in j
 * (`w[j * K + k]`, `b[k]` with `b = B + j * K`): the operand is copied to
 * [k][j] and the reads become `X_packt[(k - k0) * nj - j0 + j]`, contiguous
 * in j, so that `vectorize` runs j in lanes; a pointer whose every use was
 * replaced is dropped from the copy. Layout -1 (the default) takes the
 * panels when a vector load qualifies, else the transposed layout.
 *
 * The copy is made at A's start, so everything the address names must have
 * the value there that it has at the load: variables declared inside A are
 * replaced by their initialisers (each declared once, never written),
 * those declared outside it must not be written inside A, and the memory
 * read (X and any pointer the address reads) must derive from a parameter,
 * or from an earlier pack's buffer, that nothing inside A writes or passes
 * to a call (distinct parameters do not overlap: the task contract). V's
 * and R's bounds and V's step are copied the same way. The fill copies
 * exactly the W floats each load reads, whatever its subscript, and only
 * for the j the loop visits, so it touches no element the loop did not.
 *
 * Declines: no such access; an address that depends on every loop around V
 * (nothing to reuse); a read not strided in j (nothing to transpose); a
 * loop that can leave early; A collapsed into the loop above it, carrying
 * an OpenMP directive other than `parallel for`, or an OpenMP region in the
 * kernel (threads could take different branches); loads that read a panel
 * buffer already or lie in the fallback branch of a pack ("packed
 * already").
 *
 * Must not: change anything outside the statement of A.
 */
#include "model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACK_MAX_TYPEDEFS 4

typedef struct pack_ctx {
    const kevo_recipe_model *m;
    const kevo_rloop *V, *R, *A;
    kevo_rwrite *fw; /* every write of the function */
    size_t nfw;
    bool transposed;                        /* a strided scalar read, not a vector load */
    unsigned x0, x1;                        /* the first load's X[...]: tokens [x0, x1) */
    unsigned *skip;                         /* token ranges of fallback branches: [2i, 2i+1) */
    size_t nskip;
    int *root;           /* per variable: root_of(), computed once (-2: not yet) */
    signed char *rw;     /* per variable: root_written() for the current A (-1: not yet) */
    const kevo_rloop *rw_a; /* the A that rw is for */
    unsigned tdef[PACK_MAX_TYPEDEFS];       /* typedef statements to copy: first token */
    size_t ntdef;
    char why[400];
} pack_ctx;

/* Whether token t (a variable followed by `[`) opens a vector load
 * `( * ( [const] T * ) & X [ ... ] )`: *x1 gets the token after `]`. */
static bool vector_load_at(const kevo_recipe_model *m, unsigned t, unsigned *x1)
{
    if (m->tok[t].var < 0 || !kevo_rtok_is(m, t + 1, "[") || t < 6 || !kevo_rtok_is(m, t - 1, "&"))
        return false;
    unsigned close = t - 2;
    if (!kevo_rtok_is(m, close, ")") || !kevo_rtok_is(m, close - 1, "*"))
        return false;
    unsigned open = kevo_rtok_match(m, close);
    if (open == (unsigned)-1 || open < 2 || !kevo_rtok_is(m, open - 1, "*") ||
        !kevo_rtok_is(m, open - 2, "("))
        return false;
    unsigned ty = open + 1;
    if (kevo_rtok_is(m, ty, "const"))
        ty++;
    if (ty + 2 != close || m->tok[ty].kind != KEVO_CTOK_IDENT || m->tok[ty].var >= 0)
        return false;
    unsigned rb = kevo_rtok_match(m, t + 1);
    if (rb == (unsigned)-1 || !kevo_rtok_is(m, rb + 1, ")") ||
        kevo_rtok_match(m, rb + 1) != open - 2)
        return false;
    *x1 = rb + 1;
    return true;
}

/* Where the memory variable v points into comes from: its parameter
 * (kevo_recipe_root_param), or v itself for a local initialised with an
 * allocation and never assigned (a buffer of an earlier pack); -1 unknown. */
static int root_of_uncached(const pack_ctx *c, int v)
{
    const kevo_recipe_model *m = c->m;
    int r = kevo_recipe_root_param(m, v);
    if (r >= 0 || v < 0 || m->var[v].is_param)
        return r;
    for (size_t t = 0; t + 2 < m->n_tok; t++) {
        if (m->tok[t].var != v || !m->tok[t].is_decl)
            continue;
        if (!kevo_rtok_is(m, (unsigned)t + 1, "="))
            return -1;
        unsigned e = kevo_recipe_expr_end(m, (unsigned)t + 2, (unsigned)m->n_tok);
        bool fresh = false;
        for (unsigned k = (unsigned)t + 2; k + 1 < e; k++)
            fresh |= kevo_rtok_is(m, k + 1, "(") &&
                     (kevo_rtok_is(m, k, "aligned_alloc") || kevo_rtok_is(m, k, "malloc") ||
                      kevo_rtok_is(m, k, "calloc"));
        for (size_t i = 0; fresh && i < c->nfw; i++)
            fresh = !(c->fw[i].kind == KEVO_WRITE_SCALAR && c->fw[i].var == v);
        return fresh ? v : -1;
    }
    return -1;
}

static int root_of(const pack_ctx *c, int v)
{
    if (v < 0)
        return -1;
    if (c->root[v] == -2)
        c->root[v] = root_of_uncached(c, v);
    return c->root[v];
}

/* Whether memory reached from variable v can change inside A (the copy is
 * made at A's start): a write there lands on its root, or on memory kevo
 * cannot trace, or a call there is passed a pointer into it. */
static bool root_written_uncached(const pack_ctx *c, int v)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *A = c->A;
    int root = root_of(c, v);
    if (root < 0)
        return true;
    for (size_t i = 0; i < c->nfw; i++) {
        const kevo_rwrite *w = &c->fw[i];
        if (w->t_op < A->t_for || w->t_op >= A->t_end)
            continue;
        if (w->kind == KEVO_WRITE_UNKNOWN)
            return true;
        if (w->kind == KEVO_WRITE_SCALAR && w->var == root)
            return true; /* the pointer itself moves */
        if (w->kind == KEVO_WRITE_ELEMENT || w->kind == KEVO_WRITE_DEREF) {
            int r = w->var < 0 ? -1 : root_of(c, w->var);
            if (r < 0 || r == root)
                return true;
        }
    }
    for (unsigned t = A->t_for; t + 1 < A->t_end; t++) {
        if (m->tok[t].kind != KEVO_CTOK_IDENT || m->tok[t].var >= 0 ||
            !kevo_rtok_is(m, t + 1, "(") || kevo_rtok_is(m, t, "sizeof"))
            continue;
        unsigned rp = kevo_rtok_match(m, t + 1);
        for (unsigned k = t + 2; rp != (unsigned)-1 && k < rp; k++) {
            int a = m->tok[k].var;
            if (a >= 0 && (m->var[a].vtype == KEVO_VTYPE_POINTER ||
                           m->var[a].vtype == KEVO_VTYPE_ARRAY)) {
                int r = root_of(c, a);
                if (r < 0 || r == root)
                    return true;
            }
        }
    }
    return false;
}

static bool root_written(pack_ctx *c, int v)
{
    if (c->rw_a != c->A) {
        memset(c->rw, -1, c->m->n_var ? c->m->n_var : 1);
        c->rw_a = c->A;
    }
    if (c->rw[v] < 0)
        c->rw[v] = root_written_uncached(c, v) ? 1 : 0;
    return c->rw[v] == 1;
}

/* Whether variable v is written anywhere in [t0, t1) (any kind of write
 * naming it as its root variable). */
static bool written_in(const pack_ctx *c, int v, unsigned t0, unsigned t1)
{
    for (size_t i = 0; i < c->nfw; i++)
        if (c->fw[i].var == v && c->fw[i].t_op >= t0 && c->fw[i].t_op < t1)
            return true;
    return false;
}

/* The typedef statement inside A that declares identifier token t's name:
 * its `typedef` token, or (unsigned)-1. */
static unsigned typedef_of(const pack_ctx *c, unsigned t)
{
    const kevo_recipe_model *m = c->m;
    size_t n;
    const char *s = kevo_rtok_text(m, t, &n);
    for (unsigned d = c->A->t_for; d < c->A->t_end; d++) {
        if (!kevo_rtok_is(m, d, "typedef"))
            continue;
        for (unsigned k = d + 1; k < c->A->t_end && !kevo_rtok_is(m, k, ";"); k++) {
            size_t kn;
            const char *ks = kevo_rtok_text(m, k, &kn);
            if (m->tok[k].kind == KEVO_CTOK_IDENT && kn == n && !memcmp(ks, s, n))
                return d;
        }
    }
    return (unsigned)-1;
}

/* Append tokens [a, b) to out as they would read at A's start: variables
 * declared inside A (other than V's and R's) as their initialisers.
 * false with c->why when that is not possible. */
static bool hoist_text(pack_ctx *c, kevo_buf *out, unsigned a, unsigned b, int depth)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *A = c->A;
    if (depth > 8) {
        snprintf(c->why, sizeof(c->why), "the address is defined through too many locals");
        return false;
    }
    unsigned pos = m->tok[a].start;
    for (unsigned t = a; t < b; t++) {
        const kevo_rtok *tk = &m->tok[t];
        unsigned line = kevo_recipe_line(m, tk->start);
        if (tk->kind == KEVO_CTOK_PUNCT &&
            (kevo_rtok_is(m, t, "=") || kevo_rtok_is(m, t, "++") || kevo_rtok_is(m, t, "--") ||
             (m->tok[t].end - m->tok[t].start == 2 && m->src[m->tok[t].end - 1] == '=' &&
              !kevo_rtok_is(m, t, "==") && !kevo_rtok_is(m, t, "!=") &&
              !kevo_rtok_is(m, t, "<=") && !kevo_rtok_is(m, t, ">=")))) {
            snprintf(c->why, sizeof(c->why), "the address at line %u assigns something", line);
            return false;
        }
        if (tk->kind == KEVO_CTOK_IDENT && tk->var < 0) {
            if (kevo_rtok_is(m, t + 1, "(") && !kevo_rtok_is(m, t, "sizeof")) {
                snprintf(c->why, sizeof(c->why), "the address at line %u calls a function",
                         line);
                return false;
            }
            unsigned d = typedef_of(c, t);
            if (d != (unsigned)-1) {
                bool have = false;
                for (size_t i = 0; i < c->ntdef; i++)
                    have |= c->tdef[i] == d;
                if (!have && c->ntdef == PACK_MAX_TYPEDEFS) {
                    snprintf(c->why, sizeof(c->why), "the address names too many types");
                    return false;
                }
                if (!have)
                    c->tdef[c->ntdef++] = d;
            }
            continue;
        }
        int v = tk->var;
        if (v < 0 || v == c->V->var || v == c->R->var)
            continue;
        const kevo_rvar *rv = &m->var[v];
        if (!strcmp(rv->name, m->var[c->V->var].name) || !strcmp(rv->name, m->var[c->R->var].name)) {
            snprintf(c->why, sizeof(c->why),
                     "the address names another variable called '%s' (line %u): the copy "
                     "declares that name",
                     rv->name, line);
            return false;
        }
        if ((rv->vtype == KEVO_VTYPE_POINTER || rv->vtype == KEVO_VTYPE_ARRAY) &&
            !rv->points_to_function && root_written(c, v)) {
            snprintf(c->why, sizeof(c->why),
                     "'%s' (line %u) points into memory the kernel writes or kevo cannot trace "
                     "to a parameter",
                     rv->name, line);
            return false;
        }
        bool inside = rv->decl_off != (unsigned)-1 && rv->decl_off >= m->tok[A->t_for].start &&
                      rv->decl_off < m->tok[A->t_end - 1].end;
        if (!inside) {
            if (written_in(c, v, A->t_for, A->t_end)) {
                snprintf(c->why, sizeof(c->why),
                         "'%s' (line %u) is written inside the loop at line %u", rv->name, line,
                         A->line);
                return false;
            }
            continue;
        }
        /* declared inside A: its initialiser, if it is the only value */
        unsigned d = (unsigned)-1;
        for (unsigned k = A->t_for; k < A->t_end; k++)
            if (m->tok[k].var == v && m->tok[k].is_decl) {
                d = k;
                break;
            }
        if (d == (unsigned)-1 || !kevo_rtok_is(m, d + 1, "=") || rv->vtype == KEVO_VTYPE_ARRAY ||
            written_in(c, v, m->t_fbody, (unsigned)m->n_tok)) {
            snprintf(c->why, sizeof(c->why),
                     "'%s' (line %u) changes inside the loop at line %u: the address depends "
                     "on it",
                     rv->name, line, A->line);
            return false;
        }
        unsigned e = kevo_recipe_expr_end(m, d + 2, A->t_end);
        if (kevo_rtok_is(m, e, ",")) {
            snprintf(c->why, sizeof(c->why), "'%s' (line %u) is declared in a list", rv->name,
                     line);
            return false;
        }
        if (kevo_buf_printf(out, "%.*s(", (int)(tk->start - pos), m->src + pos) < 0 ||
            !hoist_text(c, out, d + 2, e, depth + 1) || kevo_buf_puts(out, ")") < 0) {
            if (!c->why[0])
                snprintf(c->why, sizeof(c->why), "out of memory");
            return false;
        }
        pos = tk->end;
    }
    if (kevo_buf_printf(out, "%.*s", (int)(m->tok[b - 1].end - pos), m->src + pos) < 0) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        return false;
    }
    return true;
}

#define TEXT(a, b) (int)(m->tok[(b)-1].end - m->tok[(a)].start), m->src + m->tok[(a)].start

typedef struct pack_texts {
    kevo_buf x, jlb, jub, klb, kub, w;
} pack_texts;

static void pack_texts_free(pack_texts *p)
{
    kevo_buf_free(&p->x);
    kevo_buf_free(&p->jlb);
    kevo_buf_free(&p->jub);
    kevo_buf_free(&p->klb);
    kevo_buf_free(&p->kub);
    kevo_buf_free(&p->w);
}

/* The texts the fill needs, hoisted to A's start; false with c->why. */
static bool hoist_all(pack_ctx *c, pack_texts *p)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *V = c->V, *R = c->R;
    c->ntdef = 0;
    c->why[0] = '\0';
    unsigned s0 = V->t_semi2 + 1;
    /* V's step: the tokens after `+=`, or after `j = j +` */
    unsigned w0 = kevo_rtok_is(m, s0 + 1, "+=") ? s0 + 2 : s0 + 4;
    if (!hoist_text(c, &p->x, c->x0, c->x1, 0) ||
        !hoist_text(c, &p->jlb, V->t_lb0, V->t_lb1, 0) ||
        !hoist_text(c, &p->jub, V->t_ub0, V->t_ub1, 0) ||
        !hoist_text(c, &p->klb, R->t_lb0, R->t_lb1, 0) ||
        !hoist_text(c, &p->kub, R->t_ub0, R->t_ub1, 0) ||
        (!c->transposed && !hoist_text(c, &p->w, w0, V->t_rparen, 0)))
        return false;
    return true;
}

/* The first token in V's body that can skip part of an iteration (a
 * condition, a short circuit, a jump), or (unsigned)-1: the copy reads every
 * (j, k) of the rectangle, so the loop must read there on every iteration
 * too, or the copy could read what a guard kept it from. */
static unsigned conditional_in(const kevo_recipe_model *m, const kevo_rloop *V)
{
    static const char *const words[] = {"if", "?", "&&", "||", "switch", "while", "do",
                                         "continue", "break", "goto", "return"};
    for (unsigned t = V->t_body; t < V->t_end; t++)
        for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
            if (kevo_rtok_is(m, t, words[i]))
                return t;
    return (unsigned)-1;
}

/* V and R: a vectorised loop holding a simple reduction loop (panels), or
 * a simple loop holding a reduction loop that writes no element (the
 * transposed layout: `acc += x[i * K + k] * w[j * K + k]`). */
static bool loops_ok(pack_ctx *c, int v, int r)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *V = &m->loop[v], *R = &m->loop[r];
    if (!R->simple || R->early_exit || R->cond_op != KEVO_COND_LT || R->parent != v ||
        !V->canonical || !V->declared || V->cond_op != KEVO_COND_LT || V->early_exit)
        return false;

    if (c->transposed) {
        if (!V->simple)
            return false;
        for (size_t i = 0; i < c->nfw; i++)
            if (c->fw[i].t_op >= R->t_body && c->fw[i].t_op < R->t_end &&
                c->fw[i].kind != KEVO_WRITE_SCALAR)
                return false;
        return true;
    }
    if (V->step == 1 || V->step < 0)
        return false;
    unsigned s0 = V->t_semi2 + 1;
    if (V->step == 0 && !kevo_rtok_is(m, s0 + 1, "+=") && !kevo_rtok_is(m, s0 + 1, "="))
        return false;
    return true;
}

/* Whether token t (a variable followed by `[`) is a one-subscript read:
 * not an address, not assigned, not incremented; *x1 gets the token after
 * `]`. */
static bool scalar_read_at(const kevo_recipe_model *m, unsigned t, unsigned t_end, unsigned *x1)
{
    if (m->tok[t].var < 0 || !kevo_rtok_is(m, t + 1, "["))
        return false;
    if (t > 0 && (kevo_rtok_is(m, t - 1, "&") || kevo_rtok_is(m, t - 1, "++") ||
                  kevo_rtok_is(m, t - 1, "--")))
        return false;
    unsigned rb = kevo_rtok_match(m, t + 1);
    if (rb == (unsigned)-1 || rb + 1 >= t_end)
        return false;
    size_t n;
    const char *after = kevo_rtok_text(m, rb + 1, &n);
    if (kevo_rtok_is(m, rb + 1, "[") || kevo_rtok_is(m, rb + 1, "++") ||
        kevo_rtok_is(m, rb + 1, "--") ||
        (n >= 1 && after[n - 1] == '=' && !kevo_rtok_is(m, rb + 1, "==") &&
         !kevo_rtok_is(m, rb + 1, "<=") && !kevo_rtok_is(m, rb + 1, ">=") &&
         !kevo_rtok_is(m, rb + 1, "!=")))
        return false;
    *x1 = rb + 1;
    return true;
}

int kevo_recipe_pack_buffer(const kevo_recipe_model *m, int v)
{
    if (v < 0)
        return 0;
    const char *s = m->var[v].name;
    size_t n = strlen(s);
    if (n > 5 && !strcmp(s + n - 5, "_pack"))
        return 1;
    if (n > 6 && !strcmp(s + n - 6, "_packt"))
        return 2;
    return 0;
}

/* The fallback branches of earlier packs, `if (X_pack) {...} else {...}`:
 * their loads are the loop as it was, not packed again. */
static int find_fallbacks(pack_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    for (unsigned t = m->t_fbody; t + 5 < m->n_tok; t++) {
        int x = m->tok[t + 2].var;
        if (!kevo_rtok_is(m, t, "if") || !kevo_rtok_is(m, t + 1, "(") || x < 0 ||
            !kevo_rtok_is(m, t + 3, ")") || !kevo_rtok_is(m, t + 4, "{") ||
            !kevo_recipe_pack_buffer(m, x))
            continue;
        unsigned close = kevo_rtok_match(m, t + 4);
        if (close == (unsigned)-1 || close + 2 >= m->n_tok || !kevo_rtok_is(m, close + 1, "else") ||
            !kevo_rtok_is(m, close + 2, "{"))
            continue;
        unsigned end = kevo_rtok_match(m, close + 2);
        if (end == (unsigned)-1)
            continue;
        unsigned *v = realloc(c->skip, (c->nskip + 1) * 2 * sizeof(*v));
        if (!v)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        c->skip = v;
        c->skip[2 * c->nskip] = close + 2;
        c->skip[2 * c->nskip + 1] = end;
        c->nskip++;
    }
    return 0;
}

static bool in_fallback(const pack_ctx *c, unsigned t)
{
    for (size_t i = 0; i < c->nskip; i++)
        if (t >= c->skip[2 * i] && t < c->skip[2 * i + 1])
            return true;
    return false;
}

/* Whether `text` multiplies the word `name` (`name *` or `* name`): the
 * read is strided in that variable. */
static bool multiplies(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        bool word = (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                    !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (!word)
            continue;
        const char *q = p + n;
        while (*q == ' ')
            q++;
        const char *b = p;
        while (b > text && b[-1] == ' ')
            b--;
        if (*q == '*' || (b > text && b[-1] == '*'))
            return true;
    }
    return false;
}

/* The outermost loop around V from whose start the candidate's address
 * and the bounds can be copied: c->A, or false (c->why set). */
static bool find_outer(pack_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *best = NULL;
    c->why[0] = '\0';
    for (int a = c->V->parent; a >= 0; a = m->loop[a].parent) {
        c->A = &m->loop[a];
        pack_texts p = {0};
        bool ok = !c->A->early_exit && hoist_all(c, &p);
        if (ok && c->transposed && !multiplies(kevo_buf_cstr(&p.x), m->var[c->V->var].name)) {
            snprintf(c->why, sizeof(c->why),
                     "the read of '%s' at line %u is not strided in '%s': nothing to transpose",
                     m->var[m->tok[c->x0].var].name, kevo_recipe_line(m, m->tok[c->x0].start),
                     m->var[c->V->var].name);
            ok = false;
        }
        pack_texts_free(&p);
        if (!ok)
            break;
        best = c->A;
    }
    if (best) {
        c->A = best;
        return true;
    }
    if (!c->why[0])
        snprintf(c->why, sizeof(c->why),
                 "the %s of '%s' at line %u is inside no loop around the loop at line %u: there "
                 "is nothing to reuse",
                 c->transposed ? "read" : "load", m->var[m->tok[c->x0].var].name,
                 kevo_recipe_line(m, m->tok[c->x0].start), c->V->line);
    return false;
}

/* Find V, R, the access and A; false with c->why. Panels of a vector load
 * first, else a strided scalar read transposed. */
static bool pack_find(pack_ctx *c, int pass0, int pass1)
{
    const kevo_recipe_model *m = c->m;
    char first[400] = "";
    bool packed = false;
    for (int pass = pass0; pass <= pass1; pass++) {
        c->transposed = pass == 1;
        for (size_t r = 0; r < m->n_loop; r++) {
            const kevo_rloop *R = &m->loop[r];
            if (R->parent < 0 || R->n_children > 0)
                continue;
            if (!loops_ok(c, R->parent, (int)r))
                continue;
            c->V = &m->loop[R->parent];
            c->R = R;
            for (unsigned t = R->t_body; t + 1 < R->t_end; t++) {
                unsigned x1;
                if (pass == 0 ? !vector_load_at(m, t, &x1)
                              : !scalar_read_at(m, t, R->t_end, &x1))
                    continue;
                int x = m->tok[t].var;
                bool in_r = m->var[x].decl_off != (unsigned)-1 &&
                            m->var[x].decl_off >= m->tok[R->t_body].start &&
                            m->var[x].decl_off < m->tok[R->t_end - 1].end;
                /* a panel buffer is not packed again; a transposed one is
                 * packed into panels once vectorised */
                int kind = kevo_recipe_pack_buffer(m, x);
                if (in_fallback(c, t) || kind == 1 || (pass == 1 && kind == 2)) {
                    packed = true;
                    continue;
                }
                if (!m->var[x].elem_f32 || (!in_r && !kevo_recipe_uses_var(m, t + 1, x1, R->var)))
                    continue;
                /* a panel is the lanes V steps over: a vector load whose
                 * address does not name V's variable (vectorize's last
                 * window, `j` a constant there) is not one of V's */
                if (pass == 0 && !kevo_recipe_uses_var(m, t + 1, x1, c->V->var))
                    continue;
                c->x0 = t;
                c->x1 = x1;
                unsigned ct = conditional_in(m, c->V);
                if (ct != (unsigned)-1) {
                    size_t n;
                    const char *w = kevo_rtok_text(m, ct, &n);
                    if (!first[0])
                        snprintf(first, sizeof(first),
                                 "the loop at line %u can skip part of an iteration ('%.*s' at "
                                 "line %u): the copy would read what the loop does not",
                                 c->V->line, (int)n, w, kevo_recipe_line(m, m->tok[ct].start));
                    break;
                }
                if (find_outer(c))
                    return true;
                if (!first[0])
                    snprintf(first, sizeof(first), "%s", c->why);
                t = x1 - 1;
            }
        }
    }
    snprintf(c->why, sizeof(c->why), "%s",
             first[0]  ? first
             : packed ? "the loads are packed already (they read a pack's buffer, or lie in "
                        "the branch that runs when its buffer could not be had)"
                      : "no vector load `*(const vf *)&x[e + j]` moving with a reduction loop "
                        "`k` inside a vectorised loop `j += W` (apply vectorize or "
                        "register_block first), and no read strided in `j` inside a "
                        "reduction loop `k` to transpose");
    return false;
}

/* What A must not be: collapsed, inside a parallel region. */
static bool context_ok(pack_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *A = c->A;
    int a = (int)(A - m->loop);
    if (kevo_recipe_collapsed_into(m, a) >= 0) {
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u is collapsed into the omp loop above it", A->line);
        return false;
    }
    if ((A->pragma_flags & KEVO_PRAGMA_OMP_ANY) &&
        !((A->pragma_flags & KEVO_PRAGMA_OMP_PARALLEL) && (A->pragma_flags & KEVO_PRAGMA_OMP_FOR))) {
        snprintf(c->why, sizeof(c->why),
                 "the loop at line %u carries an OpenMP directive other than 'parallel for'",
                 A->line);
        return false;
    }
    for (size_t d = 0; d < m->n_dir; d++)
        if ((m->dir[d].flags & KEVO_PRAGMA_OMP_ANY) && !m->dir[d].attached) {
            snprintf(c->why, sizeof(c->why),
                     "the kernel has an OpenMP region (line %u): threads could part ways at "
                     "the buffer",
                     kevo_recipe_line(m, m->dir[d].start));
            return false;
        }
    return true;
}

/* In the transposed layout, the declaration of the operand's pointer
 * (`const float *b = B + j * K;`) when every use of it in A is a read the
 * copy replaces: its tokens [*d0, *d1), so that the copy drops it (a
 * pointer that depends on j would stop `vectorize`). false to keep it. */
static bool dead_declaration(const pack_ctx *c, unsigned nrep, unsigned *d0, unsigned *d1)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *A = c->A;
    int x = m->tok[c->x0].var;
    unsigned d = (unsigned)-1, uses = 0;
    for (unsigned t = A->t_for; t < A->t_end; t++) {
        if (m->tok[t].var != x)
            continue;
        if (m->tok[t].is_decl)
            d = t;
        else
            uses++;
    }
    if (d == (unsigned)-1 || uses != nrep || !kevo_rtok_is(m, d + 1, "="))
        return false;
    unsigned e = kevo_recipe_expr_end(m, d + 2, A->t_end);
    if (!kevo_rtok_is(m, e, ";"))
        return false;
    unsigned s = d;
    while (s > A->t_body && !kevo_rtok_is(m, s - 1, ";") && !kevo_rtok_is(m, s - 1, "{") &&
           !kevo_rtok_is(m, s - 1, "}") && !kevo_rtok_is(m, s - 1, ")"))
        s--;
    for (unsigned t = s; t < d; t++)
        if (m->tok[t].kind == KEVO_CTOK_PUNCT && !kevo_rtok_is(m, t, "*"))
            return false;
    *d0 = s;
    *d1 = e + 1;
    return true;
}

static int pack_rewrite(kevo_recipe_out *out, pack_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *A = c->A, *V = c->V, *R = c->R;
    pack_texts p = {0};
    kevo_buf b = {0}, load = {0}, copy = {0};
    int error = 0;
    if (!hoist_all(c, &p)) {
        error = kevo_error_set(KEVO_ERROR, "recipe bug: pack declined its own pick: %s", c->why);
        goto done;
    }
    const char *jn = m->var[V->var].name, *kn = m->var[R->var].name;
    char buf[64], nw[64], j0[64], j1[64], k0[64], k1[64], nj[64], nk[64], lane[64], jb[64];
    char taken[10][64];
    size_t nt = 0;
    char base[80];
    snprintf(base, sizeof(base), "%s", m->var[m->tok[c->x0].var].name);
    kevo_recipe_fresh_name(buf, sizeof(buf), m, base, c->transposed ? "_packt" : "_pack", taken,
                           nt);
    memcpy(taken[nt++], buf, sizeof(buf));
    struct {
        char *dst;
        const char *suffix;
    } names[] = {{nw, "_w"}, {j0, "_j0"}, {j1, "_j1"}, {k0, "_k0"}, {k1, "_k1"}, {nj, "_nj"},
                 {nk, "_nk"}, {lane, "_lane"}, {jb, "_jb"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        kevo_recipe_fresh_name(names[i].dst, 64, m, buf, names[i].suffix, taken, nt);
        if (nt < 10)
            memcpy(taken[nt++], names[i].dst, 64);
    }
    unsigned ty0 = m->tok[V->t_type0].start, ty1 = m->tok[V->t_type1 - 1].end;
    int tyn = (int)(ty1 - ty0);
    const char *ty = m->src + ty0;
    unsigned kty0 = m->tok[R->t_type0].start, kty1 = m->tok[R->t_type1 - 1].end;
    int ktyn = (int)(kty1 - kty0);
    const char *kty = m->src + kty0;
    /* A's statement: from its first pragma, if any */
    unsigned s_start = A->n_pragmas > 0 ? m->dir[A->pragmas[0]].start : m->tok[A->t_for].start;
    unsigned s_end = m->tok[A->t_end - 1].end;
    size_t il;
    const char *ind = kevo_recipe_indent(m, s_start, &il);
    /* A with every identical access reading the buffer */
    if (c->transposed)
        error = kevo_buf_printf(&load, "%s[(%s - %s) * %s - %s + %s]", buf, kn, k0, nj, j0, jn);
    else
        error = kevo_buf_printf(&load, "%s[((%s - %s) / %s * %s + (%s - %s)) * %s]", buf, jn, j0,
                                nw, nk, kn, k0, nw);
    if (error < 0)
        goto done;
    unsigned reps[2 * 64], nrep = 0;
    for (unsigned t = R->t_body; t + 1 < R->t_end && nrep < 64; t++) {
        unsigned x1;
        bool hit = c->transposed ? scalar_read_at(m, t, R->t_end, &x1)
                                 : vector_load_at(m, t, &x1);
        if (!hit || !kevo_rtok_same(m, t, x1, c->x0, c->x1))
            continue;
        reps[2 * nrep] = t;
        reps[2 * nrep + 1] = x1;
        nrep++;
        t = x1 - 1;
    }
    unsigned d0 = 0, d1 = 0;
    bool drop = c->transposed && dead_declaration(c, nrep, &d0, &d1);
    unsigned pos = s_start;
    for (unsigned i = 0; i <= nrep && error == 0; i++) {
        /* the dropped declaration lies before the reads it fed */
        if (drop && (i == nrep || d0 < reps[2 * i]) && m->tok[d0].start >= pos) {
            error = kevo_buf_printf(&copy, "%.*s", (int)(m->tok[d0].start - pos), m->src + pos);
            pos = m->tok[d1 - 1].end;
            drop = false;
        }
        if (i == nrep || error < 0)
            break;
        unsigned t = reps[2 * i], x1 = reps[2 * i + 1];
        error = kevo_buf_printf(&copy, "%.*s%s", (int)(m->tok[t].start - pos), m->src + pos,
                                kevo_buf_cstr(&load));
        pos = m->tok[x1 - 1].end;
    }
    if (error == 0)
        error = kevo_buf_printf(&copy, "%.*s", (int)(s_end - pos), m->src + pos);
    if (error < 0)
        goto done;
    /* the block */
    const char *I = "    ";
    error = kevo_buf_printf(&b,
                            "{\n%.*s%sextern void *aligned_alloc(__SIZE_TYPE__, __SIZE_TYPE__);\n"
                            "%.*s%sextern void free(void *);\n",
                            (int)il, ind, I, (int)il, ind, I);
    for (size_t i = 0; i < c->ntdef && error == 0; i++) {
        unsigned e = c->tdef[i];
        while (e < A->t_end && !kevo_rtok_is(m, e, ";"))
            e++;
        error = kevo_buf_printf(&b, "%.*s%s%.*s\n", (int)il, ind, I, TEXT(c->tdef[i], e + 1));
    }
    if (error == 0 && c->transposed)
        error = kevo_buf_printf(&b,
                                "%.*s%sconst %.*s %s = (%s), %s = (%s);\n"
                                "%.*s%sconst %.*s %s = %s > %s ? %s - %s : 0;\n",
                                (int)il, ind, I, tyn, ty, j0, kevo_buf_cstr(&p.jlb), j1,
                                kevo_buf_cstr(&p.jub), (int)il, ind, I, tyn, ty, nj, j1, j0, j1,
                                j0);
    else if (error == 0)
        error = kevo_buf_printf(
            &b,
            "%.*s%sconst %.*s %s = (%s), %s = (%s), %s = (%s);\n"
            "%.*s%sconst %.*s %s = %s > %s ? (%s - %s + %s - 1) / %s * %s : 0;\n",
            (int)il, ind, I, tyn, ty, nw, kevo_buf_cstr(&p.w), j0, kevo_buf_cstr(&p.jlb), j1,
            kevo_buf_cstr(&p.jub), (int)il, ind, I, tyn, ty, nj, j1, j0, j1, j0, nw, nw, nw);
    if (error == 0)
        error = kevo_buf_printf(
            &b,
            "%.*s%sconst %.*s %s = (%s), %s = (%s);\n"
            "%.*s%sconst %.*s %s = %s > %s ? %s - %s : 0;\n"
            "%.*s%sfloat *%s = %s > 0 && %s > 0 ? (float *)aligned_alloc(64, "
            "((__SIZE_TYPE__)%s * (__SIZE_TYPE__)%s * sizeof(float) + 63) / 64 * 64) : (float *)0;\n"
            "%.*s%sif (%s) {\n",
            (int)il, ind, I, ktyn, kty, k0, kevo_buf_cstr(&p.klb), k1, kevo_buf_cstr(&p.kub), /* */
            (int)il, ind, I, ktyn, kty, nk, k1, k0, k1, k0,                           /* */
            (int)il, ind, I, buf, nj, nk, nj, nk,                                     /* */
            (int)il, ind, I, buf);
    /* The fill, in the order that touches memory in lines: the transpose
     * by blocks of 32 columns (k inner: the 32 source rows' lines stay in
     * L1 while their 16 floats are taken, each buffer row written 32
     * contiguous floats at a time); the panels one panel at a time (k
     * inner: each panel written as one contiguous stream). The order of a
     * copy is free: its source is not written in A and the buffer is new.
     * When A runs in OpenMP threads, so does the fill (each outer iteration
     * its own block or panel): else one thread copies while the others
     * wait at A. */
    if (error == 0 && (A->pragma_flags & KEVO_PRAGMA_OMP_PARALLEL) &&
        (A->pragma_flags & KEVO_PRAGMA_OMP_FOR))
        error = kevo_buf_printf(&b, "%.*s%s%s#pragma omp parallel for\n", (int)il, ind, I, I);
    if (error == 0 && c->transposed)
        error = kevo_buf_printf(
            &b,
            "%.*s%s%sfor (%.*s %s = %s; %s < %s; %s += 32)\n"
            "%.*s%s%s%sfor (%.*s %s = %s; %s < %s; %s++)\n"
            "%.*s%s%s%s%sfor (%.*s %s = %s; %s < (%s - %s > 32 ? %s + 32 : %s); %s++)\n"
            "%.*s%s%s%s%s%s%s[(%s - %s) * %s + (%s - %s)] = %s;\n",
            (int)il, ind, I, I, tyn, ty, jb, j0, jb, j1, jb,                      /* */
            (int)il, ind, I, I, I, ktyn, kty, kn, k0, kn, k1, kn,                 /* */
            (int)il, ind, I, I, I, I, tyn, ty, jn, jb, jn, j1, jb, jb, j1, jn,    /* */
            (int)il, ind, I, I, I, I, I, buf, kn, k0, nj, jn, j0, kevo_buf_cstr(&p.x));
    else if (error == 0)
        error = kevo_buf_printf(
            &b,
            "%.*s%s%sfor (%.*s %s = %s; %s < %s + %s; %s += %s)\n"
            "%.*s%s%s%sfor (%.*s %s = %s; %s < %s; %s++)\n"
            "%.*s%s%s%s%sfor (%.*s %s = 0; %s < %s; %s++)\n"
            "%.*s%s%s%s%s%s%s[((%s - %s) / %s * %s + (%s - %s)) * %s + %s] = (&%s)[%s];\n",
            (int)il, ind, I, I, tyn, ty, jn, j0, jn, j0, nj, jn, nw,           /* */
            (int)il, ind, I, I, I, ktyn, kty, kn, k0, kn, k1, kn,              /* */
            (int)il, ind, I, I, I, I, tyn, ty, lane, lane, nw, lane,           /* */
            (int)il, ind, I, I, I, I, I, buf, jn, j0, nw, nk, kn, k0, nw, lane,
            kevo_buf_cstr(&p.x), lane);
    if (error == 0)
        error = kevo_buf_printf(&b,
                                "%.*s%s%s%s\n"
                                "%.*s%s} else {\n"
                                "%.*s%s%s%.*s\n"
                                "%.*s%s}\n"
                                "%.*s%sfree(%s);\n"
                                "%.*s}",
                                (int)il, ind, I, I, kevo_buf_cstr(&copy),           /* */
                                (int)il, ind, I,                                    /* */
                                (int)il, ind, I, I, (int)(s_end - s_start), m->src + s_start, /* */
                                (int)il, ind, I,                                    /* */
                                (int)il, ind, I, buf,                               /* */
                                (int)il, ind);
    if (error == 0)
        error = kevo_cparse_edits_add(&out->edits, s_start, s_end, "%s", kevo_buf_cstr(&b));
done:
    pack_texts_free(&p);
    kevo_buf_free(&b);
    kevo_buf_free(&load);
    kevo_buf_free(&copy);
    return error;
}

int kevo_recipe_pack_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params)
{
    (void)source;
    int pass0 = params[0] == 1 ? 1 : 0, pass1 = params[0] == 0 ? 0 : 1;
    pack_ctx c = {0};
    c.m = m;
    int error = kevo_recipe_writes(&c.fw, &c.nfw, m, m->t_fbody, (unsigned)m->n_tok);
    if (error < 0)
        return error;
    size_t nv = m->n_var ? m->n_var : 1;
    c.root = malloc(nv * sizeof(*c.root));
    c.rw = malloc(nv);
    if (!c.root || !c.rw) {
        free(c.fw);
        free(c.root);
        free(c.rw);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t v = 0; v < nv; v++)
        c.root[v] = -2;
    if ((error = find_fallbacks(&c)) < 0) {
        free(c.fw);
        free(c.root);
        free(c.rw);
        return error;
    }
    if (!pack_find(&c, pass0, pass1) || !context_ok(&c))
        error = kevo_error_set(KEVO_EINVAL, "%s", c.why);
    else
        error = pack_rewrite(out, &c);
    free(c.fw);
    free(c.skip);
    free(c.root);
    free(c.rw);
    return error;
}
