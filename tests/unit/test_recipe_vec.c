/*
 * tests/unit/test_recipe_vec.c - the `vectorize` recipe (GCC vector
 * extensions, src/recipe/recipe_vec.c) and `register_block`
 * (src/recipe/recipe_block.c): where it applies the rewrite holds
 * the vector type, contiguous vector accesses, vector accumulators and the
 * scalar remainder, and computes what the original computes (built with
 * gcc, run, outputs compared) at extents that are not multiples of the
 * vector width, smaller than it, and zero; where its precondition fails it
 * declines with a reason naming the line.
 */
#include "recipe_check.h"

/* y = x W^T + b with a scaled epilogue, the Level 2 form: k is a sum. */
static const char LINEAR[] =
    "#include <stdint.h>\n"
    "void mm(const float *x, const float *w, float *y, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    for (int64_t m = 0; m < M; m++)\n"
    "        for (int64_t n = 0; n < N; n++) {\n"
    "            float acc = 0.5f;\n"
    "            for (int64_t k = 0; k < K; k++)\n"
    "                acc += x[m * K + k] * w[n * K + k];\n"
    "            y[m * N + n] = acc * 0.25;\n"
    "        }\n"
    "}\n";

/* An elementwise kernel with locals and an inclusive bound. */
static const char AXPBY[] =
    "#include <stdint.h>\n"
    "void mm(const float *x, const float *b, float *y, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    float s = 1.5f;\n"
    "    for (int64_t i = 0; i <= M * N - 1; i++) {\n"
    "        float t = x[i] * s;\n"
    "        float u = t - b[i] / 4.0f;\n"
    "        y[i] = u * t + s;\n"
    "    }\n"
    "}\n";

/* ---- applies ------------------------------------------------------------ */

static void test_vec__matmul_outer_loop(void **state)
{
    (void)state;
    char *out = apply_ok("vectorize", NULL, 0, MATMUL_DOT, "mm");
    assert_contains(out, "typedef float vf __attribute__((vector_size(__BIGGEST_ALIGNMENT__)");
    assert_contains(out, "vf acc = (0.0f) - (vf){0};");
    assert_contains(out, "(*(const vf *)&B[k * N + j])");
    assert_contains(out, "(*(vf *)&C[i * N + j]) =");
    assert_contains(out, "for (int64_t j = j_vend; j < N; j++)");
    assert_contains(out, "-march=native");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
}

static void test_vec__reduction_loop(void **state)
{
    (void)state;
    char *out = apply_ok("vectorize", NULL, 0, LINEAR, "mm");
    /* m and n index w and x with a stride: the sum over k is the one */
    assert_contains(out, "vf acc_vec = (vf){0};");
    assert_contains(out, "acc_vec += (");
    assert_contains(out, "acc += acc_vec[lane];");
    assert_contains(out, "(*(const vf *)&w[n * K + k])");
    assert_contains(out, "y[m * N + n] = acc * 0.25;"); /* outside the loop: untouched */
    assert_same_result(LINEAR, out, MM_DRIVER, "mm");
    free(out);
}

static void test_vec__elementwise_widths(void **state)
{
    (void)state;
    for (long w = 0; w <= 16; w += 4) {
        if (w == 12)
            continue;
        long p[2] = {-1, w};
        char *out = apply_ok("vectorize", p, 2, AXPBY, "mm");
        if (w) {
            char want[64];
            snprintf(want, sizeof(want), "vector_size(%ld)", 4 * w);
            assert_contains(out, want);
        }
        assert_contains(out, "vf t = ((*(const vf *)&x[i]) * s) - (vf){0};"); /* s: a scalar */
        assert_contains(out, "(*(const vf *)&x[i])");
        assert_contains(out, "((M * N - 1) + 1)"); /* the inclusive bound */
        assert_same_result(AXPBY, out, MM_DRIVER, "mm");
        free(out);
    }
}

static void test_vec__chains_with_omp_and_flags(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {{"omp_parallel", {1}, 1}, {"vectorize", {0}, 0},
                                {"flags", {2}, 1}};
    char *out = chain_ok(steps, 3, MATMUL_DOT, "mm");
    assert_contains(out, "#pragma omp parallel for");
    assert_contains(out, "-ffast-math");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    /* register blocking: unroll_jam the rows by 4, vectorise the columns,
     * then omp_parallel over the rows (the vector stores count as element
     * stores of C indexed by i) */
    kevo_recipe_step block[] = {{"unroll_jam", {0, 4}, 2}, {"vectorize", {0}, 0},
                                {"omp_parallel", {1}, 1}};
    out = chain_ok(block, 3, MATMUL_DOT, "mm");
    assert_contains(out, "vf acc_3 = (0.0f) - (vf){0};");
    assert_contains(out, "(*(vf *)&C[(i + 3) * N + j]) = (acc_3) - (vf){0};");
    assert_contains(out, "#pragma omp parallel for\n    for (int64_t i = 0;");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    /* the row-update form: interchange sinks a and b and swaps k and j, then
     * the same blocking; C's rows stay in registers across k (promotion) */
    kevo_recipe_step rows[] = {{"interchange", {0}, 0}, {"unroll_jam", {0, 4}, 2},
                               {"vectorize", {0}, 0}, {"omp_parallel", {1}, 1}};
    out = chain_ok(rows, 4, MATMUL_ROWS, "mm");
    assert_contains(out, "vf c_3_reg = (*(vf *)&c_3[j]);");
    assert_contains(out, "c_3_reg += (a_3 * (*(const vf *)&b[j])) - (vf){0};");
    assert_contains(out, "(*(vf *)&c_3[j]) = c_3_reg;");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    /* no promotion when the loop also reads the array through another
     * pointer of the same parameter: row k of C is row i when k == i */
    static const char SELF[] =
        "#include <stdint.h>\n"
        "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
        "{\n"
        "    for (int64_t i = 0; i < M; i++) {\n"
        "        float *c = C + i * N;\n"
        "        for (int64_t j = 0; j < N; j++)\n"
        "            for (int64_t k = 0; k < M; k++) {\n"
        "                const float *d = C + k * N;\n"
        "                c[j] += 0.5f * d[j];\n"
        "            }\n"
        "    }\n"
        "}\n";
    long j_loop[2] = {1, 0};
    char *self = apply_ok("vectorize", j_loop, 2, SELF, "mm");
    assert_null(strstr(self, "_reg"));
    assert_contains(self, "(*(vf *)&c[j]) += (0.5f * (*(const vf *)&d[j])) - (vf){0};");
    assert_same_result(SELF, self, MM_DRIVER, "mm");
    free(self);
    /* vectorising twice: the vector loop's body is no longer plain float
     * code, and the remainder loop is left alone */
    long p[2] = {-1, 0};
    char *once = apply_ok("vectorize", p, 2, LINEAR, "mm");
    assert_declines("vectorize", p, 2, once, "mm", "vectorize");
    long rem[2] = {4, 0}; /* m, n, k (vector), lane, k (remainder) */
    assert_declines("vectorize", rem, 2, once, "mm", "the remainder of a vectorised loop");
    free(once);
}

/* register_block: the chain as one move, on the three forms */
static void test_vec__register_block(void **state)
{
    (void)state;
    long p[4] = {4, 0, 0, 1}; /* registers only (test_recipe_pack.c packs) */
    /* row-update form: interchange, then rows of C in registers */
    char *out = apply_ok("register_block", p, 4, MATMUL_ROWS, "mm");
    assert_contains(out, "vf c_3_reg = (*(vf *)&c_3[j]);");
    assert_contains(out, "for (int64_t i = 0; i < (M > 0 ? M / 4 * 4 : 0); i += 4)");
    /* jammed before the interchange: the remainder rows run the nest as
     * written (k outside j: B by rows), and the columns left after the
     * vector loop run with k outside them again */
    const char *rest = strstr(out, "i = (M > 0 ? M / 4 * 4 : 0); i < M; i++)");
    assert_non_null(rest);
    const char *rk = strstr(rest, "for (int64_t k = 0; k < K; k++)");
    assert_non_null(rk);
    assert_non_null(strstr(rk, "for (int64_t j = 0; j < N; j++)"));
    const char *tail = strstr(out, "for (int64_t j = j_vend; j < N; j++)");
    assert_non_null(tail);
    assert_true(tail < rest);
    const char *tk = strstr(out, "for (int64_t k = 0; k < K; k++) {\n"
                                 "            for (int64_t j = j_vend; j < N; j++)");
    assert_true(tk && tk < tail);
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    /* dot-product form: no interchange, four vector accumulators */
    out = apply_ok("register_block", p, 4, MATMUL_DOT, "mm");
    assert_contains(out, "vf acc_3 = (0.0f) - (vf){0};");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    /* x W^T: the sum over k, four rows of W per load of x */
    out = apply_ok("register_block", p, 4, LINEAR, "mm");
    assert_contains(out, "vf acc_3_vec = (vf){0};");
    assert_contains(out, "acc_3 += acc_3_vec[lane];");
    assert_same_result(LINEAR, out, MM_DRIVER, "mm");
    free(out);
    /* rows=1: vectorize alone */
    long one[4] = {1, 8, 0, 1};
    out = apply_ok("register_block", one, 4, MATMUL_DOT, "mm");
    assert_contains(out, "vector_size(32)");
    assert_null(strstr(out, "acc_1"));
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    assert_declines("register_block", p, 4,
                    "#include <stdint.h>\n"
                    "void mm(const float *x, float *y, int64_t n)\n{\n"
                    "    for (int64_t i = 0; i < n; i++)\n"
                    "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n}\n",
                    "mm", "vectorize applies to no loop");
}

/* cols: the blocked vector loop unrolled and jammed, rows x cols
 * accumulators, each copy at `j + c * W`; the jammed loop steps by 2 W up
 * to the last whole pair, one vector at a time after it, then the last
 * window. Declines where no vector loop holds the reduction loop, and
 * unroll_jam takes no step that is not a constant of sizeof quotients. */
static void test_vec__columns(void **state)
{
    (void)state;
    static const char *const srcs[] = {MATMUL_ROWS, MATMUL_DOT};
    static const char *const acc[] = {"vf c_3_reg_1 = (*(vf *)&c_3[(j + 1 * 4)]);",
                                      "vf acc_3_1 = (0.0f) - (vf){0};"};
    for (size_t i = 0; i < 2; i++)
        for (long pack = 0; pack <= 1; pack++) {
            /* width 4: a literal step; the machine's: sizeof(vf) / sizeof(float) */
            long p[4] = {4, 4, pack, 2}, p0[4] = {4, 0, pack, 2};
            char *out = apply_ok("register_block", p, 4, srcs[i], "mm");
            assert_contains(out, "j += (2 * 4)) {");
            assert_contains(out, acc[i]);
            assert_same_result(srcs[i], out, MM_DRIVER, "mm");
            free(out);
            out = apply_ok("register_block", p0, 4, srcs[i], "mm");
            assert_contains(out, "j += (2 * ((int64_t)(sizeof(vf) / sizeof(float))))) {");
            /* the jammed reduction loop kept rolled under -funroll-loops */
            const char *jl = strstr(out, "j += (2 * ((int64_t)(sizeof(vf)");
            const char *pr = strstr(out, "#pragma GCC unroll 1\n");
            assert_true(jl && pr && pr > jl);
            assert_int_equal(strncmp(strstr(pr, "\n") + 1 + strspn(strstr(pr, "\n") + 1, " "),
                                     "for (int64_t k = 0; k < K; k++)", 31),
                             0);
            assert_same_result(srcs[i], out, MM_DRIVER, "mm");
            free(out);
        }
    /* no vector loop holding the reduction loop: cols is skipped */
    static const char SCALE[] = "#include <stdint.h>\n"
                                "void mm(const float *x, float *y, int64_t n)\n{\n"
                                "    for (int64_t i = 0; i < n; i++)\n"
                                "        y[i] = x[i] * 2.0f;\n}\n";
    long c1[4] = {4, 0, 0, 1}, c2[4] = {4, 0, 0, 2};
    char *one = apply_ok("register_block", c1, 4, SCALE, "mm");
    char *two = apply_ok("register_block", c2, 4, SCALE, "mm");
    assert_string_equal(one, two);
    free(one);
    free(two);
    /* a step that names a variable, or calls, is not a number of lanes */
    static const char *const steps[] = {"(int64_t)(sizeof(vf) / sizeof(float)) * s",
                                        "(int64_t)sizeof(float) * w(3)"};
    for (size_t i = 0; i < 2; i++) {
        char src[1024];
        snprintf(src, sizeof(src),
                 "#include <stdint.h>\n"
                 "typedef float vf __attribute__((vector_size(16), aligned(4), may_alias));\n"
                 "int64_t w(int64_t);\n"
                 "void mm(const float *A, float *C, int64_t N, int64_t K, int64_t s)\n{\n"
                 "    for (int64_t j = 0; j < N; j += %s) {\n"
                 "        vf acc = (vf){0};\n"
                 "        for (int64_t k = 0; k < K; k++)\n"
                 "            acc += *(const vf *)&A[k * N + j];\n"
                 "        *(vf *)&C[j] = acc;\n"
                 "    }\n}\n",
                 steps[i]);
        long jp[2] = {0, 2};
        assert_declines("unroll_jam", jp, 2, src, "mm", "is not in the form");
    }
}

#define KERNEL1(body)                                                                              \
    "#include <stdint.h>\n#include <math.h>\n"                                                     \
    "void k(const float *x, float *y, int64_t n, double *d)\n{\n" body "}\n"

/* An `unroll` kept early in a search left `#pragma GCC unroll` on the inner
 * loops: the loop transforms drop the hint (it is not part of what the kernel
 * computes) instead of declining on a loop that carries a pragma, and decline
 * for the real reason, naming the line as written, when that is not the one. */
static void test_vec__unroll_hints_dropped(void **state)
{
    (void)state;
    long f[1] = {16};
    char *hinted = apply_ok("unroll", f, 1, MATMUL_ROWS, "mm");
    assert_contains(hinted, "#pragma GCC unroll 16");
    long p[4] = {4, 0, 0, 1};
    char *out = apply_ok("register_block", p, 4, hinted, "mm");
    assert_contains(out, "vf c_3_reg = (*(vf *)&c_3[j]);");
    assert_null(strstr(out, "#pragma GCC unroll"));
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    out = apply_ok("vectorize", NULL, 0, hinted, "mm");
    assert_contains(out, "for (int64_t j = j_vend; j < N; j++)");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    long ij[1] = {0};
    out = apply_ok("unroll_jam", ij, 1, hinted, "mm");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    free(hinted);
    /* the hint is not what stops it: the real reason, at the line as written */
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    #pragma GCC unroll 8\n"
                            "    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"),
                    "k", "'>' at line 7");
    /* unroll itself does not count a dropped hint of its own as applying */
    assert_declines("unroll", f, 1,
                    KERNEL1("    #pragma GCC unroll 16\n"
                            "    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[i];\n"),
                    "k", "unroll");
}

/* The columns the vector loop leaves run as one more vector iteration over
 * the last W columns, storing only the lanes not done yet (the driver's
 * N = 37 and 19 take it, N = 5 the scalar loop); where re-running done
 * lanes would change a result it is not used. */
static void test_vec__last_window(void **state)
{
    (void)state;
    long p[4] = {4, 0, 0, 1};
    char *out = apply_ok("register_block", p, 4, MATMUL_ROWS, "mm");
    assert_contains(out, "if (j_vend < N && N - (0) >= (int64_t)(sizeof(vf) / sizeof(float))) {");
    assert_contains(out, "const int64_t j = N - (int64_t)(sizeof(vf) / sizeof(float));");
    assert_contains(out, "const int j_lane0 = (int)(j_vend - j);");
    /* promoted rows stored back lane by lane, as element stores */
    assert_contains(out, "for (int lane = j_lane0; lane < (int)(sizeof(vf) / sizeof(float)); "
                         "lane++) c_3[(j) + lane] = c_3_reg[lane];");
    assert_contains(out, "} else");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    /* the OpenMP loop still applies over the rows (the stores name i) */
    const kevo_recipe_step omp[] = {{"register_block", {4, 0, 0}, 3}, {"omp_parallel", {1, 0}, 2}};
    char *par = chain_ok(omp, 2, MATMUL_ROWS, "mm");
    assert_contains(par, "#pragma omp parallel for");
    assert_same_result(MATMUL_ROWS, par, MM_DRIVER, "mm");
    free(par);
    free(out);
    /* a store at the body's top level: its vector, then its lanes */
    out = apply_ok("vectorize", NULL, 0, MATMUL_DOT, "mm");
    assert_contains(out, "{ vf vout = (acc) - (vf){0}; for (int lane = j_lane0; lane < (int)(sizeof(vf) "
                         "/ sizeof(float)); lane++) C[(i * N + j) + lane] = vout[lane]; }");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    /* a compound store reads the lanes first */
    static const char ACCUM[] =
        "#include <stdint.h>\n"
        "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
        "{\n"
        "    for (int64_t i = 0; i < M; i++)\n"
        "        for (int64_t j = 0; j < N; j++) {\n"
        "            C[i * N + j] = 0.0f;\n"
        "            float acc = 0.0f;\n"
        "            for (int64_t k = 0; k < K; k++)\n"
        "                acc += A[i * K + k] * B[k * N + j];\n"
        "            C[i * N + j] += acc * 2.0f;\n"
        "        }\n"
        "}\n";
    out = apply_ok("vectorize", NULL, 0, ACCUM, "mm");
    assert_contains(out, "{ vf vout = (*(vf *)&C[i * N + j]) + (acc * 2.0f) - (vf){0};");
    assert_same_result(ACCUM, out, MM_DRIVER, "mm");
    free(out);
    /* a store inside an inner loop that moves with it (not held in a
     * register) would be made twice, adding twice: no window */
    static const char INNER_STORE[] =
        "#include <stdint.h>\n"
        "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
        "{\n"
        "    for (int64_t i = 0; i < M; i++)\n"
        "        for (int64_t j = 0; j < N; j++)\n"
        "            for (int64_t k = 0; k < M; k++)\n"
        "                C[k * N + j] += A[i * K] * B[j];\n"
        "}\n";
    long lp[2] = {1, 0};
    out = apply_ok("vectorize", lp, 2, INNER_STORE, "mm");
    assert_null(strstr(out, "j_lane0"));
    assert_same_result(INNER_STORE, out, MM_DRIVER, "mm");
    free(out);
    /* a sum across the vectorised loop would count the done lanes twice */
    out = apply_ok("vectorize", NULL, 0, LINEAR, "mm");
    assert_null(strstr(out, "_lane0"));
    free(out);
    /* an elementwise loop (no inner loop) keeps its few scalar iterations */
    out = apply_ok("vectorize", NULL, 0, AXPBY, "mm");
    assert_null(strstr(out, "_lane0"));
    free(out);
}

/* ---- declines ------------------------------------------------------------- */


static void test_vec__declines(void **state)
{
    (void)state;
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"),
                    "k", "'>' at line 6");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = expf(x[i]);\n"),
                    "k", "the call of 'expf' at line 6");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 1; i < n; i++)\n"
                            "        y[i] = y[i - 1] + x[i];\n"),
                    "k", "y");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[2 * i];\n"),
                    "k", "not contiguous in 'i'");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[n - i];\n"),
                    "k", "not contiguous in 'i'");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[i] * n;\n"),
                    "k", "'n' at line 6 is not a float");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        d[i] = x[i];\n"),
                    "k", "'d' at line 6 is not an array of float");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    #pragma omp simd\n"
                            "    for (int64_t i = 0; i < n; i++)\n"
                            "        y[i] = x[i];\n"),
                    "k", "carries '#pragma omp simd'");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    float m = 0.0f;\n"
                            "    for (int64_t i = 0; i < n; i++)\n"
                            "        m = fmaxf(m, x[i]);\n"
                            "    y[0] = m;\n"),
                    "k", "max");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i += 2)\n"
                            "        y[i] = x[i];\n"),
                    "k", "line 5");
    assert_declines("vectorize", NULL, 0,
                    KERNEL1("    for (int64_t i = 0; i < n; i++)\n"
                            "        y[0] = x[i];\n"),
                    "k", "vectorize");
    long bad[2] = {-1, 5};
    assert_declines("vectorize", bad, 2, MATMUL_DOT, "mm", "width 5");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vec__matmul_outer_loop),
        cmocka_unit_test(test_vec__reduction_loop),
        cmocka_unit_test(test_vec__elementwise_widths),
        cmocka_unit_test(test_vec__chains_with_omp_and_flags),
        cmocka_unit_test(test_vec__register_block),
        cmocka_unit_test(test_vec__columns),
        cmocka_unit_test(test_vec__unroll_hints_dropped),
        cmocka_unit_test(test_vec__last_window),
        cmocka_unit_test(test_vec__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
