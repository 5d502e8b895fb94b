/*
 * sandbox/sandbox.c - fork/exec of untrusted programs with rlimits, a
 * process group of their own killed at the wall-clock limit, a scrubbed
 * environment, PID, network and mount namespaces where permitted (with a
 * minimal read-only root: root.c), an unprivileged uid when kevo runs as
 * root, and a seccomp policy.
 *
 * Between fork and exec the child only makes async-signal-safe system
 * calls: the seccomp program is built once in the parent (policy.c), so
 * spawning is safe from a multi-threaded kevo. It must not interpret what
 * the child prints.
 */
#include "kevo/fault.h"
#include "kevo/sandbox.h"
#include "kevo/util.h"
#include "policy.h"
#include "root.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY_ID 65534

extern char **environ;

static void free_env(char **env);

static int build_env(char ***out, const kevo_sandbox_opts *o)
{
    *out = NULL;
    size_t n = 0;
    for (const char *const *e = o->extra_env; e && *e; e++)
        n++;
    char **env = calloc(n + 8, sizeof(char *));
    if (!env)
        return kevo_error_set(KEVO_ENOMEM, "out of memory building a child's environment");
    size_t k = 0;
    bool ok = (env[k++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin")) &&
              (env[k++] = strdup("LANG=C")) && (env[k++] = strdup("LC_ALL=C"));
    kevo_buf b = {0};
    if (ok) {
        kevo_buf_printf(&b, "HOME=%s", o->workdir);
        ok = (env[k++] = kevo_buf_detach(&b)) != NULL;
    }
    if (ok) {
        kevo_buf_printf(&b, "TMPDIR=%s", o->workdir);
        ok = (env[k++] = kevo_buf_detach(&b)) != NULL;
    }
    for (const char *const *e = o->extra_env; ok && e && *e; e++)
        ok = (env[k++] = strdup(*e)) != NULL;
    if (!ok) {
        free_env(env);
        return kevo_error_set(KEVO_ENOMEM, "out of memory building a child's environment");
    }
    *out = env;
    return 0;
}

static void free_env(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

static void set_limit(int res, rlim_t v)
{
    struct rlimit rl = {v, v};
    setrlimit(res, &rl);
}

/* uid and gid `id`, no supplementary groups: raw system calls. glibc's
 * setuid() and friends broadcast the change to every thread the parent
 * had (and take the thread-stack lock to do it), which in a child of a raw
 * clone() of a multi-threaded kevo can wait forever. */
static int drop_to(unsigned id)
{
    if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, id, id, id) < 0 ||
        syscall(SYS_setresuid, id, id, id) < 0)
        return -1;
    return 0;
}

/* Runs in the child between fork and exec: async-signal-safe calls only.
 * keep[]: fds the child gets as 0, 1, 2 (stdout again), 3, 4, 5, 6...;
 * -1 leaves a slot closed. */
static void child_setup(const kevo_sandbox_opts *o, const struct sock_fprog *prog,
                        const kevo_root_plan *root, const int *keep_in, int nkeep,
                        const char *const argv[], char **env)
{
    setpgid(0, 0);
    /* Move the fds we keep above 20 first so dup2 cannot clobber them. */
    int keep[16];
    for (int i = 0; i < nkeep && i < 16; i++)
        keep[i] = keep_in[i] >= 0 ? fcntl(keep_in[i], F_DUPFD, 20 + i) : -1;
    /* 0: keep[0], 1 and 2: keep[1], then 3, 4, ...: keep[2], keep[3], ... */
    dup2(keep[0], 0);
    dup2(keep[1], 1);
    dup2(keep[1], 2);
    int target = 3;
    for (int i = 2; i < nkeep && i < 16; i++, target++)
        if (keep[i] >= 0)
            dup2(keep[i], target);
    syscall(SYS_close_range, (unsigned)target, ~0U, 0);

    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_NOFILE, 64);
    set_limit(RLIMIT_FSIZE, o->file_bytes ? o->file_bytes : 64ULL << 20);
    set_limit(RLIMIT_NPROC, o->max_procs ? (rlim_t)o->max_procs : 512);
    if (o->mem_bytes)
        set_limit(RLIMIT_AS, o->mem_bytes);
    if (o->cpu_s > 0)
        set_limit(RLIMIT_CPU, (rlim_t)(o->cpu_s + 1));
    /* In a mount namespace of its own (root: sandbox_fork): only the
     * system's programs and libraries and its own work directory in view.
     * A child that cannot have that root does not run. */
    if (root && kevo_sandbox__root_enter(root) < 0)
        _exit(126);
    if (chdir(o->workdir) < 0)
        _exit(126);
    if (o->drop_privileges && !o->untrusted && geteuid() == 0) {
        if (drop_to(NOBODY_ID) < 0)
            _exit(126);
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    }
    if (o->untrusted) {
        if (geteuid() == 0) {
            unsigned id = o->run_as_uid ? o->run_as_uid : NOBODY_ID;
            if (drop_to(id) < 0)
                _exit(126);
        }
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        prctl(PR_SET_DUMPABLE, 0);
    }
    /* After the uid change, which clears it: the child dies with kevo. If
     * kevo died before this line, the command pipe (if any) has hung up. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (nkeep > 2 && keep[2] >= 0) {
        struct pollfd pfd = {3, POLLIN, 0};
        if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
            _exit(126);
    }
    if (o->untrusted && prog && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog) < 0)
        _exit(126);
    execve(argv[0], (char *const *)argv, env);
    _exit(127);
}

/* fork(), or as root a child that is pid 1 of its own PID, network and
 * mount namespaces: it sees no other process, reaches no network, and when
 * it dies every process it left behind dies with it. *own_mounts: the
 * child has a mount namespace of its own (only then may it build its
 * minimal root: anywhere else it would change kevo's view). */
static pid_t sandbox_fork(bool *own_mounts)
{
    *own_mounts = false;
    if (kevo_fault_should_fail(KEVO_FAULT_SPAWN)) { /* tests: fail as fork() does */
        errno = EAGAIN;
        return -1;
    }
    if (geteuid() != 0)
        return fork();
    pid_t pid = (pid_t)syscall(SYS_clone,
                               (unsigned long)(SIGCHLD | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS),
                               NULL, NULL, NULL, 0UL);
    if (pid >= 0) {
        *own_mounts = true;
        return pid;
    }
    if (errno == EPERM || errno == EINVAL || errno == ENOSPC)
        return fork(); /* no namespaces here (a container): the uid and seccomp still hold */
    return pid;
}

unsigned kevo_sandbox_fresh_uid(void)
{
    static unsigned counter;
    unsigned k = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    return 0x10000000u + ((unsigned)getpid() & 0x3fffffu) * 64u + (k % 64u);
}

static const struct sock_fprog *policy_or_error(const kevo_sandbox_opts *o, int *error)
{
    *error = 0;
    if (!o->untrusted)
        return NULL;
    const struct sock_fprog *prog = kevo_sandbox_policy();
    if (!prog)
        *error = kevo_error_set(KEVO_EINFRA, "cannot build the seccomp policy: %s",
                                kevo_error_last());
    return prog;
}

int kevo_sandbox_spawn(kevo_child **out, const char *const argv[], const kevo_sandbox_opts *o)
{
    *out = NULL;
    int error = 0;
    int cmd[2] = {-1, -1}, reply[2] = {-1, -1}, devnull = -1, logfd = -1;
    char **env = NULL;
    kevo_root_plan *root = NULL;
    const struct sock_fprog *prog = policy_or_error(o, &error);
    if (error < 0)
        return error;
    if ((error = build_env(&env, o)) < 0)
        return error;
    if (geteuid() == 0 && (error = kevo_sandbox__root_plan(&root, o->workdir, o->ro_paths)) < 0) {
        free_env(env);
        return error;
    }
    if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(reply, O_CLOEXEC) < 0) {
        error = kevo_error_set(KEVO_EIO, "pipe: %s", strerror(errno));
        goto done;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* The log is a memfd, never a path: nothing the child can replace by a
     * symlink, and nothing left on disk. */
    logfd = memfd_create("kevo-child-log", MFD_CLOEXEC);
    if (devnull < 0 || logfd < 0) {
        error = kevo_error_set(KEVO_EIO, "cannot open the child's log: %s", strerror(errno));
        goto done;
    }
    kevo_child *c = calloc(1, sizeof(*c));
    if (!c) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    c->started = kevo_now_s();
    c->log_fd = -1;
    int keep[16] = {devnull, logfd, cmd[0], reply[1]};
    int nkeep = 4;
    for (size_t i = 0; i < o->npass_fds && nkeep < 16; i++)
        keep[nkeep++] = o->pass_fds[i];
    bool own_mounts;
    pid_t pid = sandbox_fork(&own_mounts);
    if (pid < 0) {
        free(c);
        error = kevo_error_set(KEVO_EIO, "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0)
        child_setup(o, prog, own_mounts ? root : NULL, keep, nkeep, argv, env);
    setpgid(pid, pid);
    c->pid = pid;
    c->to_child = cmd[1];
    c->from_child = reply[0];
    c->log_fd = logfd;
    logfd = -1;
    cmd[1] = reply[0] = -1;
    fcntl(c->to_child, F_SETFL, O_NONBLOCK);
    *out = c;
done:
    if (cmd[0] >= 0)
        close(cmd[0]);
    if (cmd[1] >= 0)
        close(cmd[1]);
    if (reply[0] >= 0)
        close(reply[0]);
    if (reply[1] >= 0)
        close(reply[1]);
    if (devnull >= 0)
        close(devnull);
    if (logfd >= 0)
        close(logfd);
    free_env(env);
    kevo_sandbox__root_plan_free(root);
    return error;
}

int kevo_child_write(kevo_child *c, const void *data, size_t len)
{
    const char *p = data;
    double deadline = kevo_now_s() + KEVO_CHILD_WRITE_TIMEOUT_S;
    while (len > 0) {
        ssize_t w = write(c->to_child, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) { /* the child stopped reading: wait, but not forever */
                double left = deadline - kevo_now_s();
                if (left <= 0)
                    return kevo_error_set(KEVO_ETIMEOUT, "the child stopped reading its input");
                struct pollfd pfd = {c->to_child, POLLOUT, 0};
                poll(&pfd, 1, (int)(left * 1000) + 1);
                continue;
            }
            return kevo_error_set(KEVO_EIO, "child closed its input: %s", strerror(errno));
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

size_t kevo_child_log_tail(kevo_child *c, char *out, size_t cap)
{
    if (!c || c->log_fd < 0 || cap == 0)
        return 0;
    struct stat st;
    if (fstat(c->log_fd, &st) < 0 || st.st_size <= 0)
        return 0;
    off_t from = st.st_size > (off_t)(cap - 1) ? st.st_size - (off_t)(cap - 1) : 0;
    ssize_t n = pread(c->log_fd, out, cap - 1, from);
    if (n < 0)
        n = 0;
    out[n] = 0;
    return (size_t)n;
}

int kevo_child_read(kevo_child *c, void *data, size_t len, double timeout_s)
{
    char *p = data;
    double deadline = kevo_now_s() + timeout_s;
    while (len > 0) {
        double left = deadline - kevo_now_s();
        if (left <= 0)
            return kevo_error_set(KEVO_ETIMEOUT, "child did not answer within %.1f s", timeout_s);
        struct pollfd pfd = {c->from_child, POLLIN, 0};
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return kevo_error_set(KEVO_EIO, "poll: %s", strerror(errno));
        }
        if (r == 0)
            continue;
        ssize_t n = read(c->from_child, p, len);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return kevo_error_set(KEVO_EIO, "read from child: %s", strerror(errno));
        }
        if (n == 0)
            return kevo_error_set(KEVO_EIO, "child closed its output");
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void reap(kevo_child *c, int wstatus)
{
    c->exited = true;
    c->status.wall_s = kevo_now_s() - c->started;
    if (c->status.kind == KEVO_EXIT_TIMEOUT)
        return;
    if (WIFEXITED(wstatus)) {
        c->status.kind = KEVO_EXIT_NORMAL;
        c->status.exit_code = WEXITSTATUS(wstatus);
    } else if (WIFSIGNALED(wstatus)) {
        c->status.kind = KEVO_EXIT_SIGNALED;
        c->status.signal = WTERMSIG(wstatus);
    }
}

int kevo_child_pause(kevo_child *c)
{
    if (!c || c->exited || c->paused)
        return 0; /* a second SIGSTOP would never be reported: waitpid would hang */
    if (kill(c->pid, SIGSTOP) < 0)
        return kevo_error_set(KEVO_EIO, "cannot stop the runner: %s", strerror(errno));
    int ws;
    for (;;) {
        pid_t r = waitpid(c->pid, &ws, WUNTRACED);
        if (r == c->pid && WIFSTOPPED(ws)) {
            c->paused = true;
            return 0;
        }
        if (r == c->pid) { /* it died meanwhile */
            reap(c, ws);
            return 0;
        }
        if (r < 0 && errno != EINTR)
            return kevo_error_set(KEVO_EIO, "waiting for the runner to stop: %s",
                                  strerror(errno));
    }
}

int kevo_child_resume(kevo_child *c)
{
    if (!c || c->exited || !c->paused)
        return 0;
    c->paused = false;
    if (kill(c->pid, SIGCONT) < 0)
        return kevo_error_set(KEVO_EIO, "cannot continue the runner: %s", strerror(errno));
    return 0;
}

void kevo_child_kill(kevo_child *c)
{
    if (!c || c->exited)
        return;
    kill(-c->pid, SIGKILL);
    kill(c->pid, SIGKILL);
    int ws;
    while (waitpid(c->pid, &ws, 0) < 0 && errno == EINTR)
        ;
    reap(c, ws);
}

void kevo_child_wait(kevo_child *c, double timeout_s)
{
    if (!c || c->exited)
        return;
    double deadline = kevo_now_s() + timeout_s;
    for (;;) {
        int ws;
        pid_t r = waitpid(c->pid, &ws, WNOHANG);
        if (r == c->pid) {
            reap(c, ws);
            kill(-c->pid, SIGKILL); /* stragglers in its group */
            return;
        }
        if (r < 0 && errno != EINTR) {
            c->exited = true;
            return;
        }
        if (kevo_now_s() > deadline) {
            kevo_child_kill(c);
            return;
        }
        usleep(1000);
    }
}

bool kevo_child_exited_within(kevo_child *c, double timeout_s)
{
    if (!c)
        return true;
    if (c->exited)
        return true;
    double deadline = kevo_now_s() + timeout_s;
    for (;;) {
        int ws;
        pid_t r = waitpid(c->pid, &ws, WNOHANG);
        if (r == c->pid) {
            reap(c, ws);
            kill(-c->pid, SIGKILL);
            return true;
        }
        if (r < 0 && errno != EINTR) {
            c->exited = true;
            return true;
        }
        if (kevo_now_s() > deadline)
            return false;
        usleep(1000);
    }
}

void kevo_child_free(kevo_child *c)
{
    if (!c)
        return;
    if (c->to_child >= 0)
        close(c->to_child);
    c->to_child = -1;
    kevo_child_wait(c, 0.5);
    if (c->from_child >= 0)
        close(c->from_child);
    if (c->log_fd >= 0)
        close(c->log_fd);
    free(c);
}

int kevo_sandbox_run(kevo_proc_status *status, char **out_output, size_t cap,
                     const char *const argv[], const kevo_sandbox_opts *o)
{
    int error = 0;
    int outp[2] = {-1, -1}, devnull = -1;
    char **env = NULL;
    kevo_root_plan *root = NULL;
    kevo_buf output = {0};
    memset(status, 0, sizeof(*status));
    if (out_output)
        *out_output = NULL;
    const struct sock_fprog *prog = policy_or_error(o, &error);
    if (error < 0)
        return error;
    if ((error = build_env(&env, o)) < 0)
        return error;
    if (geteuid() == 0 && (error = kevo_sandbox__root_plan(&root, o->workdir, o->ro_paths)) < 0) {
        free_env(env);
        return error;
    }
    if (pipe2(outp, O_CLOEXEC) < 0) {
        error = kevo_error_set(KEVO_EIO, "pipe: %s", strerror(errno));
        goto done;
    }
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    double start = kevo_now_s();
    int keep[2] = {devnull, outp[1]};
    bool own_mounts;
    pid_t pid = sandbox_fork(&own_mounts);
    if (pid < 0) {
        error = kevo_error_set(KEVO_EIO, "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0)
        child_setup(o, prog, own_mounts ? root : NULL, keep, 2, argv, env);
    setpgid(pid, pid);
    close(outp[1]);
    outp[1] = -1;
    bool timed_out = false, eof = false;
    while (!eof) {
        double left = o->wall_timeout_s > 0 ? start + o->wall_timeout_s - kevo_now_s() : 3600;
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = {outp[0], POLLIN, 0};
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        char chunk[8192];
        ssize_t n = read(outp[0], chunk, sizeof(chunk));
        if (n <= 0) {
            eof = n == 0 || errno != EINTR;
            continue;
        }
        if (output.len < cap)
            kevo_buf_put(&output, chunk, (size_t)n < cap - output.len ? (size_t)n : cap - output.len);
    }
    if (timed_out)
        kill(-pid, SIGKILL);
    int ws = 0;
    for (;;) {
        pid_t r = waitpid(pid, &ws, timed_out ? 0 : WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            break;
        if (r == 0) {
            if (o->wall_timeout_s > 0 && kevo_now_s() > start + o->wall_timeout_s) {
                timed_out = true;
                kill(-pid, SIGKILL);
            } else {
                usleep(1000);
            }
        }
    }
    kill(-pid, SIGKILL);
    status->wall_s = kevo_now_s() - start;
    if (timed_out) {
        status->kind = KEVO_EXIT_TIMEOUT;
    } else if (WIFSIGNALED(ws)) {
        status->kind = KEVO_EXIT_SIGNALED;
        status->signal = WTERMSIG(ws);
    } else {
        status->kind = KEVO_EXIT_NORMAL;
        status->exit_code = WEXITSTATUS(ws);
    }
    if (out_output && !(*out_output = kevo_buf_detach(&output)))
        error = KEVO_ENOMEM; /* the message: kevo_buf_detach's */
done:
    if (outp[0] >= 0)
        close(outp[0]);
    if (outp[1] >= 0)
        close(outp[1]);
    if (devnull >= 0)
        close(devnull);
    kevo_buf_free(&output);
    free_env(env);
    kevo_sandbox__root_plan_free(root);
    return error;
}

const char *kevo_proc_status_describe(const kevo_proc_status *s)
{
    static _Thread_local char text[160];
    switch (s->kind) {
    case KEVO_EXIT_NORMAL:
        snprintf(text, sizeof(text), "exited with status %d", s->exit_code);
        break;
    case KEVO_EXIT_TIMEOUT:
        snprintf(text, sizeof(text), "timed out after %.1f s (killed)", s->wall_s);
        break;
    case KEVO_EXIT_SIGNALED:
        if (s->signal == SIGSYS)
            snprintf(text, sizeof(text), "killed by SIGSYS (a forbidden system call: a kernel "
                                         "may use memory, threads and clocks, nothing else)");
        else if (s->signal == SIGXCPU)
            snprintf(text, sizeof(text), "killed by SIGXCPU (CPU time limit)");
        else
            snprintf(text, sizeof(text), "killed by SIG%s (%s)", sigabbrev_np(s->signal)
                     ? sigabbrev_np(s->signal) : "?", strsignal(s->signal));
        break;
    }
    return text;
}

int kevo_sandbox_prepare_dir(const char *dir)
{
    if (geteuid() != 0)
        return 0;
    if (chown(dir, NOBODY_ID, NOBODY_ID) < 0)
        return kevo_error_set(KEVO_EIO, "%s: cannot hand the directory to nobody: %s", dir,
                              strerror(errno));
    return 0;
}

const char *kevo_sandbox_describe(void)
{
    return geteuid() == 0 ? "a uid of its own, PID, network and mount namespaces with a minimal "
                            "read-only root, seccomp allow-list, rlimits, process group"
                          : "seccomp (no sockets, no process creation), rlimits, process group";
}

/* Runners and compilers run as other uids and must reach their build
 * directories: every folder on the way from / to `dir` has to be searchable
 * by others (a `mktemp -d` TMPDIR, mode 0700, is not). */
static int check_reachable(const char *dir)
{
    char *real = realpath(dir, NULL);
    if (!real)
        return kevo_error_set(KEVO_EIO, "%s: %s", dir, strerror(errno));
    int error = 0;
    size_t len = strlen(real);
    /* each prefix that ends at a '/' or at the end: /a, /a/b, ... */
    for (size_t i = 1; i <= len && !error; i++) {
        if (i < len && real[i] != '/')
            continue;
        char save = real[i];
        real[i] = '\0';
        struct stat st;
        if (stat(real, &st) == 0 && !(st.st_mode & S_IXOTH))
            error = kevo_error_set(KEVO_EINVAL, "TMPDIR %s: the folder %s (mode %04o) is not "
                                   "searchable by other users, and kevo's sandboxed compilers "
                                   "and runners run as unprivileged uids beneath it: "
                                   "`chmod o+x %s` or point TMPDIR elsewhere",
                                   dir, real, (unsigned)(st.st_mode & 07777), real);
        real[i] = save;
    }
    free(real);
    return error;
}

int kevo_sandbox_private_scratch(void)
{
    if (geteuid() != 0)
        return 0; /* no mount namespace without root: temp dirs are removed on exit only */
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    kevo_buf dir = {0};
    int error = kevo_buf_printf(&dir, "%s/kevo-scratch", base);
    if (error == 0)
        error = check_reachable(base);
    if (error < 0)
        goto done;
    struct stat st;
    if (mkdir(dir.ptr, 0755) < 0 && errno != EEXIST) {
        error = kevo_error_set(KEVO_EIO, "%s: cannot create: %s", dir.ptr, strerror(errno));
        goto done;
    }
    if (lstat(dir.ptr, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0) {
        error = kevo_error_set(KEVO_EIO, "%s: not a directory owned by root (refusing to use it)",
                               dir.ptr);
        goto done;
    }
    /* A mount namespace of kevo's own with a tmpfs over the scratch
     * directory: every build and work directory lives there, and the kernel
     * frees it when kevo and its children are gone, SIGKILL included. */
    if (unshare(CLONE_NEWNS) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("kevo-scratch", dir.ptr, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        goto done; /* not permitted here (a container): fall back to plain temp dirs */
    setenv("TMPDIR", dir.ptr, 1);
done:
    kevo_buf_free(&dir);
    return error;
}
