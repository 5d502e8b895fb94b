/*
 * tests/unit/test_recipe_jam.c - the unroll_jam recipe (register blocking,
 * src/recipe/recipe_jam.c).
 *
 * It applies to the matmul and conv2d references and to accumulator forms,
 * the result holds the renamed accumulators, the `i += F` main loop and the
 * remainder loop, and it computes what the original computes: both are
 * built with `gcc -O2 -fopenmp` plus their cflags line, linked with a driver
 * that calls the kernel at several sizes that are not multiples of F (some
 * smaller than F, some zero), run with OMP_NUM_THREADS=2, and their outputs
 * compared. It declines, with the reason, on recurrences, early exits,
 * OpenMP pragmas, non-simple loops and shared scalars; and chains with
 * itself, omp_parallel, omp_simd and flags.
 *
 * The compile-and-compare driver follows tests/unit/test_recipe.c.
 */
#include "recipe_check.h"

/* ---- kernels ------------------------------------------------------------ */

/* matmul_rect in the perfect form with an accumulator. */
static const char RECT_ACC[] =
    "#include <stdint.h>\n"
    "\n"
    "void matmul_rect(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    for (int64_t i = 0; i < M; i++)\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            float acc = 0.0f;\n"
    "            for (int64_t k = 0; k < K; k++)\n"
    "                acc += A[i * K + k] * B[k * N + j];\n"
    "            C[i * N + j] = acc;\n"
    "        }\n"
    "}\n";

static const char ROWSUM[] = "#include <stdint.h>\n"
                             "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                             "    for (int64_t i = 0; i < R; i++) {\n"
                             "        float acc = 0.0f;\n"
                             "        for (int64_t j = 0; j < C; j++)\n"
                             "            acc += x[i*C+j];\n"
                             "        y[i] = acc;\n"
                             "    }\n"
                             "}\n";

/* Scalars declared outside the loop: a private accumulator and an inner
 * loop's variable; a total reduced over rows; an inclusive bound and a
 * lower bound of 1. */
static const char ROWSUM_OUTER[] = "#include <stdint.h>\n"
                                   "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                                   "    int64_t j;\n"
                                   "    float acc, total = 0.0f;\n"
                                   "    for (int64_t i = 1; i <= R - 1; i++) {\n"
                                   "        acc = 0.0f;\n"
                                   "        for (j = 0; j < C; j++) acc += x[i*C+j];\n"
                                   "        y[i] = acc;\n"
                                   "        total += acc;\n"
                                   "    }\n"
                                   "    y[0] = total;\n"
                                   "}\n";

/* ---- drivers ------------------------------------------------------------ */

#define DRIVER_FILL                                                                                \
    DRIVER_HEAD                                                                                    \
    "static float *fill(int64_t n, unsigned *s) { float *p = malloc((size_t)(n + 1) * 4);\n"       \
    "  for (int64_t i = 0; i <= n; i++) p[i] = rnd(s); return p; }\n"                              \
    "static void show(const float *p, int64_t n) {\n"                                              \
    "  for (int64_t i = 0; i <= n; i++) printf(\"%.9g\\n\", p[i]); }\n"

/* Sizes not multiples of 4, 8 or 16; some below them; zero. */
static const char DRIVER_SQUARE[] = DRIVER_FILL
    "void matmul_square(const float *A, const float *B, float *C, int64_t N);\n"
    "int main(void) { static const int64_t n[] = {0, 1, 3, 5, 13, 37}; unsigned s = 7;\n"
    "  for (int t = 0; t < 6; t++) { int64_t N = n[t];\n"
    "    float *A = fill(N*N, &s), *B = fill(N*N, &s), *C = fill(N*N, &s);\n"
    "    matmul_square(A, B, C, N); show(C, N*N); free(A); free(B); free(C); }\n"
    "  return 0; }\n";

static const char DRIVER_RECT[] = DRIVER_FILL
    "void matmul_rect(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K);\n"
    "int main(void) { static const int64_t d[][3] = {{0, 5, 3}, {3, 0, 2}, {1, 1, 1},\n"
    "    {3, 7, 5}, {13, 21, 9}, {19, 35, 4}}; unsigned s = 5;\n"
    "  for (int t = 0; t < 6; t++) { int64_t M = d[t][0], N = d[t][1], K = d[t][2];\n"
    "    float *A = fill(M*K, &s), *B = fill(K*N, &s), *C = fill(M*N, &s);\n"
    "    matmul_rect(A, B, C, M, N, K); show(C, M*N); free(A); free(B); free(C); }\n"
    "  return 0; }\n";

static const char DRIVER_ROWS[] =
    DRIVER_FILL "void rowsum(const float *x, float *y, int64_t R, int64_t C);\n"
                "int main(void) { static const int64_t d[][2] = {{0, 3}, {1, 4}, {2, 0},\n"
                "    {3, 5}, {13, 53}, {22, 7}}; unsigned s = 3;\n"
                "  for (int t = 0; t < 6; t++) { int64_t R = d[t][0], C = d[t][1];\n"
                "    float *x = fill(R*C, &s), *y = fill(R, &s);\n"
                "    rowsum(x, y, R, C); show(y, R); free(x); free(y); }\n"
                "  return 0; }\n";

/* OC and OW (= W - K + 1) not multiples of the factors, and below them. */
static const char DRIVER_CONV[] = DRIVER_FILL
    "void conv2d(const float *x, const float *w, float *y, int64_t N, int64_t C,\n"
    "            int64_t H, int64_t W, int64_t OC, int64_t K);\n"
    "int main(void) { static const int64_t d[][6] = {{2, 3, 9, 11, 7, 3},\n"
    "    {1, 2, 5, 4, 2, 3}, {1, 1, 4, 4, 0, 2}, {1, 2, 6, 20, 5, 1}}; unsigned s = 9;\n"
    "  for (int t = 0; t < 4; t++) { int64_t N = d[t][0], C = d[t][1], H = d[t][2],\n"
    "      W = d[t][3], OC = d[t][4], K = d[t][5], OH = H - K + 1, OW = W - K + 1;\n"
    "    float *x = fill(N*C*H*W, &s), *w = fill(OC*C*K*K, &s), *y = fill(N*OC*OH*OW, &s);\n"
    "    conv2d(x, w, y, N, C, H, W, OC, K); show(y, N*OC*OH*OW);\n"
    "    free(x); free(w); free(y); }\n"
    "  return 0; }\n";

/* Every R from 0 to 13: below, at and between multiples of 3 and 4; y has
 * one element more than the kernel may write, printed too. */
static const char DRIVER_ROWS_ALL[] =
    DRIVER_FILL "void rowsum(const float *x, float *y, int64_t R, int64_t C);\n"
                "int main(void) { unsigned s = 11;\n"
                "  for (int64_t R = 0; R <= 13; R++) { int64_t C = 5 + R % 3;\n"
                "    float *x = fill(R*C, &s), *y = fill(R, &s);\n"
                "    rowsum(x, y, R, C); show(y, R); free(x); free(y); }\n"
                "  return 0; }\n";

/* ---- helpers ------------------------------------------------------------ */

static char *read_reference(const char *task)
{
    char path[512], *src = NULL;
    snprintf(path, sizeof(path), "%s/suites/c/level1/%s/reference.c", KEVO_SOURCE_DIR, task);
    assert_int_equal(kevo_file_read(&src, NULL, path), 0);
    return src;
}

/* ---- applies ------------------------------------------------------------ */

static void test_recipe_jam__matmul_square_reference(void **state)
{
    (void)state;
    char *src = read_reference("015_matmul_square");
    long p[] = {0, 4};
    char *out = apply_ok("unroll_jam", p, 2, src, "matmul_square");
    assert_contains(out, "    for (int64_t i = 0; i < (N > 0 ? N / 4 * 4 : 0); i += 4) {\n"
                         "        float *c_0 = C + i * N;\n"
                         "        float *c_1 = C + (i + 1) * N;\n");
    /* the zero loop and the k loop are kept once, their bodies jammed */
    assert_contains(out, "        for (int64_t j = 0; j < N; j++) {\n"
                         "            c_0[j] = 0.0f;\n"
                         "            c_1[j] = 0.0f;\n"
                         "            c_2[j] = 0.0f;\n"
                         "            c_3[j] = 0.0f;\n"
                         "        }\n");
    assert_contains(out, "            float a_3 = A[(i + 3) * N + k];\n");
    /* the same value in every copy and never written: declared once */
    assert_contains(out, "            const float *b = B + k * N;\n"
                         "            for (int64_t j = 0; j < N; j++) {\n"
                         "                c_0[j] += a_0 * b[j];\n");
    assert_lacks(out, "b_1");
    /* the remainder runs the original body */
    assert_contains(out, "    for (int64_t i = (N > 0 ? N / 4 * 4 : 0); i < N; i++) {\n"
                         "        float *c = C + i * N;\n");
    assert_same_result(src, out, DRIVER_SQUARE, "matmul_square");
    free(out);
    /* the first qualifying loop is the i loop */
    long def[] = {-1, 8};
    out = apply_ok("unroll_jam", def, 2, src, "matmul_square");
    assert_contains(out, "i += 8) {\n");
    assert_contains(out, "c_7[j] = 0.0f;");
    assert_same_result(src, out, DRIVER_SQUARE, "matmul_square");
    free(out);
    free(src);
}

static void test_recipe_jam__rect_accumulators(void **state)
{
    (void)state;
    long p[] = {0, 4};
    char *out = apply_ok("unroll_jam", p, 2, RECT_ACC, "matmul_rect");
    assert_contains(out, "for (int64_t i = 0; i < (M > 0 ? M / 4 * 4 : 0); i += 4) {\n"
                         "        for (int64_t j = 0; j < N; j++) {\n"
                         "            float acc_0 = 0.0f;\n"
                         "            float acc_1 = 0.0f;\n"
                         "            float acc_2 = 0.0f;\n"
                         "            float acc_3 = 0.0f;\n"
                         "            for (int64_t k = 0; k < K; k++) {\n"
                         "                acc_0 += A[i * K + k] * B[k * N + j];\n"
                         "                acc_1 += A[(i + 1) * K + k] * B[k * N + j];\n");
    assert_contains(out, "            C[(i + 3) * N + j] = acc_3;\n");
    assert_contains(out, "    for (int64_t i = (M > 0 ? M / 4 * 4 : 0); i < M; i++)\n"
                         "        for (int64_t j = 0; j < N; j++) {\n"
                         "            float acc = 0.0f;\n");
    assert_same_result(RECT_ACC, out, DRIVER_RECT, "matmul_rect");
    /* then the j loop: 4 x 4 accumulators */
    long pj[] = {1, 4};
    char *out2 = apply_ok("unroll_jam", pj, 2, out, "matmul_rect");
    assert_contains(out2, "for (int64_t j = 0; j < (N > 0 ? N / 4 * 4 : 0); j += 4) {\n");
    assert_contains(out2, "acc_3_3 += A[(i + 3) * K + k] * B[k * N + (j + 3)];\n");
    assert_contains(out2, "C[(i + 2) * N + (j + 1)] = acc_2_1;\n");
    assert_same_result(RECT_ACC, out2, DRIVER_RECT, "matmul_rect");
    free(out2);
    free(out);
}

static void test_recipe_jam__conv2d_reference(void **state)
{
    (void)state;
    char *src = read_reference("051_conv2d");
    kevo_recipe_step steps[] = {
        {.recipe = "unroll_jam", .params = {1, 4}, .n_params = 2}, /* oc */
        {.recipe = "unroll_jam", .params = {3, 4}, .n_params = 2}, /* ow of the main oc loop */
    };
    char *oc = chain_ok(steps, 1, src, "conv2d");
    /* the oc loop was the body of the n loop: it gets braces around the two loops */
    assert_contains(oc, "for (int64_t n = 0; n < N; n++) {\n"
                        "        for (int64_t oc = 0; oc < (OC > 0 ? OC / 4 * 4 : 0); oc += 4) {\n"
                        "            for (int64_t oh = 0; oh < OH; oh++) {\n");
    assert_contains(oc, "acc_3 += x[((n * C + c) * H + oh + kh) * W + ow + kw] *\n");
    assert_contains(oc, "w[(((oc + 3) * C + c) * K + kh) * K + kw];\n");
    assert_contains(oc, "        for (int64_t oc = (OC > 0 ? OC / 4 * 4 : 0); oc < OC; oc++)\n");
    assert_same_result(src, oc, DRIVER_CONV, "conv2d");
    char *both = chain_ok(steps, 2, src, "conv2d");
    assert_contains(both, "for (int64_t ow = 0; ow < (OW > 0 ? OW / 4 * 4 : 0); ow += 4) {\n");
    assert_contains(both, "float acc_3_3 = 0.0f;\n");
    assert_contains(both, "acc_1_2 += x[((n * C + c) * H + oh + kh) * W + (ow + 2) + kw] *\n");
    assert_contains(both, "y[((n * OC + (oc + 3)) * OH + oh) * OW + (ow + 1)] = acc_3_1;\n");
    assert_same_result(src, both, DRIVER_CONV, "conv2d");
    /* and omp_parallel still applies to the blocked nest */
    kevo_recipe_step par[] = {
        steps[0], steps[1], {.recipe = "omp_parallel", .params = {1}, .n_params = 1}};
    char *p = chain_ok(par, 3, src, "conv2d");
    assert_contains(p, "    #pragma omp parallel for\n    for (int64_t n = 0; n < N; n++) {\n");
    assert_same_result(src, p, DRIVER_CONV, "conv2d");
    free(p);
    free(both);
    free(oc);
    free(src);
}

static void test_recipe_jam__rowsum_reduction(void **state)
{
    (void)state;
    long p[] = {0, 4};
    char *out = apply_ok("unroll_jam", p, 2, ROWSUM, "rowsum");
    assert_contains(out, "    for (int64_t i = 0; i < (R > 0 ? R / 4 * 4 : 0); i += 4) {\n"
                         "        float acc_0 = 0.0f;\n");
    /* the non-compound inner body gets braces for its copies */
    assert_contains(out, "        for (int64_t j = 0; j < C; j++) {\n"
                         "            acc_0 += x[i*C+j];\n"
                         "            acc_1 += x[(i + 1)*C+j];\n");
    assert_contains(out, "        y[(i + 3)] = acc_3;\n");
    assert_same_result(ROWSUM, out, DRIVER_ROWS, "rowsum");
    free(out);

    /* scalars declared outside: the private gets one per copy, the inner
     * loop's variable and the reduction stay shared; `<=` and a lower bound
     * of 1 */
    long p3[] = {0, 3};
    out = apply_ok("unroll_jam", p3, 2, ROWSUM_OUTER, "rowsum");
    assert_contains(out,
                    "    for (int64_t i = 1; i < (1 + ((R - 1 + 1) > 1 ? ((R - 1 + 1) - 1) / 3 "
                    "* 3 : 0)); i += 3) {\n"
                    "        __typeof__(acc) acc_0, acc_1, acc_2;\n");
    assert_contains(out, "        for (j = 0; j < C; j++) {\n"
                         "            acc_0 += x[i*C+j];\n");
    assert_contains(out, "        total += acc_0;\n        total += acc_1;\n");
    assert_contains(out, "    for (int64_t i = (1 + ((R - 1 + 1) > 1 ? ((R - 1 + 1) - 1) / 3 * 3 : "
                         "0)); i <= R - 1; i++) {\n");
    assert_same_result(ROWSUM_OUTER, out, DRIVER_ROWS, "rowsum");
    free(out);
}

/* loop=-1 passes over a loop that does not qualify; an unsigned induction
 * variable with extents below the factor. */
static void test_recipe_jam__picks_and_unsigned(void **state)
{
    (void)state;
    static const char two[] = "#include <stdint.h>\n"
                              "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                              "    float run = 0.0f;\n"
                              "    for (int64_t i = 0; i < R; i++) {\n"
                              "        run = run * 0.5f + x[i*C];\n"
                              "        y[i] = run;\n"
                              "    }\n"
                              "    for (int64_t i = 0; i < R; i++) {\n"
                              "        float s = 0.0f;\n"
                              "        for (int64_t j = 0; j < C; j++) s += x[i*C+j];\n"
                              "        y[i] += s;\n"
                              "    }\n"
                              "}\n";
    long def[] = {-1, 4};
    char *out = apply_ok("unroll_jam", def, 2, two, "rowsum");
    assert_contains(out, "    for (int64_t i = 0; i < R; i++) {\n"
                         "        run = run * 0.5f + x[i*C];\n");
    assert_contains(out, "    for (int64_t i = 0; i < (R > 0 ? R / 4 * 4 : 0); i += 4) {\n"
                         "        float s_0 = 0.0f;\n");
    /* the inner body shared the header's line: its copies go one level in */
    assert_contains(out, "        for (int64_t j = 0; j < C; j++) {\n"
                         "            s_0 += x[i*C+j];\n");
    assert_same_result(two, out, DRIVER_ROWS, "rowsum");
    free(out);

    static const char unsig[] = "#include <stddef.h>\n#include <stdint.h>\n"
                                "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                                "    size_t n = (size_t)R;\n"
                                "    for (size_t i = 0; i < n; i++) {\n"
                                "        float s = 0.0f;\n"
                                "        for (int64_t j = 0; j < C; j++) s += x[(int64_t)i*C+j];\n"
                                "        y[i] = s;\n"
                                "    }\n"
                                "}\n";
    long p8[] = {0, 8};
    out = apply_ok("unroll_jam", p8, 2, unsig, "rowsum");
    assert_contains(out, "for (size_t i = 0; i < (n > 0 ? n / 8 * 8 : 0); i += 8) {\n");
    assert_contains(out, "s_7 += x[(int64_t)(i + 7)*C+j];");
    assert_same_result(unsig, out, DRIVER_ROWS, "rowsum");
    free(out);
}

/* `tail` 1: the rows a whole block leaves run as one more block over the
 * last F, where the body only stores what it does not read; the rows it
 * runs again store the same values (bit for bit: the same operations). */
static void test_recipe_jam__tail(void **state)
{
    (void)state;
    long p[] = {0, 4, 1};
    char *out = apply_ok("unroll_jam", p, 3, ROWSUM, "rowsum");
    assert_contains(out, "    }\n"
                         "    if ((R > 0 ? R / 4 * 4 : 0) < R && R >= 4) {\n"
                         "        int64_t i = R - 4;\n"
                         "        float acc_0 = 0.0f;\n");
    assert_contains(out, "        y[(i + 3)] = acc_3;\n"
                         "    } else\n"
                         "        for (int64_t i = (R > 0 ? R / 4 * 4 : 0); i < R; i++) {\n");
    assert_same_output(ROWSUM, out, DRIVER_ROWS_ALL, "rowsum", 100);
    free(out);

    /* privates declared outside, a lower bound of 1, `<=`; factor 3 */
    static const char from1[] = "#include <stdint.h>\n"
                                "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                                "    int64_t j;\n"
                                "    float acc;\n"
                                "    y[0] = 0.0f;\n"
                                "    for (int64_t i = 1; i <= R - 1; i++) {\n"
                                "        acc = 0.0f;\n"
                                "        for (j = 0; j < C; j++) acc += x[i*C+j] * x[j];\n"
                                "        y[i] = acc;\n"
                                "    }\n"
                                "}\n";
    long p3[] = {0, 3, 1};
    out = apply_ok("unroll_jam", p3, 3, from1, "rowsum");
    assert_contains(out, "(R - 1 + 1) - 1 >= 3) {\n"
                         "        int64_t i = (R - 1 + 1) - 3;\n"
                         "        __typeof__(acc) acc_0, acc_1, acc_2;\n");
    assert_same_output(from1, out, DRIVER_ROWS_ALL, "rowsum", 100);
    free(out);

    /* bodies whose second run would change something: the remainder loop.
     * A reduction across rows, a store that reads its element (twice run,
     * twice added), a read of the stored array, a read through a copy of
     * its pointer, a call, stores through a local pointer and through a
     * global one into the row the body reads (run again, it would read
     * what it stored). */
    static const char *const unsafe[][3] = {
        {"", "", "y[i] += acc;"},
        {"", "", "y[i] = acc + 0.5f * y[i];"},
        {"", "", "y[i] = acc + y[(i + 1) % R];"},
        {"", "    const float *yy = y;\n", "y[i] = acc + yy[i];"},
        {"", "", "y[i] = twice(acc);"},
        {"", "", "float *row = (float *)x + i * C; row[0] = acc;"},
        {"static float *g;\nstatic void point(const float *p) { g = (float *)p; }\n",
         "    point(x);\n", "g[i * C] = acc; y[i] = acc;"}};
    for (size_t k = 0; k < sizeof(unsafe) / sizeof(unsafe[0]); k++) {
        char src[1024];
        snprintf(src, sizeof(src),
                 "#include <stdint.h>\n"
                 "%s"
                 "static float twice(float v) { return 2.0f * v; }\n"
                 "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
                 "%s"
                 "    (void)twice;\n"
                 "    for (int64_t i = 0; i < R; i++) {\n"
                 "        float acc = 0.0f;\n"
                 "        for (int64_t j = 0; j < C; j++)\n"
                 "            acc += x[i*C+j];\n"
                 "        %s\n"
                 "    }\n"
                 "}\n",
                 unsafe[k][0], unsafe[k][1], unsafe[k][2]);
        char *o = NULL;
        int rc = kevo_recipe_apply(&o, "unroll_jam", p, 3, src, "rowsum");
        if (rc != 0) {
            /* unroll_jam itself declines the cross-row read */
            assert_int_equal(rc, KEVO_EINVAL);
            assert_int_equal(k, 2);
            continue;
        }
        assert_lacks(o, "R >= 4) {");
        assert_contains(o, "    for (int64_t i = (R > 0 ? R / 4 * 4 : 0); i < R; i++) {\n");
        assert_same_output(src, o, DRIVER_ROWS_ALL, "rowsum", 100);
        free(o);
    }
    char *ro = NULL; /* the reduction: ROWSUM_OUTER's total */
    assert_int_equal(kevo_recipe_apply(&ro, "unroll_jam", p, 3, ROWSUM_OUTER, "rowsum"), 0);
    assert_lacks(ro, "} else\n");
    assert_same_output(ROWSUM_OUTER, ro, DRIVER_ROWS_ALL, "rowsum", 100);
    free(ro);
}

/* register_block on conv2d: the rows it jams are the output channels (the
 * loop the x loads do not name, moved down to the vector loop `ow`: each
 * copy shares the x vector and broadcasts its own w), and its tail
 * (default 1) runs the channels a block of `rows` leaves as a vectorised
 * block over the last `rows`; with tail 0, one at a time. */
static void test_recipe_jam__register_block_tail(void **state)
{
    (void)state;
    char *src = read_reference("051_conv2d");
    long rb[5] = {6, 0, 0, 1, 1};
    char *out = apply_ok("register_block", rb, 5, src, "conv2d");
    assert_contains(out, "        for (int64_t oh = 0; oh < OH; oh++) {\n"
                         "            for (int64_t oc = 0; oc < (OC > 0 ? OC / 6 * 6 : 0); oc += "
                         "6) {\n");
    assert_contains(out, "acc_5 += ((*(const vf *)&x[((n * C + c) * H + oh + kh) * W + ow + kw]) "
                         "*\n"
                         "                                       w[(((oc + 5) * C + c) * K + "
                         "kh) * K + kw]) - (vf){0};\n");
    const char *tail = strstr(out, "if ((OC > 0 ? OC / 6 * 6 : 0) < OC && OC >= 6) {");
    assert_non_null(tail);
    assert_non_null(strstr(tail, "int64_t oc = OC - 6;"));
    assert_non_null(strstr(tail, "vf2 acc_5 = (0.0f) - (vf2){0};"));
    assert_same_result(src, out, DRIVER_CONV, "conv2d");
    free(out);
    rb[4] = 0;
    out = apply_ok("register_block", rb, 5, src, "conv2d");
    assert_lacks(out, "OC >= 6) {");
    assert_same_result(src, out, DRIVER_CONV, "conv2d");
    free(out);
    free(src);
}

/* ---- declines ----------------------------------------------------------- */

static void test_recipe_jam__declines(void **state)
{
    (void)state;
    long p[] = {0, 4};
    assert_declines("unroll_jam", p, 2,
                    "void scan(const float *x, float *y, int n) {\n"
                    "    for (int i = 1; i < n; i++)\n"
                    "        y[i] = y[i-1] + x[i];\n}\n",
                    "scan", "'y' is written at 'y[i]' (line 3) and also read at another index");
    assert_declines("unroll_jam", p, 2,
                    "void find(const float *x, float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        if (x[i] < 0.0f) break;\n"
                    "        y[i] = x[i];\n    }\n}\n",
                    "find", "the loop at line 2 can leave early");
    assert_declines("unroll_jam", p, 2,
                    "void skip(const float *x, float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        if (x[i] < 0.0f) continue;\n"
                    "        y[i] = x[i];\n    }\n}\n",
                    "skip", "'continue' at line 3");
    assert_declines("unroll_jam", p, 2,
                    "void cp(const float *x, float *y, int n) {\n"
                    "    #pragma omp parallel for ordered\n"
                    "    for (int i = 0; i < n; i++) y[i] = x[i];\n}\n",
                    "cp", "the loop at line 3 carries '#pragma omp parallel for ordered'");
    assert_declines("unroll_jam", p, 2,
                    "void cp(const float *x, float *y, int n) {\n"
                    "    for (int i = 0; i < (n -= 0); i++) y[i] = x[i];\n}\n",
                    "cp", "the bounds of the loop at line 2 have a side effect ('-=')");
    assert_declines("unroll_jam", p, 2,
                    "void cp(const float *x, float *y, int n) {\n"
                    "    #pragma omp parallel\n"
                    "    #pragma omp for\n"
                    "    for (int i = 0; i < n; i++) y[i] = x[i];\n}\n",
                    "cp", "the loop at line 4 carries '#pragma omp parallel'");
    assert_declines("unroll_jam", p, 2,
                    "void rs(const float *x, float *y, int n, int m) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        float s = 0.0f;\n"
                    "        #pragma omp simd reduction(+:s)\n"
                    "        for (int j = 0; j < m; j++) s += x[i*m+j];\n"
                    "        y[i] = s;\n    }\n}\n",
                    "rs",
                    "'#pragma omp simd reduction(+:s)' at line 4 lies inside the loop at "
                    "line 2: apply unroll_jam before pragma recipes");
    /* a literal step jams (copies at i + c * 2); a step that is a variable
     * does not */
    static const char STRIDED[] = "void cp(const float *x, float *y, int n) {\n"
                                  "    for (int i = 0; i < n; i += 2) y[i] = x[i];\n}\n";
    char *st = apply_ok("unroll_jam", p, 2, STRIDED, "cp");
    assert_contains(st, "i += (4 * 2)) {");
    assert_contains(st, "y[(i + 3 * 2)] = x[(i + 3 * 2)];");
    assert_contains(st, "i < n; i += 2) y[i] = x[i];");
    free(st);
    assert_declines("unroll_jam", p, 2,
                    "void cp(const float *x, float *y, int n, int s) {\n"
                    "    for (int i = 0; i < n; i += s) y[i] = x[i];\n}\n",
                    "cp", "line 2");
    assert_declines("unroll_jam", p, 2,
                    "void cp(const float *x, float *y, int n) {\n"
                    "    int i;\n"
                    "    for (i = 0; i < n; i++) y[i] = x[i];\n}\n",
                    "cp", "is not in the form");
    assert_declines("unroll_jam", p, 2,
                    "void ema(const float *x, float *y, int n) {\n"
                    "    float s = 0.0f;\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        s = 0.5f * s + x[i];\n"
                    "        y[i] = s;\n    }\n}\n",
                    "ema", "'s' (declared outside the loop) is written inside it at line 4");
    assert_declines("unroll_jam", p, 2,
                    "void bump(float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) y[0] += 1.0f;\n}\n",
                    "bump", "does not use the loop variable 'i'");
    assert_declines("unroll_jam", p, 2,
                    "int len(const int *x);\n"
                    "void cp(const int *x, float *y) {\n"
                    "    for (int i = 0; i < len(x); i++) y[i] = 1.0f;\n}\n",
                    "cp", "the bounds of the loop at line 3 call 'len'");
    long far[] = {5, 4};
    assert_declines("unroll_jam", far, 2, ROWSUM, "rowsum", "loop index 5 is out of range");
    /* too big a result: 16 x 16 copies of 3 statements */
    kevo_recipe_step big[] = {
        {.recipe = "unroll_jam", .params = {0, 16}, .n_params = 2},
        {.recipe = "unroll_jam", .params = {1, 16}, .n_params = 2},
    };
    char *out = NULL;
    assert_int_equal(kevo_recipe_apply_chain(&out, big, 2, RECT_ACC, "matmul_rect"), KEVO_EINVAL);
    assert_null(out);
    assert_non_null(strstr(kevo_error_last(), "would exceed 400 statements"));
    /* loop=-1 skips loops that do not qualify and says why when none does */
    assert_declines("unroll_jam", (long[]){-1, 4}, 2,
                    "void scan(const float *x, float *y, int n) {\n"
                    "    for (int i = 1; i < n; i++) {\n"
                    "        float t = x[i];\n"
                    "        y[i] = y[i-1] + t;\n    }\n}\n",
                    "scan", "no loop qualifies");
}

/* ---- chains ------------------------------------------------------------- */

static void test_recipe_jam__chain_parallel_flags(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {
        {.recipe = "unroll_jam", .params = {0, 4}, .n_params = 2},
        {.recipe = "unroll_jam", .params = {1, 8}, .n_params = 2},
        {.recipe = "omp_parallel", .params = {1}, .n_params = 1},
        {.recipe = "flags", .params = {6}, .n_params = 1},
    };
    char *out = chain_ok(steps, 4, RECT_ACC, "matmul_rect");
    assert_true(strncmp(out, "// kevo: cflags -fopenmp -O3 -march=native -ffast-math -funroll-loops\n",
                        70) == 0);
    assert_contains(out, "    #pragma omp parallel for\n"
                         "    for (int64_t i = 0; i < (M > 0 ? M / 4 * 4 : 0); i += 4) {\n"
                         "        for (int64_t j = 0; j < (N > 0 ? N / 8 * 8 : 0); j += 8) {\n");
    assert_contains(out, "float acc_3_7 = 0.0f;");
    assert_same_result(RECT_ACC, out, DRIVER_RECT, "matmul_rect");
    free(out);

    /* omp_simd and restrict after unroll_jam, as before it */
    kevo_recipe_step simd[] = {
        steps[0],
        {.recipe = "omp_simd"},
        {.recipe = "restrict"},
    };
    out = chain_ok(simd, 3, RECT_ACC, "matmul_rect");
    assert_contains(out, "#pragma omp simd reduction(+:acc_0, acc_1, acc_2, acc_3)\n");
    assert_contains(out, "float *restrict C");
    assert_same_result(RECT_ACC, out, DRIVER_RECT, "matmul_rect");
    free(out);

    /* matmul_square: jam, then parallel over the main loop */
    char *src = read_reference("015_matmul_square");
    kevo_recipe_step sq[] = {steps[0], steps[2], {.recipe = "flags", .params = {6}, .n_params = 1}};
    out = chain_ok(sq, 3, src, "matmul_square");
    assert_contains(out, "    #pragma omp parallel for\n    for (int64_t i = 0; i < (N > 0 ?");
    assert_same_result(src, out, DRIVER_SQUARE, "matmul_square");
    free(out);
    free(src);
}

/* After omp_parallel: the jammed rows loop keeps `omp parallel for`, the
 * remainder runs after it (register blocking of a parallel kernel). */
static void test_recipe_jam__keeps_parallel_for(void **state)
{
    (void)state;
    long omp[2] = {1, 0}, rb[2] = {4, 8};
    char *par = apply_ok("omp_parallel", omp, 2, MATMUL_ROWS, "mm");
    char *out = apply_ok("register_block", rb, 2, par, "mm");
    assert_contains(out, "    #pragma omp parallel for\n"
                         "    for (int64_t i = 0; i < (M > 0 ? M / 4 * 4 : 0); i += 4) {\n");
    assert_contains(out, "vf c_3_reg");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    free(par);
}

int main(void)
{
    setenv("OMP_NUM_THREADS", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recipe_jam__keeps_parallel_for),
        cmocka_unit_test(test_recipe_jam__matmul_square_reference),
        cmocka_unit_test(test_recipe_jam__rect_accumulators),
        cmocka_unit_test(test_recipe_jam__conv2d_reference),
        cmocka_unit_test(test_recipe_jam__rowsum_reduction),
        cmocka_unit_test(test_recipe_jam__picks_and_unsigned),
        cmocka_unit_test(test_recipe_jam__tail),
        cmocka_unit_test(test_recipe_jam__register_block_tail),
        cmocka_unit_test(test_recipe_jam__declines),
        cmocka_unit_test(test_recipe_jam__chain_parallel_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
