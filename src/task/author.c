/*
 * task/author.c - writing a task rather than reading one: a C type's task
 * type, the shape rule and the check-size rule of `kevo tasks new`, the
 * default `bytes`, and a kevo_task as the task.json text kevo_task_load()
 * reads back. The rules are documented in docs/task-format.md ("Your own
 * operator: kevo tasks new").
 *
 * Must not: parse C (the caller brings the prototype, cparse reads it),
 * write files or run the reference: the caller writes, `kevo tasks check`
 * runs.
 */
#include "kevo/task.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The C types whose canonical spelling (LP64 Linux, the only ABI kevo
 * builds for) is exactly the C type of a task type, so that the user's
 * declaration and kevo's prototype are the same type. */
static const struct {
    const char *c;
    kevo_dtype t;
} exact_types[] = {{"float", KEVO_DT_F32},
                   {"double", KEVO_DT_F64},
                   {"int", KEVO_DT_I32},
                   {"long", KEVO_DT_I64},
                   {"unsigned char", KEVO_DT_U8}};

int kevo_dtype_from_c(kevo_dtype *out, const char *canonical)
{
    for (size_t i = 0; i < sizeof(exact_types) / sizeof(exact_types[0]); i++)
        if (canonical && !strcmp(canonical, exact_types[i].c)) {
            *out = exact_types[i].t;
            return 0;
        }
    return KEVO_ENOTFOUND;
}

/* A scalar param that takes its value from the sizes (a float scalar
 * always has a value, or is still missing one). */
static bool is_size_param(const kevo_param *p)
{
    return p->role == KEVO_ROLE_SCALAR && !p->has_value && !kevo_dtype_is_float(p->type);
}

int kevo_task_infer_shapes(kevo_task *t, kevo_buf *missing)
{
    const char *only = NULL;
    size_t nsize = 0;
    for (size_t i = 0; i < t->nparams; i++)
        if (is_size_param(&t->params[i])) {
            only = t->params[i].name;
            nsize++;
        }
    for (size_t i = 0; i < t->nparams; i++) {
        kevo_param *p = &t->params[i];
        if (p->role == KEVO_ROLE_SCALAR || p->ndim > 0)
            continue;
        if (nsize != 1) {
            kevo_buf_printf(missing, "%s%s", missing->len ? " " : "", p->name);
            continue;
        }
        if (!(p->shape = calloc(1, sizeof(char *))) || !(p->shape[0] = strdup(only)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        p->ndim = 1;
    }
    return kevo_buf_error(missing);
}

/* Total elements of the buffers under sz; negative when a shape does not
 * evaluate or a buffer would be empty. */
static double elements(const kevo_task *t, const kevo_sizes *sz)
{
    double total = 0;
    for (size_t i = 0; i < t->nparams; i++) {
        int64_t dims[8], count;
        size_t nd;
        if (t->params[i].role == KEVO_ROLE_SCALAR)
            continue;
        if (kevo_task_param_shape(dims, &nd, &count, t, i, sz) < 0) {
            kevo_error_clear();
            return -1;
        }
        if (count < 1)
            return -1;
        total += (double)count;
    }
    return total;
}

static bool same_sizes(const kevo_sizes *a, const kevo_sizes *b)
{
    return a->n == b->n && !memcmp(a->values, b->values, a->n * sizeof(int64_t));
}

/* The prime nearest x (ties go up), at least 2. */
static int64_t nearest_prime(double x)
{
    for (int64_t d = 0;; d++)
        for (int s = 1; s >= -1; s -= 2) {
            int64_t v = (int64_t)llround(x) + s * d, k = 2;
            if (v < 2)
                continue;
            while (k * k <= v && v % k)
                k++;
            if (k * k > v)
                return v;
        }
}

/* At most this many buffer elements in a derived check set (16 MiB of
 * floats): check sets are for edge cases, not for load. */
#define KEVO_CHECK_ELEMENTS_MAX (4.0 * 1024 * 1024)

int kevo_task_derive_check_sizes(kevo_task *t, kevo_buf *note)
{
    size_t k = t->sizes.n;
    int64_t values[3] = {1, 7, nearest_prime(pow(1000.0, 1.0 / (double)(k ? k : 1)))};
    if (t->check_sizes || t->ncheck)
        return kevo_error_set(KEVO_EINVAL, "the task has check sizes already");
    if (!(t->check_sizes = calloc(3, sizeof(kevo_sizes))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (int v = 0; v < 3; v++) {
        kevo_sizes *cs = &t->check_sizes[t->ncheck];
        cs->names = calloc(k, sizeof(char *));
        cs->values = calloc(k, sizeof(int64_t));
        if (!cs->names || !cs->values) {
            free(cs->names);
            free(cs->values);
            memset(cs, 0, sizeof(*cs));
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < k; i++) {
            cs->values[i] = values[v];
            if (!(cs->names[i] = strdup(t->sizes.names[i]))) {
                cs->n = i;
                t->ncheck++; /* freed with the task */
                return kevo_error_set(KEVO_ENOMEM, "out of memory");
            }
        }
        cs->n = k;
        bool dup = same_sizes(cs, &t->sizes);
        for (size_t j = 0; j < t->ncheck; j++)
            dup |= same_sizes(cs, &t->check_sizes[j]);
        double e = dup ? 0 : elements(t, cs);
        if (dup || e < 0 || e > KEVO_CHECK_ELEMENTS_MAX) {
            if (!dup)
                kevo_buf_printf(note, "%sall sizes %lld left out (%s)", note->len ? "; " : "",
                                (long long)values[v],
                                e < 0 ? "a buffer would be empty" : "buffers too large");
            for (size_t i = 0; i < k; i++)
                free(cs->names[i]);
            free(cs->names);
            free(cs->values);
            memset(cs, 0, sizeof(*cs));
            continue;
        }
        t->ncheck++;
    }
    return kevo_buf_error(note);
}

int kevo_task_bytes_expr(char **out, const kevo_task *t)
{
    /* one term per distinct shape: "4*M*K + 4*K*N + 4*M*N" */
    kevo_buf b = {0};
    char **shapes = calloc(t->nparams + 1, sizeof(char *));
    size_t *per = calloc(t->nparams + 1, sizeof(size_t)), n = 0;
    int error = 0;
    *out = NULL;
    if (!shapes || !per) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        if (p->role == KEVO_ROLE_SCALAR)
            continue;
        kevo_buf s = {0};
        for (size_t d = 0; d < p->ndim; d++) {
            bool plain = true; /* a name or a number needs no parentheses */
            for (const char *c = p->shape[d]; *c; c++)
                plain &= (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
                         (*c >= 'A' && *c <= 'Z') || *c == '_';
            kevo_buf_printf(&s, plain ? "%s%s" : "%s(%s)", d ? "*" : "", p->shape[d]);
        }
        char *text = kevo_buf_detach(&s);
        if (!text) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        size_t j = 0;
        while (j < n && strcmp(shapes[j], text))
            j++;
        if (j == n)
            shapes[n++] = text;
        else
            free(text);
        per[j] += kevo_dtype_size(p->type);
    }
    for (size_t j = 0; j < n; j++)
        kevo_buf_printf(&b, "%s%zu*%s", j ? " + " : "", per[j], shapes[j]);
    if ((error = kevo_buf_error(&b)) < 0)
        goto done;
    *out = kevo_buf_detach(&b);
    if (!*out)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
done:
    for (size_t j = 0; j < n; j++)
        free(shapes[j]);
    free(shapes);
    free(per);
    kevo_buf_free(&b);
    return error;
}

/* A JSON string literal of s. */
static void put_string(kevo_buf *b, const char *s)
{
    cJSON *item = cJSON_CreateString(s);
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    if (text)
        kevo_buf_puts(b, text);
    else if (!b->error)
        b->error = kevo_error_set(KEVO_ENOMEM, "out of memory"); /* sticky, as an append's */
    free(text);
    cJSON_Delete(item);
}

/* The shortest decimal that reads back as v. */
static void put_number(kevo_buf *b, double v)
{
    char text[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(text, sizeof(text), "%.*g", prec, v);
        if (strtod(text, NULL) == v)
            break;
    }
    kevo_buf_puts(b, text);
}

static void put_sizes(kevo_buf *b, const kevo_sizes *s)
{
    kevo_buf_puts(b, "{");
    for (size_t i = 0; i < s->n; i++) {
        kevo_buf_puts(b, i ? ", " : "");
        put_string(b, s->names[i]);
        kevo_buf_printf(b, ": %lld", (long long)s->values[i]);
    }
    kevo_buf_puts(b, "}");
}

static void put_init(kevo_buf *b, const kevo_init *in)
{
    static const char *const dist[] = {"normal", "uniform", "randint", "const"};
    kevo_buf_printf(b, ", \"init\": {\"dist\": \"%s\"", dist[in->dist]);
    if (in->dist == KEVO_INIT_CONST) {
        kevo_buf_puts(b, ", \"value\": ");
        put_number(b, in->a);
    } else {
        kevo_buf_puts(b, in->dist == KEVO_INIT_NORMAL ? ", \"mean\": " : ", \"low\": ");
        put_number(b, in->a);
        kevo_buf_puts(b, in->dist == KEVO_INIT_NORMAL ? ", \"std\": " : ", \"high\": ");
        put_number(b, in->b);
    }
    kevo_buf_puts(b, "}");
}

static void put_param(kevo_buf *b, const kevo_param *p)
{
    kevo_buf_puts(b, "    {\"name\": ");
    put_string(b, p->name);
    kevo_buf_printf(b, ", \"role\": \"%s\", \"type\": \"%s\"", kevo_role_name(p->role),
                    kevo_dtype_name(p->type));
    if (p->role == KEVO_ROLE_SCALAR) {
        if (p->has_value) {
            kevo_buf_puts(b, ", \"value\": ");
            put_number(b, p->value);
        }
        kevo_buf_puts(b, "}");
        return;
    }
    kevo_buf_puts(b, ", \"shape\": [");
    for (size_t d = 0; d < p->ndim; d++) {
        kevo_buf_puts(b, d ? ", " : "");
        put_string(b, p->shape[d]);
    }
    kevo_buf_puts(b, "]");
    if (p->role != KEVO_ROLE_OUT)
        put_init(b, &p->init);
    kevo_buf_puts(b, "}");
}

int kevo_task_json(char **out, const kevo_task *t)
{
    kevo_buf b = {0};
    *out = NULL;
    kevo_buf_puts(&b, "{\n  \"name\": ");
    put_string(&b, t->name);
    kevo_buf_printf(&b, ",\n  \"level\": %d,\n  \"category\": ", t->level);
    put_string(&b, t->category);
    kevo_buf_puts(&b, ",\n  \"description\": ");
    put_string(&b, t->description);
    kevo_buf_puts(&b, ",\n  \"params\": [\n");
    for (size_t i = 0; i < t->nparams; i++) {
        put_param(&b, &t->params[i]);
        kevo_buf_puts(&b, i + 1 < t->nparams ? ",\n" : "\n");
    }
    kevo_buf_puts(&b, "  ],\n  \"sizes\": ");
    put_sizes(&b, &t->sizes);
    if (t->ncheck) {
        kevo_buf_puts(&b, ",\n  \"check_sizes\": [");
        for (size_t i = 0; i < t->ncheck; i++) {
            kevo_buf_puts(&b, i ? ", " : "");
            put_sizes(&b, &t->check_sizes[i]);
        }
        kevo_buf_puts(&b, "]");
    }
    kevo_buf_puts(&b, ",\n  \"tolerance\": {\"atol\": ");
    put_number(&b, t->atol);
    kevo_buf_puts(&b, ", \"rtol\": ");
    put_number(&b, t->rtol);
    kevo_buf_puts(&b, "},\n  \"flops\": ");
    put_string(&b, t->flops);
    kevo_buf_puts(&b, ",\n  \"bytes\": ");
    put_string(&b, t->bytes);
    if (t->nbackends && !(t->nbackends == 1 && !strcmp(t->backends[0], "c"))) {
        kevo_buf_puts(&b, ",\n  \"backends\": [");
        for (size_t i = 0; i < t->nbackends; i++) {
            kevo_buf_puts(&b, i ? ", " : "");
            put_string(&b, t->backends[i]);
        }
        kevo_buf_puts(&b, "]");
    }
    kevo_buf_puts(&b, "\n}\n");
    int error = kevo_buf_error(&b);
    if (error == 0 && !(*out = kevo_buf_detach(&b)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    kevo_buf_free(&b);
    return error;
}
