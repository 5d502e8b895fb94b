/*
 * verify/compare.c - output comparison and the structured mismatch
 * feedback an LLM (and a person) can act on: which output, how many
 * elements, max abs/rel error, NaN/Inf counts, the first mismatching
 * coordinates with expected and actual values, and hints for common
 * patterns (unwritten output, wrong tail). Pure functions.
 */
#include "kevo/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_MISMATCHES 5

static double value_at(const void *buf, kevo_dtype t, int64_t i)
{
    switch (t) {
    case KEVO_DT_F32: return ((const float *)buf)[i];
    case KEVO_DT_F64: return ((const double *)buf)[i];
    case KEVO_DT_I32: return ((const int32_t *)buf)[i];
    case KEVO_DT_I64: return (double)((const int64_t *)buf)[i];
    default: return ((const uint8_t *)buf)[i];
    }
}

static bool is_poison(const void *buf, kevo_dtype t, int64_t i)
{
    if (kevo_dtype_is_float(t))
        return isnan(value_at(buf, t, i));
    const unsigned char *p = (const unsigned char *)buf + (size_t)i * kevo_dtype_size(t);
    for (size_t k = 0; k < kevo_dtype_size(t); k++)
        if (p[k] != 0x5A)
            return false;
    return true;
}

static void coords(kevo_buf *b, const char *name, const int64_t *dims, size_t ndim, int64_t i)
{
    int64_t idx[8];
    for (size_t k = ndim; k-- > 0;) {
        int64_t d = dims[k] > 0 ? dims[k] : 1;
        idx[k] = i % d;
        i /= d;
    }
    kevo_buf_printf(b, "%s[", name);
    for (size_t k = 0; k < ndim; k++)
        kevo_buf_printf(b, "%s%lld", k ? ", " : "", (long long)idx[k]);
    kevo_buf_puts(b, "]");
}

void kevo_compare_output(kevo_compare_stats *st, kevo_buf *fb, const char *name, kevo_dtype type,
                         const int64_t *dims, size_t ndim, const void *expected,
                         const void *actual, int64_t count, double atol, double rtol)
{
    memset(st, 0, sizeof(*st));
    st->count = count;
    st->max_abs_index = -1;
    bool is_float = kevo_dtype_is_float(type);
    int64_t first[FIRST_MISMATCHES];
    int nfirst = 0;
    int64_t poison = 0, min_bad = -1;
    for (int64_t i = 0; i < count; i++) {
        double e = value_at(expected, type, i), a = value_at(actual, type, i);
        if (is_poison(actual, type, i))
            poison++;
        bool ok;
        if (is_float) {
            if (isnan(a))
                st->nan_actual++;
            else if (isinf(a))
                st->inf_actual++;
            if (isnan(e) || isinf(e))
                ok = (isnan(e) && isnan(a)) || (isinf(e) && a == e);
            else if (!isfinite(a))
                ok = false;
            else
                ok = fabs(a - e) <= atol + rtol * fabs(e);
            if (isfinite(a) && isfinite(e)) {
                double abs_err = fabs(a - e);
                double rel_err = abs_err / (fabs(e) > 1e-30 ? fabs(e) : 1e-30);
                if (abs_err > st->max_abs) {
                    st->max_abs = abs_err;
                    st->max_abs_index = i;
                }
                if (!ok && rel_err > st->max_rel)
                    st->max_rel = rel_err;
            }
        } else {
            ok = memcmp((const char *)expected + (size_t)i * kevo_dtype_size(type),
                        (const char *)actual + (size_t)i * kevo_dtype_size(type),
                        kevo_dtype_size(type)) == 0;
            if (!ok && fabs(a - e) > st->max_abs) {
                st->max_abs = fabs(a - e);
                st->max_abs_index = i;
            }
        }
        if (!ok) {
            if (min_bad < 0)
                min_bad = i;
            st->mismatches++;
            if (nfirst < FIRST_MISMATCHES)
                first[nfirst++] = i;
        }
    }
    st->untouched = count > 0 && poison == count;
    if (st->mismatches == 0 || !fb)
        return;
    kevo_buf_printf(fb, "output '%s': %lld of %lld elements mismatch", name,
                    (long long)st->mismatches, (long long)count);
    if (is_float)
        kevo_buf_printf(fb, " (tolerance |actual - expected| <= %g + %g*|expected|)", atol, rtol);
    else
        kevo_buf_puts(fb, " (integers must match exactly)");
    kevo_buf_puts(fb, ".");
    if (is_float && st->max_abs_index >= 0) {
        kevo_buf_printf(fb, " Max abs error %.4g at ", st->max_abs);
        coords(fb, name, dims, ndim, st->max_abs_index);
        kevo_buf_printf(fb, "; max rel error %.4g.", st->max_rel);
    }
    if (is_float)
        kevo_buf_printf(fb, " NaN: %lld, Inf: %lld.", (long long)st->nan_actual,
                        (long long)st->inf_actual);
    kevo_buf_puts(fb, " First mismatches: ");
    for (int k = 0; k < nfirst; k++) {
        if (k)
            kevo_buf_puts(fb, "; ");
        coords(fb, name, dims, ndim, first[k]);
        double e = value_at(expected, type, first[k]), a = value_at(actual, type, first[k]);
        if (is_poison(actual, type, first[k]))
            kevo_buf_printf(fb, " expected %.6g, never written", e);
        else
            kevo_buf_printf(fb, " expected %.6g got %.6g", e, a);
    }
    kevo_buf_puts(fb, ".");
    if (st->untouched)
        kevo_buf_printf(fb, " Hint: the kernel never wrote '%s' (it still holds the poison "
                            "value set before the call).", name);
    else if (poison > 0)
        kevo_buf_printf(fb, " Hint: %lld elements of '%s' were never written.", (long long)poison,
                        name);
    else if (min_bad >= count - 64 && count > 1)
        kevo_buf_puts(fb, " Hint: only the last elements are wrong: check the loop tail when a "
                          "size is not a multiple of the vector width or tile.");
    kevo_buf_puts(fb, "\n");
}

void kevo_stats(double *s, int n, double *median, double *min, double *cv)
{
    *median = *min = *cv = 0;
    if (n <= 0)
        return;
    kevo_sort_doubles(s, (size_t)n);
    *min = s[0];
    *median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += s[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (s[i] - mean) * (s[i] - mean);
    var = n > 1 ? var / (n - 1) : 0;
    *cv = mean > 0 ? sqrt(var) / mean : 0;
}

/* The common case, fast: every element within tolerance and finite on both
 * sides (a NaN or Inf anywhere answers false, and the caller falls back to
 * kevo_compare_output, which decides those exactly). Branch-free so that
 * it runs at memory speed on the large timed outputs. */
__attribute__((optimize("O3"))) bool kevo_compare_allclose(kevo_dtype type, const void *expected,
                                                           const void *actual, int64_t count,
                                                           double atol, double rtol)
{
    if (!kevo_dtype_is_float(type))
        return memcmp(expected, actual, (size_t)count * kevo_dtype_size(type)) == 0;
    int bad = 0;
    if (type == KEVO_DT_F32) {
        const float *e = expected, *a = actual;
        for (int64_t i = 0; i < count; i++) {
            double ei = e[i], ai = a[i];
            bad |= !(fabs(ai - ei) <= atol + rtol * fabs(ei));
        }
    } else {
        const double *e = expected, *a = actual;
        for (int64_t i = 0; i < count; i++)
            bad |= !(fabs(a[i] - e[i]) <= atol + rtol * fabs(e[i]));
    }
    return !bad;
}
