/*
 * verify/compare.c - output comparison and the structured mismatch
 * feedback an LLM (and a person) can act on: which output, how many
 * elements, max abs/rel error, NaN/Inf counts, the first mismatching
 * coordinates with expected and actual values, and hints for common
 * patterns (unwritten output, wrong tail). Pure functions.
 */
#include "kevo/verify.h"

#include <math.h>
#include <pthread.h>
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
 * kevo_compare_output, which decides those exactly). The same test as
 * kevo_compare_output's, in double, written with GCC vector types so that
 * it runs at memory speed on the large timed outputs whatever -march kevo
 * was built with, and split over the machine's cores above a few MiB (the
 * runners are stopped while kevo compares, so the cores are free). */
typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef long long v4l __attribute__((vector_size(32)));
#define ABS_MASK 0x7fffffffffffffffLL /* every bit of a double but its sign */

static bool close_f32(const float *e, const float *a, int64_t n, double atol, double rtol)
{
    const v4l sign = {ABS_MASK, ABS_MASK, ABS_MASK, ABS_MASK};
    v4l all = {-1, -1, -1, -1};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f ef, af;
        memcpy(&ef, e + i, sizeof(ef));
        memcpy(&af, a + i, sizeof(af));
        v4d ed = __builtin_convertvector(ef, v4d), ad = __builtin_convertvector(af, v4d);
        v4d diff = (v4d)((v4l)(ad - ed) & sign), mag = (v4d)((v4l)ed & sign);
        all &= diff <= atol + rtol * mag; /* false for NaN: not close */
    }
    bool ok = (all[0] & all[1] & all[2] & all[3]) != 0;
    for (; i < n; i++) {
        double ei = e[i], ai = a[i];
        ok &= fabs(ai - ei) <= atol + rtol * fabs(ei);
    }
    return ok;
}

static bool close_f64(const double *e, const double *a, int64_t n, double atol, double rtol)
{
    const v4l sign = {ABS_MASK, ABS_MASK, ABS_MASK, ABS_MASK};
    v4l all = {-1, -1, -1, -1};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4d ed, ad;
        memcpy(&ed, e + i, sizeof(ed));
        memcpy(&ad, a + i, sizeof(ad));
        v4d diff = (v4d)((v4l)(ad - ed) & sign), mag = (v4d)((v4l)ed & sign);
        all &= diff <= atol + rtol * mag;
    }
    bool ok = (all[0] & all[1] & all[2] & all[3]) != 0;
    for (; i < n; i++)
        ok &= fabs(a[i] - e[i]) <= atol + rtol * fabs(e[i]);
    return ok;
}

typedef struct {
    kevo_dtype type;
    const char *e, *a;
    int64_t count;
    double atol, rtol;
    bool ok;
    pthread_t th;
} close_part;

static void *close_part_run(void *arg)
{
    close_part *p = arg;
    if (p->type == KEVO_DT_F32)
        p->ok = close_f32((const float *)p->e, (const float *)p->a, p->count, p->atol, p->rtol);
    else if (p->type == KEVO_DT_F64)
        p->ok = close_f64((const double *)p->e, (const double *)p->a, p->count, p->atol,
                          p->rtol);
    else /* integers must match exactly */
        p->ok = memcmp(p->e, p->a, (size_t)p->count * kevo_dtype_size(p->type)) == 0;
    return NULL;
}

bool kevo_compare_allclose(kevo_dtype type, const void *expected, const void *actual,
                           int64_t count, double atol, double rtol)
{
    enum { MAX_PARTS = 16, MIN_PART_BYTES = 4 << 20 };
    size_t esize = kevo_dtype_size(type);
    int parts = kevo_cpu_count();
    parts = parts < MAX_PARTS ? parts : MAX_PARTS;
    int64_t by_size = (int64_t)((size_t)count * esize / MIN_PART_BYTES);
    parts = by_size < parts ? (int)by_size : parts;
    parts = parts < 1 ? 1 : parts;
    close_part p[MAX_PARTS];
    int64_t per = (count + parts - 1) / parts;
    int started = 0;
    for (int k = 0; k < parts; k++) {
        int64_t lo = per * k, hi = lo + per < count ? lo + per : count;
        p[k] = (close_part){type, (const char *)expected + (size_t)lo * esize,
                            (const char *)actual + (size_t)lo * esize, hi > lo ? hi - lo : 0,
                            atol, rtol, false, 0};
        /* part 0 runs here; the others on threads when threads can be had */
        if (k > 0 && pthread_create(&p[k].th, NULL, close_part_run, &p[k]) == 0)
            started |= 1 << k;
    }
    close_part_run(&p[0]);
    bool ok = p[0].ok;
    for (int k = 1; k < parts; k++) {
        if (started & (1 << k))
            pthread_join(p[k].th, NULL);
        else
            close_part_run(&p[k]);
        ok &= p[k].ok;
    }
    return ok;
}
