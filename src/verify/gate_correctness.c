/*
 * verify/gate_correctness.c - gate 3: the candidate's runner starts in the
 * sandbox and is called on every size set x seed, smallest calls first;
 * its outputs come back over the channel and are compared here, in kevo's
 * process, against the reference's (the candidate never sees them). A
 * timeout, a crash, a write outside an output or a wrong result ends it
 * with that verdict. Must not: time anything (gate_latency.c does).
 */
#include "internal.h"

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

/* Call id on the candidate and judge that one call; decides on any
 * failure. */
static void check_call(kevo_verify__cand *c, kevo_gate *g, size_t id, kevo_buf *where)
{
    const kevo_evaluator *ev = c->ev;
    const kevo_task *t = ev->task;
    const kevo_call_data *d = ev->data[id];
    int64_t ns;
    uint32_t bad;
    kevo_buf mism = {0};
    kevo_channel__set_inputs(ev->inputs, d, 0);
    int error = kevo_channel__call(c->runner, d, 0, kevo_verify__call_timeout(ev, id), &ns, &bad);
    if (error < 0) {
        kevo_buf msg = {0};
        kevo_verdict v =
            kevo_verify__runner_failure(&msg, kevo_channel__child(c->runner), error);
        kevo_buf_printf(&g->messages, "%s: %s\n", where->ptr, msg.ptr);
        if (v == KEVO_VERDICT_TIMEOUT)
            kevo_buf_printf(&c->fb, "Timed out on %s: the call did not return within %.1f s "
                            "(the reference takes %.3f s).", where->ptr,
                            kevo_verify__call_timeout(ev, id), ev->ref_call_s[id]);
        else
            kevo_buf_printf(&c->fb, "Crashed on %s: %s.", where->ptr, msg.ptr);
        kevo_buf_free(&msg);
        kevo_verify__decide(c, v);
        return;
    }
    if (bad != UINT32_MAX) {
        kevo_buf_printf(&g->messages, "%s: wrote outside '%s'\n", where->ptr,
                        t->params[bad].name);
        kevo_buf_printf(&c->fb, "Crashed on %s: the kernel wrote outside output '%s' (before "
                        "its start or past its end).", where->ptr, t->params[bad].name);
        kevo_verify__decide(c, KEVO_VERDICT_CRASH);
        return;
    }
    kevo_verify__compare_call(&mism, t, d, (const void *const *)ev->expected[id], c->runner);
    if (mism.len) {
        kevo_buf_printf(&g->messages, "%s:\n%s", where->ptr, mism.ptr);
        kevo_buf_printf(&c->fb, "Wrong results on %s:\n%s", where->ptr, mism.ptr);
        kevo_verify__decide(c, KEVO_VERDICT_INCORRECT);
    }
    kevo_buf_free(&mism);
}

int kevo_verify__gate_correctness(kevo_verify__cand *c)
{
    kevo_evaluator *ev = c->ev;
    const kevo_task *t = ev->task;
    kevo_gate *g = kevo_verify__gate_open(c->r, "correctness");
    double g0 = kevo_now_s();
    int error = kevo_verify__runner_start(&c->runner, &c->dead, ev, ev->be,
                                          c->build.runner_path, c->dir);
    if (error < 0) {
        died_at_start(c, g, error); /* the candidate's verdict, not kevo's error */
        error = 0;
        goto done;
    }
    for (size_t k = 0; k < ev->nids && !c->decided; k++) {
        kevo_buf where = {0};
        kevo_verify__describe_call(&where, ev, ev->order[k]);
        check_call(c, g, ev->order[k], &where);
        kevo_buf_free(&where);
    }
    if (c->decided)
        goto done;
    g->ok = true;
    g->seconds = kevo_now_s() - g0;
    kevo_buf_printf(&g->messages, "%zu size sets x %d seeds match (atol %g, rtol %g)\n",
                    ev->nsets, ev->seeds, t->atol, t->rtol);
done:
    return error;
}
