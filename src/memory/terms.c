/*
 * memory/terms.c - search words from free text, matching FTS5's unicode61
 * tokenizer (ASCII letters/digits and all non-ASCII bytes are word
 * characters). The stop list is English glue plus C words that occur in
 * nearly every kernel and so carry no BM25 signal.
 */
#include "terms.h"

#include "kevo/common.h"

#include <stdlib.h>
#include <string.h>

static const char *const stop_words[] = {
    "a",      "an",       "and",    "are",    "as",      "at",     "be",       "by",     "can",
    "do",     "does",     "for",    "from",   "has",     "have",   "if",       "in",     "into",
    "is",     "it",       "its",    "no",     "not",     "of",     "on",       "or",     "so",
    "that",   "the",      "then",   "there",  "this",    "to",     "was",      "were",   "what",
    "when",   "which",    "while",  "with",   "without", "we",     "you",      "your",   "all",
    "any",    "each",     "than",   "too",    "very",    "will",   "would",    "should", "could",
    "const",  "int",      "void",   "float",  "double",  "return", "else",     "int64",  "int32",
    "uint8",  "size",     "static", "inline", "include", "define", "unsigned", "long",   "char",
    "struct", "restrict", "h",      "c",      "i",       "j",      "k",        "n",      "x",
    "y",      "t",
};

static int is_word_byte(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch >= 0x80;
}

static int is_stop(const char *w)
{
    for (size_t i = 0; i < sizeof(stop_words) / sizeof(stop_words[0]); i++)
        if (!strcmp(stop_words[i], w))
            return 1;
    return 0;
}

static int all_digits(const char *w)
{
    for (; *w; w++)
        if (*w < '0' || *w > '9')
            return 0;
    return 1;
}

int kevo_terms__scan(const char *text, kevo_terms__word_cb cb, void *arg)
{
    int error = 0;
    const unsigned char *p = (const unsigned char *)text;
    char word[KEVO_TERMS_WORD_MAX + 1];
    while (p && *p && error == 0) {
        while (*p && !is_word_byte(*p))
            p++;
        size_t len = 0;
        int too_long = 0;
        while (*p && is_word_byte(*p)) {
            if (len < KEVO_TERMS_WORD_MAX) {
                unsigned char ch = *p;
                word[len++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
            } else {
                too_long = 1;
            }
            p++;
        }
        word[len] = '\0';
        if (len > 0 && !too_long)
            error = cb(arg, word, len);
    }
    return error < 0 ? error : 0;
}

typedef struct extract_acc {
    kevo_terms *out;
    size_t max_terms;
} extract_acc;

static int extract_word_cb(void *arg, const char *word, size_t len)
{
    extract_acc *acc = arg;
    kevo_terms *out = acc->out;
    if (len < 2 || all_digits(word) || is_stop(word))
        return 0;
    for (size_t i = 0; i < out->n; i++)
        if (!strcmp(out->v[i], word))
            return 0;
    if (!(out->v[out->n] = strdup(word)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory extracting search words");
    out->n++;
    return out->n < acc->max_terms ? 0 : 1;
}

int kevo_terms_extract(kevo_terms *out, const char *text, size_t max_terms)
{
    int error = 0;
    out->v = NULL;
    out->n = 0;
    if (!text || !max_terms)
        goto done;
    if (!(out->v = calloc(max_terms, sizeof(char *)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory extracting search words");
        goto done;
    }
    extract_acc acc = {out, max_terms};
    error = kevo_terms__scan(text, extract_word_cb, &acc);
done:
    if (error < 0)
        kevo_terms_free(out);
    return error;
}

void kevo_terms_free(kevo_terms *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    t->v = NULL;
    t->n = 0;
}
