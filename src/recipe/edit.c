/*
 * recipe/edit.c - what every recipe promises about its edits, enforced
 * before they are applied: they stay inside the kernel function and never
 * overlap. The edit list itself is cparse's (kevo_cparse_edits); a broken
 * promise is a recipe bug, never a property of the candidate.
 *
 * Must not: know anything about C beyond the kernel's extent.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kevo_recipe_edits_apply(char **out, const kevo_cparse_edits *e, const char *src, size_t len,
                            unsigned lo, unsigned hi)
{
    int error = 0;

    *out = NULL;
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].start < lo || e->v[i].end > hi || e->v[i].end > len)
            return kevo_error_set(KEVO_ERROR,
                                  "recipe bug: edit [%u,%u) lies outside the kernel [%u,%u)",
                                  e->v[i].start, e->v[i].end, lo, hi);
    if ((error = kevo_cparse_edits_apply(out, e, src, len)) == KEVO_ERROR) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", kevo_error_last());
        error = kevo_error_set(KEVO_ERROR, "recipe bug: %s", msg);
    }
    return error;
}

int kevo_recipe_edits_apply_with(char **out, const kevo_cparse_edits *e, const char *src,
                                 const kevo_recipe_model *m, const char *prelude)
{
    char *text = NULL;
    int error = kevo_recipe_edits_apply(&text, e, src, strlen(src), m->fn_start, m->fn_end);
    if (error < 0)
        return error;
    if (strstr(src, prelude)) {
        *out = text;
        return 0;
    }
    unsigned at = kevo_recipe_line_begin(m, m->fn_start);
    kevo_buf w = {0};
    error = kevo_buf_printf(&w, "%.*s%s%s", (int)at, text, prelude, text + at);
    free(text);
    if (error < 0) {
        kevo_buf_free(&w);
        return error;
    }
    *out = kevo_buf_detach(&w);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}
