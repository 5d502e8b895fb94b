/*
 * recipe/recipe_scan.c - the `scan` recipe: a running sum or product (a
 * prefix scan, cumsum/cumprod) computed a vector of W floats at a time.
 * Written as a loop, each iteration waits for the last one's add (3-4
 * cycles a float); in a block of W lanes the prefix takes log2(W) shifted
 * adds in registers (scan_add: shuffles with zeros), then the running value
 * is added to every lane and the last lane carries on: about 6 cycles for
 * 16 floats, so the loop runs at the speed of its memory.
 *
 *   { T i_lo = a, i_hi = b, i_blk = i_lo;
 *     for (; i_hi - i_blk >= W; i_blk += W) {
 *         scan_vf i_v;                      lanes: the addend of each i
 *         for (lane) { const T i = i_blk + lane; i_v[lane] = E; }
 *         i_v = scan_add(i_v) + acc;        inclusive prefix, plus the carry
 *         for (lane) { const T i = i_blk + lane; y[e + i] = i_v[lane]; }
 *         acc = i_v[W - 1];
 *     }
 *     for (T i = i_blk; i < i_hi; i++) <the body as written>
 *   }
 *
 * The forms: `acc += E;` or `acc *= E;`, then `y[e + i] = acc;`
 * (inclusive), or the store first (exclusive: the lanes shifted up one, the carry in lane
 * 0: scan_shift1). A loop running down (`for (T i = b - 1; i >= a; i--)`,
 * a reverse cumsum) takes blocks from the top and the suffix form
 * (scan_add_down, scan_shift1_down). The sums are reassociated (a tree of
 * W lanes, then the carry), as -ffast-math or a vector reduction would:
 * the result differs from the loop's in the last bits.
 * scan_vf and the helpers are defined above the kernel, once, for the
 * widest vector the target has (64, 32 or 16 bytes), with
 * __builtin_shuffle (GCC, which builds C kernels) or
 * __builtin_shufflevector (clang, which kevo's checks parse with).
 *
 * Checks: an innermost loop `for (T i = a; i < b; i++)` (or `<=`), or `for
 * (T i = b; i >= a; i--)` (or `>`), not collapsed, no pragma, no
 * preprocessor line, no break, continue, return or goto, bounds that read
 * no memory; its body is exactly two statements: the update of a float
 * scalar `acc` declared outside the loop (`acc += E;` or `acc *= E;`, not
 * under an `if`: update_form), and the store `y[e + i] = acc;`, in either
 * order; y a float array or pointer, its subscript a sum with the term
 * `+ i` and others that read no memory; E assigns nothing, calls nothing,
 * and names neither acc nor any pointer into y's parameter.
 *
 * Must not: change anything outside the loop statement other than adding
 * the helpers above the kernel once.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The helpers, for lanes W: shifts by 1, 2, 4, ... with a fill vector. */
static int put_shuffle(kevo_buf *b, bool clang, int w, const char *v, const char *fill, int shift,
                       bool down)
{
    int error = clang ? kevo_buf_printf(b, "__builtin_shufflevector(%s, %s", v, fill)
                      : kevo_buf_printf(b, "__builtin_shuffle(%s, %s, (scan_vi){", v, fill);
    for (int l = 0; l < w && error == 0; l++) {
        /* lane l takes v[l - shift] (up) or v[l + shift] (down), else fill[l] */
        int from = down ? (l + shift < w ? l + shift : w + l) : (l >= shift ? l - shift : w + l);
        error = clang ? kevo_buf_printf(b, ", %d", from)
                      : kevo_buf_printf(b, "%s%d", l ? ", " : "", from);
    }
    if (error == 0)
        error = kevo_buf_puts(b, clang ? ")" : "})");
    return error;
}

static int put_helpers(kevo_buf *b, bool clang, int w)
{
    int error = 0;
    const char *ops[2] = {"add", "mul"};
    const char *sym[2] = {"+", "*"};
    const char *id[2] = {"0.0f", "1.0f"};
    for (int down = 0; down < 2 && error == 0; down++)
        for (int o = 0; o < 2 && error == 0; o++) {
            error = kevo_buf_printf(b,
                                    "static inline scan_vf scan_%s%s(scan_vf v)\n{\n"
                                    "    const scan_vf fill = (scan_vf){0} + %s;\n",
                                    ops[o], down ? "_down" : "", id[o]);
            for (int s = 1; s < w && error == 0; s *= 2) {
                error = kevo_buf_printf(b, "    v %s= ", sym[o]);
                if (error == 0)
                    error = put_shuffle(b, clang, w, "v", "fill", s, down);
                if (error == 0)
                    error = kevo_buf_puts(b, ";\n");
            }
            if (error == 0)
                error = kevo_buf_puts(b, "    return v;\n}\n");
        }
    for (int down = 0; down < 2 && error == 0; down++) {
        error = kevo_buf_printf(b,
                                "static inline scan_vf scan_shift1%s(scan_vf v, float first)\n{\n"
                                "    const scan_vf fill = (scan_vf){0} + first;\n"
                                "    return ",
                                down ? "_down" : "");
        if (error == 0)
            error = put_shuffle(b, clang, w, "v", "fill", 1, down);
        if (error == 0)
            error = kevo_buf_puts(b, ";\n}\n");
    }
    return error;
}

/* Above the kernel, once. */
static int put_prelude(kevo_buf *b)
{
    static const int widths[3] = {16, 8, 4};
    static const char *const conds[3] = {"#if __BIGGEST_ALIGNMENT__ >= 64\n",
                                         "#elif __BIGGEST_ALIGNMENT__ >= 32\n", "#else\n"};
    int error = kevo_buf_puts(
        b, "/* scan recipe: scan_vf holds the widest vector of floats the target has;\n"
           " * scan_add/scan_mul give its inclusive prefix sums/products, the _down forms\n"
           " * its suffix ones; scan_shift1 moves it up a lane (first in lane 0), _down\n"
           " * down a lane (first in the last lane) */\n");
    for (int k = 0; k < 3 && error == 0; k++) {
        error = kevo_buf_printf(b,
                                "%stypedef float scan_vf __attribute__((vector_size(%d), "
                                "aligned(4), may_alias));\n"
                                "typedef int scan_vi __attribute__((vector_size(%d)));\n"
                                "#if defined(__clang__)\n",
                                conds[k], widths[k] * 4, widths[k] * 4);
        if (error == 0)
            error = put_helpers(b, true, widths[k]);
        if (error == 0)
            error = kevo_buf_puts(b, "#else\n");
        if (error == 0)
            error = put_helpers(b, false, widths[k]);
        if (error == 0)
            error = kevo_buf_puts(b, "#endif\n");
    }
    if (error == 0)
        error = kevo_buf_puts(b, "#endif\n");
    return error;
}

typedef struct scan_loop {
    int l;
    bool down;       /* the loop runs down: i--, test >= or > */
    bool exclusive;  /* the store comes before the update */
    bool product;    /* acc *= E */
    int acc;         /* the running variable */
    unsigned u0;     /* the update statement's first token */
    unsigned e0, e1; /* E */
    unsigned s0;     /* the store statement `y[...] = acc;`: its first token */
    unsigned t_acc;  /* the store's `acc` token */
} scan_loop;

/* Whether [a,b) assigns, increments, calls or names variable `acc` or a
 * pointer from parameter `root` (y's): then it is no addend. */
static bool addend_ok(const kevo_recipe_model *m, unsigned a, unsigned b, int acc, int root)
{
    for (unsigned t = a; t < b; t++) {
        if (kevo_rtok_assigns(m, t, true))
            return false;
        int v = m->tok[t].var;
        if (v == acc)
            return false;
        if (v >= 0 && root >= 0 &&
            (m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY) &&
            kevo_recipe_root_param(m, v) == root)
            return false;
        if (m->tok[t].kind == KEVO_CTOK_IDENT && v < 0 && t + 1 < b && kevo_rtok_is(m, t + 1, "("))
            return false; /* a call */
    }
    return true;
}

/* The statements of loop L's body at its top level: [starts[k], ends[k])
 * each, ends at the `;` included; at most max. Returns the count, or -1 when
 * the body holds a statement kevo does not take (a block, a declaration
 * list it cannot split, ...). */
static int statements(const kevo_recipe_model *m, const kevo_rloop *L, unsigned *starts,
                      unsigned *ends, int max)
{
    unsigned t = L->body_compound ? L->t_body + 1 : L->t_body;
    unsigned end = L->body_compound ? L->t_end - 1 : L->t_end;
    int n = 0;
    while (t < end) {
        if (n == max)
            return -1;
        unsigned s = t;
        if (kevo_rtok_is(m, t, "if")) {
            unsigned rp = kevo_rtok_match(m, t + 1);
            if (!kevo_rtok_is(m, t + 1, "(") || rp == (unsigned)-1 || rp + 1 >= end)
                return -1;
            t = rp + 1;
        }
        if (kevo_rtok_is(m, t, "{") || kevo_rtok_is(m, t, "if") || kevo_rtok_is(m, t, "for") ||
            kevo_rtok_is(m, t, "while") || kevo_rtok_is(m, t, "do") || kevo_rtok_is(m, t, "switch"))
            return -1;
        unsigned e = kevo_recipe_expr_end(m, t, end);
        if (e >= end || !kevo_rtok_is(m, e, ";"))
            return -1;
        if (e + 1 < end && kevo_rtok_is(m, e + 1, "else"))
            return -1;
        starts[n] = s;
        ends[n] = e + 1;
        n++;
        t = e + 1;
    }
    return n;
}

/* Whether statement [a, b) is the update `acc op= E;`: fills s. An update
 * under `if (C)` is not taken: its addend's loads are conditional, and GCC
 * 12 leaves conditional loads in a block of lanes scalar (a masked cumsum
 * read 0.93-0.97x with them as `C ? E : 0`; evaluating E where C is false
 * could read what the loop never reads). */
static bool update_form(const kevo_recipe_model *m, unsigned a, unsigned b, scan_loop *s)
{
    unsigned t = a;
    int v = m->tok[t].var;
    if (v < 0 || m->var[v].vtype != KEVO_VTYPE_FLOAT || !m->var[v].is_f32 || t + 2 >= b)
        return false;
    if (kevo_rtok_is(m, t + 1, "+="))
        s->product = false;
    else if (kevo_rtok_is(m, t + 1, "*="))
        s->product = true;
    else
        return false;
    s->acc = v;
    s->u0 = a;
    s->e0 = t + 2;
    s->e1 = b - 1;
    return true;
}

/* Whether statement [a, b) is the store `y[...] = acc;`: fills the store. */
static bool store_form(const kevo_recipe_model *m, unsigned a, unsigned b, int acc, unsigned *lb,
                       unsigned *rb)
{
    if (m->tok[a].var < 0 || !kevo_rtok_is(m, a + 1, "["))
        return false;
    unsigned r = kevo_rtok_match(m, a + 1);
    if (r == (unsigned)-1 || r + 4 != b || !kevo_rtok_is(m, r + 1, "=") ||
        m->tok[r + 2].var != acc || !kevo_rtok_is(m, r + 3, ";"))
        return false;
    *lb = a + 1;
    *rb = r;
    return true;
}

/* Whether loop L is the remainder of a scan: the block it lies in names
 * scan_vf before it (the blocks this recipe wrote). */
static bool after_blocks(const kevo_recipe_model *m, const kevo_rloop *L)
{
    int depth = 0;
    for (unsigned t = L->t_for; t-- > m->t_fbody;) {
        if (kevo_rtok_is(m, t, "}"))
            depth++;
        else if (kevo_rtok_is(m, t, "{") && depth-- == 0)
            return false; /* the enclosing block's start */
        else if (depth == 0 && m->tok[t].kind == KEVO_CTOK_IDENT) {
            size_t n;
            const char *w = kevo_rtok_text(m, t, &n);
            if (n == 7 && !memcmp(w, "scan_vf", 7))
                return true;
        }
    }
    return false;
}

static bool scan_check(const kevo_recipe_model *m, int l, scan_loop *s, char *why, size_t wl)
{
    unsigned lb = 0, rb = 0; /* the store's subscript brackets */
    const kevo_rloop *L = &m->loop[l];
    memset(s, 0, sizeof(*s));
    s->l = l;
    if (L->n_children > 0) {
        snprintf(why, wl, "the loop at line %u holds other loops", L->line);
        return false;
    }
    bool up = L->simple;
    bool down = L->canonical && L->declared && L->step == -1 &&
                (L->cond_op == KEVO_COND_GE || L->cond_op == KEVO_COND_GT);
    if (!up && !down) {
        snprintf(why, wl,
                 "the loop at line %u is neither `for (T i = a; i < b; i++)` nor `for (T i = "
                 "b; i >= a; i--)`",
                 L->line);
        return false;
    }
    s->down = down;
    if (after_blocks(m, L)) {
        snprintf(why, wl,
                 "the loop at line %u runs the iterations a scan's blocks left (scanned "
                 "already)",
                 L->line);
        return false;
    }
    if (m->var[L->var].vtype != KEVO_VTYPE_INT) {
        snprintf(why, wl, "the variable of the loop at line %u is not an integer", L->line);
        return false;
    }
    int into = kevo_recipe_collapsed_into(m, l);
    if (into >= 0 || L->n_pragmas > 0) {
        snprintf(why, wl, "the loop at line %u carries a pragma (or is collapsed into one)",
                 L->line);
        return false;
    }
    for (size_t d = 0; d < m->n_dir; d++)
        if (m->dir[d].start > m->tok[L->t_for].start &&
            m->dir[d].start < m->tok[L->t_end - 1].end) {
            snprintf(why, wl, "the loop at line %u holds a preprocessor line", L->line);
            return false;
        }
    static const char *const exits[] = {"break", "continue", "return", "goto"};
    for (unsigned t = L->t_body; t < L->t_end; t++)
        for (size_t k = 0; k < sizeof(exits) / sizeof(*exits); k++)
            if (kevo_rtok_is(m, t, exits[k])) {
                snprintf(why, wl, "the loop at line %u has '%s'", L->line, exits[k]);
                return false;
            }
    if (kevo_recipe__reads_memory(m, L->t_lb0, L->t_lb1) ||
        kevo_recipe__reads_memory(m, L->t_ub0, L->t_ub1)) {
        snprintf(why, wl, "the bounds of the loop at line %u read memory or call", L->line);
        return false;
    }
    unsigned st[3], en[3];
    int n = statements(m, L, st, en, 3);
    if (n != 2) {
        snprintf(why, wl,
                 "the body of the loop at line %u is not two statements, `acc += e;` (or *=, "
                 "under an `if`) and `y[...] = acc;`",
                 L->line);
        return false;
    }
    int u = -1;
    for (int k = 0; k < 2 && u < 0; k++)
        if (update_form(m, st[k], en[k], s))
            u = k;
    if (u < 0 || !store_form(m, st[1 - u], en[1 - u], s->acc, &lb, &rb)) {
        snprintf(why, wl,
                 "the loop at line %u does not update a float `acc += e;` (or *=) and store "
                 "`y[...] = acc;`",
                 L->line);
        return false;
    }
    s->exclusive = u == 1;
    s->s0 = st[1 - u];
    s->t_acc = rb + 2;
    unsigned line = kevo_recipe_line(m, m->tok[s->s0].start);
    if (kevo_recipe_declared_in(m, s->acc, L->t_for, L->t_end)) {
        snprintf(why, wl, "'%s' is declared in the loop at line %u", m->var[s->acc].name, L->line);
        return false;
    }
    const kevo_rvar *Y = &m->var[m->tok[s->s0].var];
    if (!Y->elem_f32 || Y->elem_const ||
        (Y->vtype != KEVO_VTYPE_POINTER && Y->vtype != KEVO_VTYPE_ARRAY)) {
        snprintf(why, wl, "the store at line %u is not into a float array", line);
        return false;
    }
    int root = kevo_recipe_root_param(m, m->tok[s->s0].var);
    if (root < 0) {
        snprintf(why, wl, "the store at line %u is through '%s', whose parameter kevo cannot tell",
                 line, Y->name);
        return false;
    }
    if (!kevo_recipe__unit_stride(m, lb + 1, rb, L->var, why, wl, line))
        return false;
    if (kevo_recipe_uses_var(m, lb + 1, rb, s->acc)) {
        snprintf(why, wl, "the store index at line %u uses '%s'", line, m->var[s->acc].name);
        return false;
    }
    if (!addend_ok(m, s->e0, s->e1, s->acc, root)) {
        snprintf(why, wl,
                 "the update at line %u assigns, calls, or reads '%s' or what the loop stores "
                 "to",
                 kevo_recipe_line(m, m->tok[s->u0].start), m->var[s->acc].name);
        return false;
    }
    return true;
}

static int rewrite(kevo_cparse_edits *e, const kevo_recipe_model *m, const scan_loop *s)
{
    const kevo_rloop *L = &m->loop[s->l];
    const kevo_rvar *iv = &m->var[L->var];
    const char *acc = m->var[s->acc].name;
    unsigned from = m->tok[L->t_for].start;
    if (L->at_line_start)
        from = kevo_recipe_line_begin(m, from);
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    static const char *const suffix[] = {"_lo", "_hi", "_blk", "_v", "_lane", "_out"};
    char name[6][64];
    for (size_t k = 0; k < 6; k++)
        kevo_recipe_fresh_name(name[k], sizeof name[k], m, iv->name, suffix[k], name, k);
    const char *lo = name[0], *hi = name[1], *blk = name[2], *vv = name[3], *lane = name[4],
               *vo = name[5];
    unsigned t0 = m->tok[L->t_type0].start, t1 = m->tok[L->t_type1 - 1].end;
    int tl = (int)(t1 - t0);
    const char *T = m->src + t0;
    const char *W = "(int)(sizeof(scan_vf) / sizeof(float))";
    const char *dn = s->down ? "_down" : "";
    kevo_buf b = {0};
    int error = 0;
#define P(...)                                                                                     \
    do {                                                                                           \
        if (error == 0)                                                                            \
            error = kevo_buf_printf(&b, __VA_ARGS__);                                              \
    } while (0)
    const char *I = ind;
    int n = (int)il;
    P("%.*s{\n", L->at_line_start ? n : 0, I);
    P("%.*s    /* scan: a vector of floats a step, the running %s in registers (scan_%s%s: "
      "above the kernel) */\n",
      n, I, s->product ? "product" : "sum", s->product ? "mul" : "add", dn);
    /* the range [lo, hi) whatever the direction; blocks from its far end
     * when the loop runs down */
    unsigned lb0 = m->tok[L->t_lb0].start, lb1 = m->tok[L->t_lb1 - 1].end;
    unsigned ub0 = m->tok[L->t_ub0].start, ub1 = m->tok[L->t_ub1 - 1].end;
    if (!s->down) {
        P("%.*s    %.*s %s = %.*s, %s = (%.*s)%s, %s = %s;\n", n, I, tl, T, lo, (int)(lb1 - lb0),
          m->src + lb0, hi, (int)(ub1 - ub0), m->src + ub0,
          L->cond_op == KEVO_COND_LE ? " + 1" : "", blk, lo);
        P("%.*s    for (; %s - %s >= %s; %s += %s) {\n", n, I, hi, blk, W, blk, W);
    } else {
        /* for (T i = a; i >= b; i--): i runs from a down to b (or b + 1) */
        P("%.*s    %.*s %s = (%.*s)%s, %s = (%.*s) + 1, %s = %s;\n", n, I, tl, T, lo,
          (int)(ub1 - ub0), m->src + ub0, L->cond_op == KEVO_COND_GT ? " + 1" : "", hi,
          (int)(lb1 - lb0), m->src + lb0, blk, hi);
        P("%.*s    for (; %s - %s >= %s; %s -= %s) {\n", n, I, blk, lo, W, blk, W);
    }
    /* blk: the block's first element (up) or one past its last (down) */
    char at[200];
    if (s->down)
        snprintf(at, sizeof at, "%s - %s + %s", blk, W, lane);
    else
        snprintf(at, sizeof at, "%s + %s", blk, lane);
    P("%.*s        scan_vf %s;\n", n, I, vv);
    /* omp simd (-fopenmp-simd): the lanes one vector, whatever GCC's
     * unrolling makes of the loop first */
    P("%.*s        #pragma omp simd\n", n, I);
    P("%.*s        for (int %s = 0; %s < %s; %s++) {\n", n, I, lane, lane, W, lane);
    P("%.*s            const %.*s %s = %s;\n", n, I, tl, T, iv->name, at);
    P("%.*s            %s[%s] = ", n, I, vv, lane);
    if (error == 0)
        error = kevo_rtok_put(&b, m, s->e0, s->e1);
    P(";\n");
    P("%.*s        }\n", n, I);
    P("%.*s        %s = scan_%s%s(%s) %s %s;\n", n, I, vv, s->product ? "mul" : "add", dn, vv,
      s->product ? "*" : "+", acc);
    const char *out = vv;
    char shifted[200];
    if (s->exclusive) {
        snprintf(shifted, sizeof shifted, "scan_shift1%s(%s, %s)", dn, vv, acc);
        out = shifted;
    }
    P("%.*s        {\n%.*s            const scan_vf %s = %s;\n", n, I, n, I, vo, out);
    P("%.*s            #pragma omp simd\n", n, I);
    P("%.*s            for (int %s = 0; %s < %s; %s++) {\n", n, I, lane, lane, W, lane);
    P("%.*s                const %.*s %s = %s;\n%.*s                ", n, I, tl, T, iv->name, at, n,
      I);
    if (error == 0)
        error = kevo_rtok_put(&b, m, s->s0, s->t_acc);
    P(" %s[%s];\n", vo, lane);
    P("%.*s            }\n%.*s        }\n", n, I, n, I);
    P("%.*s        %s = %s[%s];\n", n, I, acc, vv,
      s->down ? "0" : "(int)(sizeof(scan_vf) / sizeof(float)) - 1");
    P("%.*s    }\n", n, I);
    /* the rest as written */
    unsigned body0 = m->tok[L->t_body].start, body1 = m->tok[L->t_end - 1].end;
    if (!s->down)
        P("%.*s    for (%.*s %s = %s; %s < %s; %s++)\n%.*s        %.*s\n", n, I, tl, T, iv->name,
          blk, iv->name, hi, iv->name, n, I, (int)(body1 - body0), m->src + body0);
    else
        P("%.*s    for (%.*s %s = %s - 1; %s >= %s; %s--)\n%.*s        %.*s\n", n, I, tl, T,
          iv->name, blk, iv->name, lo, iv->name, n, I, (int)(body1 - body0), m->src + body0);
    P("%.*s}", n, I);
#undef P
    unsigned to = m->tok[L->t_end - 1].end;
    if (error == 0)
        error = kevo_cparse_edits_add(e, from, to, "%s", kevo_buf_cstr(&b));
    kevo_buf_free(&b);
    return error;
}

int kevo_recipe_scan_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params)
{
    long only = params[0];
    int error = 0, applied = 0;
    kevo_buf reasons = {0}, pre = {0};
    char why[400];
    if (kevo_recipe_loop_index_check(m, only) < 0)
        return KEVO_EINVAL;
    if ((error = put_prelude(&pre)) < 0)
        goto done;
    bool have_prelude = strstr(source, kevo_buf_cstr(&pre)) != NULL;
    if (!have_prelude && (strstr(source, "scan_vf") || strstr(source, "scan_add") ||
                          strstr(source, "scan_mul") || strstr(source, "scan_shift1"))) {
        error = kevo_error_set(KEVO_EINVAL, "the source defines its own scan_vf or scan_ helpers");
        goto done;
    }
    for (size_t l = 0; l < m->n_loop; l++) {
        if (m->loop[l].n_children > 0 || (only >= 0 && (long)l != only))
            continue;
        scan_loop s;
        if (!scan_check(m, (int)l, &s, why, sizeof why)) {
            if ((reasons.len && (error = kevo_buf_puts(&reasons, "; ")) < 0) ||
                (error = kevo_buf_puts(&reasons, why)) < 0)
                goto done;
            continue;
        }
        if ((error = rewrite(&out->edits, m, &s)) < 0)
            goto done;
        applied++;
    }
    if (applied == 0) {
        error = kevo_error_set(KEVO_EINVAL, "no loop is a running sum or product to scan: %s",
                               reasons.len ? kevo_buf_cstr(&reasons) : "no innermost loop");
        goto done;
    }
    if ((error = kevo_recipe_edits_apply_with(&out->whole, &out->edits, source, m,
                                              kevo_buf_cstr(&pre))) < 0)
        goto done;
    out->cflags = "-fopenmp-simd";
done:
    kevo_buf_free(&reasons);
    kevo_buf_free(&pre);
    return error;
}
