/*
 * recipe/loops.c - helpers the loop recipes share: perfect-nest depth, the
 * "band" of simple rectangular loops a transformation may reorder, fresh
 * identifiers, pragma insertion, and which OpenMP collapse covers a loop.
 *
 * Must not: decide whether a recipe applies (the recipe files do).
 */
#include "model.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kevo_recipe_perfect_depth(const kevo_recipe_model *m, int l)
{
    int d = 0;
    while (l >= 0) {
        d++;
        int c = m->loop[l].sole_child;
        if (c < 0 || m->loop[c].n_pragmas > 0)
            break;
        l = c;
    }
    return d;
}

int kevo_recipe_nest_loop(const kevo_recipe_model *m, int l, int k)
{
    while (k-- > 0 && l >= 0)
        l = m->loop[l].sole_child;
    return l;
}

/* Up to 60 bytes of the statement starting at token t, on one line. */
static void stmt_excerpt(char *buf, size_t size, const kevo_recipe_model *m, unsigned t)
{
    unsigned a = m->tok[t].start, b = a;
    while (b < m->len && m->src[b] != '\n' && b - a < 60)
        b++;
    while (b > a && isspace((unsigned char)m->src[b - 1]))
        b--;
    snprintf(buf, size, "%.*s%s", (int)(b - a), m->src + a,
             b < m->len && m->src[b] != '\n' && b - a >= 60 ? "..." : "");
}

static void why_set(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void why_set(char *why, size_t len, const char *fmt, ...)
{
    if (!why || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

void kevo_recipe_not_perfect_why(char *why, size_t len, const kevo_recipe_model *m, int l)
{
    const kevo_rloop *L = &m->loop[l];
    if (L->n_children == 0) {
        why_set(why, len, "the loop at line %u has no inner loop", L->line);
        return;
    }
    char ex[80];
    stmt_excerpt(ex, sizeof(ex), m, L->t_other);
    unsigned inner_line = 0;
    for (size_t j = (size_t)l + 1; j < m->n_loop; j++)
        if (m->loop[j].parent == l) {
            inner_line = m->loop[j].line;
            break;
        }
    why_set(why, len,
            "the loops at line %u and line %u are not perfectly nested: '%s' (line %u) lies "
            "between them",
            L->line, inner_line, ex, kevo_recipe_line(m, m->tok[L->t_other].start));
}

int kevo_recipe_band(const kevo_recipe_model *m, int l, int max, bool strided_ok, char *why,
                     size_t why_len)
{
    int vars[16];
    int k = 0, cur = l;
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    const kevo_rloop *root = &m->loop[l];

    why_set(why, why_len, "band of %d loops requested", max);
    if (kevo_recipe_writes(&w, &nw, m, root->t_body, root->t_end) < 0) {
        why_set(why, why_len, "%s", kevo_error_last());
        return 0;
    }
    while (k < max && k < 16) {
        const kevo_rloop *L = &m->loop[cur];
        if (!(strided_ok ? L->strided : L->simple)) {
            why_set(why, why_len, "%s", L->why);
            break;
        }
        if (L->early_exit) {
            char ee[96];
            why_set(why, why_len, "%s", kevo_recipe_early_exit_why(ee, sizeof(ee), L));
            break;
        }
        bool ok = true;
        for (int j = 0; j < k && ok; j++) {
            if (kevo_recipe_uses_var(m, L->t_lb0, L->t_lb1, vars[j]) ||
                kevo_recipe_uses_var(m, L->t_ub0, L->t_ub1, vars[j])) {
                why_set(why, why_len,
                        "the bounds of the loop at line %u use '%s' of the loop around it: the "
                        "nest is not rectangular",
                        L->line, m->var[vars[j]].name);
                ok = false;
            } else if (strcmp(m->var[vars[j]].name, m->var[L->var].name) == 0) {
                why_set(why, why_len, "the loop at line %u reuses the name '%s' of an outer loop",
                        L->line, m->var[L->var].name);
                ok = false;
            }
        }
        /* bounds must not change while the nest runs */
        for (size_t i = 0; i < nw && ok; i++) {
            int v = w[i].var;
            if (v >= 0 && (kevo_recipe_uses_var(m, L->t_lb0, L->t_lb1, v) ||
                           kevo_recipe_uses_var(m, L->t_ub0, L->t_ub1, v))) {
                why_set(why, why_len,
                        "'%s' in the bounds of the loop at line %u is written inside "
                        "the nest (line %u)",
                        m->var[v].name, L->line, kevo_recipe_line(m, m->tok[w[i].t_op].start));
                ok = false;
            }
        }
        if (!ok)
            break;
        vars[k++] = L->var;
        if (k == max)
            break;
        int c = L->sole_child;
        if (c < 0) {
            kevo_recipe_not_perfect_why(why, why_len, m, cur);
            break;
        }
        if (m->loop[c].n_pragmas > 0) {
            const kevo_rdirective *d = &m->dir[m->loop[c].pragmas[0]];
            why_set(why, why_len, "the loop at line %u carries '%.*s'", m->loop[c].line,
                    (int)(d->end - d->start), m->src + d->start);
            break;
        }
        cur = c;
    }
    free(w);
    return k;
}

static bool word_in_source(const kevo_recipe_model *m, const char *word)
{
    size_t n = strlen(word);
    const char *p = m->src;
    while ((p = strstr(p, word)) != NULL) {
        bool left = p == m->src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (left && right)
            return true;
        p += n;
    }
    return false;
}

int kevo_recipe_loop_index_check(const kevo_recipe_model *m, long index)
{
    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    if (index >= (long)m->n_loop)
        return kevo_error_set(KEVO_EINVAL,
                              "loop index %ld is out of range: the kernel has %zu for loops, "
                              "numbered from 0 in source order",
                              index, m->n_loop);
    return 0;
}

void kevo_recipe_fresh_name(char *buf, size_t size, const kevo_recipe_model *m, const char *base,
                            const char *suffix, char taken[][64], size_t n_taken)
{
    for (int i = 1;; i++) {
        if (i == 1)
            snprintf(buf, size, "%s%s", base, suffix);
        else
            snprintf(buf, size, "%s%s%d", base, suffix, i);
        bool used = word_in_source(m, buf);
        for (size_t k = 0; k < n_taken && !used; k++)
            used = strcmp(taken[k], buf) == 0;
        if (!used)
            return;
    }
}

int kevo_recipe_insert_pragma(kevo_cparse_edits *e, const kevo_recipe_model *m, int l,
                              const char *pragma_text)
{
    const kevo_rloop *L = &m->loop[l];
    unsigned for_off = m->tok[L->t_for].start;
    size_t ilen;
    const char *indent = kevo_recipe_indent(m, for_off, &ilen);
    if (L->at_line_start)
        return kevo_cparse_edits_add(e, kevo_recipe_line_begin(m, for_off),
                                     kevo_recipe_line_begin(m, for_off), "%.*s%s\n", (int)ilen,
                                     indent, pragma_text);
    return kevo_cparse_edits_add(e, for_off, for_off, "\n%.*s%s\n%.*s", (int)ilen, indent,
                                 pragma_text, (int)ilen, indent);
}

int kevo_recipe_pragma_collapse(const kevo_recipe_model *m, int d)
{
    const kevo_rdirective *dir = &m->dir[d];
    const char *p = m->src + dir->start, *end = m->src + dir->end;
    size_t n = (size_t)(end - p);
    for (size_t i = 0; i + 8 < n; i++) {
        if (strncmp(p + i, "collapse", 8) != 0 ||
            (i > 0 && (isalnum((unsigned char)p[i - 1]) || p[i - 1] == '_')))
            continue;
        size_t j = i + 8;
        while (j < n && isspace((unsigned char)p[j]))
            j++;
        if (j < n && p[j] == '(') {
            long v = strtol(p + j + 1, NULL, 10);
            return v > 0 ? (int)v : 1;
        }
    }
    return 1;
}

int kevo_recipe_collapsed_into(const kevo_recipe_model *m, int l)
{
    int dist = 0;
    for (int a = m->loop[l].parent; a >= 0; a = m->loop[a].parent) {
        dist++;
        const kevo_rloop *A = &m->loop[a];
        for (int k = 0; k < A->n_pragmas; k++) {
            int d = A->pragmas[k];
            if ((m->dir[d].flags & (KEVO_PRAGMA_OMP_FOR | KEVO_PRAGMA_OMP_SIMD)) &&
                kevo_recipe_pragma_collapse(m, d) > dist)
                return a;
        }
    }
    return -1;
}

const char *kevo_recipe_pragma_text(const kevo_recipe_model *m, int l, unsigned flags, int *len)
{
    const kevo_rloop *L = &m->loop[l];
    for (int k = 0; k < L->n_pragmas; k++) {
        const kevo_rdirective *d = &m->dir[L->pragmas[k]];
        if (d->flags & flags) {
            *len = (int)(d->end - d->start);
            return m->src + d->start;
        }
    }
    *len = 0;
    return "";
}

int kevo_recipe_pragma_decline(const kevo_recipe_model *m, const char *what, int l)
{
    int n;
    const char *t = kevo_recipe_pragma_text(m, l, ~0u, &n);
    return kevo_error_set(KEVO_EINVAL,
                          "the loop at line %u carries '%.*s': apply %s before pragma recipes",
                          m->loop[l].line, n, t, what);
}

const char *kevo_recipe_early_exit_why(char *buf, size_t len, const kevo_rloop *L)
{
    snprintf(buf, len, "the loop at line %u can leave early (break, return or goto)", L->line);
    return buf;
}

void kevo_recipe_kernel_name(char *name, size_t size, const kevo_recipe_model *m)
{
    name[0] = 0;
    for (unsigned t = 0; t + 1 < m->t_fbody && t + 1 < m->n_tok && !name[0]; t++)
        if (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "(")) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            snprintf(name, size, "%.*s", (int)n, s);
        }
}
