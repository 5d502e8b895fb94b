/*
 * verify/gate_common.c - what the gates share: the machine's timing slot,
 * a candidate's verdict, the private folders the gates build in. Must not:
 * hold a gate's logic or call a gate.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One timing slot per machine: every build and run of kernel code holds it
 * shared; a latency measurement holds it exclusively, so nothing else of
 * kevo's runs while a speedup is measured: not another thread of this
 * process (`kevo run --jobs N`: the rwlock) and not another kevo process
 * on this machine (`kevo worker` x N, a `kevo eval` beside a run: locks on
 * one lock file per machine). The file locks are open-file-description
 * locks (F_OFD_SETLKW) on two bytes of it, each holder with its own
 * descriptor, so holders in one process are told apart too: byte 1 is the
 * slot; byte 0 a turnstile a measurement holds while it waits for the
 * shared holders to drain, so that new builds queue behind it instead of
 * starving it. The file is $KEVO_TIMING_LOCK, default
 * /tmp/kevo-timing-slot.lock (mode 0666: every user's kevo shares it).
 * When it cannot be opened the slot is process-wide only, said once. */
#ifdef PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
/* a measurement waiting for the slot goes before new shared holders of
 * this process, as the turnstile does across processes (no thread takes
 * it shared twice: holds nest in slot_depth) */
static pthread_rwlock_t timing_slot = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
#else
static pthread_rwlock_t timing_slot = PTHREAD_RWLOCK_INITIALIZER;
#endif
static __thread int slot_fd = -1;
static pthread_once_t slot_warn_once = PTHREAD_ONCE_INIT;
static char slot_warn_path[256];
static int slot_warn_errno;

static void slot_warn(void)
{
    fprintf(stderr, "kevo: cannot open the machine's timing lock %s (%s): latency "
                    "measurements of other kevo processes may overlap with this one's\n",
            slot_warn_path, strerror(slot_warn_errno));
}

const char *kevo_verify__slot_path(void)
{
    const char *env = getenv("KEVO_TIMING_LOCK");
    return env && *env ? env : "/tmp/kevo-timing-slot.lock";
}

enum { TURNSTILE = 0, SLOT = 1 };

/* type: F_RDLCK, F_WRLCK or F_UNLCK on one byte, waiting when needed. */
static void byte_lock(int byte, short type)
{
    if (slot_fd < 0)
        return;
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};
    while (fcntl(slot_fd, F_OFD_SETLKW, &fl) < 0 && errno == EINTR)
        ;
}

static void slot_file_open(void)
{
    if (slot_fd >= 0)
        return;
    const char *path = kevo_verify__slot_path();
    slot_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (slot_fd < 0) {
        slot_warn_errno = errno;
        snprintf(slot_warn_path, sizeof(slot_warn_path), "%s", path);
        pthread_once(&slot_warn_once, slot_warn);
        return;
    }
    (void)fchmod(slot_fd, 0666); /* whatever the umask: other users' kevo too */
}

/* A thread's holds nest: kevo's own CPU work (kevo_verify_busy_begin)
 * holds the slot shared around an evaluation that takes it shared too. The
 * lock is taken by the first hold and let go by the last; the exclusive
 * hold of a measurement falls back to shared when an outer hold remains. */
static __thread int slot_depth;
static __thread bool slot_is_exclusive;

void kevo_verify__slot_shared(void)
{
    if (slot_depth++ > 0)
        return;
    pthread_rwlock_rdlock(&timing_slot);
    slot_file_open();
    byte_lock(TURNSTILE, F_WRLCK); /* behind a measurement that waits */
    byte_lock(SLOT, F_RDLCK);
    byte_lock(TURNSTILE, F_UNLCK);
}

void kevo_verify__slot_exclusive(void)
{
    if (slot_is_exclusive)
        return;
    /* not atomic: shared is let go, then exclusive awaited (two holders
     * converting at once cannot deadlock); the turnstile keeps new shared
     * holders out meanwhile */
    byte_lock(SLOT, F_UNLCK);
    pthread_rwlock_unlock(&timing_slot);
    pthread_rwlock_wrlock(&timing_slot);
    slot_file_open();
    byte_lock(TURNSTILE, F_WRLCK);
    byte_lock(SLOT, F_WRLCK);
    byte_lock(TURNSTILE, F_UNLCK);
    slot_is_exclusive = true;
}

void kevo_verify__slot_release(void)
{
    if (slot_depth <= 0)
        return;
    if (--slot_depth > 0) {
        if (slot_is_exclusive) { /* back to the outer hold's shared: let go,
                                    * then taken as every holder takes it
                                    * (the rwlock before the file, never
                                    * the other way round) */
            byte_lock(SLOT, F_UNLCK);
            pthread_rwlock_unlock(&timing_slot);
            slot_is_exclusive = false;
            slot_depth--;
            kevo_verify__slot_shared();
        }
        return;
    }
    if (slot_fd >= 0) {
        byte_lock(SLOT, F_UNLCK);
        close(slot_fd);
        slot_fd = -1;
    }
    pthread_rwlock_unlock(&timing_slot);
    slot_is_exclusive = false;
}

void kevo_verify_busy_begin(void)
{
    kevo_verify__slot_shared();
}

void kevo_verify_busy_end(void)
{
    kevo_verify__slot_release();
}

int kevo_verify__make_dir(char **out, const char *root, const char *name)
{
    *out = kevo_path_join(root, name);
    int error = kevo_mkdirs(*out, 0755);
    chmod(*out, 0755);
    return error;
}

void kevo_verify__decide(kevo_verify__cand *c, kevo_verdict v)
{
    c->r->verdict = v;
    c->r->feedback = kevo_buf_detach(&c->fb);
    c->decided = true;
}

