/*
 * util/buf.c - growable NUL-terminated byte buffers whose failures are
 * sticky (kevo/util.h).
 */
#include "kevo/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Remember the first failure: every later append returns it. */
static int fail(kevo_buf *b, int code)
{
    if (!b->error)
        b->error = code;
    return code;
}

/* The sticky error, with its message set again (the one of the append
 * that failed may have been overwritten since). */
static int still_failed(const kevo_buf *b)
{
    return kevo_error_set(b->error, "%s: an earlier append to this buffer failed",
                          b->error == KEVO_ENOMEM ? "out of memory" : kevo_error_name(b->error));
}

int kevo_buf_grow(kevo_buf *b, size_t extra)
{
    if (b->error)
        return still_failed(b);
    if (extra > SIZE_MAX - 1 - b->len)
        return fail(b, kevo_error_set(KEVO_ENOMEM, "a buffer of %zu bytes cannot grow by %zu",
                                      b->len, extra));
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->ptr, cap);
    if (!p)
        return fail(b, kevo_error_set(KEVO_ENOMEM,
                                      "out of memory growing a buffer to %zu bytes", cap));
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
    if (b->error)
        return still_failed(b);
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return fail(b, kevo_error_set(KEVO_EINVAL, "bad format string"));
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
    if (b->error) {
        still_failed(b);
        free(p);
        p = NULL;
    } else if (!p && !(p = calloc(1, 1))) {
        kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->error = 0;
    return p;
}

bool kevo_buf_oom(const kevo_buf *b)
{
    return b && b->error == KEVO_ENOMEM;
}

int kevo_buf_error(const kevo_buf *b)
{
    return b ? b->error : 0;
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
    b->error = 0;
}

char *kevo_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}
