/*
 * cparse/edits.c - a list of text replacements by byte offset into one
 * original text, applied in one pass. Every offset refers to the original,
 * so no edit shifts another (as if applied back to front).
 *
 * Must not: know anything about C, or where a caller may edit (a recipe's
 * "inside the kernel" rule is the recipe's).
 */
#include "kevo/cparse.h"
#include "kevo/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kevo_cparse_edits_add(kevo_cparse_edits *e, unsigned start, unsigned end, const char *fmt, ...)
{
    int error = 0;
    kevo_buf b = {0};
    va_list ap;

    if (end < start)
        return kevo_error_set(KEVO_ERROR, "edit [%u,%u) ends before it starts", start,
                              end);
    va_start(ap, fmt);
    error = kevo_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (error < 0)
        goto done;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        kevo_cparse_edit *v = realloc(e->v, cap * sizeof(*v));
        if (!v) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory recording an edit");
            goto done;
        }
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n].start = start;
    e->v[e->n].end = end;
    e->v[e->n].text = kevo_buf_detach(&b);
    e->v[e->n].seq = e->n;
    if (!e->v[e->n].text) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory recording an edit");
        goto done;
    }
    e->n++;
done:
    kevo_buf_free(&b);
    return error;
}

static int edit_cmp(const void *a, const void *b)
{
    const kevo_cparse_edit *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    /* at one offset: pure insertions first, then in recording order */
    bool xi = x->end == x->start, yi = y->end == y->start;
    if (xi != yi)
        return xi ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int kevo_cparse_edits_apply(char **out, const kevo_cparse_edits *e, const char *src, size_t len)
{
    int error = 0;
    kevo_buf b = {0};
    kevo_cparse_edit *v = NULL;

    *out = NULL;
    if (e->n > 0) {
        v = malloc(e->n * sizeof(*v));
        if (!v)
            return kevo_error_set(KEVO_ENOMEM, "out of memory applying edits");
        memcpy(v, e->v, e->n * sizeof(*v));
        qsort(v, e->n, sizeof(*v), edit_cmp);
    }
    size_t at = 0;
    for (size_t i = 0; i < e->n; i++) {
        if (v[i].end > len) {
            error = kevo_error_set(KEVO_ERROR, "edit [%u,%u) ends past the text (%zu bytes)",
                                   v[i].start, v[i].end, len);
            goto done;
        }
        if (v[i].start < at) {
            error = kevo_error_set(KEVO_ERROR, "overlapping edits at offset %u", v[i].start);
            goto done;
        }
        if ((error = kevo_buf_put(&b, src + at, v[i].start - at)) < 0 ||
            (error = kevo_buf_puts(&b, v[i].text)) < 0)
            goto done;
        at = v[i].end;
    }
    if ((error = kevo_buf_put(&b, src + at, len - at)) < 0)
        goto done;
    if (!(*out = kevo_buf_detach(&b)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory applying edits");
done:
    free(v);
    kevo_buf_free(&b);
    return error;
}

void kevo_cparse_edits_free(kevo_cparse_edits *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i].text);
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}
