/*
 * verify/channel.h - kevo's side of the runner channel (harness/protocol.h):
 * shared-memory buffers that kevo fills, poisons and reads itself, calls
 * timed by kevo from outside with the runner stopped before and after, and
 * replies validated byte by byte. Internal to src/verify.
 *
 * One kevo_channel_inputs per evaluator (the input memfd, read-only to
 * every runner); one kevo_channel_runner per runner process (its own
 * output memfd). Between calls every runner is stopped (SIGSTOP): it sees
 * a call's inputs only once kevo's clock runs, and cannot touch its
 * outputs once kevo has read the reply.
 */
#ifndef KEVO_VERIFY_CHANNEL_H
#define KEVO_VERIFY_CHANNEL_H

#include "kevo/sandbox.h"
#include "kevo/task.h"

typedef struct kevo_channel_inputs kevo_channel_inputs;
typedef struct kevo_channel_runner kevo_channel_runner;

/* The input memfd, sized for the largest of `nsets` call data sets. */
int kevo_channel__inputs_new(kevo_channel_inputs **out, const kevo_task *task,
                             kevo_call_data *const *sets, size_t nsets);
void kevo_channel__inputs_free(kevo_channel_inputs *in);

/* Start argv (argv[0]: the program) in the sandbox with the channel's
 * fds, do the handshake and leave it stopped. publish: the runner keeps a
 * call's outputs until kevo asks for them with 'P', after the timed round
 * trip (the torch runner: docs/torch-tasks.md). On failure after the spawn, *child_out
 * (if not NULL) receives the dead child for diagnosis (the caller frees it
 * with kevo_child_free); *out is NULL. */
int kevo_channel__start(kevo_channel_runner **out, kevo_child **child_out,
                        kevo_channel_inputs *in, const char *const *argv,
                        const kevo_sandbox_opts *opts, bool publish);
/* Sends 'Q', kills what is left, frees. Accepts NULL. */
void kevo_channel__free(kevo_channel_runner *r);
kevo_child *kevo_channel__child(kevo_channel_runner *r);

/* Write one call's inputs (every input rotated by (rot * (p + 1)) mod count
 * elements; 0 = as stored) and its descriptor. Every runner must be
 * stopped (they are, between calls). */
void kevo_channel__set_inputs(kevo_channel_inputs *in, const kevo_call_data *d, uint64_t rot);

/* One call on runner r with the inputs last set: poison its outputs, copy
 * its inout buffers (rotated the same way), write the canaries, then time
 * SIGCONT + 'X' -> reply, stop it, validate the reply and the canaries.
 * *ns: kevo's clock around the call. *bad: a param written outside its
 * buffer, UINT32_MAX when none. Returns 0, KEVO_ETIMEOUT (the call did not
 * return within timeout_s; the runner is killed), or KEVO_EIO (it died,
 * or broke the protocol: kevo_error_last() says which). */
int kevo_channel__call(kevo_channel_runner *r, const kevo_call_data *d, uint64_t rot,
                       double timeout_s, int64_t *ns, uint32_t *bad);
/* A no-op round trip ('N'), timed the same way: the channel's overhead. */
int kevo_channel__noop(kevo_channel_runner *r, int64_t *ns);
/* Pin runner r's main thread to the slot-th CPU kevo may use (modulo their
 * number), and each of its other threads to one of the other CPUs in turn;
 * slot < 0 releases them all to every CPU. The latency gate runs both
 * sides of a round on the same CPU and moves on each round, so neither side
 * keeps a faster core, or the core whose cache kevo just filled with the
 * round's inputs, to itself. */
int kevo_channel__pin(kevo_channel_runner *r, int slot);
/* kevo's view of out/inout param p of the last call (borrowed). */
const void *kevo_channel__output(const kevo_channel_runner *r, size_t p);

#endif
