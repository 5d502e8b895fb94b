/*
 * verify/internal.h - what the evaluator's files share: the
 * evaluator itself (the reference's inputs, outputs and runner), the state
 * of one candidate on its way through the gates, and the functions that
 * cross those files. Internal to src/verify; must not be included from
 * another module, and must not grow public API (that is kevo/verify.h).
 *
 * Who does what:
 *   evaluator.c         kevo_evaluator_eval: the gates in order, one cleanup
 *   gate_antihack.c     gate 1, the one call into the static analyser
 *   gate_compile.c      gate 2, and whether the backend can run here
 *   gate_correctness.c  gate 3, every size set x seed, smallest first
 *   gate_latency.c      gate 4, interleaved timing with checked outputs
 *   reference.c         kevo_evaluator_new/free: build or load, run
 *   reference_inputs.c  the seeded inputs, generated on worker threads
 *   reference_check.c   what the reference's outputs say about the task
 *   runner.c            a sandboxed runner: start it, say how it failed
 *   call.c              one call: its name in messages, its timeout, its
 *                       outputs against the expected ones
 *   result.c            the eval result: gates, clear, its one JSON form
 */
#ifndef KEVO_VERIFY_EVALUATOR_INTERNAL_H
#define KEVO_VERIFY_EVALUATOR_INTERNAL_H

#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/verify.h"
#include "channel.h"
#include "ref_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct kevo_evaluator {
    const kevo_task *task;
    kevo_eval_options opts;
    const kevo_backend *be;
    char *root;
    kevo_channel_inputs *inputs;  /* shared, read-only to every runner */
    kevo_channel_runner *ref;
    size_t nsets;
    int seeds;
    size_t nids;
    kevo_call_data **data; /* [nids] */
    void ***expected;      /* [nids][nparams] */
    double *ref_call_s;    /* [nids] */
    size_t *order;         /* [nids] correctness order: smallest calls first */
    double channel_ns;     /* median no-op round trip of the reference runner */
    double cand_channel_ns; /* what is subtracted from a candidate's call: channel_ns,
                               0 when the reference runs elsewhere than a C runner
                               (torch: Python's round trip is not a C runner's) */
    char *torch_python, *torch_tree; /* torch tasks: the interpreter and its venv */
    double ref_build_s;
    uint64_t runner_mem;
    int serial;
    kevo_buf ref_problems;
    int near_constant;
    char cache_key[33];    /* empty: no reference cache for this evaluator */
    uint64_t *input_hash;  /* [nids] when caching: ties outputs to their inputs */
    kevo_ref_cached cached;
    bool from_cache;       /* expected[][] point into cached's mapping */
};

/* One candidate on its way through the gates (kevo_evaluator_eval owns it
 * and frees what it holds at its one exit). A gate returns negative only
 * for kevo's own failures (the pipeline turns them into infra_error); a
 * gate that reaches a verdict calls kevo_verify__decide and returns 0. */
typedef struct kevo_verify__cand {
    kevo_evaluator *ev;
    const char *source;
    kevo_eval_result *r;
    kevo_buf fb;                 /* the feedback, detached into r by decide */
    bool decided;                /* a verdict is set: no further gate runs */
    char *dir;                   /* the candidate's build folder */
    kevo_build_result build;
    kevo_channel_runner *runner; /* the candidate's runner, from gate 3 on */
    kevo_child *dead;            /* a runner that died while starting */
    int fatal;                   /* negative: a failure that is no verdict (the auditor's) */
} kevo_verify__cand;

/* An out or inout parameter: one the kernel writes and the gates check. */
static inline bool kevo_verify__is_output(const kevo_task *t, size_t p)
{
    return t->params[p].role == KEVO_ROLE_OUT || t->params[p].role == KEVO_ROLE_INOUT;
}

/* ---- evaluator.c ---- */
/* The machine's timing slot: every build and run of kernel code and
 * kevo's own CPU work (kevo_verify_busy_begin) holds it shared; a latency
 * measurement holds it exclusively. A thread's holds nest (released as
 * often as taken); exclusive falls back to shared on release while an
 * outer hold remains. */
void kevo_verify__slot_shared(void);
void kevo_verify__slot_exclusive(void); /* from shared to exclusive */
void kevo_verify__slot_release(void);
/* The machine-wide lock file behind the slot ($KEVO_TIMING_LOCK or
 * /tmp/kevo-timing-slot.lock). */
const char *kevo_verify__slot_path(void);
/* Set the verdict and hand c->fb to the result as its feedback. */
void kevo_verify__decide(kevo_verify__cand *c, kevo_verdict v);
/* root/name, created with mode 0755; *out is the caller's (also on error). */
int kevo_verify__make_dir(char **out, const char *root, const char *name);

/* ---- the gates (gate_*.c) ---- */
int kevo_verify__gate_antihack(kevo_verify__cand *c);
/* gate_audit.c: the options' judge, when there is one. */
int kevo_verify__gate_audit(kevo_verify__cand *c);
int kevo_verify__gate_compile(kevo_verify__cand *c);
int kevo_verify__gate_correctness(kevo_verify__cand *c);
int kevo_verify__gate_latency(kevo_verify__cand *c);
/* n (1 or 2) candidates timed in the same rounds; with two, *pair gets
 * their ratio when both end correct (pair may be NULL). */
int kevo_verify__gate_latency_n(kevo_verify__cand **cands, int n, kevo_pair_latency *pair);

/* ---- result.c ---- */
/* Open the next gate of r (ran, not yet ok); borrowed. */
kevo_gate *kevo_verify__gate_open(kevo_eval_result *r, const char *name);

/* ---- runner.c ---- */
/* Start a runner in dir with the evaluator's limits (be NULL: the
 * reference's C runner), its OpenMP teams of `threads` threads (0: one per
 * CPU). *out and *dead as kevo_channel__start. */
int kevo_verify__runner_start(kevo_channel_runner **out, kevo_child **dead,
                              const kevo_evaluator *ev, const kevo_backend *be,
                              const char *runner, const char *dir, int threads);
/* How a runner failed, as a verdict + message. error: what the channel
 * returned; its message is still in kevo_error_last(). */
kevo_verdict kevo_verify__runner_failure(kevo_buf *msg, kevo_child *c, int error);

/* ---- call.c ---- */
void kevo_verify__describe_sizes(kevo_buf *b, const kevo_sizes *s);
/* "sizes n=.., m=.., seed k" of call id. */
void kevo_verify__describe_call(kevo_buf *where, const kevo_evaluator *ev, size_t id);
/* How long a candidate's call id may take. */
double kevo_verify__call_timeout(const kevo_evaluator *ev, size_t id);
/* The bytes of all the buffers of one call. */
uint64_t kevo_verify__call_bytes(const kevo_task *t, const kevo_call_data *d);
/* Compare every out/inout buffer of r's last call against expected[p];
 * mismatch descriptions go to *mism (empty when all match). */
void kevo_verify__compare_call(kevo_buf *mism, const kevo_task *t, const kevo_call_data *d,
                               const void *const *expected, kevo_channel_runner *r);

/* ---- reference_inputs.c ---- */
/* Input generation for every (size set, seed) on worker threads; they
 * write ev->data[] (and ev->input_hash[] when caching). */
typedef struct kevo_verify__inputs_gen {
    kevo_evaluator *ev;
    pthread_t th[16];
    int nth;
    pthread_mutex_t lock;
    size_t next;
    char *why;  /* the first failure's message (kevo_error_last is per thread) */
    int error;
} kevo_verify__inputs_gen;

void kevo_verify__inputs_start(kevo_verify__inputs_gen *g, kevo_evaluator *ev);
/* Wait for the workers; the first one's failure becomes this thread's
 * error. */
int kevo_verify__inputs_join(kevo_verify__inputs_gen *g);
/* Wait for the workers and release what they shared, keeping the caller's
 * error; a no-op once done or never started. */
void kevo_verify__inputs_stop(kevo_verify__inputs_gen *g);

/* ---- reference_check.c ---- */
/* What the reference's outputs say about the task (NaN/Inf, near-constant
 * outputs, a loose atol): ev->ref_problems and ev->near_constant. */
void kevo_verify__reference_check(kevo_evaluator *ev);

#endif
