/*
 * sandbox/policy.c - the seccomp policy of untrusted children (candidate
 * and reference runners), built with libseccomp and exported to BPF once.
 *
 * Denied (process killed, verdict `crash` with SIGSYS): creating processes
 * (fork, vfork, clone without CLONE_THREAD; OpenMP threads still work),
 * networking, ptrace and cross-process memory access, mounts and
 * namespaces, kernel modules, bpf, perf, keyrings, io_uring.
 * Refused with an error: clone3 (ENOSYS, so libc falls back to clone,
 * which we can inspect), kill, and changing any process's priority,
 * scheduler, I/O priority, or another process's affinity or rlimits (EPERM).
 * exec stays allowed here because the sandbox itself must exec the runner;
 * the runner forbids exec and file opening for itself once started
 * (harness/runner.c).
 */
#include "policy.h"
#include "kevo/common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sock_fprog program;
static atomic_int program_ok; /* set once, when `program` is complete */
static char program_error[256];
/* Not a pthread_once: a build that failed (out of memory) is tried again
 * by the next caller rather than remembered for the process's lifetime. */
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const killed[] = {
    "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2",
    "pivot_root", "chroot", "unshare", "setns", "kexec_load", "init_module", "finit_module",
    "delete_module", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key",
    "request_key", "personality", "socket", "socketpair", "connect", "bind", "listen",
    "accept", "accept4", "sendmsg", "recvmsg", "sendto", "recvfrom", "io_uring_setup",
    "execveat", "open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot",
    "settimeofday", "clock_settime", "adjtimex", "acct", "iopl", "ioperm", "setuid", "setgid",
    "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "quotactl", NULL};

static void build(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    char *buf = NULL;
    size_t len = 0;
    if (!ctx) {
        snprintf(program_error, sizeof(program_error), "seccomp_init failed");
        return;
    }
    int rc = 0;
    for (const char *const *n = killed; *n && rc == 0; n++) {
        int nr = seccomp_syscall_resolve_name(*n);
        if (nr == __NR_SCMP_ERROR)
            continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0);
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 0);
    /* No reaching other processes' scheduling: a candidate must not slow the
     * reference runner down (renice, affinity, rlimits, I/O priority). */
    static const char *const sched[] = {"setpriority", "sched_setscheduler", "sched_setparam",
                                        "sched_setattr", "ioprio_set", NULL};
    for (const char *const *n = sched; *n && rc == 0; n++) {
        int nr = seccomp_syscall_resolve_name(*n);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(sched_setaffinity), 1,
                              SCMP_A0(SCMP_CMP_NE, 0));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1,
                              SCMP_A0(SCMP_CMP_NE, 0));
    if (rc != 0) {
        snprintf(program_error, sizeof(program_error), "seccomp_rule_add: %s", strerror(-rc));
        goto done;
    }
    int fds[2];
    if (pipe(fds) < 0)
        goto done;
    rc = seccomp_export_bpf(ctx, fds[1]);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        snprintf(program_error, sizeof(program_error), "seccomp_export_bpf: %s", strerror(-rc));
        goto done;
    }
    size_t cap = 4096;
    buf = malloc(cap);
    bool oom = !buf;
    ssize_t n;
    while (!oom && (n = read(fds[0], buf + len, cap - len)) > 0) {
        len += (size_t)n;
        if (len == cap) {
            cap *= 2;
            char *p = realloc(buf, cap);
            if (!p)
                oom = true; /* never a truncated program */
            else
                buf = p;
        }
    }
    close(fds[0]);
    if (oom) {
        snprintf(program_error, sizeof(program_error),
                 "out of memory reading the seccomp program");
        goto done;
    }
    if (len == 0 || len % sizeof(struct sock_filter)) {
        snprintf(program_error, sizeof(program_error), "seccomp export gave %zu bytes", len);
        goto done;
    }
    program.len = (unsigned short)(len / sizeof(struct sock_filter));
    program.filter = (struct sock_filter *)buf;
    buf = NULL;
    atomic_store_explicit(&program_ok, 1, memory_order_release);
done:
    free(buf);
    seccomp_release(ctx);
}

const struct sock_fprog *kevo_sandbox_policy(void)
{
    if (atomic_load_explicit(&program_ok, memory_order_acquire))
        return &program;
    char why[sizeof(program_error)];
    pthread_mutex_lock(&build_lock);
    if (!atomic_load_explicit(&program_ok, memory_order_acquire)) {
        program_error[0] = '\0';
        build();
    }
    memcpy(why, program_error, sizeof(why));
    pthread_mutex_unlock(&build_lock);
    if (!atomic_load_explicit(&program_ok, memory_order_acquire)) {
        kevo_error_set(KEVO_EINFRA, "%s", why[0] ? why : "cannot build the seccomp policy");
        return NULL;
    }
    return &program;
}
