/*
 * test_recipe_private.c - omp_parallel over a loop whose iterations share a
 * scratch buffer the kernel allocates before it (src/recipe/private.c): each
 * thread gets a copy when every iteration writes what it reads first. The
 * rewrites run with 3 threads on 2 cores (more iterations than threads, an
 * uneven split) and with the threads' copies failing to allocate (the loop
 * then runs as written), against the kernel as written; where a copy could
 * change the result, the recipe declines, naming why.
 */
#include "recipe_check.h"

static const long DEFAULTS[2] = {2, 0};

/* logsumexp over the middle axis, the suite's form: `sum` holds a row of
 * partial sums, filled at the top of every b. */
static const char LSE[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <stdlib.h>\n"
    "void lse(const float *x, float *y, int64_t B, int64_t D, int64_t E)\n"
    "{\n"
    "    float *sum = malloc((size_t)E * sizeof(float));\n"
    "    if (!sum)\n"
    "        return;\n"
    "    for (int64_t b = 0; b < B; b++) {\n"
    "        const float *xb = x + b * D * E;\n"
    "        float *yb = y + b * E;\n"
    "        for (int64_t e = 0; e < E; e++)\n"
    "            yb[e] = xb[e];\n"
    "        for (int64_t d = 1; d < D; d++)\n"
    "            for (int64_t e = 0; e < E; e++)\n"
    "                if (xb[d * E + e] > yb[e])\n"
    "                    yb[e] = xb[d * E + e];\n"
    "        for (int64_t e = 0; e < E; e++)\n"
    "            sum[e] = 0.0f;\n"
    "        for (int64_t d = 0; d < D; d++)\n"
    "            for (int64_t e = 0; e < E; e++)\n"
    "                sum[e] += expf(xb[d * E + e] - yb[e]);\n"
    "        for (int64_t e = 0; e < E; e++)\n"
    "            yb[e] += logf(sum[e]);\n"
    "    }\n"
    "    free(sum);\n"
    "}\n";

/* Runs lse at several shapes; with FAIL_COPIES, every allocation of the
 * buffer's size after the first one fails (the threads' copies). */
#define LSE_DRIVER_BODY                                                                            \
    "void lse(const float *x, float *y, int64_t B, int64_t D, int64_t E);\n"                       \
    "int main(void) { unsigned s = 11;\n"                                                         \
    "  const int64_t shape[][3] = {{1, 1, 1}, {5, 3, 7}, {7, 4, 1000}, {2, 9, 33}};\n"             \
    "  float *x = malloc(7 * 9 * 1000 * 4), *y = malloc(7 * 1000 * 4);\n"                          \
    "  for (int64_t i = 0; i < 7 * 9 * 1000; i++) x[i] = rnd(&s);\n"                              \
    "  for (int k = 0; k < 4; k++) {\n"                                                            \
    "    for (int64_t i = 0; i < 7 * 1000; i++) y[i] = -7.0f;\n"                                     \
    "    watch = (size_t)shape[k][2] * 4; seen = 0;\n"                                             \
    "    lse(x, y, shape[k][0], shape[k][1], shape[k][2]);\n"                                      \
    "    watch = 0;\n"                                                                             \
    "    for (int64_t i = 0; i < 7 * 1000; i++) printf(\"%.9g\\n\", y[i]);\n"                        \
    "  }\n"                                                                                        \
    "  free(x); free(y); return 0; }\n"

static const char LSE_DRIVER[] = DRIVER_HEAD
    "static size_t watch; static int seen;\n" LSE_DRIVER_BODY;

static const char LSE_FAIL_DRIVER[] = DRIVER_HEAD
    "extern void *__libc_malloc(size_t);\n"
    "static size_t watch; static int seen;\n"
    "void *malloc(size_t n) {\n"
    "  if (watch && n == watch && __atomic_fetch_add(&seen, 1, __ATOMIC_SEQ_CST) > 0)\n"
    "    return 0;\n"
    "  return __libc_malloc(n); }\n" LSE_DRIVER_BODY;

static void three_threads(void)
{
    setenv("OMP_NUM_THREADS", "3", 1);
}

static void test_private__copies_per_thread(void **state)
{
    (void)state;
    three_threads();
    char *out = apply_ok("omp_parallel", DEFAULTS, 2, LSE, "lse");
    assert_contains(out, "each thread has its own 'sum'");
    assert_contains(out, "__typeof__(sum) sum = malloc((size_t)E * sizeof(float));");
    assert_contains(out, "#pragma omp for");
    assert_contains(out, "#pragma omp barrier");
    assert_same_result(LSE, out, LSE_DRIVER, "lse");
    free(out);
}

static void test_private__copies_that_fail_run_the_loop_as_written(void **state)
{
    (void)state;
    three_threads();
    char *out = apply_ok("omp_parallel", DEFAULTS, 2, LSE, "lse");
    assert_same_result(LSE, out, LSE_FAIL_DRIVER, "lse");
    free(out);
}

/* argmax's form: the fill loop writes two buffers, the buffer is read and
 * written under a condition later, a row pointer per iteration. */
static const char ARGMAX[] =
    "#include <stdint.h>\n"
    "#include <stdlib.h>\n"
    "void am(const float *x, int64_t *y, int64_t B, int64_t D, int64_t E)\n"
    "{\n"
    "    float *best = (float *)malloc((size_t)E * sizeof(float));\n"
    "    if (!best)\n"
    "        return;\n"
    "    for (int64_t b = 0; b < B; b++) {\n"
    "        const float *xb = x + b * D * E;\n"
    "        int64_t *yb = y + b * E;\n"
    "        for (int64_t e = 0; e < E; e++) {\n"
    "            best[e] = xb[e];\n"
    "            yb[e] = 0;\n"
    "        }\n"
    "        for (int64_t d = 1; d < D; d++)\n"
    "            for (int64_t e = 0; e < E; e++)\n"
    "                if (xb[d * E + e] > best[e]) {\n"
    "                    best[e] = xb[d * E + e];\n"
    "                    yb[e] = d;\n"
    "                }\n"
    "    }\n"
    "    free(best);\n"
    "}\n";

static const char ARGMAX_DRIVER[] = DRIVER_HEAD
    "void am(const float *x, int64_t *y, int64_t B, int64_t D, int64_t E);\n"
    "int main(void) { unsigned s = 3;\n"
    "  float *x = malloc(9 * 6 * 77 * 4); int64_t *y = malloc(9 * 77 * 8);\n"
    "  for (int64_t i = 0; i < 9 * 6 * 77; i++) x[i] = rnd(&s);\n"
    "  for (int64_t B = 0; B <= 9; B += 3) {\n"
    "    for (int64_t i = 0; i < 9 * 77; i++) y[i] = -1;\n"
    "    am(x, y, B, 6, 77);\n"
    "    for (int64_t i = 0; i < 9 * 77; i++) printf(\"%lld\\n\", (long long)y[i]);\n"
    "  }\n"
    "  free(x); free(y); return 0; }\n";

static void test_private__argmax_form(void **state)
{
    (void)state;
    three_threads();
    char *out = apply_ok("omp_parallel", DEFAULTS, 2, ARGMAX, "am");
    assert_contains(out, "__typeof__(best) best = (float *)malloc((size_t)E * sizeof(float));");
    assert_same_result(ARGMAX, out, ARGMAX_DRIVER, "am");
    free(out);
}

/* Each way a copy per thread would change what the kernel computes. */
static void test_private__declines(void **state)
{
    (void)state;
    /* the last iteration's sums are read after the loop */
    char *src = with(LSE, "    free(sum);\n", "    y[0] = sum[0];\n    free(sum);\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "used at line");
    free(src);
    /* the first use reads: what the previous iteration left */
    src = with(LSE, "            sum[e] = 0.0f;\n", "            sum[e] = sum[e] * 0.5f;\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "is not a store");
    free(src);
    /* filled only on some iterations */
    src = with(LSE, "        for (int64_t e = 0; e < E; e++)\n            sum[e] = 0.0f;\n",
               "        if (b == 0)\n        for (int64_t e = 0; e < E; e++)\n"
               "            sum[e] = 0.0f;\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "is not a store");
    free(src);
    /* a fill that skips elements */
    src = with(LSE, "            sum[e] = 0.0f;\n",
               "        {   if (e == 3) continue;\n            sum[e] = 0.0f; }\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "is not a store");
    free(src);
    /* read past what the fill wrote */
    src = with(LSE, "        for (int64_t e = 0; e < E; e++)\n            yb[e] += logf(sum[e]);\n",
               "        for (int64_t e = 0; e < E + 1; e++)\n            yb[e % E] += logf(sum[e]);\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "has not written");
    free(src);
    /* the buffer's size changes before the loop */
    src = with(LSE, "    if (!sum)\n        return;\n", "    if (!sum)\n        return;\n    E = E - 1;\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "the size of 'sum' reads 'E'");
    free(src);
    /* the pointer is moved */
    src = with(LSE, "    free(sum);\n", "    sum = 0;\n    free(sum);\n");
    assert_declines("omp_parallel", DEFAULTS, 2, src, "lse", "'sum' is assigned");
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_private__copies_per_thread),
        cmocka_unit_test(test_private__copies_that_fail_run_the_loop_as_written),
        cmocka_unit_test(test_private__argmax_form),
        cmocka_unit_test(test_private__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
