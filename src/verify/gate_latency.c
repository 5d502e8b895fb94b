/*
 * verify/gate_latency.c - gate 4: reference and candidate calls
 * interleaved (ABBA order), every round on fresh inputs (a stored set of
 * the timed sizes, rotated by a random amount, the same for both sides),
 * until both sides have enough samples; the candidate's outputs of every
 * timed call are checked against the reference's for the very same
 * inputs. kevo's clock runs around each call, less the channel's own cost.
 * The caller holds the timing slot exclusively. Must not: time anything
 * outside the slot, or let a candidate that is wrong on a timed call pass.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct timing {
    kevo_gate *g;
    double g0;
    int cap;          /* samples per side at most */
    double *cs, *rs;  /* [cap] candidate's and reference's samples, us */
    void **ref_out;   /* [nparams] the reference's outputs of this round */
    int nc, nr, checked;
    double csum, rsum; /* timed seconds per side */
    kevo_rng rot_rng;
    int cpu; /* with a candidate that runs threads: the one CPU slot of every call */
} timing;

/* One side of round i: a call on the reference or the candidate, its
 * sample kept once past the two warm-up rounds. Negative when the
 * reference fails (kevo's problem); a candidate's failure is decided. */
static int timed_call(kevo_verify__cand *c, timing *tm, int i, uint64_t rot, bool ref_side)
{
    kevo_evaluator *ev = c->ev;
    const kevo_task *t = ev->task;
    uint32_t id = (uint32_t)(i % ev->seeds);
    const kevo_call_data *d = ev->data[id];
    int64_t ns;
    uint32_t bad;
    kevo_channel_runner *r = ref_side ? ev->ref : c->runner;
    /* Best effort (timing stays valid without): both calls of a round on
     * one CPU, rotating, so that neither side keeps the better core. With
     * a threaded candidate both sides stay on one CPU, drawn per
     * measurement, instead: pinning moves only the main thread, and a
     * rotating one kept landing on the CPU its OpenMP worker had last run
     * on, so that the two shared a core until the scheduler moved one (a
     * 2-thread sigmoid: median 3.1-3.4 ms rotating, 2.0-2.1 ms fixed, its
     * fastest call 1.9-2.0 ms in both; docs/performance.md). The reference
     * stays on the same CPU, so that -fopenmp buys a single-threaded
     * kernel no core of its own. The candidate's other threads go one
     * each to the other CPUs (kevo_channel__pin). */
    (void)kevo_channel__pin(r, c->build.openmp ? tm->cpu : i);
    int error = kevo_channel__call(r, d, rot, ref_side ? t->timeout_s
                                                       : kevo_verify__call_timeout(ev, id),
                                   &ns, &bad);
    if (error < 0 && ref_side)
        return kevo_error_set(KEVO_EINFRA, "the reference runner failed during timing: %s",
                              kevo_error_last());
    if (error < 0) {
        kevo_buf msg = {0};
        kevo_verdict v = kevo_verify__runner_failure(&msg, kevo_channel__child(c->runner), error);
        kevo_buf_printf(&tm->g->messages, "timed call: %s\n", msg.ptr);
        kevo_buf_printf(&c->fb, "Failed during timing (repeated calls): %s.", msg.ptr);
        kevo_buf_free(&msg);
        kevo_verify__decide(c, v);
        return 0;
    }
    if (!ref_side && bad != UINT32_MAX) {
        kevo_buf_printf(&c->fb, "Crashed during timing: wrote outside '%s'.",
                        t->params[bad].name);
        kevo_verify__decide(c, KEVO_VERDICT_CRASH);
        return 0;
    }
    if (ref_side)
        for (size_t p = 0; p < t->nparams; p++)
            tm->ref_out[p] = (void *)kevo_channel__output(ev->ref, p);
    if (i < 2) /* warm-up */
        return 0;
    /* kevo's clock around the call, less the channel's own cost */
    double us = ((double)ns - (ref_side ? ev->channel_ns : ev->cand_channel_ns)) * 1e-3;
    if (us < 0)
        us = 0;
    if (ref_side && tm->nr < tm->cap)
        tm->rs[tm->nr++] = us, tm->rsum += us * 1e-6;
    else if (!ref_side && tm->nc < tm->cap)
        tm->cs[tm->nc++] = us, tm->csum += us * 1e-6;
    return 0;
}

/* Round i: both sides on the same fresh inputs, then the candidate's
 * outputs against the reference's. */
static int timed_round(kevo_verify__cand *c, timing *tm, int i)
{
    kevo_evaluator *ev = c->ev;
    uint32_t id = (uint32_t)(i % ev->seeds);
    const kevo_call_data *d = ev->data[id];
    uint64_t rot = 1 + kevo_rng_next(&tm->rot_rng) % 1000003u; /* same for both sides */
    kevo_channel__set_inputs(ev->inputs, d, rot);
    for (int side = 0; side < 2; side++) {
        int error = timed_call(c, tm, i, rot, (side == 0) == (i % 2 == 0));
        if (error < 0 || c->decided)
            return error;
    }
    kevo_buf mism = {0};
    kevo_verify__compare_call(&mism, ev->task, d, (const void *const *)tm->ref_out, c->runner);
    tm->checked++;
    if (mism.len) {
        kevo_buf_printf(&tm->g->messages, "timed call %d (sizes of the timed set, seed %u, "
                        "inputs rotated): wrong results\n%s", i + 1, id, mism.ptr);
        kevo_buf_printf(&c->fb, "Correct on the checked calls but wrong on timed call %d "
                                "(the outputs of every timed call are compared with the "
                                "reference's on the same inputs; a kernel must compute every "
                                "call in full):\n%s", i + 1, mism.ptr);
        kevo_verify__decide(c, KEVO_VERDICT_INCORRECT);
    }
    kevo_buf_free(&mism);
    return 0;
}

/* Enough: the minimum count, and either the minimum timed time per side or
 * three times that in wall time (buffer refills between calls are not
 * timed); or a cap reached. */
static bool timing_done(const kevo_evaluator *ev, const timing *tm)
{
    const kevo_eval_options *o = &ev->opts;
    double wall = kevo_now_s() - tm->g0;
    bool enough = tm->nc >= o->min_samples && tm->nr >= o->min_samples &&
                  ((tm->csum >= o->min_time_s && tm->rsum >= o->min_time_s) ||
                   wall >= 3 * o->min_time_s);
    bool capped = tm->nc >= tm->cap || tm->nr >= tm->cap ||
                  (kevo_now_s() - tm->g0 > o->max_time_s && tm->nc >= 3 && tm->nr >= 3);
    return enough || capped;
}

/* The kernel against the roofline, when the task's work is known: the
 * peaks are read from `kevo calibrate`'s cache (none: achieved rates only). */
static void roofline_report(kevo_verify__cand *c)
{
    double flops = 0, bytes = 0;
    kevo_peaks peaks;
    bool have_peaks = kevo_peaks_load(&peaks) == 0;
    if (kevo_task_work(&flops, &bytes, c->ev->task) == 0 &&
        kevo_roofline_compute(&c->r->roofline, flops, bytes, c->r->latency.candidate_us,
                              have_peaks ? &peaks : NULL) == 0)
        c->r->has_roofline = true;
    kevo_error_clear();
}

/* The statistics into the result, the gate's message and the verdict. */
static void timing_report(kevo_verify__cand *c, timing *tm)
{
    kevo_latency *L = &c->r->latency;
    kevo_stats(tm->cs, tm->nc, &L->candidate_us, &L->candidate_min_us, &L->candidate_cv);
    kevo_stats(tm->rs, tm->nr, &L->reference_us, &L->reference_min_us, &L->reference_cv);
    L->candidate_samples = tm->nc;
    L->reference_samples = tm->nr;
    L->speedup = L->candidate_us > 0 ? L->reference_us / L->candidate_us : 0;
    snprintf(L->baseline, sizeof(L->baseline), "%s",
             c->ev->task->torch ? "torch-eager-cpu" : "c-reference");
    c->r->has_latency = true;
    roofline_report(c);
    tm->g->ok = true;
    tm->g->seconds = kevo_now_s() - tm->g0;
    kevo_buf_printf(&tm->g->messages, "candidate median %.1f us (min %.1f, cv %.1f%%, %d "
                    "calls); reference median %.1f us (min %.1f, cv %.1f%%, %d calls); "
                    "outputs of all %d timed rounds checked\n",
                    L->candidate_us, L->candidate_min_us, 100 * L->candidate_cv, tm->nc,
                    L->reference_us, L->reference_min_us, 100 * L->reference_cv, tm->nr,
                    tm->checked);
    kevo_buf_printf(&c->fb, "Correct. Median latency %.1f us against %s %.1f us: "
                    "speedup %.2fx.", L->candidate_us,
                    c->ev->task->torch ? "PyTorch eager's" : "the reference's", L->reference_us,
                    L->speedup);
    kevo_verify__decide(c, KEVO_VERDICT_CORRECT);
}

int kevo_verify__gate_latency(kevo_verify__cand *c)
{
    kevo_evaluator *ev = c->ev;
    int error = 0;
    timing tm = {0};
    tm.g = kevo_verify__gate_open(c->r, "latency");
    tm.g0 = kevo_now_s();
    tm.cap = ev->opts.max_samples > 0 ? ev->opts.max_samples : 1000;
    tm.cs = calloc((size_t)tm.cap, sizeof(double));
    tm.rs = calloc((size_t)tm.cap, sizeof(double));
    tm.ref_out = calloc(ev->task->nparams, sizeof(void *));
    if (!tm.cs || !tm.rs || !tm.ref_out) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_rng_seed(&tm.rot_rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)ev->serial * 7919u + 17u));
    tm.cpu = (int)(kevo_rng_next(&tm.rot_rng) % 4096u);
    for (int i = 0;; i++) {
        if ((error = timed_round(c, &tm, i)) < 0 || c->decided)
            goto done;
        if (timing_done(ev, &tm))
            break;
    }
    timing_report(c, &tm);
done:
    free(tm.cs);
    free(tm.rs);
    free(tm.ref_out);
    return error;
}
