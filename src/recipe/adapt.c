/*
 * recipe/adapt.c - a C kernel of one task rewritten for another task that
 * computes the same function with another prototype: a PyTorch-defined
 * task gets the C reference of the kevo C task that translates the same
 * KernelBench problem as its first draft (docs/torch-tasks.md, "Drafts").
 * The function is renamed, its parameter list becomes the target's (in the
 * target's order, the buffers keeping the source's names), and the
 * source's sizes and fixed scalars are declared at the top of its body
 * from the target's sizes. Pure text work on the libclang model; whether
 * the result is correct is the verifier's to say.
 */
#include "kevo/cparse.h"
#include "kevo/recipe.h"
#include "kevo/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_buffer(const kevo_param *p)
{
    return p->role != KEVO_ROLE_SCALAR;
}

/* The k-th buffer of t with role class `out` (out/inout) or not; SIZE_MAX. */
static size_t nth_buffer(const kevo_task *t, bool out, size_t k)
{
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        if (!is_buffer(p) || (p->role != KEVO_ROLE_IN) != out)
            continue;
        if (k-- == 0)
            return i;
    }
    return SIZE_MAX;
}

/* Position of buffer i among its class in t. */
static size_t class_index(const kevo_task *t, size_t i)
{
    bool out = t->params[i].role != KEVO_ROLE_IN;
    size_t k = 0;
    for (size_t j = 0; j < i; j++)
        k += is_buffer(&t->params[j]) && (t->params[j].role != KEVO_ROLE_IN) == out;
    return k;
}

/* expr with every size name of `to` prefixed "kb_" (the target's size
 * parameters, renamed so they cannot clash with the source's names). */
static void prefixed(kevo_buf *b, const char *expr, const kevo_task *to)
{
    for (const char *q = expr; *q;) {
        if (isalpha((unsigned char)*q) || *q == '_') {
            const char *s = q;
            while (isalnum((unsigned char)*q) || *q == '_')
                q++;
            bool size = false;
            for (size_t i = 0; i < to->sizes.n && !size; i++)
                size = strlen(to->sizes.names[i]) == (size_t)(q - s) &&
                       !strncmp(to->sizes.names[i], s, (size_t)(q - s));
            kevo_buf_printf(b, "%s%.*s", size ? "kb_" : "", (int)(q - s), s);
        } else {
            kevo_buf_printf(b, "%c", *q++);
        }
    }
}

/* An expression over `to`'s sizes for the source's size `name`, from the
 * first buffer of `from` with a dimension that is exactly `name`. */
static int size_expr(kevo_buf *b, const char *name, const kevo_task *from, const kevo_task *to)
{
    for (size_t i = 0; i < from->nparams; i++) {
        const kevo_param *p = &from->params[i];
        if (!is_buffer(p))
            continue;
        size_t j = nth_buffer(to, p->role != KEVO_ROLE_IN, class_index(from, i));
        const kevo_param *q = &to->params[j];
        for (size_t d = 0; d < p->ndim; d++) {
            if (strcmp(p->shape[d], name))
                continue;
            if (p->ndim == q->ndim) {
                kevo_buf_puts(b, "(");
                prefixed(b, q->shape[d], to);
                kevo_buf_puts(b, ")");
                return 0;
            }
            if (p->ndim == 1) { /* a flat buffer: every element of the target's */
                for (size_t e = 0; e < q->ndim; e++) {
                    kevo_buf_puts(b, e ? " * (" : "(");
                    prefixed(b, q->shape[e], to);
                    kevo_buf_puts(b, ")");
                }
                return 0;
            }
        }
    }
    /* a size no shape shows as a dimension (a group count, a kernel size
     * inside an output expression): from's own timed value, which the
     * verifier then confirms or refutes */
    for (size_t i = 0; i < from->sizes.n; i++)
        if (!strcmp(from->sizes.names[i], name)) {
            kevo_buf_printf(b, "%lld /* %s's own value */", (long long)from->sizes.values[i],
                            from->name);
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL, "cannot tell the size '%s' of %s from %s's shapes", name,
                          from->name, to->name);
}

/* The buffers pair up in order within each class, with the same types. */
static int check_pairing(const kevo_task *from, const kevo_task *to)
{
    for (int out = 0; out < 2; out++) {
        size_t k = 0;
        for (; nth_buffer(from, out, k) != SIZE_MAX; k++) {
            size_t i = nth_buffer(from, out, k), j = nth_buffer(to, out, k);
            if (j == SIZE_MAX)
                break;
            if (from->params[i].type != to->params[j].type)
                return kevo_error_set(KEVO_EINVAL, "'%s' is %s in %s, '%s' %s in %s",
                                      from->params[i].name,
                                      kevo_dtype_name(from->params[i].type), from->name,
                                      to->params[j].name, kevo_dtype_name(to->params[j].type),
                                      to->name);
        }
        /* to may have more inputs (a module's buffers that its output does
         * not read, say): they are passed and not used */
        if (nth_buffer(from, out, k) != SIZE_MAX || (out && nth_buffer(to, out, k) != SIZE_MAX))
            return kevo_error_set(KEVO_EINVAL, "%s and %s have different %s buffers",
                                  from->name, to->name, out ? "output" : "input");
    }
    return 0;
}

/* The target's parameter list, and the body's first lines: the source's
 * scalars from the target's sizes. */
static int signature(kevo_buf *params, kevo_buf *decls, const kevo_task *from,
                     const kevo_task *to)
{
    for (size_t j = 0; j < to->nparams; j++) {
        const kevo_param *q = &to->params[j];
        kevo_buf_puts(params, j ? ", " : "");
        if (!is_buffer(q)) {
            kevo_buf_printf(params, "%s kb_%s", kevo_dtype_ctype(q->type), q->name);
            continue;
        }
        bool out = q->role != KEVO_ROLE_IN;
        size_t i = nth_buffer(from, out, class_index(to, j));
        if (i == SIZE_MAX) { /* an input of to's that from does not have */
            kevo_buf_printf(params, "const %s *kb_unused_%s", kevo_dtype_ctype(q->type), q->name);
            continue;
        }
        const kevo_param *p = &from->params[i];
        kevo_buf_printf(params, "%s%s *%s", out ? "" : "const ", kevo_dtype_ctype(p->type),
                        p->name);
    }
    for (size_t i = 0; i < from->nparams; i++) {
        const kevo_param *p = &from->params[i];
        if (is_buffer(p))
            continue;
        kevo_buf_printf(decls, "\n    const %s %s = ", kevo_dtype_ctype(p->type), p->name);
        if (p->has_value)
            kevo_buf_printf(decls, p->type == KEVO_DT_F32 ? "%.9g;" : "%.17g;", p->value);
        else {
            int error = size_expr(decls, p->name, from, to);
            if (error < 0)
                return error;
            kevo_buf_puts(decls, ";");
        }
    }
    kevo_buf_puts(decls, "\n");
    return kevo_buf_error(params) < 0 ? kevo_buf_error(params) : kevo_buf_error(decls);
}

/* Offsets of the name, the parameter list's ')' and the body's '{' in the
 * definition of from->name. */
static int locate(unsigned *name_start, unsigned *params_end, unsigned *body, const char *source,
                  const kevo_task *from)
{
    kevo_cparse_tu *tu = NULL;
    kevo_cparse_token *tok = NULL;
    size_t nt = 0;
    CXCursor fn;
    int error = kevo_cparse_parse(&tu, source, strlen(source), NULL);
    if (error == 0 && (error = kevo_cparse_errors(tu)) == 0 &&
        (error = kevo_cparse_function(&fn, tu, from->name)) == 0)
        error = kevo_cparse_tokens(&tok, &nt, tu, fn);
    size_t k = 0, name_len = strlen(from->name);
    for (; error == 0 && k < nt; k++)
        if (tok[k].end - tok[k].start == name_len &&
            !strncmp(source + tok[k].start, from->name, name_len) && k + 1 < nt &&
            source[tok[k + 1].start] == '(')
            break;
    int depth = 0;
    size_t close = k + 1;
    for (; error == 0 && close < nt; close++) {
        char c = source[tok[close].start];
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth == 0)
            break;
    }
    size_t open = close + 1;
    while (error == 0 && open < nt && source[tok[open].start] != '{')
        open++;
    if (error == 0 && open >= nt)
        error = kevo_error_set(KEVO_EINVAL, "%s: no function body found", from->name);
    if (error == 0) {
        *name_start = tok[k].start;
        *params_end = tok[close].end;
        *body = tok[open].end;
    }
    free(tok);
    kevo_cparse_free(tu);
    return error;
}

int kevo_recipe_adapt_signature(char **out, const char *source, const kevo_task *from,
                                const kevo_task *to)
{
    *out = NULL;
    kevo_buf params = {0}, decls = {0};
    kevo_cparse_edits e = {0};
    unsigned name_start = 0, params_end = 0, body = 0;
    int error = check_pairing(from, to);
    if (error == 0)
        error = signature(&params, &decls, from, to);
    if (error == 0)
        error = locate(&name_start, &params_end, &body, source, from);
    if (error == 0 &&
        (error = kevo_cparse_edits_add(&e, name_start, params_end, "%s(%s)", to->name,
                                       kevo_buf_cstr(&params))) == 0 &&
        (error = kevo_cparse_edits_add(&e, body, body, "%s", kevo_buf_cstr(&decls))) == 0)
        error = kevo_cparse_edits_apply(out, &e, source, strlen(source));
    kevo_cparse_edits_free(&e);
    kevo_buf_free(&params);
    kevo_buf_free(&decls);
    return error;
}
