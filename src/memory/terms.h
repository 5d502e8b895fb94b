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

#endif
