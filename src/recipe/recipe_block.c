/*
 * recipe/recipe_block.c - the `register_block` recipe: register blocking
 * in one step, as a chain of the loop recipes on the kernel's text:
 *   1. the loop `vectorize` would run in lanes among those holding other
 *      loops (the column loop around a reduction loop); when there is none,
 *      `interchange` first (the row-update matmul: it sinks the row's
 *      scalars and swaps k and j) and look again; else the loop it would
 *      pick among all (a reduction loop: the dot products of x W^T);
 *   2. `unroll_jam` of the loop around it by `rows` (skipped when it does
 *      not apply: then one accumulator per lane);
 *   3. `vectorize` (loop -1, `width`).
 * The built-in generator adds one recipe per attempt and keeps the fastest
 * kernel as the next start point, so it would not walk through the slow
 * intermediate (an interchanged matmul reads B by columns) to the fast
 * chain: this recipe is that walk as one move.
 *
 * Must not: edit text itself (each step is its recipe's own rewrite).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's name: the identifier before the parameter list. */
static int kernel_name(char *buf, size_t size, const kevo_recipe_model *m)
{
    for (unsigned t = 0; t + 1 < m->t_fbody && t + 1 < m->n_tok; t++)
        if (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "(")) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            snprintf(buf, size, "%.*s", (int)n, s);
            return 0;
        }
    return kevo_error_set(KEVO_ERROR, "recipe bug: no kernel name in the model");
}

int kevo_recipe_register_block_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params)
{
    char name[256];
    char *swapped = NULL, *jammed = NULL, *done = NULL;
    kevo_recipe_model *sm = NULL, *jm = NULL;
    int error = kernel_name(name, sizeof(name), m);
    if (error < 0)
        return error;
    /* each intermediate text is parsed once, here; the caller's guard
     * parses the result */
    const kevo_recipe_model *cm = m;
    const char *cur = source;
    int v = kevo_recipe__vectorize_pick(m, true);
    if (v < 0) {
        long ip[1] = {-1};
        if (kevo_recipe__rewrite_parsed(&swapped, "interchange", ip, 1, m, source, name) == 0 &&
            kevo_recipe_model_parse(&sm, swapped, name) == 0 &&
            (v = kevo_recipe__vectorize_pick(sm, true)) >= 0) {
            cm = sm;
            cur = swapped;
        }
        kevo_error_clear();
    }
    if (v < 0 && (v = kevo_recipe__vectorize_pick(m, false)) < 0) {
        error = kevo_error_set(KEVO_EINVAL,
                               "vectorize applies to no loop, before or after interchange (see "
                               "its reasons)");
        goto out;
    }
    int around = cm->loop[v].parent;
    if (around >= 0 && params[0] > 1) {
        long jp[2] = {around, params[0]};
        if (kevo_recipe__rewrite_parsed(&jammed, "unroll_jam", jp, 2, cm, cur, name) < 0 ||
            kevo_recipe_model_parse(&jm, jammed, name) < 0) {
            kevo_error_clear(); /* one accumulator per lane, then */
            free(jammed);
            jammed = NULL;
        }
    }
    long vp[2] = {-1, params[1]};
    if (!jammed ||
        kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, jm, jammed, name) < 0) {
        if (!jammed) {
            error = kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, cm, cur, name);
            if (error == KEVO_EINVAL) {
                char why[600];
                snprintf(why, sizeof(why), "%s", kevo_error_last());
                error = kevo_error_set(KEVO_ERROR,
                                       "recipe bug: vectorize declined its own pick: %s", why);
            }
            if (error < 0)
                goto out;
        } else {
            kevo_error_clear(); /* the jammed body did not vectorise: without the jam */
            if ((error = kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, cm, cur, name)) < 0)
                goto out;
        }
    }
    out->whole = done;
    done = NULL;
out:
    kevo_recipe_model_free(sm);
    kevo_recipe_model_free(jm);
    free(swapped);
    free(jammed);
    free(done);
    return error;
}
