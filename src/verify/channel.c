/*
 * verify/channel.c - kevo's side of the runner channel (channel.h,
 * harness/protocol.h). It owns the shared memory and the clock; it never
 * trusts a byte the runner sends beyond the one it asked for.
 */
#include "channel.h"
#include "kevo/util.h"
#include "protocol.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CANARY 0xC5
#define FRONT_CANARY 4096

typedef struct {
    uint64_t off[KEVO_RUNNER_MAX_PARAMS]; /* region offset within its memfd */
    uint64_t len[KEVO_RUNNER_MAX_PARAMS]; /* region length (page multiple) */
} layout;

struct kevo_channel_inputs {
    const kevo_task *task;
    layout lay;             /* for every buffer param (in: this memfd; out/inout: each runner's) */
    uint64_t out_total;     /* size of a runner's out memfd */
    int fd;                 /* read-write, kevo's */
    int ro_fd;              /* read-only, the runners' fd 5 */
    unsigned char *map;
    size_t map_len;
    kevo_runner_desc *desc; /* page 0 */
};

struct kevo_channel_runner {
    kevo_channel_inputs *in;
    kevo_child *child;
    int fd;
    unsigned char *map;
    size_t map_len;
    bool publish; /* 'P' after every 'X' (outputs handed over untimed) */
};

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t round64(uint64_t b)
{
    return b == 0 ? 64 : (b + 63) & ~(uint64_t)63;
}

/* Where a buffer of b bytes starts within region p: its data ends at most
 * 63 bytes before the region's end (the back guard page). */
static uint64_t data_off(const layout *l, size_t p, uint64_t b)
{
    return l->len[p] - round64(b);
}

static bool is_out(kevo_role r)
{
    return r == KEVO_ROLE_OUT || r == KEVO_ROLE_INOUT;
}

static int memfd_sized(int *out_fd, unsigned char **out_map, size_t len, const char *name)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return kevo_error_set(KEVO_EINFRA, "memfd_create: %s", strerror(errno));
    if (ftruncate(fd, (off_t)len) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        int e = errno;
        close(fd);
        return kevo_error_set(KEVO_EINFRA, "sizing the shared buffers (%zu bytes): %s", len,
                              strerror(e));
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        return kevo_error_set(KEVO_EINFRA, "mapping the shared buffers (%zu bytes): %s", len,
                              strerror(e));
    }
    *out_fd = fd;
    *out_map = m;
    return 0;
}

int kevo_channel__inputs_new(kevo_channel_inputs **out, const kevo_task *task,
                             kevo_call_data *const *sets, size_t nsets)
{
    *out = NULL;
    if (task->nparams > KEVO_RUNNER_MAX_PARAMS)
        return kevo_error_set(KEVO_EINVAL, "%s: more than %d params", task->json_path,
                              KEVO_RUNNER_MAX_PARAMS);
    kevo_channel_inputs *in = calloc(1, sizeof(*in));
    if (!in)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    in->task = task;
    in->fd = in->ro_fd = -1;
    size_t page = page_size();
    uint64_t in_total = page, out_total = 0; /* page 0: the descriptor */
    for (size_t p = 0; p < task->nparams; p++) {
        kevo_role role = task->params[p].role;
        if (role == KEVO_ROLE_SCALAR)
            continue;
        uint64_t max = 0;
        for (size_t s = 0; s < nsets; s++)
            max = sets[s]->bytes[p] > max ? sets[s]->bytes[p] : max;
        uint64_t len = (FRONT_CANARY + round64(max) + page - 1) / page * page;
        in->lay.len[p] = len;
        if (is_out(role)) {
            in->lay.off[p] = out_total;
            out_total += len;
        } else {
            in->lay.off[p] = in_total;
            in_total += len;
        }
    }
    in->out_total = out_total ? out_total : page;
    int error = memfd_sized(&in->fd, &in->map, in_total, "kevo-inputs");
    if (error < 0) {
        free(in);
        return error;
    }
    in->map_len = in_total;
    /* the runners' handle: read-only, so no mapping of theirs can write */
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", in->fd);
    in->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (in->ro_fd < 0) {
        error = kevo_error_set(KEVO_EINFRA, "reopening the input buffers read-only: %s",
                               strerror(errno));
        kevo_channel__inputs_free(in);
        return error;
    }
    in->desc = (kevo_runner_desc *)in->map;
    in->desc->magic = KEVO_RUNNER_DESC_MAGIC;
    *out = in;
    return 0;
}

void kevo_channel__inputs_free(kevo_channel_inputs *in)
{
    if (!in)
        return;
    if (in->map)
        munmap(in->map, in->map_len);
    if (in->fd >= 0)
        close(in->fd);
    if (in->ro_fd >= 0)
        close(in->ro_fd);
    free(in);
}

/* Copy n elements of size es from src into dst, rotated by k elements. */
static void copy_rotated(unsigned char *dst, const unsigned char *src, size_t n, size_t es,
                         uint64_t rot, size_t p)
{
    size_t k = n ? (size_t)((rot * (p + 1)) % n) : 0;
    memcpy(dst, src + k * es, (n - k) * es);
    memcpy(dst + (n - k) * es, src, k * es);
}

void kevo_channel__set_inputs(kevo_channel_inputs *in, const kevo_call_data *d, uint64_t rot)
{
    const kevo_task *t = in->task;
    kevo_runner_desc *desc = in->desc;
    for (size_t p = 0; p < t->nparams; p++) {
        desc->scalar[p] = d->scalar[p];
        desc->bytes[p] = t->params[p].role == KEVO_ROLE_SCALAR ? 0 : d->bytes[p];
        desc->data_off[p] = 0;
        if (t->params[p].role == KEVO_ROLE_SCALAR)
            continue;
        desc->data_off[p] = data_off(&in->lay, p, d->bytes[p]);
        if (t->params[p].role != KEVO_ROLE_IN)
            continue;
        unsigned char *dst = in->map + in->lay.off[p] + desc->data_off[p];
        size_t es = kevo_dtype_size(t->params[p].type);
        copy_rotated(dst, d->data[p], (size_t)d->count[p], es, rot, p);
    }
    desc->seq++;
}

static void fill_pattern(unsigned char *dst, size_t n, kevo_dtype type)
{
    uint64_t pat;
    if (type == KEVO_DT_F32)
        pat = 0x7fc000007fc00000ULL; /* NaN, NaN */
    else if (type == KEVO_DT_F64)
        pat = 0x7ff8000000000000ULL;
    else
        pat = 0x5A5A5A5A5A5A5A5AULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        memcpy(dst + i, &pat, 8);
    for (; i < n; i++)
        dst[i] = ((unsigned char *)&pat)[i % 8];
}

static unsigned char canary_bytes[FRONT_CANARY];

static void canaries_write(unsigned char *region, uint64_t off, uint64_t bytes, uint64_t len)
{
    uint64_t front = off < FRONT_CANARY ? off : FRONT_CANARY;
    memset(region + off - front, CANARY, front);
    memset(region + off + bytes, CANARY, len - off - bytes);
}

static bool canaries_intact(const unsigned char *region, uint64_t off, uint64_t bytes,
                            uint64_t len)
{
    uint64_t front = off < FRONT_CANARY ? off : FRONT_CANARY;
    return !memcmp(region + off - front, canary_bytes, front) &&
           !memcmp(region + off + bytes, canary_bytes, len - off - bytes);
}

static void drain(kevo_child *c, size_t *stray)
{
    char junk[256];
    ssize_t n;
    while ((n = read(c->from_child, junk, sizeof(junk))) > 0)
        *stray += (size_t)n;
}

int kevo_channel__start(kevo_channel_runner **out, kevo_child **child_out,
                        kevo_channel_inputs *in, const char *const *argv,
                        const kevo_sandbox_opts *opts, bool publish)
{
    *out = NULL;
    if (child_out)
        *child_out = NULL;
    memset(canary_bytes, CANARY, sizeof(canary_bytes));
    kevo_channel_runner *r = calloc(1, sizeof(*r));
    if (!r)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    r->in = in;
    r->fd = -1;
    r->publish = publish;
    int error = memfd_sized(&r->fd, &r->map, in->out_total, "kevo-outputs");
    if (error < 0) {
        free(r);
        return error;
    }
    r->map_len = in->out_total;
    kevo_sandbox_opts o = *opts;
    int fds[2] = {in->ro_fd, r->fd};
    o.pass_fds = fds;
    o.npass_fds = 2;
    if ((error = kevo_sandbox_spawn(&r->child, argv, &o)) < 0)
        goto fail;
    fcntl(r->child->from_child, F_SETFL, O_NONBLOCK);
    char hello[8];
    if ((error = kevo_child_read(r->child, hello, 8, 30)) < 0)
        goto fail;
    if (memcmp(hello, KEVO_RUNNER_HELLO, 8)) {
        error = kevo_error_set(KEVO_EIO, "the runner sent a bad greeting");
        goto fail;
    }
    const kevo_task *t = in->task;
    uint32_t n = (uint32_t)t->nparams;
    uint8_t roles[KEVO_RUNNER_MAX_PARAMS], types[KEVO_RUNNER_MAX_PARAMS];
    for (size_t i = 0; i < t->nparams; i++) {
        roles[i] = (uint8_t)t->params[i].role;
        types[i] = (uint8_t)t->params[i].type;
    }
    char ack;
    if ((error = kevo_child_write(r->child, &n, 4)) < 0 ||
        (error = kevo_child_write(r->child, roles, n)) < 0 ||
        (error = kevo_child_write(r->child, types, n)) < 0 ||
        (error = kevo_child_write(r->child, in->lay.off, 8 * n)) < 0 ||
        (error = kevo_child_write(r->child, in->lay.len, 8 * n)) < 0 ||
        (error = kevo_child_read(r->child, &ack, 1, 30)) < 0)
        goto fail;
    if (ack != 'r') {
        error = kevo_error_set(KEVO_EIO, "the runner broke the protocol during setup");
        goto fail;
    }
    if ((error = kevo_child_pause(r->child)) < 0)
        goto fail;
    *out = r;
    return 0;
fail:
    if (child_out) {
        *child_out = r->child;
        r->child = NULL;
    }
    kevo_channel__free(r);
    return error;
}

void kevo_channel__free(kevo_channel_runner *r)
{
    if (!r)
        return;
    if (r->child) {
        if (!r->child->exited) {
            /* a runner that is stopped or misbehaving gets no second chance */
            kevo_child_kill(r->child);
        }
        kevo_child_free(r->child);
    }
    if (r->map)
        munmap(r->map, r->map_len);
    if (r->fd >= 0)
        close(r->fd);
    free(r);
}

kevo_child *kevo_channel__child(kevo_channel_runner *r)
{
    return r ? r->child : NULL;
}

/* Resume, send cmd, read `len` reply bytes within timeout_s, stop again. */
static int round_trip(kevo_channel_runner *r, char cmd, void *reply, size_t len,
                      double timeout_s, int64_t *ns)
{
    kevo_child *c = r->child;
    size_t stray = 0;
    drain(c, &stray);
    if (stray)
        return kevo_error_set(KEVO_EIO, "the runner sent %zu bytes kevo did not ask for (the "
                              "kernel wrote to kevo's channel)", stray);
    int error;
    int64_t t0 = kevo_now_ns();
    if ((error = kevo_child_resume(c)) < 0)
        return error;
    if ((error = kevo_child_write(c, &cmd, 1)) < 0 ||
        (error = kevo_child_read(c, reply, len, timeout_s)) < 0) {
        if (error == KEVO_ETIMEOUT)
            kevo_child_kill(c);
        return error;
    }
    *ns = kevo_now_ns() - t0;
    if ((error = kevo_child_pause(c)) < 0)
        return error;
    if (c->exited)
        return kevo_error_set(KEVO_EIO, "the runner exited right after the call");
    drain(c, &stray);
    if (stray)
        return kevo_error_set(KEVO_EIO, "the runner sent %zu bytes more than its reply (the "
                              "kernel wrote to kevo's channel)", stray);
    return 0;
}

int kevo_channel__noop(kevo_channel_runner *r, int64_t *ns)
{
    char n;
    int error = round_trip(r, 'N', &n, 1, 5, ns);
    if (error == 0 && n != 'n')
        error = kevo_error_set(KEVO_EIO, "the runner broke the protocol (bad no-op reply)");
    return error;
}

int kevo_channel__call(kevo_channel_runner *r, const kevo_call_data *d, uint64_t rot,
                       double timeout_s, int64_t *ns, uint32_t *bad)
{
    const kevo_task *t = r->in->task;
    const kevo_runner_desc *desc = r->in->desc;
    *bad = UINT32_MAX;
    for (size_t p = 0; p < t->nparams; p++) {
        kevo_role role = t->params[p].role;
        if (!is_out(role))
            continue;
        unsigned char *region = r->map + r->in->lay.off[p];
        unsigned char *dst = region + desc->data_off[p];
        if (role == KEVO_ROLE_OUT)
            fill_pattern(dst, desc->bytes[p], t->params[p].type);
        else
            copy_rotated(dst, d->data[p], (size_t)d->count[p],
                         kevo_dtype_size(t->params[p].type), rot, p);
        canaries_write(region, desc->data_off[p], desc->bytes[p], r->in->lay.len[p]);
    }
    unsigned char reply[5];
    int error = round_trip(r, 'X', reply, 5, timeout_s, ns);
    if (error < 0)
        return error;
    uint32_t dev_bad;
    memcpy(&dev_bad, reply + 1, 4);
    if (reply[0] != 'd' ||
        (dev_bad != UINT32_MAX && (dev_bad >= t->nparams || !is_out(t->params[dev_bad].role))))
        return kevo_error_set(KEVO_EIO, "the runner broke the protocol (a malformed reply)");
    if (r->publish) { /* untimed: the outputs into kevo's memory */
        int64_t publish_ns;
        char p;
        if ((error = round_trip(r, 'P', &p, 1, timeout_s, &publish_ns)) < 0)
            return error;
        if (p != 'p')
            return kevo_error_set(KEVO_EIO, "the runner broke the protocol (bad publish reply)");
    }
    *bad = dev_bad;
    for (size_t p = 0; p < t->nparams && *bad == UINT32_MAX; p++) {
        if (!is_out(t->params[p].role))
            continue;
        if (!canaries_intact(r->map + r->in->lay.off[p], desc->data_off[p], desc->bytes[p],
                             r->in->lay.len[p]))
            *bad = (uint32_t)p;
    }
    return 0;
}

/* The index-th CPU of `allowed` (modulo their number), skipping `skip`
 * when another is there. */
static int nth_cpu(const cpu_set_t *allowed, int index, int skip)
{
    int n = CPU_COUNT(allowed) - (skip >= 0 && CPU_ISSET(skip, allowed) ? 1 : 0);
    if (n <= 0)
        return skip;
    int want = index % n;
    for (int cpu = 0, k = -1; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, allowed) && cpu != skip && ++k == want)
            return cpu;
    return skip;
}

int kevo_channel__pin(kevo_channel_runner *r, int slot)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
        return kevo_error_set(KEVO_EIO, "sched_getaffinity: %s", strerror(errno));
    int n = CPU_COUNT(&allowed);
    bool spread = slot >= 0 && n > 1;
    int main_cpu = spread ? nth_cpu(&allowed, slot, -1) : -1;
    if (spread) {
        CPU_ZERO(&one);
        CPU_SET(main_cpu, &one);
    } else {
        one = allowed;
    }
    if (sched_setaffinity(r->child->pid, sizeof(one), &one) < 0)
        return kevo_error_set(KEVO_EIO, "sched_setaffinity: %s", strerror(errno));
    /* The candidate's own threads (an OpenMP team): one each on the other
     * CPUs in turn. Left to the scheduler, a worker woken while the other
     * core was busy for a moment shared the main thread's core for the
     * whole call (a 2-thread sigmoid at about half speed in 2 of 30
     * measurements beside another kevo run, none in 20 after;
     * docs/performance.md). At most 256 threads are placed; past that the
     * scheduler's choice stands. The walk costs about 8 us a call (two
     * threads), outside the timed region. */
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)r->child->pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* gone, or no /proc: the main thread's pin stands */
    struct dirent *e;
    int k = 0;
    while ((e = readdir(d)) && k < 256) {
        char *endp;
        long tid = strtol(e->d_name, &endp, 10);
        if (*endp || tid <= 0 || tid == (long)r->child->pid)
            continue;
        if (spread) {
            CPU_ZERO(&one);
            CPU_SET(nth_cpu(&allowed, k, main_cpu), &one);
        }
        (void)sched_setaffinity((pid_t)tid, sizeof(one), &one); /* may have exited */
        k++;
    }
    closedir(d);
    return 0;
}

const void *kevo_channel__output(const kevo_channel_runner *r, size_t p)
{
    return r->map + r->in->lay.off[p] + r->in->desc->data_off[p];
}
