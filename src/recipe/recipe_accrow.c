/*
 * recipe/recipe_accrow.c - the `acc_row` recipe: a loop whose iterations
 * each sum into a scalar over an inner loop (a dot-product form: `float acc
 * = 0; for (c ...) acc += e; y[..] += acc;`) becomes a row of accumulators
 * along the loop, with the inner loop outside it:
 *
 *   { float acc_row[CHUNK];
 *     for (T i_blk = a; i_blk < b; i_blk += CHUNK) {
 *         const T i_end = ...;                         at most CHUNK iterations
 *         for (T i = i_blk; i < i_end; i++) { PRE  acc_row[i - i_blk] = INIT; }
 *         for (c ...)                                   the inner loop's header as written
 *             for (T i = i_blk; i < i_end; i++) { PRE  { BODY, acc_row[i - i_blk] += e } }
 *         for (T i = i_blk; i < i_end; i++) { PRE  float acc = acc_row[i - i_blk];  POST }
 *     } }
 *
 * With nest 1 (the default), the row's loop goes further in: below each
 * loop of R's perfect nest whose header does not change along the row and
 * that cannot leave early (a convolution's `for (c) for (kh) for (kw)`: the
 * taps outside the row, the row innermost, `x[.. + ow + kw]` read along it);
 * nest 0 keeps it directly inside R.
 *
 * The innermost loop then runs along the row: where e reads memory
 * contiguous in i (an input row of a transposed convolution whose output
 * is written a stride apart, the columns of a matrix), GCC vectorises it,
 * and the scattered or strided write happens once per element instead of
 * once per term. Each element still adds its terms in the same order, from
 * the same starting value: the results are the loop's, bit for bit.
 *
 * The loop it takes: `for (T i = a; i < b; i++)` (or <=), no pragma, not
 * collapsed into another, no break, return or goto, bounds that read no
 * memory; its body, at its top level: PRE (declarations whose initialisers
 * assign nothing and call only maths functions, and guards `if (cond)
 * continue;`), among them the declaration of a float or double `acc` with
 * such an initialiser; then a `for` loop R whose header names nothing the
 * body declares nor i, whose body writes only what it declares and `acc +=
 * e` (or -=), and reads acc nowhere else; then POST, any statements, which
 * write no array that PRE or R reads (through any pointer into the same
 * parameter) and no scalar declared outside the loop that PRE or R names.
 * Each of the three loops gets PRE's guards and the declarations it reads
 * (PRE writes nothing; the first two loops leave out what they do not read,
 * so that an integer a row's loop would not use, `ow = iw * S + k`, does not
 * keep vectorize off it).
 *
 * Must not: change anything outside the loop statement.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCROW_MAX_STMTS 64

typedef struct accrow {
    int l;                               /* the loop along the row */
    int r;                               /* the inner loop summing into acc */
    int d;                               /* the loop the row goes inside: r, or the
                                            deepest of r's perfect nest (nest 1) */
    int acc;                             /* the scalar */
    unsigned acc0;                       /* its declaration statement's first token */
    unsigned init0, init1;               /* its initialiser */
    unsigned pre0[ACCROW_MAX_STMTS];     /* the statements before R, acc's included */
    unsigned pre1[ACCROW_MAX_STMTS];
    int n_pre;
    unsigned post0, post1; /* the statements after R: [post0, post1) */
} accrow;

/* Calls a declaration may make: maths functions, which write nothing. */
static bool maths_call(const kevo_recipe_model *m, unsigned t)
{
    static const char *const pure[] = {
        "expf",  "exp",   "logf",  "log",    "sqrtf", "sqrt",  "fabsf", "fabs", "tanhf",
        "tanh",  "fmaxf", "fmax",  "fminf",  "fmin",  "powf",  "pow",   "erff", "erf",
        "sinf",  "sin",   "cosf",  "cos",    "floorf", "floor", "ceilf", "ceil", "log1pf",
        "expm1f", "rsqrtf", NULL};
    for (const char *const *p = pure; *p; p++)
        if (kevo_rtok_is(m, t, *p))
            return true;
    return false;
}

/* Whether tokens [a,b) assign, increment or call something other than a
 * maths function (a declaration's own `=` at skip is allowed). */
static bool writes_or_calls(const kevo_recipe_model *m, unsigned a, unsigned b, unsigned skip)
{
    for (unsigned t = a; t < b; t++) {
        if (t == skip)
            continue;
        if (kevo_rtok_assigns(m, t, true))
            return true;
        if (m->tok[t].kind == KEVO_CTOK_IDENT && m->tok[t].var < 0 && t + 1 < b &&
            kevo_rtok_is(m, t + 1, "(") && !maths_call(m, t))
            return true;
    }
    return false;
}

/* The `=` of the declaration statement [a,b) declaring v at token d, or
 * (unsigned)-1. */
static unsigned decl_assign(const kevo_recipe_model *m, unsigned d, unsigned b)
{
    return d + 1 < b && kevo_rtok_is(m, d + 1, "=") ? d + 1 : (unsigned)-1;
}

/* Whether the statement [a,b) is a guard `if (cond) continue;` whose
 * condition writes and calls nothing. */
static bool guard_stmt(const kevo_recipe_model *m, unsigned a, unsigned b)
{
    if (!kevo_rtok_is(m, a, "if") || !kevo_rtok_is(m, a + 1, "("))
        return false;
    unsigned rp = kevo_rtok_match(m, a + 1);
    return rp != (unsigned)-1 && rp + 3 == b && kevo_rtok_is(m, rp + 1, "continue") &&
           kevo_rtok_is(m, rp + 2, ";") && !writes_or_calls(m, a + 2, rp, (unsigned)-1);
}

/* Whether a pointer or array variable in [a,b) reaches parameter root. */
static bool names_root(const kevo_recipe_model *m, unsigned a, unsigned b, int root)
{
    for (unsigned t = a; t < b; t++) {
        int v = m->tok[t].var;
        if (v >= 0 &&
            (m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY) &&
            (v == root || kevo_recipe_root_param(m, v) == root))
            return true;
    }
    return false;
}

/* Whether the header of loop k names i or what L's body declares before R:
 * then it changes with the row's loop and cannot go outside it (why, when
 * not NULL, says so). */
static bool header_varies(const kevo_recipe_model *m, const kevo_rloop *L, const kevo_rloop *R,
                          int k, char *why, size_t wl)
{
    const kevo_rloop *D = &m->loop[k];
    for (unsigned u = D->t_lparen; u <= D->t_rparen; u++) {
        int v = m->tok[u].var;
        if (v >= 0 && (v == L->var || kevo_recipe_declared_in(m, v, L->t_body, R->t_for))) {
            if (why)
                snprintf(why, wl, "the header of the loop at line %u names '%s', which changes with "
                              "the loop at line %u",
                     D->line, m->var[v].name, L->line);
            return true;
        }
    }
    return false;
}

static bool accrow_check(const kevo_recipe_model *m, int l, bool nest, accrow *s, char *why,
                         size_t wl)
{
    const kevo_rloop *L = &m->loop[l];
    memset(s, 0, sizeof *s);
    s->l = l;
    s->acc = -1;
    if (!L->simple || !L->body_compound || L->n_children == 0) {
        snprintf(why, wl, "the loop at line %u is not `for (T i = a; i < b; i++) { ... }` holding a loop",
                 L->line);
        return false;
    }
    if (L->n_pragmas > 0 || kevo_recipe_collapsed_into(m, l) >= 0) {
        snprintf(why, wl, "the loop at line %u carries a pragma (or is collapsed into one)", L->line);
        return false;
    }
    if (L->early_exit) {
        snprintf(why, wl, "the loop at line %u can leave early (break, return or goto)", L->line);
        return false;
    }
    if (m->var[L->var].vtype != KEVO_VTYPE_INT) {
        snprintf(why, wl, "the variable of the loop at line %u is not an integer", L->line);
        return false;
    }
    if (kevo_recipe__reads_memory(m, L->t_lb0, L->t_lb1) ||
        kevo_recipe__reads_memory(m, L->t_ub0, L->t_ub1)) {
        snprintf(why, wl, "the bounds of the loop at line %u read memory or call", L->line);
        return false;
    }
    for (size_t d = 0; d < m->n_dir; d++)
        if (m->dir[d].start > m->tok[L->t_for].start && m->dir[d].start < m->tok[L->t_end - 1].end) {
            snprintf(why, wl, "the loop at line %u holds a preprocessor line", L->line);
            return false;
        }
    /* the statements before the first inner loop at the body's top level */
    unsigned t = L->t_body + 1, end = L->t_end - 1;
    int r = -1, cand[ACCROW_MAX_STMTS], n_cand = 0;
    while (t < end) {
        t = kevo_rtok_skip_comments(m, t, end);
        if (t >= end)
            break;
        if (kevo_rtok_is(m, t, "for")) {
            for (size_t k = (size_t)l + 1; k < m->n_loop; k++)
                if (m->loop[k].parent == l && m->loop[k].t_for == t)
                    r = (int)k;
            break;
        }
        unsigned e;
        if (kevo_rtok_is(m, t, "if")) {
            unsigned rp = kevo_rtok_is(m, t + 1, "(") ? kevo_rtok_match(m, t + 1) : (unsigned)-1;
            e = rp == (unsigned)-1 ? end : kevo_rtok_stmt_semi(m, rp + 1, end);
        } else {
            e = kevo_rtok_stmt_semi(m, t, end);
        }
        if (e >= end || s->n_pre == ACCROW_MAX_STMTS) {
            snprintf(why, wl, "the loop at line %u: a statement before its inner loop is not a "
                              "declaration or a guard",
                     L->line);
            return false;
        }
        unsigned dtok = 0;
        int v = kevo_recipe_sole_decl(m, t, e + 1, &dtok);
        bool ok = false;
        if (guard_stmt(m, t, e + 1)) {
            ok = true;
        } else if (v >= 0 && m->tok[t].var < 0 && n_cand < ACCROW_MAX_STMTS) {
            unsigned eq = decl_assign(m, dtok, e + 1);
            ok = !writes_or_calls(m, t, e + 1, eq);
            if (ok && eq != (unsigned)-1 && m->var[v].vtype == KEVO_VTYPE_FLOAT &&
                dtok == t + 1 && (kevo_rtok_is(m, t, "float") || kevo_rtok_is(m, t, "double")))
                cand[n_cand++] = s->n_pre; /* `float v = init;`: the sum, if R adds to it */
        }
        if (!ok) {
            snprintf(why, wl,
                     "line %u: before the inner loop, the loop at line %u holds a statement that "
                     "is neither a declaration that writes and calls nothing nor `if (...) "
                     "continue;`",
                     kevo_recipe_line(m, m->tok[t].start), L->line);
            return false;
        }
        s->pre0[s->n_pre] = t;
        s->pre1[s->n_pre] = e + 1;
        s->n_pre++;
        t = e + 1;
    }
    /* acc: the candidate R updates */
    for (int c = 0; r >= 0 && c < n_cand && s->acc < 0; c++) {
        unsigned a = s->pre0[cand[c]], dtok = 0;
        int v = kevo_recipe_sole_decl(m, a, s->pre1[cand[c]], &dtok);
        for (unsigned u = m->loop[r].t_body; u + 1 < m->loop[r].t_end && s->acc < 0; u++)
            if (m->tok[u].var == v && (kevo_rtok_is(m, u + 1, "+=") || kevo_rtok_is(m, u + 1, "-="))) {
                s->acc = v;
                s->acc0 = a;
                s->init0 = dtok + 2;
                s->init1 = s->pre1[cand[c]] - 1;
            }
    }
    if (r < 0 || s->acc < 0) {
        snprintf(why, wl,
                 "the loop at line %u does not declare a float accumulator before an inner loop",
                 L->line);
        return false;
    }
    s->r = r;
    const kevo_rloop *R = &m->loop[r];
    s->post0 = R->t_end;
    s->post1 = end;
    const char *acc = m->var[s->acc].name;
    if (R->early_exit || R->n_pragmas > 0) {
        snprintf(why, wl, "the loop at line %u can leave early or carries a pragma", R->line);
        return false;
    }
    /* R's header: nothing the body declares, nor i */
    if (header_varies(m, L, R, r, why, wl))
        return false;
    /* nest 1: the row goes inside R's perfect nest, as deep as the headers
     * allow (a break of a loop moved outside the row would end the row) */
    s->d = r;
    while (nest && m->loop[s->d].sole_child >= 0) {
        int c = m->loop[s->d].sole_child;
        const kevo_rloop *C = &m->loop[c];
        if (C->early_exit || C->n_pragmas > 0 || header_varies(m, L, R, c, NULL, 0))
            break;
        s->d = c;
    }
    /* R's body: writes only its own variables and acc += e; acc read only there */
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if (kevo_recipe_writes(&w, &nw, m, R->t_lparen, R->t_end) < 0) {
        snprintf(why, wl, "the writes of the loop at line %u could not be read", R->line);
        return false;
    }
    size_t n_upd = 0;
    bool bad = false;
    unsigned bad_line = R->line;
    for (size_t k = 0; k < nw && !bad; k++) {
        if (w[k].kind == KEVO_WRITE_SCALAR && w[k].var == s->acc &&
            (kevo_rtok_is(m, w[k].t_op, "+=") || kevo_rtok_is(m, w[k].t_op, "-=")) &&
            w[k].t_lhs1 == w[k].t_lhs0 + 1) {
            n_upd++;
            continue;
        }
        bool own = w[k].var >= 0 &&
                   (w[k].kind == KEVO_WRITE_SCALAR ||
                    (w[k].kind == KEVO_WRITE_ELEMENT && m->var[w[k].var].vtype == KEVO_VTYPE_ARRAY)) &&
                   (w[k].var == R->var || kevo_recipe_declared_in(m, w[k].var, R->t_for, R->t_end));
        if (!own) {
            bad = true;
            bad_line = kevo_recipe_line(m, m->tok[w[k].t_lhs0].start);
        }
    }
    free(w);
    size_t n_acc = 0;
    for (unsigned u = R->t_for; u < R->t_end; u++)
        n_acc += m->tok[u].var == s->acc;
    if (bad || n_upd == 0 || n_acc != n_upd) {
        snprintf(why, wl,
                 bad ? "line %u: the loop at line %u writes what it does not declare, other than "
                       "'%s += e'"
                     : "line %u: the loop at line %u reads '%s' other than in '%s += e' (or adds "
                       "nothing to it)",
                 bad_line, R->line, acc, acc);
        return false;
    }
    for (int k = 0; k < s->n_pre; k++)
        if (s->pre0[k] != s->acc0 && kevo_recipe_uses_var(m, s->pre0[k], s->pre1[k], s->acc)) {
            snprintf(why, wl, "line %u reads '%s' before the loop at line %u sums into it",
                     kevo_recipe_line(m, m->tok[s->pre0[k]].start), acc, R->line);
            return false;
        }
    /* POST writes nothing that PRE or R reads */
    if (kevo_recipe_writes(&w, &nw, m, s->post0, s->post1) < 0) {
        snprintf(why, wl, "the writes after the loop at line %u could not be read", R->line);
        return false;
    }
    unsigned r0 = L->t_body + 1, r1 = R->t_end;
    for (size_t k = 0; k < nw && !bad; k++) {
        int v = w[k].var;
        bad_line = kevo_recipe_line(m, m->tok[w[k].t_lhs0].start);
        if (w[k].kind == KEVO_WRITE_UNKNOWN || v < 0) {
            bad = true;
        } else if (kevo_recipe_declared_in(m, v, L->t_body, L->t_end) &&
                   (w[k].kind == KEVO_WRITE_SCALAR ||
                    (w[k].kind == KEVO_WRITE_ELEMENT && m->var[v].vtype == KEVO_VTYPE_ARRAY))) {
            continue; /* the body's own scalars and arrays (each loop declares PRE's again) */
        } else if (w[k].kind == KEVO_WRITE_SCALAR) {
            bad = kevo_recipe_uses_var(m, r0, r1, v) || v == L->var;
        } else {
            int root = kevo_recipe_root_param(m, v);
            bad = root < 0 || names_root(m, r0, r1, root);
        }
    }
    free(w);
    if (bad) {
        snprintf(why, wl,
                 "line %u writes what the loop at line %u reads (or what kevo cannot tell "
                 "apart): the sums must come first",
                 bad_line, R->line);
        return false;
    }
    for (unsigned u = L->t_body; u < L->t_end; u++)
        if (m->tok[u].var >= 0 && m->tok[u].var != L->var &&
            (kevo_recipe_uses_var(m, L->t_lb0, L->t_lb1, m->tok[u].var) ||
             kevo_recipe_uses_var(m, L->t_ub0, L->t_ub1, m->tok[u].var)) &&
            kevo_recipe_var_written(m, m->tok[u].var)) {
            snprintf(why, wl, "the bounds of the loop at line %u name '%s', which the kernel "
                              "writes",
                     L->line, m->var[m->tok[u].var].name);
            return false;
        }
    return true;
}

/* Which statements of PRE a loop needs, as bits: every guard (it decides
 * which iterations run), and each declaration that the loop's own text
 * [a,b) or a needed statement reads, through the declarations (the last
 * first: a declaration reads only earlier ones). a == b: all of them. */
static unsigned long long pre_needed(const kevo_recipe_model *m, const accrow *s, unsigned a,
                                     unsigned b)
{
    unsigned long long need = 0;
    for (int k = s->n_pre - 1; k >= 0; k--) {
        if (s->pre0[k] == s->acc0)
            continue;
        unsigned dtok = 0;
        int v = kevo_recipe_sole_decl(m, s->pre0[k], s->pre1[k], &dtok);
        bool needed = a == b || v < 0 || kevo_recipe_uses_var(m, a, b, v);
        for (int u = k + 1; !needed && u < s->n_pre; u++)
            needed = (need >> u & 1u) && kevo_recipe_uses_var(m, s->pre0[u], s->pre1[u], v);
        if (needed)
            need |= 1ull << k;
    }
    return need;
}

/* PRE's statements in `need` (acc's declaration never). */
static int put_pre(kevo_buf *b, const kevo_recipe_model *m, const accrow *s, const char *ind,
                   unsigned long long need)
{
    int error = 0;
    for (int k = 0; k < s->n_pre && error == 0; k++) {
        if (s->pre0[k] == s->acc0 || !(need >> k & 1u))
            continue;
        error = kevo_buf_puts(b, ind);
        if (error == 0)
            error = kevo_rtok_put(b, m, s->pre0[k], s->pre1[k]);
        if (error == 0)
            error = kevo_buf_puts(b, "\n");
    }
    return error;
}

static int rewrite(kevo_cparse_edits *e, const kevo_recipe_model *m, const accrow *s, long chunk)
{
    const kevo_rloop *L = &m->loop[s->l];
    const kevo_rloop *R = &m->loop[s->r];
    const kevo_rloop *D = &m->loop[s->d];
    const char *iv = m->var[L->var].name;
    const char *acc = m->var[s->acc].name;
    char name[3][64];
    kevo_recipe_fresh_name(name[0], sizeof name[0], m, acc, "_row", name, 0);
    kevo_recipe_fresh_name(name[1], sizeof name[1], m, iv, "_blk", name, 1);
    kevo_recipe_fresh_name(name[2], sizeof name[2], m, iv, "_end", name, 2);
    const char *row = name[0], *blk = name[1], *iend = name[2];
    unsigned from = m->tok[L->t_for].start;
    if (L->at_line_start)
        from = kevo_recipe_line_begin(m, from);
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    int n = (int)il;
    const char *I = ind;
    unsigned t0 = m->tok[L->t_type0].start, t1 = m->tok[L->t_type1 - 1].end;
    int tl = (int)(t1 - t0);
    const char *T = m->src + t0;
    unsigned lb0 = m->tok[L->t_lb0].start, lb1 = m->tok[L->t_lb1 - 1].end;
    unsigned ub0 = m->tok[L->t_ub0].start, ub1 = m->tok[L->t_ub1 - 1].end;
    char hi[600];
    snprintf(hi, sizeof hi, "(%.*s)%s", (int)(ub1 - ub0), m->src + ub0,
             L->cond_op == KEVO_COND_LE ? " + 1" : "");
    const char *atype = m->src + m->tok[s->acc0].start;
    int atl = (int)(m->tok[s->acc0].end - m->tok[s->acc0].start);
    char at[200];
    snprintf(at, sizeof at, "%s[%s - %s]", row, iv, blk);
    char in2[160], in3[160], in4[160];
    snprintf(in2, sizeof in2, "%.*s        ", n, I);
    snprintf(in3, sizeof in3, "%.*s            ", n, I);
    snprintf(in4, sizeof in4, "%.*s                ", n, I);
    kevo_buf b = {0};
    int error = 0;
#define P(...)                                                                                     \
    do {                                                                                           \
        if (error == 0)                                                                            \
            error = kevo_buf_printf(&b, __VA_ARGS__);                                              \
    } while (0)
    P("%.*s{ /* kevo acc_row: '%s' of each iteration of the loop at line %u kept in a row, the "
      "loop at line %u outside it */\n",
      L->at_line_start ? n : 0, I, acc, L->line, R->line);
    P("%.*s    %.*s %s[%ld];\n", n, I, atl, atype, row, chunk);
    P("%.*s    for (%.*s %s = %.*s; %s < %s; %s += %ld) {\n", n, I, tl, T, blk, (int)(lb1 - lb0),
      m->src + lb0, blk, hi, blk, chunk);
    P("%s%.*s %s = %s - %s > %ld ? %s + %ld : %s;\n", in2, tl, T, iend, hi, blk, chunk, blk, chunk,
      hi);
    /* the starting values */
    P("%sfor (%.*s %s = %s; %s < %s; %s++) {\n", in2, tl, T, iv, blk, iv, iend, iv);
    if (error == 0)
        error = put_pre(&b, m, s, in3, pre_needed(m, s, s->init0, s->init1));
    P("%s%s = ", in3, at);
    if (error == 0)
        error = kevo_rtok_put(&b, m, s->init0, s->init1);
    P(";\n%s}\n", in2);
    /* the sums: R and the loops of its perfect nest down to D (each the
     * sole child of the one before) outside, the row inside */
    int depth = 0;
    for (int k = s->r;; k = m->loop[k].sole_child, depth++) {
        P("%s%*s", in2, 4 * depth, "");
        if (error == 0)
            error = kevo_rtok_put(&b, m, m->loop[k].t_for, m->loop[k].t_body);
        P(" {\n");
        if (k == s->d)
            break;
    }
    P("%s%*sfor (%.*s %s = %s; %s < %s; %s++) {\n", in3, 4 * depth, "", tl, T, iv, blk, iv, iend,
      iv);
    if (error == 0)
        error = put_pre(&b, m, s, in4, pre_needed(m, s, D->t_body, D->t_end));
    P("%s", in4);
    if (!D->body_compound)
        P("{ ");
    /* D's body with each `acc` (the left side of its updates) the row's element */
    unsigned cur = m->tok[D->t_body].start;
    for (unsigned u = D->t_body; u < D->t_end && error == 0; u++)
        if (m->tok[u].var == s->acc) {
            P("%.*s%s", (int)(m->tok[u].start - cur), m->src + cur, at);
            cur = m->tok[u].end;
        }
    P("%.*s", (int)(m->tok[D->t_end - 1].end - cur), m->src + cur);
    if (!D->body_compound)
        P(" }");
    P("\n%s%*s}\n", in3, 4 * depth, "");
    for (int j = depth; j >= 0; j--)
        P("%s%*s}\n", in2, 4 * j, "");
    /* the rest, each iteration with its sum */
    P("%sfor (%.*s %s = %s; %s < %s; %s++) {\n", in2, tl, T, iv, blk, iv, iend, iv);
    if (error == 0)
        error = put_pre(&b, m, s, in3, pre_needed(m, s, 0, 0));
    P("%s%.*s %s = %s;\n", in3, atl, atype, acc, at);
    if (s->post0 < s->post1) {
        P("%s", in3);
        if (error == 0)
            error = kevo_rtok_put(&b, m, s->post0, s->post1);
        P("\n");
    }
    P("%s}\n", in2);
    P("%.*s    }\n%.*s}", n, I, n, I);
#undef P
    unsigned to = m->tok[L->t_end - 1].end;
    if (error == 0)
        error = kevo_cparse_edits_add(e, from, to, "%s", kevo_buf_cstr(&b));
    kevo_buf_free(&b);
    return error;
}

int kevo_recipe_acc_row_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                              const long *params)
{
    (void)source;
    long only = params[0], chunk = params[1], nest = params[2];
    if (chunk != 16 && chunk != 64 && chunk != 256 && chunk != 1024)
        return kevo_error_set(KEVO_EINVAL, "chunk is %ld: it takes 16, 64, 256 or 1024", chunk);
    if (kevo_recipe_loop_index_check(m, only) < 0)
        return KEVO_EINVAL;
    int error = 0, applied = 0;
    kevo_buf reasons = {0};
    char why[400];
    unsigned taken0[64], taken1[64];
    for (size_t k = m->n_loop; k-- > 0;) {
        if (only >= 0 && (long)k != only)
            continue;
        const kevo_rloop *L = &m->loop[k];
        bool overlaps = false;
        for (int a = 0; a < applied; a++)
            overlaps |= !(L->t_end <= taken0[a] || L->t_for >= taken1[a]);
        if (overlaps || m->loop[k].n_children == 0)
            continue;
        accrow s;
        if (!accrow_check(m, (int)k, nest == 1, &s, why, sizeof why)) {
            if ((reasons.len && (error = kevo_buf_puts(&reasons, "; ")) < 0) ||
                (error = kevo_buf_puts(&reasons, why)) < 0)
                goto done;
            continue;
        }
        if ((error = rewrite(&out->edits, m, &s, chunk)) < 0)
            goto done;
        taken0[applied] = L->t_for;
        taken1[applied] = L->t_end;
        if (++applied == 64)
            break;
    }
    if (applied == 0)
        error = kevo_error_set(KEVO_EINVAL, "no loop sums into a scalar over an inner loop: %s",
                               reasons.len ? kevo_buf_cstr(&reasons) : "no loop holds a loop");
done:
    kevo_buf_free(&reasons);
    return error;
}
