/*
 * verify/ref_cache.h - the reference's results kept between processes
 * (internal to verify/).
 *
 * An entry holds what the evaluator's start-up computes from the task's
 * reference: its built runner, its outputs for every (size set, seed), its
 * call times, and the output checks' findings. It is keyed by everything
 * those depend on: the task folder's files, the harness, the compiler and
 * its flags, the seed count, kevo's version and this machine's CPU. The
 * inputs an entry was computed from are checked by hash at every use, so
 * an input generator that changes can never pair new inputs with old
 * outputs. Any doubt about an entry (size, checksum, inputs, a folder that
 * is not private to this user) is a miss: the cache can make an
 * evaluation faster, never change its verdict.
 *
 * The folder: kevo_cache_dir("reference") (util.h: mode 0700, owned by
 * kevo's user, never bound into a sandbox; KEVO_CACHE=off turns it off).
 * KEVO_CACHE_MAX_MB (default 4096) bounds it, oldest entries go first.
 */
#ifndef KEVO_VERIFY_REF_CACHE_H
#define KEVO_VERIFY_REF_CACHE_H

#include "kevo/task.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kevo_ref_cached {
    size_t nids, nparams;
    uint64_t *input_hash;   /* [nids] kevo_ref_cache__inputs_hash of each call's inputs */
    double *call_s;         /* [nids] the reference's call times */
    uint64_t *bytes;        /* [nids * nparams] output bytes; 0 where not an output */
    const void **out;       /* [nids * nparams] the outputs (NULL where not an output) */
    int near_constant;
    char *problems;         /* the output checks' findings, one per line */
    double build_s;
    void *map;              /* on load: the mapped entry the outputs point into */
    size_t map_len;
} kevo_ref_cached;

/* The cache folder (created private on first use), or NULL when the cache
 * is off or the folder is not safe to use. Borrowed. */
const char *kevo_ref_cache__dir(void);

/* The key of a task's reference results on this machine (32 hex digits and
 * a NUL). Negative when the task's files cannot be read (then no cache). */
int kevo_ref_cache__key(char key[33], const kevo_task *task, int seeds);

/* The hash that ties a cached result to its inputs: every in/inout buffer
 * and every scalar of one call. */
uint64_t kevo_ref_cache__inputs_hash(const kevo_task *task, const kevo_call_data *d);

/* Allocate the arrays of c for nids x nparams (fields zeroed). */
int kevo_ref_cache__alloc(kevo_ref_cached *c, size_t nids, size_t nparams);
/* Free what c holds (the mapping included). */
void kevo_ref_cache__release(kevo_ref_cached *c);

/* 1 on a hit: c filled (release it), the cached runner copied to
 * runner_dst (mode 0755). 0 on a miss, whatever the reason. */
int kevo_ref_cache__load(kevo_ref_cached *c, const char *key, const char *runner_dst);

/* Remove an entry (one that does not match the inputs it claims). */
void kevo_ref_cache__drop(const char *key);

/* Store an entry (atomically: a killed kevo leaves no half entry); best
 * effort, so a full disk only costs the next evaluation its speed-up.
 * Returns 0 or a negative error for tests. */
int kevo_ref_cache__store(const char *key, const char *runner_path, const kevo_ref_cached *c);

#endif
