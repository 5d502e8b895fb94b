/*
 * recipe/recipe_opencl.c - the OpenCL recipes, applied to OpenCL candidates
 * (kevo_recipe_is_opencl) and above all to kevo's own port of the reference
 * (src/backend/opencl_draft.c):
 *   ocl_ndrange     one work-item per iteration of each top-level loop nest
 *                   (1-D, or 2-D over a perfect pair), one kernel and launch
 *                   per nest, grid rounded up to the work-group size;
 *   ocl_work_group  change the work-group size of launches whose kernels do
 *                   not depend on it;
 *   ocl_coarsen     each work-item handles W indices of a 1-D launch
 *                   (consecutive, or strided by the grid), a W-times smaller
 *                   grid: the vector-width knob of a device that vectorises
 *                   across work-items;
 *   ocl_local_tile  local-memory tiling of a 2-D matrix-product kernel: each
 *                   work-group stages TxT tiles of both operands in __local
 *                   memory between barriers.
 * Unlike the C recipes, these rewrite the whole file (kernels are added,
 * split and renamed, and the `// kevo: launch` lines change with them), so
 * they return the new source in kevo_recipe_out.whole.
 *
 * Must not: run a compiler; judge the result (the gates do).
 */
#include "model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAUNCHES 16

typedef struct ocl_launch {
    char kernel[160];
    char global[3][256];
    char local[3][32];
    int ng, nl;
    char rest[256]; /* anything after local= (args=...) */
} ocl_launch;

/* The `// kevo: launch` lines of the leading comment block. */
static int launches_parse(ocl_launch *v, size_t *n, const char *src)
{
    *n = 0;
    kevo_header_line h;
    for (const char *cur = src; kevo_recipe_header_next(&cur, &h);) {
        if (!strncmp(h.text, "// kevo: launch ", 16)) {
            if (*n == MAX_LAUNCHES)
                return kevo_error_set(KEVO_EINVAL, "more than %d launches", MAX_LAUNCHES);
            ocl_launch *L = &v[(*n)++];
            memset(L, 0, sizeof(*L));
            char line[1024];
            snprintf(line, sizeof(line), "%.*s", (int)(h.text_len - 16), h.text + 16);
            char *save = NULL;
            for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
                if (!L->kernel[0]) {
                    snprintf(L->kernel, sizeof(L->kernel), "%s", w);
                } else if (!strncmp(w, "global=", 7) || !strncmp(w, "local=", 6)) {
                    bool g = w[0] == 'g';
                    char *list = strchr(w, '=') + 1;
                    /* split at top-level commas */
                    int depth = 0, k = 0;
                    char *start = list;
                    for (char *c = list;; c++) {
                        if (*c == '(')
                            depth++;
                        else if (*c == ')')
                            depth--;
                        if ((*c == ',' && depth == 0) || !*c) {
                            if (k == 3)
                                return kevo_error_set(KEVO_EINVAL, "more than 3 dimensions");
                            if (g)
                                snprintf(L->global[k], sizeof(L->global[k]), "%.*s",
                                         (int)(c - start), start);
                            else
                                snprintf(L->local[k], sizeof(L->local[k]), "%.*s",
                                         (int)(c - start), start);
                            k++;
                            start = c + 1;
                            if (!*c)
                                break;
                        }
                    }
                    if (g)
                        L->ng = k;
                    else
                        L->nl = k;
                } else {
                    size_t used = strlen(L->rest);
                    snprintf(L->rest + used, sizeof(L->rest) - used, " %s", w);
                }
            }
        }
    }
    if (*n == 0)
        return kevo_error_set(KEVO_EINVAL, "not an OpenCL candidate (no `// kevo: launch` line)");
    return 0;
}

static void launch_format(kevo_buf *b, const ocl_launch *L)
{
    kevo_buf_printf(b, "// kevo: launch %s global=", L->kernel);
    for (int k = 0; k < L->ng; k++)
        kevo_buf_printf(b, "%s%s", k ? "," : "", L->global[k]);
    if (L->nl) {
        kevo_buf_puts(b, " local=");
        for (int k = 0; k < L->nl; k++)
            kevo_buf_printf(b, "%s%s", k ? "," : "", L->local[k]);
    }
    kevo_buf_printf(b, "%s\n", L->rest);
}

/* `src` with its launch lines replaced by those of v[0..n) (at the place of
 * the first). */
static int launches_replace(char **out, const char *src, const ocl_launch *v, size_t n)
{
    kevo_buf b = {0};
    bool done = false;
    kevo_header_line h;
    const char *cur = src;
    while (kevo_recipe_header_next(&cur, &h)) {
        if (!strncmp(h.text, "// kevo: launch ", 16)) {
            for (size_t i = 0; i < n && !done; i++)
                launch_format(&b, &v[i]);
            done = true;
        } else {
            kevo_buf_put(&b, h.raw, h.raw_len);
        }
    }
    kevo_buf_puts(&b, cur); /* the rest, after the leading comment block */
    *out = kevo_buf_detach(&b);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}

/* Parse `ROUND_UP(E,L)` into E (caller's buffer) and L. */
static bool round_up_parts(const char *g, char *e, size_t esize, long *l)
{
    size_t n = strlen(g);
    if (strncmp(g, "ROUND_UP(", 9) != 0 || n < 12 || g[n - 1] != ')')
        return false;
    const char *comma = g + n - 2;
    while (comma > g + 9 && *comma != ',')
        comma--;
    if (*comma != ',')
        return false;
    char *end;
    *l = strtol(comma + 1, &end, 10);
    if (end != g + n - 1 || *l <= 0)
        return false;
    snprintf(e, esize, "%.*s", (int)(comma - (g + 9)), g + 9);
    return true;
}

/* Whether the kernel's tokens name any of the work-group functions or
 * memories: such a kernel depends on its work-group size. */
static bool uses_work_group(const kevo_recipe_model *m)
{
    static const char *const words[] = {"get_local_id",   "get_local_size", "get_group_id",
                                        "get_num_groups", "barrier",        "__local",
                                        "local",          "reqd_work_group_size"};
    for (size_t t = 0; t < m->n_tok; t++)
        for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
            if (kevo_rtok_is(m, t, words[w]))
                return true;
    return false;
}

static int count_word(const kevo_recipe_model *m, const char *w)
{
    int n = 0;
    for (size_t t = 0; t < m->n_tok; t++)
        n += kevo_rtok_is(m, t, w);
    return n;
}

/* Text of tokens [t0,t1) with single spaces where the source had space. */
static void tokens_text(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                        bool compact)
{
    for (unsigned t = t0; t < t1; t++) {
        size_t n;
        const char *p = kevo_rtok_text(m, t, &n);
        if (m->tok[t].kind == 4) /* comments would swallow what follows on the line */
            continue;
        if (!compact && t > t0 && m->tok[t].start > m->tok[t - 1].end)
            kevo_buf_puts(b, " ");
        kevo_buf_put(b, p, n);
    }
}

/* Whether tokens [t0,t1) are a size expression kevo's launch language can
 * evaluate: integer literals, integer scalar parameters, + - * / % ( ). */
static bool size_expr_ok(const kevo_recipe_model *m, unsigned t0, unsigned t1, char *why,
                         size_t why_len)
{
    if (t0 >= t1)
        return false;
    for (unsigned t = t0; t < t1; t++) {
        size_t n;
        const char *p = kevo_rtok_text(m, t, &n);
        if (m->tok[t].kind == 3) {
            for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char)p[i])) {
                    snprintf(why, why_len, "bound `%.*s` is not a plain integer", (int)n, p);
                    return false;
                }
            continue;
        }
        if (m->tok[t].kind == 2) {
            int v = m->tok[t].var;
            if (v < 0 || !m->var[v].is_param || m->var[v].vtype != KEVO_VTYPE_INT) {
                snprintf(why, why_len, "bound uses `%.*s`, not an integer parameter", (int)n, p);
                return false;
            }
            continue;
        }
        if (!(n == 1 && strchr("+-*/%()", p[0]))) {
            snprintf(why, why_len, "bound uses `%.*s`", (int)n, p);
            return false;
        }
    }
    return true;
}

/* --- ocl_ndrange ------------------------------------------------------------ */

typedef struct nest_plan {
    int loop;  /* top-level loop */
    int dims;  /* 1 or 2 */
    int lp[2]; /* the loops mapped to work-item dimensions, outer first */
} nest_plan;

/* The kernel's name, parameter list and closing brace. */
typedef struct ndr_kernel {
    unsigned t_lp, t_rp, t_close;
    const char *name;
    size_t nlen;
} ndr_kernel;

static int ndr_signature(ndr_kernel *k, const kevo_recipe_model *m)
{
    unsigned t_name = 0;
    k->t_lp = 0;
    k->t_rp = 0;
    for (unsigned t = 0; t < m->t_fbody; t++)
        if (kevo_rtok_is(m, t, "(") && t > 0 && m->tok[t - 1].kind == KEVO_CTOK_IDENT) {
            t_name = t - 1;
            k->t_lp = t;
            k->t_rp = kevo_rtok_match(m, t);
            break;
        }
    if (!k->t_lp || k->t_rp == (unsigned)-1)
        return kevo_error_set(KEVO_EINVAL, "cannot find the kernel's parameter list");
    k->name = kevo_rtok_text(m, t_name, &k->nlen);
    k->t_close = kevo_rtok_match(m, m->t_fbody);
    if (k->t_close == (unsigned)-1)
        return kevo_error_set(KEVO_EINVAL, "cannot find the end of the kernel");
    return 0;
}

/* A statement at the top of the kernel, from *t to its `;` (past which *t
 * moves): it must write nothing (each nest becomes its own kernel, which
 * repeats it), and goes to decls. */
static int ndr_statement(kevo_buf *decls, unsigned *t, const kevo_recipe_model *m,
                         unsigned t_close)
{
    static const char *const ctl[] = {"if",   "while", "do",       "switch", "return",
                                      "{",    "goto",  "break",    "continue"};
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    for (size_t c = 0; c < sizeof(ctl) / sizeof(ctl[0]); c++)
        if (kevo_rtok_is(m, *t, ctl[c]))
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: `%s` at the top of the kernel; it applies to a "
                                  "body of declarations and loop nests",
                                  kevo_recipe_line(m, m->tok[*t].start), ctl[c]);
    unsigned s = *t, e = *t;
    int depth = 0;
    while (e < t_close && !(depth == 0 && kevo_rtok_is(m, e, ";"))) {
        if (kevo_rtok_is(m, e, "(") || kevo_rtok_is(m, e, "{") || kevo_rtok_is(m, e, "["))
            depth++;
        if (kevo_rtok_is(m, e, ")") || kevo_rtok_is(m, e, "}") || kevo_rtok_is(m, e, "]"))
            depth--;
        e++;
    }
    e++;
    *t = e;
    if ((error = kevo_recipe_writes(&w, &nw, m, s, e)) < 0)
        return error;
    free(w);
    if (nw > 0)
        return kevo_error_set(KEVO_EINVAL,
                              "line %u: a statement outside the loop nests writes; each nest "
                              "becomes its own kernel, so only declarations may stand "
                              "outside them",
                              kevo_recipe_line(m, m->tok[s].start));
    tokens_text(decls, m, s, e, false);
    kevo_buf_puts(decls, "\n");
    return 0;
}

/* The body: side-effect-free statements (into decls) and top-level loop
 * nests (into plan[0..*np)). */
static int ndr_body(nest_plan *plan, size_t *np, kevo_buf *decls, const kevo_recipe_model *m,
                    const ndr_kernel *k)
{
    int error = 0;
    *np = 0;
    for (unsigned t = m->t_fbody + 1; t < k->t_close && error == 0;) {
        if (m->tok[t].kind == KEVO_CTOK_COMMENT) {
            t++;
            continue;
        }
        int l = -1;
        for (size_t i = 0; i < m->n_loop; i++)
            if (m->loop[i].t_for == t && m->loop[i].parent < 0)
                l = (int)i;
        if (l < 0) {
            error = ndr_statement(decls, &t, m, k->t_close);
            continue;
        }
        if (*np == MAX_LAUNCHES)
            return kevo_error_set(KEVO_EINVAL, "more than %d loop nests", MAX_LAUNCHES);
        plan[(*np)++].loop = l;
        t = m->loop[l].t_end;
    }
    if (error == 0 && *np == 0)
        error = kevo_error_set(KEVO_EINVAL, "the kernel has no loop nest");
    return error;
}

/* One nest: parallel over its outer (1-D) or outer two (2-D) loops, as
 * many as its band and its stores allow. */
static int ndr_plan_nest(nest_plan *p, const kevo_recipe_model *m, long dims)
{
    char why[400] = "";
    const kevo_rloop *L = &m->loop[p->loop];
    if (!L->simple)
        return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", L->line, L->why);
    char ee[96];
    if (L->early_exit)
        return kevo_error_set(KEVO_EINVAL, "%s", kevo_recipe_early_exit_why(ee, sizeof(ee), L));
    kevo_rscalars sc;
    if (kevo_recipe_scalars(&sc, m, L->t_body, L->t_end, L->t_end) < 0)
        return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", L->line, kevo_error_last());
    if (sc.n_red > 0)
        return kevo_error_set(KEVO_EINVAL,
                              "loop at line %u accumulates into `%s` across iterations "
                              "(a reduction needs a work-group design, not one work-item "
                              "per iteration)",
                              L->line, m->var[sc.red_var[0]].name);
    if (kevo_recipe_same_index(m, L->t_body, L->t_end) < 0)
        return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", L->line, kevo_error_last());
    int want = dims >= 2 ? 2 : 1;
    int band = kevo_recipe_band(m, p->loop, want, false, why, sizeof(why));
    int d = band < want ? band : want;
    if (d < 1)
        d = 1;
    for (; d >= 1; d--) {
        int vars[2];
        for (int k = 0; k < d; k++)
            vars[k] = m->loop[kevo_recipe_nest_loop(m, p->loop, k)].var;
        if (kevo_recipe_stores_indexed(m, L->t_body, L->t_end, vars, (size_t)d) == 0)
            break;
    }
    if (d < 1)
        return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", L->line, kevo_error_last());
    p->dims = d;
    for (int k = 0; k < d; k++) {
        p->lp[k] = kevo_recipe_nest_loop(m, p->loop, k);
        const kevo_rloop *K = &m->loop[p->lp[k]];
        if (!K->simple || !K->declared)
            return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", K->line, K->why);
        if (!size_expr_ok(m, K->t_lb0, K->t_lb1, why, sizeof(why)) ||
            !size_expr_ok(m, K->t_ub0, K->t_ub1, why, sizeof(why)))
            return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", K->line, why);
    }
    return 0;
}

/* The work-item index of loop K on dimension `dim` into b, its half of
 * the guard into guard, its launch extent into L. */
static void ndr_emit_index(kevo_buf *b, kevo_buf *guard, ocl_launch *L, const kevo_recipe_model *m,
                           const kevo_rloop *K, int dim, int k, int dims)
{
    kevo_buf ty = {0}, lb = {0}, ub = {0}, cnt = {0};
    tokens_text(&ty, m, K->t_type0, K->t_type1, false);
    tokens_text(&lb, m, K->t_lb0, K->t_lb1, true);
    tokens_text(&ub, m, K->t_ub0, K->t_ub1, true);
    const char *iv = m->var[K->var].name;
    kevo_buf_printf(b, "        const %s %s = (%s) + (%s)get_global_id(%d);\n", kevo_buf_cstr(&ty),
                    iv, kevo_buf_cstr(&lb), kevo_buf_cstr(&ty), dim);
    kevo_buf_printf(guard, "%s!(%s %s (%s))", k ? " || " : "", iv,
                    K->cond_op == KEVO_COND_LE ? "<=" : "<", kevo_buf_cstr(&ub));
    bool lb0 = !strcmp(kevo_buf_cstr(&lb), "0");
    if (lb0 && K->cond_op == KEVO_COND_LT)
        kevo_buf_printf(&cnt, "%s", kevo_buf_cstr(&ub));
    else
        kevo_buf_printf(&cnt, "(%s)-(%s)%s", kevo_buf_cstr(&ub), kevo_buf_cstr(&lb),
                        K->cond_op == KEVO_COND_LE ? "+1" : "");
    long ls = dims == 1 ? 64 : 16;
    snprintf(L->global[dim], sizeof(L->global[dim]), "ROUND_UP(%s,%ld)", kevo_buf_cstr(&cnt), ls);
    snprintf(L->local[dim], sizeof(L->local[dim]), "%ld", ls);
    kevo_buf_free(&ty);
    kevo_buf_free(&lb);
    kevo_buf_free(&ub);
    kevo_buf_free(&cnt);
}

/* Kernel i of the new file: the parameters, the declarations, one
 * work-item per iteration of the nest's parallel loops, the innermost
 * parallel loop's body; and its launch in L. */
static void ndr_emit_kernel(kevo_buf *b, ocl_launch *L, const kevo_recipe_model *m,
                            const char *source, const ndr_kernel *k, const kevo_buf *decls,
                            const nest_plan *p, size_t i)
{
    char name[150];
    int kl = k->nlen > 128 ? 128 : (int)k->nlen;
    if (i == 0)
        snprintf(name, sizeof(name), "%.*s", kl, k->name);
    else
        snprintf(name, sizeof(name), "%.*s_%zu", kl, k->name, i + 1);
    kevo_buf_printf(b, "%s__kernel void %s", i ? "\n" : "", name);
    tokens_text(b, m, k->t_lp, k->t_rp + 1, false);
    kevo_buf_puts(b, "\n{\n");
    if (decls->len)
        kevo_buf_printf(b, "%s", kevo_buf_cstr(decls));
    kevo_buf_puts(b, "    {\n");
    memset(L, 0, sizeof(*L));
    snprintf(L->kernel, sizeof(L->kernel), "%s", name);
    L->ng = L->nl = p->dims;
    kevo_buf guard = {0};
    for (int d = 0; d < p->dims; d++) /* innermost loop on dimension 0 */
        ndr_emit_index(b, &guard, L, m, &m->loop[p->lp[d]], p->dims - 1 - d, d, p->dims);
    kevo_buf_printf(b, "        if (%s)\n            return;\n", kevo_buf_cstr(&guard));
    kevo_buf_free(&guard);
    const kevo_rloop *In = &m->loop[p->lp[p->dims - 1]];
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[In->t_body].start, &il);
    kevo_buf_printf(b, "%.*s", (int)il, ind);
    kevo_buf_put(b, source + m->tok[In->t_body].start,
                 m->tok[In->t_end - 1].end - m->tok[In->t_body].start);
    kevo_buf_puts(b, "\n    }\n}\n");
}

/* Where the text before the kernel ends: its extent may start after its
 * `__kernel` (an empty macro in the model's prelude). */
static size_t ndr_prefix_end(const kevo_recipe_model *m, const char *source)
{
    static const char kw[] = "__kernel";
    size_t pre = m->fn_start, k0 = pre;
    while (k0 > 0 && isspace((unsigned char)source[k0 - 1]))
        k0--;
    if (k0 >= sizeof(kw) - 1 && !memcmp(source + k0 - (sizeof(kw) - 1), kw, sizeof(kw) - 1))
        pre = k0 - (sizeof(kw) - 1);
    return pre;
}

int kevo_recipe_ocl_ndrange_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params)
{
    ocl_launch lv[MAX_LAUNCHES], nv[MAX_LAUNCHES];
    size_t nl = 0, np = 0;
    int error;
    nest_plan plan[MAX_LAUNCHES];
    ndr_kernel k;
    kevo_buf b = {0}, decls = {0};

    if ((error = launches_parse(lv, &nl, source)) < 0)
        return error;
    if (nl != 1 || lv[0].ng != 1 || strcmp(lv[0].global[0], "1") != 0) {
        error = kevo_error_set(KEVO_EINVAL,
                               "applies to a kernel run by one work-item (`global=1`), the form "
                               "of kevo's port of the reference");
        goto done;
    }
    if ((error = ndr_signature(&k, m)) < 0 || (error = ndr_body(plan, &np, &decls, m, &k)) < 0)
        goto done;
    for (size_t i = 0; i < np; i++)
        if ((error = ndr_plan_nest(&plan[i], m, params[0])) < 0)
            goto done;
    /* the new file: what precedes the kernel, one kernel per nest, the rest */
    kevo_buf_put(&b, source, ndr_prefix_end(m, source));
    for (size_t i = 0; i < np; i++)
        ndr_emit_kernel(&b, &nv[i], m, source, &k, &decls, &plan[i], i);
    kevo_buf_puts(&b, source + m->tok[k.t_close].end);
    error = launches_replace(&out->whole, kevo_buf_cstr(&b), nv, np);
done:
    kevo_buf_free(&b);
    kevo_buf_free(&decls);
    return error;
}

/* --- ocl_work_group ---------------------------------------------------------- */

int kevo_recipe_ocl_work_group_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params)
{
    (void)m;
    ocl_launch lv[MAX_LAUNCHES];
    size_t nl = 0;
    int error;
    bool changed = false;
    char why[600] = "no launch has `global=ROUND_UP(E,L)` with `local=L` in every dimension";
    if ((error = launches_parse(lv, &nl, source)) < 0)
        return error;
    for (size_t i = 0; i < nl; i++) {
        ocl_launch *L = &lv[i];
        if (L->ng != L->nl || L->ng < 1 || L->ng > 2)
            continue;
        char e[3][256];
        long l[3];
        bool ok = true;
        for (int k = 0; k < L->ng && ok; k++)
            ok = round_up_parts(L->global[k], e[k], sizeof(e[k]), &l[k]) &&
                 strtol(L->local[k], NULL, 10) == l[k];
        if (!ok)
            continue;
        kevo_recipe_model *km = NULL;
        if (kevo_recipe_model_parse(&km, source, L->kernel) < 0) {
            snprintf(why, sizeof(why), "kernel `%.150s`: %.400s", L->kernel, kevo_error_last());
            kevo_error_clear();
            continue;
        }
        bool dep = uses_work_group(km);
        kevo_recipe_model_free(km);
        if (dep) {
            snprintf(why, sizeof(why),
                     "kernel `%.150s` uses work-group functions, local memory or barriers: its "
                     "work-group size is part of its design",
                     L->kernel);
            continue;
        }
        long want[2] = {params[0], params[1]};
        if (L->ng == 1)
            want[0] = params[0];
        for (int k = 0; k < L->ng; k++) {
            if (l[k] == want[k])
                continue;
            snprintf(L->global[k], sizeof(L->global[k]), "ROUND_UP(%.200s,%ld)", e[k], want[k]);
            snprintf(L->local[k], sizeof(L->local[k]), "%ld", want[k]);
            changed = true;
        }
        if (!changed)
            snprintf(why, sizeof(why), "the work-group size is %ld%s already", want[0],
                     L->ng == 2 ? "x.." : "");
    }
    if (!changed)
        return kevo_error_set(KEVO_EINVAL, "%s", why);
    return launches_replace(&out->whole, source, lv, nl);
}

/* Statement [s, e] (e: its `;`) holding the token `get_global_id ( d ) ;`
 * in the form `const T v = (lb) + (T)get_global_id(d);`: fills the var, the
 * type tokens [ty0, ty1), the init tokens [in0, in1) and the lb tokens
 * [lb0, lb1). */
typedef struct gid_decl {
    unsigned s, e, ty0, ty1, in0, in1, lb0, lb1;
    int var;
} gid_decl;

static bool find_gid_decl(gid_decl *g, const kevo_recipe_model *m, int dim)
{
    char d[4];
    snprintf(d, sizeof(d), "%d", dim);
    for (unsigned t = 0; t + 4 < m->n_tok; t++) {
        if (!(kevo_rtok_is(m, t, "get_global_id") && kevo_rtok_is(m, t + 1, "(") &&
              kevo_rtok_is(m, t + 2, d) && kevo_rtok_is(m, t + 3, ")") &&
              kevo_rtok_is(m, t + 4, ";")))
            continue;
        unsigned s = t;
        while (s > 0 && !kevo_rtok_is(m, s - 1, ";") && !kevo_rtok_is(m, s - 1, "{"))
            s--;
        unsigned eq = s;
        while (eq < t && !kevo_rtok_is(m, eq, "="))
            eq++;
        if (!kevo_rtok_is(m, s, "const") || eq < s + 3 || eq >= t || !kevo_rtok_is(m, eq + 1, "("))
            return false;
        unsigned rp = kevo_rtok_match(m, eq + 1);
        if (rp == (unsigned)-1 || !kevo_rtok_is(m, rp + 1, "+"))
            return false;
        g->s = s;
        g->e = t + 4;
        g->ty0 = s + 1;
        g->ty1 = eq - 1;
        g->var = m->tok[eq - 1].var;
        g->in0 = eq + 1;
        g->in1 = t + 4;
        g->lb0 = eq + 2;
        g->lb1 = rp;
        return g->var >= 0;
    }
    return false;
}

/* --- ocl_coarsen ------------------------------------------------------------- */

int kevo_recipe_ocl_coarsen_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params)
{
    (void)m;
    ocl_launch lv[MAX_LAUNCHES];
    size_t nl = 0;
    int error;
    char why[300] = "no 1-D launch `global=ROUND_UP(E,L)` of a kernel with one "
                    "`get_global_id(0)` and no work-group functions";
    kevo_cparse_edits e = {0};
    char *text = NULL, *body = NULL;
    long w = params[0];
    bool strided = params[1] != 0;
    bool any = false;
    if ((error = launches_parse(lv, &nl, source)) < 0)
        return error;
    char *cur = strdup(source);
    if (!cur)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < nl; i++) {
        ocl_launch *L = &lv[i];
        char ex[256];
        long l;
        if (L->ng != 1 || !round_up_parts(L->global[0], ex, sizeof(ex), &l))
            continue;
        kevo_recipe_model *km = NULL;
        if (kevo_recipe_model_parse(&km, cur, L->kernel) < 0) {
            kevo_error_clear();
            continue;
        }
        /* `const T v = (lb) + (T)get_global_id(0);` as the first statement of a block */
        gid_decl g = {0};
        bool ok = find_gid_decl(&g, km, 0) && count_word(km, "get_global_id") == 1 &&
                  !uses_work_group(km) && count_word(km, "get_global_size") == 0 && g.s > 0 &&
                  kevo_rtok_is(km, g.s - 1, "{");
        unsigned tg = ok ? g.e - 4 : 0, s = g.s; /* tg: the get_global_id token */
        ok = ok && kevo_rtok_is(km, tg - 1, ")") && kevo_rtok_is(km, tg - 3, "(") &&
             kevo_rtok_is(km, tg - 4, "+");
        unsigned close = ok ? kevo_rtok_match(km, s - 1) : (unsigned)-1;
        if (!ok || close == (unsigned)-1) {
            kevo_recipe_model_free(km);
            continue;
        }
        char cv[64];
        kevo_recipe_fresh_name(cv, sizeof(cv), km, "kv", "_c", NULL, 0);
        size_t tl;
        const char *ty = kevo_rtok_text(km, tg - 2, &tl);
        unsigned at = km->tok[s].start;
        kevo_cparse_edits_free(&e);
        error = kevo_cparse_edits_add(&e, at, at, "for (int %s = 0; %s < %ld; %s++) {\n", cv, cv,
                                      w, cv);
        if (!error && strided)
            error = kevo_cparse_edits_add(&e, km->tok[tg + 3].end, km->tok[tg + 3].end,
                                          " + (%.*s)%s * (%.*s)get_global_size(0)", (int)tl, ty,
                                          cv, (int)tl, ty);
        else if (!error)
            error = kevo_cparse_edits_add(&e, km->tok[tg + 3].end, km->tok[tg + 3].end,
                                          " * %ld + %s", w, cv);
        if (!error)
            error = kevo_cparse_edits_add(&e, km->tok[close].start, km->tok[close].start, "}\n");
        if (!error)
            error = kevo_recipe_edits_apply(&body, &e, cur, strlen(cur), 0, (unsigned)strlen(cur));
        kevo_recipe_model_free(km);
        if (error < 0)
            goto done;
        free(cur);
        cur = body;
        body = NULL;
        snprintf(L->global[0], sizeof(L->global[0]), "ROUND_UP(CEIL_DIV(%.200s,%ld),%ld)", ex, w,
                 l);
        any = true;
    }
    if (!any) {
        error = kevo_error_set(KEVO_EINVAL, "%s", why);
        goto done;
    }
    if ((error = launches_replace(&text, cur, lv, nl)) < 0)
        goto done;
    out->whole = text;
    text = NULL;
done:
    kevo_cparse_edits_free(&e);
    free(cur);
    free(body);
    free(text);
    return error;
}

/* --- ocl_local_tile ------------------------------------------------------------ */

/* Write tokens [t0,t1) with variable `from` spelled `to`. */
static void tokens_renamed(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                           int from, const char *to, int from2, const char *to2)
{
    for (unsigned t = t0; t < t1; t++) {
        size_t n;
        const char *p = kevo_rtok_text(m, t, &n);
        if (m->tok[t].kind == 4)
            continue;
        if (t > t0 && m->tok[t].start > m->tok[t - 1].end)
            kevo_buf_puts(b, " ");
        if (m->tok[t].var >= 0 && m->tok[t].var == from)
            kevo_buf_puts(b, to);
        else if (m->tok[t].var >= 0 && m->tok[t].var == from2)
            kevo_buf_puts(b, to2);
        else
            kevo_buf_put(b, p, n);
    }
}

/* The element type word of pointer parameter `var` ("float", "double"), or NULL. */
static const char *pointee(const kevo_recipe_model *m, int var)
{
    for (unsigned t = 1; t < m->n_tok; t++) {
        if (!m->tok[t].is_decl || m->tok[t].var != var)
            continue;
        for (unsigned b = t; b-- > 0;) {
            if (kevo_rtok_is(m, b, "float"))
                return "float";
            if (kevo_rtok_is(m, b, "double"))
                return "double";
            if (kevo_rtok_is(m, b, ",") || kevo_rtok_is(m, b, "("))
                return NULL;
        }
    }
    return NULL;
}

typedef struct operand_read {
    unsigned t0, t1; /* P [ ... ] */
    int var;
} operand_read;

/* What ocl_local_tile found in the kernel from ocl_ndrange (dims=2). */
typedef struct tile_plan {
    size_t li;           /* the kernel's launch */
    char ex[2][256];     /* the E of its ROUND_UP(E,L) per dimension */
    gid_decl gi, gj;     /* const T i = (a) + (T)get_global_id(1); ... (0); */
    unsigned glp, grp;   /* the guard's parentheses: if (...) return; */
    unsigned part[2][2]; /* the guard's halves on i and on j */
    unsigned blk_end;    /* the `}` of the block the indices open */
    int k;               /* the one loop of the block */
    operand_read rd[2];  /* the operand indexed by (i, k), the one by (k, j) */
    const char *type;    /* their element type */
} tile_plan;

/* The fresh names of the tiled kernel. */
typedef struct tile_names {
    char ri[64], rj[64], in[64], li[64], lj[64], ta[64], tb[64], k0[64], kk[64];
} tile_names;

/* The launch of this kernel: 2-D, rounded up to its local size. */
static int tile_launch(tile_plan *tp, const kevo_recipe_model *m, const ocl_launch *lv, size_t nl)
{
    long l[2];
    size_t kl;
    const char *kname = NULL;
    tp->li = nl;
    for (unsigned t = 0; t + 1 < m->t_fbody && !kname; t++)
        if (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "("))
            kname = kevo_rtok_text(m, t, &kl);
    for (size_t i = 0; i < nl && kname; i++)
        if (strlen(lv[i].kernel) == kl && !memcmp(lv[i].kernel, kname, kl) && lv[i].ng == 2 &&
            lv[i].nl == 2 &&
            round_up_parts(lv[i].global[0], tp->ex[0], sizeof(tp->ex[0]), &l[0]) &&
            round_up_parts(lv[i].global[1], tp->ex[1], sizeof(tp->ex[1]), &l[1]))
            tp->li = i;
    if (tp->li == nl)
        return kevo_error_set(KEVO_EINVAL, "no 2-D launch `global=ROUND_UP(E,L),ROUND_UP(E,L)` "
                                           "of this kernel (apply ocl_ndrange with dims=2 first)");
    return 0;
}

/* The guard's two halves, `!(i < (M))` and `!(j < (N))`, in either order. */
static int tile_guard_halves(tile_plan *tp, const kevo_recipe_model *m)
{
    unsigned a0 = tp->glp + 1, depth = 0, halves = 0;
    unsigned h[2][2];
    for (unsigned t = tp->glp + 1; t <= tp->grp; t++) {
        if (kevo_rtok_is(m, t, "(") && ++depth)
            continue;
        if (kevo_rtok_is(m, t, ")") && t < tp->grp && depth--)
            continue;
        if ((t == tp->grp || (depth == 0 && kevo_rtok_is(m, t, "||"))) && halves < 2) {
            h[halves][0] = a0;
            h[halves][1] = t;
            halves++;
            a0 = t + 1;
        } else if (t == tp->grp || (depth == 0 && kevo_rtok_is(m, t, "||"))) {
            halves = 3;
        }
    }
    for (unsigned k = 0; k < 2 && halves == 2; k++) {
        bool ui = kevo_recipe_uses_var(m, h[k][0], h[k][1], tp->gi.var);
        bool uj = kevo_recipe_uses_var(m, h[k][0], h[k][1], tp->gj.var);
        if (ui != uj)
            memcpy(tp->part[ui ? 0 : 1], h[k], sizeof(h[k]));
    }
    if (halves != 2 || !tp->part[0][1] || !tp->part[1][1])
        return kevo_error_set(KEVO_EINVAL, "the guard is not `if (!(i < a) || !(j < b)) "
                                           "return;` (the form of ocl_ndrange)");
    return 0;
}

/* The opening of the kernel from ocl_ndrange: the two work-item indices,
 * the guard, the block they open. */
static int tile_indices(tile_plan *tp, const kevo_recipe_model *m)
{
    int error;
    if (uses_work_group(m))
        return kevo_error_set(KEVO_EINVAL, "the kernel uses work-group functions already");
    if (!find_gid_decl(&tp->gi, m, 1) || !find_gid_decl(&tp->gj, m, 0) ||
        tp->gj.s != tp->gi.e + 1 || count_word(m, "get_global_id") != 2)
        return kevo_error_set(KEVO_EINVAL, "the kernel does not open with `const T i = (a) + "
                                           "(T)get_global_id(1); const T j = (b) + "
                                           "(T)get_global_id(0);` (the form of ocl_ndrange)");
    unsigned tif = tp->gj.e + 1;
    tp->glp = tif + 1;
    tp->grp = kevo_rtok_match(m, tp->glp);
    if (!kevo_rtok_is(m, tif, "if") || tp->grp == (unsigned)-1 ||
        !kevo_rtok_is(m, tp->grp + 1, "return") || !kevo_rtok_is(m, tp->grp + 2, ";"))
        return kevo_error_set(KEVO_EINVAL, "no `if (...) return;` guard after the work-item "
                                           "indices");
    if ((error = tile_guard_halves(tp, m)) < 0)
        return error;
    unsigned blk = tp->gi.s - 1;
    tp->blk_end = kevo_rtok_match(m, blk);
    if (!kevo_rtok_is(m, blk, "{") || tp->blk_end == (unsigned)-1)
        return kevo_error_set(KEVO_EINVAL, "the indices do not open a block");
    return 0;
}

/* The one loop of the block: innermost, simple, bounds of integer params,
 * only declarations before it and no stores in it. */
static int tile_loop(tile_plan *tp, const kevo_recipe_model *m)
{
    int error = 0, nloops = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    char why[300];
    tp->k = -1;
    for (size_t k = 0; k < m->n_loop; k++)
        if (m->loop[k].parent < 0 && m->loop[k].t_for > tp->grp &&
            m->loop[k].t_end <= tp->blk_end) {
            tp->k = (int)k;
            nloops++;
        }
    if (nloops != 1)
        return kevo_error_set(KEVO_EINVAL, "the block holds %d loops; it applies to one loop "
                                           "along k (a matrix product's dot product)",
                              nloops);
    const kevo_rloop *K = &m->loop[tp->k];
    if (!K->simple || K->cond_op != KEVO_COND_LT || K->n_children != 0 || K->early_exit)
        return kevo_error_set(KEVO_EINVAL, "loop at line %u is not `for (T k = a; k < b; k++)` "
                                           "without inner loops",
                              K->line);
    if (!size_expr_ok(m, K->t_lb0, K->t_lb1, why, sizeof(why)) ||
        !size_expr_ok(m, K->t_ub0, K->t_ub1, why, sizeof(why)))
        return kevo_error_set(KEVO_EINVAL, "loop at line %u: %s", K->line, why);
    /* before the loop: declarations only (they run on clamped indices) */
    if ((error = kevo_recipe_writes(&w, &nw, m, tp->grp + 3, K->t_for)) < 0)
        goto done;
    if (nw) {
        error = kevo_error_set(KEVO_EINVAL, "statements before the loop write (line %u)",
                               kevo_recipe_line(m, m->tok[tp->grp + 3].start));
        goto done;
    }
    free(w);
    w = NULL;
    if ((error = kevo_recipe_writes(&w, &nw, m, K->t_body, K->t_end)) < 0)
        goto done;
    for (size_t i = 0; i < nw && error == 0; i++)
        if (w[i].kind != KEVO_WRITE_SCALAR)
            error = kevo_error_set(KEVO_EINVAL, "the loop at line %u stores to memory", K->line);
done:
    free(w);
    return error;
}

/* The reads of the loop: one operand indexed by (i, k), one by (k, j), of
 * one element type. */
static int tile_operands(tile_plan *tp, const kevo_recipe_model *m)
{
    const kevo_rloop *K = &m->loop[tp->k];
    int nread = 0, vi = tp->gi.var, vj = tp->gj.var;
    for (unsigned t = K->t_body; t + 1 < K->t_end; t++) {
        int v = m->tok[t].var;
        if (v < 0 || m->var[v].vtype != KEVO_VTYPE_POINTER || !kevo_rtok_is(m, t + 1, "["))
            continue;
        unsigned rb = kevo_rtok_match(m, t + 1);
        if (rb == (unsigned)-1)
            break;
        bool ui = kevo_recipe_uses_var(m, t + 2, rb, vi);
        bool uj = kevo_recipe_uses_var(m, t + 2, rb, vj);
        bool uk = kevo_recipe_uses_var(m, t + 2, rb, K->var);
        int slot = ui && !uj && uk ? 0 : uj && !ui && uk ? 1 : -1;
        if (slot < 0 || tp->rd[slot].t1 || !m->var[v].is_param)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: `%s[...]` is not one of the two operands of a "
                                  "matrix product (one indexed by %s and %s, one by %s and %s)",
                                  kevo_recipe_line(m, m->tok[t].start), m->var[v].name,
                                  m->var[vi].name, m->var[K->var].name, m->var[K->var].name,
                                  m->var[vj].name);
        tp->rd[slot] = (operand_read){t, rb + 1, v};
        nread++;
        t = rb;
    }
    if (nread != 2)
        return kevo_error_set(KEVO_EINVAL, "the loop at line %u does not read both operands of "
                                           "a matrix product",
                              K->line);
    const char *ta = pointee(m, tp->rd[0].var), *tb = pointee(m, tp->rd[1].var);
    if (!ta || !tb || strcmp(ta, tb) != 0)
        return kevo_error_set(KEVO_EINVAL, "the operands are not both float or both double");
    tp->type = ta;
    return 0;
}

static void tile_fresh_names(tile_names *n, const kevo_recipe_model *m)
{
    char *const bufs[] = {n->ri, n->rj, n->in, n->li, n->lj, n->ta, n->tb, n->k0, n->kk};
    static const char *const bases[] = {"kv_ri", "kv_rj", "kv_in", "kv_li", "kv_lj",
                                        "kv_ta", "kv_tb", "kv_k0", "kv_kk"};
    char taken[9][64];
    for (size_t i = 0; i < 9; i++) {
        kevo_recipe_fresh_name(bufs[i], 64, m, bases[i], "", taken, i);
        snprintf(taken[i], 64, "%s", bufs[i]);
    }
}

/* Raw indices, the in-range flag, clamped indices, local indices: what
 * replaces the indices and the guard. */
static void tile_emit_indices(kevo_buf *b, const kevo_recipe_model *m, const tile_plan *tp,
                              const tile_names *n)
{
    const gid_decl *gi = &tp->gi, *gj = &tp->gj;
    kevo_buf ty = {0};
    tokens_text(&ty, m, gi->ty0, gi->ty1, false);
    const char *t = kevo_buf_cstr(&ty);
    kevo_buf_printf(b, "const %s %s = ", t, n->ri);
    tokens_text(b, m, gi->in0, gi->in1, false);
    kevo_buf_printf(b, ";\n        const %s %s = ", t, n->rj);
    tokens_text(b, m, gj->in0, gj->in1, false);
    kevo_buf_printf(b, ";\n        const int %s = !", n->in);
    tokens_renamed(b, m, tp->glp, tp->grp + 1, gi->var, n->ri, gj->var, n->rj);
    kevo_buf_printf(b, ";\n        /* a work-item past an edge loads from the first row or "
                       "column there and stores nothing */\n");
    kevo_buf_printf(b, "        const %s %s = ", t, m->var[gi->var].name);
    tokens_renamed(b, m, tp->part[0][0], tp->part[0][1], gi->var, n->ri, -1, NULL);
    kevo_buf_printf(b, " ? (");
    tokens_text(b, m, gi->lb0, gi->lb1, false);
    kevo_buf_printf(b, ") : %s;\n        const %s %s = ", n->ri, t, m->var[gj->var].name);
    tokens_renamed(b, m, tp->part[1][0], tp->part[1][1], gj->var, n->rj, -1, NULL);
    kevo_buf_printf(b, " ? (");
    tokens_text(b, m, gj->lb0, gj->lb1, false);
    kevo_buf_printf(b, ") : %s", n->rj);
    kevo_buf_printf(b, ";\n        const int %s = (int)get_local_id(1), %s = (int)get_local_id(0);",
                    n->li, n->lj);
    kevo_buf_free(&ty);
}

/* The loop body with the operand reads turned into tile reads. */
static void tile_emit_body(kevo_buf *body, const kevo_recipe_model *m, const tile_plan *tp,
                           const tile_names *n)
{
    const kevo_rloop *K = &m->loop[tp->k];
    for (unsigned t = K->t_body; t < K->t_end; t++) {
        size_t len;
        const char *p = kevo_rtok_text(m, t, &len);
        if (m->tok[t].kind == KEVO_CTOK_COMMENT)
            continue;
        if (t > K->t_body && m->tok[t].start > m->tok[t - 1].end)
            kevo_buf_puts(body, " ");
        if (t == tp->rd[0].t0) {
            kevo_buf_printf(body, "%s[%s][%s]", n->ta, n->li, n->kk);
            t = tp->rd[0].t1 - 1;
        } else if (t == tp->rd[1].t0) {
            kevo_buf_printf(body, "%s[%s][%s]", n->tb, n->kk, n->lj);
            t = tp->rd[1].t1 - 1;
        } else {
            kevo_buf_put(body, p, len);
        }
    }
}

/* The loop along k, one tile at a time: stage both tiles, barrier, the
 * dot product over the tile, barrier; then the edge work-items leave. */
static void tile_emit_loop(kevo_buf *b, const kevo_recipe_model *m, const tile_plan *tp,
                           const tile_names *n, long ts)
{
    const kevo_rloop *K = &m->loop[tp->k];
    const char *kv = m->var[K->var].name;
    kevo_buf kty = {0}, lbk = {0}, ubk = {0}, body = {0};
    tokens_text(&kty, m, K->t_type0, K->t_type1, false);
    tokens_text(&lbk, m, K->t_lb0, K->t_lb1, false);
    tokens_text(&ubk, m, K->t_ub0, K->t_ub1, false);
    tile_emit_body(&body, m, tp, n);
    const char *kt = kevo_buf_cstr(&kty), *ub = kevo_buf_cstr(&ubk);
    kevo_buf_printf(b, "for (%s %s = (%s); %s < (%s); %s += %ld) {\n", kt, n->k0,
                    kevo_buf_cstr(&lbk), n->k0, ub, n->k0, ts);
    kevo_buf_printf(b, "            {\n                const %s %s = %s + %s;\n", kt, kv, n->k0,
                    n->lj);
    kevo_buf_printf(b, "                %s[%s][%s] = %s < (%s) ? ", n->ta, n->li, n->lj, kv, ub);
    tokens_text(b, m, tp->rd[0].t0, tp->rd[0].t1, false);
    kevo_buf_printf(b, " : 0;\n            }\n");
    kevo_buf_printf(b, "            {\n                const %s %s = %s + %s;\n", kt, kv, n->k0,
                    n->li);
    kevo_buf_printf(b, "                %s[%s][%s] = %s < (%s) ? ", n->tb, n->li, n->lj, kv, ub);
    tokens_text(b, m, tp->rd[1].t0, tp->rd[1].t1, false);
    kevo_buf_printf(b, " : 0;\n            }\n            barrier(CLK_LOCAL_MEM_FENCE);\n");
    kevo_buf_printf(b, "            for (int %s = 0; %s < %ld; %s++) {\n", n->kk, n->kk, ts, n->kk);
    kevo_buf_printf(b, "                const %s %s = %s + %s;\n", kt, kv, n->k0, n->kk);
    kevo_buf_printf(b, "                if (%s < (%s))\n                    %s\n            }\n",
                    kv, ub, kevo_buf_cstr(&body));
    kevo_buf_printf(b, "            barrier(CLK_LOCAL_MEM_FENCE);\n        }\n");
    kevo_buf_printf(b, "        if (!%s)\n            return;", n->in);
    kevo_buf_free(&kty);
    kevo_buf_free(&lbk);
    kevo_buf_free(&ubk);
    kevo_buf_free(&body);
}

/* The three edits of the kernel: the tiles at kernel scope, the indices,
 * the loop. */
static int tile_edits(kevo_cparse_edits *e, const kevo_recipe_model *m, const tile_plan *tp,
                      long ts)
{
    int error = 0;
    tile_names n;
    kevo_buf b = {0};
    const kevo_rloop *K = &m->loop[tp->k];
    tile_fresh_names(&n, m);
    kevo_buf_printf(&b, "\n    __local %s %s[%ld][%ld];\n    __local %s %s[%ld][%ld];", tp->type,
                    n.ta, ts, ts + 1, tp->type, n.tb, ts, ts + 1);
    if ((error = kevo_cparse_edits_add(e, m->tok[m->t_fbody].end, m->tok[m->t_fbody].end, "%s",
                                       kevo_buf_cstr(&b))) < 0)
        goto done;
    kevo_buf_clear(&b);
    tile_emit_indices(&b, m, tp, &n);
    if ((error = kevo_cparse_edits_add(e, m->tok[tp->gi.s].start, m->tok[tp->grp + 2].end, "%s",
                                       kevo_buf_cstr(&b))) < 0)
        goto done;
    kevo_buf_clear(&b);
    tile_emit_loop(&b, m, tp, &n, ts);
    error = kevo_cparse_edits_add(e, m->tok[K->t_for].start, m->tok[K->t_end - 1].end, "%s",
                                  kevo_buf_cstr(&b));
done:
    kevo_buf_free(&b);
    return error;
}

int kevo_recipe_ocl_local_tile_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params)
{
    ocl_launch lv[MAX_LAUNCHES];
    size_t nl = 0;
    int error;
    long ts = params[0];
    tile_plan tp;
    kevo_cparse_edits e = {0};
    char *kern = NULL;

    memset(&tp, 0, sizeof(tp));
    if ((error = launches_parse(lv, &nl, source)) < 0 ||
        (error = tile_launch(&tp, m, lv, nl)) < 0 || (error = tile_indices(&tp, m)) < 0 || (error = tile_loop(&tp, m)) < 0 ||
        (error = tile_operands(&tp, m)) < 0 || (error = tile_edits(&e, m, &tp, ts)) < 0 ||
        (error = kevo_recipe_edits_apply(&kern, &e, source, strlen(source), 0,
                                         (unsigned)strlen(source))) < 0)
        goto done;
    for (int d = 0; d < 2; d++) {
        snprintf(lv[tp.li].global[d], sizeof(lv[tp.li].global[d]), "ROUND_UP(%.200s,%ld)",
                 tp.ex[d], ts);
        snprintf(lv[tp.li].local[d], sizeof(lv[tp.li].local[d]), "%ld", ts);
    }
    error = launches_replace(&out->whole, kern, lv, nl);
done:
    free(kern);
    kevo_cparse_edits_free(&e);
    return error;
}
