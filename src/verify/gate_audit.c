/*
 * verify/gate_audit.c - the optional gate between the static gate and the
 * compile: a judge the caller supplies (kevo_eval_options.audit; the agent
 * gives EvoKernel's model-based auditor). It fails closed: a candidate
 * passes only when the judge says it is valid. Must not: know what the
 * judge is, or build or run anything.
 */
#include "internal.h"

#include <stdlib.h>

int kevo_verify__gate_audit(kevo_verify__cand *c)
{
    const kevo_eval_options *o = &c->ev->opts;
    if (!o->audit)
        return 0;
    kevo_gate *g = kevo_verify__gate_open(c->r, "audit");
    double g0 = kevo_now_s();
    bool valid = false;
    char *reason = NULL;
    int error = o->audit(o->audit_arg, c->source, &valid, &reason);
    g->seconds = kevo_now_s() - g0;
    if (error < 0) {
        c->fatal = error; /* no verdict: the judge itself failed */
        free(reason);
        return error;
    }
    g->ok = valid;
    if (reason)
        kevo_buf_printf(&g->messages, "%s\n", reason);
    if (!valid) {
        kevo_buf_printf(&c->fb, "Rejected by the model-based auditor: %s",
                        reason ? reason : "(no reason given)");
        kevo_verify__decide(c, KEVO_VERDICT_REJECTED);
    }
    free(reason);
    return 0;
}
