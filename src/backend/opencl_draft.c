/*
 * backend/opencl_draft.c - the OpenCL backend's first draft (its `draft`
 * method, for the built-in generator): the task's C
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
 * It stands on cparse alone (tokens with offsets, an edit list), not on the
 * recipe model: the backends sit below the recipes.
 *
 * Must not: run a compiler or judge the result; use the recipe model.
 */
#include "opencl_draft.h"
#include "kevo/cparse.h"
#include "kevo/util.h"

#include <stdbool.h>

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

/* The parsed reference: its kernel's tokens, preprocessor lines left out. */
typedef struct port_src {
    const char *src;
    size_t len;
    unsigned fn_start;
    kevo_cparse_token *tok;
    size_t n_tok;
} port_src;

static bool tok_is(const port_src *p, size_t t, const char *text)
{
    size_t n = strlen(text);
    return t < p->n_tok && p->tok[t].end - p->tok[t].start == n &&
           memcmp(p->src + p->tok[t].start, text, n) == 0;
}

/* Parse the C reference (as the recipe model does: C11, -D_OPENMP) and
 * keep the kernel's tokens outside preprocessor lines. */
static int port_parse(port_src *p, const char *c_source, const char *kernel_name)
{
    int error = 0;
    kevo_cparse_tu *tu = NULL;
    kevo_cparse_options o = {0};
    CXCursor fn;
    unsigned fn_end;

    memset(p, 0, sizeof(*p));
    if (!c_source || !kernel_name || !*kernel_name)
        return kevo_error_set(KEVO_EINVAL, "recipe: no source or kernel name given");
    p->src = c_source;
    p->len = strlen(c_source);
    o.lang = KEVO_CPARSE_C11;
    o.flags = KEVO_CPARSE_OPENMP_MACRO;
    if ((error = kevo_cparse_parse(&tu, c_source, p->len, &o)) < 0 ||
        (error = kevo_cparse_errors(tu)) < 0 ||
        (error = kevo_cparse_function(&fn, tu, kernel_name)) < 0)
        goto done;
    kevo_cparse_extent(&p->fn_start, &fn_end, NULL, fn);
    if ((error = kevo_cparse_tokens(&p->tok, &p->n_tok, tu, fn)) < 0)
        goto done;
    size_t k = 0;
    for (size_t i = 0; i < p->n_tok; i++)
        if (!p->tok[i].directive)
            p->tok[k++] = p->tok[i];
    p->n_tok = k;
done:
    kevo_cparse_free(tu);
    return error;
}

/* Token index of the first token of the declaration's declarator for the
 * declaring token t (walks back over `*`, `const`, `restrict`). */
static unsigned declarator_start(const port_src *p, unsigned t)
{
    while (t > 0 && (tok_is(p, t - 1, "*") || tok_is(p, t - 1, "const") ||
                     tok_is(p, t - 1, "restrict") || tok_is(p, t - 1, "__restrict")))
        t--;
    return t;
}

/* Drop the #include lines, anywhere in the file. */
static int drop_includes(kevo_cparse_edits *e, const char *src, size_t len)
{
    int error = 0;
    for (size_t b = 0; b < len && error == 0;) {
        const char *nl = memchr(src + b, '\n', len - b);
        size_t next = nl ? (size_t)(nl - src) + 1 : len, q = b;
        while (q < len && (src[q] == ' ' || src[q] == '\t'))
            q++;
        if (strncmp(src + q, "#include", 8) == 0)
            error = kevo_cparse_edits_add(e, (unsigned)b, (unsigned)next, "%s", "");
        b = next;
    }
    return error;
}

/* `__global` before the type of each pointer declared at token t: a
 * parameter's whole type, a local variable's `*`. */
static int add_global(kevo_cparse_edits *e, const port_src *p, unsigned t)
{
    const kevo_cparse_token *tk = &p->tok[t];
    if (tk->decl == KEVO_CDECL_NONE || !tk->pointer)
        return 0;
    unsigned d = declarator_start(p, t);
    if (tk->decl == KEVO_CDECL_PARAM) {
        while (d > 0 && !tok_is(p, d - 1, "(") && !tok_is(p, d - 1, ","))
            d--;
        return kevo_cparse_edits_add(e, p->tok[d].start, p->tok[d].start, "__global ");
    }
    if (tok_is(p, d, "*")) /* `const float *p` -> `const float __global *p` */
        return kevo_cparse_edits_add(e, p->tok[d].start, p->tok[d].start, "__global ");
    return 0;
}

/* An OpenCL candidate says what the host launches in its leading comment
 * lines (`// kevo: launch ...`). */
static bool is_opencl(const char *s)
{
    while (s && *s) {
        const char *q = s;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q && *q != '\n' && strncmp(q, "//", 2) != 0)
            return false;
        if (!strncmp(q, "// kevo: launch ", 16))
            return true;
        const char *e = strchr(s, '\n');
        s = e ? e + 1 : NULL;
    }
    return false;
}

int kevo_backend__opencl_port(char **out_source, const char *c_source, const char *kernel_name)
{
    port_src p = {0};
    kevo_cparse_edits e = {0};
    char *body = NULL;
    kevo_buf out = {0};
    int error;

    *out_source = NULL;
    if (is_opencl(c_source))
        return kevo_error_set(KEVO_EINVAL, "port: the source is OpenCL already");
    if ((error = port_parse(&p, c_source, kernel_name)) < 0 ||
        (error = drop_includes(&e, c_source, p.len)) < 0 ||
        (error = kevo_cparse_edits_add(&e, p.fn_start, p.fn_start, "__kernel ")) < 0)
        goto done;
    bool uses_double = false;
    for (unsigned t = 0; t < p.n_tok; t++) {
        const kevo_cparse_token *tk = &p.tok[t];
        size_t n = tk->end - tk->start;
        const char *s = c_source + tk->start;
        char buf[32];
        if (n == 6 && !memcmp(s, "double", 6))
            uses_double = true;
        const char *to = tk->kind == KEVO_CTOK_IDENT ? mapped(s, n, buf, sizeof(buf)) : NULL;
        if ((to && (error = kevo_cparse_edits_add(&e, tk->start, tk->end, "%s", to)) < 0) ||
            (error = add_global(&e, &p, t)) < 0)
            goto done;
    }
    if ((error = kevo_cparse_edits_apply(&body, &e, c_source, p.len)) < 0)
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
    free(p.tok);
    kevo_cparse_edits_free(&e);
    kevo_buf_free(&out);
    free(body);
    return error;
}
