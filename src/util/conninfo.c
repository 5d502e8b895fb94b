/*
 * util/conninfo.c - telling a PostgreSQL store locator from a file path,
 * and the printable (password-free) copy of one, for messages, logs, run
 * configurations and reports. It parses only as much of libpq's two
 * syntaxes (URIs and key=value strings) as finding the password takes; it
 * must not connect anywhere and must not know libpq.
 */
#include "kevo/util.h"

#include <stdlib.h>
#include <string.h>

bool kevo_conninfo_is_pg(const char *s)
{
    return s && (!strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11) ||
                 !strncmp(s, "pg:", 3));
}

/* A URI: drop ":password" from the userinfo and every password=
 * parameter. The userinfo is taken to end at the last '@' before the
 * query, not at the first '/' as libpq reads it: a password holding '/'
 * or '@' unencoded (which libpq then refuses) is not shown either. */
static int redact_uri(kevo_buf *b, const char *s)
{
    const char *rest = strstr(s, "://") + 3;
    int error = kevo_buf_put(b, s, (size_t)(rest - s));
    const char *end = NULL;
    for (const char *c = rest; *c && *c != '?'; c++)
        if (*c == '@')
            end = c;
    if (end) {
        const char *colon = memchr(rest, ':', (size_t)(end - rest));
        size_t user_len = colon ? (size_t)(colon - rest) : (size_t)(end - rest);
        if (error == 0)
            error = kevo_buf_put(b, rest, user_len);
        rest = end; /* from the '@' on */
    }
    const char *q = strchr(rest, '?');
    if (!q)
        return error ? error : kevo_buf_puts(b, rest);
    if (error == 0)
        error = kevo_buf_put(b, rest, (size_t)(q - rest));
    int first = 1;
    const char *p = q + 1;
    while (error == 0) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        int secret = len >= 9 && !strncmp(p, "password=", 9);
        if (len > 0 && !secret) {
            error = kevo_buf_puts(b, first ? "?" : "&");
            if (error == 0)
                error = kevo_buf_put(b, p, len);
            first = 0;
        }
        if (!amp)
            break;
        p = amp + 1;
    }
    return error;
}

/* A key=value string: copy every entry but password's. Values are bare
 * words or single-quoted with backslash escapes (libpq's syntax). */
static int redact_keyvalue(kevo_buf *b, const char *s)
{
    int error = 0, first = 1;
    const char *p = s;
    while (error == 0) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n')
            p++;
        size_t key_len = (size_t)(p - start);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '=') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '\'') {
                for (p++; *p && *p != '\''; p++)
                    if (*p == '\\' && p[1])
                        p++;
                if (*p == '\'')
                    p++;
            } else {
                while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                    p++;
            }
        }
        int secret = key_len == 8 && !strncmp(start, "password", 8);
        if (!secret) {
            if (!first)
                error = kevo_buf_puts(b, " ");
            if (error == 0)
                error = kevo_buf_put(b, start, (size_t)(p - start));
            first = 0;
        }
    }
    return error;
}

int kevo_conninfo_redact(char **out, const char *s)
{
    kevo_buf b = {0};
    int error = 0;
    *out = NULL;
    if (!s)
        s = "";
    if (!strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11))
        error = redact_uri(&b, s);
    else if (!strncmp(s, "pg:", 3)) {
        error = kevo_buf_puts(&b, "pg:");
        if (error == 0)
            error = redact_keyvalue(&b, s + 3);
    } else
        error = kevo_buf_puts(&b, s);
    char *copy = error == 0 ? kevo_buf_detach(&b) : NULL;
    if (error == 0 && !copy)
        copy = strdup(""); /* nothing was appended */
    kevo_buf_free(&b);
    if (!copy)
        return kevo_error_set(KEVO_ENOMEM, "out of memory copying a connection string");
    *out = copy;
    return 0;
}
