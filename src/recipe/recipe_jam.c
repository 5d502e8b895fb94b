/*
 * recipe/recipe_jam.c - the unroll_jam recipe (register blocking):
 * unroll a simple loop `for (T i = a; i < b; i++)` by F and jam the copies
 * into its inner loops, giving each copy its own scalars (scalar
 * replacement: `acc` becomes `acc_0` ... `acc_{F-1}`, F accumulators that
 * the compiler can keep in registers), followed by a remainder loop that
 * runs the original body for the last (b - a) % F iterations:
 *
 *     for (T i = a; i < UB; i += F) { JAM(body) }
 *     for (T i = UB; i < b; i++) body
 *
 * with UB = a + (b > a ? (b - a) / F * F : 0), evaluated twice (the bounds
 * are checked to be invariant and free of side effects). JAM(body) walks the
 * body's statements in order: a `for` whose header uses neither i nor a
 * per-copy variable, and whose header variables are not written in the
 * nest, is kept once and its body jammed recursively; any other statement is
 * emitted F times, copy c with i replaced by `(i + c)` and the per-copy
 * variables renamed. This interleaves the iterations of i, which is legal
 * when they are independent: the recipe uses omp_parallel's checks (scalars
 * declared outside are reductions or privates, stores indexed by i, arrays
 * read only where written) and declines otherwise, naming line and variable.
 *
 * A loop stepping by a number of lanes, `for (T j = a; j < b; j += S)`
 * with S a literal or a constant of sizeof quotients (vectorize's vector
 * loop, S = W),
 * is jammed the same way with copy c at `(j + c * S)`, the jammed loop
 * stepping by `(F * S)` up to a + (b - a) / (F * S) * (F * S) and the
 * remainder loop by S: F vectors per row, F times the accumulators.
 *
 * With `tail` 1, the last (b - a) % F iterations run instead as one more
 * jammed block over the last F, [b - F, b), when the loop has that many:
 *
 *     if (UB < E && E - a >= F) { T i = E - F; JAM(body) } else
 *         for (T i = UB; i < E; i++) body
 *
 * The iterations before UB that the block runs again store what they
 * stored before. That is safe when the body's only effects are stores
 * that do not depend on what the loop stores (tail_ok()): no reduction
 * across iterations, every write an element `P[...] = e` of a kernel
 * parameter P that the body does not read and the kernel never aliases,
 * no call, no volatile. Where that does not hold, the remainder loop. The
 * point is the remainder's speed: one row of a register-blocked GEMM or
 * convolution runs one accumulator chain, at the FMA's latency (conv2d
 * at 46 rows, rows 6: the 4 left cost as much as a third of the 42).
 *
 * A loop carrying `#pragma omp parallel for` (what omp_parallel adds) keeps
 * it on the jammed loop (parallel_for_kept()): register blocking after the
 * rows were parallelised.
 *
 * Must not: add pragmas or flags (see recipe_omp.c), or edit outside the
 * rewritten loop (and the braces it may need around it).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most statements the jammed body may have. */
#define JAM_MAX_STMTS 400

typedef struct jam_ctx {
    const kevo_recipe_model *m;
    const kevo_rloop *L;
    long factor;
    bool *renamed;     /* per variable: gets a name per copy */
    char (*names)[64]; /* names[v * factor + c] for renamed variables */
    kevo_rwrite *w;    /* writes in L's body */
    size_t nw;
    kevo_buf *b;
    long n_stmts;   /* statements of the jammed body so far */
    char step[160]; /* "" for a step of 1, else S of `i += S` (sized_step), parenthesised */
    bool tail;      /* the last F iterations as one more jammed block (tail_ok()) */
} jam_ctx;

#define SRC_TEXT(m, a, b)                                                                          \
    (int)((m)->tok[(b)-1].end - (m)->tok[(a)].start), (m)->src + (m)->tok[(a)].start

/* The loop whose `for` is token t, or -1. */
static int loop_at(const kevo_recipe_model *m, unsigned t)
{
    for (size_t l = 0; l < m->n_loop; l++)
        if (m->loop[l].t_for == t)
            return (int)l;
    return -1;
}

/* One past the statement starting at token t (statements end by t1), or
 * (unsigned)-1 when kevo cannot read it. */
static unsigned stmt_end(const kevo_recipe_model *m, unsigned t, unsigned t1)
{
    if (t >= t1)
        return (unsigned)-1;
    if (kevo_rtok_is(m, t, "{")) {
        unsigned c = kevo_rtok_match(m, t);
        return c == (unsigned)-1 || c >= t1 ? (unsigned)-1 : c + 1;
    }
    if (kevo_rtok_is(m, t, "for")) {
        int l = loop_at(m, t);
        if (l >= 0)
            return m->loop[l].t_end <= t1 ? m->loop[l].t_end : (unsigned)-1;
    }
    if (kevo_rtok_is(m, t, "for") || kevo_rtok_is(m, t, "while") || kevo_rtok_is(m, t, "switch") ||
        kevo_rtok_is(m, t, "if")) {
        if (!kevo_rtok_is(m, t + 1, "("))
            return (unsigned)-1;
        unsigned rp = kevo_rtok_match(m, t + 1);
        if (rp == (unsigned)-1 || rp + 1 >= t1)
            return (unsigned)-1;
        unsigned e = stmt_end(m, rp + 1, t1);
        if (e != (unsigned)-1 && kevo_rtok_is(m, t, "if") && e < t1 && kevo_rtok_is(m, e, "else"))
            e = stmt_end(m, e + 1, t1);
        return e;
    }
    if (kevo_rtok_is(m, t, "do")) {
        unsigned e = stmt_end(m, t + 1, t1);
        if (e == (unsigned)-1 || e + 1 >= t1 || !kevo_rtok_is(m, e, "while") ||
            !kevo_rtok_is(m, e + 1, "("))
            return (unsigned)-1;
        unsigned rp = kevo_rtok_match(m, e + 1);
        if (rp == (unsigned)-1 || rp + 1 >= t1 || !kevo_rtok_is(m, rp + 1, ";"))
            return (unsigned)-1;
        return rp + 2;
    }
    int depth = 0;
    for (unsigned k = t; k < t1; k++) {
        if (kevo_rtok_is(m, k, "(") || kevo_rtok_is(m, k, "[") || kevo_rtok_is(m, k, "{"))
            depth++;
        else if (kevo_rtok_is(m, k, ")") || kevo_rtok_is(m, k, "]") || kevo_rtok_is(m, k, "}")) {
            if (--depth < 0)
                return (unsigned)-1;
        } else if (depth == 0 && kevo_rtok_is(m, k, ";"))
            return k + 1;
    }
    return (unsigned)-1;
}

/* Statements (`;` outside parentheses) in [t0,t1). */
static long count_stmts(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    long n = 0;
    int depth = 0;
    for (unsigned t = t0; t < t1; t++) {
        if (kevo_rtok_is(m, t, "("))
            depth++;
        else if (kevo_rtok_is(m, t, ")"))
            depth--;
        else if (depth == 0 && kevo_rtok_is(m, t, ";"))
            n++;
    }
    return n > 0 ? n : 1;
}

/* Whether some `continue` in loop l's body belongs to l (or to a while/do
 * loop inside it, which kevo does not tell apart: counted against l). */
static unsigned continue_of(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    for (unsigned t = L->t_body; t < L->t_end; t++)
        if (kevo_rtok_is(m, t, "continue") && kevo_recipe_loop_of(m, t) == l)
            return t;
    return (unsigned)-1;
}

/* Whether inner loop k (inside L's body, reached through kept loops) can be
 * kept once with its body jammed. */
static bool keepable(const jam_ctx *x, int k)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *K = &m->loop[k];
    if (!K->canonical || K->early_exit || continue_of(m, k) != (unsigned)-1 ||
        (K->pragma_flags & KEVO_PRAGMA_OMP_ANY))
        return false;
    for (unsigned t = K->t_lparen; t <= K->t_rparen; t++) {
        int v = m->tok[t].var;
        if (v < 0)
            continue;
        if (v == x->L->var || x->renamed[v])
            return false;
        if (v == K->var)
            continue;
        for (size_t i = 0; i < x->nw; i++)
            if (x->w[i].var == v)
                return false;
    }
    return true;
}

/* Indentation for the statement at token t inside a block whose opener
 * (a loop header, a `{`) is token `opener`: its own line's, or the
 * opener's plus four spaces when it shares the opener's line. */
static void stmt_indent(const jam_ctx *x, unsigned t, unsigned opener, const char **p, int *n)
{
    const kevo_recipe_model *m = x->m;
    size_t len;
    if (kevo_recipe_line(m, m->tok[t].start) == kevo_recipe_line(m, m->tok[opener].start)) {
        *p = kevo_recipe_indent(m, m->tok[opener].start, &len);
        *n = -(int)len; /* negative: add four spaces */
        return;
    }
    *p = kevo_recipe_indent(m, m->tok[t].start, &len);
    *n = (int)len;
}

static void put_indent(kevo_buf *b, const char *p, int n)
{
    if (n < 0)
        kevo_buf_printf(b, "%.*s    ", -n, p);
    else
        kevo_buf_printf(b, "%.*s", n, p);
}

/* Copy c of tokens [s0,s1): the source text between tokens verbatim, the
 * induction variable as `(i + c)`, per-copy variables renamed. */
static void emit_copy(jam_ctx *x, unsigned s0, unsigned s1, long c)
{
    const kevo_recipe_model *m = x->m;
    unsigned at = m->tok[s0].start;
    for (unsigned t = s0; t < s1; t++) {
        const kevo_rtok *k = &m->tok[t];
        int v = k->var;
        if (v >= 0 && (v == x->L->var ? c > 0 : x->renamed[v])) {
            kevo_buf_put(x->b, m->src + at, k->start - at);
            if (v == x->L->var && x->step[0])
                kevo_buf_printf(x->b, "(%s + %ld * %s)", m->var[v].name, c, x->step);
            else if (v == x->L->var)
                kevo_buf_printf(x->b, "(%s + %ld)", m->var[v].name, c);
            else
                kevo_buf_puts(x->b, x->names[(size_t)v * (size_t)x->factor + (size_t)c]);
            at = k->end;
        }
    }
    kevo_buf_put(x->b, m->src + at, m->tok[s1 - 1].end - at);
}

/* The pragma lines attached to loop l, each on its own line. */
static void emit_pragmas(jam_ctx *x, int l)
{
    const kevo_recipe_model *m = x->m;
    for (int k = 0; k < m->loop[l].n_pragmas; k++) {
        const kevo_rdirective *d = &m->dir[m->loop[l].pragmas[k]];
        size_t len;
        const char *ind = kevo_recipe_indent(m, d->start, &len);
        kevo_buf_printf(x->b, "%.*s%.*s\n", (int)len, ind, (int)(d->end - d->start),
                        m->src + d->start);
    }
}

/* Whether the statement [s0,s1) declares per-copy variables that every copy
 * would give the same value and that nothing writes (`const float *b = B +
 * k * N;` in matmul): it is then emitted once, its variables keeping their
 * names. */
static bool invariant_decl(const jam_ctx *x, unsigned s0, unsigned s1)
{
    const kevo_recipe_model *m = x->m;
    bool declares = false;
    for (unsigned t = s0; t < s1; t++) {
        /* a call, a side effect or a volatile read happens once per copy */
        if ((kevo_rtok_is(m, t, "(") && t > s0 && m->tok[t - 1].kind == KEVO_CTOK_IDENT) ||
            kevo_rtok_is(m, t, "++") || kevo_rtok_is(m, t, "--") ||
            kevo_rtok_is(m, t, "volatile") ||
            (kevo_rtok_is(m, t, "=") && t > s0 && !m->tok[t - 1].is_decl &&
             !kevo_rtok_is(m, t - 1, "]")))
            return false;
        int v = m->tok[t].var;
        if (v < 0)
            continue;
        if (v == x->L->var)
            return false;
        if (!x->renamed[v])
            continue;
        if (!kevo_recipe_declared_in(m, v, s0, s1))
            return false; /* uses another copy's variable */
        if (!m->tok[t].is_decl)
            continue;
        declares = true;
        for (size_t i = 0; i < x->nw; i++)
            if (x->w[i].var == v)
                return false;
        for (unsigned k = x->L->t_body; k < x->L->t_end; k++)
            if (m->tok[k].var == v && k > 0 && kevo_rtok_is(m, k - 1, "&"))
                return false;
    }
    return declares;
}

/* JAM of the statements in [t0,t1), a block opened by token `opener`. */
static int jam_block(jam_ctx *x, unsigned t0, unsigned t1, unsigned opener)
{
    const kevo_recipe_model *m = x->m;
    int error = 0;
    for (unsigned t = t0; t < t1;) {
        /* a comment between statements (split's note opening its block) is
         * not a statement: left out of the jammed body */
        if (kevo_rtok_comment(m, t)) {
            t++;
            continue;
        }
        unsigned e = stmt_end(m, t, t1);
        if (e == (unsigned)-1)
            return kevo_error_set(KEVO_EINVAL,
                                  "kevo cannot read the statement at line %u in the loop at line "
                                  "%u",
                                  kevo_recipe_line(m, m->tok[t].start), x->L->line);
        if (e == t + 1 && kevo_rtok_is(m, t, ";")) {
            t = e; /* empty statement */
            continue;
        }
        const char *ind;
        int n;
        stmt_indent(x, t, opener, &ind, &n);
        int l = kevo_rtok_is(m, t, "for") ? loop_at(m, t) : -1;
        if (l >= 0 && keepable(x, l)) {
            const kevo_rloop *K = &m->loop[l];
            emit_pragmas(x, l);
            put_indent(x->b, ind, n);
            kevo_buf_printf(x->b, "%.*s {\n", SRC_TEXT(m, K->t_for, K->t_rparen + 1));
            x->n_stmts++;
            if (K->body_compound)
                error = jam_block(x, K->t_body + 1, K->t_end - 1, K->t_body);
            else
                error = jam_block(x, K->t_body, K->t_end, K->t_for);
            if (error < 0)
                return error;
            put_indent(x->b, ind, n);
            kevo_buf_puts(x->b, "}\n");
        } else if (l < 0 && invariant_decl(x, t, e)) {
            for (unsigned k = t; k < e; k++)
                if (m->tok[k].is_decl && m->tok[k].var >= 0)
                    x->renamed[m->tok[k].var] = false;
            x->n_stmts++;
            put_indent(x->b, ind, n);
            emit_copy(x, t, e, 0);
            kevo_buf_puts(x->b, "\n");
        } else {
            x->n_stmts += x->factor * count_stmts(m, t, e);
            for (long c = 0; c < x->factor; c++) {
                if (l >= 0)
                    emit_pragmas(x, l);
                put_indent(x->b, ind, n);
                emit_copy(x, t, e, c);
                kevo_buf_puts(x->b, "\n");
            }
        }
        if (x->n_stmts > JAM_MAX_STMTS)
            return kevo_error_set(KEVO_EINVAL,
                                  "with factor %ld the jammed body of the loop at line %u would "
                                  "exceed %d statements: use a smaller factor",
                                  x->factor, x->L->line, JAM_MAX_STMTS);
        t = e;
    }
    return kevo_buf_error(x->b);
}

/* Bounds: invariant in the nest, free of side effects and calls. */
static int check_bounds(const jam_ctx *x)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *L = x->L;
    unsigned r[2][2] = {{L->t_lb0, L->t_lb1}, {L->t_ub0, L->t_ub1}};
    for (int k = 0; k < 2; k++)
        for (unsigned t = r[k][0]; t < r[k][1]; t++) {
            if (kevo_rtok_assigns(m, t, true)) {
                size_t n;
                const char *op = kevo_rtok_text(m, t, &n);
                return kevo_error_set(KEVO_EINVAL,
                                      "the bounds of the loop at line %u have a side effect "
                                      "('%.*s'): they are evaluated twice",
                                      L->line, (int)n, op);
            }
            if (kevo_rtok_is(m, t, "(") && t > r[k][0] && m->tok[t - 1].kind == KEVO_CTOK_IDENT) {
                size_t n;
                const char *p = kevo_rtok_text(m, t - 1, &n);
                return kevo_error_set(KEVO_EINVAL,
                                      "the bounds of the loop at line %u call '%.*s': they are "
                                      "evaluated twice and must be free of side effects",
                                      L->line, (int)n, p);
            }
            int v = m->tok[t].var;
            for (size_t i = 0; v >= 0 && i < x->nw; i++)
                if (x->w[i].var == v)
                    return kevo_error_set(
                        KEVO_EINVAL,
                        "'%s' in the bounds of the loop at line %u is written inside it (line %u)",
                        m->var[v].name, L->line, kevo_recipe_line(m, m->tok[x->w[i].t_op].start));
        }
    return 0;
}

/* Directives inside the body: only pragmas attached to loops, none OpenMP. */
static int check_directives(const kevo_recipe_model *m, const kevo_rloop *L)
{
    unsigned s0 = m->tok[L->t_body].start, s1 = m->tok[L->t_end - 1].end;
    for (size_t d = 0; d < m->n_dir; d++) {
        const kevo_rdirective *D = &m->dir[d];
        if (D->start < s0 || D->start >= s1)
            continue;
        unsigned line = kevo_recipe_line(m, D->start);
        int n = (int)(D->end - D->start);
        if (D->flags & KEVO_PRAGMA_OMP_ANY)
            return kevo_error_set(KEVO_EINVAL,
                                  "'%.*s' at line %u lies inside the loop at line %u: apply "
                                  "unroll_jam before pragma recipes",
                                  n, m->src + D->start, line, L->line);
        if (D->flags == 0 || !D->attached)
            return kevo_error_set(KEVO_EINVAL,
                                  "'%.*s' at line %u inside the loop at line %u is not a pragma on "
                                  "a loop: kevo does not copy it",
                                  n, m->src + D->start, line, L->line);
    }
    return 0;
}

static bool has_word_const(const char *p, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++)
        if (memcmp(p + i, "const", 5) == 0 && (i == 0 || p[i - 1] == ' ') &&
            (i + 5 == n || p[i + 5] == ' '))
            return true;
    return false;
}

/* Whether loop l's pragmas are one `#pragma omp parallel for` that stays
 * right for the jammed loop: no collapse (the loop below would no longer
 * be its whole body), no clause that speaks of the last iteration or of
 * the iteration order (lastprivate, linear, ordered). Its iterations are
 * independent (the checks below), so the jammed loop's are too, and the
 * remainder loop after it runs the last few serially. */
static bool parallel_for_kept(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    if (L->n_pragmas != 1 || L->pragma_flags != (KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR) ||
        kevo_recipe_pragma_collapse(m, L->pragmas[0]) != 1)
        return false;
    const kevo_rdirective *d = &m->dir[L->pragmas[0]];
    size_t n = d->end - d->start;
    char text[512];
    if (n >= sizeof(text))
        return false;
    memcpy(text, m->src + d->start, n);
    text[n] = '\0';
    return !strstr(text, "lastprivate") && !strstr(text, "linear") && !strstr(text, "ordered");
}

/* Everything that must hold for loop x->L, and the per-copy variables
 * (x->renamed). sc gets the loop's scalars: the privates among them that are
 * renamed are declared by the caller with __typeof__ for each copy. */
static int check_loop(jam_ctx *x, kevo_rscalars *sc)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *L = x->L;
    int l = (int)(L - m->loop);
    int error = 0;

    if (!L->simple && !L->strided && !L->sized_step)
        return kevo_error_set(KEVO_EINVAL, "%s", L->why);
    if (L->n_pragmas > 0 && !parallel_for_kept(m, l))
        return kevo_recipe_pragma_decline(m, "unroll_jam", l);
    int a = kevo_recipe_collapsed_into(m, l);
    if (a >= 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is collapsed into the omp loop at line %u: "
                              "apply unroll_jam before pragma recipes",
                              L->line, m->loop[a].line);
    char ee[96];
    if (L->early_exit)
        return kevo_error_set(KEVO_EINVAL, "%s", kevo_recipe_early_exit_why(ee, sizeof(ee), L));
    unsigned ct = continue_of(m, l);
    if (ct != (unsigned)-1)
        return kevo_error_set(KEVO_EINVAL,
                              "'continue' at line %u skips the rest of an iteration of the loop "
                              "at line %u: the jammed copies would be skipped with it",
                              kevo_recipe_line(m, m->tok[ct].start), L->line);
    unsigned ty0 = m->tok[L->t_type0].start, ty1 = m->tok[L->t_type1 - 1].end;
    if (has_word_const(m->src + ty0, ty1 - ty0))
        return kevo_error_set(KEVO_EINVAL, "the induction variable of the loop at line %u is const",
                              L->line);
    if ((error = check_directives(m, L)) < 0)
        return error;
    for (unsigned t = L->t_body; t < L->t_end; t++)
        if (kevo_rtok_is(m, t, "static"))
            return kevo_error_set(KEVO_EINVAL,
                                  "a static variable is declared at line %u inside the loop at "
                                  "line %u: its copies would not share it",
                                  kevo_recipe_line(m, m->tok[t].start), L->line);
    if ((error = check_bounds(x)) < 0)
        return error;
    /* omp_parallel's independence checks */
    if ((error = kevo_recipe_scalars(sc, m, L->t_body, L->t_end, L->t_end)) < 0 ||
        (error = kevo_recipe_stores_indexed(m, L->t_body, L->t_end, &L->var, 1)) < 0 ||
        (error = kevo_recipe_same_index(m, L->t_body, L->t_end)) < 0)
        return error;

    /* per-copy variables: declared in the body (not in an inner loop's
     * header: those are scoped to their loop), and the privates declared
     * outside that are not an inner loop's variable */
    for (size_t v = 0; v < m->n_var; v++) {
        if (!kevo_recipe_declared_in(m, (int)v, L->t_body, L->t_end))
            continue;
        bool in_header = false;
        for (size_t k = 0; k < m->n_loop && !in_header; k++) {
            const kevo_rloop *K = &m->loop[k];
            in_header = K->t_for > L->t_for && K->t_for < L->t_end &&
                        m->var[v].decl_off >= m->tok[K->t_lparen].start &&
                        m->var[v].decl_off < m->tok[K->t_rparen].start;
        }
        x->renamed[v] = !in_header;
    }
    for (size_t i = 0; i < sc->n_priv; i++) {
        int v = sc->priv[i];
        int iv_of = -1;
        for (size_t k = 0; k < m->n_loop; k++)
            if (m->loop[k].t_for > L->t_for && m->loop[k].t_for < L->t_end && m->loop[k].var == v)
                iv_of = (int)k;
        if (iv_of < 0) {
            x->renamed[v] = true;
            continue;
        }
        /* an inner loop's variable declared outside: used only in loops it drives */
        for (unsigned t = L->t_body; t < L->t_end; t++) {
            if (m->tok[t].var != v)
                continue;
            bool inside = false;
            for (size_t k = 0; k < m->n_loop && !inside; k++)
                inside = m->loop[k].var == v && m->loop[k].t_for > L->t_for &&
                         m->loop[k].t_lparen < t && t < m->loop[k].t_end;
            if (!inside)
                return kevo_error_set(KEVO_EINVAL,
                                      "'%s', the variable of the loop at line %u, is also used "
                                      "outside that loop at line %u",
                                      m->var[v].name, m->loop[iv_of].line,
                                      kevo_recipe_line(m, m->tok[t].start));
        }
    }
    return 0;
}

/* Whether the tokens of the kernel's body outside [t0,t1) name parameter P
 * only as `P[`, not after `&` (no copy or address of it: nothing aliases
 * its elements). */
static bool param_unaliased(const kevo_recipe_model *m, int P, unsigned t0, unsigned t1)
{
    unsigned fend = kevo_rtok_match(m, m->t_fbody);
    if (fend == (unsigned)-1)
        return false;
    for (unsigned t = m->t_fbody; t < fend; t++) {
        if (t >= t0 && t < t1)
            continue;
        if (m->tok[t].var == P &&
            (t + 1 >= fend || !kevo_rtok_is(m, t + 1, "[") || kevo_rtok_is(m, t - 1, "&")))
            return false;
    }
    return true;
}

/* Whether running iterations of x->L again, after they ran, changes
 * nothing but re-stores what they stored (the `tail` block): the loop
 * steps by 1, has no reduction, calls nothing, reads nothing volatile, and
 * writes only private scalars and elements `P[...] = e` of kernel
 * parameters P that appear in the body only as those stores' bases and
 * elsewhere in the kernel only subscripted. */
static bool tail_ok(const jam_ctx *x, const kevo_rscalars *sc)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *L = x->L;
    if (!L->simple || sc->n_red > 0)
        return false;
    for (unsigned t = L->t_body; t < L->t_end; t++)
        if ((kevo_rtok_is(m, t, "(") && m->tok[t - 1].kind == KEVO_CTOK_IDENT) ||
            kevo_rtok_is(m, t, "volatile") || kevo_rtok_is(m, t, "_Atomic") ||
            kevo_rtok_is(m, t, "asm") || kevo_rtok_is(m, t, "__asm__"))
            return false;
    for (size_t i = 0; i < x->nw; i++) {
        const kevo_rwrite *w = &x->w[i];
        if (w->kind == KEVO_WRITE_SCALAR)
            continue; /* check_loop: declared in the body, or a private */
        if (w->kind != KEVO_WRITE_ELEMENT || w->var < 0 || !m->var[w->var].is_param ||
            w->t_idx1 <= w->t_idx0 || !kevo_rtok_is(m, w->t_op, "=") ||
            !param_unaliased(m, w->var, L->t_body, L->t_end))
            return false;
        for (unsigned t = L->t_body; t < L->t_end; t++) {
            if (m->tok[t].var != w->var)
                continue;
            bool base = false;
            for (size_t k = 0; k < x->nw && !base; k++)
                base = x->w[k].kind == KEVO_WRITE_ELEMENT && t == x->w[k].t_lhs0;
            if (!base)
                return false;
        }
    }
    return true;
}

/* Whether loop l is worth jamming when picked automatically: it has an
 * inner loop or more than one statement. */
static bool worth_it(const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    if (L->n_children > 0)
        return true;
    return count_stmts(m, L->t_body, L->t_end) > 1;
}

/* The jammed body of x->L into x->b: the private copies' declarations,
 * then the statements (the loop's braces not included), from a fresh copy
 * of the per-copy flags `renamed` (jam_block clears those of invariant
 * declarations, and the tail block jams the body a second time). */
static int jam_body(jam_ctx *x, const kevo_rscalars *sc, const bool *renamed,
                    const char *indent, int ilen)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *L = x->L;
    memcpy(x->renamed, renamed, (m->n_var ? m->n_var : 1) * sizeof(*x->renamed));
    x->n_stmts = 0;
    for (size_t i = 0; i < sc->n_priv; i++) {
        int v = sc->priv[i];
        if (!x->renamed[v])
            continue;
        kevo_buf_printf(x->b, "%.*s    __typeof__(%s) ", ilen, indent, m->var[v].name);
        for (long c = 0; c < x->factor; c++)
            kevo_buf_printf(x->b, "%s%s", c ? ", " : "",
                            x->names[(size_t)v * (size_t)x->factor + (size_t)c]);
        kevo_buf_puts(x->b, ";\n");
    }
    if (L->body_compound)
        return jam_block(x, L->t_body + 1, L->t_end - 1, L->t_body);
    return jam_block(x, L->t_body, L->t_end, L->t_for);
}

/* Rewrite loop l into *out's edits, or decline. */
static int jam_loop(kevo_recipe_out *out, const kevo_recipe_model *m, int l, long factor,
                    bool tail)
{
    int error = 0;
    kevo_buf b = {0}, ub = {0}, e = {0}, a = {0};
    kevo_rscalars sc;
    jam_ctx x = {.m = m, .L = &m->loop[l], .factor = factor, .b = &b};
    const kevo_rloop *L = x.L;
    size_t n_taken = 0;
    bool *renamed = NULL;

    x.renamed = calloc(m->n_var ? m->n_var : 1, sizeof(*x.renamed));
    renamed = calloc(m->n_var ? m->n_var : 1, sizeof(*renamed));
    x.names = calloc((m->n_var ? m->n_var : 1) * (size_t)factor, sizeof(*x.names));
    if (!x.renamed || !renamed || !x.names) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if ((error = kevo_recipe_writes(&x.w, &x.nw, m, L->t_body, L->t_end)) < 0 ||
        (error = check_loop(&x, &sc)) < 0)
        goto done;
    x.tail = tail && tail_ok(&x, &sc);
    memcpy(renamed, x.renamed, (m->n_var ? m->n_var : 1) * sizeof(*renamed));
    /* a loop stepping by S lanes (vectorize's): the copies are i + c * S,
     * the jammed loop steps by F * S */
    if (!L->simple && L->strided)
        snprintf(x.step, sizeof(x.step), "%ld", L->step);
    else if (!L->simple) {
        int n = (int)(m->tok[L->t_step1 - 1].end - m->tok[L->t_step0].start);
        if (n + 3 > (int)sizeof(x.step)) {
            error =
                kevo_error_set(KEVO_EINVAL, "the step of the loop at line %u is too long", L->line);
            goto done;
        }
        snprintf(x.step, sizeof(x.step), "(%.*s)", n, m->src + m->tok[L->t_step0].start);
    }
    char fs[200]; /* F, or F * S */
    if (x.step[0])
        snprintf(fs, sizeof(fs), "(%ld * %s)", factor, x.step);
    else
        snprintf(fs, sizeof(fs), "%ld", factor);

    /* per-copy names, none clashing with the source or with each other */
    {
        char(*packed)[64] = calloc((m->n_var ? m->n_var : 1) * (size_t)factor, sizeof(*packed));
        if (!packed) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        for (size_t v = 0; v < m->n_var; v++) {
            if (!x.renamed[v])
                continue;
            for (long c = 0; c < factor; c++) {
                char suffix[24];
                snprintf(suffix, sizeof(suffix), "_%ld", c);
                char *name = x.names[v * (size_t)factor + (size_t)c];
                kevo_recipe_fresh_name(name, 64, m, m->var[v].name, suffix, packed, n_taken);
                snprintf(packed[n_taken++], 64, "%s", name);
            }
        }
        free(packed);
    }

    /* UB = a + (E > a ? (E - a) / F * F : 0), E the exclusive end */
    bool ub_single = L->t_ub1 == L->t_ub0 + 1, lb_single = L->t_lb1 == L->t_lb0 + 1;
    if (L->cond_op == KEVO_COND_LE)
        kevo_buf_printf(&e, "(%.*s + 1)", SRC_TEXT(m, L->t_ub0, L->t_ub1));
    else
        kevo_buf_printf(&e, ub_single ? "%.*s" : "(%.*s)", SRC_TEXT(m, L->t_ub0, L->t_ub1));
    const char *E = kevo_buf_cstr(&e);
    if (lb_single && kevo_rtok_is(m, L->t_lb0, "0"))
        kevo_buf_printf(&ub, "(%s > 0 ? %s / %s * %s : 0)", E, E, fs, fs);
    else {
        kevo_buf_printf(&a, lb_single ? "%.*s" : "(%.*s)", SRC_TEXT(m, L->t_lb0, L->t_lb1));
        const char *A = kevo_buf_cstr(&a);
        kevo_buf_printf(&ub, "(%s + (%s > %s ? (%s - %s) / %s * %s : 0))", A, E, A, E, A, fs, fs);
    }
    if ((error = kevo_buf_error(&e)) < 0 || (error = kevo_buf_error(&a)) < 0 ||
        (error = kevo_buf_error(&ub)) < 0)
        goto done;

    size_t ilen;
    const char *indent = kevo_recipe_indent(m, m->tok[L->t_for].start, &ilen);
    const char *iv = m->var[L->var].name;
    /* a loop that is the body of a `for (...)`, `if (...)`, `else` or `do`
     * without braces needs them now that it becomes two loops */
    unsigned prev = L->t_for > 0 ? L->t_for - 1 : 0;
    bool wrap =
        L->t_for > m->t_fbody && (kevo_rtok_is(m, prev, ")") || kevo_rtok_is(m, prev, "else") ||
                                  kevo_rtok_is(m, prev, "do"));

    kevo_buf_printf(&b, "for (%.*s %s = %.*s; %s < %s; %s += %s) {\n",
                    SRC_TEXT(m, L->t_type0, L->t_type1), iv, SRC_TEXT(m, L->t_lb0, L->t_lb1), iv,
                    kevo_buf_cstr(&ub), iv, fs);
    if ((error = jam_body(&x, &sc, renamed, indent, (int)ilen)) < 0)
        goto done;
    kevo_buf_printf(&b, "%.*s}\n%.*s", (int)ilen, indent, (int)ilen, indent);
    if (x.tail) {
        /* the last F iterations again, as one jammed block (tail_ok) */
        const char *UB = kevo_buf_cstr(&ub);
        if (lb_single && kevo_rtok_is(m, L->t_lb0, "0"))
            kevo_buf_printf(&b, "if (%s < %s && %s >= %s) {\n", UB, E, E, fs);
        else
            kevo_buf_printf(&b, "if (%s < %s && %s - %s >= %s) {\n", UB, E, E, kevo_buf_cstr(&a),
                            fs);
        kevo_buf_printf(&b, "%.*s    %.*s %s = %s - %s;\n", (int)ilen, indent,
                        SRC_TEXT(m, L->t_type0, L->t_type1), iv, E, fs);
        if ((error = jam_body(&x, &sc, renamed, indent, (int)ilen)) < 0)
            goto done;
        kevo_buf_printf(&b, "%.*s} else\n%.*s    ", (int)ilen, indent, (int)ilen, indent);
    }
    /* the remainder: the original loop from UB */
    kevo_buf_put(&b, m->src + m->tok[L->t_for].start,
                 m->tok[L->t_lb0].start - m->tok[L->t_for].start);
    kevo_buf_puts(&b, kevo_buf_cstr(&ub));
    kevo_buf_put(&b, m->src + m->tok[L->t_lb1 - 1].end,
                 m->tok[L->t_end - 1].end - m->tok[L->t_lb1 - 1].end);
    if (wrap) {
        size_t plen;
        const char *pind = kevo_recipe_indent(m, m->tok[prev].start, &plen);
        kevo_buf_printf(&b, "\n%.*s}", (int)plen, pind);
    }
    if ((error = kevo_buf_error(&b)) < 0)
        goto done;
    if (wrap &&
        (error = kevo_cparse_edits_add(&out->edits, m->tok[prev].end, m->tok[prev].end, " {")) < 0)
        goto done;
    error = kevo_cparse_edits_add(&out->edits, m->tok[L->t_for].start, m->tok[L->t_end - 1].end,
                                  "%s", kevo_buf_cstr(&b));
done:
    free(x.renamed);
    free(renamed);
    free(x.names);
    free(x.w);
    kevo_buf_free(&b);
    kevo_buf_free(&ub);
    kevo_buf_free(&e);
    kevo_buf_free(&a);
    return error;
}

int kevo_recipe_unroll_jam_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                 const char *source, const long *params)
{
    (void)source;
    long which = params[0], factor = params[1];
    bool tail = params[2] != 0;

    if (kevo_recipe_loop_index_check(m, which) < 0)
        return KEVO_EINVAL;
    if (which >= 0)
        return jam_loop(out, m, (int)which, factor, tail);

    /* the first loop, in source order, that qualifies and is worth it */
    char first_why[400] = "";
    for (size_t l = 0; l < m->n_loop; l++) {
        if (!worth_it(m, (int)l))
            continue;
        kevo_recipe_out trial = {0};
        int rc = jam_loop(&trial, m, (int)l, factor, tail);
        if (rc == 0) {
            kevo_cparse_edits_free(&trial.edits);
            return jam_loop(out, m, (int)l, factor, tail);
        }
        kevo_cparse_edits_free(&trial.edits);
        if (rc != KEVO_EINVAL)
            return rc;
        if (!first_why[0])
            snprintf(first_why, sizeof(first_why), "%s", kevo_error_last());
    }
    if (!first_why[0])
        return kevo_error_set(KEVO_EINVAL,
                              "no loop has an inner loop or more than one statement to jam");
    return kevo_error_set(KEVO_EINVAL, "no loop qualifies; the first candidate: %s", first_why);
}
