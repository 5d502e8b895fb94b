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
 * The copy is made at A's start, so everything the address names must have
 * the value there that it has at the load: variables declared inside A are
 * replaced by their initialisers (each declared once, never written),
 * those declared outside it must not be written inside A, and the memory
 * read (X and any pointer the address reads) must derive from a parameter
 * the kernel never writes (distinct parameters do not overlap: the task
 * contract). V's and R's bounds and V's step are copied the same way. The
 * fill reads exactly the lanes the loads read (the panels are whole vectors
 * from a while j < b), so it touches no element the loop did not.
 *
 * Declines: no such load; an address that depends on every loop around V
 * (nothing to reuse); a loop that can leave early; A collapsed into the
 * loop above it, or an OpenMP worksharing construct A does not start
 * itself (threads could take different branches); a kernel packed already.
 *
 * Must not: change anything outside the statement of A.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACK_MAX_TYPEDEFS 4

typedef struct pack_ctx {
    const kevo_recipe_model *m;
    const kevo_rloop *V, *R, *A;
    kevo_rwrite *fw; /* every write of the function */
    size_t nfw;
    unsigned x0, x1;                        /* the first load's X[...]: tokens [x0, x1) */
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

/* Whether memory reached from variable v can change: some write in the
 * function lands on its root parameter, a write kevo cannot read, or a
 * call is passed something derived from it. */
static bool root_written(const pack_ctx *c, int v)
{
    const kevo_recipe_model *m = c->m;
    int root = kevo_recipe_root_param(m, v);
    if (root < 0)
        return true;
    for (size_t i = 0; i < c->nfw; i++) {
        const kevo_rwrite *w = &c->fw[i];
        if (w->kind == KEVO_WRITE_UNKNOWN)
            return true;
        if (w->kind == KEVO_WRITE_SCALAR && w->var == root)
            return true; /* the pointer itself moves */
        if ((w->kind == KEVO_WRITE_ELEMENT || w->kind == KEVO_WRITE_DEREF) &&
            (w->var < 0 || kevo_recipe_root_param(m, w->var) == root))
            return true;
    }
    for (unsigned t = m->t_fbody; t + 1 < m->n_tok; t++) {
        if (m->tok[t].kind != KEVO_CTOK_IDENT || m->tok[t].var >= 0 ||
            !kevo_rtok_is(m, t + 1, "(") || kevo_rtok_is(m, t, "sizeof"))
            continue;
        unsigned rp = kevo_rtok_match(m, t + 1);
        for (unsigned k = t + 2; rp != (unsigned)-1 && k < rp; k++) {
            int a = m->tok[k].var;
            if (a >= 0 && (m->var[a].vtype == KEVO_VTYPE_POINTER ||
                           m->var[a].vtype == KEVO_VTYPE_ARRAY) &&
                kevo_recipe_root_param(m, a) == root)
                return true;
        }
    }
    return false;
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
        !hoist_text(c, &p->w, w0, V->t_rparen, 0))
        return false;
    return true;
}

/* V and R: a vectorised loop holding a simple reduction loop. */
static bool loops_ok(pack_ctx *c, int v, int r)
{
    const kevo_recipe_model *m = c->m;
    const kevo_rloop *V = &m->loop[v], *R = &m->loop[r];
    if (!V->canonical || !V->declared || V->cond_op != KEVO_COND_LT || V->step == 1 ||
        V->step < 0 || V->early_exit)
        return false;
    unsigned s0 = V->t_semi2 + 1;
    if (V->step == 0 && !kevo_rtok_is(m, s0 + 1, "+=") && !kevo_rtok_is(m, s0 + 1, "="))
        return false;
    if (!R->simple || R->early_exit || R->cond_op != KEVO_COND_LT || R->parent != v)
        return false;
    return true;
}

/* Find V, R, the load and A; false with c->why. */
static bool pack_find(pack_ctx *c)
{
    const kevo_recipe_model *m = c->m;
    char first[400] = "";
    for (size_t r = 0; r < m->n_loop; r++) {
        const kevo_rloop *R = &m->loop[r];
        if (R->parent < 0 || R->n_children > 0 || !loops_ok(c, R->parent, (int)r))
            continue;
        c->V = &m->loop[R->parent];
        c->R = R;
        for (unsigned t = R->t_body; t + 1 < R->t_end; t++) {
            unsigned x1;
            if (!vector_load_at(m, t, &x1))
                continue;
            int x = m->tok[t].var;
            bool in_r = m->var[x].decl_off != (unsigned)-1 &&
                        m->var[x].decl_off >= m->tok[R->t_body].start &&
                        m->var[x].decl_off < m->tok[R->t_end - 1].end;
            if (!m->var[x].elem_f32 || (!in_r && !kevo_recipe_uses_var(m, t + 1, x1, R->var)))
                continue;
            c->x0 = t;
            c->x1 = x1;
            /* the outermost loop around V whose start the address is
             * invariant from */
            const kevo_rloop *best = NULL;
            for (int a = c->V->parent; a >= 0; a = m->loop[a].parent) {
                c->A = &m->loop[a];
                pack_texts p = {0};
                bool ok = !c->A->early_exit && hoist_all(c, &p);
                pack_texts_free(&p);
                if (ok)
                    best = c->A;
                else {
                    if (!first[0])
                        snprintf(first, sizeof(first), "%s", c->why);
                    break;
                }
            }
            if (best) {
                c->A = best;
                return true;
            }
            if (!first[0])
                snprintf(first, sizeof(first),
                         "the load of '%s' at line %u is inside no loop around the loop at "
                         "line %u: there is nothing to reuse",
                         m->var[x].name, kevo_recipe_line(m, m->tok[t].start), c->V->line);
        }
    }
    snprintf(c->why, sizeof(c->why), "%s",
             first[0] ? first
                      : "no vector load `*(const vf *)&x[e + j]` moving with a reduction loop "
                        "`k` inside a vectorised loop `j += W` (apply vectorize or "
                        "register_block first)");
    return false;
}

/* What A must not be: collapsed, inside a parallel region, packed. */
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
    for (size_t v = 0; v < m->n_var; v++) {
        size_t n = strlen(m->var[v].name);
        if (n > 5 && !strcmp(m->var[v].name + n - 5, "_pack")) {
            snprintf(c->why, sizeof(c->why), "the kernel is packed already ('%s')",
                     m->var[v].name);
            return false;
        }
    }
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
    char buf[64], nw[64], j0[64], j1[64], k0[64], k1[64], nj[64], nk[64], lane[64];
    char taken[9][64];
    size_t nt = 0;
    char base[80];
    snprintf(base, sizeof(base), "%s", m->var[m->tok[c->x0].var].name);
    kevo_recipe_fresh_name(buf, sizeof(buf), m, base, "_pack", taken, nt);
    memcpy(taken[nt++], buf, sizeof(buf));
    struct {
        char *dst;
        const char *suffix;
    } names[] = {{nw, "_w"}, {j0, "_j0"}, {j1, "_j1"}, {k0, "_k0"}, {k1, "_k1"}, {nj, "_nj"},
                 {nk, "_nk"}, {lane, "_lane"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
        kevo_recipe_fresh_name(names[i].dst, 64, m, buf, names[i].suffix, taken, nt);
        if (nt < 9)
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
    /* A with every identical load reading the buffer */
    if ((error = kevo_buf_printf(&load, "%s[((%s - %s) / %s * %s + (%s - %s)) * %s]", buf, jn, j0,
                                 nw, nk, kn, k0, nw)) < 0)
        goto done;
    unsigned pos = s_start;
    for (unsigned t = R->t_body; t + 1 < R->t_end; t++) {
        unsigned x1;
        if (!vector_load_at(m, t, &x1) || !kevo_rtok_same(m, t, x1, c->x0, c->x1))
            continue;
        if ((error = kevo_buf_printf(&copy, "%.*s%s", (int)(m->tok[t].start - pos), m->src + pos,
                                     kevo_buf_cstr(&load))) < 0)
            goto done;
        pos = m->tok[x1 - 1].end;
        t = x1 - 1;
    }
    if ((error = kevo_buf_printf(&copy, "%.*s", (int)(s_end - pos), m->src + pos)) < 0)
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
    if (error == 0)
        error = kevo_buf_printf(
            &b,
            "%.*s%sconst %.*s %s = (%s), %s = (%s), %s = (%s);\n"
            "%.*s%sconst %.*s %s = (%s), %s = (%s);\n"
            "%.*s%sconst %.*s %s = %s > %s ? (%s - %s + %s - 1) / %s * %s : 0;\n"
            "%.*s%sconst %.*s %s = %s > %s ? %s - %s : 0;\n"
            "%.*s%sfloat *%s = %s > 0 && %s > 0 ? (float *)aligned_alloc(64, "
            "((__SIZE_TYPE__)%s * (__SIZE_TYPE__)%s * sizeof(float) + 63) / 64 * 64) : (float *)0;\n"
            "%.*s%sif (%s) {\n"
            "%.*s%s%sfor (%.*s %s = %s; %s < %s; %s++)\n"
            "%.*s%s%s%sfor (%.*s %s = %s; %s < %s + %s; %s += %s)\n"
            "%.*s%s%s%s%sfor (%.*s %s = 0; %s < %s; %s++)\n"
            "%.*s%s%s%s%s%s%s[((%s - %s) / %s * %s + (%s - %s)) * %s + %s] = (&%s)[%s];\n"
            "%.*s%s%s%s\n"
            "%.*s%s} else {\n"
            "%.*s%s%s%.*s\n"
            "%.*s%s}\n"
            "%.*s%sfree(%s);\n"
            "%.*s}",
            (int)il, ind, I, tyn, ty, nw, kevo_buf_cstr(&p.w), j0, kevo_buf_cstr(&p.jlb), j1,
            kevo_buf_cstr(&p.jub),                                                   /* */
            (int)il, ind, I, ktyn, kty, k0, kevo_buf_cstr(&p.klb), k1, kevo_buf_cstr(&p.kub), /* */
            (int)il, ind, I, tyn, ty, nj, j1, j0, j1, j0, nw, nw, nw,                 /* */
            (int)il, ind, I, ktyn, kty, nk, k1, k0, k1, k0,                           /* */
            (int)il, ind, I, buf, nj, nk, nj, nk,                                     /* */
            (int)il, ind, I, buf,                                                     /* */
            (int)il, ind, I, I, ktyn, kty, kn, k0, kn, k1, kn,                        /* */
            (int)il, ind, I, I, I, tyn, ty, jn, j0, jn, j0, nj, jn, nw,               /* */
            (int)il, ind, I, I, I, I, tyn, ty, lane, lane, nw, lane,                  /* */
            (int)il, ind, I, I, I, I, I, buf, jn, j0, nw, nk, kn, k0, nw, lane,
            kevo_buf_cstr(&p.x), lane,                            /* */
            (int)il, ind, I, I, kevo_buf_cstr(&copy),             /* */
            (int)il, ind, I,                                      /* */
            (int)il, ind, I, I, (int)(s_end - s_start), m->src + s_start, /* */
            (int)il, ind, I,                                      /* */
            (int)il, ind, I, buf,                                 /* */
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
    (void)params;
    pack_ctx c = {0};
    c.m = m;
    int error = kevo_recipe_writes(&c.fw, &c.nfw, m, m->t_fbody, (unsigned)m->n_tok);
    if (error < 0)
        return error;
    if (!pack_find(&c) || !context_ok(&c))
        error = kevo_error_set(KEVO_EINVAL, "%s", c.why);
    else
        error = pack_rewrite(out, &c);
    free(c.fw);
    return error;
}
