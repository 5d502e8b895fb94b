/*
 * verify/gate_common.c - what the gates share: the machine's timing slot,
 * a candidate's verdict, the private folders the gates build in. Must not:
 * hold a gate's logic or call a gate.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* One timing slot per machine: every build and run of kernel code holds it
 * shared; a latency measurement holds it exclusively, so nothing else of
 * kevo's runs while a speedup is measured: not another thread of this
 * process (`kevo run --jobs N`: the rwlock) and not another kevo process
 * on this machine (`kevo worker` x N, a `kevo eval` beside a run: flock on
 * one lock file per machine, each holder with its own descriptor, so
 * shared and exclusive holders of the same process are told apart too).
 * The file is $KEVO_TIMING_LOCK, default /tmp/kevo-timing-slot.lock (mode
 * 0666: every user's kevo shares it). When it cannot be opened the slot
 * is process-wide only, said once on stderr. */
static pthread_rwlock_t timing_slot = PTHREAD_RWLOCK_INITIALIZER;
static __thread int slot_fd = -1;
static pthread_once_t slot_warn_once = PTHREAD_ONCE_INIT;
static char slot_warn_path[256];

static void slot_warn(void)
{
    fprintf(stderr, "kevo: cannot open the machine's timing lock %s (%s): latency "
                    "measurements of other kevo processes may overlap with this one's\n",
            slot_warn_path, strerror(errno));
}

const char *kevo_verify__slot_path(void)
{
    const char *env = getenv("KEVO_TIMING_LOCK");
    return env && *env ? env : "/tmp/kevo-timing-slot.lock";
}

static void slot_file_lock(int how)
{
    if (slot_fd < 0) {
        const char *path = kevo_verify__slot_path();
        slot_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (slot_fd < 0) {
            snprintf(slot_warn_path, sizeof(slot_warn_path), "%s", path);
            pthread_once(&slot_warn_once, slot_warn);
            return;
        }
        (void)fchmod(slot_fd, 0666); /* whatever the umask: other users' kevo too */
    }
    while (flock(slot_fd, how) < 0 && errno == EINTR)
        ;
}

void kevo_verify__slot_shared(void)
{
    pthread_rwlock_rdlock(&timing_slot);
    slot_file_lock(LOCK_SH);
}

void kevo_verify__slot_exclusive(void)
{
    /* neither conversion is atomic: shared is let go, then exclusive
     * awaited (two holders converting at once cannot deadlock) */
    if (slot_fd >= 0)
        flock(slot_fd, LOCK_UN);
    pthread_rwlock_unlock(&timing_slot);
    pthread_rwlock_wrlock(&timing_slot);
    slot_file_lock(LOCK_EX);
}

void kevo_verify__slot_release(void)
{
    if (slot_fd >= 0) {
        flock(slot_fd, LOCK_UN);
        close(slot_fd);
        slot_fd = -1;
    }
    pthread_rwlock_unlock(&timing_slot);
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

