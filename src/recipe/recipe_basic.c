/*
 * recipe/recipe_basic.c - the two recipes that do not touch loops:
 *   flags     add a set of allow-listed build flags to the cflags line;
 *   restrict  qualify the kernel's pointer parameters with `restrict`
 *             (`T *restrict p`, or `T a[restrict]` for array declarators).
 *
 * Must not: edit loops or text outside the kernel's parameter list.
 */
#include "model.h"

#include "kevo/sys/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const kevo_recipe_flag_sets[] = {
    "-O3 -march=native",                            /* 0 */
    "-funroll-loops",                               /* 1 */
    "-ffast-math",                                  /* 2 */
    "-fno-math-errno",                              /* 3 */
    "-ffp-contract=fast",                           /* 4 */
    "-mprefer-vector-width=512",                    /* 5 */
    "-O3 -march=native -ffast-math -funroll-loops", /* 6 */
    "-mtune=native",                                /* 7 */
};
const size_t kevo_recipe_n_flag_sets =
    sizeof(kevo_recipe_flag_sets) / sizeof(kevo_recipe_flag_sets[0]);

/* The traits each set is for (kevo_recipe_arm_traits), in the order of
 * kevo_recipe_flag_sets: gcc calls glibc's vector maths (libmvec) only
 * under -ffast-math, inlines sqrtf as a vector square root under
 * -fno-math-errno, and reassociates a floating-point sum into vector lanes
 * only under -ffast-math (-fassociative-math). */
static const char *const flag_set_traits[] = {
    NULL,                      /* 0 -O3 -march=native */
    NULL,                      /* 1 -funroll-loops */
    "libm-call fp-reduction",  /* 2 -ffast-math */
    "libm-call",               /* 3 -fno-math-errno */
    NULL,                      /* 4 -ffp-contract=fast */
    NULL,                      /* 5 -mprefer-vector-width=512 */
    "libm-call fp-reduction",  /* 6 ... -ffast-math ... */
    NULL,                      /* 7 -mtune=native */
};
_Static_assert(sizeof(flag_set_traits) / sizeof(flag_set_traits[0]) ==
                   sizeof(kevo_recipe_flag_sets) / sizeof(kevo_recipe_flag_sets[0]),
               "one traits entry per flag set");

const char *kevo_recipe_arm_traits(const char *recipe, long variant)
{
    if (!recipe || strcmp(recipe, "flags") != 0 || variant < 0 ||
        (size_t)variant >= kevo_recipe_n_flag_sets)
        return NULL;
    return flag_set_traits[variant];
}

/* Whether flag `f` already holds on the compile line `line` (the C
 * backend's own flags, then the candidate's cflags line, in order; gcc 12's
 * rules): written there (an -O level: the last one is what holds), or
 * implied: -mtune=native by -march=native, -fno-math-errno by -ffast-math,
 * -ffp-contract=fast by a GNU -std (gcc's default there) or -ffast-math. */
static bool flag_holds(const char *f, const char *const *line, size_t n)
{
    if (!strncmp(f, "-O", 2)) {
        const char *last = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strncmp(line[i], "-O", 2))
                last = line[i];
        return last && !strcmp(last, f);
    }
    for (size_t i = 0; i < n; i++) {
        const char *g = line[i];
        if (!strcmp(g, f) || (!strcmp(f, "-mtune=native") && !strcmp(g, "-march=native")) ||
            (!strcmp(f, "-fno-math-errno") && !strcmp(g, "-ffast-math")) ||
            (!strcmp(f, "-ffp-contract=fast") &&
             (!strncmp(g, "-std=gnu", 8) || !strcmp(g, "-ffast-math"))))
            return true;
    }
    return false;
}

/* Whether every flag of `set` already holds for `source` (flag_holds on
 * the C backend's compile line with the source's cflags line): adding the
 * set would build the same program. */
static int set_changes_nothing(bool *none, const char *source, const char *set)
{
    char *have = NULL;
    *none = false;
    int error = kevo_recipe_cflags_get(&have, source);
    if (error < 0)
        return error;
    char *words[48];
    size_t nh = 0;
    for (char *t = have ? strtok(have, " \t") : NULL; t && nh < 32; t = strtok(NULL, " \t"))
        words[nh++] = t;
    words[nh] = NULL;
    const char *base[40];
    bool openmp;
    size_t nb = kevo_c_compile_flags(base, 40, words, &openmp);
    /* the line as gcc reads it: skip the driver and the forced include */
    const char *line[48];
    size_t n = 0;
    for (size_t i = 1; i < nb && n < 48; i++) {
        if (!strcmp(base[i], "-include")) {
            i++;
            continue;
        }
        line[n++] = base[i];
    }
    char copy[128];
    snprintf(copy, sizeof(copy), "%s", set);
    *none = true;
    for (char *t = strtok(copy, " "); t && *none; t = strtok(NULL, " "))
        *none = flag_holds(t, line, n);
    free(have);
    return 0;
}

int kevo_recipe_flags_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                            const long *params)
{
    int error = 0;
    char *probe = NULL;
    bool changed = false;
    (void)m;

    if (params[0] < 0 || (size_t)params[0] >= kevo_recipe_n_flag_sets)
        return kevo_error_set(KEVO_EINVAL, "flag set %ld does not exist (0..%zu)", params[0],
                              kevo_recipe_n_flag_sets - 1);
    const char *set = kevo_recipe_flag_sets[params[0]];
    if ((error = kevo_recipe_cflags_add(&probe, &changed, source, set)) < 0)
        goto done;
    if (!changed) {
        error = kevo_error_set(KEVO_EINVAL, "the cflags line already has '%s'", set);
        goto done;
    }
    bool none = false;
    if ((error = set_changes_nothing(&none, source, set)) < 0)
        goto done;
    if (none) {
        /* the same program: an attempt would time the kernel against
         * itself, and its noise would read as a gain or a loss */
        error = kevo_error_set(KEVO_EINVAL,
                               "'%s' changes nothing: the C backend's compile line (-std=gnu11 "
                               "-O3 -march=native, then the cflags line) already gives it "
                               "(-march=native implies -mtune=native, -ffast-math "
                               "-fno-math-errno, and -ffp-contract=fast is gcc's default in GNU "
                               "C)",
                               set);
        goto done;
    }
    out->cflags = set;
done:
    free(probe);
    return error;
}

/* Whether parameter declarator tokens allow `restrict ` right before the
 * name at token d: `T *name`, `T *const name`, followed by `,` or `)`. */
static bool restrictable(const kevo_recipe_model *m, unsigned d)
{
    if (d == 0 || !(kevo_rtok_is(m, d + 1, ",") || kevo_rtok_is(m, d + 1, ")")))
        return false;
    unsigned t = d - 1;
    while (t > 0 && (kevo_rtok_is(m, t, "const") || kevo_rtok_is(m, t, "volatile")))
        t--;
    return kevo_rtok_is(m, t, "*");
}

int kevo_recipe_restrict_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                               const long *params)
{
    int error = 0;
    int pointers = 0, already = 0, added = 0;
    char skipped[256] = "";
    (void)source;
    (void)params;

    for (size_t i = 0; i < m->n_param; i++) {
        int v = m->param[i];
        if (v < 0 || m->var[v].points_to_function ||
            (m->var[v].vtype != KEVO_VTYPE_POINTER && m->var[v].vtype != KEVO_VTYPE_ARRAY))
            continue;
        pointers++;
        if (m->var[v].is_restrict) {
            already++;
            continue;
        }
        unsigned d = (unsigned)m->n_tok;
        for (unsigned t = 0; t < m->t_fbody && t < m->n_tok; t++)
            if (m->tok[t].var == v && m->tok[t].is_decl)
                d = t;
        if (d < m->n_tok && kevo_rtok_is(m, d + 1, "[")) {
            /* `T name[]` / `T name[N]`: the qualifier goes inside the first brackets */
            if (kevo_rtok_is(m, d + 2, "restrict")) {
                already++;
                continue;
            }
            if ((error = kevo_cparse_edits_add(&out->edits, m->tok[d + 1].end, m->tok[d + 1].end,
                                               kevo_rtok_is(m, d + 2, "]") ? "restrict"
                                                                           : "restrict ")) < 0)
                return error;
            added++;
            continue;
        }
        if (d == m->n_tok || !restrictable(m, d)) {
            size_t n = strlen(skipped);
            snprintf(skipped + n, sizeof(skipped) - n, "%s'%s'", n ? ", " : "", m->var[v].name);
            continue;
        }
        if ((error = kevo_cparse_edits_add(&out->edits, m->tok[d].start, m->tok[d].start,
                                           "restrict ")) < 0)
            return error;
        added++;
    }
    if (added > 0)
        return 0;
    if (pointers == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no pointer parameter");
    if (skipped[0])
        return kevo_error_set(KEVO_EINVAL,
                              "pointer parameters %s are not declared as 'T *name' or 'T name[]'%s",
                              skipped, already ? "; the others are already restrict" : "");
    return kevo_error_set(KEVO_EINVAL, "every pointer parameter is already restrict (%d of %d)",
                          already, pointers);
}
