/*
 * backend/opencl_spec.c - parses the `// kevo:` directives of an OpenCL
 * candidate (docs/backends/opencl.md):
 *
 *   // kevo: launch KERNEL global=EXPR[,EXPR[,EXPR]] [local=EXPR,...] [args=NAME,...]
 *   // kevo: scratch NAME TYPE COUNT_EXPR
 *   // kevo: options -cl-fast-relaxed-math ...
 *
 * Expressions: integer literals, the task's integer scalar params, + - * /
 * % (C integer semantics), parentheses, ROUND_UP(a,b), CEIL_DIV(a,b),
 * MIN(a,b), MAX(a,b). They are evaluated here for every size set (to
 * explain a bad launch before anything runs) and emitted as C for the
 * runner, which evaluates them on the scalars it receives. Emitted C uses
 * only tokens this parser produced, so a candidate cannot inject code
 * into the harness. Pure: runs nothing.
 */
#include "opencl_spec.h"
#include "kevo/sys/backend.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_NODES 256

typedef enum { E_NUM, E_PARAM, E_NEG, E_ADD, E_SUB, E_MUL, E_DIV, E_MOD, E_CALL } expr_kind;
typedef enum { F_ROUND_UP, F_CEIL_DIV, F_MIN, F_MAX } expr_fn;

static const char *const fn_names[] = {"ROUND_UP", "CEIL_DIV", "MIN", "MAX"};
static const char *const fn_c[] = {"KEVO_OCL_ROUND_UP", "KEVO_OCL_CEIL_DIV", "KEVO_OCL_MIN",
                                   "KEVO_OCL_MAX"};

struct kevo_ocl_expr {
    expr_kind kind;
    int64_t value; /* E_NUM */
    size_t param;  /* E_PARAM */
    expr_fn fn;    /* E_CALL */
    kevo_ocl_expr *a, *b;
};

static const char *const allowed_options[] = {"-cl-fast-relaxed-math",
                                              "-cl-mad-enable",
                                              "-cl-no-signed-zeros",
                                              "-cl-unsafe-math-optimizations",
                                              "-cl-finite-math-only",
                                              "-cl-denorms-are-zero",
                                              "-cl-single-precision-constant",
                                              "-cl-strict-aliasing",
                                              "-cl-opt-disable",
                                              NULL};

bool kevo_ocl_option_allowed(const char *opt)
{
    for (const char *const *a = allowed_options; *a; a++)
        if (!strcmp(*a, opt))
            return true;
    return false;
}

const char *kevo_ocl_type_name(kevo_dtype t)
{
    switch (t) {
    case KEVO_DT_F32:
        return "float";
    case KEVO_DT_F64:
        return "double";
    case KEVO_DT_I32:
        return "int";
    case KEVO_DT_I64:
        return "long";
    case KEVO_DT_U8:
        return "uchar";
    }
    return "?";
}

static void expr_free(kevo_ocl_expr *e)
{
    if (!e)
        return;
    expr_free(e->a);
    expr_free(e->b);
    free(e);
}

void kevo_ocl_spec_free(kevo_ocl_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nlaunches; i++) {
        free(s->launches[i].kernel);
        for (int d = 0; d < 3; d++) {
            expr_free(s->launches[i].global[d]);
            expr_free(s->launches[i].local[d]);
        }
    }
    for (size_t i = 0; i < s->nscratch; i++) {
        free(s->scratch[i].name);
        expr_free(s->scratch[i].count);
    }
    kevo_strv_free(s->options);
    free(s);
}

/* ---- expressions ---- */

typedef struct {
    const char *p, *end;
    const kevo_task *task;
    kevo_buf *err; /* the first problem, when any */
    int depth;
    int nodes;
} eparser;

static kevo_ocl_expr *node(eparser *ps, expr_kind k)
{
    if (++ps->nodes > EXPR_MAX_NODES) {
        if (!ps->err->len)
            kevo_buf_puts(ps->err, "expression too long");
        return NULL;
    }
    kevo_ocl_expr *e = calloc(1, sizeof(*e));
    if (e)
        e->kind = k;
    else if (!ps->err->len)
        kevo_buf_puts(ps->err, "out of memory");
    return e;
}

static void eskip(eparser *ps)
{
    while (ps->p < ps->end && isspace((unsigned char)*ps->p))
        ps->p++;
}

static void efail(eparser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void efail(eparser *ps, const char *fmt, ...)
{
    if (ps->err->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    kevo_buf_vprintf(ps->err, fmt, ap);
    va_end(ap);
}

static kevo_ocl_expr *parse_sum(eparser *ps);

static bool is_integer_param(const kevo_param *p)
{
    return p->role == KEVO_ROLE_SCALAR &&
           (p->type == KEVO_DT_I32 || p->type == KEVO_DT_I64 || p->type == KEVO_DT_U8);
}

static void list_names(kevo_buf *b, const kevo_task *t)
{
    int n = 0;
    for (size_t i = 0; i < t->nparams; i++)
        if (is_integer_param(&t->params[i]))
            kevo_buf_printf(b, "%s%s", n++ ? ", " : "", t->params[i].name);
    if (!n)
        kevo_buf_puts(b, "none: this task has no integer scalar params");
}

/* After '(': the sum inside and its ')'. */
static kevo_ocl_expr *parse_group(eparser *ps)
{
    ps->p++;
    ps->depth++;
    kevo_ocl_expr *e = parse_sum(ps);
    ps->depth--;
    eskip(ps);
    if (ps->p >= ps->end || *ps->p != ')') {
        efail(ps, "missing ')'");
        expr_free(e);
        return NULL;
    }
    ps->p++;
    return e;
}

/* An integer literal (no suffix, no fraction). */
static kevo_ocl_expr *parse_number(eparser *ps)
{
    int64_t v = 0;
    while (ps->p < ps->end && isdigit((unsigned char)*ps->p)) {
        if (v > (INT64_MAX - 9) / 10) {
            efail(ps, "number too large");
            return NULL;
        }
        v = v * 10 + (*ps->p++ - '0');
    }
    if (ps->p < ps->end && (isalpha((unsigned char)*ps->p) || *ps->p == '.')) {
        efail(ps, "only integer literals are allowed");
        return NULL;
    }
    kevo_ocl_expr *e = node(ps, E_NUM);
    if (e)
        e->value = v;
    return e;
}

/* `name(` seen, at the '(': one of fn_names with its two arguments. */
static kevo_ocl_expr *parse_call(eparser *ps, const char *name)
{
    int fn = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(fn_names[i], name))
            fn = i;
    if (fn < 0) {
        efail(ps, "unknown function '%s' (use ROUND_UP, CEIL_DIV, MIN, MAX)", name);
        return NULL;
    }
    ps->p++;
    kevo_ocl_expr *e = node(ps, E_CALL);
    if (!e)
        return NULL;
    e->fn = (expr_fn)fn;
    ps->depth++;
    e->a = parse_sum(ps);
    eskip(ps);
    if (ps->p < ps->end && *ps->p == ',') {
        ps->p++;
        e->b = parse_sum(ps);
    }
    ps->depth--;
    eskip(ps);
    if (!e->b && !ps->err->len)
        efail(ps, "%s takes two arguments", fn_names[fn]);
    if (ps->p >= ps->end || *ps->p != ')') {
        efail(ps, "missing ')' after the arguments of %s", fn_names[fn]);
        expr_free(e);
        return NULL;
    }
    ps->p++;
    return e;
}

/* A name that is not a call: an integer scalar param of the task. */
static kevo_ocl_expr *parse_param_name(eparser *ps, const char *name)
{
    for (size_t i = 0; i < ps->task->nparams; i++) {
        if (strcmp(ps->task->params[i].name, name))
            continue;
        if (!is_integer_param(&ps->task->params[i])) {
            efail(ps, "'%s' is not an integer scalar param of the task", name);
            return NULL;
        }
        kevo_ocl_expr *e = node(ps, E_PARAM);
        if (e)
            e->param = i;
        return e;
    }
    kevo_buf names = {0};
    list_names(&names, ps->task);
    kevo_buf msg = {0};
    kevo_buf_printf(&msg, "unknown name '%s' (names allowed: %s)", name, kevo_buf_cstr(&names));
    efail(ps, "%s", msg.ptr);
    kevo_buf_free(&names);
    kevo_buf_free(&msg);
    return NULL;
}

/* An identifier: a function call or a param. */
static kevo_ocl_expr *parse_name(eparser *ps)
{
    const char *s = ps->p;
    while (ps->p < ps->end && (isalnum((unsigned char)*ps->p) || *ps->p == '_'))
        ps->p++;
    size_t len = (size_t)(ps->p - s);
    char name[64];
    if (len >= sizeof(name)) {
        efail(ps, "name too long");
        return NULL;
    }
    memcpy(name, s, len);
    name[len] = '\0';
    eskip(ps);
    if (ps->p < ps->end && *ps->p == '(')
        return parse_call(ps, name);
    return parse_param_name(ps, name);
}

static kevo_ocl_expr *parse_atom(eparser *ps)
{
    eskip(ps);
    if (ps->err->len)
        return NULL;
    if (ps->p >= ps->end) {
        efail(ps, "expression ends too early");
        return NULL;
    }
    if (ps->depth >= EXPR_MAX_DEPTH) {
        efail(ps, "expression nested too deeply");
        return NULL;
    }
    char c = *ps->p;
    if (c == '(')
        return parse_group(ps);
    if (c == '-') {
        ps->p++;
        ps->depth++;
        kevo_ocl_expr *e = node(ps, E_NEG);
        if (e)
            e->a = parse_atom(ps);
        ps->depth--;
        return e;
    }
    if (isdigit((unsigned char)c))
        return parse_number(ps);
    if (isalpha((unsigned char)c) || c == '_')
        return parse_name(ps);
    char bad[2] = {c, 0};
    efail(ps, "unexpected '%s'", bad);
    return NULL;
}

static kevo_ocl_expr *parse_product(eparser *ps)
{
    kevo_ocl_expr *l = parse_atom(ps);
    for (;;) {
        eskip(ps);
        if (ps->err->len || ps->p >= ps->end)
            return l;
        char c = *ps->p;
        if (c != '*' && c != '/' && c != '%')
            return l;
        ps->p++;
        kevo_ocl_expr *e = node(ps, c == '*' ? E_MUL : c == '/' ? E_DIV : E_MOD);
        if (!e)
            return l;
        e->a = l;
        e->b = parse_atom(ps);
        l = e;
    }
}

static kevo_ocl_expr *parse_sum(eparser *ps)
{
    kevo_ocl_expr *l = parse_product(ps);
    for (;;) {
        eskip(ps);
        if (ps->err->len || ps->p >= ps->end)
            return l;
        char c = *ps->p;
        if (c != '+' && c != '-')
            return l;
        ps->p++;
        kevo_ocl_expr *e = node(ps, c == '+' ? E_ADD : E_SUB);
        if (!e)
            return l;
        e->a = l;
        e->b = parse_product(ps);
        l = e;
    }
}

/* Parse text[0..len) as one expression; NULL with *err set on a problem. */
static kevo_ocl_expr *parse_expr(kevo_buf *err, const kevo_task *task, const char *text, size_t len)
{
    eparser ps = {text, text + len, task, err, 0, 0};
    kevo_ocl_expr *e = parse_sum(&ps);
    eskip(&ps);
    if (!err->len && ps.p < ps.end) {
        char bad[2] = {*ps.p, 0};
        efail(&ps, "unexpected '%s'", bad);
    }
    if (!err->len && !e)
        efail(&ps, "empty expression");
    if (err->len) {
        expr_free(e);
        return NULL;
    }
    return e;
}

int kevo_ocl_expr_eval(int64_t *out, const kevo_ocl_expr *e, const kevo_task *task,
                       const kevo_sizes *sizes)
{
    int64_t a = 0, b = 0;
    int error;
    if (e->a && (error = kevo_ocl_expr_eval(&a, e->a, task, sizes)) < 0)
        return error;
    if (e->b && (error = kevo_ocl_expr_eval(&b, e->b, task, sizes)) < 0)
        return error;
    bool overflow = false;
    switch (e->kind) {
    case E_NUM:
        *out = e->value;
        return 0;
    case E_PARAM: {
        double v;
        if ((error = kevo_task_scalar_value(&v, task, e->param, sizes)) < 0)
            return error;
        *out = (int64_t)v;
        return 0;
    }
    case E_NEG:
        overflow = __builtin_sub_overflow((int64_t)0, a, out);
        break;
    case E_ADD:
        overflow = __builtin_add_overflow(a, b, out);
        break;
    case E_SUB:
        overflow = __builtin_sub_overflow(a, b, out);
        break;
    case E_MUL:
        overflow = __builtin_mul_overflow(a, b, out);
        break;
    case E_DIV:
    case E_MOD:
        if (b == 0)
            return kevo_error_set(KEVO_EINVAL, "division by zero");
        if (a == INT64_MIN && b == -1)
            return kevo_error_set(KEVO_EINVAL, "overflow");
        *out = e->kind == E_DIV ? a / b : a % b;
        return 0;
    case E_CALL:
        switch (e->fn) {
        case F_MIN:
            *out = a < b ? a : b;
            return 0;
        case F_MAX:
            *out = a > b ? a : b;
            return 0;
        case F_CEIL_DIV:
        case F_ROUND_UP:
            if (b <= 0)
                return kevo_error_set(KEVO_EINVAL, "%s with a divisor <= 0", fn_names[e->fn]);
            if (a < 0)
                return kevo_error_set(KEVO_EINVAL, "%s of a negative value", fn_names[e->fn]);
            *out = a / b + (a % b != 0);
            if (e->fn == F_ROUND_UP)
                overflow = __builtin_mul_overflow(*out, b, out);
            break;
        }
        break;
    }
    if (overflow)
        return kevo_error_set(KEVO_EINVAL, "integer overflow");
    return 0;
}

void kevo_ocl_expr_emit_c(kevo_buf *b, const kevo_ocl_expr *e)
{
    switch (e->kind) {
    case E_NUM:
        kevo_buf_printf(b, "INT64_C(%lld)", (long long)e->value);
        return;
    case E_PARAM:
        kevo_buf_printf(b, "S(%zu)", e->param);
        return;
    case E_NEG:
        kevo_buf_puts(b, "KEVO_OCL_NEG(");
        kevo_ocl_expr_emit_c(b, e->a);
        kevo_buf_puts(b, ")");
        return;
    case E_ADD:
    case E_SUB:
    case E_MUL:
        kevo_buf_printf(b, "KEVO_OCL_%s(",
                        e->kind == E_ADD   ? "ADD"
                        : e->kind == E_SUB ? "SUB"
                                           : "MUL");
        break;
    case E_DIV:
        kevo_buf_puts(b, "KEVO_OCL_DIV(");
        break;
    case E_MOD:
        kevo_buf_puts(b, "KEVO_OCL_MOD(");
        break;
    case E_CALL:
        kevo_buf_printf(b, "%s(", fn_c[e->fn]);
        break;
    }
    kevo_ocl_expr_emit_c(b, e->a);
    kevo_buf_puts(b, ", ");
    kevo_ocl_expr_emit_c(b, e->b);
    kevo_buf_puts(b, ")");
}

void kevo_ocl_expr_print(kevo_buf *b, const kevo_ocl_expr *e, const kevo_task *task)
{
    switch (e->kind) {
    case E_NUM:
        kevo_buf_printf(b, "%lld", (long long)e->value);
        return;
    case E_PARAM:
        kevo_buf_puts(b, task->params[e->param].name);
        return;
    case E_NEG:
        kevo_buf_puts(b, "-");
        kevo_ocl_expr_print(b, e->a, task);
        return;
    case E_CALL:
        kevo_buf_printf(b, "%s(", fn_names[e->fn]);
        kevo_ocl_expr_print(b, e->a, task);
        kevo_buf_puts(b, ",");
        kevo_ocl_expr_print(b, e->b, task);
        kevo_buf_puts(b, ")");
        return;
    default:
        break;
    }
    static const char *const sym[] = {"", "", "", "+", "-", "*", "/", "%"};
    kevo_buf_puts(b, "(");
    kevo_ocl_expr_print(b, e->a, task);
    kevo_buf_puts(b, sym[e->kind]);
    kevo_ocl_expr_print(b, e->b, task);
    kevo_buf_puts(b, ")");
}

/* ---- directives ---- */

typedef struct {
    const kevo_task *task;
    kevo_ocl_spec *spec;
    kevo_buf *problems;
    bool *rejected;
    unsigned line;
    int count;
} dparser;

static void problem(dparser *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(dparser *d, const char *fmt, ...)
{
    va_list ap;
    kevo_buf_printf(d->problems, "line %u: ", d->line);
    va_start(ap, fmt);
    kevo_buf_vprintf(d->problems, fmt, ap);
    va_end(ap);
    kevo_buf_puts(d->problems, "\n");
    d->count++;
}

static bool valid_ident(const char *s, size_t len)
{
    if (!len || len > 63 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_')
            return false;
    return true;
}

/* Split "a, ROUND_UP(b, 4), c" at top-level commas into at most max parts. */
static int split_top(const char *s, size_t len, const char **parts, size_t *lens, int max)
{
    int n = 0, depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? s[i] : ',';
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        else if (c == ',' && depth == 0) {
            if (n == max)
                return max + 1;
            parts[n] = s + start;
            lens[n] = i - start;
            n++;
            start = i + 1;
        }
    }
    return n;
}

static bool parse_exprs(dparser *d, kevo_ocl_expr **out, unsigned *dims, const char *what,
                        const char *text, size_t len)
{
    const char *parts[4];
    size_t lens[4];
    int n = split_top(text, len, parts, lens, 3);
    if (n < 1 || n > 3) {
        problem(d, "%s= takes 1 to 3 comma-separated sizes, got %d", what, n);
        return false;
    }
    for (int i = 0; i < n; i++) {
        kevo_buf err = {0};
        out[i] = parse_expr(&err, d->task, parts[i], lens[i]);
        if (!out[i]) {
            problem(d, "%s= `%.*s`: %s", what, (int)lens[i], parts[i], kevo_buf_cstr(&err));
            kevo_buf_free(&err);
            return false;
        }
    }
    *dims = (unsigned)n;
    return true;
}

static const char *find_key(const char *s, const char *end, const char **key, size_t *keylen)
{
    static const char *const keys[] = {"global=", "local=", "args=", NULL};
    for (const char *p = s; p < end; p++) {
        if (p != s && !isspace((unsigned char)p[-1]))
            continue;
        for (const char *const *k = keys; *k; k++)
            if ((size_t)(end - p) >= strlen(*k) && !strncmp(p, *k, strlen(*k))) {
                *key = *k;
                *keylen = strlen(*k);
                return p;
            }
    }
    return NULL;
}

static int find_name(dparser *d, kevo_ocl_arg *out, const char *name, size_t len)
{
    for (size_t i = 0; i < d->task->nparams; i++)
        if (strlen(d->task->params[i].name) == len &&
            !strncmp(d->task->params[i].name, name, len)) {
            out->scratch = false;
            out->index = i;
            return 0;
        }
    for (size_t i = 0; i < d->spec->nscratch; i++)
        if (strlen(d->spec->scratch[i].name) == len &&
            !strncmp(d->spec->scratch[i].name, name, len)) {
            out->scratch = true;
            out->index = i;
            return 0;
        }
    return -1;
}

static void parse_launch(dparser *d, const char *s, const char *end)
{
    if (d->spec->nlaunches == KEVO_OCL_MAX_LAUNCHES) {
        problem(d, "at most %d launches", KEVO_OCL_MAX_LAUNCHES);
        return;
    }
    while (s < end && isspace((unsigned char)*s))
        s++;
    const char *name = s;
    while (s < end && !isspace((unsigned char)*s))
        s++;
    if (!valid_ident(name, (size_t)(s - name))) {
        problem(d, "`launch` needs a kernel name first: `// kevo: launch KERNEL global=N "
                   "local=64`");
        return;
    }
    kevo_ocl_launch *L = &d->spec->launches[d->spec->nlaunches];
    memset(L, 0, sizeof(*L));
    L->kernel = strndup(name, (size_t)(s - name));
    L->line = d->line;
    d->spec->nlaunches++;
    bool has_global = false, has_args = false;
    const char *key = NULL;
    size_t keylen = 0;
    const char *at = find_key(s, end, &key, &keylen);
    for (const char *p = s; p < (at ? at : end); p++)
        if (!isspace((unsigned char)*p)) {
            problem(d, "unexpected `%.*s` in launch (expected global=, local=, args=)",
                    (int)((at ? at : end) - p), p);
            return;
        }
    while (at) {
        const char *ckey = key;
        const char *val = at + keylen;
        const char *next = find_key(val, end, &key, &keylen);
        const char *vend = next ? next : end;
        while (vend > val && isspace((unsigned char)vend[-1]))
            vend--;
        size_t vlen = (size_t)(vend - val);
        if (!strcmp(ckey, "global=")) {
            if (has_global) {
                problem(d, "global= given twice");
                return;
            }
            has_global = true;
            if (!parse_exprs(d, L->global, &L->dims, "global", val, vlen))
                return;
        } else if (!strcmp(ckey, "local=")) {
            unsigned dims = 0;
            if (L->has_local) {
                problem(d, "local= given twice");
                return;
            }
            L->has_local = true;
            if (!parse_exprs(d, L->local, &dims, "local", val, vlen))
                return;
            if (has_global && dims != L->dims) {
                problem(d, "local= has %u sizes but global= has %u", dims, L->dims);
                return;
            }
            if (!has_global)
                L->dims = dims;
        } else {
            has_args = true;
            const char *p = val;
            while (p < vend) {
                const char *c = memchr(p, ',', (size_t)(vend - p));
                const char *e = c ? c : vend;
                const char *a = p, *b = e;
                while (a < b && isspace((unsigned char)*a))
                    a++;
                while (b > a && isspace((unsigned char)b[-1]))
                    b--;
                if (L->nargs == KEVO_OCL_MAX_ARGS) {
                    problem(d, "too many args");
                    return;
                }
                if (find_name(d, &L->args[L->nargs], a, (size_t)(b - a)) < 0) {
                    problem(d,
                            "args=: `%.*s` is neither a param of the task nor a scratch "
                            "buffer declared above",
                            (int)(b - a), a);
                    return;
                }
                L->nargs++;
                p = c ? c + 1 : vend;
            }
        }
        at = next;
    }
    if (!has_global) {
        problem(d, "launch %s has no global= size", L->kernel);
        return;
    }
    if (L->has_local) {
        /* local= was parsed before global= was known: check again */
        unsigned n = 0;
        while (n < 3 && L->local[n])
            n++;
        if (n != L->dims) {
            problem(d, "local= has %u sizes but global= has %u", n, L->dims);
            return;
        }
    }
    /* without args=: every param then every scratch buffer, resolved after
     * the whole block is read (scratch lines may come later) */
    L->default_args = !has_args;
}

static void parse_scratch(dparser *d, const char *s, const char *end)
{
    if (d->spec->nscratch == KEVO_OCL_MAX_SCRATCH) {
        problem(d, "at most %d scratch buffers", KEVO_OCL_MAX_SCRATCH);
        return;
    }
    const char *tok[2];
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        while (s < end && isspace((unsigned char)*s))
            s++;
        tok[i] = s;
        while (s < end && !isspace((unsigned char)*s))
            s++;
        len[i] = (size_t)(s - tok[i]);
    }
    if (!valid_ident(tok[0], len[0])) {
        problem(d, "`scratch` needs a name: `// kevo: scratch NAME f32 COUNT`");
        return;
    }
    kevo_ocl_arg dummy;
    if (find_name(d, &dummy, tok[0], len[0]) == 0) {
        problem(d, "scratch `%.*s`: the name is already used", (int)len[0], tok[0]);
        return;
    }
    static const struct {
        const char *name;
        kevo_dtype t;
    } types[] = {{"f32", KEVO_DT_F32},
                 {"f64", KEVO_DT_F64},
                 {"i32", KEVO_DT_I32},
                 {"i64", KEVO_DT_I64},
                 {"u8", KEVO_DT_U8}};
    int ti = -1;
    for (int i = 0; i < 5; i++)
        if (strlen(types[i].name) == len[1] && !strncmp(types[i].name, tok[1], len[1]))
            ti = i;
    if (ti < 0) {
        problem(d, "scratch `%.*s`: type `%.*s` is not one of f32 f64 i32 i64 u8", (int)len[0],
                tok[0], (int)len[1], tok[1]);
        return;
    }
    kevo_buf err = {0};
    kevo_ocl_expr *count = parse_expr(&err, d->task, s, (size_t)(end - s));
    if (!count) {
        problem(d, "scratch `%.*s` element count: %s", (int)len[0], tok[0], kevo_buf_cstr(&err));
        kevo_buf_free(&err);
        return;
    }
    kevo_ocl_scratch *sc = &d->spec->scratch[d->spec->nscratch++];
    sc->name = strndup(tok[0], len[0]);
    sc->line = d->line;
    sc->type = types[ti].t;
    sc->count = count;
}

static void parse_options(dparser *d, const char *s, const char *end)
{
    size_t n = 0;
    for (char **o = d->spec->options; o && *o; o++)
        n++;
    while (s < end) {
        while (s < end && isspace((unsigned char)*s))
            s++;
        const char *t = s;
        while (s < end && !isspace((unsigned char)*s))
            s++;
        if (s == t)
            break;
        char *opt = strndup(t, (size_t)(s - t));
        if (!kevo_ocl_option_allowed(opt)) {
            problem(d,
                    "build option `%s` is not on the allow-list (-cl-fast-relaxed-math "
                    "-cl-mad-enable -cl-no-signed-zeros -cl-unsafe-math-optimizations "
                    "-cl-finite-math-only -cl-denorms-are-zero -cl-single-precision-constant "
                    "-cl-strict-aliasing -cl-opt-disable)",
                    opt);
            *d->rejected = true;
            free(opt);
            continue;
        }
        char **v = realloc(d->spec->options, (n + 2) * sizeof(char *));
        if (!v) {
            free(opt);
            return;
        }
        d->spec->options = v;
        v[n++] = opt;
        v[n] = NULL;
    }
}

int kevo_ocl_spec_parse(kevo_ocl_spec **out, kevo_buf *problems, bool *rejected,
                        const kevo_task *task, const char *source)
{
    *out = NULL;
    *rejected = false;
    kevo_ocl_spec *spec = calloc(1, sizeof(*spec));
    if (!spec)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    spec->options = calloc(1, sizeof(char *));
    dparser d = {task, spec, problems, rejected, 0, 0};
    bool leading = true;
    const char *p = source;
    while (*p) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        d.line++;
        const char *s = p;
        while (s < end && isspace((unsigned char)*s))
            s++;
        bool comment = end - s >= 2 && s[0] == '/' && s[1] == '/';
        if (s < end && !comment)
            leading = false;
        if (comment) {
            const char *c = s + 2;
            while (c < end && isspace((unsigned char)*c))
                c++;
            if (end - c >= 5 && !strncmp(c, "kevo:", 5)) {
                c += 5;
                while (end > c && isspace((unsigned char)end[-1]))
                    end--;
                while (c < end && isspace((unsigned char)*c))
                    c++;
                const char *w = c;
                while (c < end && !isspace((unsigned char)*c))
                    c++;
                size_t wl = (size_t)(c - w);
                if (!leading)
                    problem(&d, "`// kevo:` directives belong in the comment block at the top "
                                "of the file, before any code");
                else if (wl == 6 && !strncmp(w, "launch", 6))
                    parse_launch(&d, c, end);
                else if (wl == 7 && !strncmp(w, "scratch", 7))
                    parse_scratch(&d, c, end);
                else if (wl == 7 && !strncmp(w, "options", 7))
                    parse_options(&d, c, end);
                else
                    problem(&d,
                            "unknown directive `// kevo: %.*s` (known: launch, scratch, "
                            "options)",
                            (int)wl, w);
            }
        }
        p = eol ? eol + 1 : end;
    }
    /* default args: every param, then every scratch buffer */
    for (size_t i = 0; i < spec->nlaunches; i++) {
        kevo_ocl_launch *L = &spec->launches[i];
        if (!L->default_args)
            continue;
        L->nargs = 0;
        for (size_t k = 0; k < task->nparams && L->nargs < KEVO_OCL_MAX_ARGS; k++)
            L->args[L->nargs++] = (kevo_ocl_arg){false, k};
        for (size_t k = 0; k < spec->nscratch && L->nargs < KEVO_OCL_MAX_ARGS; k++)
            L->args[L->nargs++] = (kevo_ocl_arg){true, k};
    }
    if (!spec->nlaunches && !d.count) {
        d.line = 1;
        problem(&d,
                "no launch given: start the file with one line per kernel launch, in "
                "order, e.g. `// kevo: launch %s global=ROUND_UP(N,256) local=256`",
                task->name);
    }
    *out = spec;
    return 0;
}
