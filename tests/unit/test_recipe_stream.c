/*
 * tests/unit/test_recipe_stream.c - the `stream` recipe
 * (src/recipe/recipe_stream.c): a loop that maps inputs to one float
 * output writes whole 64-byte lines with streaming stores. Each rewrite is
 * built with gcc (the SSE path at -O2, the AVX-512 or AVX path under
 * -march=native where the machine has it) and run at lengths that put the
 * unaligned head, the lines and the tail to work (0, 1, 15, 16, 17, 100,
 * 1003 elements, the output starting 0 to 3 floats past a line), in and out
 * of threads, and compared with the loop as written. Where streaming could
 * change what the kernel computes, or would read a streamed line back, it
 * declines, naming why.
 */
#include "recipe_check.h"

static const long EVERY_THREADED[2] = {-1, 1};
static const long EVERY_SERIAL[2] = {-1, 0};

/* y = x * a + b over [lo, n): a map with a lower bound, a local, a call. */
static const char MAP[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "void map(const float *x, float *y, float a, int64_t lo, int64_t n)\n"
    "{\n"
    "    for (int64_t i = lo; i < n; i++) {\n"
    "        float v = x[i] * a;\n"
    "        y[i] = fabsf(v) + 0.5f;\n"
    "    }\n"
    "}\n";

/* Runs map over every length and misalignment; prints y, including the
 * elements the loop must leave alone (the sentinels before lo). */
static const char MAP_DRIVER[] = DRIVER_HEAD
    "void map(const float *x, float *y, float a, int64_t lo, int64_t n);\n"
    "int main(void) { unsigned s = 5;\n"
    "  const int64_t len[] = {0, 1, 15, 16, 17, 100, 1003};\n"
    "  float *x = aligned_alloc(64, 1088 * 4), *y = aligned_alloc(64, 1088 * 4);\n"
    "  for (int64_t i = 0; i < 1088; i++) x[i] = rnd(&s);\n"
    "  for (int l = 0; l < 7; l++)\n"
    "    for (int off = 0; off < 4; off++)\n"
    "      for (int64_t lo = 0; lo < 3; lo += 2) {\n"
    "        for (int64_t i = 0; i < 1088; i++) y[i] = -7.0f;\n"
    "        map(x + off, y + off, 1.5f, lo, len[l]);\n"
    "        for (int64_t i = 0; i < 1088; i++) printf(\"%.9g\\n\", y[i]);\n"
    "      }\n"
    "  free(x); free(y); return 0; }\n";

/* A row normalisation: a per-row scale, then the row written through a
 * row pointer (the suite's l2norm and layernorm form). */
static const char ROWS[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "void rows(const float *x, float *y, int64_t R, int64_t C)\n"
    "{\n"
    "    for (int64_t r = 0; r < R; r++) {\n"
    "        const float *xr = x + r * C;\n"
    "        float *yr = y + r * C;\n"
    "        float s = 0.0f;\n"
    "        for (int64_t c = 0; c < C; c++)\n"
    "            s += xr[c] * xr[c];\n"
    "        float inv = 1.0f / sqrtf(s + 1e-6f);\n"
    "        for (int64_t c = 0; c < C; c++)\n"
    "            yr[c] = xr[c] * inv;\n"
    "    }\n"
    "}\n";

static const char ROWS_DRIVER[] = DRIVER_HEAD
    "void rows(const float *x, float *y, int64_t R, int64_t C);\n"
    "int main(void) { unsigned s = 9;\n"
    "  const int64_t ext[][2] = {{3, 37}, {1, 1}, {4, 16}, {2, 200}, {0, 5}};\n"
    "  for (int e = 0; e < 5; e++) {\n"
    "    int64_t R = ext[e][0], C = ext[e][1];\n"
    "    float *x = malloc((R*C+1)*4), *y = malloc((R*C+1)*4);\n"
    "    for (int64_t i = 0; i < R*C; i++) x[i] = rnd(&s);\n"
    "    rows(x, y, R, C);\n"
    "    for (int64_t i = 0; i < R*C; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(y); }\n"
    "  return 0; }\n";

static void test_stream__map_in_lines(void **state)
{
    (void)state;
    char *out = apply_ok("stream", EVERY_THREADED, 2, MAP, "map");
    assert_contains(out, "nt_stream16(&y[");
    assert_contains(out, "#pragma omp parallel\n");
    assert_contains(out, "#pragma omp for nowait\n");
    assert_contains(out, "nt_stream_fence();");
    assert_contains(out, "-fopenmp");
    assert_same_result(MAP, out, MAP_DRIVER, "map");
    /* once is enough: the loop now reads y's lines through the helper */
    assert_declines("stream", EVERY_THREADED, 2, out, "map", "again");
    free(out);

    /* without threads: no OpenMP region, one fence after the loop; the lane
     * loop vectorised under -fopenmp-simd, and `unroll` leaves it alone */
    out = apply_ok("stream", EVERY_SERIAL, 2, MAP, "map");
    assert_lacks(out, "#pragma omp parallel");
    assert_lacks(out, "#pragma omp for");
    assert_contains(out, "#pragma omp simd\n");
    assert_contains(out, "-fopenmp-simd");
    const long unroll16[2] = {16, -1};
    char *unrolled = apply_ok("unroll", unroll16, 2, out, "map");
    assert_contains(unrolled, "#pragma omp simd\n            for (int i_lane");
    free(unrolled);
    assert_contains(out, "nt_stream_fence();");
    assert_same_result(MAP, out, MAP_DRIVER, "map");
    free(out);

    /* under -march=native: the AVX-512 (or AVX) streaming stores */
    char *flagged = NULL; /* the test's build is gcc -O2 plus the line */
    assert_int_equal(kevo_recipe_cflags_add(&flagged, NULL, MAP, "-O3 -march=native"), 0);
    out = apply_ok("stream", EVERY_THREADED, 2, flagged, "map");
    assert_contains(out, "-march=native");
    assert_same_result(MAP, out, MAP_DRIVER, "map");
    free(out);
    free(flagged);

    /* `i <= n - 1` and an omp parallel for already on the loop */
    char *src = with(MAP, "i < n;", "i <= n - 1;");
    char *par = with(src, "    for (int64_t i", "    #pragma omp parallel for\n    for (int64_t i");
    out = apply_ok("stream", EVERY_SERIAL, 2, par, "map");
    assert_contains(out, "#pragma omp for nowait\n");
    assert_lacks(out, "#pragma omp parallel for");
    assert_same_result(MAP, out, MAP_DRIVER, "map");
    free(out);
    free(par);
    free(src);
}

static void test_stream__rows_through_row_pointers(void **state)
{
    (void)state;
    char *out = apply_ok("stream", EVERY_THREADED, 2, ROWS, "rows");
    assert_contains(out, "nt_stream16(&yr[");
    /* a loop inside another loop does not open a parallel region per row */
    assert_lacks(out, "#pragma omp parallel");
    assert_same_result(ROWS, out, ROWS_DRIVER, "rows");
    /* the rows in threads around it: each thread fences its own lines */
    const long par[2] = {1, 0};
    char *threaded = apply_ok("omp_parallel", par, 2, out, "rows");
    assert_same_result(ROWS, threaded, ROWS_DRIVER, "rows");
    free(threaded);
    free(out);
}

static void test_stream__declines(void **state)
{
    (void)state;
    /* a zero fill the kernel accumulates into afterwards: the streamed lines
     * would be read back from memory */
    assert_declines("stream", EVERY_THREADED, 2, MATMUL_ROWS, "mm", "again");
    /* the loop reads what it streams */
    char *src = with(MAP, "fabsf(v) + 0.5f", "fabsf(v) + y[i]");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "reads 'y'");
    free(src);
    /* a store some iterations skip: a line's other lanes would be written */
    src = with(MAP, "        y[i] = fabsf(v) + 0.5f;", "        if (v > 0) y[i] = v;");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "not a statement of the loop's body");
    free(src);
    src = with(MAP, "float v = x[i] * a;", "float v = x[i] * a;\n        if (v > 1) continue;");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "continue");
    free(src);
    /* not consecutive elements */
    src = with(MAP, "y[i] =", "y[2 * i] =");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "coefficient 1");
    free(src);
    src = with(MAP, "y[i] =", "y[n - i] =");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "coefficient 1");
    free(src);
    /* an accumulation: the line's old values are needed */
    src = with(MAP, "y[i] =", "y[i] +=");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "also writes 'y'");
    free(src);
    /* a reduction (the first of the rows' two inner loops) */
    const long reduction[2] = {1, 1};
    assert_declines("stream", reduction, 2, ROWS, "rows", "also writes 's'");
    /* an index that reads memory */
    src = with(MAP, "void map(const float *x, float *y,", "void map(const float *x, float *y, "
                                                         "const int64_t *o,");
    char *src2 = with(src, "y[i] =", "y[o[0] + i] =");
    assert_declines("stream", EVERY_THREADED, 2, src2, "map", "reads memory");
    free(src2);
    free(src);
    /* a double output: lines of 16 floats do not fit it */
    src = with(MAP, "float *y,", "double *y,");
    assert_declines("stream", EVERY_THREADED, 2, src, "map", "not into a float array");
    free(src);
    /* a loop index out of range */
    const long far[2] = {9, 1};
    assert_declines("stream", far, 2, MAP, "map", "out of range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream__map_in_lines),
        cmocka_unit_test(test_stream__rows_through_row_pointers),
        cmocka_unit_test(test_stream__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
