/*
 * cli/cmd_tasks_new.c - `kevo tasks new NAME --from FILE.c --function F
 * ...`: a task folder (task.json + reference.c) from a C function a user
 * already has. The glue between two modules that may not call each other:
 * cparse reads F's prototype (kevo_cparse_prototype_read), this file maps
 * each parameter to a task param (const T * in, T * out, integer sizes,
 * float scalars with a --value) and assembles reference.c (the user's file,
 * F renamed or wrapped to the task's entry point), the task module applies
 * the shape and check-size rules and writes task.json (task/author.c), and
 * kevo_task_load() validates what was written.
 *
 * Must not: guess a shape it cannot infer by the documented rule (it names
 * the --shape flags that are missing and writes nothing), overwrite a
 * non-empty folder, or run the user's code (`kevo tasks check` does, in the
 * sandbox).
 */
#include "commands.h"
#include "opts.h"
#include "kevo/cparse.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FLAGS 64

typedef struct new_options {
    const char *name, *from, *function, *out, *category, *description, *flops, *bytes;
    double tolerance; /* < 0: the format's default */
    int level;
    const char *sizes[MAX_FLAGS], *shapes[MAX_FLAGS], *checks[MAX_FLAGS], *values[MAX_FLAGS];
    size_t nsizes, nshapes, nchecks, nvalues;
} new_options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo tasks new NAME --from FILE.c --function F [--size N=4096 ...]\n"
            "                      [--shape PARAM=D1,D2,... ...] [--check-size N=7,... ...]\n"
            "                      [--value PARAM=V ...] [--out DIR] [--category C]\n"
            "                      [--description TEXT] [--tolerance T] [--level L]\n"
            "                      [--flops EXPR] [--bytes EXPR]\n"
            "\n"
            "Make a task of your own C function: read F's prototype in FILE.c (libclang), map\n"
            "each parameter (const T * -> in, other T * -> out, integer -> size, float or\n"
            "double -> a scalar with a fixed --value), write DIR/task.json and DIR/reference.c\n"
            "(FILE.c with F as the task's kernel NAME). A non-const pointer becomes an output\n"
            "that kevo poisons before each call: if F also reads it, make it \"inout\" with an\n"
            "\"init\" in task.json by hand. Nothing is written when a shape cannot be inferred\n"
            "(rule: one size parameter -> every buffer is [that size]); the message lists\n"
            "the flags to add. Then run `kevo tasks check DIR` (docs/task-format.md).\n"
            "\n"
            "  --from FILE.c        the C file defining F (its helpers and includes are kept)\n"
            "  --function F         the function to make a task of\n"
            "  --size N=V           timed value of size N (every integer parameter needs one;\n"
            "                       other names may be used in --shape)\n"
            "  --shape P=D1,D2,...  dimensions of buffer P, integers or expressions over the\n"
            "                       sizes (M*K, (H-K)/S+1)\n"
            "  --check-size N=V,... one correctness-only size set naming every size (default:\n"
            "                       every size 1, 7, and the prime nearest 1000^(1/sizes))\n"
            "  --value P=V          fixed value of scalar P (needed for float scalars; an\n"
            "                       integer given one is no longer a size)\n"
            "  --out DIR            where the task goes (default ./NAME; must not exist or be\n"
            "                       empty)\n"
            "  --category C         task.json category (default custom)\n"
            "  --description TEXT   one line saying what F computes\n"
            "  --tolerance T        atol = rtol = T (default 0.01)\n"
            "  --level L            task level 1..3 (default 1)\n"
            "  --flops EXPR         work of one call (default 0: unknown)\n"
            "  --bytes EXPR         compulsory traffic (default: every buffer once)\n"
            "\n"
            "exit status: 0 written, 2 bad usage or a function kevo cannot take (the message\n"
            "names the parameter), 3 a file cannot be written\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kevo tasks new: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return KEVO_EXIT_USAGE;
}

static bool is_identifier(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    return true;
}

/* -1: go on; else the exit status. */
static int options_parse(new_options *o, int argc, char **argv)
{
    *o = (new_options){.tolerance = -1, .level = 1, .category = "custom"};
    enum { OPT_FROM = 256, OPT_FUNCTION, OPT_OUT, OPT_CATEGORY, OPT_DESCRIPTION, OPT_FLOPS,
           OPT_BYTES, OPT_TOLERANCE, OPT_LEVEL, OPT_SIZE, OPT_SHAPE, OPT_CHECK_SIZE, OPT_VALUE };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"from", required_argument, NULL, OPT_FROM},
        {"function", required_argument, NULL, OPT_FUNCTION},
        {"out", required_argument, NULL, OPT_OUT},
        {"category", required_argument, NULL, OPT_CATEGORY},
        {"description", required_argument, NULL, OPT_DESCRIPTION},
        {"flops", required_argument, NULL, OPT_FLOPS},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"tolerance", required_argument, NULL, OPT_TOLERANCE},
        {"level", required_argument, NULL, OPT_LEVEL},
        {"size", required_argument, NULL, OPT_SIZE},
        {"shape", required_argument, NULL, OPT_SHAPE},
        {"check-size", required_argument, NULL, OPT_CHECK_SIZE},
        {"value", required_argument, NULL, OPT_VALUE},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    /* argv + 1: "new" is the options' argv[0] */
    kevo_opts_init(&op, "kevo tasks new", argc - 1, argv + 1, table, "h");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        const char *v = op.arg;
        const char **list = NULL;
        size_t *n = NULL;
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return KEVO_EXIT_OK;
        case OPT_FROM: o->from = v; break;
        case OPT_FUNCTION: o->function = v; break;
        case OPT_OUT: o->out = v; break;
        case OPT_CATEGORY: o->category = v; break;
        case OPT_DESCRIPTION: o->description = v; break;
        case OPT_FLOPS: o->flops = v; break;
        case OPT_BYTES: o->bytes = v; break;
        case OPT_TOLERANCE: {
            char *end;
            o->tolerance = strtod(v, &end);
            if (end == v || *end || !(o->tolerance >= 0) || !isfinite(o->tolerance))
                return usage_error("--tolerance takes a non-negative number, not '%s'", v);
            break;
        }
        case OPT_LEVEL:
            if (!(v[0] >= '1' && v[0] <= '3') || v[1])
                return usage_error("--level takes 1, 2 or 3, not '%s'", v);
            o->level = v[0] - '0';
            break;
        case OPT_SIZE: list = o->sizes, n = &o->nsizes; break;
        case OPT_SHAPE: list = o->shapes, n = &o->nshapes; break;
        case OPT_CHECK_SIZE: list = o->checks, n = &o->nchecks; break;
        case OPT_VALUE: list = o->values, n = &o->nvalues; break;
        }
        if (list) {
            const char *eq = strchr(v, '=');
            if (!eq || !is_identifier(v, (size_t)(eq - v)) || !eq[1])
                return usage_error("%s takes NAME=VALUE (NAME a C identifier), not '%s'", op.flag,
                                   v);
            if (*n == MAX_FLAGS)
                return usage_error("at most %d %s flags", MAX_FLAGS, op.flag);
            list[(*n)++] = v;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops > 1)
        return usage_error("unexpected '%s' (one task NAME; see kevo tasks new --help)", ops[1]);
    o->name = nops ? ops[0] : NULL;
    if (!o->name)
        return usage_error("usage: kevo tasks new NAME --from FILE.c --function F ... (see "
                           "kevo tasks new --help)");
    if (!is_identifier(o->name, strlen(o->name)))
        return usage_error("task name '%s' is not a C identifier (it becomes the kernel's "
                           "function name)", o->name);
    if (!o->from)
        return usage_error("--from FILE.c is required (the C file defining the function)");
    if (!o->function)
        return usage_error("--function F is required (which function of %s to make a task of)",
                           o->from);
    return -1;
}

/* The flag of list whose name is `name` (its value after '='), or NULL. */
static const char *flag_value(const char *const *list, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(list[i], name, len) && list[i][len] == '=')
            return list[i] + len + 1;
    return NULL;
}

/* A positive integer size, whole string. */
static bool parse_size(int64_t *out, const char *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < 1 || x > 1000000000000000LL)
        return false;
    *out = x;
    return true;
}

static bool dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return false;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

/* What each parameter of F became: a task param, and how the entry point
 * passes it on (through a cast to F's own type when that differs). */
typedef struct mapping {
    kevo_task *t;
    bool *cast;        /* per param: an integer scalar passed through a cast */
    const char **what; /* per param: the C type as written (borrowed from the prototype) */
} mapping;

static void mapping_free(mapping *m)
{
    kevo_task_free(m->t);
    free(m->cast);
    free(m->what);
}

#define SUPPORTED "kernels take pointers to float/double/int arrays and integer or float scalars"

/* Map F's parameters to the task's; an unsupported one is an error naming
 * it. *missing_values collects "--value P=..." for float scalars without
 * one. */
static int map_params(mapping *m, const kevo_cparse_prototype *pr, const new_options *o,
                      kevo_buf *missing_values)
{
    kevo_task *t = m->t;
    if (pr->variadic)
        return kevo_error_set(KEVO_EINVAL, "%s is variadic (...): " SUPPORTED, pr->name);
    if (pr->result.kind != KEVO_CTYPE_VOID)
        return kevo_error_set(KEVO_EINVAL, "'%s' returns %s: kernels return void and write "
                              "their results through pointer parameters (wrap it)",
                              pr->name, pr->result.spelling);
    if (pr->nparams == 0)
        return kevo_error_set(KEVO_EINVAL, "'%s' takes no parameters: a kernel writes its "
                              "results through a pointer parameter", pr->name);
    if (!(t->params = calloc(pr->nparams, sizeof(kevo_param))) ||
        !(m->cast = calloc(pr->nparams, sizeof(bool))) ||
        !(m->what = calloc(pr->nparams, sizeof(char *))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < pr->nparams; i++) {
        const kevo_cparse_param *cp = &pr->params[i];
        kevo_param *p = &t->params[i];
        m->what[i] = cp->type.spelling;
        if (!cp->name)
            return kevo_error_set(KEVO_EINVAL, "parameter %zu of '%s' (%s) has no name", i + 1,
                                  pr->name, cp->type.spelling);
        if (!(p->name = strdup(cp->name)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        t->nparams++;
        const char *value = flag_value(o->values, o->nvalues, cp->name);
        kevo_dtype dt;
        switch (cp->type.kind) {
        case KEVO_CTYPE_POINTER:
            if (cp->pointee.kind == KEVO_CTYPE_POINTER || cp->pointee.kind == KEVO_CTYPE_FUNCTION ||
                cp->pointee.kind == KEVO_CTYPE_RECORD || cp->pointee.kind == KEVO_CTYPE_ARRAY)
                return kevo_error_set(KEVO_EINVAL, "parameter '%s' of '%s' (%s) is not "
                                      "supported: " SUPPORTED, cp->name, pr->name,
                                      cp->type.spelling);
            if (kevo_dtype_from_c(&dt, cp->pointee.canonical) < 0)
                return kevo_error_set(KEVO_EINVAL, "parameter '%s' of '%s' (%s): element type "
                                      "'%s' is not supported (float, double, int or int32_t, "
                                      "long or int64_t, unsigned char or uint8_t)", cp->name,
                                      pr->name, cp->type.spelling, cp->pointee.canonical);
            if (value)
                return kevo_error_set(KEVO_EINVAL, "--value %s=...: '%s' is a pointer (buffer), "
                                      "not a scalar", cp->name, cp->name);
            p->type = dt;
            p->role = cp->pointee.is_const ? KEVO_ROLE_IN : KEVO_ROLE_OUT;
            if (p->role == KEVO_ROLE_IN)
                p->init = kevo_dtype_is_float(dt)
                              ? (kevo_init){.dist = KEVO_INIT_NORMAL, .a = 0, .b = 1}
                              : (kevo_init){.dist = KEVO_INIT_RANDINT, .a = 0,
                                            .b = dt == KEVO_DT_U8 ? 2 : 100};
            break;
        case KEVO_CTYPE_INTEGER:
            p->role = KEVO_ROLE_SCALAR;
            /* int and long are int32_t and int64_t; anything else (size_t,
             * unsigned, long long, short) is passed as int64_t and cast */
            if (kevo_dtype_from_c(&dt, cp->type.canonical) < 0 || dt == KEVO_DT_U8) {
                dt = KEVO_DT_I64;
                m->cast[i] = true;
            }
            p->type = dt;
            break;
        case KEVO_CTYPE_FLOATING:
            if (kevo_dtype_from_c(&dt, cp->type.canonical) < 0)
                return kevo_error_set(KEVO_EINVAL, "parameter '%s' of '%s' (%s) is not "
                                      "supported: " SUPPORTED, cp->name, pr->name,
                                      cp->type.spelling);
            p->role = KEVO_ROLE_SCALAR;
            p->type = dt;
            if (!value)
                kevo_buf_printf(missing_values, " --value %s=...", cp->name);
            break;
        default:
            return kevo_error_set(KEVO_EINVAL, "parameter '%s' of '%s' (%s) is not supported: "
                                  SUPPORTED, cp->name, pr->name, cp->type.spelling);
        }
        if (value && p->role == KEVO_ROLE_SCALAR) {
            char *end;
            p->value = strtod(value, &end);
            if (end == value || *end || !isfinite(p->value))
                return kevo_error_set(KEVO_EINVAL, "--value %s=%s: not a number", cp->name,
                                      value);
            if (!kevo_dtype_is_float(p->type) && p->value != floor(p->value))
                return kevo_error_set(KEVO_EINVAL, "--value %s=%s: '%s' is an integer (%s)",
                                      cp->name, value, cp->name, cp->type.spelling);
            p->has_value = true;
        }
    }
    for (size_t k = 0; k < o->nvalues; k++) {
        size_t len = (size_t)(strchr(o->values[k], '=') - o->values[k]);
        bool found = false;
        for (size_t i = 0; i < t->nparams; i++)
            found |= strlen(t->params[i].name) == len &&
                     !strncmp(t->params[i].name, o->values[k], len);
        if (!found)
            return kevo_error_set(KEVO_EINVAL, "--value %s: '%.*s' is not a parameter of '%s'",
                                  o->values[k], (int)len, o->values[k], pr->name);
    }
    return kevo_buf_error(missing_values);
}

/* An integer scalar without a --value: its value comes from the sizes. */
static bool is_size(const kevo_param *p)
{
    return p->role == KEVO_ROLE_SCALAR && !p->has_value && !kevo_dtype_is_float(p->type);
}

/* Names of the size params, ", "-separated. */
static void size_names(kevo_buf *b, const kevo_task *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nparams; i++)
        if (is_size(&t->params[i]))
            kevo_buf_printf(b, "%s%s", n++ ? ", " : "", t->params[i].name);
}

/* t->sizes from --size: the size params first (in argument order), then
 * the other names given; "--size N=..." for each size param without one
 * goes to *missing. */
static int fill_sizes(kevo_task *t, const new_options *o, kevo_buf *missing)
{
    kevo_sizes *s = &t->sizes;
    if (!(s->names = calloc(t->nparams + o->nsizes + 1, sizeof(char *))) ||
        !(s->values = calloc(t->nparams + o->nsizes + 1, sizeof(int64_t))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        if (!is_size(p))
            continue;
        const char *v = flag_value(o->sizes, o->nsizes, p->name);
        if (!v) {
            kevo_buf_printf(missing, " --size %s=...", p->name);
            continue;
        }
        if (!parse_size(&s->values[s->n], v))
            return kevo_error_set(KEVO_EINVAL, "--size %s=%s: a size is a positive integer",
                                  p->name, v);
        if (!(s->names[s->n++] = strdup(p->name)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < o->nsizes; k++) {
        const char *eq = strchr(o->sizes[k], '=');
        char *name = strndup(o->sizes[k], (size_t)(eq - o->sizes[k]));
        bool known = false;
        if (!name)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        for (size_t j = 0; j < s->n; j++)
            known |= !strcmp(s->names[j], name);
        for (size_t i = 0; i < t->nparams && !known; i++)
            if (!strcmp(t->params[i].name, name)) {
                free(name);
                return kevo_error_set(KEVO_EINVAL, "--size %s: '%.*s' is a %s parameter, not a "
                                      "size", o->sizes[k], (int)(eq - o->sizes[k]), o->sizes[k],
                                      t->params[i].role == KEVO_ROLE_SCALAR ? "fixed (--value)"
                                                                              : "buffer");
            }
        if (known) {
            free(name);
            continue;
        }
        /* a name only the shapes use (a fixed-size kernel's N, say) */
        if (!parse_size(&s->values[s->n], eq + 1)) {
            free(name);
            return kevo_error_set(KEVO_EINVAL, "--size %s: a size is a positive integer",
                                  o->sizes[k]);
        }
        s->names[s->n++] = name;
    }
    return kevo_buf_error(missing);
}

/* Buffer shapes from --shape: "D1,D2,..." split at commas. */
static int fill_shapes(kevo_task *t, const new_options *o)
{
    for (size_t k = 0; k < o->nshapes; k++) {
        const char *eq = strchr(o->shapes[k], '=');
        size_t len = (size_t)(eq - o->shapes[k]);
        kevo_param *p = NULL;
        for (size_t i = 0; i < t->nparams; i++)
            if (strlen(t->params[i].name) == len && !strncmp(t->params[i].name, o->shapes[k], len))
                p = &t->params[i];
        if (!p || p->role == KEVO_ROLE_SCALAR)
            return kevo_error_set(KEVO_EINVAL, "--shape %s: '%.*s' is not a pointer parameter",
                                  o->shapes[k], (int)len, o->shapes[k]);
        if (p->ndim)
            return kevo_error_set(KEVO_EINVAL, "--shape %.*s given twice", (int)len, o->shapes[k]);
        size_t nd = 1;
        for (const char *c = eq + 1; *c; c++)
            nd += *c == ',';
        if (nd > 8)
            return kevo_error_set(KEVO_EINVAL, "--shape %s: at most 8 dimensions", o->shapes[k]);
        if (!(p->shape = calloc(nd, sizeof(char *))))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        const char *d = eq + 1;
        for (size_t j = 0; j < nd; j++) {
            const char *end = strchr(d, ',');
            size_t dl = end ? (size_t)(end - d) : strlen(d);
            if (!(p->shape[j] = strndup(d, dl)))
                return kevo_error_set(KEVO_ENOMEM, "out of memory");
            p->ndim++;
            d += dl + 1;
        }
    }
    return 0;
}

/* Every dimension evaluates on the timed sizes to at least 1. */
static int check_shapes(const kevo_task *t)
{
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        for (size_t d = 0; d < p->ndim; d++) {
            double v;
            if (kevo_expr_eval(&v, p->shape[d], &t->sizes, true) < 0)
                return kevo_error_set(KEVO_EINVAL, "--shape %s: dimension %zu ('%s'): %s",
                                      p->name, d + 1, p->shape[d], kevo_error_last());
            if (v < 1)
                return kevo_error_set(KEVO_EINVAL, "--shape %s: dimension %zu ('%s') is %g at "
                                      "the timed sizes (must be >= 1)", p->name, d + 1,
                                      p->shape[d], v);
        }
    }
    return 0;
}

/* --check-size sets: each "N=V,M=W" naming exactly the sizes. */
static int fill_checks(kevo_task *t, const new_options *o)
{
    if (!(t->check_sizes = calloc(o->nchecks + 1, sizeof(kevo_sizes))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t k = 0; k < o->nchecks; k++) {
        kevo_sizes *cs = &t->check_sizes[t->ncheck++];
        size_t n = t->sizes.n;
        if (!(cs->names = calloc(n, sizeof(char *))) || !(cs->values = calloc(n, sizeof(int64_t))))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            cs->names[cs->n] = strdup(t->sizes.names[i]);
            if (!cs->names[cs->n])
                return kevo_error_set(KEVO_ENOMEM, "out of memory");
            cs->n++;
        }
        bool *given = calloc(n + 1, sizeof(bool));
        char *spec = strdup(o->checks[k]);
        int error = given && spec ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
        char *save = NULL;
        for (char *item = spec ? strtok_r(spec, ",", &save) : NULL; item && error == 0;
             item = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(item, '=');
            size_t j = 0;
            if (eq)
                *eq = '\0';
            while (j < n && strcmp(cs->names[j], item))
                j++;
            if (!eq || j == n)
                error = kevo_error_set(KEVO_EINVAL, "--check-size %s: '%s' is not a size (%s)",
                                       o->checks[k], item, n ? "sizes come from --size" : "none");
            else if (!parse_size(&cs->values[j], eq + 1))
                error = kevo_error_set(KEVO_EINVAL, "--check-size %s: %s=%s is not a positive "
                                       "integer", o->checks[k], item, eq + 1);
            else
                given[j] = true;
        }
        for (size_t j = 0; j < n && error == 0; j++)
            if (!given[j])
                error = kevo_error_set(KEVO_EINVAL, "--check-size %s: gives no %s (each set "
                                       "names every size)", o->checks[k], cs->names[j]);
        free(given);
        free(spec);
        if (error < 0)
            return error;
    }
    return 0;
}

/* reference.c: a note, then FILE.c with F renamed to the task's name (or,
 * when a size needs a cast, F kept as `impl` and an entry point of the
 * task's prototype calling it). */
static int make_reference(char **out, bool *wrapped, const mapping *m,
                          const kevo_cparse_prototype *pr, const char *src, size_t len,
                          const new_options *o)
{
    const kevo_task *t = m->t;
    bool cast = false;
    for (size_t i = 0; i < t->nparams; i++)
        cast |= m->cast[i];
    /* a static F cannot be the kernel the runner links against: wrap it too */
    cast |= pr->is_static;
    *wrapped = cast;
    /* the name F gets in reference.c */
    kevo_buf impl = {0};
    kevo_buf_puts(&impl, cast ? pr->name : t->name);
    if (cast && !strcmp(pr->name, t->name)) {
        kevo_buf_puts(&impl, "_impl");
        for (int k = 2; strstr(src, kevo_buf_cstr(&impl)); k++) {
            kevo_buf_clear(&impl);
            kevo_buf_printf(&impl, "%s_impl%d", pr->name, k);
        }
    }
    kevo_cparse_edits e = {0};
    char *body = NULL, *proto = NULL;
    kevo_buf b = {0};
    int error = kevo_buf_error(&impl);
    for (size_t k = 0; k < pr->n_name_offsets && error == 0 && strcmp(kevo_buf_cstr(&impl),
                                                                      pr->name);
         k++)
        error = kevo_cparse_edits_add(&e, pr->name_offsets[k],
                                      pr->name_offsets[k] + (unsigned)strlen(pr->name), "%s",
                                      kevo_buf_cstr(&impl));
    if (error < 0 || (error = kevo_cparse_edits_apply(&body, &e, src, len)) < 0 ||
        (error = kevo_task_prototype(&proto, t)) < 0)
        goto done;
    kevo_buf_printf(&b, "/* reference.c of task %s, written by `kevo tasks new`\n * from %s "
                        "(function %s)%s. */\n",
                    t->name, o->from, pr->name,
                    cast ? ";\n * the entry point at the end gives it the task's prototype"
                    : strcmp(pr->name, t->name) ? ", renamed to the task's name"
                                                : "");
    kevo_buf_puts(&b, body);
    if (cast) {
        if (len && src[len - 1] != '\n')
            kevo_buf_puts(&b, "\n");
        kevo_buf_printf(&b, "\n/* kevo tasks new: the task's entry point%s. */\n"
                            "#include <stdint.h>\n"
                            "%s\n{\n    %s(",
                        pr->is_static ? " (the function is static)"
                                      : ": kevo passes every size as int64_t, the function "
                                        "takes\n * its own types",
                        proto, kevo_buf_cstr(&impl));
        for (size_t i = 0; i < t->nparams; i++) {
            kevo_buf_puts(&b, i ? ", " : "");
            if (m->cast[i])
                kevo_buf_printf(&b, "(%s)", m->what[i]);
            kevo_buf_puts(&b, t->params[i].name);
        }
        kevo_buf_puts(&b, ");\n}\n");
    }
    if ((error = kevo_buf_error(&b)) == 0 && !(*out = kevo_buf_detach(&b)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
done:
    free(body);
    free(proto);
    kevo_buf_free(&b);
    kevo_buf_free(&impl);
    kevo_cparse_edits_free(&e);
    return error;
}

/* One line per param for the summary. */
static void describe_params(kevo_buf *b, const mapping *m)
{
    const kevo_task *t = m->t;
    for (size_t i = 0; i < t->nparams; i++) {
        const kevo_param *p = &t->params[i];
        kevo_buf_printf(b, "  %-10s %-6s %-3s ", p->name, kevo_role_name(p->role),
                        kevo_dtype_name(p->type));
        if (p->role != KEVO_ROLE_SCALAR) {
            kevo_buf_puts(b, "[");
            for (size_t d = 0; d < p->ndim; d++)
                kevo_buf_printf(b, "%s%s", d ? ", " : "", p->shape[d]);
            kevo_buf_puts(b, "]");
        } else if (p->has_value) {
            kevo_buf_printf(b, "value %g", p->value);
        } else {
            kevo_buf_puts(b, "a size");
        }
        kevo_buf_printf(b, "   (%s)", m->what[i]);
        if (p->role == KEVO_ROLE_OUT)
            kevo_buf_puts(b, " output, poisoned before each call: if the function also reads "
                             "it, make it \"inout\" with an \"init\"");
        else if (m->cast[i])
            kevo_buf_printf(b, " passed as int64_t, cast to %s", m->what[i]);
        kevo_buf_puts(b, "\n");
    }
}

/* Remove task.json and reference.c from dir, and dir when this command
 * made it: what a failed `kevo tasks new` leaves is what was there. */
static void unwrite_task(const char *dir, bool made_dir)
{
    char *jp = kevo_path_join(dir, "task.json"), *rp = kevo_path_join(dir, "reference.c");
    if (jp)
        unlink(jp);
    if (rp)
        unlink(rp);
    if (made_dir)
        rmdir(dir);
    free(jp);
    free(rp);
}

/* Write the files; a failure removes what was written. */
static int write_task(const char *dir, bool made_dir, const char *json, const char *ref)
{
    char *jp = kevo_path_join(dir, "task.json"), *rp = kevo_path_join(dir, "reference.c");
    int error = jp && rp ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0 && (error = kevo_file_write(jp, json, strlen(json))) == 0)
        error = kevo_file_write(rp, ref, strlen(ref));
    if (error == 0) {
        chmod(jp, 0644);
        chmod(rp, 0644);
    } else {
        unwrite_task(dir, made_dir);
    }
    free(jp);
    free(rp);
    return error;
}

int kevo_cmd_tasks_new(int argc, char **argv)
{
    new_options o;
    int status = options_parse(&o, argc, argv);
    if (status >= 0)
        return status;
    status = KEVO_EXIT_USAGE;
    const char *dir = o.out ? o.out : o.name;
    char *src = NULL, *json = NULL, *ref = NULL;
    size_t len = 0;
    kevo_cparse_tu *tu = NULL;
    kevo_cparse_prototype *pr = NULL;
    mapping m = {0};
    kevo_buf missing = {0}, missing_sizes = {0}, missing_values = {0}, note = {0}, info = {0};
    bool made_dir = false, wrapped = false;

    if (kevo_dir_exists(dir) && !dir_is_empty(dir)) {
        usage_error("%s exists and is not empty (choose another --out, or remove it)", dir);
        goto done;
    }
    if (!kevo_dir_exists(dir) && kevo_file_exists(dir)) {
        usage_error("%s exists and is not a folder", dir);
        goto done;
    }
    if (kevo_file_read(&src, &len, o.from) < 0) {
        usage_error("%s", kevo_error_last());
        goto done;
    }
    kevo_cparse_options po = {.lang = KEVO_CPARSE_C11, .file_name = o.from};
    if (kevo_cparse_parse(&tu, src, len, &po) < 0) {
        fprintf(stderr, "kevo tasks new: %s: %s\n", o.from, kevo_error_last());
        status = KEVO_EXIT_INFRA;
        goto done;
    }
    if (kevo_cparse_errors(tu) < 0) {
        usage_error("%s: %s", o.from, kevo_error_last());
        goto done;
    }
    if (kevo_cparse_prototype_read(&pr, tu, o.function) < 0) {
        CXCursor c;
        bool declared = kevo_cparse_function(&c, tu, o.function) < 0 &&
                        strstr(kevo_error_last(), "declared but");
        usage_error("%s: function '%s' is %s there", o.from, o.function,
                    declared ? "declared but not defined" : "not defined");
        goto done;
    }
    if (strcmp(o.name, o.function)) {
        CXCursor c;
        if (kevo_cparse_function(&c, tu, o.name) == 0) {
            usage_error("%s already defines a function '%s': choose another task name", o.from,
                        o.name);
            goto done;
        }
        kevo_error_clear();
    }
    if (!(m.t = calloc(1, sizeof(kevo_task)))) {
        fprintf(stderr, "kevo tasks new: out of memory\n");
        status = KEVO_EXIT_INFRA;
        goto done;
    }
    kevo_task *t = m.t;
    char default_desc[512];
    const char *base = strrchr(o.from, '/');
    snprintf(default_desc, sizeof(default_desc),
             "%s from %s (written by kevo tasks new: say here what it computes)", o.function,
             base ? base + 1 : o.from);
    t->name = strdup(o.name);
    t->level = o.level;
    t->category = strdup(o.category);
    t->description = strdup(o.description ? o.description : default_desc);
    t->atol = t->rtol = o.tolerance >= 0 ? o.tolerance : 1e-2;
    if (!t->name || !t->category || !t->description) {
        fprintf(stderr, "kevo tasks new: out of memory\n");
        status = KEVO_EXIT_INFRA;
        goto done;
    }
    if (map_params(&m, pr, &o, &missing_values) < 0 || fill_sizes(t, &o, &missing_sizes) < 0 ||
        fill_shapes(t, &o) < 0 || kevo_task_infer_shapes(t, &missing) < 0) {
        usage_error("%s", kevo_error_last());
        goto done;
    }
    if (missing.len || missing_sizes.len || missing_values.len) {
        /* write nothing: say exactly which flags are needed */
        kevo_buf line = {0}, names = {0};
        size_names(&names, t);
        size_t nsize = 0;
        for (size_t i = 0; i < t->nparams; i++)
            nsize += is_size(&t->params[i]);
        if (missing.len) {
            kevo_buf_printf(&line, "'%s' has %zu size parameters%s%s%s, so buffer shapes are "
                            "not inferred: add",
                            o.function, nsize, nsize ? " (" : "", kevo_buf_cstr(&names),
                            nsize ? ")" : "");
            char *list = strdup(kevo_buf_cstr(&missing)), *save = NULL;
            for (char *w = list ? strtok_r(list, " ", &save) : NULL; w;
                 w = strtok_r(NULL, " ", &save))
                kevo_buf_printf(&line, " --shape %s=...", w);
            free(list);
            kevo_buf_printf(&line, " (comma-separated dimensions, expressions over %s)",
                            nsize ? kevo_buf_cstr(&names) : "the --size names");
        }
        if (missing_sizes.len)
            kevo_buf_printf(&line, "%sadd%s (the timed value of each size)",
                            missing.len ? "; " : "", kevo_buf_cstr(&missing_sizes));
        if (missing_values.len)
            kevo_buf_printf(&line, "%sadd%s (a float parameter's fixed value)",
                            missing.len || missing_sizes.len ? "; " : "",
                            kevo_buf_cstr(&missing_values));
        usage_error("%s; nothing written", kevo_buf_cstr(&line));
        kevo_buf_free(&line);
        kevo_buf_free(&names);
        goto done;
    }
    if (t->sizes.n == 0) {
        usage_error("'%s' has no integer size parameter: add --size N=V and use N in the "
                    "--shape flags (a task needs at least one size)", o.function);
        goto done;
    }
    if (check_shapes(t) < 0 ||
        (o.nchecks ? fill_checks(t, &o) : kevo_task_derive_check_sizes(t, &note)) < 0) {
        usage_error("%s", kevo_error_last());
        goto done;
    }
    double work;
    const char *bad = NULL, *expr = NULL;
    if (o.flops && kevo_expr_eval(&work, o.flops, &t->sizes, false) < 0)
        bad = "flops", expr = o.flops;
    else if (o.bytes && kevo_expr_eval(&work, o.bytes, &t->sizes, false) < 0)
        bad = "bytes", expr = o.bytes;
    if (bad) {
        usage_error("--%s %s: %s", bad, expr, kevo_error_last());
        goto done;
    }
    if (!(t->flops = strdup(o.flops ? o.flops : "0")) ||
        (o.bytes ? !(t->bytes = strdup(o.bytes)) : kevo_task_bytes_expr(&t->bytes, t) < 0) ||
        kevo_task_json(&json, t) < 0 ||
        make_reference(&ref, &wrapped, &m, pr, src, len, &o) < 0) {
        fprintf(stderr, "kevo tasks new: %s\n", kevo_error_last());
        status = KEVO_EXIT_INFRA;
        goto done;
    }
    if (!kevo_dir_exists(dir)) {
        if (kevo_mkdirs(dir, 0755) < 0) {
            fprintf(stderr, "kevo tasks new: %s: %s\n", dir, kevo_error_last());
            status = KEVO_EXIT_INFRA;
            goto done;
        }
        made_dir = true;
    }
    if (write_task(dir, made_dir, json, ref) < 0) {
        fprintf(stderr, "kevo tasks new: %s: %s\n", dir, kevo_error_last());
        status = KEVO_EXIT_INFRA;
        goto done;
    }
    /* read back as every other command will: a bad --flops, say, is caught here */
    kevo_task *back = NULL;
    if (kevo_task_load(&back, dir) < 0) {
        usage_error("%s; nothing kept", kevo_error_last());
        unwrite_task(dir, made_dir);
        goto done;
    }
    kevo_task_free(back);

    kevo_buf_printf(&info, "kevo tasks new: wrote %s/task.json and %s/reference.c\n", dir, dir);
    kevo_buf_printf(&info, "function '%s' of %s -> task '%s' (level %d, category %s)\n",
                    o.function, o.from, t->name, t->level, t->category);
    kevo_buf_puts(&info, "params:\n");
    describe_params(&info, &m);
    kevo_buf_puts(&info, "sizes: ");
    for (size_t i = 0; i < t->sizes.n; i++)
        kevo_buf_printf(&info, "%s%s=%lld", i ? ", " : "", t->sizes.names[i],
                        (long long)t->sizes.values[i]);
    kevo_buf_printf(&info, " (timed); %zu check set%s%s", t->ncheck, t->ncheck == 1 ? "" : "s",
                    o.nchecks ? " (--check-size)" : " (derived: every size 1, 7, a prime)");
    for (size_t c = 0; c < t->ncheck; c++) {
        kevo_buf_puts(&info, c ? ", {" : ": {");
        for (size_t i = 0; i < t->check_sizes[c].n; i++)
            kevo_buf_printf(&info, "%s%s=%lld", i ? ", " : "", t->check_sizes[c].names[i],
                            (long long)t->check_sizes[c].values[i]);
        kevo_buf_puts(&info, "}");
    }
    if (note.len)
        kevo_buf_printf(&info, "; %s", kevo_buf_cstr(&note));
    kevo_buf_printf(&info, "\nbytes: %s%s\nflops: %s%s\n", t->bytes,
                    o.bytes ? "" : " (every buffer once)", t->flops,
                    o.flops ? "" : " (unknown: set \"flops\" in task.json for the roofline "
                                   "diagnosis)");
    kevo_buf_printf(&info, "reference.c: %s%s\n", o.from,
                    wrapped ? ", with an entry point of the task's prototype calling it"
                    : strcmp(o.function, t->name) ? ", the function renamed to the task's name"
                                                  : " as it is");
    kevo_buf_printf(&info, "next: kevo tasks check %s\n", dir);
    fputs(kevo_buf_cstr(&info), stdout);
    status = KEVO_EXIT_OK;
done:
    kevo_buf_free(&missing);
    kevo_buf_free(&missing_sizes);
    kevo_buf_free(&missing_values);
    kevo_buf_free(&note);
    kevo_buf_free(&info);
    mapping_free(&m);
    kevo_cparse_prototype_free(pr);
    kevo_cparse_free(tu);
    free(src);
    free(json);
    free(ref);
    return status;
}
