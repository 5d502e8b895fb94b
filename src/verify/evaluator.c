/*
 * verify/evaluator.c - runs the four gates on a candidate, in order, each
 * one only when the one before passed:
 *
 *   anti-hack   static analysis of the source (gate_antihack.c)
 *   (audit)     the caller's judge, when the options carry one: the
 *               agent's model-based auditor, fail-closed (gate_audit.c)
 *   compile     the backend builds a runner; object-level rule breaks
 *               (constructors, forbidden symbols) make the verdict
 *               `rejected` (gate_compile.c)
 *   correctness every size set x seeds; inputs are sent to the runner,
 *               outputs come back and are compared here, in kevo's process,
 *               against the reference's outputs computed at start-up by a
 *               separate runner (reference.c); the candidate never sees
 *               them (gate_correctness.c)
 *   latency     reference and candidate calls interleaved (ABBA order) on
 *               rotating input sets until both sides have enough samples;
 *               outputs are re-checked on every timed call (gate_latency.c)
 *
 * It takes the machine's timing slot (gate_common.c) around the gates that
 * run kernel code. It judges and reports; it never decides what to try
 * next. Must not: hold a gate's logic (each is in its gate_*.c).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void kevo_eval_options_default(kevo_eval_options *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = "c";
    o->seeds = 3;
    o->min_time_s = 1.0;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->max_time_s = 30;
}

int kevo_evaluator_eval(kevo_evaluator *ev, const char *source, kevo_eval_result *r)
{
    memset(r, 0, sizeof(*r));
    double start = kevo_now_s();
    kevo_verify__cand c = {.ev = ev, .source = source, .r = r};
    int slot = 0; /* 1: timing slot held shared, 2: exclusive */
    kevo_verify_busy_begin(); /* the static gate parses: CPU, not a wait */
    int error = kevo_verify__gate_antihack(&c);
    kevo_verify_busy_end(); /* the auditor may wait on a model */
    if (error < 0 || c.decided || (error = kevo_verify__gate_audit(&c)) < 0 || c.decided)
        goto done;
    kevo_verify__slot_shared();
    slot = 1;
    if ((error = kevo_verify__gate_compile(&c)) < 0 || c.decided)
        goto done;
    if ((error = kevo_verify__gate_correctness(&c)) < 0 || c.decided)
        goto done;
    if (ev->opts.skip_latency) {
        kevo_buf_puts(&c.fb, "Correct on every size set and seed (latency not measured).");
        kevo_verify__decide(&c, KEVO_VERDICT_CORRECT);
        goto done;
    }
    kevo_verify__slot_exclusive();
    slot = 2;
    error = kevo_verify__gate_latency(&c);
done:
    if (c.fatal < 0) {
        kevo_eval_result_clear(r); /* the judge failed: no verdict, the caller's error */
    } else if (error < 0) { /* kevo's own failure: a verdict all the same */
        kevo_buf_printf(&c.fb, "kevo failed (not the candidate's fault): %s", kevo_error_last());
        kevo_verify__decide(&c, KEVO_VERDICT_INFRA_ERROR);
        error = 0;
    }
    if (slot == 2 && ev->ref)
        (void)kevo_channel__pin(ev->ref, -1); /* the next candidate's calls run anywhere */
    kevo_channel__free(c.runner); /* killed and reaped while the slot is held:
                                   * its teardown is not another's measurement's */
    if (slot)
        kevo_verify__slot_release();
    kevo_child_free(c.dead);
    kevo_build_result_clear(&c.build);
    if (c.dir && !ev->opts.keep_workdir)
        kevo_rmtree(c.dir);
    free(c.dir);
    kevo_buf_free(&c.fb);
    r->seconds = kevo_now_s() - start;
    return c.fatal < 0 ? c.fatal : error;
}
