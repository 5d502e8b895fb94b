/*
 * verify/call.c - one call of the task (a size set and a seed) as the gates
 * see it: its name in messages, how long a candidate may take on it, its
 * size, and whether a runner's outputs of it match the expected ones.
 * Must not: run anything or reach a verdict (the gates do).
 */
#include "internal.h"

#include <stdio.h>

void kevo_verify__describe_sizes(kevo_buf *b, const kevo_sizes *s)
{
    for (size_t i = 0; i < s->n; i++)
        kevo_buf_printf(b, "%s%s=%lld", i ? ", " : "", s->names[i], (long long)s->values[i]);
}

void kevo_verify__describe_call(kevo_buf *where, const kevo_evaluator *ev, size_t id)
{
    kevo_buf_puts(where, "sizes ");
    kevo_verify__describe_sizes(where, kevo_task_set(ev->task, id / (size_t)ev->seeds));
    kevo_buf_printf(where, ", seed %zu", id % (size_t)ev->seeds);
}

double kevo_verify__call_timeout(const kevo_evaluator *ev, size_t id)
{
    double t = 10.0 * ev->ref_call_s[id] + 5.0;
    return t < ev->task->timeout_s ? t : ev->task->timeout_s;
}

uint64_t kevo_verify__call_bytes(const kevo_task *t, const kevo_call_data *d)
{
    uint64_t b = 0;
    for (size_t p = 0; p < t->nparams; p++)
        b += d->bytes[p];
    return b;
}

void kevo_verify__compare_call(kevo_buf *mism, const kevo_task *t, const kevo_call_data *d,
                               const void *const *expected, kevo_channel_runner *r)
{
    for (size_t p = 0; p < t->nparams; p++) {
        if (!kevo_verify__is_output(t, p))
            continue;
        const void *actual = kevo_channel__output(r, p);
        if (kevo_compare_allclose(t->params[p].type, expected[p], actual, d->count[p], t->atol,
                                  t->rtol))
            continue;
        kevo_compare_stats st;
        kevo_compare_output(&st, mism, t->params[p].name, t->params[p].type, &d->dims[p * 8],
                            d->ndim[p], expected[p], actual, d->count[p], t->atol, t->rtol);
    }
}
