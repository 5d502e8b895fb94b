/*
 * llm/extract.c - finding the kernel source in an LLM's reply.
 *
 * Replies are Markdown-ish: prose, then one or more fenced blocks (```c,
 * ```cpp, bare ```, sometimes a test harness or a first draft as well),
 * sometimes with CRLF line ends or a last fence that never closes, and
 * sometimes no fences at all. This file picks the one block that is the
 * kernel: in the requested language (the fence tags the caller gives, a
 * backend's code_fence_tags), defining the kernel function, without
 * main() if there is a choice, the last such block if still tied.
 *
 * It only reads text. It must not judge the code (that is the gates'
 * job) nor rewrite it beyond line ends and surrounding blank lines. When
 * nothing fits, the reason is worded for the model: it becomes feedback.
 */
#include "internal.h"

#include "kevo/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct block {
    const char *start; /* into the normalised reply */
    size_t len;
    char tag[24]; /* info string's first word, lower case; "" for a bare fence */
    int rank;     /* 3 exact language, 2 related, 1 bare fence, 0 not acceptable */
    bool defines_kernel;
    bool has_main;
} block;

#define MAX_BLOCKS 64

/* ---- language tags ---------------------------------------------------- */

/* Which fence tags a block may carry. The caller gives them (a backend's
 * code_fence_tags): "FENCE ALIAS...; RELATED...". FENCE is what the model
 * was asked for; it and the ALIASes rank 3, the RELATED tags 2, a bare
 * fence 1, anything else 0. This file knows only the C family by name: its
 * scanner reads C-like text. */
#define SPEC_MAX_WORDS 24

typedef struct fence_spec {
    bool any;                          /* no language asked: any block */
    const char *shown;                 /* the fence as the caller wrote it (messages) */
    char store[256];                   /* the words, NUL-separated, lower case */
    const char *exact[SPEC_MAX_WORDS]; /* FENCE and its aliases */
    const char *related[SPEC_MAX_WORDS];
    size_t nexact, nrelated;
} fence_spec;

/* The one-word languages, for callers that name one rather than give a
 * spec: the C family only. Every other language comes as a spec from its
 * backend (kevo_backend.code_fence_tags). */
static const struct {
    const char *name;
    const char *spec;
} bare_languages[] = {
    {"c", "c h; cpp c++ cxx cc hpp"},
    {"cpp", "cpp c++ cxx cc hpp; c h"},
    {"c++", "cpp c++ cxx cc hpp; c h"},
};
#define NBARE (sizeof(bare_languages) / sizeof(bare_languages[0]))

static bool tag_in(const char *tag, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tag, list[i]))
            return true;
    return false;
}

/* Split `spec` into fs's word lists. */
static int spec_split(fence_spec *fs, const char *spec, const char *lang)
{
    size_t len = strlen(spec);
    if (len >= sizeof(fs->store))
        return kevo_error_set(KEVO_EINVAL, "code language spec '%.40s...' is too long", lang);
    for (size_t i = 0; i <= len; i++)
        fs->store[i] = (char)tolower((unsigned char)spec[i]);
    bool related = false;
    char *p = fs->store;
    while (*p) {
        if (*p == ' ' || *p == '\t' || *p == ',' || *p == ';') {
            related |= *p == ';';
            *p++ = '\0';
            continue;
        }
        const char **list = related ? fs->related : fs->exact;
        size_t *n = related ? &fs->nrelated : &fs->nexact;
        if (*n == SPEC_MAX_WORDS)
            return kevo_error_set(KEVO_EINVAL, "code language spec '%s' has too many tags", lang);
        size_t wlen = strcspn(p, " \t,;");
        /* a block's tag has fewer characters than block.tag holds */
        if (wlen >= sizeof(((block *)0)->tag))
            return kevo_error_set(KEVO_EINVAL, "code language spec '%s': tag too long", lang);
        list[(*n)++] = p;
        p += wlen;
    }
    if (fs->nexact == 0)
        return kevo_error_set(KEVO_EINVAL, "code language spec '%s' names no fence", lang);
    return 0;
}

/* lang: NULL or "" (any), one word of bare_languages, or a spec. */
static int parse_lang(fence_spec *fs, const char *lang)
{
    memset(fs, 0, sizeof(*fs));
    if (!lang || !*lang) {
        fs->any = true;
        return 0;
    }
    fs->shown = lang;
    if (strcspn(lang, " \t,;") < strlen(lang)) {
        int error = spec_split(fs, lang, lang);
        fs->shown = fs->nexact ? fs->exact[0] : lang;
        return error;
    }
    for (size_t i = 0; i < NBARE; i++)
        if (!strcasecmp(lang, bare_languages[i].name))
            return spec_split(fs, bare_languages[i].spec, lang);
    return kevo_error_set(KEVO_EINVAL,
                          "unknown code language '%s' (expected c, cpp, or the tags of a "
                          "backend: \"FENCE ALIAS...; RELATED...\")",
                          lang);
}

/* Whether tag names a language of bare_languages (any block ranks 3 then). */
static bool tag_known(const char *tag)
{
    for (size_t i = 0; i < NBARE; i++) {
        fence_spec fs = {0};
        if (spec_split(&fs, bare_languages[i].spec, bare_languages[i].name) == 0 &&
            tag_in(tag, fs.exact, fs.nexact))
            return true;
    }
    return false;
}

static int rank_tag(const char *tag, const fence_spec *fs)
{
    if (!*tag)
        return 1;
    if (fs->any)
        return tag_known(tag) ? 3 : 2;
    if (tag_in(tag, fs->exact, fs->nexact))
        return 3;
    return tag_in(tag, fs->related, fs->nrelated) ? 2 : 0;
}

/* ---- scanning C-like text ------------------------------------------- */

static bool is_ident(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* Copy of s[0..len) with comments and string/char literals blanked to
 * spaces (newlines kept), so a name in a comment is not a definition. */
static char *code_view(const char *s, size_t len)
{
    char *v = malloc(len + 1);
    if (!v)
        return NULL;
    size_t i = 0;
    while (i < len) {
        if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
            while (i < len && s[i] != '\n')
                v[i++] = ' ';
        } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
            v[i] = v[i + 1] = ' ';
            i += 2;
            while (i < len && !(s[i] == '*' && i + 1 < len && s[i + 1] == '/')) {
                v[i] = s[i] == '\n' ? '\n' : ' ';
                i++;
            }
            for (int k = 0; k < 2 && i < len; k++)
                v[i++] = ' ';
        } else if (s[i] == '"' || s[i] == '\'') {
            char q = s[i];
            v[i++] = ' ';
            while (i < len && s[i] != q && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < len) {
                    v[i++] = ' ';
                }
                v[i] = s[i] == '\n' ? '\n' : ' ';
                i++;
            }
            if (i < len && s[i] == q)
                v[i++] = ' ';
        } else {
            v[i] = s[i];
            i++;
        }
    }
    v[len] = '\0';
    return v;
}

static size_t skip_space(const char *v, size_t i, size_t len)
{
    while (i < len && isspace((unsigned char)v[i]))
        i++;
    return i;
}

/* A real parameter list is far shorter; the bound keeps a reply full of
 * unbalanced "name(" from costing quadratic time. */
#define MAX_PARAMS_BYTES 4096

/* v[i] == '(' -> index just past the matching ')', or len when unbalanced
 * within MAX_PARAMS_BYTES. */
static size_t skip_parens(const char *v, size_t i, size_t len)
{
    int depth = 0;
    size_t end = len - i > MAX_PARAMS_BYTES ? i + MAX_PARAMS_BYTES : len;
    for (; i < end; i++) {
        if (v[i] == '(')
            depth++;
        else if (v[i] == ')' && --depth == 0)
            return i + 1;
    }
    return len;
}

/* Does the comment-free text v[0..len) define function `name`, i.e. hold
 * `name ( ... )` followed (after at most a few qualifier words or
 * attribute groups such as `__attribute__((hot))` or `noexcept`) by `{`?
 * Calls end in `;` or an operator, declarations in `;`. */
static bool view_defines(const char *v, size_t len, const char *name)
{
    size_t nl = strlen(name);
    if (nl == 0 || nl > len)
        return false;
    for (size_t i = 0; i + nl <= len; i++) {
        if (memcmp(v + i, name, nl) != 0)
            continue;
        if ((i > 0 && is_ident(v[i - 1])) || (i + nl < len && is_ident(v[i + nl])))
            continue;
        size_t j = skip_space(v, i + nl, len);
        if (j >= len || v[j] != '(')
            continue;
        j = skip_space(v, skip_parens(v, j, len), len);
        for (int words = 0; words < 4 && j < len && is_ident(v[j]); words++) {
            while (j < len && is_ident(v[j]))
                j++;
            j = skip_space(v, j, len);
            if (j < len && v[j] == '(')
                j = skip_space(v, skip_parens(v, j, len), len);
        }
        if (j < len && v[j] == '{')
            return true;
    }
    return false;
}

static int text_defines(bool *out, const char *s, size_t len, const char *name)
{
    char *v = code_view(s, len);
    if (!v)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    *out = view_defines(v, len, name);
    free(v);
    return 0;
}

/* ---- fences ------------------------------------------------------------ */

/* Reply with CRLF / lone CR turned into LF. */
static char *normalise(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            if (i + 1 < n && s[i + 1] == '\n')
                continue;
            o[w++] = '\n';
        } else {
            o[w++] = s[i];
        }
    }
    o[w] = '\0';
    return o;
}

/* If the line [p, p+n) opens or closes a fence, return its length of
 * fence characters and set *ch; else 0. */
static size_t fence_run(const char *p, size_t n, char *ch, size_t *indent)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    *indent = i;
    if (i >= n || (p[i] != '`' && p[i] != '~'))
        return 0;
    char c = p[i];
    size_t k = i;
    while (k < n && p[k] == c)
        k++;
    if (k - i < 3)
        return 0;
    *ch = c;
    return k - i;
}

static void read_tag(char *tag, size_t cap, const char *p, size_t n)
{
    size_t i = 0, w = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '{' || p[i] == '.'))
        i++;
    while (i < n && w + 1 < cap && !isspace((unsigned char)p[i]) && p[i] != '}' && p[i] != '`' &&
           p[i] != ',' && p[i] != '{')
        tag[w++] = (char)tolower((unsigned char)p[i++]);
    tag[w] = '\0';
}

/* Split `text` into fenced blocks. Returns the number found (at most max). */
static size_t find_blocks(block *blocks, size_t max, const char *text)
{
    size_t nb = 0;
    const char *p = text;
    bool inside = false;
    char open_ch = 0;
    size_t open_len = 0;
    block *cur = NULL;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + n;
        char ch;
        size_t indent, run = fence_run(p, n, &ch, &indent);
        if (!inside && run) {
            if (nb == max)
                break;
            cur = &blocks[nb++];
            memset(cur, 0, sizeof(*cur));
            read_tag(cur->tag, sizeof(cur->tag), p + indent + run, n - indent - run);
            cur->start = next;
            inside = true;
            open_ch = ch;
            open_len = run;
        } else if (inside && run && ch == open_ch && run >= open_len) {
            size_t k = indent + run;
            while (k < n && (p[k] == ' ' || p[k] == '\t'))
                k++;
            if (k == n) { /* a closing fence carries no info string */
                cur->len = (size_t)(p - cur->start);
                inside = false;
            }
        }
        p = next;
    }
    if (inside) /* unterminated: the block runs to the end */
        cur->len = (size_t)(p - cur->start);
    return nb;
}

static bool blank_span(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

/* Copy s[0..len) without leading/trailing blank lines, ending in '\n'. */
static int emit(char **out, const char *s, size_t len)
{
    const char *end = s + len;
    for (;;) { /* drop leading blank lines */
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl || !blank_span(s, (size_t)(nl - s)))
            break;
        s = nl + 1;
    }
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    kevo_buf b = {0};
    if (kevo_buf_put(&b, s, (size_t)(end - s)) < 0 || kevo_buf_puts(&b, "\n") < 0) {
        kevo_buf_free(&b);
        return KEVO_ENOMEM;
    }
    *out = kevo_buf_detach(&b);
    return 0;
}

/* ---- replies without fences ------------------------------------------ */

static const char *const code_starters[] = {
    "static",    "void",          "int",          "float",      "double",   "char",
    "unsigned",  "signed",        "long",         "short",      "const",    "extern",
    "inline",    "typedef",       "struct",       "enum",       "union",    "template",
    "namespace", "using",         "__global__",   "__device__", "__host__", "__kernel",
    "kernel",    "__attribute__", "size_t",       "int8_t",     "int16_t",  "int32_t",
    "int64_t",   "uint8_t",       "uint16_t",     "uint32_t",   "uint64_t", "bool",
    "_Bool",     "restrict",      "__restrict__", NULL};

static bool line_starts_code(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (i == n)
        return false;
    if (p[i] == '#' || (i + 1 < n && p[i] == '/' && (p[i + 1] == '/' || p[i + 1] == '*')))
        return true;
    size_t k = i;
    while (k < n && is_ident(p[k]))
        k++;
    if (k == i || (k < n && !isspace((unsigned char)p[k]) && p[k] != '*' && p[k] != '('))
        return false;
    for (const char *const *w = code_starters; *w; w++)
        if (strlen(*w) == k - i && !memcmp(p + i, *w, k - i))
            return true;
    return false;
}

static bool line_ends_code(const char *p, size_t n)
{
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    size_t i = 0;
    while (i < n && isspace((unsigned char)p[i]))
        i++;
    return n > i && (p[n - 1] == '}' || p[n - 1] == ';' || p[i] == '#' ||
                     (n - i >= 2 && p[n - 2] == '*' && p[n - 1] == '/'));
}

/* The code part of an unfenced reply: from the first line that starts like
 * C to the last line that ends like C. false when there is none. */
static bool unfenced_span(const char *text, const char **start, size_t *len)
{
    const char *first = NULL, *end = NULL, *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (!first && line_starts_code(p, n))
            first = p;
        if (first && line_ends_code(p, n))
            end = p + n;
        p = nl ? nl + 1 : p + n;
    }
    if (!first || !end || end <= first)
        return false;
    *start = first;
    *len = (size_t)(end - first);
    return true;
}

/* ---- the entry point -------------------------------------------------- */

static void list_tags(char *buf, size_t cap, const block *blocks, size_t nb)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nb && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "",
                         blocks[i].tag[0] ? blocks[i].tag : "untagged");
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

int kevo_llm_extract_code(char **out, const char *reply, const char *lang, const char *kernel_name)
{
    int error = 0;
    char *text = NULL;
    block *blocks = NULL;
    fence_spec want;

    *out = NULL;
    if ((error = parse_lang(&want, lang)) < 0)
        return error;
    const char *lang_shown = want.any ? "any language" : want.shown;
    const char *fence = want.any ? "c" : want.shown;
    if (kernel_name && !*kernel_name)
        kernel_name = NULL;
    if (!reply || blank_span(reply, strlen(reply)))
        return kevo_error_set(KEVO_ENOTFOUND, "no code found: the reply is empty");
    if (!(text = normalise(reply)) || !(blocks = calloc(MAX_BLOCKS, sizeof(*blocks)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }

    size_t nb = find_blocks(blocks, MAX_BLOCKS, text);
    if (nb == 0) {
        const char *s;
        size_t n;
        bool defines = false;
        if (!unfenced_span(text, &s, &n)) {
            error = kevo_error_set(KEVO_ENOTFOUND,
                                   "no code found: the reply has no fenced code block "
                                   "(```%s ... ```) and does not itself look like source code",
                                   fence);
            goto done;
        }
        if (kernel_name && (error = text_defines(&defines, s, n, kernel_name)) < 0)
            goto done;
        if (kernel_name && !defines) {
            error = kevo_error_set(KEVO_ENOTFOUND,
                                   "no kernel found: the reply has no fenced code block and does "
                                   "not define the function `%s`",
                                   kernel_name);
            goto done;
        }
        if ((error = emit(out, s, n)) < 0)
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }

    const block *best = NULL;
    size_t acceptable = 0, empty = 0;
    for (size_t i = 0; i < nb; i++) {
        block *b = &blocks[i];
        b->rank = rank_tag(b->tag, &want);
        if (b->rank > 0 && blank_span(b->start, b->len)) {
            empty++;
            b->rank = 0;
        }
        if (b->rank == 0)
            continue;
        acceptable++;
        if (kernel_name &&
            (error = text_defines(&b->defines_kernel, b->start, b->len, kernel_name)) < 0)
            goto done;
        if ((error = text_defines(&b->has_main, b->start, b->len, "main")) < 0)
            goto done;
        if (kernel_name && !b->defines_kernel)
            continue;
        /* later blocks win ties: replies tend to end with the final version */
        if (!best || b->rank > best->rank ||
            (b->rank == best->rank && (best->has_main >= b->has_main)))
            best = b;
    }
    if (!best) {
        char tags[256];
        list_tags(tags, sizeof(tags), blocks, nb);
        if (acceptable == 0 && empty > 0)
            error = kevo_error_set(KEVO_ENOTFOUND,
                                   "no code found: the reply's %s code block%s %s empty",
                                   lang_shown, empty == 1 ? "" : "s", empty == 1 ? "is" : "are");
        else if (acceptable == 0)
            error = kevo_error_set(KEVO_ENOTFOUND,
                                   "no code found in %s: the reply has %zu fenced block%s (%s) "
                                   "but none holds %s code; put the kernel in a ```%s block",
                                   lang_shown, nb, nb == 1 ? "" : "s", tags, lang_shown, fence);
        else
            error = kevo_error_set(KEVO_ENOTFOUND,
                                   "no kernel found: none of the reply's %zu %s code block%s (%s) "
                                   "defines the function `%s` (expected a definition such as "
                                   "`void %s(...) { ... }`)",
                                   acceptable, lang_shown, acceptable == 1 ? "" : "s", tags,
                                   kernel_name, kernel_name);
        goto done;
    }
    if ((error = emit(out, best->start, best->len)) < 0)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
done:
    free(blocks);
    free(text);
    return error;
}
