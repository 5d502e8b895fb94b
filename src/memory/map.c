/*
 * memory/map.c - int64 -> int64 open-addressing hash map with linear
 * probing. No deletion: maps are built, read, and thrown away.
 */
#include "map.h"

#include "kevo/common.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(int64_t key, size_t cap)
{
    uint64_t x = (uint64_t)key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static int grow(kevo_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    int64_t *keys = calloc(cap, sizeof(*keys));
    int64_t *vals = calloc(cap, sizeof(*vals));
    unsigned char *used = calloc(cap, 1);
    if (!keys || !vals || !used) {
        free(keys);
        free(vals);
        free(used);
        return kevo_error_set(KEVO_ENOMEM, "out of memory growing a hash map to %zu slots", cap);
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (used[j])
            j = (j + 1) & (cap - 1);
        used[j] = 1;
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = keys;
    m->vals = vals;
    m->used = used;
    m->cap = cap;
    return 0;
}

int kevo_map_put(kevo_map *m, int64_t key, int64_t val)
{
    int error;
    if ((m->n + 1) * 4 > m->cap * 3 && (error = grow(m)) < 0)
        return error;
    size_t j = slot_of(key, m->cap);
    while (m->used[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->keys[j] = key;
        m->n++;
    }
    m->vals[j] = val;
    return 0;
}

int kevo_map_get(const kevo_map *m, int64_t key, int64_t *out)
{
    if (!m->cap)
        return 0;
    size_t j = slot_of(key, m->cap);
    while (m->used[j]) {
        if (m->keys[j] == key) {
            if (out)
                *out = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void kevo_map_clear(kevo_map *m)
{
    if (m->cap)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

void kevo_map_free(kevo_map *m)
{
    if (!m)
        return;
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof(*m));
}
