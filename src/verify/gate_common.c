/*
 * verify/gate_common.c - what the gates share: the machine's timing slot,
 * a candidate's verdict, the private folders the gates build in. Must not:
 * hold a gate's logic or call a gate.
 */
#include "internal.h"

#include <sys/stat.h>

/* One timing slot per machine: every build and run of kernel code holds the
 * lock shared; a latency measurement holds it exclusively, so with
 * `kevo run --jobs N` nothing else of kevo's runs while a speedup is
 * measured. */
static pthread_rwlock_t timing_slot = PTHREAD_RWLOCK_INITIALIZER;

void kevo_verify__slot_shared(void)
{
    pthread_rwlock_rdlock(&timing_slot);
}

void kevo_verify__slot_exclusive(void)
{
    pthread_rwlock_unlock(&timing_slot);
    pthread_rwlock_wrlock(&timing_slot);
}

void kevo_verify__slot_release(void)
{
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

