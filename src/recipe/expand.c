/*
 * recipe/expand.c - scalar expansion into the output element, the step
 * before `permute` on a nest that keeps its sum or maximum in a scalar (a
 * pool's window, a convolution written as a gather):
 *
 *     for (ow ...) {                      for (ow ...) { float m = -INFINITY; yp[o] = m; }
 *         float m = -INFINITY;            for (ow ...)
 *         for (kh ...) ...                    for (kh ...) ...
 *             if (v > m) m = v;       =>          yp[o] = v > yp[o] ? v : yp[o];
 *         yp[o] = m;                      (a third loop `yp[o] = f(yp[o]);` where the
 *     }                                    store was `yp[o] = f(m);`)
 *
 * The loop keeps one element per iteration (its variable a whole term of
 * the element's last subscript), so after the split each element is set,
 * then updated only by the iterations that set it, then finished: the same
 * values, in the same order, as the scalar got (a float kept in a float
 * element: the same roundings). The accumulation copy is then a chain that
 * permute can reorder, the window's guards becoming bounds of the loop
 * along the row (recipe_permute.c).
 *
 * The loop's body it takes: declarations with one initialised name (each
 * copied into every copy of the loop), one of them the float scalar; one
 * inner loop, which writes nothing but the scalar and its own variables;
 * then `P[idx] = F;`, F reading the scalar, P a float buffer that the
 * loop reads nowhere else. The scalar's updates in the inner loop: `s +=
 * e;`, `s -= e;`, `s = fmaxf(s, e);` (fminf, fmax, fmin), `s = e > s ? e :
 * s;`, `if (e > s) s = e;` (any comparison that keeps a maximum or a
 * minimum), and either form
 * under `if (G)` or as `if (G && e > s) s = e;` when that `if` is the last
 * statement of its loop's body (it becomes `if (!(G)) continue;`).
 *
 * Must not: run a compiler; decide whether the split pays (permute's
 * caller requires that a guard become bounds).
 */
#include "model.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PRE 16
#define MAX_UPD 24

typedef struct xedit {
    unsigned a, b;   /* byte range replaced */
    char *text;      /* malloc'd */
} xedit;

typedef struct xform {
    const kevo_recipe_model *m;
    int l, r;                    /* the loop and its inner loop */
    unsigned pre0[MAX_PRE], pre1[MAX_PRE]; /* the declarations before r (tokens, `;` incl.) */
    int pre_var[MAX_PRE];
    int n_pre;
    int s;                        /* the scalar's variable */
    int s_pre;                    /* its declaration's index in pre */
    unsigned st0, st1;            /* the store, `;` included */
    unsigned lhs0, lhs1;          /* its lvalue */
    unsigned f0, f1;              /* its value F */
    xedit ed[MAX_UPD];
    int n_ed;
    int stage; /* how far read_form got: 1 once the body has the form's shape */
} xform;

static void put_tokens(kevo_buf *b, const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    if (t1 > t0)
        kevo_buf_printf(b, "%.*s", (int)(m->tok[t1 - 1].end - m->tok[t0].start),
                        m->src + m->tok[t0].start);
}

/* Tokens [t0,t1) with every use of the scalar written as the lvalue. */
static void put_substituted(kevo_buf *b, const xform *x, unsigned t0, unsigned t1)
{
    const kevo_recipe_model *m = x->m;
    if (t1 <= t0)
        return;
    unsigned at = m->tok[t0].start;
    for (unsigned t = t0; t < t1; t++)
        if (m->tok[t].var == x->s) {
            kevo_buf_printf(b, "%.*s", (int)(m->tok[t].start - at), m->src + at);
            put_tokens(b, m, x->lhs0, x->lhs1);
            at = m->tok[t].end;
        }
    kevo_buf_printf(b, "%.*s", (int)(m->tok[t1 - 1].end - at), m->src + at);
}

/* The comparison in [c0,c1) negated: `a < b` as `a >= b`, ... for integer
 * operands; otherwise `!(...)`. */
static void put_negated(kevo_buf *b, const kevo_recipe_model *m, unsigned c0, unsigned c1)
{
    static const char *const ops[][2] = {{"<", ">="}, {"<=", ">"}, {">", "<="}, {">=", "<"},
                                         {"==", "!="}, {"!=", "=="}};
    kevo_rtok_strip_parens(m, &c0, &c1);
    unsigned op = c1;
    int n_ops = 0, depth = 0;
    bool ints = true;
    for (unsigned t = c0; t < c1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
            depth--;
        if (m->tok[t].kind == KEVO_CTOK_IDENT) {
            int v = m->tok[t].var;
            ints &= v >= 0 && m->var[v].vtype == KEVO_VTYPE_INT;
        } else if (m->tok[t].kind == KEVO_CTOK_LITERAL) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            ints &= strcspn(s, ".eEfFxX'\"") >= n;
        } else if (m->tok[t].kind == KEVO_CTOK_KEYWORD)
            ints = false;
        for (size_t k = 0; depth == 0 && k < sizeof ops / sizeof ops[0]; k++)
            if (kevo_rtok_is(m, t, ops[k][0])) {
                op = t;
                n_ops++;
            }
        if (depth == 0 && (kevo_rtok_is(m, t, "&&") || kevo_rtok_is(m, t, "||") ||
                           kevo_rtok_is(m, t, "?") || kevo_rtok_is(m, t, "!")))
            n_ops += 2;
    }
    if (ints && n_ops == 1)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (kevo_rtok_is(m, op, ops[k][0])) {
                put_tokens(b, m, c0, op);
                kevo_buf_printf(b, " %s ", ops[k][1]);
                put_tokens(b, m, op + 1, c1);
                return;
            }
    kevo_buf_puts(b, "!(");
    put_tokens(b, m, c0, c1);
    kevo_buf_puts(b, ")");
}

/* Whether [c0,c1) compares the scalar with e so that `s = e` under it keeps
 * a maximum or minimum: `e > s`, `s < e` (>=, <= too), `e < s`, `s > e`;
 * e's tokens into *e0,*e1, and *max set. */
static bool keeps_extreme(const xform *x, unsigned c0, unsigned c1, unsigned *e0, unsigned *e1,
                          bool *max)
{
    const kevo_recipe_model *m = x->m;
    kevo_rtok_strip_parens(m, &c0, &c1);
    unsigned op = c1;
    int n_ops = 0, depth = 0;
    for (unsigned t = c0; t < c1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
            depth--;
        else if (depth == 0 &&
                 (kevo_rtok_is(m, t, "<") || kevo_rtok_is(m, t, "<=") || kevo_rtok_is(m, t, ">") ||
                  kevo_rtok_is(m, t, ">=") || kevo_rtok_is(m, t, "&&") ||
                  kevo_rtok_is(m, t, "||") || kevo_rtok_is(m, t, "?"))) {
            op = t;
            n_ops++;
        }
    }
    if (n_ops != 1 || kevo_rtok_is(m, op, "&&") || kevo_rtok_is(m, op, "||") ||
        kevo_rtok_is(m, op, "?"))
        return false;
    unsigned a0 = c0, a1 = op, b0 = op + 1, b1 = c1;
    kevo_rtok_strip_parens(m, &a0, &a1);
    kevo_rtok_strip_parens(m, &b0, &b1);
    bool a_s = a1 == a0 + 1 && m->tok[a0].var == x->s;
    bool b_s = b1 == b0 + 1 && m->tok[b0].var == x->s;
    if (a_s == b_s)
        return false;
    bool gt = kevo_rtok_is(m, op, ">") || kevo_rtok_is(m, op, ">=");
    *e0 = a_s ? b0 : a0;
    *e1 = a_s ? b1 : a1;
    *max = a_s ? !gt : gt; /* e > s: a maximum; s < e: a maximum */
    return !kevo_recipe_uses_var(m, *e0, *e1, x->s);
}

/* The token before t, comments skipped (t itself when none). */
static unsigned prev_token(const kevo_recipe_model *m, unsigned t)
{
    unsigned p = t;
    while (p > 0) {
        p--;
        if (!kevo_rtok_comment(m, p))
            return p;
    }
    return t;
}

/* Whether the `if` at t_if ending before t_end is the last statement of
 * the body of the innermost loop around it, directly in that body. */
static bool last_in_loop_body(const kevo_recipe_model *m, unsigned t_if, unsigned t_end)
{
    int l = kevo_recipe_loop_of(m, t_if);
    if (l < 0)
        return false;
    const kevo_rloop *L = &m->loop[l];
    if (!L->body_compound)
        return t_if == L->t_body && t_end == L->t_end;
    int depth = 0;
    for (unsigned t = L->t_body + 1; t < t_if; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "[") || kevo_rtok_is(m, t, "{"))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]") || kevo_rtok_is(m, t, "}"))
            depth--;
    }
    unsigned p = prev_token(m, t_if);
    return depth == 0 &&
           (p == L->t_body || kevo_rtok_is(m, p, ";") || kevo_rtok_is(m, p, "}")) &&
           kevo_rtok_skip_comments(m, t_end, L->t_end) == L->t_end - 1;
}

/* Whether the statement starting at token t is the whole (unbraced) body
 * of some loop: one that becomes several must then be braced. */
static bool bare_loop_body(const kevo_recipe_model *m, unsigned t)
{
    for (size_t l = 0; l < m->n_loop; l++)
        if (!m->loop[l].body_compound && m->loop[l].t_body == t)
            return true;
    return false;
}

/* Whether token t opens the body of some loop. */
static bool loop_body_brace(const kevo_recipe_model *m, unsigned t)
{
    for (size_t l = 0; l < m->n_loop; l++)
        if (m->loop[l].body_compound && m->loop[l].t_body == t)
            return true;
    return false;
}

/* `if (!(G)) continue;` for G the conjunction [g0,g1): one guard per
 * conjunct, its comparison negated. */
static void put_continue_guard(kevo_buf *b, const kevo_recipe_model *m, unsigned g0, unsigned g1)
{
    unsigned t = g0;
    while (t < g1) {
        unsigned n = kevo_rtok_find_top(m, t, g1, "&&");
        kevo_buf_puts(b, "if (");
        put_negated(b, m, t, n);
        kevo_buf_puts(b, ") continue; ");
        t = n < g1 ? n + 1 : g1;
    }
}

/* Record the rewrite of the update at write w (to the scalar) in r's body.
 * A sum's update, or a maximum's through fmaxf, is the same with the
 * scalar written as the element wherever it stands; under an `if (G)` that
 * is the last statement of its loop's body it becomes `if (!(G)) continue;
 * UPDATE` (a guard permute can turn into bounds). `if (G && e > s) s = e;`
 * becomes `p[i] = e > p[i] ? e : p[i];` (after that guard, or under `if
 * (G)` where it is not last). */
static int update_edit(xform *x, const kevo_rwrite *w)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *R = &m->loop[x->r];
    unsigned line = kevo_recipe_line(m, m->tok[w->t_lhs0].start);
    if (x->n_ed == MAX_UPD)
        return kevo_error_set(KEVO_EINVAL, "the scalar has more than %d updates", MAX_UPD);
    unsigned t0 = w->t_lhs0, semi = kevo_rtok_stmt_semi(m, w->t_op, R->t_end);
    if (semi >= R->t_end)
        return kevo_error_set(KEVO_EINVAL, "line %u: an update kevo cannot read", line);
    bool add = kevo_rtok_is(m, w->t_op, "+=") || kevo_rtok_is(m, w->t_op, "-=");
    bool assign = kevo_rtok_is(m, w->t_op, "=");
    if (w->kind != KEVO_WRITE_SCALAR || w->t_lhs1 != t0 + 1 || !(add || assign))
        return kevo_error_set(KEVO_EINVAL,
                              "line %u: the scalar is updated by other than `+=`, `-=`, a "
                              "maximum or a minimum",
                              line);
    unsigned rhs0 = w->t_op + 1, rhs1 = semi;
    /* the `if (C)` directly around the update, braced or not */
    unsigned t_if = 0, c0 = 0, c1 = 0, end = semi + 1;
    unsigned p = prev_token(m, t0), close = 0;
    bool braced = false;
    if (kevo_rtok_is(m, p, "{") && !loop_body_brace(m, p)) {
        unsigned q = prev_token(m, p);
        if (kevo_rtok_is(m, q, ")")) {
            close = q;
            braced = true;
        }
    } else if (kevo_rtok_is(m, p, ")"))
        close = p;
    if (close) {
        unsigned open = kevo_rtok_match(m, close);
        if (open != (unsigned)-1 && open > 0 && kevo_rtok_is(m, prev_token(m, open), "if")) {
            t_if = prev_token(m, open);
            c0 = open + 1;
            c1 = close;
            if (braced) {
                unsigned e = kevo_rtok_skip_comments(m, semi + 1, R->t_end);
                if (kevo_rtok_is(m, e, "}"))
                    end = e + 1;
                else
                    t_if = 0; /* the block holds more than the update */
            }
            if (t_if && kevo_rtok_is(m, kevo_rtok_skip_comments(m, end, R->t_end), "else"))
                t_if = 0;
        }
    }
    kevo_buf b = {0};
    unsigned from = t0, to = semi + 1;
    if (add || !t_if) {
        /* a sum, or a call keeping the extreme: the scalar as the element */
        if (add && kevo_recipe_uses_var(m, rhs0, rhs1, x->s))
            return kevo_error_set(KEVO_EINVAL, "line %u: the scalar's update reads it", line);
        if (assign) {
            unsigned a0 = rhs0, a1 = rhs1;
            kevo_rtok_strip_parens(m, &a0, &a1);
            bool call = a1 > a0 + 2 &&
                        (kevo_rtok_is(m, a0, "fmaxf") || kevo_rtok_is(m, a0, "fminf") ||
                         kevo_rtok_is(m, a0, "fmax") || kevo_rtok_is(m, a0, "fmin")) &&
                        kevo_rtok_is(m, a0 + 1, "(") && kevo_rtok_match(m, a0 + 1) == a1 - 1;
            unsigned c = call ? kevo_rtok_find_top(m, a0 + 2, a1 - 1, ",") : a1;
            unsigned p0 = a0 + 2, p1 = c, q0 = c + 1, q1 = a1 - 1;
            if (call && c < a1 - 1) {
                kevo_rtok_strip_parens(m, &p0, &p1);
                kevo_rtok_strip_parens(m, &q0, &q1);
            }
            bool ps = call && p1 == p0 + 1 && m->tok[p0].var == x->s;
            bool qs = call && q1 == q0 + 1 && m->tok[q0].var == x->s;
            /* or `s = e > s ? e : s;` (the extreme forms of keeps_extreme) */
            unsigned qm = kevo_rtok_find_top(m, a0, a1, "?"), cm = qm < a1 ? kevo_rtok_find_top(m, qm + 1, a1, ":") : a1;
            unsigned e0 = 0, e1 = 0, t0b = qm + 1, t1b = cm, f0b = cm + 1, f1b = a1;
            bool max = false, ternary = false;
            if (!call && qm < a1 && cm < a1 && kevo_rtok_find_top(m, cm + 1, a1, "?") == a1 &&
                keeps_extreme(x, a0, qm, &e0, &e1, &max)) {
                kevo_rtok_strip_parens(m, &t0b, &t1b);
                kevo_rtok_strip_parens(m, &f0b, &f1b);
                ternary = kevo_rtok_same(m, t0b, t1b, e0, e1) && f1b == f0b + 1 &&
                          m->tok[f0b].var == x->s;
            }
            if (ternary)
                ;
            else if (!call || c == a1 - 1 || ps == qs ||
                     kevo_recipe_uses_var(m, ps ? q0 : p0, ps ? q1 : p1, x->s))
                return kevo_error_set(KEVO_EINVAL,
                                      "line %u: the scalar is set, not accumulated: kevo keeps "
                                      "sums, maxima and minima in memory",
                                      line);
        }
        if (t_if && kevo_recipe_uses_var(m, c0, c1, x->s))
            return kevo_error_set(KEVO_EINVAL, "line %u: the update's guard reads the scalar",
                                  line);
        if (t_if && last_in_loop_body(m, t_if, end)) {
            put_continue_guard(&b, m, c0, c1);
            from = t_if;
            to = end;
        }
        put_substituted(&b, x, t0, semi + 1);
    } else {
        /* if (G && e > s) s = e; */
        unsigned a0 = rhs0, a1 = rhs1, last = c0, t = c0, e0 = 0, e1 = 0;
        bool max = false;
        kevo_rtok_strip_parens(m, &a0, &a1);
        while ((t = kevo_rtok_find_top(m, t, c1, "&&")) < c1)
            last = ++t;
        if (kevo_rtok_find_top(m, c0, c1, "||") < c1 || !keeps_extreme(x, last, c1, &e0, &e1, &max) ||
            !kevo_rtok_same(m, e0, e1, a0, a1) || (last > c0 && kevo_recipe_uses_var(m, c0, last - 1, x->s)))
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: `if (...) s = e;` keeps no maximum or minimum of e "
                                  "(kevo reads `e > s`, `s < e` and the minimum forms, last in "
                                  "the condition)",
                                  line);
        from = t_if;
        to = end;
        if (last > c0 && last_in_loop_body(m, t_if, end))
            put_continue_guard(&b, m, c0, last - 1);
        else if (last > c0) {
            kevo_buf_puts(&b, "if (");
            put_tokens(&b, m, c0, last - 1);
            kevo_buf_puts(&b, ") ");
        }
        put_tokens(&b, m, x->lhs0, x->lhs1);
        kevo_buf_puts(&b, " = ");
        put_tokens(&b, m, e0, e1);
        kevo_buf_printf(&b, " %s ", max ? ">" : "<");
        put_tokens(&b, m, x->lhs0, x->lhs1);
        kevo_buf_puts(&b, " ? ");
        put_tokens(&b, m, e0, e1);
        kevo_buf_puts(&b, " : ");
        put_tokens(&b, m, x->lhs0, x->lhs1);
        kevo_buf_puts(&b, ";");
    }
    if (bare_loop_body(m, from)) { /* several statements where there was one */
        kevo_buf wrapped = {0};
        kevo_buf_printf(&wrapped, "{ %s }", kevo_buf_cstr(&b));
        kevo_buf_free(&b);
        b = wrapped;
    }
    if (kevo_buf_oom(&b)) {
        kevo_buf_free(&b);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    xedit *e = &x->ed[x->n_ed++];
    e->a = m->tok[from].start;
    e->b = m->tok[to - 1].end;
    e->text = kevo_buf_detach(&b);
    return 0;
}

static void xform_free(xform *x)
{
    for (int i = 0; i < x->n_ed; i++)
        free(x->ed[i].text);
    x->n_ed = 0;
}

/* Whether the last subscript of the lvalue [l0,l1) has the variable v as
 * a whole term added, and names it nowhere else. */
static bool indexes_by(const kevo_recipe_model *m, unsigned l0, unsigned l1, int v)
{
    if (l1 <= l0 || !kevo_rtok_is(m, l1 - 1, "]"))
        return false;
    unsigned open = kevo_rtok_match(m, l1 - 1);
    if (open == (unsigned)-1 || open < l0)
        return false;
    int uses = 0;
    for (unsigned t = l0; t < l1; t++)
        uses += m->tok[t].var == v;
    if (uses != 1)
        return false;
    for (unsigned t = open + 1; t < l1 - 1; t++)
        if (m->tok[t].var == v) {
            bool before = t == open + 1 || kevo_rtok_is(m, t - 1, "+");
            bool after = t + 1 == l1 - 1 || kevo_rtok_is(m, t + 1, "+") ||
                         kevo_rtok_is(m, t + 1, "-");
            /* a term of the sum at depth 0 */
            int depth = 0;
            for (unsigned u = open + 1; u < t; u++) {
                if (kevo_rtok_is(m, u, "(") || kevo_rtok_is(m, u, "["))
                    depth++;
                else if (kevo_rtok_is(m, u, ")") || kevo_rtok_is(m, u, "]"))
                    depth--;
            }
            return before && after && depth == 0;
        }
    return false;
}

static bool overlaps_edit(const xform *x, unsigned a, unsigned b)
{
    for (int k = 0; k < x->n_ed; k++)
        if (a < x->ed[k].b && x->ed[k].a < b)
            return true;
    return false;
}

static int add_edit(xform *x, unsigned a, unsigned b, kevo_buf *text)
{
    if (kevo_buf_oom(text)) {
        kevo_buf_free(text);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    if (x->n_ed == MAX_UPD) {
        kevo_buf_free(text);
        return 0; /* left as written: permute then reads what it can */
    }
    xedit *e = &x->ed[x->n_ed++];
    e->a = a;
    e->b = b;
    e->text = kevo_buf_detach(text);
    return 0;
}

/* In the inner loop, statements permute reads only one at a time, split
 * (the same meaning): a declaration of several names, `int64_t ih = oh +
 * kh - 1, iw = ow + kw - 1;`, into one declaration each; a guard `if (A ||
 * B) continue;` into `if (A) continue; if (B) continue;` (so that the
 * disjuncts on the row can become its bounds while the others stay). */
static int split_statements(xform *x)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *R = &m->loop[x->r];
    int error = 0;
    for (unsigned t = R->t_body; t < R->t_end && error == 0; t++) {
        bool in_header = false;
        for (size_t l = 0; l < m->n_loop; l++)
            in_header |= m->loop[l].t_for >= R->t_for && m->loop[l].t_end <= R->t_end &&
                         t >= m->loop[l].t_for && t <= m->loop[l].t_rparen;
        if (in_header)
            continue;
        if (m->tok[t].is_decl) {
            /* the statement: back over its type (names, keywords, `*`) */
            unsigned a = t;
            while (a > R->t_body && (m->tok[a - 1].kind == KEVO_CTOK_KEYWORD ||
                                     (m->tok[a - 1].kind == KEVO_CTOK_IDENT &&
                                      m->tok[a - 1].var < 0) ||
                                     kevo_rtok_is(m, a - 1, "*")))
                a--;
            unsigned semi = kevo_rtok_stmt_semi(m, a, R->t_end);
            if (semi >= R->t_end)
                continue;
            unsigned base = a; /* the type's end: before the first `*` or name */
            while (base < t && !kevo_rtok_is(m, base, "*"))
                base++;
            unsigned c = kevo_rtok_find_top(m, t, semi, ",");
            if (c < semi && !overlaps_edit(x, m->tok[a].start, m->tok[semi].end)) {
                kevo_buf b = {0};
                unsigned p = a;
                while (p < semi) {
                    unsigned q = kevo_rtok_find_top(m, p, semi, ",");
                    if (p > a) {
                        put_tokens(&b, m, a, base);
                        kevo_buf_puts(&b, " ");
                    }
                    put_tokens(&b, m, p, q);
                    kevo_buf_puts(&b, q < semi ? "; " : ";");
                    p = q < semi ? q + 1 : semi;
                }
                error = add_edit(x, m->tok[a].start, m->tok[semi].end, &b);
            }
            t = semi;
            continue;
        }
        if (kevo_rtok_is(m, t, "if") && kevo_rtok_is(m, t + 1, "(")) {
            unsigned close = kevo_rtok_match(m, t + 1);
            if (close == (unsigned)-1 || close >= R->t_end)
                continue;
            unsigned c = kevo_rtok_skip_comments(m, close + 1, R->t_end), end;
            bool braced = kevo_rtok_is(m, c, "{");
            if (braced)
                c = kevo_rtok_skip_comments(m, c + 1, R->t_end);
            if (!kevo_rtok_is(m, c, "continue") || !kevo_rtok_is(m, c + 1, ";"))
                continue;
            end = c + 2;
            if (braced) {
                end = kevo_rtok_skip_comments(m, end, R->t_end);
                if (!kevo_rtok_is(m, end, "}"))
                    continue;
                end++;
            }
            if (kevo_rtok_is(m, kevo_rtok_skip_comments(m, end, R->t_end), "else") ||
                kevo_rtok_find_top(m, t + 2, close, "||") == close ||
                overlaps_edit(x, m->tok[t].start, m->tok[end - 1].end))
                continue;
            kevo_buf b = {0};
            unsigned p = t + 2;
            bool bare = bare_loop_body(m, t);
            if (bare)
                kevo_buf_puts(&b, "{ ");
            while (p < close) {
                unsigned q = kevo_rtok_find_top(m, p, close, "||");
                kevo_buf_puts(&b, "if (");
                put_tokens(&b, m, p, q);
                kevo_buf_puts(&b, q < close ? ") continue; " : ") continue;");
                p = q < close ? q + 1 : close;
            }
            if (bare)
                kevo_buf_puts(&b, " }");
            error = add_edit(x, m->tok[t].start, m->tok[end - 1].end, &b);
            t = end - 1;
        }
    }
    return error;
}

/* Whether some `if` in the inner loop r tests the loop l's variable,
 * directly or through declarations in r: without one, no guard can become
 * bounds of l's copy, and the split is not worth its parse (permute would
 * decline it anyway). */
static bool guard_on(const kevo_recipe_model *m, int l, int r)
{
    const kevo_rloop *R = &m->loop[r];
    int dep[64];
    int n_dep = 0;
    dep[n_dep++] = m->loop[l].var;
    /* the declarations in r that read l's variable, in order (C scope) */
    for (unsigned t = R->t_body; t < R->t_end; t++) {
        if (!m->tok[t].is_decl || !kevo_rtok_is(m, t + 1, "=") || n_dep == 64)
            continue;
        unsigned e = kevo_recipe_expr_end(m, t + 2, R->t_end);
        for (int k = 0; k < n_dep; k++)
            if (kevo_recipe_uses_var(m, t + 2, e, dep[k])) {
                dep[n_dep++] = m->tok[t].var;
                break;
            }
    }
    for (unsigned t = R->t_body; t < R->t_end; t++) {
        if (!kevo_rtok_is(m, t, "if") || !kevo_rtok_is(m, t + 1, "("))
            continue;
        unsigned close = kevo_rtok_match(m, t + 1);
        for (int k = 0; close != (unsigned)-1 && k < n_dep; k++)
            if (kevo_recipe_uses_var(m, t + 2, close, dep[k]))
                return true;
    }
    return false;
}

/* Read loop l's body as the scalar form into x; KEVO_EINVAL with why not. */
static int read_form(xform *x, const kevo_recipe_model *m, int l)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->l = l;
    x->s = -1;
    const kevo_rloop *L = &m->loop[l];
    if (!L->simple || L->n_pragmas > 0 || L->early_exit || !L->body_compound ||
        L->n_children != 1)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is not a simple loop with a braced body "
                              "holding one loop",
                              L->line);
    if (kevo_recipe_collapsed_into(m, l) >= 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u is collapsed into the loop at line %u: split, "
                              "the nest would no longer collapse",
                              L->line, m->loop[kevo_recipe_collapsed_into(m, l)].line);
    for (size_t d = 0; d < m->n_dir; d++)
        if (m->dir[d].start > m->tok[L->t_body].start && m->dir[d].start < m->tok[L->t_end - 1].end)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: a directive in the loop at line %u (its clauses may "
                                  "name the scalar, which the split removes)",
                                  kevo_recipe_line(m, m->dir[d].start), L->line);
    int r = -1;
    for (size_t k = (size_t)l + 1; k < m->n_loop && r < 0; k++)
        if (m->loop[k].parent == l)
            r = (int)k;
    x->r = r;
    const kevo_rloop *R = &m->loop[r];
    unsigned b0 = L->t_body + 1, b1 = L->t_end - 1;
    unsigned t = kevo_rtok_skip_comments(m, b0, b1);
    while (t < b1 && t != R->t_for) {
        unsigned semi = kevo_rtok_stmt_semi(m, t, b1);
        unsigned d = 0;
        int decl = kevo_recipe_sole_decl(m, t, semi, &d);
        if (semi >= b1 || decl < 0 || !kevo_rtok_is(m, d + 1, "=") ||
            x->n_pre == MAX_PRE)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u: before its inner loop the loop at line %u holds "
                                  "other than declarations with one initialised name",
                                  kevo_recipe_line(m, m->tok[t].start), L->line);
        x->pre0[x->n_pre] = t;
        x->pre1[x->n_pre] = semi + 1;
        x->pre_var[x->n_pre++] = decl;
        t = kevo_rtok_skip_comments(m, semi + 1, b1);
    }
    if (t != R->t_for)
        return kevo_error_set(KEVO_EINVAL, "the loop at line %u: its inner loop is not a statement "
                              "of its body", L->line);
    /* the store after the inner loop, the body's last statement */
    unsigned s0 = kevo_rtok_skip_comments(m, R->t_end, b1);
    unsigned semi = kevo_rtok_stmt_semi(m, s0, b1);
    if (s0 >= b1 || semi >= b1 || kevo_rtok_skip_comments(m, semi + 1, b1) != b1)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u does not end in one store after its inner "
                              "loop",
                              L->line);
    x->st0 = s0;
    x->st1 = semi + 1;
    x->stage = 1;
    if (!guard_on(m, l, R - m->loop))
        return kevo_error_set(KEVO_EINVAL,
                              "no guard in the loop at line %u tests '%s': no guard on it would "
                              "become its bounds, and kept in memory the scalar would only cost "
                              "passes",
                              L->line, m->var[L->var].name);
    int error;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    /* the writes of the inner loop: its own variables and the scalar */
    if ((error = kevo_recipe_writes(&w, &nw, m, R->t_for, R->t_end)) < 0)
        return error;
    for (size_t i = 0; i < nw && error == 0; i++) {
        int v = w[i].var;
        if (w[i].kind == KEVO_WRITE_SCALAR && v >= 0 &&
            kevo_recipe_declared_in(m, v, R->t_for, R->t_end))
            continue;
        bool pre = false;
        for (int k = 0; k < x->n_pre; k++)
            pre |= x->pre_var[k] == v;
        if (w[i].kind == KEVO_WRITE_SCALAR && pre && (x->s < 0 || x->s == v)) {
            x->s = v;
            continue;
        }
        error = kevo_error_set(KEVO_EINVAL,
                               "line %u writes %s: the inner loop may write only its own "
                               "variables and one scalar declared before it",
                               kevo_recipe_line(m, m->tok[w[i].t_op].start),
                               v >= 0 ? m->var[v].name : "memory");
    }
    free(w);
    if (error < 0)
        return error;
    if (x->s < 0)
        return kevo_error_set(KEVO_EINVAL, "the loop at line %u updates no scalar in its inner "
                              "loop", L->line);
    for (int k = 0; k < x->n_pre; k++)
        if (x->pre_var[k] == x->s)
            x->s_pre = k;
    if (!m->var[x->s].is_f32)
        return kevo_error_set(KEVO_EINVAL, "'%s' is not a float: kept in a float element it "
                              "would round otherwise", m->var[x->s].name);
    /* the store P[idx] = F */
    if ((error = kevo_recipe_writes(&w, &nw, m, s0, semi + 1)) < 0)
        return error;
    bool ok = nw == 1 && w[0].kind == KEVO_WRITE_ELEMENT && kevo_rtok_is(m, w[0].t_op, "=") &&
              w[0].t_lhs0 == s0 && w[0].var >= 0 && m->var[w[0].var].elem_f32;
    int target = ok ? kevo_recipe_root_param(m, w[0].var) : -1;
    if (ok) {
        x->lhs0 = w[0].t_lhs0;
        x->lhs1 = w[0].t_lhs1;
        x->f0 = w[0].t_op + 1;
        x->f1 = semi;
    }
    free(w);
    if (!ok || target < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "line %u: the loop at line %u does not end in a store `p[i] = "
                              "f(s);` into a float parameter",
                              kevo_recipe_line(m, m->tok[s0].start), L->line);
    if (!kevo_recipe_uses_var(m, x->f0, x->f1, x->s) ||
        kevo_recipe_uses_var(m, x->lhs0, x->lhs1, x->s))
        return kevo_error_set(KEVO_EINVAL, "line %u: the store does not take its value from '%s'",
                              kevo_recipe_line(m, m->tok[s0].start), m->var[x->s].name);
    if (!indexes_by(m, x->lhs0, x->lhs1, L->var))
        return kevo_error_set(KEVO_EINVAL,
                              "line %u: the stored element's last subscript does not have '%s' "
                              "as a term of its own: kevo cannot tell that each iteration keeps "
                              "its own element",
                              kevo_recipe_line(m, m->tok[s0].start), m->var[L->var].name);
    /* nothing else in the loop reads the stored buffer or the scalar;
     * calls only to pure maths (the declarations run three times) */
    for (unsigned u = L->t_lparen; u < L->t_end; u++) {
        if (u >= x->lhs0 && u < x->lhs1)
            continue;
        int v = m->tok[u].var;
        if (m->tok[u].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, u + 1, "(") && v < 0 &&
            !(kevo_rtok_is(m, u, "fmaxf") || kevo_rtok_is(m, u, "fminf") ||
              kevo_rtok_is(m, u, "fmax") || kevo_rtok_is(m, u, "fmin") ||
              kevo_rtok_is(m, u, "fabsf") || kevo_rtok_is(m, u, "sqrtf") ||
              kevo_rtok_is(m, u, "expf") || kevo_rtok_is(m, u, "logf") ||
              kevo_rtok_is(m, u, "tanhf") || kevo_rtok_is(m, u, "sizeof")))
            return kevo_error_set(KEVO_EINVAL, "line %u calls %.*s: kevo copies pure code only",
                                  kevo_recipe_line(m, m->tok[u].start),
                                  (int)(m->tok[u].end - m->tok[u].start), m->src + m->tok[u].start);
        if (v < 0)
            continue;
        if ((m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY) &&
            kevo_recipe_root_param(m, v) == target)
            return kevo_error_set(KEVO_EINVAL,
                                  "line %u reads '%s', which the store writes: kept in memory "
                                  "the scalar would change what it reads",
                                  kevo_recipe_line(m, m->tok[u].start), m->var[v].name);
        if ((m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY) &&
            kevo_recipe_root_param(m, v) < 0)
            return kevo_error_set(KEVO_EINVAL, "line %u: kevo cannot tell what '%s' points to",
                                  kevo_recipe_line(m, m->tok[u].start), m->var[v].name);
        bool in_pre_other = false;
        for (int k = 0; k < x->n_pre; k++)
            in_pre_other |= k != x->s_pre && u >= x->pre0[k] && u < x->pre1[k];
        if (v == x->s && in_pre_other)
            return kevo_error_set(KEVO_EINVAL, "line %u reads '%s' before its loop",
                                  kevo_recipe_line(m, m->tok[u].start), m->var[v].name);
    }
    /* writes in the header other than its step (it is copied three times) */
    if ((error = kevo_recipe_writes(&w, &nw, m, L->t_lparen, L->t_rparen + 1)) < 0)
        return error;
    bool other = false;
    for (size_t i = 0; i < nw; i++)
        other |= w[i].var != L->var;
    free(w);
    if (other)
        return kevo_error_set(KEVO_EINVAL, "the header of the loop at line %u writes",
                              L->line);
    /* writes in the declarations (`int a = b++;`) */
    for (int k = 0; k < x->n_pre; k++) {
        if ((error = kevo_recipe_writes(&w, &nw, m, x->pre0[k], x->pre1[k])) < 0)
            return error;
        free(w);
        if (nw > 0)
            return kevo_error_set(KEVO_EINVAL, "line %u: a declaration that writes",
                                  kevo_recipe_line(m, m->tok[x->pre0[k]].start));
    }
    /* the updates, each rewritten; every other use of the scalar declines */
    if ((error = kevo_recipe_writes(&w, &nw, m, R->t_for, R->t_end)) < 0)
        return error;
    for (size_t i = 0; i < nw && error == 0; i++)
        if (w[i].var == x->s)
            error = update_edit(x, &w[i]);
    free(w);
    if (error < 0)
        return error;
    for (unsigned u = R->t_for; u < R->t_end; u++) {
        if (m->tok[u].var != x->s)
            continue;
        bool in_edit = false;
        for (int k = 0; k < x->n_ed; k++)
            in_edit |= m->tok[u].start >= x->ed[k].a && m->tok[u].end <= x->ed[k].b;
        if (!in_edit)
            return kevo_error_set(KEVO_EINVAL, "line %u reads '%s' outside its updates",
                                  kevo_recipe_line(m, m->tok[u].start), m->var[x->s].name);
    }
    return split_statements(x);
}

/* The loop's text: the header, then ` { ` the declarations (all, or all
 * but the scalar's) and `tail`. */
static void put_copy(kevo_buf *b, const xform *x, bool with_scalar, const char *ind, size_t il)
{
    const kevo_recipe_model *m = x->m;
    const kevo_rloop *L = &m->loop[x->l];
    kevo_buf_printf(b, "%.*s", (int)il, ind);
    kevo_buf_puts(b, "    ");
    put_tokens(b, m, L->t_for, L->t_rparen + 1);
    kevo_buf_puts(b, " {\n");
    for (int k = 0; k < x->n_pre; k++)
        if (with_scalar || k != x->s_pre) {
            kevo_buf_printf(b, "%.*s        ", (int)il, ind);
            put_tokens(b, m, x->pre0[k], x->pre1[k]);
            kevo_buf_puts(b, "\n");
        }
}

int kevo_recipe__expand_scalar(char **out, unsigned *root_off, size_t *loop,
                               const kevo_recipe_model *m)
{
    *out = NULL;
    char first_why[400] = "";
    int why_stage = -1;
    xform *x = calloc(1, sizeof *x);
    if (!x)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = KEVO_EINVAL;
    for (size_t l = *loop; l < m->n_loop; l++) {
        if (m->loop[l].n_children != 1 || !m->loop[l].body_compound)
            continue;
        error = read_form(x, m, (int)l);
        if (error == 0) {
            *loop = l;
            break;
        }
        if (error != KEVO_EINVAL) {
            xform_free(x);
            free(x);
            return error;
        }
        if (x->stage > why_stage) { /* the reason of the loop that came closest */
            snprintf(first_why, sizeof first_why, "%s", kevo_error_last());
            why_stage = x->stage;
        }
        kevo_error_clear();
        xform_free(x);
    }
    if (error < 0) {
        free(x);
        *loop = m->n_loop;
        return kevo_error_set(KEVO_EINVAL, "%s",
                              first_why[0] ? first_why
                                           : "no loop holds a scalar accumulation and its store");
    }
    const kevo_rloop *L = &m->loop[x->l];
    const kevo_rloop *R = &m->loop[x->r];
    size_t il = 0;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    kevo_buf b = {0};
    kevo_buf_printf(&b, "{ /* kevo permute: '%s' kept in ", m->var[x->s].name);
    put_tokens(&b, m, x->lhs0, x->lhs1);
    kevo_buf_puts(&b, " (set, accumulated, finished) */\n");
    /* set */
    put_copy(&b, x, true, ind, il);
    kevo_buf_printf(&b, "%.*s        ", (int)il, ind);
    put_tokens(&b, m, x->lhs0, x->lhs1);
    kevo_buf_printf(&b, " = %s;\n%.*s    }\n", m->var[x->s].name, (int)il, ind);
    /* accumulated: the inner loop with its updates rewritten */
    unsigned root = (unsigned)(b.len + il + 4); /* the copy's `for` (put_copy's indent) */
    put_copy(&b, x, false, ind, il);
    kevo_buf_printf(&b, "%.*s        ", (int)il, ind);
    unsigned at = m->tok[R->t_for].start;
    for (int k = 0; k < x->n_ed; k++) { /* updates in source order */
        int first = k;
        for (int j = k + 1; j < x->n_ed; j++)
            if (x->ed[j].a < x->ed[first].a)
                first = j;
        xedit tmp = x->ed[k];
        x->ed[k] = x->ed[first];
        x->ed[first] = tmp;
        kevo_buf_printf(&b, "%.*s%s", (int)(x->ed[k].a - at), m->src + at, x->ed[k].text);
        at = x->ed[k].b;
    }
    kevo_buf_printf(&b, "%.*s\n%.*s    }\n", (int)(m->tok[R->t_end - 1].end - at), m->src + at,
                    (int)il, ind);
    /* finished, unless the store is the scalar itself */
    unsigned f0 = x->f0, f1 = x->f1;
    kevo_rtok_strip_parens(m, &f0, &f1);
    if (!(f1 == f0 + 1 && m->tok[f0].var == x->s)) {
        put_copy(&b, x, false, ind, il);
        kevo_buf_printf(&b, "%.*s        ", (int)il, ind);
        put_tokens(&b, m, x->lhs0, x->lhs1);
        kevo_buf_puts(&b, " = ");
        put_substituted(&b, x, x->f0, x->f1);
        kevo_buf_printf(&b, ";\n%.*s    }\n", (int)il, ind);
    }
    kevo_buf_printf(&b, "%.*s}", (int)il, ind);
    xform_free(x);
    free(x);
    if (kevo_buf_oom(&b)) {
        kevo_buf_free(&b);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    /* the new source: the loop's text replaced */
    unsigned a = m->tok[L->t_for].start, z = m->tok[L->t_end - 1].end;
    kevo_buf whole = {0};
    kevo_buf_printf(&whole, "%.*s", (int)a, m->src);
    *root_off = (unsigned)whole.len + root;
    kevo_buf_puts(&whole, kevo_buf_cstr(&b));
    kevo_buf_puts(&whole, m->src + z);
    kevo_buf_free(&b);
    if (kevo_buf_oom(&whole)) {
        kevo_buf_free(&whole);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    *out = kevo_buf_detach(&whole);
    return 0;
}
