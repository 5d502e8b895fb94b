/*
 * recipe/traits.c - structural traits of a kernel, the features by which the
 * built-in generator's memory relates kernels of different categories (a
 * Level 2 `fused` GEMM with a sigmoid shares traits with Level 1's matmul
 * and activation tasks). Each trait names a property that decides which
 * recipes pay:
 *   deep-nest     loops nested three deep (matrix products, convolutions):
 *                 compute-bound, where interchange, tiling and vectorised
 *                 reductions pay;
 *   fp-reduction  a loop accumulates into a floating-point scalar (s += ...,
 *                 s = fmaxf(s, ...)): vectorising it needs reassociation,
 *                 which only -ffast-math or `omp simd reduction` allow;
 *   libm-call     calls a libm function (expf, tanhf, sqrtf, ...): vector
 *                 maths needs -ffast-math (or -fno-math-errno).
 * Must not: judge whether a recipe applies (recipes do), edit text.
 */
#include "model.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* libm functions that gcc vectorises only under relaxed maths flags. */
static const char *const libm_names[] = {
    "exp",   "expf",  "exp2",  "exp2f",  "expm1", "expm1f", "log",   "logf",  "log2",
    "log2f", "log1p", "log1pf", "log10", "log10f", "pow",   "powf",  "sqrt",  "sqrtf",
    "tanh",  "tanhf", "erf",   "erff",   "sin",   "sinf",   "cos",   "cosf",  "atan",
    "atanf", "cbrt",  "cbrtf", "fmax",   "fmaxf", "fmin",   "fminf"};

static bool is_libm(const char *p, size_t n)
{
    for (size_t i = 0; i < sizeof(libm_names) / sizeof(libm_names[0]); i++)
        if (strlen(libm_names[i]) == n && !memcmp(libm_names[i], p, n))
            return true;
    return false;
}

/* Whether the source calls a libm function anywhere (helpers included):
 * an identifier from the list followed by `(`, outside comments. */
static bool calls_libm(const char *s)
{
    for (const char *p = s; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *q = p;
            while (isalnum((unsigned char)*q) || *q == '_')
                q++;
            const char *r = q;
            while (*r == ' ' || *r == '\t')
                r++;
            if (*r == '(' && is_libm(p, (size_t)(q - p)))
                return true;
            p = q;
        } else {
            p++;
        }
    }
    return false;
}

/* Whether token t is where a statement starts (so `v` at t is a whole
 * lvalue, not part of `a[v]` or `p->v`). */
static bool statement_start(const kevo_recipe_model *m, unsigned t)
{
    return kevo_rtok_is(m, t - 1, ";") || kevo_rtok_is(m, t - 1, "{") ||
           kevo_rtok_is(m, t - 1, "}") || kevo_rtok_is(m, t - 1, ")") ||
           kevo_rtok_is(m, t - 1, "else");
}

/* Whether some loop accumulates into a floating-point scalar declared
 * outside it: `v op= ...` (op + - *) or `v = <expression using v>`. */
static bool fp_reduction(const kevo_recipe_model *m)
{
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        for (unsigned t = L->t_body + (L->body_compound ? 1 : 0); t + 1 < L->t_end; t++) {
            int v = m->tok[t].var;
            if (v < 0 || m->var[v].vtype != KEVO_VTYPE_FLOAT || m->tok[t].is_decl ||
                !statement_start(m, t) || kevo_recipe_declared_in(m, v, L->t_body, L->t_end))
                continue;
            if (kevo_rtok_is(m, t + 1, "+=") || kevo_rtok_is(m, t + 1, "-=") ||
                kevo_rtok_is(m, t + 1, "*="))
                return true;
            if (kevo_rtok_is(m, t + 1, "="))
                for (unsigned u = t + 2; u < L->t_end && !kevo_rtok_is(m, u, ";"); u++)
                    if (m->tok[u].var == v)
                        return true;
        }
    }
    return false;
}

int kevo_recipe__traits(char **out, const kevo_recipe_model *m)
{
    *out = NULL;
    bool deep = false;
    for (size_t l = 0; l < m->n_loop; l++)
        deep = deep || m->loop[l].level >= 2;
    char list[64] = "";
    if (deep)
        strcat(list, " deep-nest");
    if (fp_reduction(m))
        strcat(list, " fp-reduction");
    if (calls_libm(m->src))
        strcat(list, " libm-call");
    char *s = strdup(list[0] ? list + 1 : list);
    if (!s)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    *out = s;
    return 0;
}

int kevo_recipe_traits(char **out, const char *source, const char *kernel_name)
{
    *out = NULL;
    kevo_recipe_model *m = NULL;
    int error = kevo_recipe_model_parse(&m, source, kernel_name);
    if (error == 0)
        error = kevo_recipe__traits(out, m);
    kevo_recipe_model_free(m);
    return error;
}
