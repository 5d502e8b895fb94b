/*
 * tests/unit/test_recipe_fuse.c - the fuse recipe (loop fusion and
 * elementwise epilogues into their producer, src/recipe/recipe_fuse.c).
 *
 * It applies to Level 2 references (suites/c/level2: gemm_scale_residual,
 * gemm_swish_scale, conv2d_relu_biasadd, gemm_sigmoid_sum) and to small
 * same-header pairs; the result has the consumer's body inside the
 * producer's loop and its loop removed, and computes what the original
 * computes: both are built with `gcc -O2 -fopenmp` plus their cflags line,
 * linked with a driver that calls the kernel at several sizes (1, odd,
 * not round), run with OMP_NUM_THREADS=2, and their outputs compared. It
 * chains with itself, omp_parallel and flags, and declines, with the
 * reason, on neighbour reads, reductions over the output, index ranges it
 * cannot prove equal, early exits, scalar flow, pointer stores, pragmas.
 *
 * The compile-and-compare driver follows tests/unit/test_recipe.c.
 */
#include "recipe_check.h"

#include <stdbool.h>

#define LEVEL2 KEVO_SOURCE_DIR "/suites/c/level2/"

/* ---- kernels ------------------------------------------------------------ */

/* Producer and consumer with the same header; both declare `acc`, and the
 * consumer is not elementwise (an inner loop), so only the same-header form
 * applies. */
static const char SAME_HEADER[] =
    "#include <stdint.h>\n"
    "void rows(const float *x, float *y, float *z, int64_t R, int64_t C) {\n"
    "    for (int64_t i = 0; i < R; i++) {\n"
    "        float acc = 0.0f;\n"
    "        for (int64_t j = 0; j < C; j++)\n"
    "            acc += x[i * C + j];\n"
    "        y[i] = acc;\n"
    "    }\n"
    "    for (int64_t i = 0; i < R; i++) {\n"
    "        float acc = 0.0f;\n"
    "        for (int64_t j = 0; j < C; j++)\n"
    "            acc += x[i * C + j] * y[i];\n"
    "        z[i] = acc + y[i];\n"
    "    }\n"
    "}\n";

/* A flat producer and a flat consumer in the same row loop (inner pair). */
static const char INNER_PAIR[] =
    "#include <stdint.h>\n"
    "void rows(const float *x, float *y, float *z, int64_t R, int64_t C) {\n"
    "    for (int64_t i = 0; i < R; i++) {\n"
    "        for (int64_t j = 0; j < C; j++)\n"
    "            y[i * C + j] = 2.0f * x[i * C + j];\n"
    "        for (int64_t j = 0; j < C; j++)\n"
    "            z[i * C + j] = y[i * C + j] - x[i * C + j] * 0.5f;\n"
    "    }\n"
    "}\n";

/* GEMM producer (the Level 2 step 1), then a consumer given by CONSUMER. */
#define GEMM_THEN(CONSUMER)                                                                        \
    "#include <stdint.h>\n"                                                                        \
    "void k(const float *x, const float *w, float *y, float *z, float *out, int64_t M,\n"          \
    "       int64_t K, int64_t N) {\n"                                                             \
    "    float s = 0.0f;\n"                                                                        \
    "    for (int64_t m = 0; m < M; m++)\n"                                                        \
    "        for (int64_t n = 0; n < N; n++) {\n"                                                  \
    "            float acc = 0.0f;\n"                                                              \
    "            for (int64_t k = 0; k < K; k++)\n"                                                \
    "                acc += x[m * K + k] * w[n * K + k];\n"                                        \
    "            y[m * N + n] = acc;\n"                                                            \
    "        }\n" CONSUMER "    out[0] = s;\n"                                                     \
    "}\n"

static const char NEXT_READ[] = GEMM_THEN("    for (int64_t i = 0; i < M * N; i++)\n"
                                          "        z[i] = y[i] - y[i + 1];\n");
static const char PREV_READ[] = GEMM_THEN("    for (int64_t i = 0; i < M * N; i++)\n"
                                          "        z[i] = y[i] + y[i - 1];\n");
static const char SUM_OVER[] = GEMM_THEN("    for (int64_t i = 0; i < M * N; i++)\n"
                                         "        s += y[i];\n");
static const char WRONG_RANGE[] = GEMM_THEN("    for (int64_t i = 0; i < M * K; i++)\n"
                                            "        z[i] = 2.0f * y[i];\n");
static const char SHIFTED_RANGE[] = GEMM_THEN("    for (int64_t i = 1; i < M * N; i++)\n"
                                              "        z[i] = 2.0f * y[i];\n");
static const char CONSUMER_BREAK[] = GEMM_THEN("    for (int64_t i = 0; i < M * N; i++) {\n"
                                               "        if (y[i] > 100.0f)\n"
                                               "            break;\n"
                                               "        z[i] = y[i];\n"
                                               "    }\n");
static const char POINTER_STORE[] = GEMM_THEN("    for (int64_t i = 0; i < M * N; i++) {\n"
                                              "        float *p = &z[i];\n"
                                              "        *p = y[i];\n"
                                              "    }\n");
/* Fine: reads another array at i, and a size the producer does not change. */
static const char RESIDUAL_OK[] = GEMM_THEN("    for (int64_t i = 0; i < N * M; i++)\n"
                                            "        z[i] = y[i] + 0.5f * out[1] + (float)K;\n");

static const char CONSUMER_INNER_BREAK[] = GEMM_THEN("    for (int64_t a = 0; a < M; a++)\n"
                                                     "        for (int64_t c = 0; c < N; c++) {\n"
                                                     "            if (y[a * N + c] > 100.0f)\n"
                                                     "                break;\n"
                                                     "            z[a * N + c] = y[a * N + c];\n"
                                                     "        }\n");

/* A const local that is a product of sizes stands for it; a plain local
 * does not (it could change). */
#define TOTAL_THEN(DECL)                                                                           \
    "#include <stdint.h>\n"                                                                        \
    "void k(const float *x, float *y, int64_t M, int64_t N) {\n"                                   \
    "    " DECL " total = N * M;\n"                                                                \
    "    for (int64_t m = 0; m < M; m++)\n"                                                        \
    "        for (int64_t n = 0; n < N; n++)\n"                                                    \
    "            y[m * N + n] = x[n * M + m] - 0.25f;\n"                                           \
    "    for (int64_t i = 0; i < total; i++)\n"                                                    \
    "        y[i] = y[i] > 0.0f ? y[i] : 0.0f;\n"                                                  \
    "}\n"
static const char TOTAL_CONST[] = TOTAL_THEN("const int64_t");
static const char TOTAL_PLAIN[] = TOTAL_THEN("int64_t");

static const char TRANSPOSED[] = "#include <stdint.h>\n"
                                 "void k(const float *x, float *y, int64_t M, int64_t N) {\n"
                                 "    for (int64_t m = 0; m < M; m++)\n"
                                 "        for (int64_t n = 0; n < N; n++)\n"
                                 "            y[n * M + m] = x[m * N + n];\n"
                                 "    for (int64_t i = 0; i < M * N; i++)\n"
                                 "        y[i] *= 2.0f;\n"
                                 "}\n";

static const char PRODUCER_RETURN[] = "#include <stdint.h>\n"
                                      "void k(const float *x, float *y, int64_t M, int64_t N) {\n"
                                      "    for (int64_t m = 0; m < M; m++)\n"
                                      "        for (int64_t n = 0; n < N; n++) {\n"
                                      "            if (x[m * N + n] < -100.0f)\n"
                                      "                return;\n"
                                      "            y[m * N + n] = x[m * N + n];\n"
                                      "        }\n"
                                      "    for (int64_t i = 0; i < M * N; i++)\n"
                                      "        y[i] *= 2.0f;\n"
                                      "}\n";

static const char SCALAR_FLOW[] = "#include <stdint.h>\n"
                                  "void k(const float *x, float *y, float *z, int64_t N) {\n"
                                  "    float last = 0.0f;\n"
                                  "    for (int64_t i = 0; i < N; i++) {\n"
                                  "        y[i] = x[i];\n"
                                  "        last = x[i];\n"
                                  "    }\n"
                                  "    for (int64_t i = 0; i < N; i++)\n"
                                  "        z[i] = y[i] + last;\n"
                                  "}\n";

/* The producer hands y to a call: it may write any element there. */
static const char BARE_CALL[] = "#include <stdint.h>\n"
                                "#include <string.h>\n"
                                "void k(const float *x, float *y, float *z, int64_t N) {\n"
                                "    for (int64_t i = 0; i < N; i++)\n"
                                "        memcpy(y, x, 4);\n"
                                "    for (int64_t i = 0; i < N; i++)\n"
                                "        z[i] = y[i];\n"
                                "}\n";

static const char BACKWARD_FLOW[] = "#include <stdint.h>\n"
                                    "void k(const float *x, float *y, float *z, int64_t N) {\n"
                                    "    for (int64_t i = 0; i < N; i++)\n"
                                    "        y[i] = x[i] + z[i + 1];\n"
                                    "    for (int64_t i = 0; i < N; i++)\n"
                                    "        z[i] = y[i];\n"
                                    "}\n";

/* ---- drivers ------------------------------------------------------------ */

#define DRIVER_FILL                                                                                \
    DRIVER_HEAD                                                                                    \
    "static float *fill(int64_t n, unsigned *s) { float *p = malloc((size_t)(n + 1) * 4);\n"       \
    "  for (int64_t i = 0; i <= n; i++) p[i] = rnd(s); return p; }\n"                              \
    "static void dump(const float *p, int64_t n) {\n"                                              \
    "  for (int64_t i = 0; i < n; i++) printf(\"%.9g\\n\", p[i]); }\n"

/* fused_gemm_scale_residual / fused_gemm_swish_scale (x, w, b, y, s, M, K, N) */
static const char DRIVER_GEMM_S[] = DRIVER_FILL
    "void KERNEL(const float *x, const float *w, const float *b, float *y, float s,\n"
    "            int64_t M, int64_t K, int64_t N);\n"
    "int main(void) { unsigned s = 7;\n"
    "  int64_t sz[][3] = {{1, 1, 1}, {1, 3, 5}, {3, 5, 7}, {13, 9, 17}, {2, 1, 33}};\n"
    "  for (int c = 0; c < 5; c++) { int64_t M = sz[c][0], K = sz[c][1], N = sz[c][2];\n"
    "    float *x = fill(M * K, &s), *w = fill(N * K, &s), *b = fill(N, &s),\n"
    "          *y = fill(M * N, &s);\n"
    "    KERNEL(x, w, b, y, 1.25f, M, K, N); dump(y, M * N);\n"
    "    free(x); free(w); free(b); free(y); }\n"
    "  return 0; }\n";

/* fused_gemm_sigmoid_sum (x, w, b, y, M, K, N), y has M elements */
static const char DRIVER_GEMM_ROWS[] = DRIVER_FILL
    "void KERNEL(const float *x, const float *w, const float *b, float *y,\n"
    "            int64_t M, int64_t K, int64_t N);\n"
    "int main(void) { unsigned s = 9;\n"
    "  int64_t sz[][3] = {{1, 1, 1}, {3, 5, 7}, {13, 9, 17}, {5, 2, 1}};\n"
    "  for (int c = 0; c < 4; c++) { int64_t M = sz[c][0], K = sz[c][1], N = sz[c][2];\n"
    "    float *x = fill(M * K, &s), *w = fill(N * K, &s), *b = fill(N, &s),\n"
    "          *y = fill(M, &s);\n"
    "    KERNEL(x, w, b, y, M, K, N); dump(y, M);\n"
    "    free(x); free(w); free(b); free(y); }\n"
    "  return 0; }\n";

/* fused_conv2d_relu_biasadd (x, w, cb, b, y, N, CI, CO, H, W, KS) */
static const char DRIVER_CONV[] = DRIVER_FILL
    "void KERNEL(const float *x, const float *w, const float *cb, const float *b,\n"
    "            float *y, int64_t N, int64_t CI, int64_t CO, int64_t H, int64_t W,\n"
    "            int64_t KS);\n"
    "int main(void) { unsigned s = 5;\n"
    "  int64_t sz[][6] = {{1, 1, 1, 1, 1, 1}, {2, 3, 5, 7, 9, 3}, {1, 2, 3, 6, 5, 2}};\n"
    "  for (int c = 0; c < 3; c++) {\n"
    "    int64_t N = sz[c][0], CI = sz[c][1], CO = sz[c][2], H = sz[c][3],\n"
    "            W = sz[c][4], KS = sz[c][5], HO = H - KS + 1, WO = W - KS + 1;\n"
    "    float *x = fill(N * CI * H * W, &s), *w = fill(CO * CI * KS * KS, &s),\n"
    "          *cb = fill(CO, &s), *b = fill(CO, &s), *y = fill(N * CO * HO * WO, &s);\n"
    "    KERNEL(x, w, cb, b, y, N, CI, CO, H, W, KS); dump(y, N * CO * HO * WO);\n"
    "    free(x); free(w); free(cb); free(b); free(y); }\n"
    "  return 0; }\n";

/* rows (x, y, z, R, C) */
static const char DRIVER_ROWS[] =
    DRIVER_FILL "void rows(const float *x, float *y, float *z, int64_t R, int64_t C);\n"
                "int main(void) { unsigned s = 3;\n"
                "  int64_t sz[][2] = {{1, 1}, {13, 53}, {4, 1}};\n"
                "  for (int c = 0; c < 3; c++) { int64_t R = sz[c][0], C = sz[c][1];\n"
                "    float *x = fill(R * C, &s), *y = fill(R * C, &s), *z = fill(R * C, &s);\n"
                "    rows(x, y, z, R, C); dump(y, R * C); dump(z, R * C);\n"
                "    free(x); free(y); free(z); }\n"
                "  return 0; }\n";

/* k (x, w, y, z, out, M, K, N) of GEMM_THEN */
static const char DRIVER_GEMM_THEN[] = DRIVER_FILL
    "void k(const float *x, const float *w, float *y, float *z, float *out, int64_t M,\n"
    "       int64_t K, int64_t N);\n"
    "int main(void) { unsigned s = 4;\n"
    "  int64_t sz[][3] = {{1, 1, 1}, {3, 5, 7}, {11, 4, 6}};\n"
    "  for (int c = 0; c < 3; c++) { int64_t M = sz[c][0], K = sz[c][1], N = sz[c][2];\n"
    "    float *x = fill(M * K, &s), *w = fill(N * K, &s), *y = fill(M * N, &s),\n"
    "          *z = fill(M * N, &s), *out = fill(2, &s);\n"
    "    k(x, w, y, z, out, M, K, N); dump(y, M * N); dump(z, M * N); dump(out, 2);\n"
    "    free(x); free(w); free(y); free(z); free(out); }\n"
    "  return 0; }\n";

/* k (x, y, M, N) */
static const char DRIVER_XY[] =
    DRIVER_FILL "void k(const float *x, float *y, int64_t M, int64_t N);\n"
                "int main(void) { unsigned s = 8;\n"
                "  int64_t sz[][2] = {{1, 1}, {7, 3}, {1, 9}, {16, 5}};\n"
                "  for (int c = 0; c < 4; c++) { int64_t M = sz[c][0], N = sz[c][1];\n"
                "    float *x = fill(M * N, &s), *y = fill(M * N, &s);\n"
                "    k(x, y, M, N); dump(y, M * N); free(x); free(y); }\n"
                "  return 0; }\n";

/* ---- helpers (as in test_recipe.c) --------------------------------------- */

static char *reference(const char *task)
{
    char path[512];
    char *src = NULL;
    snprintf(path, sizeof(path), LEVEL2 "%s/reference.c", task);
    assert_int_equal(kevo_file_read(&src, NULL, path), 0);
    return src;
}

/* fuse (pair=-1) applied `times` times. */
static char *fuse_times(const char *src, const char *kernel, int times)
{
    char *cur = strdup(src);
    for (int i = 0; i < times; i++) {
        char *next = apply_ok("fuse", NULL, 0, cur, kernel);
        free(cur);
        cur = next;
    }
    return cur;
}

/* Number of occurrences of needle in hay. */
static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* ---- applies ------------------------------------------------------------ */

static void test_recipe_fuse__registered(void **state)
{
    (void)state;
    const kevo_recipe_desc *d = kevo_recipe_find("fuse");
    assert_non_null(d);
    assert_int_equal(d->n_params, 1);
    assert_string_equal(d->params[0].name, "pair");
    assert_int_equal(d->params[0].def, -1);
}

static void test_recipe_fuse__gemm_scale_residual(void **state)
{
    (void)state;
    char *ref = reference("003_gemm_scale_residual");
    char *out = fuse_times(ref, "fused_gemm_scale_residual", 1);
    /* the epilogue runs right after the store, on the same element */
    assert_contains(out, "            y[m * N + n] = acc;\n"
                         "            /* step 2: scale by s, then add the unscaled GEMM output "
                         "back: y = z*s + z */\n"
                         "            float z = y[m * N + n];\n"
                         "            y[m * N + n] = z * s + z;\n"
                         "        }\n");
    assert_lacks(out, "i < M * N");
    assert_same_result(ref, out, DRIVER_GEMM_S, "fused_gemm_scale_residual");
    /* nothing left to fuse */
    assert_declines("fuse", NULL, 0, out, "fused_gemm_scale_residual",
                    "no loop is followed by another loop");
    free(out);
    free(ref);
}

static void test_recipe_fuse__gemm_swish_scale_two_epilogues(void **state)
{
    (void)state;
    char *ref = reference("011_gemm_swish_scale");
    char *one = fuse_times(ref, "fused_gemm_swish_scale", 1);
    assert_int_equal(count_of(one, "i < M * N"), 1);
    assert_contains(one, "y[m * N + n] = y[m * N + n] / (1.0f + expf(-y[m * N + n]));");
    assert_same_result(ref, one, DRIVER_GEMM_S, "fused_gemm_swish_scale");
    char *two = fuse_times(one, "fused_gemm_swish_scale", 1);
    assert_int_equal(count_of(two, "i < M * N"), 0);
    /* in order: store, swish, scale */
    const char *st = strstr(two, "y[m * N + n] = acc;"), *sw = strstr(two, "expf"),
               *sc = strstr(two, "y[m * N + n] *= s;");
    assert_true(st && sw && sc && st < sw && sw < sc);
    assert_same_result(ref, two, DRIVER_GEMM_S, "fused_gemm_swish_scale");
    free(two);
    free(one);
    free(ref);
}

static void test_recipe_fuse__conv2d_relu_biasadd(void **state)
{
    (void)state;
    char *ref = reference("001_conv2d_relu_biasadd");
    /* the flat ReLU over N * CO * HO * WO, then the (n, co, p < HO * WO)
     * bias nest, whose p is the producer's oh * WO + ow */
    char *out = fuse_times(ref, "fused_conv2d_relu_biasadd", 2);
    assert_lacks(out, "i < N * CO * HO * WO");
    assert_lacks(out, "p < HO * WO");
    assert_contains(out, "y[((n * CO + co) * HO + oh) * WO + ow] += b[co];");
    assert_same_result(ref, out, DRIVER_CONV, "fused_conv2d_relu_biasadd");
    free(out);
    free(ref);
}

static void test_recipe_fuse__gemm_row_sum_same_header(void **state)
{
    (void)state;
    char *ref = reference("002_gemm_sigmoid_sum");
    /* the sigmoid epilogue, then the row sum joins the m loop */
    char *out = fuse_times(ref, "fused_gemm_sigmoid_sum", 2);
    assert_int_equal(count_of(out, "for (int64_t m = 0; m < M; m++)"), 1);
    assert_contains(out, "        double s = 0.0;\n"
                         "        for (int64_t n = 0; n < N; n++)\n"
                         "            s += z[m * N + n];\n"
                         "        y[m] = (float)s;\n"
                         "    }\n");
    assert_same_result(ref, out, DRIVER_GEMM_ROWS, "fused_gemm_sigmoid_sum");
    free(out);
    free(ref);
}

static void test_recipe_fuse__same_header_renames_clashes(void **state)
{
    (void)state;
    char *out = apply_ok("fuse", NULL, 0, SAME_HEADER, "rows");
    assert_int_equal(count_of(out, "for (int64_t i = 0; i < R; i++)"), 1);
    assert_contains(out, "float acc_2 = 0.0f;");
    assert_contains(out, "acc_2 += x[i * C + j] * y[i];");
    assert_contains(out, "z[i] = acc_2 + y[i];");
    assert_same_result(SAME_HEADER, out, DRIVER_ROWS, "rows");
    free(out);
}

static void test_recipe_fuse__inner_pair_and_pair_index(void **state)
{
    (void)state;
    /* pair=1 names the first j loop; pair=0 (the i loop) has no next loop */
    long p1[] = {1}, p0[] = {0};
    char *out = apply_ok("fuse", p1, 1, INNER_PAIR, "rows");
    assert_int_equal(count_of(out, "for (int64_t j = 0; j < C; j++)"), 1);
    assert_same_result(INNER_PAIR, out, DRIVER_ROWS, "rows");
    free(out);
    assert_declines("fuse", p0, 1, INNER_PAIR, "rows", "is not followed by a loop");
    long big[] = {9};
    assert_declines("fuse", big, 1, INNER_PAIR, "rows", "out of range");
}

static void test_recipe_fuse__reads_other_arrays_and_sizes(void **state)
{
    (void)state;
    char *out = apply_ok("fuse", NULL, 0, RESIDUAL_OK, "k");
    assert_contains(out, "z[m * N + n] = y[m * N + n] + 0.5f * out[1] + (float)K;");
    assert_same_result(RESIDUAL_OK, out, DRIVER_GEMM_THEN, "k");
    free(out);
}

static void test_recipe_fuse__const_size_product(void **state)
{
    (void)state;
    char *out = apply_ok("fuse", NULL, 0, TOTAL_CONST, "k");
    assert_lacks(out, "i < total");
    assert_contains(out, "y[m * N + n] = y[m * N + n] > 0.0f ? y[m * N + n] : 0.0f;");
    assert_same_result(TOTAL_CONST, out, DRIVER_XY, "k");
    free(out);
    assert_declines("fuse", NULL, 0, TOTAL_PLAIN, "k", "is not provably the producer's");
}

/* ---- chains ------------------------------------------------------------- */

static void test_recipe_fuse__then_omp_parallel_and_flags(void **state)
{
    (void)state;
    char *ref = reference("011_gemm_swish_scale");
    kevo_recipe_step steps[] = {
        {.recipe = "fuse"},
        {.recipe = "fuse"},
        {.recipe = "omp_parallel", .params = {2}, .n_params = 1},
        {.recipe = "flags", .params = {6}, .n_params = 1}, /* -O3 -march=native ... */
    };
    char *out = NULL;
    int rc = kevo_recipe_apply_chain(&out, steps, 4, ref, "fused_gemm_swish_scale");
    if (rc)
        print_error("%s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    /* the fused nest is still a race-free collapse(2) nest */
    assert_contains(out, "#pragma omp parallel for collapse(2)\n"
                         "    for (int64_t m = 0; m < M; m++)");
    assert_contains(out, "-O3 -march=native");
    assert_same_result(ref, out, DRIVER_GEMM_S, "fused_gemm_swish_scale");
    free(out);
    /* pragmas first, then fuse: declined */
    long one[] = {1};
    char *par = apply_ok("omp_parallel", one, 1, ref, "fused_gemm_swish_scale");
    long first[] = {0};
    assert_declines("fuse", first, 1, par, "fused_gemm_swish_scale",
                    "apply fuse before pragma recipes");
    /* pair -1 passes over it and fuses the two flat loops after it */
    char *rest = apply_ok("fuse", NULL, 0, par, "fused_gemm_swish_scale");
    assert_int_equal(count_of(rest, "i < M * N"), 1);
    assert_same_result(ref, rest, DRIVER_GEMM_S, "fused_gemm_swish_scale");
    free(rest);
    free(par);

    char *conv = reference("001_conv2d_relu_biasadd");
    kevo_recipe_step csteps[] = {
        {.recipe = "fuse"},
        {.recipe = "fuse"},
        {.recipe = "omp_parallel", .params = {2}, .n_params = 1},
        {.recipe = "flags", .params = {6}, .n_params = 1}, /* -O3 -march=native ... */
    };
    rc = kevo_recipe_apply_chain(&out, csteps, 4, conv, "fused_conv2d_relu_biasadd");
    if (rc)
        print_error("%s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_contains(out, "#pragma omp parallel for collapse(2)");
    assert_same_result(conv, out, DRIVER_CONV, "fused_conv2d_relu_biasadd");
    free(out);
    free(conv);
    free(ref);
}

/* ---- declines ----------------------------------------------------------- */

static void test_recipe_fuse__declines_neighbour_reads(void **state)
{
    (void)state;
    assert_declines("fuse", NULL, 0, NEXT_READ, "k", "uses 'y[i + 1]' (line 13)");
    assert_declines("fuse", NULL, 0, NEXT_READ, "k",
                    "only the element that the loop at line 5 wrote in the same iteration");
    assert_declines("fuse", NULL, 0, PREV_READ, "k", "uses 'y[i - 1]' (line 13)");
}

static void test_recipe_fuse__declines_reduction_over_output(void **state)
{
    (void)state;
    assert_declines("fuse", NULL, 0, SUM_OVER, "k", "writes 's' (line 13)");
    assert_declines("fuse", NULL, 0, SUM_OVER, "k", "a reduction over the output");
    /* a row reduction (layer norm over each row) is not an epilogue */
    char *ln = reference("005_gemm_layernorm_gelu");
    assert_declines("fuse", NULL, 0, ln, "fused_gemm_layernorm_gelu", "not elementwise");
    assert_declines("fuse", NULL, 0, ln, "fused_gemm_layernorm_gelu", "softmax over a row");
    free(ln);
}

static void test_recipe_fuse__declines_unproven_range(void **state)
{
    (void)state;
    assert_declines("fuse", NULL, 0, WRONG_RANGE, "k",
                    "the range of the loop at line 12 ('i' < M * K) is not provably the "
                    "producer's");
    assert_declines("fuse", NULL, 0, SHIFTED_RANGE, "k", "does not run from 0");
    assert_declines("fuse", NULL, 0, TRANSPOSED, "k",
                    "the index 'n * M + m' (line 5) does not provably enumerate");
}

static void test_recipe_fuse__declines_early_exits(void **state)
{
    (void)state;
    assert_declines("fuse", NULL, 0, PRODUCER_RETURN, "k", "can leave early");
    assert_declines("fuse", NULL, 0, CONSUMER_BREAK, "k", "the loop at line 12 can leave early");
    assert_declines("fuse", NULL, 0, CONSUMER_INNER_BREAK, "k",
                    "the loop at line 13 can leave early");
}

static void test_recipe_fuse__declines_flow_and_pointers(void **state)
{
    (void)state;
    assert_declines("fuse", NULL, 0, SCALAR_FLOW, "k", "'last' is written by the loop at line 4");
    assert_declines("fuse", NULL, 0, SCALAR_FLOW, "k", "a scalar flows between the loops");
    assert_declines("fuse", NULL, 0, BACKWARD_FLOW, "k", "'z'");
    assert_declines("fuse", NULL, 0, POINTER_STORE, "k", "through a pointer");
    assert_declines("fuse", NULL, 0, BARE_CALL, "k",
                    "'y' is used at line 5 in a form fuse cannot follow");
}

int main(void)
{
    setenv("OMP_NUM_THREADS", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recipe_fuse__registered),
        cmocka_unit_test(test_recipe_fuse__gemm_scale_residual),
        cmocka_unit_test(test_recipe_fuse__gemm_swish_scale_two_epilogues),
        cmocka_unit_test(test_recipe_fuse__conv2d_relu_biasadd),
        cmocka_unit_test(test_recipe_fuse__gemm_row_sum_same_header),
        cmocka_unit_test(test_recipe_fuse__same_header_renames_clashes),
        cmocka_unit_test(test_recipe_fuse__inner_pair_and_pair_index),
        cmocka_unit_test(test_recipe_fuse__reads_other_arrays_and_sizes),
        cmocka_unit_test(test_recipe_fuse__const_size_product),
        cmocka_unit_test(test_recipe_fuse__then_omp_parallel_and_flags),
        cmocka_unit_test(test_recipe_fuse__declines_neighbour_reads),
        cmocka_unit_test(test_recipe_fuse__declines_reduction_over_output),
        cmocka_unit_test(test_recipe_fuse__declines_unproven_range),
        cmocka_unit_test(test_recipe_fuse__declines_early_exits),
        cmocka_unit_test(test_recipe_fuse__declines_flow_and_pointers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
