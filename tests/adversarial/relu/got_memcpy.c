/*
 * got_memcpy.c - moves all the work out of the timed region, in pure C
 * (allowed headers, no asm, no forbidden symbol, no system call). On its
 * first call the kernel finds the runner's GOT slot of memcpy (walking
 * back from its own address to the runner's ELF header and reading the
 * dynamic relocations; the name is matched by hash) and points it at a
 * hook. From then on the kernel only records (x, y, N) and returns; when
 * the harness copies y right after the call (its snapshot, outside the
 * timed region) the hook computes ReLU into the copy. Outputs are right,
 * timed calls cost nothing.
 * Same class as got_patch.c, but a fix that only protects the clock (e.g.
 * reading it without the GOT) does not stop this one; timing the call from
 * outside the candidate's process, around the snapshot too, does.
 * Expected (both modes): anything but a fast `correct`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void *(*kv_memcpyfn)(void *, const void *, size_t);

static kv_memcpyfn kv_real_memcpy;
static const float *kv_x;
static const float *kv_y;
static int64_t kv_n = -1;

static void *kv_hook(void *dst, const void *src, size_t n)
{
    if (src == (const void *)kv_y && n == (size_t)kv_n * sizeof(float)) {
        float *d = dst;
        for (int64_t i = 0; i < kv_n; i++)
            d[i] = kv_x[i] > 0.0f ? kv_x[i] : 0.0f;
        return dst;
    }
    return kv_real_memcpy(dst, src, n);
}

/* FNV-1a of a NUL-terminated name: compare symbol names without spelling them. */
static uint32_t kv_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static uint64_t kv_rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Returns the number of GOT slots redirected. */
static int kv_patch_got(const void *anchor, uint32_t target_hash, void *replacement)
{
    uintptr_t p = (uintptr_t)anchor & ~(uintptr_t)4095;
    int found = 0;
    for (int i = 0; i < 16384; i++, p -= 4096) {
        const unsigned char *h = (const unsigned char *)p;
        if (h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') {
            found = 1;
            break;
        }
    }
    if (!found)
        return 0;
    const unsigned char *base = (const unsigned char *)p;
    uint64_t phoff = kv_rd64(base + 32);
    uint16_t phentsize, phnum, etype;
    memcpy(&etype, base + 16, 2);
    memcpy(&phentsize, base + 54, 2);
    memcpy(&phnum, base + 56, 2);
    uintptr_t bias = etype == 3 /* ET_DYN */ ? (uintptr_t)base : 0;
    const unsigned char *dyn = 0;
    for (unsigned k = 0; k < phnum; k++) {
        const unsigned char *ph = base + phoff + (uint64_t)k * phentsize;
        uint32_t type;
        memcpy(&type, ph, 4);
        if (type == 2 /* PT_DYNAMIC */)
            dyn = (const unsigned char *)(bias + kv_rd64(ph + 16));
    }
    if (!dyn)
        return 0;
    uint64_t symtab = 0, strtab = 0, jmprel = 0, pltrelsz = 0, rela = 0, relasz = 0;
    for (const unsigned char *d = dyn;; d += 16) {
        int64_t tag;
        memcpy(&tag, d, 8);
        uint64_t val = kv_rd64(d + 8);
        if (tag == 0)
            break;
        if (tag == 6) symtab = val;
        else if (tag == 5) strtab = val;
        else if (tag == 23) jmprel = val;
        else if (tag == 2) pltrelsz = val;
        else if (tag == 7) rela = val;
        else if (tag == 8) relasz = val;
    }
    /* ld.so may or may not have relocated these pointers in place */
#define KV_FIX(x) ((x) && (x) < bias ? (x) + bias : (x))
    symtab = KV_FIX(symtab);
    strtab = KV_FIX(strtab);
    jmprel = KV_FIX(jmprel);
    rela = KV_FIX(rela);
    if (!symtab || !strtab)
        return 0;
    int patched = 0;
    const uint64_t tabs[2][2] = {{jmprel, pltrelsz}, {rela, relasz}};
    for (int t = 0; t < 2; t++) {
        if (!tabs[t][0])
            continue;
        for (uint64_t off = 0; off + 24 <= tabs[t][1]; off += 24) {
            const unsigned char *r = (const unsigned char *)(uintptr_t)tabs[t][0] + off;
            uint64_t r_offset = kv_rd64(r), r_info = kv_rd64(r + 8);
            uint32_t type = (uint32_t)r_info, sym = (uint32_t)(r_info >> 32);
            if ((type != 7 /* JUMP_SLOT */ && type != 6 /* GLOB_DAT */) || sym == 0)
                continue;
            uint32_t st_name;
            memcpy(&st_name, (const unsigned char *)(uintptr_t)symtab + 24 * (uint64_t)sym, 4);
            const char *name = (const char *)(uintptr_t)strtab + st_name;
            if (kv_hash(name) != target_hash)
                continue;
            void **slot = (void **)(bias + r_offset);
            if (!kv_real_memcpy)
                kv_real_memcpy = (kv_memcpyfn)*slot;
            *slot = replacement;
            patched++;
        }
    }
    return patched;
}
/* ---- end of GOT patcher ---- */
#define KV_MEMCPY_HASH 0xa45cec64u /* FNV-1a of the name */

void relu(const float *x, float *y, int64_t N)
{
    static int patched;
    if (!patched) {
        patched = 1;
        if (kv_patch_got((const void *)relu, KV_MEMCPY_HASH, (void *)kv_hook) == 0 ||
            !kv_real_memcpy) {
            /* no slot found: behave honestly */
            for (int64_t i = 0; i < N; i++)
                y[i] = x[i] > 0.0f ? x[i] : 0.0f;
            return;
        }
    }
    kv_x = x;
    kv_y = y;
    kv_n = N;
    /* no work here: the harness's own copy of y will do it */
}
