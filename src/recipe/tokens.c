/*
 * recipe/tokens.c - reading a built model (model.h): the text of its
 * tokens, bracket matching, and the line of an offset. The analyses
 * (access.c, loops.c) and the recipes stand on these; the model builder
 * (model.c) uses them too, so that the dependency runs one way:
 * model.c -> access.c -> tokens.c.
 *
 * Must not: call libclang, build or change a model, or edit text.
 */
#include "model.h"
#include "kevo/util.h"

#include <string.h>

const char *kevo_rtok_text(const kevo_recipe_model *m, size_t t, size_t *len)
{
    if (t >= m->n_tok) {
        *len = 0;
        return "";
    }
    *len = m->tok[t].end - m->tok[t].start;
    return m->src + m->tok[t].start;
}

bool kevo_rtok_is(const kevo_recipe_model *m, size_t t, const char *text)
{
    size_t n;
    const char *p = kevo_rtok_text(m, t, &n);
    return t < m->n_tok && strlen(text) == n && memcmp(p, text, n) == 0;
}

bool kevo_rtok_assigns(const kevo_recipe_model *m, size_t t, bool incdec)
{
    static const char *const ops[] = {"=",  "+=", "-=", "*=",  "/=",  "%=", "&=",
                                      "|=", "^=", "<<=", ">>=", "++", "--"};
    size_t n = sizeof ops / sizeof ops[0] - (incdec ? 0 : 2);
    for (size_t i = 0; i < n; i++)
        if (kevo_rtok_is(m, t, ops[i]))
            return true;
    return false;
}

bool kevo_rtok_same(const kevo_recipe_model *m, unsigned a0, unsigned a1, unsigned b0, unsigned b1)
{
    if (a1 - a0 != b1 - b0)
        return false;
    for (unsigned i = 0; i < a1 - a0; i++) {
        size_t na, nb;
        const char *pa = kevo_rtok_text(m, a0 + i, &na);
        const char *pb = kevo_rtok_text(m, b0 + i, &nb);
        if (na != nb || memcmp(pa, pb, na) != 0)
            return false;
    }
    return true;
}

unsigned kevo_rtok_match(const kevo_recipe_model *m, unsigned t)
{
    static const char open[] = "([{", close[] = ")]}";
    size_t n;
    const char *p = kevo_rtok_text(m, t, &n);
    if (n != 1)
        return (unsigned)-1;
    const char *o = strchr(open, p[0]), *c = strchr(close, p[0]);
    int depth = 0;
    if (o && *o) {
        for (size_t i = t; i < m->n_tok; i++) {
            const char *q = kevo_rtok_text(m, i, &n);
            if (n != 1)
                continue;
            if (q[0] == *o)
                depth++;
            else if (q[0] == close[o - open] && --depth == 0)
                return (unsigned)i;
        }
    } else if (c && *c) {
        for (size_t i = t + 1; i-- > 0;) {
            const char *q = kevo_rtok_text(m, i, &n);
            if (n != 1)
                continue;
            if (q[0] == *c)
                depth++;
            else if (q[0] == open[c - close] && --depth == 0)
                return (unsigned)i;
        }
    }
    return (unsigned)-1;
}

unsigned kevo_recipe_line(const kevo_recipe_model *m, unsigned offset)
{
    size_t lo = 0, hi = m->n_lines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (m->line_start[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return (unsigned)lo + 1;
}

unsigned kevo_recipe_line_begin(const kevo_recipe_model *m, unsigned offset)
{
    return m->line_start[kevo_recipe_line(m, offset) - 1];
}

const char *kevo_recipe_indent(const kevo_recipe_model *m, unsigned offset, size_t *len)
{
    unsigned b = kevo_recipe_line_begin(m, offset), e = b;
    while (e < m->len && (m->src[e] == ' ' || m->src[e] == '\t'))
        e++;
    *len = e - b;
    return m->src + b;
}

bool kevo_rtok_comment(const kevo_recipe_model *m, unsigned t)
{
    return t < m->n_tok && m->tok[t].kind == KEVO_CTOK_COMMENT;
}

unsigned kevo_rtok_skip_comments(const kevo_recipe_model *m, unsigned t, unsigned t1)
{
    while (t < t1 && kevo_rtok_comment(m, t))
        t++;
    return t;
}

unsigned kevo_rtok_stmt_semi(const kevo_recipe_model *m, unsigned t, unsigned t1)
{
    int depth = 0;
    for (; t < t1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "[") || kevo_rtok_is(m, t, "{"))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]") || kevo_rtok_is(m, t, "}"))
            depth--;
        else if (depth == 0 && kevo_rtok_is(m, t, ";"))
            return t;
        if (depth < 0)
            return t1;
    }
    return t1;
}

unsigned kevo_rtok_find_top(const kevo_recipe_model *m, unsigned t0, unsigned t1, const char *text)
{
    int depth = 0;
    for (unsigned t = t0; t < t1; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "[") || kevo_rtok_is(m, t, "{"))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]") || kevo_rtok_is(m, t, "}"))
            depth--;
        else if (depth == 0 && kevo_rtok_is(m, t, text))
            return t;
    }
    return t1;
}

void kevo_rtok_strip_parens(const kevo_recipe_model *m, unsigned *a0, unsigned *a1)
{
    for (;;) {
        *a0 = kevo_rtok_skip_comments(m, *a0, *a1);
        while (*a1 > *a0 && kevo_rtok_comment(m, *a1 - 1))
            (*a1)--;
        if (*a1 > *a0 + 1 && kevo_rtok_is(m, *a0, "(") && kevo_rtok_match(m, *a0) == *a1 - 1) {
            (*a0)++;
            (*a1)--;
        } else
            return;
    }
}

int kevo_rtok_put(kevo_buf *b, const kevo_recipe_model *m, unsigned a, unsigned e)
{
    if (a >= e)
        return 0;
    return kevo_buf_printf(b, "%.*s", (int)(m->tok[e - 1].end - m->tok[a].start),
                           m->src + m->tok[a].start);
}

bool kevo_rtok_binary_sign(const kevo_recipe_model *m, unsigned t, unsigned t0)
{
    if (t <= t0)
        return false;
    unsigned k = t - 1;
    return m->tok[k].kind == KEVO_CTOK_IDENT || m->tok[k].kind == KEVO_CTOK_LITERAL ||
           kevo_rtok_is(m, k, ")") || kevo_rtok_is(m, k, "]");
}

bool kevo_rtok_sum_term(const kevo_recipe_model *m, unsigned e0, unsigned e1, unsigned a,
                        unsigned *t0, unsigned *t1, bool *minus)
{
    bool neg = false;
    unsigned t = a;
    if (a > e0) { /* the binary sign before the term */
        neg = kevo_rtok_is(m, a, "-");
        t = a + 1;
    }
    while (t < e1 && (kevo_rtok_is(m, t, "-") || kevo_rtok_is(m, t, "+"))) {
        neg ^= kevo_rtok_is(m, t, "-");
        t++;
    }
    if (t >= e1)
        return false;
    int dp = 0;
    unsigned b = t;
    for (; b < e1; b++) {
        if (kevo_rtok_is(m, b, "(") || kevo_rtok_is(m, b, "["))
            dp++;
        else if (kevo_rtok_is(m, b, ")") || kevo_rtok_is(m, b, "]"))
            dp--;
        else if (b > t && dp == 0 && (kevo_rtok_is(m, b, "+") || kevo_rtok_is(m, b, "-")) &&
                 kevo_rtok_binary_sign(m, b, e0))
            break;
    }
    *t0 = t;
    *t1 = b;
    *minus = neg;
    return true;
}

bool kevo_rtok_is_any(const kevo_recipe_model *m, size_t t, const char *const *texts)
{
    for (; *texts; texts++)
        if (kevo_rtok_is(m, t, *texts))
            return true;
    return false;
}
