/*
 * verify/gate_antihack.c - gate 1: an empty candidate is a compile_error;
 * otherwise the static analyser of the candidate's language reads the
 * source, and any broken rule makes the verdict `rejected`. Must not: build
 * or run anything, and must not call an analyser anywhere but analyse()
 * below (the one place that picks it).
 */
#include "internal.h"

#include <string.h>

/* The one call into the static analyser: violations and one finding per
 * line. Negative only when the analyser itself cannot run. */
static int analyse(const kevo_evaluator *ev, int *violations, kevo_buf *findings,
                   const char *source)
{
    return ev->be->source_gate ? ev->be->source_gate(ev->be, ev->task, source, violations,
                                                     findings)
                               : 0;
}

static bool is_blank(const char *source)
{
    return !source || !*source || strspn(source, " \t\r\n") == strlen(source);
}

int kevo_verify__gate_antihack(kevo_verify__cand *c)
{
    kevo_gate *g = kevo_verify__gate_open(c->r, "anti-hack");
    double g0 = kevo_now_s();
    int violations = 0;
    if (is_blank(c->source)) {
        kevo_buf_puts(&g->messages, "the candidate is empty\n");
        kevo_buf_puts(&c->fb, "The candidate file is empty: write the kernel function.");
        kevo_verify__decide(c, KEVO_VERDICT_COMPILE_ERROR);
        g->ok = false;
    } else if (c->ev->opts.skip_antihack) {
        kevo_buf_puts(&g->messages, "skipped (--unsafe-skip-antihack): runtime defences only\n");
        g->ok = true;
        g->seconds = kevo_now_s() - g0;
    } else if (analyse(c->ev, &violations, &g->messages, c->source) < 0) {
        /* the analyser's failure is kevo's, said here (not as "kevo failed") */
        kevo_buf_printf(&c->fb, "kevo could not analyse the candidate: %s", kevo_error_last());
        kevo_verify__decide(c, KEVO_VERDICT_INFRA_ERROR);
    } else {
        g->ok = violations == 0;
        g->seconds = kevo_now_s() - g0;
        if (!g->ok) {
            kevo_buf_printf(&c->fb, "Rejected by the anti-hack gate (%d rule%s broken):\n%s",
                            violations, violations == 1 ? "" : "s",
                            kevo_buf_cstr(&g->messages));
            kevo_verify__decide(c, KEVO_VERDICT_REJECTED);
        }
    }
    return 0;
}
