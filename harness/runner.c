/*
 * harness/runner.c - the runner compiled and linked around exactly one
 * kernel (the reference OR a candidate: never both in one process). It
 * receives inputs from kevo over a pipe, calls the kernel through
 * kevo_harness_call() (generated per task), times each call, and sends the
 * outputs back; kevo compares them in its own process, so a candidate never
 * sees the reference's outputs.
 *
 * Before talking to kevo it forbids itself exec and opening files (seccomp),
 * on top of the sandbox's own policy. A device harness (runner_opencl.c,
 * runner_cuda.cu) may define the weak hooks below: its setup (driver,
 * context, program) runs before that lock-down, which then covers every
 * thread the driver started. Buffers sit right before a
 * PROT_NONE guard page, with a canary in the slack, so writes past the end
 * of an output are caught; inputs are read-only while the kernel runs.
 */
#include "protocol.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void kevo_harness_call(void *const *buffers, const double *scalars);

/* Optional hooks of a device harness; weak, so the C runner, which defines
 * none of them, behaves as if they did not exist.
 *   kevo_harness_setup     once, before the lock-down (open a device, load
 *                          a program); it reports its own failures
 *   kevo_harness_sizes     before each call: the byte size of every buffer
 *                          param (0 for scalars), since buffers alone do not
 *                          say how large they are
 *   kevo_harness_timed_ns  after each call: the nanoseconds of the part the
 *                          harness timed itself (launches to completion, no
 *                          transfers), or -1 to keep the whole call's time;
 *                          *bad = a param whose device copy was written past
 *                          its end, UINT32_MAX when none */
void kevo_harness_setup(void) __attribute__((weak));
void kevo_harness_sizes(const uint64_t *bytes) __attribute__((weak));
int64_t kevo_harness_timed_ns(uint32_t *bad) __attribute__((weak));

#define CANARY 0xC5

typedef struct {
    unsigned char *map;
    size_t map_len;
    unsigned char *ptr; /* 64-byte aligned, ends at most 63 bytes before the back guard */
    size_t len;
    size_t slack;       /* canary bytes after the buffer */
    size_t front;       /* canary bytes before it (after the front guard page) */
} guarded;

static uint32_t nparams;
static uint8_t roles[KEVO_RUNNER_MAX_PARAMS], types[KEVO_RUNNER_MAX_PARAMS];
static struct {
    int loaded;
    void *data[KEVO_RUNNER_MAX_PARAMS];
    uint64_t bytes[KEVO_RUNNER_MAX_PARAMS];
    double scalar[KEVO_RUNNER_MAX_PARAMS];
} sets[KEVO_RUNNER_MAX_SETS];
static guarded work[KEVO_RUNNER_MAX_PARAMS];
static unsigned char *shadow[KEVO_RUNNER_MAX_PARAMS];

/* The runner's data path uses its own loops, never libc's memcpy/memset:
 * a candidate that rewrites the runner's GOT entries cannot move its work
 * into the harness's untimed copies. */
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static void
copy_bytes(unsigned char *dst, const unsigned char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) static void
fill_bytes(unsigned char *dst, const unsigned char *pattern, size_t plen, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = pattern[i % plen];
}

static void die(int code)
{
    _exit(code);
}

static void read_all(void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(KEVO_RUNNER_CMD_FD, c, n);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            die(r == 0 ? 0 : 10);
        }
        c += r;
        n -= (size_t)r;
    }
}

static void write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(KEVO_RUNNER_REPLY_FD, c, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            die(11);
        }
        c += w;
        n -= (size_t)w;
    }
}

/* all_threads: a device harness's setup may have started threads (driver
 * workers); SECCOMP_FILTER_FLAG_TSYNC puts them under the filter too. */
static void forbid_exec_and_open(int all_threads)
{
#if defined(__x86_64__)
#define KEVO_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KEVO_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef KEVO_AUDIT_ARCH
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KEVO_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 ABI */
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#ifdef __NR_open
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
#endif
#ifdef __NR_creat
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (all_threads) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
            die(12);
    } else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        die(12);
    }
#else
    (void)all_threads;
#endif
}

static size_t elem_size(uint8_t t)
{
    return t == KEVO_RT_F64 || t == KEVO_RT_I64 ? 8 : t == KEVO_RT_U8 ? 1 : 4;
}

/* Layout: [guard page][front canary][buffer][back canary][guard page]. */
static void work_ensure(uint32_t p, size_t len)
{
    guarded *g = &work[p];
    if (g->map && g->len == len)
        return;
    if (g->map)
        munmap(g->map, g->map_len);
    free(shadow[p]);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t body = (len + 63) & ~(size_t)63;
    if (body == 0)
        body = 64;
    size_t body_pages = (body + 64 + page - 1) / page * page; /* >= 64 bytes of front canary */
    g->map_len = page + body_pages + page;
    g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED)
        die(13);
    mprotect(g->map, page, PROT_NONE);
    unsigned char *back = g->map + page + body_pages;
    mprotect(back, page, PROT_NONE);
    g->ptr = back - body;
    g->len = len;
    g->slack = body - len;
    g->front = (size_t)(g->ptr - (g->map + page));
    shadow[p] = malloc(len ? len : 1);
    if (!shadow[p])
        die(13);
}

static void set_protection(uint32_t p, int prot)
{
    guarded *g = &work[p];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    mprotect(g->map + page, g->map_len - 2 * page, prot);
}

/* Fill the working buffers from set s. rot != 0 rotates every input by a
 * different number of elements (same values, new positions), so no two
 * timed calls see the same inputs and results cached across calls never
 * pay; outputs of rotated calls are not compared. */
static void prepare(uint32_t s, uint64_t rot)
{
    for (uint32_t p = 0; p < nparams; p++) {
        if (roles[p] == KEVO_RROLE_SCALAR)
            continue;
        size_t len = sets[s].bytes[p];
        work_ensure(p, len);
        guarded *g = &work[p];
        set_protection(p, PROT_READ | PROT_WRITE);
        if (roles[p] == KEVO_RROLE_OUT) {
            static const unsigned char nan32[4] = {0x00, 0x00, 0xc0, 0x7f};
            static const unsigned char nan64[8] = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
            static const unsigned char poison[1] = {0x5A};
            if (types[p] == KEVO_RT_F32)
                fill_bytes(g->ptr, nan32, 4, len);
            else if (types[p] == KEVO_RT_F64)
                fill_bytes(g->ptr, nan64, 8, len);
            else
                fill_bytes(g->ptr, poison, 1, len);
        } else {
            size_t es = elem_size(types[p]), n = len / es;
            size_t k = n ? (size_t)((rot * (p + 1)) % n) : 0;
            copy_bytes(g->ptr, (unsigned char *)sets[s].data[p] + k * es, (n - k) * es);
            copy_bytes(g->ptr + (n - k) * es, sets[s].data[p], k * es);
        }
        static const unsigned char canary[1] = {CANARY};
        fill_bytes(g->map + sysconf(_SC_PAGESIZE), canary, 1, g->front);
        fill_bytes(g->ptr + len, canary, 1, g->slack);
        if (roles[p] == KEVO_RROLE_IN)
            set_protection(p, PROT_READ);
    }
}

static int64_t call(uint32_t s, uint32_t *bad, int snapshot)
{
    void *buffers[KEVO_RUNNER_MAX_PARAMS];
    for (uint32_t p = 0; p < nparams; p++)
        buffers[p] = roles[p] == KEVO_RROLE_SCALAR ? NULL : work[p].ptr;
    if (kevo_harness_sizes)
        kevo_harness_sizes(sets[s].bytes);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    kevo_harness_call(buffers, sets[s].scalar);
    clock_gettime(CLOCK_MONOTONIC, &b);
    int64_t ns = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    uint32_t device_bad = UINT32_MAX;
    if (kevo_harness_timed_ns) {
        int64_t t = kevo_harness_timed_ns(&device_bad);
        if (t >= 0)
            ns = t;
    }
    /* Snapshot at once: a thread still writing after return loses the race. */
    for (uint32_t p = 0; snapshot && p < nparams; p++)
        if (roles[p] == KEVO_RROLE_OUT || roles[p] == KEVO_RROLE_INOUT)
            copy_bytes(shadow[p], work[p].ptr, sets[s].bytes[p]);
    *bad = device_bad < nparams ? device_bad : UINT32_MAX;
    for (uint32_t p = 0; p < nparams && *bad == UINT32_MAX; p++) {
        if (roles[p] == KEVO_RROLE_SCALAR)
            continue;
        for (size_t i = 0; i < work[p].slack; i++)
            if (work[p].ptr[work[p].len + i] != CANARY) {
                *bad = p;
                break;
            }
        for (size_t i = 0; i < work[p].front && *bad == UINT32_MAX; i++)
            if (work[p].ptr[-(ptrdiff_t)i - 1] != CANARY)
                *bad = p;
    }
    return ns;
}

int main(void)
{
    if (kevo_harness_setup) {
        kevo_harness_setup();
        forbid_exec_and_open(1);
    } else {
        forbid_exec_and_open(0);
    }
    write_all(KEVO_RUNNER_HELLO, 8);
    read_all(&nparams, 4);
    if (nparams == 0 || nparams > KEVO_RUNNER_MAX_PARAMS)
        die(14);
    read_all(roles, nparams);
    read_all(types, nparams);
    for (;;) {
        char cmd;
        uint32_t s;
        read_all(&cmd, 1);
        if (cmd == 'Q')
            return 0;
        if (cmd == 'N') { /* no-op: kevo measures the pipe's round trip */
            write_all("n", 1);
            continue;
        }
        read_all(&s, 4);
        if (s >= KEVO_RUNNER_MAX_SETS)
            die(15);
        if (cmd == 'D') {
            for (uint32_t p = 0; p < nparams; p++) {
                if (roles[p] == KEVO_RROLE_SCALAR) {
                    read_all(&sets[s].scalar[p], 8);
                    continue;
                }
                uint64_t n;
                read_all(&n, 8);
                if (n % elem_size(types[p]))
                    die(16);
                free(sets[s].data[p]);
                sets[s].data[p] = NULL;
                sets[s].bytes[p] = n;
                if (roles[p] != KEVO_RROLE_OUT) {
                    sets[s].data[p] = malloc(n ? n : 1);
                    if (!sets[s].data[p])
                        die(13);
                    read_all(sets[s].data[p], n);
                }
            }
            sets[s].loaded = 1;
            continue;
        }
        if ((cmd != 'C' && cmd != 'P' && cmd != 'X') || !sets[s].loaded)
            die(17);
        if (cmd == 'P') {
            uint64_t rot;
            read_all(&rot, 8);
            prepare(s, rot);
            write_all("p", 1);
            continue;
        }
        if (cmd == 'C')
            prepare(s, 0);
        uint32_t bad;
        int64_t ns = call(s, &bad, cmd == 'C');
        uint8_t status = bad == UINT32_MAX ? KEVO_RUNNER_OK : KEVO_RUNNER_OVERRUN;
        write_all(&status, 1);
        write_all(&bad, 4);
        write_all(&ns, 8);
        if (cmd == 'C')
            for (uint32_t p = 0; p < nparams; p++)
                if (roles[p] == KEVO_RROLE_OUT || roles[p] == KEVO_RROLE_INOUT)
                    write_all(shadow[p], sets[s].bytes[p]);
    }
}
