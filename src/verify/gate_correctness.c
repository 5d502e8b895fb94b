/*
 * verify/gate_correctness.c - gate 3: the candidate's runner starts in the
 * sandbox and is called on every size set x seed, smallest calls first;
 * its outputs come back over the channel and are compared here, in kevo's
 * process, against the reference's (the candidate never sees them). A
 * timeout, a crash, a write outside an output or a wrong result ends it
 * with that verdict. Must not: time anything (gate_latency.c does).
 */
#include "internal.h"

#include <stdio.h>

/* The runner died (or could not be started) before its first call. */
static void died_at_start(kevo_verify__cand *c, kevo_gate *g, int error)
{
    kevo_buf msg = {0};
    kevo_verdict v = c->dead ? kevo_verify__runner_failure(&msg, c->dead, error)
                             : KEVO_VERDICT_INFRA_ERROR;
    /* A device runner that dies during its setup (device, context,
     * prebuilt program; no kernel has run) failed on the machine's
     * driver or on the sandbox's rules for it, not on the kernel. */
    if (c->dead && c->ev->be->runner_env)
        v = KEVO_VERDICT_INFRA_ERROR;
    kevo_buf_printf(&g->messages, "the program died before the first call: %s\n",
                    c->dead ? kevo_buf_cstr(&msg) : kevo_error_last());
    kevo_buf_printf(&c->fb, "The program died before the kernel was called: %s",
                    c->dead ? kevo_buf_cstr(&msg) : kevo_error_last());
    kevo_buf_free(&msg);
    kevo_verify__decide(c, v);
}

/* Call id on runner (the candidate's) and judge that one call; decides on
 * any failure, with `why` (may be NULL) after the feedback. */
static void check_call(kevo_verify__cand *c, kevo_gate *g, kevo_channel_runner *runner,
                       size_t id, const kevo_buf *where, const char *why)
{
    const kevo_evaluator *ev = c->ev;
    const kevo_task *t = ev->task;
    const kevo_call_data *d = ev->data[id];
    int64_t ns;
    uint32_t bad;
    kevo_buf mism = {0};
    kevo_channel__set_inputs(ev->inputs, d, 0);
    int error = kevo_channel__call(runner, d, 0, kevo_verify__call_timeout(ev, id), &ns, &bad);
    if (error < 0) {
        kevo_buf msg = {0};
        kevo_verdict v =
            kevo_verify__runner_failure(&msg, kevo_channel__child(runner), error);
        kevo_buf_printf(&g->messages, "%s: %s\n", where->ptr, msg.ptr);
        if (v == KEVO_VERDICT_TIMEOUT)
            kevo_buf_printf(&c->fb, "Timed out on %s: the call did not return within %.1f s "
                            "(the reference takes %.3f s).", where->ptr,
                            kevo_verify__call_timeout(ev, id), ev->ref_call_s[id]);
        else
            kevo_buf_printf(&c->fb, "Crashed on %s: %s.", where->ptr, msg.ptr);
        kevo_buf_free(&msg);
        if (why)
            kevo_buf_printf(&c->fb, " %s", why);
        kevo_verify__decide(c, v);
        return;
    }
    if (bad != UINT32_MAX) {
        kevo_buf_printf(&g->messages, "%s: wrote outside '%s'\n", where->ptr,
                        t->params[bad].name);
        kevo_buf_printf(&c->fb, "Crashed on %s: the kernel wrote outside output '%s' (before "
                        "its start or past its end).", where->ptr, t->params[bad].name);
        if (why)
            kevo_buf_printf(&c->fb, " %s", why);
        kevo_verify__decide(c, KEVO_VERDICT_CRASH);
        return;
    }
    kevo_verify__compare_call(&mism, t, d, (const void *const *)ev->expected[id], runner);
    if (mism.len) {
        kevo_buf_printf(&g->messages, "%s:\n%s", where->ptr, mism.ptr);
        kevo_buf_printf(&c->fb, "Wrong results on %s:\n%s", where->ptr, mism.ptr);
        if (why)
            kevo_buf_printf(&c->fb, "%s%s", mism.ptr[mism.len - 1] == '\n' ? "" : "\n", why);
        kevo_verify__decide(c, KEVO_VERDICT_INCORRECT);
    }
    kevo_buf_free(&mism);
}

/* The race probe. A kernel whose threads write one element, or read what
 * another writes, can pass every call above: with one thread per CPU the
 * threads run their shares at the same moments, and the colliding parts
 * (the ends of neighbouring shares) rarely meet. With more threads than
 * CPUs the shares are cut elsewhere and preempted threads start late, so
 * they meet more often. So a threaded candidate that passed runs again in
 * two runners of its own, with n + 1 and 2n (at most n + 16) threads on n
 * CPUs, over the check sets' calls (small and quick: the timed set only
 * where there is no other; its calls are checked again while timed), in
 * passes: at least RACE_MIN_PASSES, then more while the runner's passes
 * have used less than RACE_BUDGET_S. What it catches and what it misses
 * (a collision confined to a few elements at the shares' ends, by luck):
 * docs/evaluation.md, "The race probe". A candidate can tell these runners
 * from the timed one (omp_get_max_threads()) but gains nothing by it: it
 * must be correct in both. */
enum { RACE_RUNNERS = 2, RACE_MIN_PASSES = 2, RACE_MAX_PASSES = 16 };
#define RACE_BUDGET_S 0.05

static int race_threads(int runner)
{
    int n = kevo_cpu_count();
    return n + (runner == 0 ? 1 : n < 16 ? n : 16); /* each thread a stack of its own */
}

/* One pass of the probe over runner r (the k-th). */
static void race_pass(kevo_verify__cand *c, kevo_gate *g, kevo_channel_runner *r, int k,
                      int pass, const char *why)
{
    const kevo_evaluator *ev = c->ev;
    size_t seeds = (size_t)ev->seeds;
    for (size_t i = 0; i < ev->nids && !c->decided; i++) {
        size_t id = ev->order[i];
        /* the timed set only where there is no other, in the first pass */
        if (id < seeds && (ev->nsets > 1 || pass > 0 || id != (size_t)k % seeds))
            continue;
        kevo_buf where = {0};
        kevo_verify__describe_call(&where, ev, id);
        kevo_buf_printf(&where, " (%d threads, pass %d)", race_threads(k), pass + 1);
        check_call(c, g, r, id, &where, why);
        kevo_buf_free(&where);
    }
}

static int race_probe(kevo_verify__cand *c, kevo_gate *g)
{
    kevo_evaluator *ev = c->ev;
    int error = 0, passes[RACE_RUNNERS] = {0};
    double t0 = kevo_now_s();
    for (int k = 0; k < RACE_RUNNERS && !c->decided; k++) {
        int threads = race_threads(k), n = kevo_cpu_count();
        char why[320];
        snprintf(why, sizeof(why),
                 "That call ran in a second runner with %d threads on %d CPUs; with %d it was "
                 "correct: the result depends on how many threads run or how they interleave "
                 "(a data race: two threads write one element, or one reads what another "
                 "writes; or work cut for a fixed number of threads).",
                 threads, n, n);
        kevo_channel_runner *r = NULL;
        kevo_child *dead = NULL;
        error = kevo_verify__runner_start(&r, &dead, ev, ev->be, c->build.runner_path, c->dir,
                                          threads);
        if (error < 0 && dead) { /* the candidate's verdict */
            kevo_buf msg = {0};
            kevo_verdict v = kevo_verify__runner_failure(&msg, dead, error);
            kevo_buf_printf(&g->messages, "race probe (%d threads): died before the first "
                            "call: %s\n", threads, kevo_buf_cstr(&msg));
            kevo_buf_printf(&c->fb, "The program died before the kernel was called, in a "
                            "second runner with %d threads: %s", threads, kevo_buf_cstr(&msg));
            kevo_buf_free(&msg);
            kevo_verify__decide(c, v);
            error = 0;
        }
        kevo_child_free(dead);
        if (error < 0 || c->decided)
            break;
        /* stop before a pass that, as long as the last, would overrun */
        double spent = 0, last = 0;
        for (int pass = 0; pass < RACE_MAX_PASSES && !c->decided; pass++) {
            if (pass >= RACE_MIN_PASSES && spent + last > RACE_BUDGET_S)
                break;
            double p0 = kevo_now_s();
            race_pass(c, g, r, k, pass, why);
            last = kevo_now_s() - p0;
            spent += last;
            passes[k]++;
        }
        kevo_channel__free(r);
    }
    if (error == 0 && !c->decided)
        kevo_buf_printf(&g->messages, "race probe: the check calls again with %d threads (%d "
                        "passes) and %d (%d), all match (%.2f s)\n", race_threads(0),
                        passes[0], race_threads(1), passes[1], kevo_now_s() - t0);
    return error;
}

int kevo_verify__gate_correctness(kevo_verify__cand *c)
{
    kevo_evaluator *ev = c->ev;
    const kevo_task *t = ev->task;
    kevo_gate *g = kevo_verify__gate_open(c->r, "correctness");
    double g0 = kevo_now_s();
    int error = kevo_verify__runner_start(&c->runner, &c->dead, ev, ev->be,
                                          c->build.runner_path, c->dir, 0);
    if (error < 0) {
        died_at_start(c, g, error); /* the candidate's verdict, not kevo's error */
        error = 0;
        goto done;
    }
    for (size_t k = 0; k < ev->nids && !c->decided; k++) {
        kevo_buf where = {0};
        kevo_verify__describe_call(&where, ev, ev->order[k]);
        check_call(c, g, c->runner, ev->order[k], &where, NULL);
        kevo_buf_free(&where);
    }
    if (c->decided)
        goto done;
    kevo_buf_printf(&g->messages, "%zu size sets x %d seeds match (atol %g, rtol %g)\n",
                    ev->nsets, ev->seeds, t->atol, t->rtol);
    /* threads are OpenMP's only (the static gate refuses pthread_create);
     * a device backend's races are not the CPU's to provoke */
    if (c->build.openmp && !ev->be->runner_env &&
        ((error = race_probe(c, g)) < 0 || c->decided))
        goto done;
    g->ok = true;
    g->seconds = kevo_now_s() - g0;
done:
    return error;
}
