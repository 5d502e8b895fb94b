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

/* The gates that judge the text: anti-hack (kevo's own CPU work: the
 * slot held shared around it) and the audit (which may wait on a model:
 * outside the slot). */
static int static_gates(kevo_verify__cand *c)
{
    kevo_verify_busy_begin();
    int error = kevo_verify__gate_antihack(c);
    kevo_verify_busy_end();
    if (error < 0 || c->decided)
        return error;
    return kevo_verify__gate_audit(c);
}

/* Compile and correctness; the caller holds the slot shared. */
static int run_gates(kevo_verify__cand *c)
{
    int error = kevo_verify__gate_compile(c);
    if (error < 0 || c->decided || (error = kevo_verify__gate_correctness(c)) < 0 || c->decided)
        return error;
    if (c->ev->opts.skip_latency) {
        kevo_buf_puts(&c->fb, "Correct on every size set and seed (latency not measured).");
        kevo_verify__decide(c, KEVO_VERDICT_CORRECT);
    }
    return 0;
}

/* A candidate's end, while the slot (if any) is still held: kevo's own
 * failure becomes the infra_error verdict, the runner is killed and
 * reaped (its teardown is not another's measurement's), the build folder
 * removed. Returns what the evaluation returns. */
static int close_cand(kevo_verify__cand *c, int error, double start)
{
    kevo_evaluator *ev = c->ev;
    if (c->fatal < 0) {
        kevo_eval_result_clear(c->r); /* the judge failed: no verdict, the caller's error */
    } else if (error < 0) { /* kevo's own failure: a verdict all the same */
        kevo_buf_printf(&c->fb, "kevo failed (not the candidate's fault): %s", kevo_error_last());
        kevo_verify__decide(c, KEVO_VERDICT_INFRA_ERROR);
        error = 0;
    }
    kevo_channel__free(c->runner);
    c->runner = NULL;
    kevo_child_free(c->dead);
    c->dead = NULL;
    kevo_build_result_clear(&c->build);
    if (c->dir && !ev->opts.keep_workdir)
        kevo_rmtree(c->dir);
    free(c->dir);
    c->dir = NULL;
    kevo_buf_free(&c->fb);
    c->r->seconds = kevo_now_s() - start;
    return c->fatal < 0 ? c->fatal : error;
}

int kevo_evaluator_eval(kevo_evaluator *ev, const char *source, kevo_eval_result *r)
{
    memset(r, 0, sizeof(*r));
    double start = kevo_now_s();
    kevo_verify__cand c = {.ev = ev, .source = source, .r = r};
    int slot = 0; /* 1: timing slot held shared, 2: exclusive */
    int error = static_gates(&c);
    if (error < 0 || c.decided)
        goto done;
    kevo_verify__slot_shared();
    slot = 1;
    if ((error = run_gates(&c)) < 0 || c.decided)
        goto done;
    kevo_verify__slot_exclusive();
    slot = 2;
    error = kevo_verify__gate_latency(&c);
done:
    if (slot == 2 && ev->ref)
        (void)kevo_channel__pin(ev->ref, -1); /* the next candidate's calls run anywhere */
    error = close_cand(&c, error, start);
    if (slot)
        kevo_verify__slot_release();
    return error;
}

int kevo_evaluator_eval_pair(kevo_evaluator *ev, const char *source_a, const char *source_b,
                             kevo_eval_result *a, kevo_eval_result *b, kevo_pair_latency *pair)
{
    memset(a, 0, sizeof(*a));
    memset(b, 0, sizeof(*b));
    memset(pair, 0, sizeof(*pair));
    double start = kevo_now_s();
    kevo_verify__cand ca = {.ev = ev, .source = source_a, .r = a};
    kevo_verify__cand cb = {.ev = ev, .source = source_b, .r = b};
    kevo_verify__cand *both[2] = {&ca, &cb};
    int err[2] = {0, 0}, slot = 0;
    for (int k = 0; k < 2; k++)
        err[k] = static_gates(both[k]);
    if ((err[0] == 0 && !ca.decided) || (err[1] == 0 && !cb.decided)) {
        kevo_verify__slot_shared();
        slot = 1;
        for (int k = 0; k < 2; k++)
            if (err[k] == 0 && !both[k]->decided)
                err[k] = run_gates(both[k]);
    }
    /* the latency: the two together when both are still undecided, else
     * whichever is, alone */
    kevo_verify__cand *timed[2];
    int n = 0;
    for (int k = 0; k < 2; k++)
        if (err[k] == 0 && !both[k]->decided)
            timed[n++] = both[k];
    if (n > 0) {
        kevo_verify__slot_exclusive();
        slot = 2;
        int error = kevo_verify__gate_latency_n(timed, n, n == 2 ? pair : NULL);
        if (error < 0) /* kevo's own failure (the reference's): both are infra */
            for (int k = 0; k < n; k++)
                err[timed[k] == &ca ? 0 : 1] = error;
    }
    if (slot == 2 && ev->ref)
        (void)kevo_channel__pin(ev->ref, -1);
    err[0] = close_cand(&ca, err[0], start);
    err[1] = close_cand(&cb, err[1], start);
    if (slot)
        kevo_verify__slot_release();
    return err[0] < 0 ? err[0] : err[1];
}
