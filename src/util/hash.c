/*
 * util/hash.c - non-cryptographic hashes: FNV-1a for short keys, and a
 * word-wise hash that runs at memory speed for checking large buffers
 * (a cache file against its own checksum, inputs against the ones a
 * cached result was computed from). Neither is a defence against an
 * attacker; both only detect accidents.
 */
#include "kevo/util.h"

#include <string.h>

uint64_t kevo_hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Four independent multiply-rotate lanes over 8-byte words (so the loop is
 * not one long dependency chain), the tail bytes and the length folded in,
 * and a final avalanche. */
uint64_t kevo_hash64_words(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h[4] = {seed ^ 0x9e3779b97f4a7c15ULL, seed + 0x632be59bd9b4e019ULL,
                     seed ^ 0xd6e8feb86659fd93ULL, seed - 0x8cb92ba72f3d8dd7ULL};
    size_t i = 0;
    for (; i + 32 <= len; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            h[k] = (h[k] ^ w) * 0x9fb21c651e98df25ULL;
            h[k] ^= h[k] >> 29;
        }
    uint64_t tail = 0;
    for (size_t k = 0; i < len; i++, k++)
        tail ^= (uint64_t)p[i] << (8 * (k % 8));
    return mix(mix(h[0]) ^ mix(h[1] + 1) ^ mix(h[2] + 2) ^ mix(h[3] + 3) ^ mix(tail ^ len));
}
