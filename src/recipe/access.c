/*
 * recipe/access.c - the small, token-level data-flow analyses recipes use
 * to decline rewrites they can see are wrong: which lvalues a region of the
 * kernel writes, whether a scalar is a reduction (acc += e, acc = acc * e,
 * acc = acc > e ? acc : e, acc = fmaxf(acc, e), if (e > acc) acc = e) or a
 * per-iteration private, and whether array stores are indexed by the loops
 * that would be reordered or run in parallel.
 *
 * These are heuristics on a single function, not a dependence analysis:
 * anything they accept is still judged by kevo's correctness gate. They err
 * on the side of declining.
 *
 * Must not: edit text.
 */
#include "model.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_keyword(const kevo_recipe_model *m, unsigned t)
{
    return t < m->n_tok && m->tok[t].kind == KEVO_CTOK_KEYWORD;
}

/* Whether token k can end an operand (so a following ++ is postfix). */
static bool is_operand_end(const kevo_recipe_model *m, unsigned t0, unsigned k)
{
    if (k < t0 || k >= m->n_tok)
        return false;
    if (m->tok[k].kind == KEVO_CTOK_IDENT || m->tok[k].kind == KEVO_CTOK_LITERAL)
        return true;
    if (kevo_rtok_is(m, k, "]"))
        return true;
    if (kevo_rtok_is(m, k, ")")) {
        unsigned o = kevo_rtok_match(m, k);
        if (o == (unsigned)-1 || o == 0)
            return true;
        /* `if (c) ++x;` : the ) closes a control header */
        return !(kevo_rtok_is(m, o - 1, "if") || kevo_rtok_is(m, o - 1, "for") ||
                 kevo_rtok_is(m, o - 1, "while") || kevo_rtok_is(m, o - 1, "switch"));
    }
    return false;
}

/* First token of the postfix expression ending at `last`. */
static unsigned lhs_begin(const kevo_recipe_model *m, unsigned t0, unsigned last)
{
    unsigned j = last;
    for (;;) {
        if (kevo_rtok_is(m, j, "]") || kevo_rtok_is(m, j, ")")) {
            unsigned o = kevo_rtok_match(m, j);
            if (o == (unsigned)-1 || o < t0)
                return last;
            if (kevo_rtok_is(m, j, ")") &&
                !(o > t0 && m->tok[o - 1].kind == KEVO_CTOK_IDENT && !is_keyword(m, o - 1)))
                return o; /* parenthesised primary */
            if (o == t0)
                return o;
            j = o - 1;
            continue;
        }
        if (m->tok[j].kind == KEVO_CTOK_IDENT || m->tok[j].kind == KEVO_CTOK_LITERAL) {
            if (j >= t0 + 2 && (kevo_rtok_is(m, j - 1, ".") || kevo_rtok_is(m, j - 1, "->"))) {
                j -= 2;
                continue;
            }
            if (j >= t0 + 1 && kevo_rtok_is(m, j - 1, "."))
                return j - 1; /* designator */
            return j;
        }
        return j + 1 <= last ? j + 1 : last;
    }
}

/* One past the last token of the postfix expression starting at `first`. */
static unsigned lhs_end(const kevo_recipe_model *m, unsigned first, unsigned t1)
{
    unsigned j = first;
    if (kevo_rtok_is(m, j, "*"))
        return lhs_end(m, j + 1, t1);
    if (kevo_rtok_is(m, j, "(")) {
        unsigned c = kevo_rtok_match(m, j);
        if (c == (unsigned)-1 || c >= t1)
            return first + 1;
        j = c + 1;
    } else {
        j++;
    }
    for (;;) {
        if (j < t1 && (kevo_rtok_is(m, j, "[") || kevo_rtok_is(m, j, "("))) {
            unsigned c = kevo_rtok_match(m, j);
            if (c == (unsigned)-1 || c >= t1)
                return j;
            j = c + 1;
        } else if (j + 1 < t1 && (kevo_rtok_is(m, j, ".") || kevo_rtok_is(m, j, "->"))) {
            j += 2;
        } else {
            return j;
        }
    }
}

/* `(*(T *)&x[idx])` over [b, e): the vector store the `vectorize` recipe
 * writes (recipe_vec.c), an element write of x at idx (W consecutive
 * elements from it). */
static bool vector_element(const kevo_recipe_model *m, unsigned b, unsigned e, kevo_rwrite *w)
{
    if (e < b + 9 || !kevo_rtok_is(m, b, "(") || kevo_rtok_match(m, b) != e - 1 ||
        !kevo_rtok_is(m, b + 1, "*") || !kevo_rtok_is(m, b + 2, "("))
        return false;
    unsigned c = kevo_rtok_match(m, b + 2);
    if (c == (unsigned)-1 || c + 4 >= e || !kevo_rtok_is(m, c - 1, "*") ||
        !kevo_rtok_is(m, c + 1, "&") || m->tok[c + 2].var < 0 || !kevo_rtok_is(m, c + 3, "["))
        return false;
    unsigned rb = kevo_rtok_match(m, c + 3);
    if (rb != e - 2)
        return false;
    for (unsigned t = b + 3; t < c - 1; t++)
        if (m->tok[t].kind == KEVO_CTOK_PUNCT)
            return false; /* the type: keywords and a typedef name only */
    w->kind = KEVO_WRITE_ELEMENT;
    w->var = m->tok[c + 2].var;
    w->t_idx0 = c + 3;
    w->t_idx1 = rb + 1;
    return true;
}

static void classify_lhs(const kevo_recipe_model *m, unsigned t0, kevo_rwrite *w)
{
    unsigned b = w->t_lhs0, e = w->t_lhs1; /* [b, e) */
    w->kind = KEVO_WRITE_UNKNOWN;
    w->var = -1;
    if (b > t0 && kevo_rtok_is(m, b - 1, "*") && (b - 1 == t0 || !is_operand_end(m, t0, b - 2))) {
        /* `*expr = ...` */
        w->t_lhs0 = b - 1;
        w->kind = KEVO_WRITE_DEREF;
        for (unsigned t = b; t < e; t++)
            if (m->tok[t].var >= 0) {
                w->var = m->tok[t].var;
                break;
            }
        return;
    }
    if (kevo_rtok_is(m, b, "*")) {
        w->kind = KEVO_WRITE_DEREF;
        for (unsigned t = b; t < e; t++)
            if (m->tok[t].var >= 0) {
                w->var = m->tok[t].var;
                break;
            }
        return;
    }
    if (m->tok[b].var < 0 && vector_element(m, b, e, w))
        return;
    if (m->tok[b].var < 0) {
        if (kevo_rtok_is(m, b, "(")) {
            for (unsigned t = b; t < e; t++) {
                if (kevo_rtok_is(m, t, "*") || kevo_rtok_is(m, t, "->"))
                    w->kind = KEVO_WRITE_DEREF;
                if (w->var < 0 && m->tok[t].var >= 0)
                    w->var = m->tok[t].var;
            }
        }
        return;
    }
    w->var = m->tok[b].var;
    if (e == b + 1) {
        w->kind = KEVO_WRITE_SCALAR;
        return;
    }
    for (unsigned t = b + 1; t < e; t++) {
        if (kevo_rtok_is(m, t, "[")) {
            /* parentheses inside a subscript are not a call: skip it */
            unsigned c = kevo_rtok_match(m, t);
            if (c != (unsigned)-1 && c < e) {
                t = c;
                continue;
            }
        }
        if (kevo_rtok_is(m, t, "->") || kevo_rtok_is(m, t, "(")) {
            w->kind = KEVO_WRITE_DEREF;
            return;
        }
    }
    if (kevo_rtok_is(m, b + 1, "[")) {
        w->kind = KEVO_WRITE_ELEMENT;
        w->t_idx0 = b + 1;
        unsigned j = b + 1;
        while (j < e && kevo_rtok_is(m, j, "[")) {
            unsigned c = kevo_rtok_match(m, j);
            if (c == (unsigned)-1 || c >= e)
                break;
            j = c + 1;
        }
        w->t_idx1 = j;
        return;
    }
    if (kevo_rtok_is(m, b + 1, "."))
        w->kind = KEVO_WRITE_SCALAR; /* a member of a local struct: the struct is written */
}

static int push_write(kevo_rwrite **v, size_t *n, size_t *cap, const kevo_rwrite *w)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        kevo_rwrite *p = realloc(*v, c * sizeof(*p));
        if (!p)
            return kevo_error_set(KEVO_ENOMEM, "out of memory listing writes");
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = *w;
    return 0;
}

int kevo_recipe_writes(kevo_rwrite **out, size_t *out_n, const kevo_recipe_model *m, unsigned t0,
                       unsigned t1)
{
    int error = 0;
    kevo_rwrite *v = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    *out_n = 0;
    if (t1 > m->n_tok)
        t1 = (unsigned)m->n_tok;
    for (unsigned t = t0; t < t1; t++) {
        kevo_rwrite w = {0};
        w.t_op = t;
        if (kevo_rtok_assigns(m, t, false) && t > t0) {
            w.t_lhs1 = t;
            w.t_lhs0 = lhs_begin(m, t0, t - 1);
            if (kevo_rtok_is(m, w.t_lhs0, ".") || kevo_rtok_is(m, w.t_lhs0, "["))
                continue; /* designated initialiser */
            if (m->tok[w.t_lhs0].is_decl)
                continue; /* declaration with initialiser */
        } else if (kevo_rtok_is(m, t, "++") || kevo_rtok_is(m, t, "--")) {
            if (t > t0 && is_operand_end(m, t0, t - 1)) {
                w.t_lhs1 = t;
                w.t_lhs0 = lhs_begin(m, t0, t - 1);
            } else if (t + 1 < t1) {
                w.t_lhs0 = t + 1;
                w.t_lhs1 = lhs_end(m, t + 1, t1);
            } else {
                continue;
            }
        } else {
            continue;
        }
        if (w.t_lhs1 <= w.t_lhs0)
            continue;
        classify_lhs(m, t0, &w);
        if ((error = push_write(&v, &n, &cap, &w)) < 0)
            goto done;
    }
    *out = v;
    *out_n = n;
    v = NULL;
done:
    free(v);
    return error;
}

bool kevo_recipe_uses_var(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var)
{
    for (unsigned t = t0; t < t1 && t < m->n_tok; t++)
        if (m->tok[t].var == var)
            return true;
    return false;
}

bool kevo_recipe_declared_in(const kevo_recipe_model *m, int var, unsigned t0, unsigned t1)
{
    if (var < 0 || t1 <= t0 || t1 > m->n_tok)
        return false;
    unsigned off = m->var[var].decl_off;
    return off != UINT_MAX && off >= m->tok[t0].start && off < m->tok[t1 - 1].end;
}

/* ---- reductions --------------------------------------------------------- */

/* End (the `;`) of the expression statement starting at t, or (unsigned)-1. */
static unsigned stmt_semi(const kevo_recipe_model *m, unsigned t, unsigned t1)
{
    int depth = 0;
    for (unsigned k = t; k < t1; k++) {
        size_t n;
        const char *p = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", p[0]))
            depth++;
        else if (n == 1 && strchr(")]}", p[0])) {
            if (--depth < 0)
                return (unsigned)-1;
        } else if (n == 1 && p[0] == ';' && depth == 0)
            return k;
    }
    return (unsigned)-1;
}

/* Whether a statement can start at token t (region starts at t0). */
static bool stmt_starts(const kevo_recipe_model *m, unsigned t0, unsigned t)
{
    if (t == t0)
        return true;
    unsigned p = t - 1;
    if (kevo_rtok_is(m, p, ";") || kevo_rtok_is(m, p, "{") || kevo_rtok_is(m, p, "}") ||
        kevo_rtok_is(m, p, "else") || kevo_rtok_is(m, p, ":"))
        return true;
    if (kevo_rtok_is(m, p, ")")) {
        unsigned o = kevo_rtok_match(m, p);
        return o != (unsigned)-1 && o > 0 &&
               (kevo_rtok_is(m, o - 1, "if") || kevo_rtok_is(m, o - 1, "for") ||
                kevo_rtok_is(m, o - 1, "while"));
    }
    return false;
}

/* Whether [a,b) has, at parenthesis depth 0, a token from `bad` (NULL
 * terminated). */
static bool has_top_level(const kevo_recipe_model *m, unsigned a, unsigned b,
                          const char *const *bad)
{
    int depth = 0;
    for (unsigned k = a; k < b; k++) {
        size_t n;
        const char *p = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", p[0])) {
            depth++;
            continue;
        }
        if (n == 1 && strchr(")]}", p[0])) {
            depth--;
            continue;
        }
        if (depth != 0)
            continue;
        for (const char *const *q = bad; *q; q++)
            if (strlen(*q) == n && memcmp(*q, p, n) == 0)
                return true;
    }
    return false;
}

/* Operators that bind looser than + (or are side effects). */
static const char *const looser_than_add[] = {"?",  ":", "<", ">", "<=", ">=", "==", "!=", "&&",
                                              "||", "&", "|", "^", "<<", ">>", ",",  "=",  NULL};
static const char *const looser_than_mul[] = {
    "?", ":", "<",  ">",  "<=", ">=", "==", "!=", "&&", "||", "&",
    "|", "^", "<<", ">>", ",",  "=",  "+",  "-",  "/",  "%",  NULL};

/* Split a conditional `[(]X relop Y[)] ? P : Q` in [a,b). */
static bool split_conditional(const kevo_recipe_model *m, unsigned a, unsigned b, unsigned x[2],
                              unsigned y[2], int *relop, unsigned p[2], unsigned q[2])
{
    static const char *const rel[] = {">", ">=", "<", "<="};
    int depth = 0;
    unsigned qm = (unsigned)-1, colon = (unsigned)-1;
    for (unsigned k = a; k < b; k++) {
        size_t n;
        const char *s = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", s[0]))
            depth++;
        else if (n == 1 && strchr(")]}", s[0]))
            depth--;
        else if (depth == 0 && n == 1 && s[0] == '?' && qm == (unsigned)-1)
            qm = k;
        else if (depth == 0 && n == 1 && s[0] == ':' && qm != (unsigned)-1 && colon == (unsigned)-1)
            colon = k;
    }
    if (qm == (unsigned)-1 || colon == (unsigned)-1)
        return false;
    unsigned c0 = a, c1 = qm;
    if (kevo_rtok_is(m, c0, "(") && kevo_rtok_match(m, c0) == c1 - 1) {
        c0++;
        c1--;
    }
    depth = 0;
    unsigned r = (unsigned)-1;
    for (unsigned k = c0; k < c1; k++) {
        size_t n;
        const char *s = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", s[0]))
            depth++;
        else if (n == 1 && strchr(")]}", s[0]))
            depth--;
        else if (depth == 0)
            for (int i = 0; i < 4; i++)
                if (strlen(rel[i]) == n && memcmp(rel[i], s, n) == 0) {
                    if (r != (unsigned)-1)
                        return false;
                    r = k;
                    *relop = i;
                }
    }
    if (r == (unsigned)-1)
        return false;
    x[0] = c0, x[1] = r, y[0] = r + 1, y[1] = c1;
    p[0] = qm + 1, p[1] = colon, q[0] = colon + 1, q[1] = b;
    return x[1] > x[0] && y[1] > y[0] && p[1] > p[0] && q[1] > q[0];
}

static bool is_single_var(const kevo_recipe_model *m, const unsigned r[2], int var)
{
    unsigned a = r[0], b = r[1];
    while (b - a >= 3 && kevo_rtok_is(m, a, "(") && kevo_rtok_match(m, a) == b - 1) {
        a++;
        b--;
    }
    return b == a + 1 && m->tok[a].var == var;
}

/* max or min from `X relop Y ? P : Q` where one of X,Y is the variable:
 * relop index 0 '>' 1 '>=' 2 '<' 3 '<='; x_is_var: X is the variable;
 * p_is_var: P is the variable. */
static const char *minmax(int relop, bool x_is_var, bool p_is_var)
{
    bool greater = relop <= 1;           /* X > Y */
    bool picks_x = x_is_var == p_is_var; /* P is X */
    return greater == picks_x ? "max" : "min";
}

/* Try to read the statement at o (an occurrence of var at a statement
 * start) as a reduction update. On success sets *op, the number of
 * occurrences of var it accounts for in *uses, and returns the `;`. */
static unsigned match_update(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var,
                             unsigned o, const char **op, int *uses)
{
    unsigned s = stmt_semi(m, o, t1);
    if (s == (unsigned)-1 || !stmt_starts(m, t0, o) || s < o + 3)
        return (unsigned)-1;
    int vt = m->var[var].vtype;
    static const char *const compound[] = {"+=", "-=", "*=", "&=", "|=", "^="};
    static const char *const compound_op[] = {"+", "+", "*", "&", "|", "^"};
    for (int i = 0; i < 6; i++) {
        if (!kevo_rtok_is(m, o + 1, compound[i]))
            continue;
        if (kevo_recipe_uses_var(m, o + 2, s, var) ||
            has_top_level(m, o + 2, s, (const char *const[]){",", NULL}))
            return (unsigned)-1;
        if (i >= 3 && vt != KEVO_VTYPE_INT)
            return (unsigned)-1;
        *op = compound_op[i];
        *uses = 1;
        return s;
    }
    if (!kevo_rtok_is(m, o + 1, "="))
        return (unsigned)-1;
    unsigned e0 = o + 2, e1 = s;
    /* v = v op R */
    if (m->tok[e0].var == var && e1 > e0 + 2) {
        bool add = kevo_rtok_is(m, e0 + 1, "+") || kevo_rtok_is(m, e0 + 1, "-");
        bool mul = kevo_rtok_is(m, e0 + 1, "*");
        if ((add || mul) && !kevo_recipe_uses_var(m, e0 + 2, e1, var) &&
            !has_top_level(m, e0 + 2, e1, mul ? looser_than_mul : looser_than_add)) {
            *op = add ? "+" : "*";
            *uses = 2;
            return s;
        }
    }
    /* v = R op v */
    if (m->tok[e1 - 1].var == var && e1 > e0 + 2) {
        bool add = kevo_rtok_is(m, e1 - 2, "+");
        bool mul = kevo_rtok_is(m, e1 - 2, "*");
        if ((add || mul) && !kevo_recipe_uses_var(m, e0, e1 - 2, var) &&
            !has_top_level(m, e0, e1 - 2, mul ? looser_than_mul : looser_than_add)) {
            *op = add ? "+" : "*";
            *uses = 2;
            return s;
        }
    }
    /* v = fmaxf(v, R) and friends */
    static const char *const fns[] = {"fmax", "fmaxf", "fmaxl", "fmin", "fminf", "fminl"};
    for (int i = 0; i < 6; i++) {
        if (!kevo_rtok_is(m, e0, fns[i]) || !kevo_rtok_is(m, e0 + 1, "(") ||
            kevo_rtok_match(m, e0 + 1) != e1 - 1)
            continue;
        unsigned comma = (unsigned)-1;
        int depth = 0;
        for (unsigned k = e0 + 2; k < e1 - 1; k++) {
            size_t n;
            const char *p = kevo_rtok_text(m, k, &n);
            if (n == 1 && strchr("([{", p[0]))
                depth++;
            else if (n == 1 && strchr(")]}", p[0]))
                depth--;
            else if (depth == 0 && n == 1 && p[0] == ',')
                comma = k;
        }
        if (comma == (unsigned)-1)
            return (unsigned)-1;
        unsigned a[2] = {e0 + 2, comma}, b[2] = {comma + 1, e1 - 1};
        bool av = is_single_var(m, a, var), bv = is_single_var(m, b, var);
        if (av == bv || kevo_recipe_uses_var(m, av ? b[0] : a[0], av ? b[1] : a[1], var))
            return (unsigned)-1;
        *op = i < 3 ? "max" : "min";
        *uses = 2;
        return s;
    }
    /* v = X relop Y ? P : Q */
    unsigned x[2], y[2], p[2], q[2];
    int relop = 0;
    if (split_conditional(m, e0, e1, x, y, &relop, p, q)) {
        bool xv = is_single_var(m, x, var), yv = is_single_var(m, y, var);
        bool pv = is_single_var(m, p, var), qv = is_single_var(m, q, var);
        if (xv == yv || pv == qv)
            return (unsigned)-1;
        const unsigned *other_c = xv ? y : x, *other_v = pv ? q : p;
        if (kevo_recipe_uses_var(m, other_c[0], other_c[1], var) ||
            !kevo_rtok_same(m, other_c[0], other_c[1], other_v[0], other_v[1]))
            return (unsigned)-1;
        *op = minmax(relop, xv, pv);
        *uses = 3;
        return s;
    }
    return (unsigned)-1;
}

/* `if (X relop Y) [{] v = R; [}]` at token i (the `if`). */
static unsigned match_if_update(const kevo_recipe_model *m, unsigned t1, int var, unsigned i,
                                const char **op)
{
    static const char *const rel[] = {">", ">=", "<", "<="};
    if (!kevo_rtok_is(m, i, "if") || !kevo_rtok_is(m, i + 1, "("))
        return (unsigned)-1;
    unsigned rp = kevo_rtok_match(m, i + 1);
    if (rp == (unsigned)-1 || rp >= t1)
        return (unsigned)-1;
    unsigned r = (unsigned)-1;
    int relop = -1, depth = 0;
    for (unsigned k = i + 2; k < rp; k++) {
        size_t n;
        const char *s = kevo_rtok_text(m, k, &n);
        if (n == 1 && strchr("([{", s[0]))
            depth++;
        else if (n == 1 && strchr(")]}", s[0]))
            depth--;
        else if (depth == 0)
            for (int j = 0; j < 4; j++)
                if (strlen(rel[j]) == n && memcmp(rel[j], s, n) == 0) {
                    if (r != (unsigned)-1)
                        return (unsigned)-1;
                    r = k;
                    relop = j;
                }
    }
    if (r == (unsigned)-1)
        return (unsigned)-1;
    unsigned x[2] = {i + 2, r}, y[2] = {r + 1, rp};
    unsigned a = rp + 1;
    bool braced = kevo_rtok_is(m, a, "{");
    if (braced)
        a++;
    if (m->tok[a].var != var || !kevo_rtok_is(m, a + 1, "="))
        return (unsigned)-1;
    unsigned s = stmt_semi(m, a, t1);
    if (s == (unsigned)-1)
        return (unsigned)-1;
    unsigned end = s;
    if (braced) {
        if (!kevo_rtok_is(m, s + 1, "}"))
            return (unsigned)-1;
        end = s + 1;
    }
    if (kevo_rtok_is(m, end + 1, "else"))
        return (unsigned)-1;
    bool xv = is_single_var(m, x, var), yv = is_single_var(m, y, var);
    if (xv == yv)
        return (unsigned)-1;
    const unsigned *other = xv ? y : x;
    if (kevo_recipe_uses_var(m, other[0], other[1], var) ||
        !kevo_rtok_same(m, other[0], other[1], a + 2, s))
        return (unsigned)-1;
    /* if (X > Y) v = other: the chosen value is the non-variable side. */
    *op = minmax(relop, xv, false);
    return end;
}

/* Whether every occurrence of var in [t0,t1) is part of a reduction update
 * with one operator; *op gets it. */
static bool is_reduction(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var,
                         const char **op)
{
    int vt = m->var[var].vtype;
    if (vt != KEVO_VTYPE_INT && vt != KEVO_VTYPE_FLOAT)
        return false;
    int total = 0, matched = 0;
    const char *the_op = NULL;
    for (unsigned t = t0; t < t1; t++)
        total += m->tok[t].var == var;
    for (unsigned t = t0; t < t1; t++) {
        const char *o = NULL;
        int uses = 0;
        unsigned end = (unsigned)-1;
        if (kevo_rtok_is(m, t, "if")) {
            end = match_if_update(m, t1, var, t, &o);
            uses = 2;
        } else if (m->tok[t].var == var) {
            end = match_update(m, t0, t1, var, t, &o, &uses);
        }
        if (end == (unsigned)-1)
            continue;
        if (the_op && strcmp(the_op, o) != 0)
            return false;
        the_op = o;
        matched += uses;
        t = end;
    }
    if (!the_op || matched != total)
        return false;
    *op = the_op;
    return true;
}

/* Whether the first occurrence of var in [t0,t1) is an unconditional
 * `var = E;` with E free of var, and every other occurrence follows it in
 * the same block. */
static bool is_assigned_first(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var)
{
    unsigned o = t0;
    while (o < t1 && m->tok[o].var != var)
        o++;
    if (o >= t1 || !kevo_rtok_is(m, o + 1, "="))
        return false;
    if (o != t0 && !(kevo_rtok_is(m, o - 1, ";") || kevo_rtok_is(m, o - 1, "{") ||
                     kevo_rtok_is(m, o - 1, "}")))
        return false;
    unsigned s = stmt_semi(m, o, t1);
    if (s == (unsigned)-1 || kevo_recipe_uses_var(m, o + 2, s, var))
        return false;
    /* innermost block holding o */
    unsigned b0 = t0, b1 = t1;
    int depth = 0;
    for (unsigned k = o; k-- > t0;) {
        if (kevo_rtok_is(m, k, "}"))
            depth++;
        else if (kevo_rtok_is(m, k, "{") && depth-- == 0) {
            unsigned c = kevo_rtok_match(m, k);
            if (c != (unsigned)-1) {
                b0 = k;
                b1 = c + 1;
            }
            break;
        }
    }
    for (unsigned k = t0; k < t1; k++)
        if (m->tok[k].var == var && (k < o || k < b0 || k >= b1))
            return false;
    return true;
}

static unsigned fn_tokens_end(const kevo_recipe_model *m)
{
    return (unsigned)m->n_tok;
}

int kevo_recipe_scalars(kevo_rscalars *out, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                        unsigned t_after)
{
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;

    memset(out, 0, sizeof(*out));
    if ((error = kevo_recipe_writes(&w, &nw, m, t0, t1)) < 0)
        return error;
    for (size_t i = 0; i < nw; i++) {
        int v = w[i].var;
        if (w[i].kind != KEVO_WRITE_SCALAR || v < 0 || kevo_recipe_declared_in(m, v, t0, t1))
            continue;
        bool seen = false;
        for (size_t k = 0; k < out->n_priv; k++)
            seen |= out->priv[k] == v;
        for (size_t k = 0; k < out->n_red; k++)
            seen |= out->red_var[k] == v;
        if (seen)
            continue;
        unsigned line = kevo_recipe_line(m, m->tok[w[i].t_op].start);
        bool used_after = kevo_recipe_uses_var(m, t_after, fn_tokens_end(m), v);
        bool inner_iv = false;
        for (size_t l = 0; l < m->n_loop; l++)
            if (m->loop[l].t_for >= t0 && m->loop[l].t_for < t1 && m->loop[l].var == v)
                inner_iv = true;
        const char *op = NULL;
        if (out->n_priv >= 16 || out->n_red >= 16) {
            error = kevo_error_set(KEVO_EINVAL, "too many scalars written in the loop at line %u",
                                   line);
            goto done;
        }
        if (inner_iv && !used_after) {
            out->priv[out->n_priv++] = v;
        } else if (is_reduction(m, t0, t1, v, &op)) {
            out->red_var[out->n_red] = v;
            out->red_op[out->n_red++] = op;
        } else if (!used_after && is_assigned_first(m, t0, t1, v)) {
            out->priv[out->n_priv++] = v;
        } else {
            error = kevo_error_set(
                KEVO_EINVAL,
                "'%s' (declared outside the loop) is written inside it at line %u and is "
                "neither a reduction (acc += e, acc = acc * e, max/min) nor assigned before "
                "use in each iteration%s; iterations would share it",
                m->var[v].name, line, used_after ? " and unused after the loop" : "");
            goto done;
        }
    }
done:
    free(w);
    return error;
}

static void lhs_text(char *buf, size_t size, const kevo_recipe_model *m, const kevo_rwrite *w)
{
    unsigned a = m->tok[w->t_lhs0].start, b = m->tok[w->t_lhs1 - 1].end;
    int n = (int)(b - a);
    if (n > 60)
        snprintf(buf, size, "%.57s...", m->src + a);
    else
        snprintf(buf, size, "%.*s", n, m->src + a);
}

/* The token declaring variable v, or (unsigned)-1. */
unsigned kevo_recipe_decl_token(const kevo_recipe_model *m, int v)
{
    for (unsigned t = 0; t < m->n_tok; t++)
        if (m->tok[t].var == v && m->tok[t].is_decl)
            return t;
    return (unsigned)-1;
}

int kevo_recipe_loop_of(const kevo_recipe_model *m, unsigned t)
{
    int in = -1; /* loops are in source order: a later one holding t lies inside */
    for (size_t l = 0; l < m->n_loop; l++)
        if (m->loop[l].t_body <= t && t < m->loop[l].t_end)
            in = (int)l;
    return in;
}

static bool scalar_written(const kevo_rwrite *w, size_t nw, int v)
{
    for (size_t i = 0; i < nw; i++)
        if (w[i].kind == KEVO_WRITE_SCALAR && w[i].var == v)
            return true;
    return false;
}

/* Whether the operand ending at token t is divided (`/` or `%` follows)
 * by something other than the step of var's loop: `(j - j0) / w` under
 * `for (...; j += w)` still tells j's iterations apart, `c / CG` under
 * `c++` does not. */
static bool divided(const kevo_recipe_model *m, unsigned t, unsigned b, int var)
{
    if (t + 1 >= b || !(kevo_rtok_is(m, t + 1, "/") || kevo_rtok_is(m, t + 1, "%")))
        return false;
    if (!kevo_rtok_is(m, t + 1, "/") || t + 2 >= b)
        return true;
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        unsigned r = L->t_rparen;
        if (L->var != var || r < 3 || m->tok[r - 3].var != var || !kevo_rtok_is(m, r - 2, "+="))
            continue;
        if (kevo_rtok_same(m, r - 1, r, t + 2, t + 3) &&
            (t + 3 >= b || !(kevo_rtok_is(m, t + 3, "(") || kevo_rtok_is(m, t + 3, "["))))
            return false;
    }
    return true;
}

/* Whether tokens [a,b) reach var: name it, or name a variable declared in
 * the region [t0,t1) that the region never writes and whose initialiser
 * reaches it (at most 8 declarations deep). A use that only divides (`v
 * / d`, `(... v ...) % d`) does not count: several values of var give one
 * value there, so iterations of var's loop would share the element. */
static bool reaches_var(const kevo_recipe_model *m, unsigned a, unsigned b, int var, unsigned t0,
                        unsigned t1, const kevo_rwrite *w, size_t nw, int depth)
{
    for (unsigned t = a; t < b && t < m->n_tok; t++) {
        if (kevo_rtok_is(m, t, "(")) {
            unsigned c = kevo_rtok_match(m, t);
            if (c != (unsigned)-1 && c < b && divided(m, c, b, var)) {
                t = c;
                continue;
            }
        }
        int v = m->tok[t].var;
        if (v < 0 || divided(m, t, b, var))
            continue;
        if (v == var)
            return true;
        if (depth >= 8 || !kevo_recipe_declared_in(m, v, t0, t1) || scalar_written(w, nw, v))
            continue;
        unsigned d = kevo_recipe_decl_token(m, v);
        if (d == (unsigned)-1 || !kevo_rtok_is(m, d + 1, "="))
            continue;
        unsigned e = kevo_recipe_expr_end(m, d + 2, (unsigned)m->n_tok);
        if (reaches_var(m, d + 2, e, var, t0, t1, w, nw, depth + 1))
            return true;
    }
    return false;
}

/* The loop variables whose iterations a store's index tells apart: var,
 * and the variable of each loop in [t0,t1) whose lower and upper bounds
 * both use one of them (a tile's point loop). */
static size_t derived_vars(const kevo_recipe_model *m, int var, unsigned t0, unsigned t1,
                           int set[16])
{
    size_t n = 0;
    set[n++] = var;
    for (size_t l = 0; l < m->n_loop && n < 16; l++) {
        const kevo_rloop *L = &m->loop[l];
        if (L->t_for < t0 || L->t_for >= t1 || L->var < 0)
            continue;
        bool lb = false, ub = false;
        for (size_t k = 0; k < n; k++) {
            lb |= kevo_recipe_uses_var(m, L->t_lb0, L->t_lb1, set[k]);
            ub |= kevo_recipe_uses_var(m, L->t_ub0, L->t_ub1, set[k]);
        }
        if (lb && ub)
            set[n++] = L->var;
    }
    return n;
}

/* ---- scatter overlap ------------------------------------------------------
 * A store index is a sum of coordinates; `ih + kh` (a transposed
 * convolution's scatter) lets iterations ih and ih + 1 of a parallel loop
 * reach one element through different kh. At each level of the sum (a
 * parenthesised sum scaled by a factor is a level of its own, the
 * row-major `(a * B + b) * C + c`; a variable declared in the region from
 * a sum joins the level it is used at), the parallel loop's term `v * S`
 * (S one token, or 1) and another loop's term `u * T` are judged by apart().
 * Terms that are not a loop variable times one token are not judged. */

typedef struct sum_term {
    int var;         /* the loop variable */
    unsigned s0, s1; /* its factor's token, or s0 == s1 for 1 */
} sum_term;

typedef struct sum_level {
    sum_term t[32];
    int n;
} sum_level;

static int loop_of_var(const kevo_recipe_model *m, int v)
{
    for (size_t l = 0; l < m->n_loop; l++)
        if (m->loop[l].var == v)
            return (int)l;
    return -1;
}

bool kevo_recipe_int_constant(const kevo_recipe_model *m, unsigned t, long *value)
{
    size_t n;
    const char *s = kevo_rtok_text(m, t, &n);
    char *end;
    if (m->tok[t].kind == KEVO_CTOK_LITERAL) {
        *value = strtol(s, &end, 0);
        return end != s && (size_t)(end - s) <= n && strspn(end, "uUlL") >= (size_t)(s + n - end);
    }
    int v = m->tok[t].var;
    if (v < 0 || m->var[v].vtype != KEVO_VTYPE_INT)
        return false;
    unsigned d = kevo_recipe_decl_token(m, v);
    if (d == (unsigned)-1 || d + 3 >= m->n_tok || !kevo_rtok_is(m, d + 1, "=") ||
        m->tok[d + 2].kind != KEVO_CTOK_LITERAL ||
        !(kevo_rtok_is(m, d + 3, ";") || kevo_rtok_is(m, d + 3, ",")))
        return false;
    return !kevo_recipe_var_written(m, v) && kevo_recipe_int_constant(m, d + 2, value);
}

bool kevo_recipe_var_written(const kevo_recipe_model *m, int v)
{
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if (kevo_recipe_writes(&w, &nw, m, m->t_fbody, (unsigned)m->n_tok) < 0) {
        kevo_error_clear();
        return true; /* unreadable: assume it is */
    }
    bool written = scalar_written(w, nw, v);
    free(w);
    return written;
}

int kevo_recipe_sole_decl(const kevo_recipe_model *m, unsigned t0, unsigned t1, unsigned *tok)
{
    int n = 0, var = -1;
    for (unsigned k = t0; k < t1; k++)
        if (m->tok[k].is_decl) {
            n++;
            var = m->tok[k].var;
            *tok = k;
        }
    return n == 0 ? -1 : n == 1 && var >= 0 ? var : -2;
}

/* The constant extent of loop l: `for (T u = 0; u < E; ...)`, E a
 * constant (kevo_recipe_int_constant). */
static bool loop_extent(const kevo_recipe_model *m, int l, long *extent)
{
    if (l < 0)
        return false;
    const kevo_rloop *L = &m->loop[l];
    return L->t_lb1 == L->t_lb0 + 1 && kevo_rtok_is(m, L->t_lb0, "0") &&
           L->cond_op == KEVO_COND_LT && L->t_ub1 == L->t_ub0 + 1 &&
           kevo_recipe_int_constant(m, L->t_ub0, extent);
}

/* Whether tokens [a,b) name the token at f (the same variable, or the
 * same literal), directly or through the initialisers of the variables
 * they name. */
static bool mentions(const kevo_recipe_model *m, unsigned a, unsigned b, unsigned f, int depth)
{
    for (unsigned t = a; t < b && t < m->n_tok; t++) {
        if (m->tok[t].var == m->tok[f].var && kevo_rtok_same(m, t, t + 1, f, f + 1))
            return true;
        int v = m->tok[t].var;
        if (v < 0 || depth >= 4 || v == m->tok[f].var)
            continue;
        unsigned d = kevo_recipe_decl_token(m, v);
        if (d != (unsigned)-1 && d != t && kevo_rtok_is(m, d + 1, "=") &&
            mentions(m, d + 2, kevo_recipe_expr_end(m, d + 2, (unsigned)m->n_tok), f, depth + 1))
            return true;
    }
    return false;
}

/* Whether loop l runs `u < B`, B naming a variable and not written from
 * the token at f: `kh < KS` (or `kh < KS / 4 * 4`, the unrolled copy, and
 * its remainder) beside `ih * S`, two sizes given at run time with nothing
 * that ties them. A loop bound written from f (`c < C` beside `n * C`, `j < j_end` with `j_end =
 * N / 16 * 16` beside `i * N`, `j < OCG` with `OCG = OC / G` beside `n *
 * OC`) is the row-major linearisation, and other forms (a literal bound, a
 * loop running down) are left to it as well. */
static bool loop_unrelated(const kevo_recipe_model *m, int l, unsigned f)
{
    if (l < 0)
        return false;
    const kevo_rloop *L = &m->loop[l];
    if (L->cond_op != KEVO_COND_LT || L->t_ub1 <= L->t_ub0)
        return false;
    bool named = false;
    for (unsigned t = L->t_ub0; t < L->t_ub1; t++)
        if (m->tok[t].kind == KEVO_CTOK_IDENT && m->tok[t].var >= 0) {
            long c;
            if (kevo_recipe_int_constant(m, t, &c))
                continue; /* `const int64_t KH = 3`: a literal bound */
            named = true;
            if (mentions(m, f, f + 1, t, 0)) /* `OH = (H - 1) * S + K` beside kh < K */
                return false;
        }
    return named && !mentions(m, L->t_ub0, L->t_ub1, f, 0);
}

/* Whether terms v * S and u * T (u a loop inside the region) keep
 * iterations of v apart. Both factors constants (1 when absent), the
 * scatter's `ih + kh`, `id * SD - PD + kd * DLD`: apart when one term's
 * whole range stays below the other's step. A symbolic factor is taken for
 * a row-major linearisation (`n * C + c`, `(n * C + g * CG) * HW`) except
 * where the other loop's bound is a name nothing ties to the factor
 * (loop_unrelated): `ih * S + kh` with kh below KS, S a stride given at
 * run time, can meet for two ih (a scatter: threads over ih would race). */
static bool apart(const kevo_recipe_model *m, const sum_term *v, const sum_term *u)
{
    long sv = 1, su = 1, ev = 0, eu = 0;
    bool cv = v->s1 == v->s0 || kevo_recipe_int_constant(m, v->s0, &sv);
    bool cu = u->s1 == u->s0 || kevo_recipe_int_constant(m, u->s0, &su);
    if (!cv || !cu) {
        if (!cv && u->s1 == u->s0 && v->s1 == v->s0 + 1)
            return !loop_unrelated(m, loop_of_var(m, u->var), v->s0);
        if (!cu && v->s1 == v->s0 && u->s1 == u->s0 + 1)
            return !loop_unrelated(m, loop_of_var(m, v->var), u->s0);
        return true;
    }
    if (sv <= 0 || su <= 0)
        return false;
    if (loop_extent(m, loop_of_var(m, u->var), &eu) && su * eu <= sv)
        return true;
    return loop_extent(m, loop_of_var(m, v->var), &ev) && sv * ev <= su;
}

static bool level_overlaps(const kevo_recipe_model *m, unsigned a, unsigned b, int var, unsigned t0,
                           unsigned t1, const kevo_rwrite *w, size_t nw, int depth, int *partner);

/* Add the terms of the sum [a,b) to lv; a scaled group is a level of its
 * own, checked at once (true: an overlap there). */
static bool collect_terms(sum_level *lv, const kevo_recipe_model *m, unsigned a, unsigned b,
                          int var, unsigned t0, unsigned t1, const kevo_rwrite *w, size_t nw,
                          int depth, int *partner)
{
    while (a < b) {
        unsigned e = a;
        for (int dp = 0; e < b; e++) {
            if (kevo_rtok_is(m, e, "(") || kevo_rtok_is(m, e, "["))
                dp++;
            else if (kevo_rtok_is(m, e, ")") || kevo_rtok_is(m, e, "]"))
                dp--;
            else if (dp == 0 && e > a && (kevo_rtok_is(m, e, "+") || kevo_rtok_is(m, e, "-")) &&
                     is_operand_end(m, a, e - 1))
                break;
        }
        unsigned s = a, t = e;
        while (s < t && (kevo_rtok_is(m, s, "+") || kevo_rtok_is(m, s, "-")))
            s++;
        a = e;
        if (s >= t || depth > 8)
            continue;
        /* ( X ) : the same level */
        if (kevo_rtok_is(m, s, "(") && kevo_rtok_match(m, s) == t - 1) {
            if (collect_terms(lv, m, s + 1, t - 1, var, t0, t1, w, nw, depth + 1, partner))
                return true;
            continue;
        }
        /* ( X ) * F, F * ( X ): a level of its own */
        unsigned g0 = 0, g1 = 0;
        if (kevo_rtok_is(m, s, "(") && kevo_rtok_match(m, s) + 1 < t &&
            kevo_rtok_is(m, kevo_rtok_match(m, s) + 1, "*")) {
            g0 = s + 1;
            g1 = kevo_rtok_match(m, s);
        } else if (t - s > 3 && kevo_rtok_is(m, t - 1, ")") && kevo_rtok_is(m, s + 1, "*") &&
                   kevo_rtok_match(m, t - 1) == s + 2) {
            g0 = s + 3;
            g1 = t - 1;
        }
        if (g1 > g0) {
            if (level_overlaps(m, g0, g1, var, t0, t1, w, nw, depth + 1, partner))
                return true;
            continue;
        }
        /* v, v * S, S * v: a loop variable, or a declaration of the region */
        unsigned vt = s, f0 = s, f1 = s;
        if (t == s + 3 && kevo_rtok_is(m, s + 1, "*")) {
            bool first = m->tok[s].var >= 0 && loop_of_var(m, m->tok[s].var) >= 0;
            vt = first ? s : s + 2;
            f0 = first ? s + 2 : s;
            f1 = f0 + 1;
        } else if (t != s + 1)
            continue;
        int v = m->tok[vt].var;
        if (v < 0)
            continue;
        if (loop_of_var(m, v) >= 0) {
            if (lv->n < 32)
                lv->t[lv->n++] = (sum_term){v, f0, f1};
            continue;
        }
        if (!kevo_recipe_declared_in(m, v, t0, t1) || scalar_written(w, nw, v))
            continue;
        unsigned d = kevo_recipe_decl_token(m, v);
        if (d == (unsigned)-1 || !kevo_rtok_is(m, d + 1, "="))
            continue;
        unsigned de = kevo_recipe_expr_end(m, d + 2, (unsigned)m->n_tok);
        bool scaled = f1 > f0;
        if (scaled ? level_overlaps(m, d + 2, de, var, t0, t1, w, nw, depth + 1, partner)
                   : collect_terms(lv, m, d + 2, de, var, t0, t1, w, nw, depth + 1, partner))
            return true;
    }
    return false;
}

/* Whether, in the sum [a,b), var's term has a neighbour from a loop of the
 * region [t0,t1) that can reach the same value (*partner: its variable). */
static bool level_overlaps(const kevo_recipe_model *m, unsigned a, unsigned b, int var, unsigned t0,
                           unsigned t1, const kevo_rwrite *w, size_t nw, int depth, int *partner)
{
    sum_level lv = {.n = 0};
    if (collect_terms(&lv, m, a, b, var, t0, t1, w, nw, depth, partner))
        return true;
    for (int i = 0; i < lv.n; i++) {
        if (lv.t[i].var != var)
            continue;
        for (int k = 0; k < lv.n; k++) {
            int u = lv.t[k].var;
            int l = loop_of_var(m, u);
            if (k == i || u == var || l < 0 || m->loop[l].t_for < t0 || m->loop[l].t_for >= t1)
                continue;
            if (!apart(m, &lv.t[i], &lv.t[k])) {
                *partner = u;
                return true;
            }
        }
    }
    return false;
}

static bool skipped(int v, const int *skip, size_t nskip)
{
    for (size_t i = 0; i < nskip; i++)
        if (skip[i] == v)
            return true;
    return false;
}

int kevo_recipe_stores_indexed(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                               const int *vars, size_t n)
{
    return kevo_recipe_stores_indexed_except(m, t0, t1, vars, n, NULL, 0);
}

int kevo_recipe_stores_indexed_except(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                                      const int *vars, size_t n, const int *skip, size_t nskip)
{
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    char text[80];

    if ((error = kevo_recipe_writes(&w, &nw, m, t0, t1)) < 0)
        return error;
    for (size_t i = 0; i < nw; i++) {
        if (w[i].kind == KEVO_WRITE_SCALAR || (w[i].var >= 0 && skipped(w[i].var, skip, nskip)))
            continue;
        /* a store through a pointer the region declares: into one of the
         * kernel's buffers when the pointer derives from a parameter, its
         * own memory otherwise (a local array, a private buffer) */
        bool via_local = w[i].var >= 0 && kevo_recipe_declared_in(m, w[i].var, t0, t1);
        if (via_local && (m->var[w[i].var].vtype != KEVO_VTYPE_POINTER ||
                          kevo_recipe_root_param(m, w[i].var) < 0))
            continue;
        unsigned line = kevo_recipe_line(m, m->tok[w[i].t_op].start);
        lhs_text(text, sizeof(text), m, &w[i]);
        if (w[i].kind != KEVO_WRITE_ELEMENT) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "store to '%s' at line %u goes through a pointer expression: "
                                   "kevo cannot tell which element each iteration writes",
                                   text, line);
            goto done;
        }
        unsigned p0 = 0, p1 = 0; /* the pointer's initialiser */
        if (via_local) {
            unsigned d = kevo_recipe_decl_token(m, w[i].var);
            if (d != (unsigned)-1 && kevo_rtok_is(m, d + 1, "=")) {
                p0 = d + 2;
                p1 = kevo_recipe_expr_end(m, p0, (unsigned)m->n_tok);
            }
        }
        for (size_t k = 0; k < n; k++) {
            int set[16];
            size_t ns = derived_vars(m, vars[k], t0, t1, set);
            bool told = false;
            for (size_t s = 0; s < ns && !told; s++)
                told = reaches_var(m, w[i].t_idx0, w[i].t_idx1, set[s], t0, t1, w, nw, 0) ||
                       (p1 > p0 && reaches_var(m, p0, p1, set[s], t0, t1, w, nw, 0));
            if (!told) {
                error = kevo_error_set(KEVO_EINVAL,
                                       "store to '%s' at line %u does not use the loop variable "
                                       "'%s' (or only divides it): iterations of that loop would "
                                       "write the same element",
                                       text, line, m->var[vars[k]].name);
                goto done;
            }
            int partner = -1;
            if (level_overlaps(m, w[i].t_idx0 + 1, w[i].t_idx1 - 1, vars[k], t0, t1, w, nw, 0,
                               &partner) ||
                (p1 > p0 && level_overlaps(m, p0, p1, vars[k], t0, t1, w, nw, 0, &partner))) {
                error = kevo_error_set(
                    KEVO_EINVAL,
                    "store to '%s' at line %u: '%s' is added to '%s' of an inner loop in its "
                    "index, so two iterations of the '%s' loop can write the same element (a "
                    "scatter)",
                    text, line, m->var[vars[k]].name, partner >= 0 ? m->var[partner].name : "?",
                    m->var[vars[k]].name);
                goto done;
            }
        }
    }
done:
    free(w);
    return error;
}

/* Whether token t is the first token of the left-hand side of one of the
 * writes. */
static bool is_lhs_start(const kevo_rwrite *w, size_t nw, unsigned t)
{
    for (size_t i = 0; i < nw; i++)
        if (w[i].kind == KEVO_WRITE_ELEMENT && w[i].t_lhs0 == t)
            return true;
    return false;
}

int kevo_recipe_same_index(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    return kevo_recipe_same_index_except(m, t0, t1, NULL, 0);
}

int kevo_recipe_same_index_except(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                                  const int *skip, size_t nskip)
{
    int error = 0;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    char text[80];

    if ((error = kevo_recipe_writes(&w, &nw, m, t0, t1)) < 0)
        return error;
    for (size_t i = 0; i < nw; i++) {
        int v = w[i].var;
        if (w[i].kind == KEVO_WRITE_SCALAR || (v >= 0 && kevo_recipe_declared_in(m, v, t0, t1)) ||
            (v >= 0 && skipped(v, skip, nskip)))
            continue;
        lhs_text(text, sizeof(text), m, &w[i]);
        unsigned line = kevo_recipe_line(m, m->tok[w[i].t_op].start);
        if (w[i].kind != KEVO_WRITE_ELEMENT) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "store to '%s' at line %u goes through a pointer expression: "
                                   "kevo cannot tell whether reordering iterations is safe",
                                   text, line);
            goto done;
        }
        /* every other use of the array must be a read at one of its write indices */
        for (unsigned t = t0; t < t1; t++) {
            if (m->tok[t].var != v || is_lhs_start(w, nw, t))
                continue;
            unsigned other_line = kevo_recipe_line(m, m->tok[t].start);
            if (!kevo_rtok_is(m, t + 1, "[")) {
                error = kevo_error_set(KEVO_EINVAL,
                                       "'%s' is written at line %u and used without a subscript "
                                       "at line %u: kevo cannot see which elements that touches",
                                       m->var[v].name, line, other_line);
                goto done;
            }
            unsigned j = t + 1;
            while (j < t1 && kevo_rtok_is(m, j, "[")) {
                unsigned c = kevo_rtok_match(m, j);
                if (c == (unsigned)-1)
                    break;
                j = c + 1;
            }
            bool matches = false;
            for (size_t k = 0; k < nw && !matches; k++)
                matches = w[k].kind == KEVO_WRITE_ELEMENT && w[k].var == v &&
                          kevo_rtok_same(m, t + 1, j, w[k].t_idx0, w[k].t_idx1);
            if (!matches) {
                error = kevo_error_set(
                    KEVO_EINVAL,
                    "'%s' is written at '%s' (line %u) and also read at another index "
                    "(line %u): a possible dependence between iterations",
                    m->var[v].name, text, line, other_line);
                goto done;
            }
        }
    }
done:
    free(w);
    return error;
}

/* End (exclusive) of the expression starting at token a: the `;` at depth
 * 0, or `,` (declined elsewhere), or a closing bracket of depth -1. */
unsigned kevo_recipe_expr_end(const kevo_recipe_model *m, unsigned a, unsigned t1)
{
    int depth = 0;
    for (unsigned t = a; t < t1; t++) {
        const char *s;
        size_t n;
        s = kevo_rtok_text(m, t, &n);
        if (n == 1 && (s[0] == '(' || s[0] == '[' || s[0] == '{'))
            depth++;
        else if (n == 1 && (s[0] == ')' || s[0] == ']' || s[0] == '}')) {
            if (--depth < 0)
                return t;
        } else if (depth == 0 && n == 1 && (s[0] == ';' || s[0] == ','))
            return t;
    }
    return t1;
}

/* The parameter a pointer variable derives from: itself for a parameter,
 * the first pointer parameter of a local's initialiser; -1 unknown. */
int kevo_recipe_root_param(const kevo_recipe_model *m, int v)
{
    if (v < 0)
        return -1;
    if (m->var[v].is_param)
        return v;
    unsigned t = kevo_recipe_decl_token(m, v);
    if (t == (unsigned)-1 || !kevo_rtok_is(m, t + 1, "="))
        return -1;
    unsigned e = kevo_recipe_expr_end(m, t + 2, (unsigned)m->n_tok);
    for (unsigned k = t + 2; k < e; k++) {
        int w = m->tok[k].var;
        if (w >= 0 && w != v &&
            (m->var[w].vtype == KEVO_VTYPE_POINTER || m->var[w].vtype == KEVO_VTYPE_ARRAY))
            return kevo_recipe_root_param(m, w);
    }
    return -1;
}
