/*
 * context/select.c - epsilon-greedy selection over Q-values and the scan
 * of retrieved code for API identifiers (the exact-name channel).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

size_t kevo_select_egreedy(size_t *out, const double *q, size_t n, size_t k, double eps,
                           kevo_rng *rng)
{
    if (k > n)
        k = n;
    if (k == 0)
        return 0;
    unsigned char small[256];
    unsigned char *taken = n <= sizeof(small) ? small : calloc(n, 1);
    if (!taken)
        return 0;
    memset(taken, 0, n);
    size_t got = 0;
    while (got < k) {
        size_t pick = n;
        if (eps > 0 && kevo_rng_uniform(rng) < eps) {
            /* uniform among the n - got remaining */
            size_t r = (size_t)(kevo_rng_uniform(rng) * (double)(n - got));
            for (size_t i = 0; i < n; i++) {
                if (taken[i])
                    continue;
                if (r-- == 0) {
                    pick = i;
                    break;
                }
            }
        } else {
            for (size_t i = 0; i < n; i++)
                if (!taken[i] && (pick == n || q[i] > q[pick]))
                    pick = i;
        }
        if (pick == n)
            break;
        taken[pick] = 1;
        out[got++] = pick;
    }
    if (taken != small)
        free(taken);
    return got;
}

static const char *const c_words[] = {
    "auto",     "break",      "case",       "char",     "const",    "continue", "default",
    "double",   "else",       "enum",       "extern",   "float",    "for",      "goto",
    "inline",   "int",        "long",       "register", "restrict", "return",   "short",
    "signed",   "sizeof",     "static",     "struct",   "switch",   "typedef",  "union",
    "unsigned", "void",       "volatile",   "while",    "int64_t",  "int32_t",  "uint8_t",
    "uint32_t", "uint64_t",   "size_t",     "include",  "define",   "pragma",   "ifdef",
    "ifndef",   "endif",      "bool",       "true",     "false",    "NULL",     "__global",
    "__kernel", "__global__", "__device__", "kevo",     "cflags",
};

static int is_c_word(const char *w, size_t len)
{
    for (size_t i = 0; i < sizeof(c_words) / sizeof(c_words[0]); i++)
        if (strlen(c_words[i]) == len && !memcmp(c_words[i], w, len))
            return 1;
    return 0;
}

static int ident_start(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int ident_char(unsigned char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

int kevo_identifiers_scan(char ***out, size_t *out_n, const char *code, size_t max)
{
    char **ids = NULL;
    size_t n = 0;
    int error = 0;
    *out = NULL;
    *out_n = 0;
    if (!code || !max)
        return 0;
    if (!(ids = calloc(max, sizeof(*ids))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory scanning identifiers");
    const unsigned char *p = (const unsigned char *)code;
    unsigned char prev = ' ';
    while (*p && n < max) {
        if (!ident_start(*p) || ident_char(prev) || prev == '.') {
            prev = *p++;
            continue;
        }
        const unsigned char *s = p;
        while (ident_char(*p))
            p++;
        size_t len = (size_t)(p - s);
        prev = p[-1];
        if (len < 3 || len > 63 || is_c_word((const char *)s, len))
            continue;
        int seen = 0;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strlen(ids[i]) == len && !memcmp(ids[i], s, len);
        if (seen)
            continue;
        if (!(ids[n] = strndup((const char *)s, len))) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory scanning identifiers");
            goto done;
        }
        n++;
    }
done:
    if (error < 0) {
        kevo_identifiers_free(ids, n);
        return error;
    }
    *out = ids;
    *out_n = n;
    return 0;
}

void kevo_identifiers_free(char **ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
}
