/*
 * task/inputs.c - deterministic input generation from (task name, size
 * set, seed). The same triple always gives the same bytes, on every
 * machine, so verdicts are reproducible.
 */
#include "kevo/task.h"
#include "kevo/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kevo_call_data_free(kevo_call_data *d)
{
    if (!d)
        return;
    for (size_t i = 0; d->data && i < d->nparams; i++)
        free(d->data[i]);
    free(d->data);
    free(d->bytes);
    free(d->count);
    free(d->dims);
    free(d->ndim);
    free(d->scalar);
    free(d);
}

/* v clamped to [lo, hi]; NaN gives 0. */
static double saturate(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    return v < lo ? lo : v > hi ? hi : v;
}

static int64_t saturate_i64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 0x1p63)
        return INT64_MAX;
    if (v < -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

static void fill(void *buf, const kevo_param *p, const kevo_init *in, int64_t n, kevo_rng *rng)
{
    for (int64_t i = 0; i < n; i++) {
        double v;
        switch (in->dist) {
        case KEVO_INIT_NORMAL: v = in->a + in->b * kevo_rng_normal(rng); break;
        case KEVO_INIT_UNIFORM: v = in->a + (in->b - in->a) * kevo_rng_uniform(rng); break;
        case KEVO_INIT_RANDINT: {
            double span = floor(in->b) - ceil(in->a);
            v = ceil(in->a) + floor(kevo_rng_uniform(rng) * span);
            break;
        }
        default: v = in->a; break;
        }
        /* Integer conversions saturate: an out-of-range double -> integer
         * conversion is undefined and differs across machines. The loader
         * keeps const/randint/uniform within range; normal tails can
         * still leave it. */
        switch (p->type) {
        case KEVO_DT_F32: ((float *)buf)[i] = (float)v; break;
        case KEVO_DT_F64: ((double *)buf)[i] = v; break;
        case KEVO_DT_I32:
            ((int32_t *)buf)[i] = (int32_t)saturate(v, -2147483648.0, 2147483647.0);
            break;
        case KEVO_DT_I64: ((int64_t *)buf)[i] = saturate_i64(v); break;
        case KEVO_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)saturate(v, 0, 255); break;
        }
    }
}

int kevo_task_inputs(kevo_call_data **out, const kevo_task *t, size_t set, uint64_t seed)
{
    *out = NULL;
    int error = 0;
    const kevo_sizes *sz = kevo_task_set(t, set);
    kevo_call_data *d = calloc(1, sizeof(*d));
    if (!d)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t n = t->nparams;
    d->nparams = n;
    d->data = calloc(n, sizeof(void *));
    d->bytes = calloc(n, sizeof(size_t));
    d->count = calloc(n, sizeof(int64_t));
    d->dims = calloc(n * 8, sizeof(int64_t));
    d->ndim = calloc(n, sizeof(size_t));
    d->scalar = calloc(n, sizeof(double));
    if (!d->data || !d->bytes || !d->count || !d->dims || !d->ndim || !d->scalar) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    uint64_t base = kevo_hash64(t->name, strlen(t->name), 0x6b65766fULL);
    for (size_t i = 0; i < n; i++) {
        const kevo_param *p = &t->params[i];
        if (p->role == KEVO_ROLE_SCALAR) {
            if ((error = kevo_task_scalar_value(&d->scalar[i], t, i, sz)) < 0)
                goto done;
            continue;
        }
        if ((error = kevo_task_param_shape(&d->dims[i * 8], &d->ndim[i], &d->count[i], t, i,
                                           sz)) < 0)
            goto done;
        d->bytes[i] = (size_t)d->count[i] * kevo_dtype_size(p->type);
        if (p->role == KEVO_ROLE_OUT)
            continue;
        d->data[i] = malloc(d->bytes[i] ? d->bytes[i] : 1);
        if (!d->data[i]) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory for input '%s' (%zu bytes)",
                                   p->name, d->bytes[i]);
            goto done;
        }
        kevo_init in = p->init; /* a range given by size expressions, at this set */
        if ((in.a_expr && (error = kevo_expr_eval(&in.a, in.a_expr, sz, true)) < 0) ||
            (in.b_expr && (error = kevo_expr_eval(&in.b, in.b_expr, sz, true)) < 0))
            goto done;
        kevo_rng rng;
        uint64_t key[3] = {(uint64_t)set, seed, (uint64_t)i};
        kevo_rng_seed(&rng, kevo_hash64(key, sizeof(key), base));
        fill(d->data[i], p, &in, d->count[i], &rng);
    }
    *out = d;
    d = NULL;
done:
    kevo_call_data_free(d);
    return error;
}
