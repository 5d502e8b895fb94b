/*
 * util/buf.c - growable NUL-terminated byte buffers.
 */
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kevo_buf_grow(kevo_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->ptr, cap);
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory growing a buffer to %zu bytes", cap);
    b->ptr = p;
    b->cap = cap;
    return 0;
}

int kevo_buf_put(kevo_buf *b, const void *data, size_t len)
{
    int error;
    if ((error = kevo_buf_grow(b, len)) < 0)
        return error;
    if (len)
        memcpy(b->ptr + b->len, data, len);
    b->len += len;
    b->ptr[b->len] = '\0';
    return 0;
}

int kevo_buf_puts(kevo_buf *b, const char *s)
{
    return kevo_buf_put(b, s, strlen(s));
}

int kevo_buf_vprintf(kevo_buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return kevo_error_set(KEVO_EINVAL, "bad format string");
    int error;
    if ((error = kevo_buf_grow(b, (size_t)n)) < 0)
        return error;
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int kevo_buf_printf(kevo_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int error = kevo_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return error;
}

const char *kevo_buf_cstr(const kevo_buf *b)
{
    return b->ptr ? b->ptr : "";
}

char *kevo_buf_detach(kevo_buf *b)
{
    char *p = b->ptr;
    if (!p)
        p = calloc(1, 1);
    b->ptr = NULL;
    b->len = b->cap = 0;
    return p;
}

void kevo_buf_clear(kevo_buf *b)
{
    b->len = 0;
    if (b->ptr)
        b->ptr[0] = '\0';
}

void kevo_buf_free(kevo_buf *b)
{
    if (!b)
        return;
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

char *kevo_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}
