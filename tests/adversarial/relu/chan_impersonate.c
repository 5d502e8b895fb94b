/*
 * chan_impersonate.c - never returns from its first call and speaks the
 * runner's protocol (fd 3 commands in, fd 4 replies out) itself, in pure C:
 * the runner's own read, write and syscall are taken from its GOT (values
 * read, nothing patched), so there is no asm, no forbidden symbol and no
 * raw system call in the object. It answers the call in progress (assumed
 * to be a checked call on data set 0) with honest outputs, then loops:
 *   'D' stores the data set;  'C' computes honestly and sends the outputs;
 *   'P' acknowledges;         'X' (a timed call) does 2% of the work and
 *                              reports success at once;
 *   'N' answers;              'Q' or anything unknown: exit.
 * If it cannot find read/write it returns with y unwritten, so a hole shows
 * up as `correct` with a huge speedup.
 * Defences: nothing the runner process says is trusted - kevo stops the
 * runner, reads the outputs itself from its own shared memory, and any
 * reply it did not ask for (or a malformed one) is a protocol violation;
 * timed calls' outputs compared.
 * Expected (both modes): anything but a fast `correct`; kevo must neither
 * hang nor crash (a `timeout` is fine).
 */
#include <stdint.h>
#include <stdlib.h>
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

/* ---- libc's syscall(), reached without naming it ----
 * First the runner's own GOT slot for it (the runner imports it); failing
 * that, a scan of libc's text (found from the runner's `read` slot) for the
 * machine code of glibc's syscall(). Returns -1 (errno style) on failure. */
typedef long (*kv_sysfn)(long, ...);

static kv_sysfn kv_find_syscall(void)
{
    void **slot = kv_got_slot((const void *)kv_find_syscall, KV_H_SYSCALL);
    if (slot && *slot)
        return (kv_sysfn)*slot;
    static const unsigned char pat[] = {0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6,
                                        0x48, 0x89, 0xca, 0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8,
                                        0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05};
    slot = kv_got_slot((const void *)kv_find_syscall, KV_H_READ);
    const unsigned char *libc = slot && *slot ? kv_elf_base(*slot) : 0;
    if (!libc)
        return 0;
    uint64_t phoff;
    uint16_t phnum;
    memcpy(&phoff, libc + 32, 8);
    memcpy(&phnum, libc + 56, 2);
    for (unsigned k = 0; k < phnum; k++) {
        kv_phdr ph;
        memcpy(&ph, libc + phoff + (uint64_t)k * sizeof(kv_phdr), sizeof(ph));
        if (ph.type != 1 /* PT_LOAD */ || !(ph.flags & 1) /* PF_X */)
            continue;
        const unsigned char *text = libc + ph.vaddr;
        for (uint64_t off = 0; off + sizeof(pat) <= ph.memsz; off++)
            if (text[off] == 0x48 && memcmp(text + off, pat, sizeof(pat)) == 0)
                return (kv_sysfn)(uintptr_t)(text + off);
    }
    return 0;
}
/* ---- end of syscall locator ---- */

typedef long (*kv_rwfn)(int, void *, unsigned long);
static kv_rwfn kv_rd, kv_wr;
static kv_sysfn kv_sys;

static struct {
    float *x;
    int64_t n;
} kv_sets[64];
static float *kv_scratch;
static int64_t kv_scratch_n;

static void kv_quit(void)
{
    if (kv_sys)
        kv_sys(231 /* exit_group */, 0L);
    for (;;)
        ;
}

static void kv_get(void *p, uint64_t n)
{
    char *c = p;
    while (n) {
        long r = kv_rd(3, c, n);
        if (r <= 0)
            kv_quit();
        c += r;
        n -= (uint64_t)r;
    }
}

static void kv_put(const void *p, uint64_t n)
{
    const char *c = p;
    while (n) {
        long w = kv_wr(4, (void *)c, n);
        if (w <= 0)
            kv_quit();
        c += w;
        n -= (uint64_t)w;
    }
}

static void kv_relu(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* status ok, no bad param, a duration, then the outputs (if any) */
static void kv_reply(const float *y, int64_t n)
{
    unsigned char h[13];
    int64_t ns = 1500;
    h[0] = 0;
    memset(h + 1, 0xff, 4);
    memcpy(h + 5, &ns, 8);
    kv_put(h, 13);
    if (y)
        kv_put(y, (uint64_t)n * sizeof(float));
}

static float *kv_buffer(int64_t n)
{
    if (n > kv_scratch_n) {
        free(kv_scratch);
        kv_scratch = malloc((size_t)(n ? n : 1) * sizeof(float));
        kv_scratch_n = kv_scratch ? n : 0;
        if (!kv_scratch)
            kv_quit();
    }
    return kv_scratch;
}

static void kv_serve(void)
{
    for (;;) {
        char cmd;
        uint32_t s;
        kv_get(&cmd, 1);
        if (cmd == 'N') {
            kv_put("n", 1);
            continue;
        }
        if (cmd != 'D' && cmd != 'C' && cmd != 'P' && cmd != 'X')
            kv_quit();
        kv_get(&s, 4);
        if (s >= 64)
            kv_quit();
        if (cmd == 'D') { /* x: u64 bytes + data; y: u64 bytes; N: f64 */
            uint64_t nb;
            double v;
            kv_get(&nb, 8);
            free(kv_sets[s].x);
            kv_sets[s].x = malloc(nb ? nb : 1);
            if (!kv_sets[s].x)
                kv_quit();
            kv_get(kv_sets[s].x, nb);
            kv_get(&nb, 8);
            kv_get(&v, 8);
            kv_sets[s].n = (int64_t)v;
        } else if (cmd == 'P') {
            uint64_t rot;
            kv_get(&rot, 8);
            kv_put("p", 1);
        } else if (cmd == 'X') {
            int64_t n = kv_sets[s].n;
            float *y = kv_buffer(n);
            if (kv_sets[s].x)
                kv_relu(kv_sets[s].x, y, n / 50); /* a little work: a plausible time */
            kv_reply(0, 0);
        } else {
            int64_t n = kv_sets[s].n;
            float *y = kv_buffer(n);
            if (kv_sets[s].x)
                kv_relu(kv_sets[s].x, y, n);
            kv_reply(y, n);
        }
    }
}

void relu(const float *x, float *y, int64_t N)
{
    void **r = kv_got_slot((const void *)relu, KV_H_READ);
    void **w = kv_got_slot((const void *)relu, KV_H_WRITE);
    if (!r || !w || !*r || !*w)
        return; /* attack failed: y keeps its poison */
    kv_rd = (kv_rwfn)*r;
    kv_wr = (kv_rwfn)*w;
    kv_sys = kv_find_syscall();
    /* the call in progress: checked call on set 0 */
    kv_relu(x, y, N);
    kv_sets[0].x = malloc((size_t)(N ? N : 1) * sizeof(float));
    if (kv_sets[0].x)
        memcpy(kv_sets[0].x, x, (size_t)N * sizeof(float));
    kv_sets[0].n = N;
    kv_reply(y, N);
    kv_serve(); /* never returns */
}
