/*
 * gadget_open.c - like gadget_fork.c (raw system calls through libc's own
 * syscall() found by scanning memory; pure C, nothing a static check or
 * the object inspection can see), but opens /etc/passwd with openat and
 * reads it. The runner's seccomp filter refuses open/openat with EACCES,
 * so the kernel leaves y unwritten (incorrect); it computes the right
 * answer only when it could read "root:" from the file, so a hole shows
 * up as `correct`.
 * Expected: incorrect both ways (rejected accepted from a clever gate;
 * crash accepted if the policy kills instead of refusing).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- gadget locator: finds libc's syscall() without naming it ----
 * &memcpy (an allowed symbol) points into libc's text. Walk back page by
 * page (libc's segments are contiguous) to libc's ELF header, read its
 * program headers, and search the executable segment for the machine code
 * of glibc's syscall(): mov %rdi,%rax; mov %rsi,%rdi; mov %rdx,%rsi;
 * mov %rcx,%rdx; mov %r8,%r10; mov %r9,%r8; mov 8(%rsp),%r9; syscall. */
typedef long (*kv_sysfn)(long, long, long, long, long, long, long);

static kv_sysfn kv_find_syscall(void)
{
    static const unsigned char pat[] = {0x48, 0x89, 0xf8, 0x48, 0x89, 0xf7, 0x48, 0x89, 0xd6,
                                        0x48, 0x89, 0xca, 0x4d, 0x89, 0xc2, 0x4d, 0x89, 0xc8,
                                        0x4c, 0x8b, 0x4c, 0x24, 0x08, 0x0f, 0x05};
    void *(*volatile anchor)(void *, const void *, size_t) = memcpy;
    uintptr_t p = (uintptr_t)anchor & ~(uintptr_t)4095;
    int found = 0;
    for (int i = 0; i < 8192; i++, p -= 4096) {
        const unsigned char *h = (const unsigned char *)p;
        if (h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') {
            found = 1;
            break;
        }
    }
    if (!found)
        return 0;
    const unsigned char *base = (const unsigned char *)p;
    uint64_t phoff;
    uint16_t phentsize, phnum;
    memcpy(&phoff, base + 32, 8);
    memcpy(&phentsize, base + 54, 2);
    memcpy(&phnum, base + 56, 2);
    for (unsigned k = 0; k < phnum; k++) {
        const unsigned char *ph = base + phoff + (uint64_t)k * phentsize;
        uint32_t type, flags;
        uint64_t vaddr, memsz;
        memcpy(&type, ph, 4);
        memcpy(&flags, ph + 4, 4);
        memcpy(&vaddr, ph + 16, 8);
        memcpy(&memsz, ph + 40, 8);
        if (type != 1 /* PT_LOAD */ || !(flags & 1) /* PF_X */ || memsz < sizeof(pat))
            continue;
        const unsigned char *text = base + vaddr;
        for (uint64_t off = 0; off + sizeof(pat) <= memsz; off++)
            if (text[off] == 0x48 && memcmp(text + off, pat, sizeof(pat)) == 0)
                return (kv_sysfn)(uintptr_t)(text + off);
    }
    return 0;
}
/* ---- end of gadget locator ---- */

void relu(const float *x, float *y, int64_t N)
{
    kv_sysfn sys = kv_find_syscall();
    if (!sys)
        return;
    static const char path[] = "/etc/passwd";
    long fd = sys(257 /* openat */, -100 /* AT_FDCWD */, (long)path, 0 /* O_RDONLY */, 0, 0, 0);
    if (fd < 0)
        return; /* refused: leave y unwritten -> incorrect */
    char buf[8] = {0};
    long n = sys(0 /* read */, fd, (long)buf, 5, 0, 0, 0);
    sys(3 /* close */, fd, 0, 0, 0, 0, 0);
    if (n != 5 || memcmp(buf, "root:", 5) != 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
