/*
 * recipe/port_opencl.c - the built-in generator's OpenCL draft: the task's C
 * reference carried over to OpenCL C 1.2 unchanged in structure, as one
 * kernel run by a single work-item (`global=1 local=1`). It is slow on
 * purpose: it is the start point the OpenCL recipes (recipe_opencl.c)
 * parallelise, and it is correct by construction wherever the reference only
 * uses what OpenCL C shares with C.
 *
 * The port: `#include` lines are dropped; the kernel gets `__kernel` and its
 * pointer parameters and pointer variables `__global`; <stdint.h> types
 * become OpenCL's (int64_t -> long, ...); C99 float maths functions become
 * OpenCL's overloaded ones (expf -> exp, ...); a reference that uses
 * `double` enables cl_khr_fp64. What it cannot carry (malloc, helper
 * functions taking pointers) ends at the compile gate, which says why.
 *
 * Must not: run a compiler or judge the result.
 */
#include "recipe/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_map[][2] = {
    {"int64_t", "long"},  {"int32_t", "int"},   {"int16_t", "short"},   {"int8_t", "char"},
    {"uint64_t", "ulong"}, {"uint32_t", "uint"}, {"uint16_t", "ushort"}, {"uint8_t", "uchar"},
};

/* C99 float functions whose OpenCL C spelling drops the `f`. */
static const char *const float_fns[] = {
    "expf",  "exp2f",  "expm1f", "logf",   "log2f",  "log10f", "log1pf", "sqrtf", "cbrtf",
    "powf",  "fabsf",  "fmaxf",  "fminf",  "fmodf",  "floorf", "ceilf",  "roundf", "truncf",
    "sinf",  "cosf",   "tanf",   "asinf",  "acosf",  "atanf",  "atan2f", "sinhf", "coshf",
    "tanhf", "erff",   "erfcf",  "hypotf", "copysignf", "rintf", "fmaf",  "lgammaf", "tgammaf",
};

static const char *mapped(const char *tok, size_t n, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof(type_map) / sizeof(type_map[0]); i++)
        if (strlen(type_map[i][0]) == n && !memcmp(tok, type_map[i][0], n))
            return type_map[i][1];
    for (size_t i = 0; i < sizeof(float_fns) / sizeof(float_fns[0]); i++)
        if (strlen(float_fns[i]) == n && !memcmp(tok, float_fns[i], n)) {
            snprintf(buf, size, "%.*s", (int)n - 1, tok);
            return buf;
        }
    return NULL;
}

/* Token index of the first token of the declaration's declarator for the
 * declaring token t (walks back over `*`, `const`, `restrict`). */
static unsigned declarator_start(const kevo_recipe_model *m, unsigned t)
{
    while (t > 0 && (kevo_rtok_is(m, t - 1, "*") || kevo_rtok_is(m, t - 1, "const") ||
                     kevo_rtok_is(m, t - 1, "restrict") || kevo_rtok_is(m, t - 1, "__restrict")))
        t--;
    return t;
}

int kevo_recipe_port_opencl(char **out_source, const char *c_source, const char *kernel_name)
{
    kevo_recipe_model *m = NULL;
    kevo_recipe_edits e = {0};
    char *body = NULL;
    kevo_buf out = {0};
    int error;

    *out_source = NULL;
    if (kevo_recipe_is_opencl(c_source))
        return kevo_error_set(KEVO_EINVAL, "port: the source is OpenCL already");
    if ((error = kevo_recipe_model_parse(&m, c_source, kernel_name)) < 0)
        goto done;
    size_t len = strlen(c_source);

    /* #include lines, anywhere in the file */
    for (size_t ln = 0; ln < m->n_lines; ln++) {
        unsigned b = m->line_start[ln], p = b;
        while (p < len && (c_source[p] == ' ' || c_source[p] == '\t'))
            p++;
        if (strncmp(c_source + p, "#include", 8) != 0)
            continue;
        unsigned end = ln + 1 < m->n_lines ? m->line_start[ln + 1] : (unsigned)len;
        if ((error = kevo_recipe_edits_add(&e, b, end, "%s", "")) < 0)
            goto done;
    }
    if ((error = kevo_recipe_edits_add(&e, m->fn_start, m->fn_start, "__kernel ")) < 0)
        goto done;
    bool uses_double = false;
    for (unsigned t = 0; t < m->n_tok; t++) {
        size_t n;
        const char *p = kevo_rtok_text(m, t, &n);
        char buf[32];
        if (n == 6 && !memcmp(p, "double", 6))
            uses_double = true;
        const char *to = m->tok[t].kind == 2 ? mapped(p, n, buf, sizeof(buf)) : NULL;
        if (to && (error = kevo_recipe_edits_add(&e, m->tok[t].start, m->tok[t].end, "%s", to)) <
                      0)
            goto done;
        /* every pointer variable of the kernel points to global memory */
        int v = m->tok[t].var;
        if (!m->tok[t].is_decl || v < 0 || m->var[v].vtype != KEVO_VTYPE_POINTER)
            continue;
        unsigned d = declarator_start(m, t);
        if (m->var[v].is_param) {
            /* parameter: before its whole type */
            while (d > 0 && !kevo_rtok_is(m, d - 1, "(") && !kevo_rtok_is(m, d - 1, ","))
                d--;
            error = kevo_recipe_edits_add(&e, m->tok[d].start, m->tok[d].start, "__global ");
        } else if (kevo_rtok_is(m, d, "*")) {
            /* local variable: `const float *p` -> `const float __global *p` */
            error = kevo_recipe_edits_add(&e, m->tok[d].start, m->tok[d].start, "__global ");
        }
        if (error < 0)
            goto done;
    }
    if ((error = kevo_recipe_edits_apply(&body, &e, c_source, len, 0, (unsigned)len)) < 0)
        goto done;
    kevo_buf_printf(&out, "// kevo: launch %s global=1 local=1\n", kernel_name);
    kevo_buf_printf(&out, "// ported from the C reference by kevo (one work-item)\n");
    if (uses_double)
        kevo_buf_puts(&out, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    const char *b = body;
    while (*b == '\n')
        b++;
    if ((error = kevo_buf_puts(&out, b)) < 0)
        goto done;
    *out_source = kevo_buf_detach(&out);
done:
    kevo_recipe_model_free(m);
    kevo_recipe_edits_free(&e);
    kevo_buf_free(&out);
    free(body);
    return error;
}
