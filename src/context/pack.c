/*
 * context/pack.c - token-budgeted packing of context sections. Every part
 * is estimated on its own and rounded up, so the sum of part estimates is
 * an upper bound of the estimate of the whole, and the context never goes
 * over its budget. Parts that do not fit are cut at a line (or at least a
 * UTF-8) boundary with a visible marker, or left out.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static int est(const kevo_pack *p, size_t len, int is_code)
{
    return kevo_tokens_estimate_len(len, is_code ? p->bpt_code : p->bpt_prose);
}

static int heading_len(const kevo_pack_section *s, kevo_buf *tmp)
{
    kevo_buf_clear(tmp);
    return kevo_buf_printf(tmp, "## %s\n\n", s->title);
}

/* Largest k <= max at a line end (when one is near) and never inside a
 * UTF-8 sequence. */
static size_t cut_point(const char *text, size_t len, size_t max)
{
    if (max >= len)
        return len;
    size_t k = max;
    for (size_t i = max; i > max - max / 4 && i > 0; i--) {
        if (text[i - 1] == '\n') {
            k = i;
            break;
        }
    }
    while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80)
        k--;
    return k;
}

int kevo_pack_add(kevo_pack *p, kevo_pack_section *s, const char *text, size_t len, int is_code,
                  int can_cut)
{
    kevo_buf head = {0}, marker = {0};
    int error = 0, taken = 0;
    int header_tokens = 0;
    if (s->text.len == 0) {
        if ((error = heading_len(s, &head)) < 0)
            goto done;
        header_tokens = est(p, head.len, 0);
    }
    int room = s->cap - s->tokens;
    if (p->budget - p->total < room)
        room = p->budget - p->total;
    int avail = room - header_tokens;
    if (avail <= 0 || len == 0)
        goto done;
    int t = est(p, len, is_code);
    size_t keep = len;
    if (t > avail) {
        if (!can_cut || avail < p->min_cut)
            goto done;
        /* the longest marker (nothing kept) bounds every marker's length */
        if ((error = kevo_buf_printf(&marker, "\n[... cut: %zu of %zu bytes not shown]\n\n", len,
                                     len)) < 0)
            goto done;
        double bpt = is_code ? p->bpt_code : p->bpt_prose;
        size_t max_bytes = (size_t)((double)avail * bpt);
        if (max_bytes <= marker.len)
            goto done;
        keep = cut_point(text, len, max_bytes - marker.len);
        for (;;) {
            if (keep == 0)
                goto done;
            kevo_buf_clear(&marker);
            if ((error = kevo_buf_printf(&marker, "\n[... cut: %zu of %zu bytes not shown]\n\n",
                                         len - keep, len)) < 0)
                goto done;
            t = est(p, keep + marker.len, is_code);
            if (t <= avail)
                break;
            keep = keep > 8 ? cut_point(text, len, keep - 8) : 0; /* float rounding: shrink */
        }
    }
    if (header_tokens && (error = kevo_buf_put(&s->text, head.ptr, head.len)) < 0)
        goto done;
    if ((error = kevo_buf_put(&s->text, text, keep)) < 0 ||
        (keep < len && (error = kevo_buf_put(&s->text, marker.ptr, marker.len)) < 0))
        goto done;
    s->tokens += header_tokens + t;
    p->total += header_tokens + t;
    taken = t;
done:
    kevo_buf_free(&head);
    kevo_buf_free(&marker);
    return error < 0 ? error : taken;
}
