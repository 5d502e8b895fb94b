/*
 * kevo/sandbox.h - running untrusted programs: fork/exec with rlimits, a
 * wall-clock timeout on a process group of its own, a scrubbed
 * environment, no network (network namespace when permitted, seccomp
 * otherwise), seccomp denial of process creation, ptrace, mounts and
 * sockets, and an unprivileged uid when kevo runs as root.
 *
 * The sandbox runs things and reports how they ended; it never interprets
 * their output (that is the verifier's job).
 */
#ifndef KEVO_SANDBOX_H
#define KEVO_SANDBOX_H

#include "kevo/common.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_sandbox_opts {
    const char *workdir;      /* cwd, HOME and TMPDIR of the child (required) */
    double wall_timeout_s;    /* kevo_sandbox_run only; 0 = none */
    uint64_t mem_bytes;       /* RLIMIT_AS; 0 = unlimited */
    double cpu_s;             /* RLIMIT_CPU; 0 = unlimited */
    uint64_t file_bytes;      /* RLIMIT_FSIZE; 0 = default 64 MiB */
    int max_procs;            /* RLIMIT_NPROC (binds non-root uids); 0 = default 512 */
    bool untrusted;           /* drop to uid/gid nobody if root, new network namespace,
                                 seccomp policy (no fork, exec allowed once, no sockets,
                                 no ptrace, no mounts) */
    unsigned run_as_uid;      /* untrusted children when kevo is root: this uid and gid
                                 (0 = nobody, 65534); the reference runner gets its own,
                                 so a candidate cannot signal, renice or trace it */
    bool drop_privileges;     /* run as uid/gid nobody when kevo is root (compilers: so a
                                 candidate cannot make them read root-only files) */
    const char *const *extra_env; /* "K=V" strings added to the scrubbed environment */
    const int *pass_fds;      /* kevo_sandbox_spawn: these fds become the child's 5, 6, ... */
    size_t npass_fds;
    const char *const *ro_paths; /* NULL-terminated host folders the child may read besides
                                    its minimal root (kevo's harness sources, for a
                                    toolchain); NULL: none */
} kevo_sandbox_opts;

typedef enum {
    KEVO_EXIT_NORMAL,   /* exited; see exit_code */
    KEVO_EXIT_SIGNALED, /* killed by a signal; see signal */
    KEVO_EXIT_TIMEOUT   /* killed by kevo at the wall-clock limit */
} kevo_exit_kind;

typedef struct kevo_proc_status {
    kevo_exit_kind kind;
    int exit_code;
    int signal;
    double wall_s;
} kevo_proc_status;

/* Run argv to completion, capturing stdout+stderr (at most `cap` bytes are
 * kept; the rest is discarded). *out_output is the caller's (free()).
 * Returns 0 when the program ran (whatever its status), negative when it
 * could not be started. */
int kevo_sandbox_run(kevo_proc_status *status, char **out_output, size_t cap,
                     const char *const argv[], const kevo_sandbox_opts *opts);

/* A running sandboxed child that talks over two pipes: kevo writes to
 * `to_child` (the child's fd 3) and reads from `from_child` (the child's
 * fd 4); opts->pass_fds become its fds 5, 6, ... The child's stdin is
 * /dev/null and its stdout/stderr go to a size-limited memfd that only kevo
 * holds (kevo_child_log_tail); no file in workdir is ever read back. */
typedef struct kevo_child {
    pid_t pid;
    int to_child;
    int from_child;
    bool exited;
    bool paused; /* stopped by kevo_child_pause() */
    int log_fd;  /* kevo's handle on the child's stdout+stderr (a memfd; no path) */
    kevo_proc_status status;
    double started;
} kevo_child;

int kevo_sandbox_spawn(kevo_child **out, const char *const argv[], const kevo_sandbox_opts *opts);
#define KEVO_CHILD_WRITE_TIMEOUT_S 10.0
/* Write all bytes (EPIPE -> KEVO_EIO); a child that stops reading for
 * KEVO_CHILD_WRITE_TIMEOUT_S gives KEVO_ETIMEOUT: kevo never blocks on it. */
int kevo_child_write(kevo_child *c, const void *data, size_t len);
/* Read exactly len bytes within timeout_s: KEVO_ETIMEOUT on timeout,
 * KEVO_EIO when the child closed the pipe (it died: see kevo_child_wait). */
int kevo_child_read(kevo_child *c, void *data, size_t len, double timeout_s);
/* Freeze (SIGSTOP, waiting until every thread has stopped) or thaw
 * (SIGCONT) a running child, e.g. so that a candidate's background threads
 * cannot steal CPU while the reference is timed. */
int kevo_child_pause(kevo_child *c);
int kevo_child_resume(kevo_child *c);
/* Kill the whole process group (SIGKILL) and reap the child. */
void kevo_child_kill(kevo_child *c);
/* Reap the child, waiting at most timeout_s, killing it after that. */
void kevo_child_wait(kevo_child *c, double timeout_s);
/* Whether the child exits by itself within timeout_s (reaped if so); it is
 * left alone otherwise. */
bool kevo_child_exited_within(kevo_child *c, double timeout_s);
/* Kill if running, reap, close pipes, free. Accepts NULL. */
void kevo_child_free(kevo_child *c);

/* The last bytes (at most cap - 1, NUL-terminated) the child wrote to its
 * stdout/stderr, read through kevo's own handle. Returns the length. */
size_t kevo_child_log_tail(kevo_child *c, char *out, size_t cap);

/* A uid (and gid) for one untrusted child, shared with no other child of
 * any kevo process running now (derived from kevo's pid and a counter). */
unsigned kevo_sandbox_fresh_uid(void);

/* Give this process (call it while it has one thread, before any
 * evaluation) a private mount namespace with a tmpfs over $TMPDIR/kevo-
 * scratch, and point TMPDIR there: build and work directories then vanish
 * with kevo even when it is killed with SIGKILL. No-op when not root or not
 * permitted. Negative only when the scratch path is unusable. */
int kevo_sandbox_private_scratch(void);

/* Make a directory writable by the unprivileged user that drop_privileges
 * runs as (no-op unless kevo is root). */
int kevo_sandbox_prepare_dir(const char *dir);

/* A readable description of how a process ended: "exited with status 1",
 * "killed by SIGSEGV (Segmentation fault)", "killed by SIGSYS (forbidden
 * system call)", "timed out after 2.0 s". Static storage per thread. */
const char *kevo_proc_status_describe(const kevo_proc_status *s);

/* What isolation is in effect for untrusted children on this machine (for
 * reports): e.g. "uid nobody, network namespace, seccomp". */
const char *kevo_sandbox_describe(void);

#ifdef __cplusplus
}
#endif
#endif
