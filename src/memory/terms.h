/*
 * memory/terms.h - turn free text (a task description, reference source,
 * feedback) into search words the way the SQLite FTS5 unicode61 tokenizer
 * sees them: runs of letters and digits, lower-cased, `_` and punctuation
 * separating. Drops stop words, bare numbers and one-letter words. Internal
 * to src/memory.
 */
#ifndef KEVO_MEMORY_TERMS_H
#define KEVO_MEMORY_TERMS_H

#include <stddef.h>

typedef struct kevo_terms {
    char **v; /* each malloc'd, distinct, in order of first appearance */
    size_t n;
} kevo_terms;

/* At most max_terms words. *out is the caller's (kevo_terms_free). */
int kevo_terms_extract(kevo_terms *out, const char *text, size_t max_terms);
void kevo_terms_free(kevo_terms *t);

/* Longest word kept, in bytes; longer words are skipped, never cut. */
#define KEVO_TERMS_WORD_MAX 47

/* Every word of `text` (NULL: none) as the tokenizer above splits it,
 * lower-cased and NUL-terminated, in order, repeats included, before the
 * stop list and the other drops of kevo_terms_extract: what FTS5 indexes,
 * as far as ASCII goes. `word` is borrowed for the call. `cb` returns 0 to
 * go on, > 0 to stop (then 0 is returned) or < 0 to fail with that code. */
typedef int (*kevo_terms__word_cb)(void *arg, const char *word, size_t len);
int kevo_terms__scan(const char *text, kevo_terms__word_cb cb, void *arg);

#endif
