/*
 * verify/gate_compile.c - gate 2: the backend builds the candidate's runner
 * in a folder of its own; a build that fails on the source is a
 * compile_error, an object that breaks a rule (constructors, forbidden
 * symbols) is `rejected`. Then whether the backend can run anything here at
 * all (a device backend without its device: infra_error, no verdict on the
 * kernel). Must not: run the candidate.
 */
#include "internal.h"

#include <stdio.h>

/* When the backend cannot run runners on this machine, say so as the
 * correctness gate's outcome, and decide infra_error. */
static void check_can_run(kevo_verify__cand *c)
{
    const kevo_backend *be = c->ev->be;
    const char *why = NULL;
    if (!be->can_run || be->can_run(be, &why))
        return;
    kevo_gate *g = kevo_verify__gate_open(c->r, "correctness");
    g->ok = false;
    kevo_buf_printf(&g->messages, "not run: %s\n", why);
    kevo_buf_printf(&c->fb, "Compiled, but not run: %s. No verdict on correctness or speed.",
                    why);
    kevo_verify__decide(c, KEVO_VERDICT_INFRA_ERROR);
}

/* The build failed on the source (or broke an object-level rule). */
static void build_failed(kevo_verify__cand *c, kevo_gate *g)
{
    const kevo_build_result *build = &c->build;
    g->ok = false;
    kevo_buf_puts(&g->messages, build->diagnostics ? build->diagnostics : "");
    if (build->rejected) {
        kevo_buf_printf(&c->fb, "Rejected: %s", build->diagnostics);
        kevo_verify__decide(c, KEVO_VERDICT_REJECTED);
    } else {
        kevo_buf_printf(&c->fb, "Compilation failed:\n%s", build->diagnostics);
        kevo_verify__decide(c, KEVO_VERDICT_COMPILE_ERROR);
    }
}

int kevo_verify__gate_compile(kevo_verify__cand *c)
{
    kevo_evaluator *ev = c->ev;
    kevo_gate *g = kevo_verify__gate_open(c->r, "compile");
    const kevo_build_result *build = &c->build;
    char name[32];
    snprintf(name, sizeof(name), "candidate-%d", ++ev->serial);
    int error = kevo_verify__make_dir(&c->dir, ev->root, name);
    if (error < 0)
        goto done;
    if ((error = ev->be->build(ev->be, ev->task, c->source, false, c->dir, &c->build)) < 0)
        goto done;
    g->seconds = build->seconds;
    if (!build->ok) {
        build_failed(c, g);
        goto done;
    }
    g->ok = true;
    kevo_buf_printf(&g->messages, "built in %.2f s\n", build->seconds);
    if (build->diagnostics && *build->diagnostics)
        kevo_buf_printf(&g->messages, "%s\n", build->diagnostics);
    check_can_run(c);
done:
    return error;
}
