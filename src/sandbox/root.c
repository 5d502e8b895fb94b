/*
 * sandbox/root.c - the minimal read-only root of a sandboxed child (root.h).
 *
 * The parent lists what the child's root holds, as absolute paths under
 * the mount point the child will cover with a tmpfs (/tmp: it exists on
 * every system, and the child's copy of it is the child's alone). The child
 * then mounts, binds and links with system calls only, pivots into the
 * tmpfs and makes it read-only. It must not allocate, and it must not run
 * in kevo's own mount namespace (the caller guarantees a fresh one).
 */
#include "root.h"
#include "kevo/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROOT_MOUNT "/tmp"
#define MAX_OPS 96

typedef enum {
    OP_DIR,     /* mkdir dst */
    OP_BIND,    /* mkdir or touch dst (by src's kind), bind src there; ro: read-only.
                   src is opened before the tmpfs covers ROOT_MOUNT, so a source
                   beneath it (a work or harness folder under /tmp) still binds */
    OP_LINK,    /* symlink src at dst */
    OP_PROC,    /* a proc of the child's PID namespace at dst */
} op_kind;

typedef struct {
    op_kind kind;
    char *src, *dst;
    bool ro, optional, is_dir;
} op;

struct kevo_root_plan {
    char *workdir; /* real path */
    op ops[MAX_OPS];
    int n;
};

static int add(kevo_root_plan *p, op_kind kind, const char *src, const char *dst_rel, bool ro,
               bool optional, bool is_dir)
{
    if (p->n >= MAX_OPS)
        return kevo_error_set(KEVO_EINFRA, "sandbox root: too many entries");
    op *o = &p->ops[p->n];
    kevo_buf b = {0};
    kevo_buf_printf(&b, "%s%s", ROOT_MOUNT, dst_rel);
    o->dst = kevo_buf_detach(&b);
    o->src = src ? strdup(src) : NULL;
    if (!o->dst || (src && !o->src)) {
        free(o->dst); /* not counted in p->n: kevo_sandbox__root_plan_free won't see them */
        free(o->src);
        o->dst = o->src = NULL;
        return kevo_error_set(KEVO_ENOMEM, "out of memory planning the sandbox's root");
    }
    o->kind = kind;
    o->ro = ro;
    o->optional = optional;
    o->is_dir = is_dir;
    p->n++;
    return 0;
}

/* A host path as the child will see it: a link stays a link, a directory
 * or file is bound (read-only unless `rw`). Absent: nothing. */
static int add_host(kevo_root_plan *p, const char *path, bool rw, bool optional)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
            return 0;
        target[n] = '\0';
        return add(p, OP_LINK, target, path, false, optional, false);
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
        return 0;
    return add(p, OP_BIND, path, path, !rw, optional, S_ISDIR(st.st_mode));
}

void kevo_sandbox__root_plan_free(kevo_root_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++) {
        free(p->ops[i].src);
        free(p->ops[i].dst);
    }
    free(p->workdir);
    free(p);
}

/* Each folder on the way to `path` (real, absolute), then op at it. */
static int add_at_path(kevo_root_plan *p, char *path, op_kind kind, const char *src, bool ro)
{
    int error = 0;
    for (char *s = strchr(path + 1, '/'); s && error == 0; s = strchr(s + 1, '/')) {
        *s = '\0';
        error = add(p, OP_DIR, NULL, path, false, false, true);
        *s = '/';
    }
    return error < 0 ? error : add(p, kind, src, path, ro, false, true);
}

int kevo_sandbox__root_plan(kevo_root_plan **out, const char *workdir,
                            const char *const *ro_paths)
{
    *out = NULL;
    kevo_root_plan *p = calloc(1, sizeof(*p));
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = 0;
    if (!(p->workdir = realpath(workdir, NULL))) {
        error = kevo_error_set(KEVO_EIO, "%s: %s", workdir, strerror(errno));
        goto done;
    }
    /* programs and libraries, and the top-level links into /usr */
    static const char *const sys[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                      "/libx32", NULL};
    for (const char *const *s = sys; *s && error == 0; s++)
        error = add_host(p, *s, false, false);
    /* what the loader, gcc, nvcc and the OpenCL ICD loader read in /etc */
    static const char *const etc[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                      "/etc/OpenCL", "/etc/alternatives", NULL};
    if (error == 0)
        error = add(p, OP_DIR, NULL, "/etc", false, false, true);
    for (const char *const *s = etc; *s && error == 0; s++)
        error = add_host(p, *s, false, true);
    static const char *const dev[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                      "/dev/urandom", NULL};
    if (error == 0)
        error = add(p, OP_DIR, NULL, "/dev", false, false, true);
    for (const char *const *s = dev; *s && error == 0; s++)
        error = add_host(p, *s, true, true);
    /* GPU device nodes (/dev/nvidia0, nvidiactl, nvidia-uvm, nvidia-caps/):
     * a CUDA runner opens them before it locks itself down; their own
     * permissions still apply */
    DIR *d = error == 0 ? opendir("/dev") : NULL;
    for (struct dirent *e; d && error == 0 && (e = readdir(d));) {
        if (strncmp(e->d_name, "nvidia", 6))
            continue;
        char path[300];
        snprintf(path, sizeof(path), "/dev/%s", e->d_name);
        error = add_host(p, path, true, true);
    }
    if (d)
        closedir(d);
    if (error == 0)
        error = add(p, OP_DIR, NULL, "/proc", false, false, true);
    if (error == 0)
        error = add(p, OP_PROC, NULL, "/proc", false, true, true);
    if (error == 0)
        error = add(p, OP_DIR, NULL, "/sys", false, false, true);
    if (error == 0)
        error = add(p, OP_BIND, "/sys", "/sys", true, true, true);
    if (error == 0)
        error = add(p, OP_DIR, NULL, "/tmp", false, false, true);
    for (const char *const *r = ro_paths; r && *r && error == 0; r++) {
        char *real = realpath(*r, NULL);
        if (!real) {
            error = kevo_error_set(KEVO_EIO, "%s (a folder the sandboxed program reads, e.g. "
                                   "kevo's harness: KEVO_HARNESS_DIR): %s", *r, strerror(errno));
            break;
        }
        error = add_at_path(p, real, OP_BIND, real, true);
        free(real);
    }
    /* the work directory last, at its own path (read-write) */
    if (error == 0)
        error = add_at_path(p, p->workdir, OP_BIND, p->workdir, false);
done:
    if (error < 0) {
        kevo_sandbox__root_plan_free(p);
        return error;
    }
    *out = p;
    return 0;
}

/* ---- in the child: system calls only ---- */

static int bind_at(const char *src, const op *o)
{
    if (mount(src, o->dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -1;
    if (o->ro &&
        mount(NULL, o->dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, NULL) < 0)
        return -1;
    return 0;
}

/* src_path: where op o's source can be reached now (its O_PATH fd) */
static int run_op(const op *o, const char *src_path)
{
    switch (o->kind) {
    case OP_DIR:
        return mkdir(o->dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
    case OP_LINK:
        return symlink(o->src, o->dst);
    case OP_PROC:
        return mount("proc", o->dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    case OP_BIND:
        if (!src_path)
            return -1;
        if (o->is_dir) {
            if (mkdir(o->dst, 0755) < 0 && errno != EEXIST)
                return -1;
        } else {
            int fd = open(o->dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0)
                return -1;
            close(fd);
        }
        return bind_at(src_path, o);
    }
    return -1;
}

/* "/proc/self/fd/<fd>" without printf */
static void fd_path(char *buf, int fd)
{
    static const char pre[] = "/proc/self/fd/";
    memcpy(buf, pre, sizeof(pre) - 1);
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + fd % 10);
        fd /= 10;
    } while (fd > 0 && n < 11);
    char *p = buf + sizeof(pre) - 1;
    while (n > 0)
        *p++ = digits[--n];
    *p = '\0';
}

int kevo_sandbox__root_enter(const kevo_root_plan *p)
{
    /* every bind source, held before the tmpfs hides what lies under it */
    int fds[MAX_OPS];
    for (int i = 0; i < p->n; i++) {
        fds[i] = p->ops[i].kind == OP_BIND ? open(p->ops[i].src, O_PATH | O_CLOEXEC) : -1;
        if (p->ops[i].kind == OP_BIND && fds[i] < 0 && !p->ops[i].optional)
            return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("kevo-root", ROOT_MOUNT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
        return -1;
    for (int i = 0; i < p->n; i++) {
        char src[40];
        if (fds[i] >= 0)
            fd_path(src, fds[i]);
        if (run_op(&p->ops[i], fds[i] >= 0 ? src : NULL) < 0 && !p->ops[i].optional)
            return -1;
        if (fds[i] >= 0)
            close(fds[i]);
    }
    if (chdir(ROOT_MOUNT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
        umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        return -1;
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return -1;
    return 0;
}
