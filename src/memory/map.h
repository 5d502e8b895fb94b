/*
 * memory/map.h - a small open-addressing hash map from int64 keys to int64
 * values (id remapping on import, document-frequency cache). Internal to
 * src/memory and src/context; knows nothing about the store.
 */
#ifndef KEVO_MEMORY_MAP_H
#define KEVO_MEMORY_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct kevo_map {
    int64_t *keys;
    int64_t *vals;
    unsigned char *used;
    size_t cap; /* power of two, or 0 */
    size_t n;
} kevo_map;

/* Zero-initialise, then put/get; kevo_map_free() releases. */
int kevo_map_put(kevo_map *m, int64_t key, int64_t val);
/* 1 and *out set when present, 0 when absent. out may be NULL. */
int kevo_map_get(const kevo_map *m, int64_t key, int64_t *out);
void kevo_map_clear(kevo_map *m);
void kevo_map_free(kevo_map *m);

#endif
