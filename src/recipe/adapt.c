/*
 * recipe/adapt.c - a C kernel of one task rewritten for another task that
 * computes the same function with another prototype: a PyTorch-defined
 * task gets the C reference of the kevo C task that translates the same
 * KernelBench problem as its first draft (docs/torch-tasks.md, "Drafts").
 * The function is renamed, its parameter list becomes the target's (in the
 * target's order, the buffers keeping the source's names; buffers pair by
 * element type, number of dimensions and name, not by position), and the
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

/* How the buffers of `from` pair with those of `to`: to_of[i] is the
 * buffer of `to` that buffer i of `from` is (SIZE_MAX: i is a scalar),
 * from_of[j] the reverse (SIZE_MAX: a scalar, or an input of `to` that
 * `from` lacks, passed and not used). */
typedef struct pairing {
    size_t *to_of, *from_of;
} pairing;

static void pairing_free(pairing *pr)
{
    free(pr->to_of);
    free(pr->from_of);
}

/* Whether token `tok` (length n) of a name starts with `p`. */
static bool token_starts(const char *tok, size_t n, const char *p)
{
    size_t pl = strlen(p);
    return pl <= n && !strncmp(tok, p, pl);
}

/* How well buffer p of `from` matches buffer q of `to` (larger: better;
 * -1: they cannot pair). The same element type is required; the same
 * number of dimensions counts most (a flat buffer of `from` may stand for
 * any shape), then the names: the same name, `cb` for `conv_bias` (the
 * initials), `w` for `linear_weight` (a word's start); a literal extent of
 * one that the other does not have counts against. */
static int pair_score(const kevo_param *p, const kevo_param *q)
{
    if (p->type != q->type)
        return -1;
    int score = p->ndim == q->ndim ? 8 : p->ndim == 1 ? 2 : 0;
    if (!strcmp(p->name, q->name))
        score += 4;
    else {
        char initials[64];
        size_t ni = 0;
        bool word_start = false;
        for (const char *t = q->name; *t;) {
            while (*t == '_' || *t == '.')
                t++;
            const char *w = t;
            while (*t && *t != '_' && *t != '.')
                t++;
            if (t > w) {
                if (ni + 1 < sizeof(initials))
                    initials[ni++] = *w;
                word_start = word_start || token_starts(w, (size_t)(t - w), p->name);
            }
        }
        initials[ni] = '\0';
        score += ni > 1 && !strcmp(initials, p->name) ? 3 : word_start ? 1 : 0;
    }
    if (p->ndim == q->ndim)
        for (size_t d = 0; d < p->ndim; d++) {
            bool pl = isdigit((unsigned char)p->shape[d][0]),
                 ql = isdigit((unsigned char)q->shape[d][0]);
            if (pl != ql || (pl && strcmp(p->shape[d], q->shape[d])))
                score -= 1;
        }
    return score;
}

typedef struct pair_search {
    const kevo_task *from, *to;
    size_t nf, nt;
    const size_t *fi, *ti; /* the class's buffers of from and of to */
    size_t *cur, *best;    /* cur[k]: index into ti of from's k-th buffer */
    bool *used;
    int best_score, best_inv;
    bool found;
} pair_search;

/* Every injective assignment of from's buffers (of the class) to to's:
 * the best total score, then the fewest pairs out of order. */
static void pair_walk(pair_search *ps, size_t k, int score)
{
    if (k == ps->nf) {
        int inv = 0;
        for (size_t a = 0; a < ps->nf; a++)
            for (size_t b = a + 1; b < ps->nf; b++)
                inv += ps->cur[a] > ps->cur[b];
        if (!ps->found || score > ps->best_score ||
            (score == ps->best_score && inv < ps->best_inv)) {
            ps->found = true;
            ps->best_score = score;
            ps->best_inv = inv;
            memcpy(ps->best, ps->cur, ps->nf * sizeof(*ps->cur));
        }
        return;
    }
    for (size_t j = 0; j < ps->nt; j++) {
        if (ps->used[j])
            continue;
        int sc = pair_score(&ps->from->params[ps->fi[k]], &ps->to->params[ps->ti[j]]);
        if (sc < 0)
            continue;
        ps->used[j] = true;
        ps->cur[k] = j;
        pair_walk(ps, k + 1, score + sc);
        ps->used[j] = false;
    }
}

/* The buffers of one class (inputs, or outputs and inouts) of t. */
static size_t class_buffers(size_t *idx, const kevo_task *t, bool out)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nparams; i++)
        if (is_buffer(&t->params[i]) && (t->params[i].role != KEVO_ROLE_IN) == out)
            idx[n++] = i;
    return n;
}

/* Pair the buffers of one class: every buffer of `from` with one of `to`
 * of the same element type (to may have more inputs: a module's buffers
 * its output does not read, BatchNorm's running statistics, a constant the
 * C task fixes). */
static int pair_class(pairing *pr, const kevo_task *from, const kevo_task *to, bool out)
{
    size_t *fi = calloc(from->nparams + 1, sizeof(size_t)),
           *ti = calloc(to->nparams + 1, sizeof(size_t)),
           *cur = calloc(from->nparams + 1, sizeof(size_t)),
           *best = calloc(from->nparams + 1, sizeof(size_t));
    bool *used = calloc(to->nparams + 1, sizeof(bool));
    int error = 0;
    if (!fi || !ti || !cur || !best || !used) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    pair_search ps = {
        .from = from, .to = to, .fi = fi, .ti = ti, .cur = cur, .best = best, .used = used};
    ps.nf = class_buffers(fi, from, out);
    ps.nt = class_buffers(ti, to, out);
    if (ps.nf > 8 || ps.nt > 10) {
        error = kevo_error_set(KEVO_EINVAL, "%s has too many %s buffers to pair (%zu and %zu)",
                               to->name, out ? "output" : "input", ps.nf, ps.nt);
        goto done;
    }
    if (ps.nf > ps.nt || (out && ps.nf != ps.nt)) {
        error = kevo_error_set(KEVO_EINVAL, "%s and %s have different %s buffers", from->name,
                               to->name, out ? "output" : "input");
        goto done;
    }
    pair_walk(&ps, 0, 0);
    if (!ps.found) {
        error = kevo_error_set(KEVO_EINVAL,
                               "the %s buffers of %s and %s do not pair: no buffer of the "
                               "same element type for each",
                               out ? "output" : "input", from->name, to->name);
        goto done;
    }
    for (size_t k = 0; k < ps.nf; k++) {
        pr->to_of[fi[k]] = ti[best[k]];
        pr->from_of[ti[best[k]]] = fi[k];
    }
done:
    free(fi);
    free(ti);
    free(cur);
    free(best);
    free(used);
    return error;
}

static int pair_buffers(pairing *pr, const kevo_task *from, const kevo_task *to)
{
    pr->to_of = malloc((from->nparams + 1) * sizeof(size_t));
    pr->from_of = malloc((to->nparams + 1) * sizeof(size_t));
    if (!pr->to_of || !pr->from_of)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < from->nparams; i++)
        pr->to_of[i] = SIZE_MAX;
    for (size_t j = 0; j < to->nparams; j++)
        pr->from_of[j] = SIZE_MAX;
    int error = pair_class(pr, from, to, false);
    return error < 0 ? error : pair_class(pr, from, to, true);
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
static int size_expr(kevo_buf *b, const char *name, const kevo_task *from, const kevo_task *to,
                     const pairing *pr)
{
    for (size_t i = 0; i < from->nparams; i++) {
        const kevo_param *p = &from->params[i];
        if (!is_buffer(p) || pr->to_of[i] == SIZE_MAX)
            continue;
        const kevo_param *q = &to->params[pr->to_of[i]];
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

/* The target's parameter list, and the body's first lines: the source's
 * scalars from the target's sizes. */
static int signature(kevo_buf *params, kevo_buf *decls, const kevo_task *from, const kevo_task *to,
                     const pairing *pr)
{
    for (size_t j = 0; j < to->nparams; j++) {
        const kevo_param *q = &to->params[j];
        kevo_buf_puts(params, j ? ", " : "");
        if (!is_buffer(q)) {
            kevo_buf_printf(params, "%s kb_%s", kevo_dtype_ctype(q->type), q->name);
            continue;
        }
        bool out = q->role != KEVO_ROLE_IN;
        size_t i = pr->from_of[j];
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
            int error = size_expr(decls, p->name, from, to, pr);
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
    pairing pr = {0};
    int error = pair_buffers(&pr, from, to);
    if (error == 0)
        error = signature(&params, &decls, from, to, &pr);
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
    pairing_free(&pr);
    return error;
}
