/*
 * tests/unit/test_recipe_kblock.c - the `kblock` recipe
 * (src/recipe/recipe_kblock.c): the loop around a register-blocked vector
 * loop runs once per block of k, the partial sums carried through memory.
 * Each rewrite is built with gcc, run at extents whose K spans several
 * blocks, one, and none (the driver's K = 13, 33, 0 with kc 4 or 5), and
 * compared with the kernel as it was: the row-update form (accumulators
 * start from C, C zeroed on the first pass only), the dot-product form
 * (accumulators start from 0 on the first pass, from C after), with pack,
 * with OpenMP, with an epilogue (the last pass only). Where the passes
 * would not add up it declines, naming why.
 */
#include "recipe_check.h"

static const long KC4[1] = {4};

static char *with_free(char *src, const char *from, const char *to)
{
    char *out = with(src, from, to);
    free(src);
    return out;
}

/* register_block with `pack` p, then omp_parallel when `omp`, then kblock. */
static char *blocked_chain(const char *src, long pack, bool omp, long kc)
{
    kevo_recipe_step steps[3] = {{"register_block", {6, 8, pack, 2}, 4}};
    size_t n = 1;
    if (omp)
        steps[n++] = (kevo_recipe_step){"omp_parallel", {1, 0}, 2};
    steps[n++] = (kevo_recipe_step){"kblock", {kc}, 1};
    return chain_ok(steps, n, src, "mm");
}

static void test_kblock__row_update_form(void **state)
{
    (void)state;
    for (long pack = 0; pack <= 1; pack++)
        for (int omp = 0; omp <= 1; omp++) {
            char *out = blocked_chain(MATMUL_ROWS, pack, omp, 4);
            assert_contains(out, "for (int64_t k_kb = (0); k_kb == (0) || k_kb < (K); k_kb += 4)");
            assert_contains(out, "const int64_t k_ke = (K) - k_kb > 4 ? k_kb + 4 : (K);");
            assert_contains(out, "for (int64_t k = k_kb; k < k_ke; k++)");
            /* C's row is zeroed on the first pass only */
            assert_contains(out, "if (k_kb == (0)) for (int64_t j = 0; j < N; j++)");
            if (omp) { /* the pragma stays on the rows loop, inside the passes */
                const char *p = strstr(out, "k_kb + 4 : (K);\n");
                assert_non_null(p);
                p += strlen("k_kb + 4 : (K);\n");
                p += strspn(p, " ");
                assert_true(!strncmp(p, "#pragma omp parallel for\n", 25));
            }
            assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
            assert_declines("kblock", KC4, 1, out, "mm", "blocked already");
            free(out);
        }
}

/* The zeroing loop under a pragma (`unroll` marked it): the first-pass
 * guard opens a block above the pragma, which must stay on its loop (the
 * recipe sweep found `#pragma GCC unroll 16` followed by `if (...)`, which
 * gcc refuses). */
static void test_kblock__guard_above_a_pragma(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {{"unroll", {16, 1}, 2},
                                {"register_block", {6, 8, 1, 2}, 4},
                                {"kblock", {4}, 1}};
    char *out = chain_ok(steps, 3, MATMUL_ROWS, "mm");
    assert_contains(out, "if (k_kb == (0)) {\n        #pragma GCC unroll 16\n        for (int64_t j");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
}

static void test_kblock__dot_form_starts_from_memory(void **state)
{
    (void)state;
    char *out = blocked_chain(MATMUL_DOT, 1, true, 5);
    /* an accumulator that started at 0 starts from its stored sum after the first pass */
    assert_contains(out, "k_kb == (0) ? (vf)(");
    assert_contains(out, ": (vf)((*(vf *)&C[");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    /* the transposed pack first, the lane stores of the last window */
    out = blocked_chain(MATMUL_TB, 2, true, 5);
    assert_contains(out, "k_kb == (0) ? (vf)(");
    assert_same_result(MATMUL_TB, out, MM_DRIVER, "mm");
    char *d = no_alloc_driver();
    assert_same_result(MATMUL_TB, out, d, "mm"); /* the unpacked branches, blocked too */
    free(d);
    free(out);
}

/* A hand-written register-blocked kernel with an epilogue after the
 * reduction (a fused ReLU): it runs on the last pass only. */
#define HAND(init, after)                                                                          \
    "#include <stdint.h>\n"                                                                        \
    "typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));\n"                  \
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"         \
    "{\n"                                                                                          \
    "    const int64_t nv = N / 8 * 8;\n"                                                          \
    "    for (int64_t i = 0; i < M; i++) {\n"                                                      \
    "        for (int64_t j = 0; j < nv; j += 8) {\n"                                              \
    "            v8 acc = " init ";\n"                                                             \
    "            for (int64_t k = 0; k < K; k++)\n"                                                \
    "                acc += A[i * K + k] * (*(const v8 *)&B[k * N + j]);\n"                        \
    "            *(v8 *)&C[i * N + j] = acc;\n"                                                    \
    "        }\n"                                                                                  \
    "        for (int64_t j = nv; j < N; j++) {\n"                                                 \
    "            float s = 0;\n"                                                                   \
    "            for (int64_t k = 0; k < K; k++)\n"                                                \
    "                s += A[i * K + k] * B[k * N + j];\n"                                          \
    "            C[i * N + j] = s;\n"                                                              \
    "        }\n" after "    }\n"                                                                  \
    "}\n"

#define RELU                                                                                       \
    "        for (int64_t j = 0; j < N; j++)\n            C[i * N + j] = C[i * N + j] > 0 ? C[i "  \
    "* N + j] : 0;\n"

static void test_kblock__epilogue_on_the_last_pass(void **state)
{
    (void)state;
    const char *src = HAND("{0}", RELU);
    char *out = apply_ok("kblock", KC4, 1, src, "mm");
    assert_contains(out, "if (k_ke == (K)) for (int64_t j = 0; j < N; j++)");
    assert_contains(out, "v8 acc = k_kb == (0) ? (v8){0} : (v8)((*(v8 *)&C[i * N + j]));");
    assert_same_result(src, out, MM_DRIVER, "mm");
    free(out);
}

static void test_kblock__declines(void **state)
{
    (void)state;
    assert_declines("kblock", KC4, 1, MATMUL_ROWS, "mm", "no register-blocked nest");
    /* a store between two reductions: it would run on one pass only */
    assert_declines("kblock", KC4, 1,
                    "#include <stdint.h>\n"
                    "typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));\n"
                    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, "
                    "int64_t K)\n{\n"
                    "    for (int64_t i = 0; i < M; i++) {\n"
                    "        for (int64_t j = 0; j < N / 8 * 8; j += 8) {\n"
                    "            v8 acc = {0};\n"
                    "            for (int64_t k = 0; k < K; k++)\n"
                    "                acc += A[i * K + k] * (*(const v8 *)&B[k * N + j]);\n"
                    "            *(v8 *)&C[i * N + j] = acc;\n"
                    "        }\n"
                    "        C[i * N] = 1;\n"
                    "        for (int64_t j = 0; j < N / 8 * 8; j += 8) {\n"
                    "            v8 acc = {0};\n"
                    "            for (int64_t k = 0; k < K; k++)\n"
                    "                acc += A[i * K + k] * (*(const v8 *)&B[k * N + j]);\n"
                    "            *(v8 *)&C[i * N + j] += acc;\n"
                    "        }\n"
                    "    }\n}\n",
                    "mm", "between two statements");
    /* the hand kernel changed where the passes would not add up */
    static const struct {
        const char *from, *to, *why;
    } bad[] = {
        {"(*(const v8 *)&B[k * N + j]);", "(*(const v8 *)&B[k * N + j]) + C[0];",
         "reads C, which the loop to block writes"},
        {"*(v8 *)&C[i * N + j] = acc;", "*(v8 *)&C[i * N + j] = acc; *(v8 *)&C[i * N] = acc;",
         "stored to two places"},
        {"v8 acc = {0};", "v8 acc = *(const v8 *)&B[j];", "starts from neither"},
        {"acc += A[i * K + k]", "acc = acc + A[i * K + k]", "other than by `+=`"},
        {"C[i * N + j] = s;", "C[i * N + j] = s; C[0] = 1;", "a store beside the reduction loop"},
    };
    for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
        char *src = with(HAND("{0}", ""), bad[b].from, bad[b].to);
        assert_declines("kblock", KC4, 1, src, "mm", bad[b].why);
        free(src);
    }
    /* a tile loop is no vector loop: its point loop's bounds read the tile
     * variables, declared by the loop a block would go around */
    assert_declines("kblock", KC4, 1,
                    "#include <stdint.h>\n"
                    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, "
                    "int64_t K)\n{\n"
                    "    for (int64_t it = 0; it < M; it += 4) {\n"
                    "        for (int64_t jt = 0; jt < N; jt += 8)\n"
                    "            for (int64_t i = it; i < (it + 4 < M ? it + 4 : M); i++)\n"
                    "                for (int64_t j = jt; j < (jt + 8 < N ? jt + 8 : N); j++) {\n"
                    "                    float s = 0;\n"
                    "                    for (int64_t k = 0; k < K; k++)\n"
                    "                        s += A[i * K + k] * B[k * N + j];\n"
                    "                    C[i * N + j] = s;\n"
                    "                }\n"
                    "    }\n}\n",
                    "mm", "declared by the loop to block");
    /* a call that may write anything */
    char *src = with_free(with(HAND("{0}", ""), "void mm(", "void g(float *);\nvoid mm("),
                          "(*(const v8 *)&B[k * N + j]);", "(*(const v8 *)&B[k * N + j]); g(C);");
    assert_declines("kblock", KC4, 1, src, "mm", "a call (g)");
    free(src);
    /* the bound of the reduction changes inside the nest */
    src = with_free(with_free(with(HAND("{0}", ""), "    const int64_t nv",
                                   "    int64_t kk = K;\n    const int64_t nv"),
                              "k < K; k++)\n                acc",
                              "k < kk; k++)\n                acc"),
                    "*(v8 *)&C[i * N + j] = acc;", "*(v8 *)&C[i * N + j] = acc; kk = K;");
    assert_declines("kblock", KC4, 1, src, "mm", "which the bound of the reduction loop reads");
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kblock__row_update_form),
        cmocka_unit_test(test_kblock__dot_form_starts_from_memory),
        cmocka_unit_test(test_kblock__guard_above_a_pragma),
        cmocka_unit_test(test_kblock__epilogue_on_the_last_pass),
        cmocka_unit_test(test_kblock__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
