/*
 * harness/runner.c - the runner compiled and linked around exactly one
 * kernel (the reference OR a candidate: never both in one process). It maps
 * the buffers kevo shares with it (protocol.h), and on each 'X' calls the
 * kernel through kevo_harness_call() (generated per task) and says 'd'.
 * It holds no data of its own worth forging: kevo writes the inputs, poisons
 * the outputs, times the call from outside and reads the outputs while
 * this process is stopped. A candidate that rewrites this file's code
 * gains nothing but a wrong verdict.
 *
 * Before talking to kevo it locks itself down with seccomp. The C runner
 * (no device hooks) gets an allow-list of what a compute kernel needs:
 * memory, futexes, threads (OpenMP), clocks, its own channel, exit;
 * anything else kills the process. A device harness (runner_opencl.c,
 * runner_cuda.cu) may define the weak hooks below: its setup (driver,
 * context, program) runs before the lock-down, and since drivers make
 * calls no list here can foresee, it gets a deny-list instead (no exec, no
 * file opening, no path, signal, pidfd or process calls), put on every
 * thread the driver started.
 */
#define _GNU_SOURCE
#include "protocol.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void kevo_harness_call(void *const *buffers, const double *scalars);

/* Optional hooks of a device harness; weak, so the C runner, which defines
 * none of them, behaves as if they did not exist.
 *   kevo_harness_setup     once, before the lock-down (open a device, load
 *                          a program); it reports its own failures
 *   kevo_harness_sizes     before each call: the byte size of every buffer
 *                          param (0 for scalars)
 *   kevo_harness_timed_ns  after each call; *bad = a param whose device copy
 *                          was written past its end, UINT32_MAX when none
 *                          (the time it returns is not used: kevo times) */
void kevo_harness_setup(void) __attribute__((weak));
void kevo_harness_sizes(const uint64_t *bytes) __attribute__((weak));
int64_t kevo_harness_timed_ns(uint32_t *bad) __attribute__((weak));

static uint32_t nparams;
static uint8_t roles[KEVO_RUNNER_MAX_PARAMS], types[KEVO_RUNNER_MAX_PARAMS];
static uint64_t region_off[KEVO_RUNNER_MAX_PARAMS], region_len[KEVO_RUNNER_MAX_PARAMS];
static unsigned char *region[KEVO_RUNNER_MAX_PARAMS];
static const volatile kevo_runner_desc *desc;

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

#if defined(__x86_64__)
#define KEVO_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KEVO_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef KEVO_AUDIT_ARCH
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ALLOW_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ALLOW)
#define KILL_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_KILL_PROCESS)
/* nr: allowed when (u32)arg0 == k, else `other` */
#define ARG0_EQ(nr, k, other)                                                                \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LD_ARG0,                               \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 0, 1), RET(SECCOMP_RET_ALLOW), RET(other)
#ifndef __NR_rseq
#define __NR_rseq 334
#endif
#ifndef __NR_getrandom
#define __NR_getrandom 318
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#endif

static void install(struct sock_filter *f, size_t n, int all_threads)
{
    struct sock_fprog prog = {(unsigned short)n, f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (all_threads) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
            die(12);
    } else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
        die(12);
    }
}

/* The C runner: only what a compute kernel needs; everything else kills. */
static void lock_down_compute(void)
{
#ifdef KEVO_AUDIT_ARCH
    uint32_t self = (uint32_t)getpid();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KEVO_AUDIT_ARCH, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        LD_NR,
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 ABI */
        RET(SECCOMP_RET_KILL_PROCESS),
        ALLOW_NR(__NR_futex), ALLOW_NR(__NR_mmap), ALLOW_NR(__NR_munmap),
        ALLOW_NR(__NR_mprotect), ALLOW_NR(__NR_madvise), ALLOW_NR(__NR_brk),
        ALLOW_NR(__NR_mremap), ALLOW_NR(__NR_exit), ALLOW_NR(__NR_exit_group),
        ALLOW_NR(__NR_set_robust_list), ALLOW_NR(__NR_rseq), ALLOW_NR(__NR_rt_sigprocmask),
        ALLOW_NR(__NR_rt_sigaction), ALLOW_NR(__NR_rt_sigreturn), ALLOW_NR(__NR_sigaltstack),
        ALLOW_NR(__NR_sched_yield), ALLOW_NR(__NR_sched_getaffinity), ALLOW_NR(__NR_getpid),
        ALLOW_NR(__NR_gettid), ALLOW_NR(__NR_clock_gettime), ALLOW_NR(__NR_clock_getres),
        ALLOW_NR(__NR_gettimeofday), ALLOW_NR(__NR_clock_nanosleep),
        ALLOW_NR(__NR_nanosleep), ALLOW_NR(__NR_restart_syscall),
        ALLOW_NR(__NR_getrandom), /* malloc's first use seeds its tcache key */
        /* clone3's flags sit behind a pointer seccomp cannot read: ENOSYS
         * makes libc fall back to clone, whose flags it can */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1), RET(SECCOMP_RET_ERRNO | ENOSYS),
        /* clone: threads only (CLONE_THREAD set), never a new process */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4), LD_ARG0,
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1), RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        ARG0_EQ(__NR_read, KEVO_RUNNER_CMD_FD, SECCOMP_RET_KILL_PROCESS), LD_NR,
        /* write: the reply pipe and stderr (the log) */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 0, 5), LD_ARG0,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KEVO_RUNNER_REPLY_FD, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1), RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        /* signals: only to itself (abort(), thread cancellation) */
        ARG0_EQ(__NR_tgkill, self, SECCOMP_RET_KILL_PROCESS), LD_NR,
        /* affinity: its own threads only */
        ARG0_EQ(__NR_sched_setaffinity, 0, SECCOMP_RET_ERRNO | EPERM),
        RET(SECCOMP_RET_KILL_PROCESS),
    };
    install(f, sizeof(f) / sizeof(f[0]), 0);
#endif
}

/* A device harness: its driver's calls cannot be listed, so deny what a
 * kernel could use against the host; on every thread the driver started. */
static void lock_down_device(void)
{
#ifdef KEVO_AUDIT_ARCH
    uint32_t self = (uint32_t)getpid();
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KEVO_AUDIT_ARCH, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        LD_NR,
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 ABI */
        RET(SECCOMP_RET_KILL_PROCESS),
        KILL_NR(__NR_execve), KILL_NR(__NR_execveat), KILL_NR(__NR_mkdirat),
        KILL_NR(__NR_mknodat), KILL_NR(__NR_symlinkat), KILL_NR(__NR_linkat),
        KILL_NR(__NR_renameat), KILL_NR(__NR_renameat2), KILL_NR(__NR_unlinkat),
        KILL_NR(__NR_fchmodat), KILL_NR(__NR_fchownat), KILL_NR(__NR_truncate),
        KILL_NR(__NR_pidfd_open), KILL_NR(__NR_pidfd_getfd), KILL_NR(__NR_pidfd_send_signal),
        KILL_NR(__NR_tkill), KILL_NR(__NR_kill), KILL_NR(__NR_rt_sigqueueinfo),
        KILL_NR(__NR_rt_tgsigqueueinfo), KILL_NR(__NR_ptrace), KILL_NR(__NR_process_vm_readv),
        KILL_NR(__NR_process_vm_writev), KILL_NR(__NR_socket), KILL_NR(__NR_connect),
        KILL_NR(__NR_ftruncate), KILL_NR(__NR_fallocate), KILL_NR(__NR_chdir),
#ifdef __NR_mkdir
        KILL_NR(__NR_mkdir), KILL_NR(__NR_mknod), KILL_NR(__NR_symlink), KILL_NR(__NR_link),
        KILL_NR(__NR_rename), KILL_NR(__NR_unlink), KILL_NR(__NR_rmdir), KILL_NR(__NR_chmod),
        KILL_NR(__NR_chown), KILL_NR(__NR_lchown), KILL_NR(__NR_fork), KILL_NR(__NR_vfork),
#endif
#ifdef __NR_open
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 1), RET(SECCOMP_RET_ERRNO | EACCES),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, 0, 1), RET(SECCOMP_RET_ERRNO | EACCES),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 1), RET(SECCOMP_RET_ERRNO | EACCES),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1), RET(SECCOMP_RET_ERRNO | EACCES),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1), RET(SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4), LD_ARG0,
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1), RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        ARG0_EQ(__NR_tgkill, self, SECCOMP_RET_KILL_PROCESS),
        RET(SECCOMP_RET_ALLOW),
    };
    install(f, sizeof(f) / sizeof(f[0]), 1);
#endif
}

/* Reads the layout and maps every region between guard pages. */
static void map_regions(void)
{
    read_all(&nparams, 4);
    if (nparams == 0 || nparams > KEVO_RUNNER_MAX_PARAMS)
        die(14);
    read_all(roles, nparams);
    read_all(types, nparams);
    read_all(region_off, 8 * nparams);
    read_all(region_len, 8 * nparams);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), total = page;
    for (uint32_t p = 0; p < nparams; p++) {
        if (roles[p] > KEVO_RROLE_SCALAR || types[p] > KEVO_RT_U8)
            die(14);
        if (roles[p] == KEVO_RROLE_SCALAR)
            continue;
        if (region_len[p] == 0 || region_len[p] % page || region_off[p] % page ||
            region_len[p] > (1ULL << 40))
            die(14);
        total += region_len[p] + page;
    }
    unsigned char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        die(13);
    unsigned char *cur = base + page;
    for (uint32_t p = 0; p < nparams; p++) {
        if (roles[p] == KEVO_RROLE_SCALAR)
            continue;
        int in = roles[p] == KEVO_RROLE_IN;
        void *m = mmap(cur, region_len[p], in ? PROT_READ : PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_FIXED, in ? KEVO_RUNNER_IN_FD : KEVO_RUNNER_OUT_FD,
                       (off_t)region_off[p]);
        if (m == MAP_FAILED)
            die(13);
        region[p] = cur;
        cur += region_len[p] + page;
    }
    desc = mmap(NULL, page, PROT_READ, MAP_SHARED, KEVO_RUNNER_IN_FD, 0);
    if (desc == MAP_FAILED)
        die(13);
}

static void call(void)
{
    void *buffers[KEVO_RUNNER_MAX_PARAMS];
    double scalars[KEVO_RUNNER_MAX_PARAMS];
    uint64_t bytes[KEVO_RUNNER_MAX_PARAMS];
    if (desc->magic != KEVO_RUNNER_DESC_MAGIC)
        die(15);
    for (uint32_t p = 0; p < nparams; p++) {
        scalars[p] = desc->scalar[p];
        bytes[p] = desc->bytes[p];
        buffers[p] = NULL;
        if (roles[p] == KEVO_RROLE_SCALAR)
            continue;
        uint64_t off = desc->data_off[p];
        if (off > region_len[p] || bytes[p] > region_len[p] - off)
            die(15);
        buffers[p] = region[p] + off;
    }
    if (kevo_harness_sizes)
        kevo_harness_sizes(bytes);
    kevo_harness_call(buffers, scalars);
    uint32_t bad = UINT32_MAX;
    if (kevo_harness_timed_ns)
        (void)kevo_harness_timed_ns(&bad);
    char reply[5] = {'d'};
    __builtin_memcpy(reply + 1, &bad, 4);
    write_all(reply, 5);
}

int main(void)
{
    if (kevo_harness_setup) {
        kevo_harness_setup();
        lock_down_device();
    } else {
        lock_down_compute();
    }
    write_all(KEVO_RUNNER_HELLO, 8);
    map_regions();
    write_all("r", 1);
    for (;;) {
        char cmd;
        read_all(&cmd, 1);
        if (cmd == 'Q')
            return 0;
        if (cmd == 'N')
            write_all("n", 1);
        else if (cmd == 'X')
            call();
        else
            die(17);
    }
}
