/*
 * verify/reference_check.c - what the reference's outputs say about the
 * task (NaN/Inf, near-constant outputs, an atol that swallows the range of
 * the true values), and what `kevo tasks check` reports about the
 * reference. Must not: change a verdict: these are the task author's
 * problems, reported, never held against a candidate.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static double expected_value(const kevo_task *t, size_t p, const void *e, int64_t i)
{
    switch (t->params[p].type) {
    case KEVO_DT_F32: return ((const float *)e)[i];
    case KEVO_DT_F64: return ((const double *)e)[i];
    case KEVO_DT_I32: return ((const int32_t *)e)[i];
    case KEVO_DT_I64: return (double)((const int64_t *)e)[i];
    default: return ((const uint8_t *)e)[i];
    }
}

/* What the reference's outputs say about the task, in one pass over them:
 * - NaN/Inf in the true values;
 * - near-constant: every true value over all size sets and seeds within
 *   2 x atol of one value (a kernel returning a constant would pass);
 * - tolerance sanity, per float output and size set (a kernel sees the
 *   sizes, so it may approximate on one set only): atol, the absolute
 *   slack, must stay under 1% of the range of the true values on every set
 *   of at least 64 values (smaller sets are there for edge cases, and their
 *   range says little). Above that, a kernel that knows the input
 *   distributions (a typical value, a constant scale in place of a
 *   computed norm) passes without computing the function. rtol is relative
 *   by nature and not judged here. */
#define KEVO_TOL_SHARE 0.01
#define KEVO_TOL_MIN_VALUES 64

/* Output p: its findings into ev->ref_problems. */
static void check_output(kevo_evaluator *ev, size_t p)
{
    const kevo_task *t = ev->task;
    size_t nsets = ev->nids / (size_t)ev->seeds;
    bool exact = !kevo_dtype_is_float(t->params[p].type);
    double lo = INFINITY, hi = -INFINITY;
    int64_t nonfinite = 0;
    kevo_buf loose = {0}; /* the first set whose range atol swallows */
    for (size_t set = 0; set < nsets; set++) {
        double slo = INFINITY, shi = -INFINITY;
        int64_t n = 0;
        for (int k = 0; k < ev->seeds; k++) {
            size_t id = set * (size_t)ev->seeds + (size_t)k;
            for (int64_t i = 0; i < ev->data[id]->count[p]; i++) {
                double v = expected_value(t, p, ev->expected[id][p], i);
                if (!isfinite(v)) {
                    nonfinite++;
                    continue;
                }
                slo = v < slo ? v : slo;
                shi = v > shi ? v : shi;
                n++;
            }
        }
        lo = slo < lo ? slo : lo;
        hi = shi > hi ? shi : hi;
        if (exact || loose.len || n < KEVO_TOL_MIN_VALUES || shi - slo <= 2 * t->atol ||
            t->atol <= KEVO_TOL_SHARE * (shi - slo))
            continue;
        kevo_buf b = {0};
        kevo_verify__describe_sizes(&b, kevo_task_set(t, set));
        kevo_buf_printf(&loose,
                        "output '%s' on sizes %s: atol=%g is %.1f%% of the range "
                        "[%.3g, %.3g] of its true values (%d seeds), so a kernel that "
                        "approximates from the input distribution instead of computing "
                        "could pass: set atol <= %.2g (1%% of the range)\n",
                        t->params[p].name, kevo_buf_cstr(&b), t->atol,
                        100.0 * t->atol / (shi - slo), slo, shi, ev->seeds,
                        KEVO_TOL_SHARE * (shi - slo));
        kevo_buf_free(&b);
    }
    if (nonfinite)
        kevo_buf_printf(&ev->ref_problems, "output '%s': the reference produces %lld NaN/Inf "
                        "values\n", t->params[p].name, (long long)nonfinite);
    if (hi - lo <= 2 * t->atol && !(exact && hi > lo)) {
        ev->near_constant++;
        kevo_buf_printf(&ev->ref_problems, "output '%s' is near-constant: every true value "
                        "over all size sets and seeds lies in [%g, %g], within atol=%g of "
                        "one value, so a kernel returning a constant would pass\n",
                        t->params[p].name, lo, hi, t->atol);
    }
    kevo_buf_puts(&ev->ref_problems, kevo_buf_cstr(&loose));
    kevo_buf_free(&loose);
}

void kevo_verify__reference_check(kevo_evaluator *ev)
{
    for (size_t p = 0; p < ev->task->nparams; p++)
        if (kevo_verify__is_output(ev->task, p))
            check_output(ev, p);
}

int kevo_evaluator_reference_report(kevo_reference_report *out, kevo_evaluator *ev)
{
    memset(out, 0, sizeof(*out));
    out->build_s = ev->ref_build_s;
    double s[16];
    int n = 0;
    for (int k = 0; k < ev->seeds && n < 16; k++)
        s[n++] = ev->ref_call_s[k] * 1e3;
    /* time a few more calls for a steadier figure */
    for (int k = 0; k < 3 && n < 16; k++) {
        int64_t ns;
        uint32_t bad;
        const kevo_call_data *d = ev->data[k % ev->seeds];
        kevo_channel__set_inputs(ev->inputs, d, 0);
        if (kevo_channel__call(ev->ref, d, 0, ev->task->timeout_s, &ns, &bad) == 0)
            s[n++] = ((double)ns - ev->channel_ns) * 1e-6;
    }
    double med, mn, cv;
    kevo_stats(s, n, &med, &mn, &cv);
    out->timed_ms = med;
    out->near_constant = ev->near_constant;
    kevo_buf_puts(&out->problems, kevo_buf_cstr(&ev->ref_problems));
    return 0;
}
