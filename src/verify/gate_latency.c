/*
 * verify/gate_latency.c - gate 4: reference and candidate calls
 * interleaved (ABBA order), every round on fresh inputs (a stored set of
 * the timed sizes, rotated by a random amount, the same for both sides),
 * until both sides have enough samples; the candidate's outputs of every
 * timed call are checked against the reference's for the very same
 * inputs. kevo's clock runs around each call, less the channel's own cost.
 * With two candidates (kevo eval --versus) both run in every round, the
 * order rotating over the three sides, and each round's pair of times
 * gives one ratio; a candidate that fails leaves the other measured alone.
 * The caller holds the timing slot exclusively. Must not: time anything
 * outside the slot, or let a candidate that is wrong on a timed call pass.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One candidate's side of the measurement. */
typedef struct cand_side {
    kevo_verify__cand *c;
    kevo_gate *g;
    double *s;   /* [cap] its samples, us */
    int n;
    double sum;  /* timed seconds */
    double last; /* this round's sample, us (negative: none) */
    int checked; /* rounds whose outputs were compared */
} cand_side;

typedef struct timing {
    double g0;
    int cap;          /* samples per side at most */
    cand_side side[2];
    int nside;        /* candidates measured (1, or 2 side by side) */
    double *rs;       /* [cap] the reference's samples, us */
    int nr;
    double rsum;
    double *ratio;    /* [cap] with two candidates: the second's time over the first's, per round */
    int nratio;
    void **ref_out;   /* [nparams] the reference's outputs of this round */
    kevo_rng rot_rng;
    bool swap;   /* the candidates' places in the rotation, drawn per measurement */
    bool openmp; /* a candidate runs threads: every call on one CPU */
    int cpu;     /* then the one CPU slot of every call */
} timing;

/* Whether side k still takes part (no verdict decided during timing). */
static bool live(const timing *tm, int k)
{
    return !tm->side[k].c->decided;
}

/* One call of round i: on the reference (k < 0) or candidate k, its sample
 * kept once past the two warm-up rounds. Negative when the reference fails
 * (kevo's problem); a candidate's failure is decided. */
static int timed_call(kevo_evaluator *ev, timing *tm, int i, uint64_t rot, int k)
{
    const kevo_task *t = ev->task;
    uint32_t id = (uint32_t)(i % ev->seeds);
    const kevo_call_data *d = ev->data[id];
    int64_t ns;
    uint32_t bad;
    bool ref_side = k < 0;
    cand_side *cs = ref_side ? NULL : &tm->side[k];
    kevo_channel_runner *r = ref_side ? ev->ref : cs->c->runner;
    /* Best effort (timing stays valid without): the calls of a round on
     * one CPU, rotating, so that no side keeps the better core. With a
     * threaded candidate every side stays on one CPU, drawn per
     * measurement, instead: pinning moves only the main thread, and a
     * rotating one kept landing on the CPU its OpenMP worker had last run
     * on, so that the two shared a core until the scheduler moved one (a
     * 2-thread sigmoid: median 3.1-3.4 ms rotating, 2.0-2.1 ms fixed, its
     * fastest call 1.9-2.0 ms in both; docs/performance.md). The reference
     * stays on the same CPU, so that -fopenmp buys a single-threaded
     * kernel no core of its own. The candidate's other threads go one
     * each to the other CPUs (kevo_channel__pin). */
    (void)kevo_channel__pin(r, tm->openmp ? tm->cpu : i);
    int error = kevo_channel__call(r, d, rot, ref_side ? t->timeout_s
                                                       : kevo_verify__call_timeout(ev, id),
                                   &ns, &bad);
    if (error < 0 && ref_side)
        return kevo_error_set(KEVO_EINFRA, "the reference runner failed during timing: %s",
                              kevo_error_last());
    if (error < 0) {
        kevo_buf msg = {0};
        kevo_verdict v =
            kevo_verify__runner_failure(&msg, kevo_channel__child(cs->c->runner), error);
        kevo_buf_printf(&cs->g->messages, "timed call: %s\n", msg.ptr);
        kevo_buf_printf(&cs->c->fb, "Failed during timing (repeated calls): %s.", msg.ptr);
        kevo_buf_free(&msg);
        kevo_verify__decide(cs->c, v);
        return 0;
    }
    if (!ref_side && bad != UINT32_MAX) {
        kevo_buf_printf(&cs->c->fb, "Crashed during timing: wrote outside '%s'.",
                        t->params[bad].name);
        kevo_verify__decide(cs->c, KEVO_VERDICT_CRASH);
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
    else if (!ref_side && cs->n < tm->cap)
        cs->s[cs->n++] = us, cs->sum += us * 1e-6, cs->last = us;
    return 0;
}

/* Candidate k's outputs of round i against the reference's. */
static void check_round(kevo_evaluator *ev, timing *tm, int i, int k)
{
    cand_side *cs = &tm->side[k];
    uint32_t id = (uint32_t)(i % ev->seeds);
    kevo_buf mism = {0};
    kevo_verify__compare_call(&mism, ev->task, ev->data[id], (const void *const *)tm->ref_out,
                              cs->c->runner);
    cs->checked++;
    if (mism.len) {
        kevo_buf_printf(&cs->g->messages, "timed call %d (sizes of the timed set, seed %u, "
                        "inputs rotated): wrong results\n%s", i + 1, id, mism.ptr);
        kevo_buf_printf(&cs->c->fb, "Correct on the checked calls but wrong on timed call %d "
                                    "(the outputs of every timed call are compared with the "
                                    "reference's on the same inputs; a kernel must compute "
                                    "every call in full):\n%s", i + 1, mism.ptr);
        kevo_verify__decide(cs->c, KEVO_VERDICT_INCORRECT);
    }
    kevo_buf_free(&mism);
}

/* Round i: the reference and every live candidate on the same fresh
 * inputs, in an order that changes each round (ABBA with one candidate),
 * then each candidate's outputs against the reference's. */
static int timed_round(kevo_evaluator *ev, timing *tm, int i)
{
    uint32_t id = (uint32_t)(i % ev->seeds);
    uint64_t rot = 1 + kevo_rng_next(&tm->rot_rng) % 1000003u; /* same for every side */
    kevo_channel__set_inputs(ev->inputs, ev->data[id], rot);
    int order[3], n = 0;
    order[n++] = -1;
    for (int j = 0; j < tm->nside; j++) {
        int k = tm->swap ? tm->nside - 1 - j : j;
        tm->side[k].last = -1;
        if (live(tm, k))
            order[n++] = k;
    }
    /* the rotation runs one way for n rounds, then the other way: with
     * two candidates the six rounds of a cycle are the six orders, so no
     * side always follows the same one */
    int start = i % n, back = (i / n) % 2;
    for (int j = 0; j < n; j++) {
        int k = order[back ? (start - j + n) % n : (start + j) % n];
        int error = timed_call(ev, tm, i, rot, k);
        if (error < 0)
            return error;
    }
    /* the comparison reads the outputs, and what it read last is still in
     * the caches when the next round writes them again: each side is
     * compared last every other round */
    for (int j = 0; j < tm->nside; j++) {
        int k = i % 2 ? tm->nside - 1 - j : j;
        if (live(tm, k))
            check_round(ev, tm, i, k);
    }
    if (tm->nside == 2 && live(tm, 0) && live(tm, 1) && tm->side[0].last > 0 &&
        tm->side[1].last >= 0 && tm->nratio < tm->cap)
        tm->ratio[tm->nratio++] = tm->side[1].last / tm->side[0].last;
    return 0;
}

/* Enough: the minimum count, and either the minimum timed time per side or
 * three times that in wall time (buffer refills between calls are not
 * timed); or a cap reached. Over the live candidates. */
static bool timing_done(const kevo_evaluator *ev, const timing *tm)
{
    const kevo_eval_options *o = &ev->opts;
    double wall = kevo_now_s() - tm->g0;
    bool count = tm->nr >= o->min_samples, time = tm->rsum >= o->min_time_s;
    bool capped = tm->nr >= tm->cap, few = tm->nr < 3;
    for (int k = 0; k < tm->nside; k++) {
        if (!live(tm, k))
            continue;
        const cand_side *cs = &tm->side[k];
        count = count && cs->n >= o->min_samples;
        time = time && cs->sum >= o->min_time_s;
        capped = capped || cs->n >= tm->cap;
        few = few || cs->n < 3;
    }
    bool enough = count && (time || wall >= 3 * o->min_time_s);
    return enough || capped || (wall > o->max_time_s && !few);
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

/* The statistics into candidate k's result, its gate's message and its
 * verdict. */
static void timing_report(kevo_verify__cand *c, timing *tm, int k)
{
    cand_side *cs = &tm->side[k];
    kevo_latency *L = &c->r->latency;
    double *rs = malloc((size_t)(tm->nr > 0 ? tm->nr : 1) * sizeof(double));
    if (rs) /* kevo_stats sorts: the reference's samples stay in round order for the other side */
        memcpy(rs, tm->rs, (size_t)tm->nr * sizeof(double));
    kevo_stats(cs->s, cs->n, &L->candidate_us, &L->candidate_min_us, &L->candidate_cv);
    kevo_stats(rs ? rs : tm->rs, tm->nr, &L->reference_us, &L->reference_min_us,
               &L->reference_cv);
    free(rs);
    L->candidate_samples = cs->n;
    L->reference_samples = tm->nr;
    L->speedup = L->candidate_us > 0 ? L->reference_us / L->candidate_us : 0;
    snprintf(L->baseline, sizeof(L->baseline), "%s",
             c->ev->task->torch ? "torch-eager-cpu" : "c-reference");
    c->r->has_latency = true;
    roofline_report(c);
    cs->g->ok = true;
    cs->g->seconds = kevo_now_s() - tm->g0;
    kevo_buf_printf(&cs->g->messages, "candidate median %.1f us (min %.1f, cv %.1f%%, %d "
                    "calls); reference median %.1f us (min %.1f, cv %.1f%%, %d calls); "
                    "outputs of all %d timed rounds checked\n",
                    L->candidate_us, L->candidate_min_us, 100 * L->candidate_cv, cs->n,
                    L->reference_us, L->reference_min_us, 100 * L->reference_cv, tm->nr,
                    cs->checked);
    kevo_buf_printf(&c->fb, "Correct. Median latency %.1f us against %s %.1f us: "
                    "speedup %.2fx.", L->candidate_us,
                    c->ev->task->torch ? "PyTorch eager's" : "the reference's", L->reference_us,
                    L->speedup);
    kevo_verify__decide(c, KEVO_VERDICT_CORRECT);
}

/* The quartile q (0..1) of n sorted samples, interpolated. */
static double quantile(const double *s, int n, double q)
{
    double x = q * (n - 1);
    int lo = (int)x;
    return lo + 1 < n ? s[lo] + (x - lo) * (s[lo + 1] - s[lo]) : s[lo];
}

int kevo_verify__gate_latency_n(kevo_verify__cand **cands, int n, kevo_pair_latency *pair)
{
    kevo_evaluator *ev = cands[0]->ev;
    int error = 0;
    timing tm = {0};
    if (n < 1 || n > 2)
        return kevo_error_set(KEVO_EINVAL, "latency: %d candidates (1 or 2)", n);
    tm.g0 = kevo_now_s();
    tm.cap = ev->opts.max_samples > 0 ? ev->opts.max_samples : 1000;
    tm.nside = n;
    tm.rs = calloc((size_t)tm.cap, sizeof(double));
    tm.ratio = calloc((size_t)tm.cap, sizeof(double));
    tm.ref_out = calloc(ev->task->nparams, sizeof(void *));
    bool oom = !tm.rs || !tm.ratio || !tm.ref_out;
    for (int k = 0; k < n; k++) {
        tm.side[k].c = cands[k];
        tm.side[k].g = kevo_verify__gate_open(cands[k]->r, "latency");
        tm.side[k].s = calloc((size_t)tm.cap, sizeof(double));
        oom = oom || !tm.side[k].s;
        tm.openmp = tm.openmp || cands[k]->build.openmp;
    }
    if (oom) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_rng_seed(&tm.rot_rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)ev->serial * 7919u + 17u));
    tm.cpu = (int)(kevo_rng_next(&tm.rot_rng) % 4096u);
    /* Which candidate the rotation takes first: drawn, so that no effect
     * of the order attaches to one input file. (Two copies of relu's
     * reference lean towards the second file either way, 0.86-1.01 over
     * six measurements; the cause is not found: docs/evaluation.md.) */
    tm.swap = n == 2 && (kevo_rng_next(&tm.rot_rng) & 1);
    for (int i = 0;; i++) {
        if ((error = timed_round(ev, &tm, i)) < 0)
            goto done;
        bool any = false;
        for (int k = 0; k < n; k++)
            any = any || live(&tm, k);
        if (!any)
            goto done;
        if (timing_done(ev, &tm))
            break;
    }
    for (int k = 0; k < n; k++)
        if (live(&tm, k))
            timing_report(cands[k], &tm, k);
    if (pair && n == 2 && tm.nratio > 0 && cands[0]->r->verdict == KEVO_VERDICT_CORRECT &&
        cands[1]->r->verdict == KEVO_VERDICT_CORRECT) {
        kevo_sort_doubles(tm.ratio, (size_t)tm.nratio);
        pair->measured = true;
        pair->rounds = tm.nratio;
        pair->ratio = quantile(tm.ratio, tm.nratio, 0.5);
        pair->ratio_q1 = quantile(tm.ratio, tm.nratio, 0.25);
        pair->ratio_q3 = quantile(tm.ratio, tm.nratio, 0.75);
    }
done:
    for (int k = 0; k < n; k++)
        free(tm.side[k].s);
    free(tm.rs);
    free(tm.ratio);
    free(tm.ref_out);
    return error;
}

int kevo_verify__gate_latency(kevo_verify__cand *c)
{
    return kevo_verify__gate_latency_n(&c, 1, NULL);
}
