/*
 * tests/fuzz/fuzz_compare.c - libFuzzer target for kevo_compare_output:
 * the input is split into a header (ndim, dims, tolerances) and two equal
 * halves, expected and actual, compared as every dtype. Checks the
 * comparison's invariants besides the sanitizers: counts within bounds,
 * feedback exactly when something mismatches, and a buffer always equal
 * to itself.
 *
 * Layout: [ndim-1 (mod 8)] [ndim dims, 1 byte each] [atol byte] [rtol byte]
 * then the rest, split in half.
 */
#include "kevo/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kevo_dtype dtypes[] = {KEVO_DT_F32, KEVO_DT_F64, KEVO_DT_I32, KEVO_DT_I64,
                                    KEVO_DT_U8};

static void check(const kevo_compare_stats *st, const kevo_buf *fb, int64_t count)
{
    if (st->count != count || st->mismatches < 0 || st->mismatches > count ||
        st->nan_actual < 0 || st->nan_actual > count || st->inf_actual < 0 ||
        st->inf_actual > count || st->max_abs_index >= count)
        abort();
    if ((st->mismatches > 0) != (fb->len > 0))
        abort();
    if (st->mismatches > 0 && !strstr(kevo_buf_cstr(fb), "out"))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t ndim = (size_t)(data[0] % 8) + 1;
    if (size < 1 + ndim + 2)
        return 0;
    int64_t dims[8];
    for (size_t k = 0; k < ndim; k++)
        dims[k] = data[1 + k]; /* 0 allowed: coordinates must cope */
    const uint8_t *p = data + 1 + ndim;
    /* tolerances from exact-zero to huge, including 0 */
    double atol = p[0] ? ldexp(1.0, (int)(p[0] % 64) - 40) : 0;
    double rtol = p[1] ? ldexp(1.0, (int)(p[1] % 64) - 40) : 0;
    p += 2;
    size_t rest = size - (size_t)(p - data);
    size_t half = rest / 2;

    /* aligned copies (the fuzzer's buffer has no alignment) */
    void *expected = malloc(half + 8), *actual = malloc(half + 8);
    if (!expected || !actual)
        abort();
    memcpy(expected, p, half);
    memcpy(actual, p + half, half);

    for (size_t k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++) {
        kevo_dtype t = dtypes[k];
        int64_t count = (int64_t)(half / kevo_dtype_size(t));
        kevo_compare_stats st;
        kevo_buf fb = {0};
        kevo_compare_output(&st, &fb, "out", t, dims, ndim, expected, actual, count, atol, rtol);
        check(&st, &fb, count);
        kevo_buf_free(&fb);

        /* a buffer is always equal to itself (NaN where NaN is expected) */
        kevo_compare_output(&st, &fb, "out", t, dims, ndim, expected, expected, count, atol,
                            rtol);
        check(&st, &fb, count);
        if (st.mismatches != 0) {
            fprintf(stderr, "%s buffer differs from itself: %s\n", kevo_dtype_name(t),
                    kevo_buf_cstr(&fb));
            abort();
        }
        kevo_buf_free(&fb);
    }

    /* kevo_stats on the expected bytes as doubles */
    int n = (int)(half / sizeof(double));
    if (n > 0) {
        double median, min, cv;
        kevo_stats((double *)expected, n, &median, &min, &cv);
    }
    free(expected);
    free(actual);
    return 0;
}
