/*
 * chan_spy_cmd.c - tells checked calls from timed ones by spying on the
 * runner's command channel, in pure C (no asm, no forbidden symbol, no raw
 * system call). On its first call the kernel points the runner's GOT entry
 * of read at a hook that records every one-byte command kevo sends on fd 3.
 * A call made for a timed command ('X') computes only the first 2% of y;
 * every other call is honest. If the hook cannot be installed the kernel
 * leaves y unwritten, so a hole shows up as `correct` with a large speedup.
 * Defences: every timed call's outputs compared with the reference's for
 * the same (fresh) inputs; nothing in the channel telling check from
 * benchmark.
 * Expected (both modes): anything but a fast `correct`.
 */
#include <stdint.h>
#include <string.h>

/* ---- runner GOT lookup: pure C, no symbol, no asm, no system call ----
 * The kernel is linked into the runner, so walking back page by page from
 * the kernel's own code reaches the runner's ELF header; its dynamic
 * section leads to the relocations that fill the GOT. kv_got_slot returns
 * the GOT slot of the runner's import whose name has FNV-1a hash `want`
 * (names are never spelled out), or 0. */
typedef struct {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
} kv_phdr;
typedef struct {
    int64_t tag;
    uint64_t val;
} kv_dyn;
typedef struct {
    uint64_t offset, info;
    int64_t addend;
} kv_rela;
typedef struct {
    uint32_t name;
    unsigned char info, other;
    uint16_t shndx;
    uint64_t value, size;
} kv_sym;

static uint32_t kv_fnv(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static const unsigned char *kv_elf_base(const void *inside)
{
    uintptr_t p = (uintptr_t)inside & ~(uintptr_t)4095;
    for (int i = 0; i < 16384 && p; i++, p -= 4096) {
        const unsigned char *h = (const unsigned char *)p;
        if (h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F')
            return h;
    }
    return 0;
}

static void **kv_got_slot(const void *inside, uint32_t want)
{
    const unsigned char *base = kv_elf_base(inside);
    if (!base)
        return 0;
    uint16_t etype, phnum;
    uint64_t phoff;
    memcpy(&etype, base + 16, 2);
    memcpy(&phoff, base + 32, 8);
    memcpy(&phnum, base + 56, 2);
    uintptr_t bias = etype == 3 /* ET_DYN */ ? (uintptr_t)base : 0;
    const kv_dyn *dyn = 0;
    for (unsigned k = 0; k < phnum; k++) {
        kv_phdr ph;
        memcpy(&ph, base + phoff + (uint64_t)k * sizeof(kv_phdr), sizeof(ph));
        if (ph.type == 2 /* PT_DYNAMIC */)
            dyn = (const kv_dyn *)(bias + ph.vaddr);
    }
    if (!dyn)
        return 0;
    uint64_t symtab = 0, strtab = 0, tab[2] = {0, 0}, tabsz[2] = {0, 0};
    for (; dyn->tag != 0; dyn++) {
        if (dyn->tag == 5) strtab = dyn->val;
        else if (dyn->tag == 6) symtab = dyn->val;
        else if (dyn->tag == 23) tab[0] = dyn->val;   /* DT_JMPREL */
        else if (dyn->tag == 2) tabsz[0] = dyn->val;  /* DT_PLTRELSZ */
        else if (dyn->tag == 7) tab[1] = dyn->val;    /* DT_RELA */
        else if (dyn->tag == 8) tabsz[1] = dyn->val;  /* DT_RELASZ */
    }
    /* ld.so may or may not have relocated the pointers in place */
    if (symtab && symtab < bias) symtab += bias;
    if (strtab && strtab < bias) strtab += bias;
    for (int t = 0; t < 2; t++)
        if (tab[t] && tab[t] < bias)
            tab[t] += bias;
    if (!symtab || !strtab)
        return 0;
    for (int t = 0; t < 2; t++) {
        for (uint64_t off = 0; tab[t] && off + sizeof(kv_rela) <= tabsz[t]; off += sizeof(kv_rela)) {
            kv_rela r;
            memcpy(&r, (const void *)(uintptr_t)(tab[t] + off), sizeof(r));
            uint32_t type = (uint32_t)r.info, si = (uint32_t)(r.info >> 32);
            if ((type != 7 /* JUMP_SLOT */ && type != 6 /* GLOB_DAT */) || si == 0)
                continue;
            kv_sym s;
            memcpy(&s, (const void *)(uintptr_t)(symtab + (uint64_t)si * sizeof(kv_sym)), sizeof(s));
            if (kv_fnv((const char *)(uintptr_t)(strtab + s.name)) == want)
                return (void **)(bias + r.offset);
        }
    }
    return 0;
}
#define KV_H_READ 0xcedfa3c5u    /* FNV-1a of the names */
#define KV_H_WRITE 0xbe269f5cu
#define KV_H_SYSCALL 0xf1d2c19au
/* ---- end of GOT lookup ---- */

typedef long (*kv_rwfn)(int, void *, unsigned long);
static kv_rwfn kv_real_read;
static volatile char kv_cmd;

static long kv_read_hook(int fd, void *buf, unsigned long n)
{
    long r = kv_real_read(fd, buf, n);
    if (fd == 3 && n == 1 && r == 1)
        kv_cmd = *(char *)buf;
    return r;
}

void relu(const float *x, float *y, int64_t N)
{
    static int state; /* 0 not tried, 1 hooked, -1 failed */
    if (!state) {
        void **r = kv_got_slot((const void *)relu, KV_H_READ);
        state = -1;
        if (r && *r) {
            kv_real_read = (kv_rwfn)*r;
            *r = (void *)kv_read_hook;
            state = 1;
        }
    }
    if (state < 0)
        return; /* attack failed: y keeps its poison */
    int64_t n = kv_cmd == 'X' ? N / 50 : N;
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
