/*
 * recipe/cflags.c - the build-flag line a candidate may carry as its first
 * line, `// kevo: cflags -O3 -march=native -fopenmp`, and the allow-list of
 * flags it may name. Reads and rewrites that one line only; never looks at
 * the rest of the source and never runs a compiler.
 */
#include "kevo/recipe.h"
#include "kevo/sys/backend.h"

#include <stdlib.h>
#include <string.h>

#define CFLAGS_PREFIX "// kevo: cflags"

/* One allow-list for the whole of kevo: the C backend's, which the compile
 * gate enforces (src/backend/common.c). */
bool kevo_cflags_allowed(const char *flag)
{
    return flag && kevo_cflag_allowed(flag);
}

/* Length of the first line without its line terminator; *next gets the
 * offset just past the terminator. */
static size_t first_line(const char *source, size_t *next)
{
    size_t n = strcspn(source, "\n");
    *next = source[n] == '\n' ? n + 1 : n;
    if (n > 0 && source[n - 1] == '\r')
        n--;
    return n;
}

/* Whether the first line is a cflags line; *flags_at and *flags_len get
 * the text after the prefix. */
static bool has_cflags_line(const char *source, size_t *flags_at, size_t *flags_len)
{
    size_t next, n = first_line(source, &next);
    size_t plen = strlen(CFLAGS_PREFIX);
    if (n < plen || strncmp(source, CFLAGS_PREFIX, plen) != 0)
        return false;
    if (n > plen && source[plen] != ' ' && source[plen] != '\t')
        return false;
    *flags_at = plen;
    *flags_len = n - plen;
    return true;
}

/* Append the whitespace-separated words of text[0..len) to `out`, single
 * spaced. */
static int append_words(kevo_buf *out, const char *text, size_t len)
{
    int error = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        size_t start = i;
        while (i < len && text[i] != ' ' && text[i] != '\t')
            i++;
        if (i == start)
            break;
        if (out->len > 0 && (error = kevo_buf_puts(out, " ")) < 0)
            return error;
        if ((error = kevo_buf_put(out, text + start, i - start)) < 0)
            return error;
    }
    return error;
}

int kevo_recipe_cflags_get(char **out_flags, const char *source)
{
    kevo_buf b = {0};
    int error = 0;
    size_t at, len;
    *out_flags = NULL;
    if (!source)
        return kevo_error_set(KEVO_EINVAL, "cflags: no source given");
    if (has_cflags_line(source, &at, &len) && (error = append_words(&b, source + at, len)) < 0)
        goto done;
    *out_flags = kevo_buf_detach(&b);
done:
    kevo_buf_free(&b);
    return error;
}

/* Whether the single-spaced word list `list` contains `word`. */
static bool word_in(const char *list, const char *word, size_t wlen)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n == wlen && strncmp(p, word, wlen) == 0)
            return true;
        p += n;
        while (*p == ' ')
            p++;
    }
    return false;
}

static bool is_opt_level(const char *w, size_t n)
{
    return n >= 2 && w[0] == '-' && w[1] == 'O';
}

int kevo_recipe_cflags_add(char **out_source, bool *out_changed, const char *source,
                           const char *flags)
{
    kevo_buf old = {0}, merged = {0}, out = {0};
    int error = 0;
    size_t at = 0, len = 0, next = 0;
    bool had_line;

    *out_source = NULL;
    if (out_changed)
        *out_changed = false;
    if (!source || !flags)
        return kevo_error_set(KEVO_EINVAL, "cflags: no source or flags given");

    had_line = has_cflags_line(source, &at, &len);
    if (had_line) {
        first_line(source, &next);
        if ((error = append_words(&old, source + at, len)) < 0)
            goto done;
    }

    /* The new -O level (if any) wins over the old one. */
    const char *new_opt = NULL;
    size_t new_opt_len = 0;
    for (const char *p = flags; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t");
        if (n == 0)
            break;
        char word[64];
        if (n >= sizeof(word)) {
            error = kevo_error_set(KEVO_EINVAL, "cflags: flag '%.*s...' is not allowed", 20, p);
            goto done;
        }
        memcpy(word, p, n);
        word[n] = '\0';
        if (!kevo_cflags_allowed(word)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "cflags: flag '%s' is not in the allow-list (see "
                                   "kevo_cflags_allowed)",
                                   word);
            goto done;
        }
        if (is_opt_level(p, n)) {
            new_opt = p;
            new_opt_len = n;
        }
        p += n;
    }

    /* Keep the old flags in order, dropping an -O level that is replaced
     * (by a different one: the same level stays where it is, so that adding
     * flags already there changes nothing). */
    for (const char *p = kevo_buf_cstr(&old); *p;) {
        size_t n = strcspn(p, " ");
        bool replaced = new_opt && is_opt_level(p, n) &&
                        !(n == new_opt_len && !memcmp(p, new_opt, n));
        if (!replaced) {
            if (merged.len > 0 && (error = kevo_buf_puts(&merged, " ")) < 0)
                goto done;
            if ((error = kevo_buf_put(&merged, p, n)) < 0)
                goto done;
        }
        p += n;
        while (*p == ' ')
            p++;
    }
    for (const char *p = flags; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t");
        if (n == 0)
            break;
        if (!word_in(kevo_buf_cstr(&merged), p, n)) {
            if (merged.len > 0 && (error = kevo_buf_puts(&merged, " ")) < 0)
                goto done;
            if ((error = kevo_buf_put(&merged, p, n)) < 0)
                goto done;
        }
        p += n;
    }

    bool changed = strcmp(kevo_buf_cstr(&merged), kevo_buf_cstr(&old)) != 0;
    if (!changed) {
        if ((error = kevo_buf_puts(&out, source)) < 0)
            goto done;
    } else {
        if ((error = kevo_buf_printf(&out, "%s %s\n", CFLAGS_PREFIX, kevo_buf_cstr(&merged))) < 0)
            goto done;
        if ((error = kevo_buf_puts(&out, source + (had_line ? next : 0))) < 0)
            goto done;
    }
    if (out_changed)
        *out_changed = changed;
    *out_source = kevo_buf_detach(&out);
done:
    kevo_buf_free(&old);
    kevo_buf_free(&merged);
    kevo_buf_free(&out);
    return error;
}
