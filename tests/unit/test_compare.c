/*
 * tests/unit/test_compare.c - output comparison (kevo_compare_output) and
 * timing statistics (kevo_stats), written against include/kevo/verify.h:
 * counts, NaN/Inf handling, the exact tolerance boundary, exact integer
 * comparison, unwritten (poisoned) outputs, and the feedback text an LLM
 * sees (output name, coordinates, expected vs actual).
 *
 * Pure functions: no task folders, no kernels.
 */
#include "kevo/verify.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#define assert_contains(hay, needle) assert_contains_at(hay, needle, __FILE__, __LINE__)

static void assert_contains_at(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle)) {
        print_error("%s:%d: expected \"%s\" in \"%s\"\n", file, line, needle,
                    hay ? hay : "(null)");
        _fail(file, line);
    }
}

#define assert_not_contains(hay, needle)                                                         \
    do {                                                                                          \
        if (strstr(hay, needle)) {                                                                \
            print_error("did not expect \"%s\" in \"%s\"\n", needle, hay);                       \
            fail();                                                                               \
        }                                                                                         \
    } while (0)

/* Compare and return the stats; feedback goes to *fb (discarded when fb is NULL). */
static kevo_compare_stats cmp(kevo_buf *fb, const char *name, kevo_dtype type,
                              const int64_t *dims, size_t ndim, const void *expected,
                              const void *actual, int64_t count, double atol, double rtol)
{
    kevo_compare_stats st;
    kevo_buf scratch = {0};
    memset(&st, 0x77, sizeof(st)); /* garbage: the function must set every field */
    kevo_compare_output(&st, fb ? fb : &scratch, name, type, dims, ndim, expected, actual, count,
                        atol, rtol);
    kevo_buf_free(&scratch);
    return st;
}

static void test_compare__identical_outputs(void **state)
{
    float ef[12], af[12];
    double ed[12], ad[12];
    int32_t ei[12], ai[12];
    int64_t el[12], al[12];
    uint8_t eb[12], ab[12];
    for (int i = 0; i < 12; i++) {
        ef[i] = af[i] = (float)i * 0.5f - 3;
        ed[i] = ad[i] = (double)i * 1e10 - 7;
        ei[i] = ai[i] = i * 1000 - 5000;
        el[i] = al[i] = (int64_t)i * 1000000000000LL;
        eb[i] = ab[i] = (uint8_t)(i * 21);
    }
    const int64_t dims[2] = {3, 4};
    const struct {
        kevo_dtype t;
        const void *e, *a;
    } rows[] = {{KEVO_DT_F32, ef, af}, {KEVO_DT_F64, ed, ad}, {KEVO_DT_I32, ei, ai},
                {KEVO_DT_I64, el, al}, {KEVO_DT_U8, eb, ab}};
    for (size_t r = 0; r < 5; r++) {
        kevo_buf fb = {0};
        kevo_compare_stats st = cmp(&fb, "y", rows[r].t, dims, 2, rows[r].e, rows[r].a, 12, 0, 0);
        assert_int_equal(st.count, 12);
        assert_int_equal(st.mismatches, 0);
        assert_int_equal(st.nan_actual, 0);
        assert_int_equal(st.inf_actual, 0);
        assert_true(st.max_abs == 0);
        assert_false(st.untouched);
        assert_int_equal(fb.len, 0); /* nothing to say */
        kevo_buf_free(&fb);
    }
}

static void test_compare__single_wrong_tail_element_2d(void **state)
{
    float e[18], a[18];
    for (int i = 0; i < 18; i++)
        e[i] = a[i] = (float)i;
    e[17] = 0.125f;
    a[17] = 7.75f;
    const int64_t dims[2] = {3, 6};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "scores", KEVO_DT_F32, dims, 2, e, a, 18, 1e-3, 1e-3);
    assert_int_equal(st.count, 18);
    assert_int_equal(st.mismatches, 1);
    assert_int_equal(st.nan_actual, 0);
    assert_int_equal(st.inf_actual, 0);
    assert_false(st.untouched);
    assert_true(st.max_abs == 7.625);
    assert_int_equal(st.max_abs_index, 17);
    assert_true(st.max_rel == 7.625 / 0.125);
    const char *f = kevo_buf_cstr(&fb);
    assert_contains(f, "scores");
    assert_contains(f, "[2, 5]"); /* row-major: 17 = 2*6 + 5 */
    assert_contains(f, "0.125");
    assert_contains(f, "7.75");
    assert_contains(f, "1 of 18");
    kevo_buf_free(&fb);
}

static void test_compare__coordinates_1d_and_3d(void **state)
{
    double e[60] = {0}, a[60] = {0};
    a[37] = 1.5;
    const int64_t d1[1] = {60};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "v", KEVO_DT_F64, d1, 1, e, a, 60, 0.1, 0);
    assert_int_equal(st.mismatches, 1);
    assert_contains(kevo_buf_cstr(&fb), "v[37]");
    kevo_buf_free(&fb);

    /* 37 = 1*20 + 3*5 + 2 in dims [3, 4, 5] */
    const int64_t d3[3] = {3, 4, 5};
    st = cmp(&fb, "t", KEVO_DT_F64, d3, 3, e, a, 60, 0.1, 0);
    assert_int_equal(st.mismatches, 1);
    assert_contains(kevo_buf_cstr(&fb), "t[1, 3, 2]");
    kevo_buf_free(&fb);

    /* the first element of a 4-D output */
    memset(a, 0, sizeof(a));
    a[0] = -2;
    const int64_t d4[4] = {2, 2, 3, 5};
    st = cmp(&fb, "w", KEVO_DT_F64, d4, 4, e, a, 60, 0.1, 0);
    assert_int_equal(st.mismatches, 1);
    assert_int_equal(st.max_abs_index, 0);
    assert_contains(kevo_buf_cstr(&fb), "w[0, 0, 0, 0]");
    kevo_buf_free(&fb);
}

static void test_compare__feedback_is_appended(void **state)
{
    float e[4] = {1, 2, 3, 4}, a[4] = {1, 2, 3, 5};
    const int64_t dims[1] = {4};
    kevo_buf fb = {0};
    kevo_buf_puts(&fb, "earlier line\n");
    kevo_compare_stats st = cmp(&fb, "out", KEVO_DT_F32, dims, 1, e, a, 4, 0, 0);
    assert_int_equal(st.mismatches, 1);
    assert_true(strncmp(kevo_buf_cstr(&fb), "earlier line\n", 13) == 0);
    assert_contains(kevo_buf_cstr(&fb) + 13, "out[3]");
    kevo_buf_free(&fb);
}

static void test_compare__many_mismatches_counted(void **state)
{
    enum { N = 1000 };
    static float e[N], a[N];
    for (int i = 0; i < N; i++) {
        e[i] = 1;
        a[i] = i % 3 == 0 ? 2.0f : 1.0f; /* 334 wrong */
    }
    const int64_t dims[2] = {10, 100};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "big", KEVO_DT_F32, dims, 2, e, a, N, 0.5, 0);
    assert_int_equal(st.count, N);
    assert_int_equal(st.mismatches, 334);
    assert_contains(kevo_buf_cstr(&fb), "334");
    assert_contains(kevo_buf_cstr(&fb), "big[0, 0]"); /* the first one is shown */
    /* a bounded description, not one line per element */
    assert_true(fb.len < 4096);
    kevo_buf_free(&fb);
}

static void test_compare__nan_in_actual(void **state)
{
    float e[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    float a[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    a[5] = NAN;
    const int64_t dims[1] = {8};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F32, dims, 1, e, a, 8, 1e9, 1e9);
    assert_int_equal(st.nan_actual, 1);
    assert_int_equal(st.inf_actual, 0);
    assert_int_equal(st.mismatches, 1); /* no tolerance accepts a NaN */
    assert_false(st.untouched);         /* other elements were written */
    assert_contains(kevo_buf_cstr(&fb), "y[5]");
    assert_contains(kevo_buf_cstr(&fb), "NaN");
    kevo_buf_free(&fb);

    /* f64 too, with several NaNs */
    double ed[4] = {1, 2, 3, 4}, ad[4] = {NAN, 2, NAN, 4};
    st = cmp(&fb, "y", KEVO_DT_F64, dims, 1, ed, ad, 4, 1, 1);
    assert_int_equal(st.nan_actual, 2);
    assert_int_equal(st.mismatches, 2);
    kevo_buf_free(&fb);
}

static void test_compare__nan_expected(void **state)
{
    /* a NaN where NaN is expected is right; a number there is wrong */
    double e[3] = {NAN, NAN, 1}, a[3] = {NAN, 0, 1};
    const int64_t dims[1] = {3};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F64, dims, 1, e, a, 3, 1e9, 1e9);
    assert_int_equal(st.mismatches, 1);
    assert_contains(kevo_buf_cstr(&fb), "y[1]");
    kevo_buf_free(&fb);
}

static void test_compare__inf(void **state)
{
    float e[6] = {1, 2, 3, INFINITY, -INFINITY, INFINITY};
    float a[6] = {1, INFINITY, -INFINITY, INFINITY, -INFINITY, -INFINITY};
    const int64_t dims[1] = {6};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F32, dims, 1, e, a, 6, 1e30, 1e30);
    assert_int_equal(st.inf_actual, 5);
    assert_int_equal(st.nan_actual, 0);
    /* [1], [2]: Inf for a finite value (any tolerance); [5]: wrong sign.
     * [3], [4]: the same Inf as expected. */
    assert_int_equal(st.mismatches, 3);
    const char *f = kevo_buf_cstr(&fb);
    assert_contains(f, "y[1]");
    assert_contains(f, "y[2]");
    assert_contains(f, "y[5]");
    assert_not_contains(f, "y[3]");
    assert_not_contains(f, "y[4]");
    kevo_buf_free(&fb);

    /* a finite value where Inf is expected is wrong */
    double ed[1] = {INFINITY}, ad[1] = {1e308};
    st = cmp(&fb, "z", KEVO_DT_F64, dims, 1, ed, ad, 1, 1e308, 1e308);
    assert_int_equal(st.mismatches, 1);
    assert_int_equal(st.inf_actual, 0);
    kevo_buf_free(&fb);
}

static void test_compare__tolerance_boundary_exact(void **state)
{
    /* |a - e| <= atol + rtol*|e| with exactly representable numbers:
     * e = 2, atol = 0.25, rtol = 0.125 -> bound 0.5 */
    const int64_t dims[1] = {1};
    double e = 2;
    double pass[] = {2.5, 1.5, 2.0};
    double fail_[] = {nextafter(2.5, 3), nextafter(1.5, 1), 100, -2};
    for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
        kevo_compare_stats st = cmp(NULL, "y", KEVO_DT_F64, dims, 1, &e, &pass[i], 1, 0.25, 0.125);
        if (st.mismatches)
            print_error("%.17g should pass\n", pass[i]);
        assert_int_equal(st.mismatches, 0);
    }
    for (size_t i = 0; i < sizeof(fail_) / sizeof(fail_[0]); i++) {
        kevo_buf fb = {0};
        kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F64, dims, 1, &e, &fail_[i], 1, 0.25, 0.125);
        if (st.mismatches != 1)
            print_error("%.17g should fail\n", fail_[i]);
        assert_int_equal(st.mismatches, 1);
        kevo_buf_free(&fb);
    }

    /* rtol uses |expected|: e = -4, rtol = 0.5 -> bound 2. The values just
     * outside are 2^-20 away so that a - e is computed exactly (one ulp
     * above -2 would round back onto the bound). */
    double en = -4, an[] = {-6, -2}, bn[] = {-6 - 0x1p-20, -2 + 0x1p-20};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(cmp(NULL, "y", KEVO_DT_F64, dims, 1, &en, &an[i], 1, 0, 0.5).mismatches, 0);
        kevo_buf fb = {0};
        assert_int_equal(cmp(&fb, "y", KEVO_DT_F64, dims, 1, &en, &bn[i], 1, 0, 0.5).mismatches, 1);
        kevo_buf_free(&fb);
    }

    /* f32 outputs: the same rule on the float values */
    float ef = 2, af = 2.5f, bf = nextafterf(2.5f, 3);
    assert_int_equal(cmp(NULL, "y", KEVO_DT_F32, dims, 1, &ef, &af, 1, 0.25, 0.125).mismatches, 0);
    kevo_buf fb = {0};
    assert_int_equal(cmp(&fb, "y", KEVO_DT_F32, dims, 1, &ef, &bf, 1, 0.25, 0.125).mismatches, 1);
    kevo_buf_free(&fb);

    /* zero tolerance: only equal values pass (and -0 equals +0) */
    double z = 0, nz = -0.0, tiny = 4.9e-324;
    assert_int_equal(cmp(NULL, "y", KEVO_DT_F64, dims, 1, &z, &nz, 1, 0, 0).mismatches, 0);
    assert_int_equal(cmp(&fb, "y", KEVO_DT_F64, dims, 1, &z, &tiny, 1, 0, 0).mismatches, 1);
    kevo_buf_free(&fb);
}

static void test_compare__feedback_names_tolerance(void **state)
{
    double e[2] = {1, 1}, a[2] = {1, 3};
    const int64_t dims[1] = {2};
    kevo_buf fb = {0};
    cmp(&fb, "y", KEVO_DT_F64, dims, 1, e, a, 2, 0.25, 0.125);
    assert_contains(kevo_buf_cstr(&fb), "0.25");
    assert_contains(kevo_buf_cstr(&fb), "0.125");
    kevo_buf_free(&fb);
}

static void test_compare__integers_exact(void **state)
{
    const int64_t dims[2] = {2, 2};
    /* any difference is a mismatch, whatever the tolerance */
    int32_t ei[4] = {5, -7, 100, 0}, ai[4] = {5, -7, 101, 0};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "idx", KEVO_DT_I32, dims, 2, ei, ai, 4, 1000, 1000);
    assert_int_equal(st.mismatches, 1);
    assert_int_equal(st.nan_actual, 0);
    assert_int_equal(st.inf_actual, 0);
    const char *f = kevo_buf_cstr(&fb);
    assert_contains(f, "idx[1, 0]");
    assert_contains(f, "100");
    assert_contains(f, "101");
    kevo_buf_free(&fb);

    /* int64 beyond 2^53: values a double cannot tell apart must still differ */
    int64_t el[4] = {0, 0, 0, (1LL << 53)}, al[4] = {0, 0, 0, (1LL << 53) + 1};
    st = cmp(&fb, "cnt", KEVO_DT_I64, dims, 2, el, al, 4, 1e6, 1e6);
    assert_int_equal(st.mismatches, 1);
    assert_contains(kevo_buf_cstr(&fb), "cnt[1, 1]");
    kevo_buf_free(&fb);

    int64_t big[4] = {INT64_MIN, INT64_MAX, -1, 1};
    st = cmp(&fb, "cnt", KEVO_DT_I64, dims, 2, big, big, 4, 0, 0);
    assert_int_equal(st.mismatches, 0);
    assert_int_equal(fb.len, 0);

    uint8_t eb[4] = {0, 255, 128, 1}, ab[4] = {0, 255, 129, 0};
    st = cmp(&fb, "mask", KEVO_DT_U8, dims, 2, eb, ab, 4, 10, 10);
    assert_int_equal(st.mismatches, 2);
    assert_contains(kevo_buf_cstr(&fb), "mask[1, 0]");
    assert_contains(kevo_buf_cstr(&fb), "mask[1, 1]");
    kevo_buf_free(&fb);
}

static void test_compare__untouched_float_output(void **state)
{
    enum { N = 24 };
    float e[N], a[N];
    double ed[N], ad[N];
    for (int i = 0; i < N; i++) {
        e[i] = (float)i;
        ed[i] = i;
        a[i] = NAN; /* the poison set before every call */
        ad[i] = NAN;
    }
    const int64_t dims[2] = {4, 6};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F32, dims, 2, e, a, N, 1e-2, 1e-2);
    assert_true(st.untouched);
    assert_int_equal(st.mismatches, N);
    assert_int_equal(st.nan_actual, N);
    const char *f = kevo_buf_cstr(&fb);
    assert_contains(f, "'y'");
    assert_contains(f, "never wr"); /* "never wrote" / "never written" */
    kevo_buf_free(&fb);

    st = cmp(&fb, "yd", KEVO_DT_F64, dims, 2, ed, ad, N, 1e-2, 1e-2);
    assert_true(st.untouched);
    assert_contains(kevo_buf_cstr(&fb), "never wr");
    kevo_buf_free(&fb);
}

static void test_compare__untouched_integer_output(void **state)
{
    int32_t e[6] = {1, 2, 3, 4, 5, 6}, a[6];
    memset(a, 0x5A, sizeof(a)); /* integer poison: 0x5A bytes */
    const int64_t dims[1] = {6};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "idx", KEVO_DT_I32, dims, 1, e, a, 6, 0, 0);
    assert_true(st.untouched);
    assert_int_equal(st.mismatches, 6);
    assert_contains(kevo_buf_cstr(&fb), "idx");
    assert_contains(kevo_buf_cstr(&fb), "never wr");
    kevo_buf_free(&fb);

    uint8_t eb[3] = {1, 2, 3}, ab[3] = {0x5A, 0x5A, 0x5A};
    st = cmp(&fb, "m", KEVO_DT_U8, dims, 1, eb, ab, 3, 0, 0);
    assert_true(st.untouched);
    kevo_buf_free(&fb);
}

static void test_compare__partly_written_is_not_untouched(void **state)
{
    float e[10], a[10];
    for (int i = 0; i < 10; i++) {
        e[i] = (float)i;
        a[i] = i < 7 ? (float)i : NAN; /* the tail was never written */
    }
    const int64_t dims[1] = {10};
    kevo_buf fb = {0};
    kevo_compare_stats st = cmp(&fb, "y", KEVO_DT_F32, dims, 1, e, a, 10, 1e-2, 1e-2);
    assert_false(st.untouched);
    assert_int_equal(st.mismatches, 3);
    assert_int_equal(st.nan_actual, 3);
    assert_contains(kevo_buf_cstr(&fb), "y[7]");
    kevo_buf_free(&fb);

    /* one poison-looking value among written ones is not "untouched" */
    int32_t ei[3] = {0x5A5A5A5A, 1, 2}, ai[3] = {0x5A5A5A5A, 1, 2};
    st = cmp(&fb, "i", KEVO_DT_I32, dims, 1, ei, ai, 3, 0, 0);
    assert_false(st.untouched);
    assert_int_equal(st.mismatches, 0);
    kevo_buf_free(&fb);
}

static void test_compare__stats_odd(void **state)
{
    double s[5] = {5, 1, 3, 2, 4};
    double median = -1, min = -1, cv = -1;
    kevo_stats(s, 5, &median, &min, &cv);
    assert_true(median == 3);
    assert_true(min == 1);
    /* mean 3, sample variance 10/4 (Bessel's correction) */
    assert_true(fabs(cv - sqrt(2.5) / 3) < 1e-12);
    /* sorted in place */
    for (int i = 0; i < 5; i++)
        assert_true(s[i] == i + 1);
}

static void test_compare__stats_even(void **state)
{
    double s[4] = {10, 40, 20, 30};
    double median = -1, min = -1, cv = -1;
    kevo_stats(s, 4, &median, &min, &cv);
    assert_true(median == 25); /* mean of the two middle samples */
    assert_true(min == 10);
    /* mean 25, sample variance (225+25+25+225)/3 */
    assert_true(fabs(cv - sqrt(500.0 / 3) / 25) < 1e-12);
}

static void test_compare__stats_constant_and_single(void **state)
{
    double s[6] = {7.5, 7.5, 7.5, 7.5, 7.5, 7.5};
    double median = -1, min = -1, cv = -1;
    kevo_stats(s, 6, &median, &min, &cv);
    assert_true(median == 7.5);
    assert_true(min == 7.5);
    assert_true(cv == 0);

    double one[1] = {3.25};
    kevo_stats(one, 1, &median, &min, &cv);
    assert_true(median == 3.25);
    assert_true(min == 3.25);
    assert_true(cv == 0);
}

static void test_compare__stats_outlier_moves_mean_not_median(void **state)
{
    double s[9] = {100, 101, 99, 100, 100, 102, 98, 100, 10000};
    double median = -1, min = -1, cv = -1;
    kevo_stats(s, 9, &median, &min, &cv);
    assert_true(median == 100);
    assert_true(min == 98);
    assert_true(cv > 1); /* the outlier dominates the spread */
}

/* The fast path (vector lanes, tails, one part per core above 4 MiB) must
 * agree with kevo_compare_output on every kind of bad element at every
 * position class: the first, inside a vector, the scalar tail, each part
 * boundary, the last. */
static void test_compare__allclose_agrees_with_exact(void **state)
{
    (void)state;
    const int64_t n = 3 * (1 << 20) + 7; /* 12 MiB of f32: several parts, a tail */
    float *e = malloc((size_t)n * sizeof(float)), *a = malloc((size_t)n * sizeof(float));
    double *ed = malloc((size_t)n * sizeof(double)), *ad = malloc((size_t)n * sizeof(double));
    assert_non_null(e);
    assert_non_null(a);
    assert_non_null(ed);
    assert_non_null(ad);
    for (int64_t i = 0; i < n; i++) {
        e[i] = (float)sin((double)i * 0.001) * 3;
        ed[i] = e[i];
    }
    const double atol = 1e-5, rtol = 1e-5;
    const int64_t where[] = {0, 1, 5, n / 2, n / 3, n / 3 + 1, 2 * (n / 3), n - 7, n - 4, n - 1};
    const float bad[] = {NAN, INFINITY, -INFINITY, 1.0f};
    kevo_compare_stats st;
    for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++)
        for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
            memcpy(a, e, (size_t)n * sizeof(float));
            memcpy(ad, ed, (size_t)n * sizeof(double));
            int64_t i = where[w];
            a[i] = b == 3 ? e[i] + 1e-3f + fabsf(e[i]) * 1e-3f : bad[b];
            ad[i] = b == 3 ? ed[i] + 1e-3 + fabs(ed[i]) * 1e-3 : (double)bad[b];
            kevo_compare_output(&st, NULL, "y", KEVO_DT_F32, &n, 1, e, a, n, atol, rtol);
            assert_int_equal(st.mismatches, 1);
            assert_false(kevo_compare_allclose(KEVO_DT_F32, e, a, n, atol, rtol));
            assert_false(kevo_compare_allclose(KEVO_DT_F64, ed, ad, n, atol, rtol));
            /* just inside the tolerance: close */
            a[i] = (float)((double)e[i] + 0.5 * (atol + rtol * fabs((double)e[i])));
            ad[i] = ed[i] + 0.5 * (atol + rtol * fabs(ed[i]));
            assert_true(kevo_compare_allclose(KEVO_DT_F32, e, a, n, atol, rtol));
            assert_true(kevo_compare_allclose(KEVO_DT_F64, ed, ad, n, atol, rtol));
        }
    /* NaN expected: the fast path answers false and leaves it to the exact one */
    memcpy(a, e, (size_t)n * sizeof(float));
    e[n - 2] = a[n - 2] = NAN;
    assert_false(kevo_compare_allclose(KEVO_DT_F32, e, a, n, atol, rtol));
    /* integers: exact bytes, in every part */
    int32_t *ie = (int32_t *)e, *ia = (int32_t *)a;
    for (int64_t i = 0; i < n; i++)
        ie[i] = ia[i] = (int32_t)i;
    assert_true(kevo_compare_allclose(KEVO_DT_I32, ie, ia, n, 0, 0));
    ia[n - 1]++;
    assert_false(kevo_compare_allclose(KEVO_DT_I32, ie, ia, n, 0, 0));
    free(e);
    free(a);
    free(ed);
    free(ad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare__identical_outputs),
        cmocka_unit_test(test_compare__single_wrong_tail_element_2d),
        cmocka_unit_test(test_compare__coordinates_1d_and_3d),
        cmocka_unit_test(test_compare__feedback_is_appended),
        cmocka_unit_test(test_compare__many_mismatches_counted),
        cmocka_unit_test(test_compare__nan_in_actual),
        cmocka_unit_test(test_compare__nan_expected),
        cmocka_unit_test(test_compare__inf),
        cmocka_unit_test(test_compare__tolerance_boundary_exact),
        cmocka_unit_test(test_compare__feedback_names_tolerance),
        cmocka_unit_test(test_compare__integers_exact),
        cmocka_unit_test(test_compare__untouched_float_output),
        cmocka_unit_test(test_compare__untouched_integer_output),
        cmocka_unit_test(test_compare__partly_written_is_not_untouched),
        cmocka_unit_test(test_compare__stats_odd),
        cmocka_unit_test(test_compare__stats_even),
        cmocka_unit_test(test_compare__stats_constant_and_single),
        cmocka_unit_test(test_compare__stats_outlier_moves_mean_not_median),
        cmocka_unit_test(test_compare__allclose_agrees_with_exact),
    };
    return cmocka_run_group_tests_name("compare", tests, NULL, NULL);
}
