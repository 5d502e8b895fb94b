/*
 * tests/unit/test_recipe_scan.c - the `scan` recipe (src/recipe/recipe_scan.c):
 * a running sum or product computed a vector of floats at a time. Each
 * rewrite is built with gcc (16-byte vectors at -O2, the widest the machine
 * has under -march=native) and run at lengths that put the blocks and the
 * remainder to work (0, 1, 3, 4, 5, 15, 16, 17, 100, 1003 elements, a
 * lower bound of 0 and 2), and compared with the loop as written (rtol
 * 1e-4: the lanes reassociate the sums). Where the lanes could change what
 * the kernel computes it declines, naming why.
 */
#include "recipe_check.h"

static const long EVERY[1] = {-1};

/* A cumsum over [lo, n) (the suite's rows have the same loop). */
static const char CUMSUM[] = "#include <stdint.h>\n"
                             "void scan(const float *x, float *y, int64_t lo, int64_t n)\n"
                             "{\n"
                             "    float acc = 0.5f;\n"
                             "    for (int64_t i = lo; i < n; i++) {\n"
                             "        acc += x[i] * 2.0f;\n"
                             "        y[i] = acc;\n"
                             "    }\n"
                             "}\n";

/* Runs scan over every length and both lower bounds; prints y, including
 * what the loop must leave alone (before lo, past n). Products get inputs
 * near 1, so that they neither vanish nor blow up. */
static const char DRIVER[] = DRIVER_HEAD
    "void scan(const float *x, float *y, int64_t lo, int64_t n);\n"
    "int main(void) { unsigned s = 5;\n"
    "  const int64_t len[] = {0, 1, 3, 4, 5, 15, 16, 17, 100, 1003};\n"
    "  float *x = malloc(1100 * 4), *y = malloc(1100 * 4);\n"
    "  for (int64_t i = 0; i < 1100; i++) x[i] = PRODUCT ? 1.0f + 0.05f * rnd(&s) : rnd(&s);\n"
    "  for (int l = 0; l < 10; l++)\n"
    "    for (int64_t lo = 0; lo < 3; lo += 2) {\n"
    "      for (int64_t i = 0; i < 1100; i++) y[i] = -7.0f;\n"
    "      scan(x, y, lo, len[l]);\n"
    "      for (int64_t i = 0; i < 1100; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    }\n"
    "  free(x); free(y); return 0; }\n";

static char *driver(bool product)
{
    return with(DRIVER, "PRODUCT", product ? "1" : "0");
}

/* The source under -O3 -march=native (the machine's widest vectors). */
static char *native(const char *src)
{
    char *flagged = NULL;
    assert_int_equal(kevo_recipe_cflags_add(&flagged, NULL, src, "-O3 -march=native"), 0);
    return flagged;
}

/* src rewritten, checked at both widths against src; returns the rewrite. */
static char *scan_ok(const char *src, bool product)
{
    char *d = driver(product);
    char *out = apply_ok("scan", EVERY, 1, src, "scan");
    assert_contains(out, "scan_vf");
    assert_contains(out, "-fopenmp-simd");
    assert_same_result(src, out, d, "scan");
    char *flagged = native(src);
    char *wide = apply_ok("scan", EVERY, 1, flagged, "scan");
    assert_same_result(src, wide, d, "scan");
    free(wide);
    free(flagged);
    free(d);
    return out;
}

static void test_scan__running_sum(void **state)
{
    (void)state;
    char *out = scan_ok(CUMSUM, false);
    assert_contains(out, "i_v = scan_add(i_v) + acc;");
    assert_contains(out, "acc = i_v[(int)(sizeof(scan_vf) / sizeof(float)) - 1];");
    /* the helpers once, above the kernel; scanned again, it declines */
    assert_declines("scan", EVERY, 1, out, "scan", "scanned already");
    free(out);
    /* `i <= n - 1`, and the rows in threads around it */
    char *le = with(CUMSUM, "i < n;", "i <= n - 1;");
    out = scan_ok(le, false);
    free(out);
    free(le);
}

static void test_scan__forms(void **state)
{
    (void)state;
    /* a running product */
    char *prod = with(CUMSUM, "acc += x[i] * 2.0f;", "acc *= x[i];");
    char *out = scan_ok(prod, true);
    assert_contains(out, "scan_mul(i_v) * acc");
    free(out);
    free(prod);
    /* exclusive: the store before the update */
    char *excl = with(CUMSUM, "        acc += x[i] * 2.0f;\n        y[i] = acc;\n",
                      "        y[i] = acc;\n        acc += x[i] * 2.0f;\n");
    out = scan_ok(excl, false);
    assert_contains(out, "scan_shift1(i_v, acc)");
    free(out);
    free(excl);
    /* running down (a reverse cumsum), `>=` and `>` */
    char *down =
        with(CUMSUM, "for (int64_t i = lo; i < n; i++)", "for (int64_t i = n - 1; i >= lo; i--)");
    out = scan_ok(down, false);
    assert_contains(out, "scan_add_down(i_v)");
    assert_contains(out, "acc = i_v[0];");
    free(out);
    char *gt = with(CUMSUM, "for (int64_t i = lo; i < n; i++)",
                    "for (int64_t i = n - 1; i > lo - 1; i--)");
    out = scan_ok(gt, false);
    free(out);
    free(gt);
    /* exclusive and down */
    char *both = with(down, "        acc += x[i] * 2.0f;\n        y[i] = acc;\n",
                      "        y[i] = acc;\n        acc += x[i] * 2.0f;\n");
    out = scan_ok(both, false);
    assert_contains(out, "scan_shift1_down(i_v, acc)");
    free(out);
    free(both);
    free(down);
}

/* The suite's rows: a row pointer, the scan inside the row loop, then
 * omp_parallel over the rows. */
static const char ROWS[] = "#include <stdint.h>\n"
                           "void rows(const float *x, float *y, int64_t R, int64_t C)\n"
                           "{\n"
                           "    for (int64_t r = 0; r < R; r++) {\n"
                           "        const float *xr = x + r * C;\n"
                           "        float acc = 0.0f;\n"
                           "        for (int64_t c = 0; c < C; c++) {\n"
                           "            acc += xr[c];\n"
                           "            y[r * C + c] = acc;\n"
                           "        }\n"
                           "    }\n"
                           "}\n";

static const char ROWS_DRIVER[] =
    DRIVER_HEAD "void rows(const float *x, float *y, int64_t R, int64_t C);\n"
                "int main(void) { unsigned s = 9;\n"
                "  const int64_t ext[][2] = {{3, 37}, {1, 1}, {4, 16}, {2, 200}, {0, 5}, {5, 0}};\n"
                "  for (int e = 0; e < 6; e++) {\n"
                "    int64_t R = ext[e][0], C = ext[e][1];\n"
                "    float *x = malloc((R*C+1)*4), *y = malloc((R*C+1)*4);\n"
                "    for (int64_t i = 0; i < R*C; i++) x[i] = rnd(&s);\n"
                "    rows(x, y, R, C);\n"
                "    for (int64_t i = 0; i < R*C; i++) printf(\"%.9g\\n\", y[i]);\n"
                "    free(x); free(y); }\n"
                "  return 0; }\n";

static void test_scan__rows_in_threads(void **state)
{
    (void)state;
    char *out = apply_ok("scan", EVERY, 1, ROWS, "rows");
    assert_same_result(ROWS, out, ROWS_DRIVER, "rows");
    const long par[2] = {1, 0};
    char *threaded = apply_ok("omp_parallel", par, 2, out, "rows");
    assert_contains(threaded, "#pragma omp parallel for");
    assert_same_result(ROWS, threaded, ROWS_DRIVER, "rows");
    free(threaded);
    free(out);
}

static void test_scan__declines(void **state)
{
    (void)state;
    /* a conditional addend (a masked cumsum) */
    char *src = with(CUMSUM, "        acc += x[i] * 2.0f;\n",
                     "        if (x[i] > 0.0f)\n            acc += x[i];\n");
    assert_declines("scan", EVERY, 1, src, "scan", "does not update a float `acc += e;`");
    free(src);
    /* the addend reads what the loop stores to: a recurrence through memory */
    src = with(CUMSUM, "acc += x[i] * 2.0f;", "acc += y[i - 1];");
    assert_declines("scan", EVERY, 1, src, "scan", "reads 'acc' or what the loop stores to");
    free(src);
    /* a call in the addend */
    src = with(CUMSUM, "acc += x[i] * 2.0f;", "acc += f(x[i]);");
    char *withf = with(src, "#include <stdint.h>\n", "#include <stdint.h>\nfloat f(float);\n");
    assert_declines("scan", EVERY, 1, withf, "scan", "calls");
    free(withf);
    free(src);
    /* a double accumulator: the lanes are floats */
    src = with(CUMSUM, "float acc = 0.5f;", "double acc = 0.5;");
    assert_declines("scan", EVERY, 1, src, "scan", "does not update a float");
    free(src);
    /* a third statement */
    src = with(CUMSUM, "        y[i] = acc;\n", "        y[i] = acc;\n        acc *= 0.5f;\n");
    assert_declines("scan", EVERY, 1, src, "scan", "is not two statements");
    free(src);
    /* a strided store */
    src = with(CUMSUM, "y[i] = acc;", "y[2 * i] = acc;");
    assert_declines("scan", EVERY, 1, src, "scan", "not at `e + i`");
    free(src);
    /* a pragma on the loop */
    src = with(CUMSUM, "    for (int64_t i", "    #pragma omp simd\n    for (int64_t i");
    assert_declines("scan", EVERY, 1, src, "scan", "carries a pragma");
    free(src);
    /* the accumulator declared in the loop (no running value) */
    src = with(CUMSUM, "        acc += x[i] * 2.0f;\n",
               "        float acc = 0.0f;\n        acc += x[i];\n");
    assert_declines("scan", EVERY, 1, src, "scan", "is not two statements");
    free(src);
    /* a step of 2 */
    src = with(CUMSUM, "i++)", "i += 2)");
    assert_declines("scan", EVERY, 1, src, "scan", "is neither");
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan__running_sum),
        cmocka_unit_test(test_scan__forms),
        cmocka_unit_test(test_scan__rows_in_threads),
        cmocka_unit_test(test_scan__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
