/*
 * task/task.c - strict parsing and validation of task.json, the kernel's
 * prototype, task discovery. Errors name the file, the field and the
 * problem. Runs no code.
 */
#include "kevo/task.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest dimension a shape may give: every double up to here is an exact
 * integer, and int64_t holds it. */
#define KEVO_DIM_MAX 9007199254740992.0 /* 2^53 */

static const char *dtype_names[] = {"f32", "f64", "i32", "i64", "u8"};
static const char *dtype_ctypes[] = {"float", "double", "int32_t", "int64_t", "uint8_t"};
static const size_t dtype_sizes[] = {4, 8, 4, 8, 1};
static const char *role_names[] = {"in", "out", "inout", "scalar"};

const char *kevo_dtype_ctype(kevo_dtype t)
{
    return dtype_ctypes[t];
}
const char *kevo_dtype_name(kevo_dtype t)
{
    return dtype_names[t];
}
size_t kevo_dtype_size(kevo_dtype t)
{
    return dtype_sizes[t];
}
bool kevo_dtype_is_float(kevo_dtype t)
{
    return t == KEVO_DT_F32 || t == KEVO_DT_F64;
}
const char *kevo_role_name(kevo_role r)
{
    return role_names[r];
}

static bool is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

/* Report a field problem: "<file>: field '<field>': <problem>". */
#define FIELD_ERR(task, field, ...)                                                               \
    kevo_field_error((task)->json_path, field, __VA_ARGS__)

static int kevo_field_error(const char *file, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int kevo_field_error(const char *file, const char *field, const char *fmt, ...)
{
    kevo_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    kevo_buf_printf(&b, "%s: field '%s': ", file, field);
    kevo_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    kevo_error_set(KEVO_EINVAL, "%s", kevo_buf_cstr(&b));
    kevo_buf_free(&b);
    return KEVO_EINVAL;
}

static int check_keys(const kevo_task *t, const cJSON *obj, const char *where,
                      const char *const *allowed)
{
    for (const cJSON *it = obj->child; it; it = it->next) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(*a, it->string))
                ok = true;
        if (!ok) {
            kevo_buf f = {0};
            kevo_buf_printf(&f, "%s%s%s", where, *where ? "." : "", it->string);
            int e = FIELD_ERR(t, kevo_buf_cstr(&f), "unknown field (typo?)");
            kevo_buf_free(&f);
            return e;
        }
    }
    return 0;
}

static int get_string(char **out, const kevo_task *t, const cJSON *obj, const char *key,
                      const char *where, bool required)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char field[256];
    snprintf(field, sizeof(field), "%s%s%s", where, *where ? "." : "", key);
    if (!v) {
        if (required)
            return FIELD_ERR(t, field, "missing (required)");
        return 0;
    }
    if (!cJSON_IsString(v))
        return FIELD_ERR(t, field, "must be a string");
    if (!*v->valuestring)
        return FIELD_ERR(t, field, "must not be empty");
    *out = strdup(v->valuestring);
    return *out ? 0 : KEVO_ENOMEM;
}

static int parse_sizes(kevo_sizes *out, const kevo_task *t, const cJSON *obj, const char *field)
{
    if (!cJSON_IsObject(obj))
        return FIELD_ERR(t, field, "must be an object mapping size names to integers");
    int n = cJSON_GetArraySize(obj);
    if (n == 0)
        return FIELD_ERR(t, field, "must name at least one size");
    out->names = calloc((size_t)n, sizeof(char *));
    out->values = calloc((size_t)n, sizeof(int64_t));
    if (!out->names || !out->values)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (const cJSON *it = obj->child; it; it = it->next) {
        if (!is_identifier(it->string))
            return FIELD_ERR(t, field, "size name '%s' is not a C identifier", it->string);
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
            it->valuedouble < 0 || it->valuedouble > 1e15)
            return FIELD_ERR(t, field, "size '%s' must be a non-negative integer", it->string);
        if (!(out->names[out->n] = strdup(it->string)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        out->values[out->n] = (int64_t)it->valuedouble;
        out->n++;
    }
    return 0;
}

static void sizes_free(kevo_sizes *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    free(s->values);
    memset(s, 0, sizeof(*s));
}

static int parse_init(kevo_init *out, const kevo_task *t, const cJSON *init, const char *field)
{
    static const char *const keys[] = {"dist", "mean", "std", "low", "high", "value", NULL};
    if (!cJSON_IsObject(init))
        return FIELD_ERR(t, field, "must be an object like {\"dist\": \"normal\", ...}");
    int error;
    if ((error = check_keys(t, init, field, keys)) < 0)
        return error;
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(init, "dist");
    if (!cJSON_IsString(d))
        return FIELD_ERR(t, field, "missing string 'dist' (normal, uniform, randint, const)");
    const char *dist = d->valuestring;
    const char *ka, *kb;
    double da, db;
    if (!strcmp(dist, "normal")) {
        out->dist = KEVO_INIT_NORMAL, ka = "mean", kb = "std", da = 0, db = 1;
    } else if (!strcmp(dist, "uniform")) {
        out->dist = KEVO_INIT_UNIFORM, ka = "low", kb = "high", da = 0, db = 1;
    } else if (!strcmp(dist, "randint")) {
        out->dist = KEVO_INIT_RANDINT, ka = "low", kb = "high", da = 0, db = 100;
    } else if (!strcmp(dist, "const")) {
        out->dist = KEVO_INIT_CONST, ka = "value", kb = NULL, da = 0, db = 0;
    } else {
        return FIELD_ERR(t, field, "unknown dist '%s' (normal, uniform, randint, const)", dist);
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(init, ka);
    const cJSON *b = kb ? cJSON_GetObjectItemCaseSensitive(init, kb) : NULL;
    /* a range may follow the sizes (class indices below num_classes) */
    bool ranged = out->dist == KEVO_INIT_UNIFORM || out->dist == KEVO_INIT_RANDINT;
    if ((a && !cJSON_IsNumber(a) && !(ranged && cJSON_IsString(a))) ||
        (b && !cJSON_IsNumber(b) && !(ranged && cJSON_IsString(b))))
        return FIELD_ERR(t, field, ranged ? "'%s'/'%s' must be numbers or size expressions"
                                          : "'%s'/'%s' must be numbers",
                         ka, kb ? kb : ka);
    if (out->dist == KEVO_INIT_CONST && !a)
        return FIELD_ERR(t, field, "const needs 'value'");
    out->a = a && cJSON_IsNumber(a) ? a->valuedouble : da;
    out->b = b && cJSON_IsNumber(b) ? b->valuedouble : db;
    int error2 = 0;
    if (a && cJSON_IsString(a) && !(out->a_expr = strdup(a->valuestring)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (b && cJSON_IsString(b) && !(out->b_expr = strdup(b->valuestring)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    /* checked on every size set: low < high wherever the kernel runs */
    for (size_t s = 0; s < kevo_task_nsets(t) && (out->a_expr || out->b_expr); s++) {
        double va = out->a, vb = out->b;
        const kevo_sizes *sz = kevo_task_set(t, s);
        if ((out->a_expr && (error2 = kevo_expr_eval(&va, out->a_expr, sz, true)) < 0) ||
            (out->b_expr && (error2 = kevo_expr_eval(&vb, out->b_expr, sz, true)) < 0))
            return FIELD_ERR(t, field, "%s", kevo_error_last());
        if (vb <= va)
            return FIELD_ERR(t, field, "'high' must be greater than 'low' (size set %zu gives "
                             "[%g, %g))", s, va, vb);
        if (s == 0)
            out->a = va, out->b = vb;
    }
    if ((out->dist == KEVO_INIT_UNIFORM || out->dist == KEVO_INIT_RANDINT) && out->b <= out->a)
        return FIELD_ERR(t, field, "'high' must be greater than 'low'");
    if (out->dist == KEVO_INIT_NORMAL && out->b < 0)
        return FIELD_ERR(t, field, "'std' must not be negative");
    return 0;
}

/* Integer inputs: the values an init can produce must fit the type, or the
 * conversion in task/inputs.c is undefined (and differs across machines).
 * normal() has unbounded tails; its values saturate at generation. */
static int check_init_range(const kevo_task *t, const kevo_param *p, const char *field)
{
    double lo, hi; /* [lo, hi): the representable integers */
    switch (p->type) {
    case KEVO_DT_I32: lo = -2147483648.0, hi = 2147483648.0; break;
    case KEVO_DT_I64: lo = -9223372036854775808.0, hi = 9223372036854775808.0; break;
    case KEVO_DT_U8: lo = 0, hi = 256; break;
    default: return 0;
    }
    const kevo_init *in = &p->init;
    const char *type = kevo_dtype_name(p->type);
    switch (in->dist) {
    case KEVO_INIT_CONST:
        if (in->a != floor(in->a) || in->a < lo || in->a >= hi)
            return FIELD_ERR(t, field, "'value' %g is not a %s value", in->a, type);
        return 0;
    case KEVO_INIT_RANDINT:
    case KEVO_INIT_UNIFORM:
        if (in->a < lo || in->b > hi)
            return FIELD_ERR(t, field, "[low, high) = [%g, %g) does not fit %s [%.0f, %.0f)",
                             in->a, in->b, type, lo, hi);
        return 0;
    default:
        return 0;
    }
}

/* A scalar param: no shape or init, an optional numeric 'value'. */
static int parse_scalar_param(kevo_param *p, const kevo_task *t, const cJSON *obj,
                              const char *where)
{
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(obj, "shape");
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(obj, "init");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
    char field[96];
    if (shape || init) {
        snprintf(field, sizeof(field), "%s.%s", where, shape ? "shape" : "init");
        return FIELD_ERR(t, field, "a scalar has no shape or init");
    }
    if (value) {
        if (!cJSON_IsNumber(value)) {
            snprintf(field, sizeof(field), "%s.value", where);
            return FIELD_ERR(t, field, "must be a number");
        }
        p->has_value = true;
        p->value = value->valuedouble;
    }
    return 0;
}

/* A buffer's 'shape': 1 to 8 dimensions, integers or size expressions. */
static int parse_shape(kevo_param *p, const kevo_task *t, const cJSON *shape, const char *field)
{
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) < 1 || cJSON_GetArraySize(shape) > 8)
        return FIELD_ERR(t, field, "must be an array of 1 to 8 dimensions");
    p->ndim = (size_t)cJSON_GetArraySize(shape);
    p->shape = calloc(p->ndim, sizeof(char *));
    if (!p->shape) {
        p->ndim = 0;
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (const cJSON *d = shape->child; d; d = d->next, k++) {
        char text[64];
        if (cJSON_IsNumber(d) && d->valuedouble == floor(d->valuedouble) &&
            d->valuedouble >= 0 && d->valuedouble <= KEVO_DIM_MAX)
            snprintf(text, sizeof(text), "%lld", (long long)d->valuedouble);
        else if (cJSON_IsString(d))
            snprintf(text, sizeof(text), "%s", "");
        else
            return FIELD_ERR(t, field, "dimension %zu must be an integer in 0..%.0f or an "
                             "expression", k, KEVO_DIM_MAX);
        p->shape[k] = strdup(cJSON_IsString(d) ? d->valuestring : text);
        double v;
        if (kevo_expr_eval(&v, p->shape[k], &t->sizes, true) < 0)
            return FIELD_ERR(t, field, "dimension %zu: %s", k, kevo_error_last());
    }
    return 0;
}

/* A buffer param (in, out, inout): its shape, then its init or the
 * default init of its type. */
static int parse_buffer_param(kevo_param *p, const kevo_task *t, const cJSON *obj,
                              const char *where)
{
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(obj, "init");
    char field[96];
    int error;
    snprintf(field, sizeof(field), "%s.shape", where);
    if (cJSON_GetObjectItemCaseSensitive(obj, "value"))
        return FIELD_ERR(t, field, "'value' is only for scalars");
    if ((error = parse_shape(p, t, cJSON_GetObjectItemCaseSensitive(obj, "shape"), field)) < 0)
        return error;
    snprintf(field, sizeof(field), "%s.init", where);
    if (init) {
        if (p->role == KEVO_ROLE_OUT)
            return FIELD_ERR(t, field, "an out param has no init (it is poisoned)");
        if ((error = parse_init(&p->init, t, init, field)) < 0)
            return error;
        return check_init_range(t, p, field);
    }
    if (p->role == KEVO_ROLE_INOUT)
        return FIELD_ERR(t, field, "an inout param needs an init");
    if (kevo_dtype_is_float(p->type))
        p->init = (kevo_init){.dist = KEVO_INIT_NORMAL, .a = 0, .b = 1};
    else
        p->init = (kevo_init){.dist = KEVO_INIT_RANDINT, .a = 0, .b = p->type == KEVO_DT_U8 ? 2 : 100};
    return 0;
}

static int parse_param(kevo_param *p, const kevo_task *t, const cJSON *obj, int index)
{
    static const char *const keys[] = {"name",  "role",  "type", "shape",
                                       "init",  "value", "torch", NULL};
    char where[64];
    snprintf(where, sizeof(where), "params[%d]", index);
    if (!cJSON_IsObject(obj))
        return FIELD_ERR(t, where, "must be an object");
    int error;
    if ((error = check_keys(t, obj, where, keys)) < 0)
        return error;
    char *role = NULL, *type = NULL;
    if ((error = get_string(&p->name, t, obj, "name", where, true)) < 0)
        goto done;
    if (!is_identifier(p->name)) {
        error = FIELD_ERR(t, where, "name '%s' is not a C identifier", p->name);
        goto done;
    }
    if ((error = get_string(&role, t, obj, "role", where, true)) < 0 ||
        (error = get_string(&type, t, obj, "type", where, true)) < 0 ||
        (error = get_string(&p->torch, t, obj, "torch", where, false)) < 0)
        goto done;
    int r = -1, ty = -1;
    for (int i = 0; i < 4; i++)
        if (!strcmp(role, role_names[i]))
            r = i;
    for (int i = 0; i < 5; i++)
        if (!strcmp(type, dtype_names[i]))
            ty = i;
    if (r < 0) {
        error = FIELD_ERR(t, where, "unknown role '%s' (in, out, inout, scalar)", role);
        goto done;
    }
    if (ty < 0) {
        error = FIELD_ERR(t, where, "unknown type '%s' (f32, f64, i32, i64, u8)", type);
        goto done;
    }
    p->role = (kevo_role)r;
    p->type = (kevo_dtype)ty;
    if (p->role == KEVO_ROLE_SCALAR)
        error = parse_scalar_param(p, t, obj, where);
    else
        error = parse_buffer_param(p, t, obj, where);
done:
    free(role);
    free(type);
    return error;
}

void kevo_task_free(kevo_task *t)
{
    if (!t)
        return;
    free(t->dir);
    free(t->json_path);
    free(t->reference_path);
    free(t->name);
    free(t->category);
    free(t->description);
    for (size_t i = 0; i < t->nparams; i++) {
        free(t->params[i].name);
        for (size_t k = 0; k < t->params[i].ndim; k++)
            free(t->params[i].shape[k]);
        free(t->params[i].shape);
        free(t->params[i].torch);
        free(t->params[i].init.a_expr);
        free(t->params[i].init.b_expr);
    }
    free(t->params);
    free(t->kernelbench);
    free(t->draft_path);
    sizes_free(&t->sizes);
    for (size_t i = 0; i < t->ncheck; i++)
        sizes_free(&t->check_sizes[i]);
    free(t->check_sizes);
    free(t->flops);
    free(t->bytes);
    for (size_t i = 0; i < t->nbackends; i++)
        free(t->backends[i]);
    free(t->backends);
    free(t);
}

static int validate_sizes_usage(const kevo_task *t)
{
    /* Every param shape must evaluate to a positive count on every set. */
    for (size_t s = 0; s < kevo_task_nsets(t); s++) {
        const kevo_sizes *sz = kevo_task_set(t, s);
        for (size_t i = 0; i < t->nparams; i++) {
            int64_t dims[8], count;
            size_t nd;
            const kevo_param *p = &t->params[i];
            char field[96];
            snprintf(field, sizeof(field), "params[%zu].%s", i,
                     p->role == KEVO_ROLE_SCALAR ? "value" : "shape");
            if (p->role == KEVO_ROLE_SCALAR) {
                double v;
                if (kevo_task_scalar_value(&v, t, i, sz) < 0)
                    return FIELD_ERR(t, field, "%s", kevo_error_last());
                continue;
            }
            if (kevo_task_param_shape(dims, &nd, &count, t, i, sz) < 0)
                return FIELD_ERR(t, field, "%s", kevo_error_last());
            if (count <= 0)
                return FIELD_ERR(t, field, "'%s' has %lld elements under %s (must be >= 1)",
                                 p->name, (long long)count,
                                 s == 0 ? "sizes" : "a check_sizes entry");
            if ((double)count * (double)kevo_dtype_size(p->type) > 4.0 * 1024 * 1024 * 1024)
                return FIELD_ERR(t, field, "'%s' is larger than 4 GiB", p->name);
        }
    }
    return 0;
}

/* task.json read and parsed; *root is the caller's (cJSON_Delete). */
static int read_task_json(cJSON **root, const kevo_task *t)
{
    char *text = NULL;
    int error = kevo_file_read(&text, NULL, t->json_path);
    if (error < 0) {
        if (error == KEVO_ENOTFOUND)
            kevo_error_set(error, "%s: missing (a task folder holds task.json and reference.c)",
                           t->json_path);
        goto done;
    }
    *root = cJSON_Parse(text);
    if (!*root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        for (const char *c = text; at && c < at; c++)
            line += *c == '\n';
        error = kevo_error_set(KEVO_EINVAL, "%s: invalid JSON near line %d", t->json_path, line);
        goto done;
    }
    if (!cJSON_IsObject(*root))
        error = kevo_error_set(KEVO_EINVAL, "%s: must hold a JSON object", t->json_path);
done:
    free(text);
    return error;
}

/* name, level and the required strings. */
static int parse_header(kevo_task *t, const cJSON *root)
{
    int error;
    if ((error = get_string(&t->name, t, root, "name", "", true)) < 0)
        return error;
    if (!is_identifier(t->name))
        return FIELD_ERR(t, "name", "'%s' is not a C identifier", t->name);
    const cJSON *level = cJSON_GetObjectItemCaseSensitive(root, "level");
    if (!level)
        return FIELD_ERR(t, "level", "missing (required)");
    if (!cJSON_IsNumber(level) || level->valuedouble != floor(level->valuedouble) ||
        level->valuedouble < 1 || level->valuedouble > 3)
        return FIELD_ERR(t, "level", "must be an integer 1..3");
    t->level = (int)level->valuedouble;
    if ((error = get_string(&t->category, t, root, "category", "", true)) < 0 ||
        (error = get_string(&t->description, t, root, "description", "", true)) < 0 ||
        (error = get_string(&t->flops, t, root, "flops", "", true)) < 0 ||
        (error = get_string(&t->bytes, t, root, "bytes", "", true)) < 0)
        return error;
    return 0;
}

/* 'sizes' (required) and 'check_sizes', each set naming exactly the sizes. */
static int parse_size_sets(kevo_task *t, const cJSON *root)
{
    int error;
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(root, "sizes");
    if (!sizes)
        return FIELD_ERR(t, "sizes", "missing (required)");
    if ((error = parse_sizes(&t->sizes, t, sizes, "sizes")) < 0)
        return error;
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(root, "check_sizes");
    if (!checks)
        return 0;
    if (!cJSON_IsArray(checks))
        return FIELD_ERR(t, "check_sizes", "must be an array of size objects");
    t->check_sizes = calloc((size_t)cJSON_GetArraySize(checks) + 1, sizeof(kevo_sizes));
    if (!t->check_sizes)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int k = 0;
    for (const cJSON *c = checks->child; c; c = c->next, k++) {
        char field[64];
        snprintf(field, sizeof(field), "check_sizes[%d]", k);
        kevo_sizes *cs = &t->check_sizes[t->ncheck++];
        if ((error = parse_sizes(cs, t, c, field)) < 0)
            return error;
        if (cs->n != t->sizes.n)
            return FIELD_ERR(t, field, "must give exactly the size names of 'sizes'");
        for (size_t i = 0; i < cs->n; i++) {
            bool found = false;
            for (size_t j = 0; j < t->sizes.n; j++)
                found |= !strcmp(cs->names[i], t->sizes.names[j]);
            if (!found)
                return FIELD_ERR(t, field, "size '%s' is not in 'sizes'", cs->names[i]);
        }
    }
    return 0;
}

/* What params[k] must satisfy next to the earlier ones: a unique name, and
 * a scalar without 'value' is an integer size of the same name. */
static int check_param_in_task(const kevo_task *t, int k)
{
    char field[64];
    for (int j = 0; j < k; j++)
        if (!strcmp(t->params[j].name, t->params[k].name)) {
            snprintf(field, sizeof(field), "params[%d].name", k);
            return FIELD_ERR(t, field, "duplicate name '%s'", t->params[k].name);
        }
    const kevo_param *pp = &t->params[k];
    if (pp->role != KEVO_ROLE_SCALAR || pp->has_value)
        return 0;
    bool found = false;
    for (size_t j = 0; j < t->sizes.n; j++)
        found |= !strcmp(t->sizes.names[j], pp->name);
    snprintf(field, sizeof(field), "params[%d]", k);
    if (!found)
        return FIELD_ERR(t, field, "scalar '%s' has no 'value' and no size of that name",
                         pp->name);
    if (kevo_dtype_is_float(pp->type))
        return FIELD_ERR(t, field, "scalar '%s' takes its value from 'sizes', so it "
                         "must be an integer type", pp->name);
    return 0;
}

/* "input:K" / "output:K" (K a small decimal) or "state:NAME". */
static bool binding_ok(const char *b, const char *kind)
{
    size_t n = strlen(kind);
    if (strncmp(b, kind, n) || b[n] != ':' || !b[n + 1])
        return false;
    if (!strcmp(kind, "state"))
        return true;
    for (const char *q = b + n + 1; *q; q++)
        if (!isdigit((unsigned char)*q) || q - (b + n + 1) > 3)
            return false;
    return true;
}

/* A torch task binds every param to the module (docs/torch-tasks.md); a C
 * task binds none. */
static int check_torch_binding(const kevo_task *t, int k)
{
    const kevo_param *p = &t->params[k];
    char field[64];
    snprintf(field, sizeof(field), "params[%d].torch", k);
    if (!t->torch)
        return p->torch ? FIELD_ERR(t, field, "only a torch task (\"reference\": a .py file) "
                                    "binds params to a module")
                        : 0;
    switch (p->role) {
    case KEVO_ROLE_IN:
        if (!p->torch || !(binding_ok(p->torch, "input") || binding_ok(p->torch, "state")))
            return FIELD_ERR(t, field, "an 'in' param of a torch task needs \"input:K\" (the "
                             "K-th value of get_inputs()) or \"state:NAME\" (a parameter or "
                             "buffer of the module)");
        return 0;
    case KEVO_ROLE_OUT:
        if (!p->torch || !binding_ok(p->torch, "output"))
            return FIELD_ERR(t, field, "an 'out' param of a torch task needs \"output:K\" "
                             "(the K-th tensor forward returns)");
        return 0;
    case KEVO_ROLE_INOUT:
        return FIELD_ERR(t, field, "a torch task has no 'inout' params (the module's "
                         "outputs are 'out' params)");
    default:
        if (p->torch && !binding_ok(p->torch, "input"))
            return FIELD_ERR(t, field, "a scalar binds to \"input:K\" (a number get_inputs() "
                             "returns) or to nothing (a size)");
        return 0;
    }
}

/* 'params' (required): at least one, and one that is written. */
static int parse_params(kevo_task *t, const cJSON *root)
{
    int error;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (!params)
        return FIELD_ERR(t, "params", "missing (required)");
    if (!cJSON_IsArray(params) || cJSON_GetArraySize(params) == 0)
        return FIELD_ERR(t, "params", "must be a non-empty array");
    t->params = calloc((size_t)cJSON_GetArraySize(params), sizeof(kevo_param));
    if (!t->params)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int k = 0;
    bool has_out = false;
    for (const cJSON *p = params->child; p; p = p->next, k++) {
        t->nparams++;
        if ((error = parse_param(&t->params[k], t, p, k)) < 0 ||
            (error = check_param_in_task(t, k)) < 0 || (error = check_torch_binding(t, k)) < 0)
            return error;
        has_out |= t->params[k].role == KEVO_ROLE_OUT || t->params[k].role == KEVO_ROLE_INOUT;
    }
    if (!has_out)
        return FIELD_ERR(t, "params", "no 'out' or 'inout' param: the kernel computes nothing");
    return 0;
}

/* 'tolerance' (default atol = rtol = 1e-2). */
static int parse_tolerance(kevo_task *t, const cJSON *root)
{
    static const char *const tkeys[] = {"atol", "rtol", NULL};
    int error;
    t->atol = 1e-2;
    t->rtol = 1e-2;
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (!tol)
        return 0;
    if (!cJSON_IsObject(tol))
        return FIELD_ERR(t, "tolerance", "must be an object {\"atol\": x, \"rtol\": y}");
    if ((error = check_keys(t, tol, "tolerance", tkeys)) < 0)
        return error;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tol, "atol");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(tol, "rtol");
    if ((a && (!cJSON_IsNumber(a) || a->valuedouble < 0)) ||
        (r && (!cJSON_IsNumber(r) || r->valuedouble < 0)))
        return FIELD_ERR(t, "tolerance", "atol and rtol must be non-negative numbers");
    if (a)
        t->atol = a->valuedouble;
    if (r)
        t->rtol = r->valuedouble;
    return 0;
}

/* A backend name as task.json may write it: a lowercase identifier.
 * Whether a backend of that name is registered is the backend module's
 * question (kevo_backend_check_task): the task module sits below it. */
static bool backend_name_ok(const char *s)
{
    if (!s || !(*s >= 'a' && *s <= 'z'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* 'backends': backend names; default ["c"], the reference's own backend. */
static int parse_backends(kevo_task *t, const cJSON *root)
{
    const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
    size_t n = backends ? (size_t)cJSON_GetArraySize(backends) : 1;
    if (backends && (!cJSON_IsArray(backends) || n == 0))
        return FIELD_ERR(t, "backends", "must be a non-empty array of strings");
    if (!(t->backends = calloc(n, sizeof(char *))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (!backends) {
        t->backends[t->nbackends++] = strdup("c");
        return 0;
    }
    for (const cJSON *b = backends->child; b; b = b->next) {
        if (!cJSON_IsString(b) || !backend_name_ok(b->valuestring))
            return FIELD_ERR(t, "backends", "entries must be backend names (lowercase "
                             "identifiers such as \"c\")");
        t->backends[t->nbackends++] = strdup(b->valuestring);
    }
    return 0;
}

/* 'timeout_s' (default 60). */
static int parse_timeout(kevo_task *t, const cJSON *root)
{
    t->timeout_s = 60;
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(root, "timeout_s");
    if (!to)
        return 0;
    if (!cJSON_IsNumber(to) || to->valuedouble <= 0 || to->valuedouble > 3600)
        return FIELD_ERR(t, "timeout_s", "must be a number of seconds in (0, 3600]");
    t->timeout_s = to->valuedouble;
    return 0;
}

/* A file of the task folder named by a field: a plain name, no path. */
static int folder_file(char **out, const kevo_task *t, const cJSON *root, const char *key)
{
    char *name = NULL;
    int error = get_string(&name, t, root, key, "", false);
    if (error < 0 || !name)
        return error;
    if (strchr(name, '/') || name[0] == '.')
        error = FIELD_ERR(t, key, "'%s' must be a file name in the task folder", name);
    else if (!(*out = kevo_path_join(t->dir, name)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    free(name);
    return error;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && !strcmp(s + n - k, tail);
}

/* 'reference' (reference.c or a .py module), 'kernelbench', and the torch
 * task's 'draft' and 'torch_mode'. Before 'params': a param's binding
 * depends on the kind of reference. */
static int parse_reference(kevo_task *t, const cJSON *root)
{
    char *ref = NULL, *mode = NULL;
    int error = folder_file(&ref, t, root, "reference");
    if (error < 0)
        return error;
    if (ref) {
        free(t->reference_path);
        t->reference_path = ref;
        if (!ends_with(ref, ".c") && !ends_with(ref, ".py"))
            return FIELD_ERR(t, "reference", "must name a .c file (a C reference) or a .py "
                             "file (a PyTorch module, docs/torch-tasks.md)");
        t->torch = ends_with(ref, ".py");
    }
    if ((error = get_string(&t->kernelbench, t, root, "kernelbench", "", false)) < 0 ||
        (error = folder_file(&t->draft_path, t, root, "draft")) < 0 ||
        (error = get_string(&mode, t, root, "torch_mode", "", false)) < 0)
        goto done;
    if (t->draft_path && !t->torch)
        error = FIELD_ERR(t, "draft", "only a torch task has a C draft (a C task starts "
                          "from its reference.c)");
    else if (t->draft_path && !ends_with(t->draft_path, ".c"))
        error = FIELD_ERR(t, "draft", "must name a .c file");
    else if (t->draft_path && !kevo_file_exists(t->draft_path))
        error = kevo_error_set(KEVO_ENOTFOUND, "%s: field 'draft': %s is missing", t->json_path,
                               t->draft_path);
    else if (mode && !t->torch)
        error = FIELD_ERR(t, "torch_mode", "only for a torch task");
    else if (mode && strcmp(mode, "train") && strcmp(mode, "eval"))
        error = FIELD_ERR(t, "torch_mode", "'%s': must be \"train\" or \"eval\"", mode);
    else
        t->torch_eval = mode && !strcmp(mode, "eval");
done:
    free(mode);
    return error;
}

/* The expressions evaluate on every size set, and the reference exists. */
static int check_task(const kevo_task *t)
{
    double v;
    int error;
    if (kevo_expr_eval(&v, t->flops, &t->sizes, false) < 0)
        return FIELD_ERR(t, "flops", "%s", kevo_error_last());
    if (kevo_expr_eval(&v, t->bytes, &t->sizes, false) < 0)
        return FIELD_ERR(t, "bytes", "%s", kevo_error_last());
    if ((error = validate_sizes_usage(t)) < 0)
        return error;
    if (!kevo_file_exists(t->reference_path))
        return kevo_error_set(KEVO_ENOTFOUND, "%s: missing (every task needs its reference: "
                              "reference.c, or the file its \"reference\" names)",
                              t->reference_path);
    return 0;
}

int kevo_task_load(kevo_task **out, const char *dir)
{
    static const char *const keys[] = {"name", "level", "category", "description", "params",
                                       "sizes", "check_sizes", "tolerance", "flops", "bytes",
                                       "backends", "timeout_s", "reference", "kernelbench",
                                       "draft", "torch_mode", NULL};
    *out = NULL;
    int error = 0;
    cJSON *root = NULL;
    kevo_task *t = calloc(1, sizeof(*t));
    if (!t)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    t->dir = strdup(dir);
    t->json_path = kevo_path_join(dir, "task.json");
    t->reference_path = kevo_path_join(dir, "reference.c");
    if (!t->dir || !t->json_path || !t->reference_path) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (!kevo_dir_exists(dir)) {
        error = kevo_error_set(KEVO_ENOTFOUND, "%s: no such task folder", dir);
        goto done;
    }
    /* the order of the steps is the order of the errors a task author sees */
    if ((error = read_task_json(&root, t)) < 0 || (error = check_keys(t, root, "", keys)) < 0 ||
        (error = parse_header(t, root)) < 0 || (error = parse_reference(t, root)) < 0 ||
        (error = parse_size_sets(t, root)) < 0 ||
        (error = parse_params(t, root)) < 0 || (error = parse_tolerance(t, root)) < 0 ||
        (error = parse_backends(t, root)) < 0 || (error = parse_timeout(t, root)) < 0 ||
        (error = check_task(t)) < 0)
        goto done;
    *out = t;
    t = NULL;
done:
    cJSON_Delete(root);
    kevo_task_free(t);
    return error;
}

size_t kevo_task_nsets(const kevo_task *t)
{
    return 1 + t->ncheck;
}

const kevo_sizes *kevo_task_set(const kevo_task *t, size_t i)
{
    return i == 0 ? &t->sizes : &t->check_sizes[i - 1];
}

int kevo_task_param_shape(int64_t dims[8], size_t *out_ndim, int64_t *out_count,
                          const kevo_task *t, size_t param, const kevo_sizes *sizes)
{
    const kevo_param *p = &t->params[param];
    int64_t count = 1;
    for (size_t k = 0; k < p->ndim; k++) {
        double v;
        int error;
        if ((error = kevo_expr_eval(&v, p->shape[k], sizes, true)) < 0)
            return error;
        /* converting an out-of-range double to int64_t is undefined */
        if (!(fabs(v) <= KEVO_DIM_MAX))
            return kevo_error_set(KEVO_EINVAL, "dimension %zu (\"%s\") is %g, beyond %.0f", k,
                                  p->shape[k], v, KEVO_DIM_MAX);
        dims[k] = (int64_t)v;
        /* negative dims count as 0; the count saturates at INT64_MAX */
        int64_t d = dims[k] < 0 ? 0 : dims[k];
        if (d == 0 || count == 0)
            count = 0;
        else if (count > INT64_MAX / d)
            count = INT64_MAX;
        else
            count *= d;
    }
    *out_ndim = p->ndim;
    *out_count = count;
    return 0;
}

int kevo_task_scalar_value(double *out, const kevo_task *t, size_t param, const kevo_sizes *sz)
{
    const kevo_param *p = &t->params[param];
    if (p->has_value) {
        *out = p->value;
        return 0;
    }
    for (size_t i = 0; i < sz->n; i++)
        if (!strcmp(sz->names[i], p->name)) {
            *out = (double)sz->values[i];
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL, "no size named '%s'", p->name);
}

int kevo_task_prototype(char **out, const kevo_task *t)
{
    kevo_buf b = {0};
    kevo_buf_printf(&b, "void %s(", t->name);
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        const char *ct = kevo_dtype_ctype(p->type);
        if (i)
            kevo_buf_puts(&b, ", ");
        if (p->role == KEVO_ROLE_IN)
            kevo_buf_printf(&b, "const %s *%s", ct, p->name);
        else if (p->role == KEVO_ROLE_SCALAR)
            kevo_buf_printf(&b, "%s %s", ct, p->name);
        else
            kevo_buf_printf(&b, "%s *%s", ct, p->name);
    }
    kevo_buf_puts(&b, ")");
    *out = kevo_buf_detach(&b);
    return 0;
}

int kevo_task_work(double *flops, double *bytes, const kevo_task *t)
{
    int error;
    if ((error = kevo_expr_eval(flops, t->flops, &t->sizes, false)) < 0)
        return error;
    return kevo_expr_eval(bytes, t->bytes, &t->sizes, false);
}

bool kevo_task_supports(const kevo_task *t, const char *backend)
{
    for (size_t i = 0; i < t->nbackends; i++)
        if (!strcmp(t->backends[i], backend))
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_rec(char ***list, size_t *n, size_t *cap, const char *dir, int depth)
{
    if (depth > 16)
        return 0;
    char *tj = kevo_path_join(dir, "task.json");
    bool is_task = kevo_file_exists(tj);
    free(tj);
    if (is_task) {
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            char **p = realloc(*list, *cap * sizeof(char *));
            if (!p)
                return kevo_error_set(KEVO_ENOMEM, "out of memory");
            *list = p;
        }
        (*list)[(*n)++] = strdup(dir);
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int error = 0;
    while ((e = readdir(d)) != NULL && error == 0) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = kevo_path_join(dir, e->d_name);
        if (kevo_dir_exists(sub))
            error = find_rec(list, n, cap, sub, depth + 1);
        free(sub);
    }
    closedir(d);
    return error;
}

/* A relative suite path that is not a folder here but is one under the data
 * directory's suites/ (`c/level1`, or `suites/c/level1` outside the source
 * tree): that folder, malloc'd; else NULL. The cwd always wins; paths
 * starting with '/' or '.' are taken as they are. */
static char *data_suite_path(const char *root)
{
    const char *data = root[0] && root[0] != '/' && root[0] != '.' ? kevo_data_dir() : NULL;
    if (!data)
        return NULL;
    bool prefixed = !strncmp(root, "suites/", 7);
    char *suites = kevo_path_join(data, "suites");
    char *path = suites ? kevo_path_join(prefixed ? data : suites, root) : NULL;
    free(suites);
    if (path && !kevo_dir_exists(path)) {
        free(path);
        path = NULL;
    }
    return path;
}

int kevo_task_find(char ***out, size_t *out_count, const char *root)
{
    *out = NULL;
    *out_count = 0;
    char *in_data = NULL;
    if (!kevo_dir_exists(root) && !(in_data = data_suite_path(root)))
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no such directory", root);
    size_t cap = 0;
    char *clean = in_data ? in_data : strdup(root);
    size_t len = strlen(clean);
    while (len > 1 && clean[len - 1] == '/')
        clean[--len] = '\0';
    int error = find_rec(out, out_count, &cap, clean, 0);
    free(clean);
    if (error < 0)
        return error;
    if (*out_count > 1)
        qsort(*out, *out_count, sizeof(char *), cmp_str);
    return 0;
}

void kevo_task_dirs_free(char **dirs, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(dirs[i]);
    free(dirs);
}
