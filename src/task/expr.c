/*
 * task/expr.c - size expressions ("(H + 2*P - K) / S + 1") over a size
 * configuration: a tiny recursive-descent evaluator. Pure; runs no code.
 */
#include "kevo/task.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting is refused: the evaluator recurses, and a task.json must
 * not be able to overflow kevo's stack. */
#define EXPR_MAX_DEPTH 256

typedef struct {
    const char *src;
    const char *p;
    const kevo_sizes *sizes;
    bool integer;
    int error;
    int depth;
} parser;

static double parse_sum(parser *ps);

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static double fail(parser *ps, const char *what)
{
    /* quote at most QUOTE_MAX characters: the problem must fit in the
     * error message however long the expression */
    enum { QUOTE_MAX = 120 };
    size_t len = strlen(ps->src);
    if (!ps->error)
        ps->error = kevo_error_set(KEVO_EINVAL, "expression \"%.*s%s\": %s at offset %zu",
                                   QUOTE_MAX, ps->src, len > QUOTE_MAX ? "..." : "", what,
                                   (size_t)(ps->p - ps->src));
    return 0;
}

static double parse_atom(parser *ps)
{
    skip(ps);
    if (*ps->p == '(' || *ps->p == '-') {
        if (ps->error)
            return 0;
        if (ps->depth >= EXPR_MAX_DEPTH)
            return fail(ps, "nested too deeply");
        ps->depth++;
        double v;
        if (*ps->p++ == '(') {
            v = parse_sum(ps);
            skip(ps);
            if (*ps->p != ')')
                v = fail(ps, "missing ')'");
            else
                ps->p++;
        } else {
            v = -parse_atom(ps);
        }
        ps->depth--;
        return v;
    }
    if (isdigit((unsigned char)*ps->p) || *ps->p == '.') {
        char *end;
        double v = strtod(ps->p, &end);
        if (ps->integer && v != floor(v))
            return fail(ps, "non-integer literal");
        ps->p = end;
        return v;
    }
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        const char *start = ps->p;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
            ps->p++;
        size_t len = (size_t)(ps->p - start);
        for (size_t i = 0; ps->sizes && i < ps->sizes->n; i++)
            if (strlen(ps->sizes->names[i]) == len && !strncmp(ps->sizes->names[i], start, len))
                return (double)ps->sizes->values[i];
        ps->p = start;
        return fail(ps, "unknown size name");
    }
    return fail(ps, *ps->p ? "unexpected character" : "unexpected end");
}

static double parse_product(parser *ps)
{
    double v = parse_atom(ps);
    for (;;) {
        skip(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        ps->p++;
        double r = parse_atom(ps);
        if (op == '*') {
            v *= r;
        } else if (r == 0) {
            return fail(ps, "division by zero");
        } else if (op == '/') {
            v = ps->integer ? trunc(v / r) : v / r;
        } else {
            v = fmod(v, r);
        }
    }
}

static double parse_sum(parser *ps)
{
    double v = parse_product(ps);
    for (;;) {
        skip(ps);
        char op = *ps->p;
        if (op != '+' && op != '-')
            return v;
        ps->p++;
        double r = parse_product(ps);
        v = op == '+' ? v + r : v - r;
    }
}

int kevo_expr_eval(double *out, const char *expr, const kevo_sizes *sizes, bool integer)
{
    parser ps = {expr, expr, sizes, integer, 0, 0};
    if (!expr || !*expr)
        return kevo_error_set(KEVO_EINVAL, "empty expression");
    double v = parse_sum(&ps);
    skip(&ps);
    if (!ps.error && *ps.p)
        fail(&ps, "trailing characters");
    if (ps.error)
        return ps.error;
    *out = v;
    return 0;
}
