/*
 * tests/unit/test_recipe_pack.c - the `pack` recipe (src/recipe/recipe_pack.c):
 * after register blocking it copies the operand the vector loop reads
 * along k into panels once, and the loads read the panels; the rewrite
 * computes what the original computes (built with gcc, run, outputs
 * compared at extents that are not multiples of the vector width, smaller
 * than it, and zero), also when the buffer cannot be had (the driver's own
 * aligned_alloc fails: the loop as it was runs), with OpenMP threads, and on
 * loads whose lanes are not `x[e + j]` (the copy takes exactly the lanes a
 * load reads). Where its precondition fails it declines with a reason.
 */
#include "recipe_check.h"

static char *blocked(const char *src, long rows, long width)
{
    long p[4] = {rows, width, 0, 1}; /* registers only, one vector per row: the tests pack themselves */
    return apply_ok("register_block", p, 4, src, "mm");
}

static void test_pack__after_register_block(void **state)
{
    (void)state;
    char *b = blocked(MATMUL_ROWS, 4, 0);
    char *out = apply_ok("pack", NULL, 0, b, "mm");
    assert_contains(out, "aligned_alloc(64, ");
    assert_contains(out, "(*(const vf *)&b_pack[((j - b_pack_j0) / b_pack_w * b_pack_nk + (k - "
                         "b_pack_k0)) * b_pack_w])");
    /* the machine's width: the vector type is copied for the panel width */
    assert_contains(out, "const int64_t b_pack_w = ((int64_t)(sizeof(vf) / sizeof(float)))");
    assert_contains(out, "(&(B + k * N)[j])[b_pack_lane]");
    assert_contains(out, "free(b_pack);");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    char *d = no_alloc_driver();
    assert_same_result(MATMUL_ROWS, out, d, "mm");
    free(d);
    assert_declines("pack", NULL, 0, out, "mm", "packed already");
    free(out);
    free(b);
    /* the dot-product form: B[k * N + j] is loaded directly */
    long w8 = 8;
    b = blocked(MATMUL_DOT, 2, w8);
    out = apply_ok("pack", NULL, 0, b, "mm");
    assert_contains(out, "(&B[k * N + j])[B_pack_lane]");
    assert_same_result(MATMUL_DOT, out, MM_DRIVER, "mm");
    free(out);
    free(b);
}

/* The line holding `needle` is a loop right below `#pragma omp parallel
 * for`: it runs in OpenMP threads. */
static void assert_parallel_above(const char *out, const char *needle)
{
    const char *at = strstr(out, needle);
    assert_non_null(at);
    const char *line = at;
    while (line > out && line[-1] != '\n')
        line--;
    const char *prev = line - 1;
    while (prev > out && prev[-1] != '\n')
        prev--;
    prev += strspn(prev, " ");
    if (strncmp(prev, "#pragma omp parallel for\n", 25))
        print_error("no omp pragma above '%s':\n%s\n", needle, out);
    assert_true(!strncmp(prev, "#pragma omp parallel for\n", 25));
}

/* The panel fill (`for (T j = *_pack_j0; ...)`) runs in OpenMP threads. */
static void assert_fill_parallel(const char *out)
{
    assert_parallel_above(out, "_pack_j0; j < ");
}

/* With the OpenMP loop above the rows, in either order; the fills in the
 * same threads. */
static void test_pack__with_omp_parallel(void **state)
{
    (void)state;
    const kevo_recipe_step before[] = {
        {"register_block", {4, 8, 0, 1}, 4}, {"omp_parallel", {1, 1}, 2}, {"pack", {0}, 0}};
    char *out = chain_ok(before, 3, MATMUL_ROWS, "mm");
    /* the pragma stays right above its loop, in both branches */
    const char *p = strstr(out, "#pragma omp parallel for\n");
    assert_non_null(p);
    assert_non_null(strstr(p + 1, "#pragma omp parallel for\n"));
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    assert_fill_parallel(out);
    free(out);
    const kevo_recipe_step after[] = {
        {"register_block", {4, 8, 0, 1}, 4}, {"pack", {0}, 0}, {"omp_parallel", {1, 1}, 2}};
    out = chain_ok(after, 3, MATMUL_ROWS, "mm");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    /* omp_parallel on the kernel's nest alone (all_nests 0) takes the fill along */
    const kevo_recipe_step first[] = {
        {"register_block", {4, 8, 0, 1}, 4}, {"pack", {0}, 0}, {"omp_parallel", {1, 0}, 2}};
    out = chain_ok(first, 3, MATMUL_ROWS, "mm");
    assert_fill_parallel(out);
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
}

/* Hand-written vector loops: lanes that are not `x[e + j]` are copied as
 * the load reads them. */
#define VEC_KERNEL(load)                                                                           \
    "#include <stdint.h>\n"                                                                        \
    "typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));\n"                  \
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"         \
    "{\n"                                                                                          \
    "    const int64_t nv = N / 16 * 8;\n"                                                         \
    "    for (int64_t i = 0; i < M; i++)\n"                                                        \
    "        for (int64_t j = 0; j < nv; j += 8) {\n"                                              \
    "            v8 acc = {0};\n"                                                                  \
    "            for (int64_t k = 0; k < K; k++) {\n"                                              \
    "                float a = A[i * K + k];\n"                                                    \
    "                acc += a * (*(const v8 *)&" load ");\n"                                       \
    "            }\n"                                                                              \
    "            *(v8 *)&C[i * N + j] = acc;\n"                                                    \
    "        }\n"                                                                              \
    "}\n"

static void test_pack__lanes_as_loaded(void **state)
{
    (void)state;
    static const char *const srcs[] = {
        VEC_KERNEL("B[k * N + 2 * j]"),      /* every other vector */
        VEC_KERNEL("B[k * N + (nv - 8 - j)]"), /* right to left */
        VEC_KERNEL("B[(K - 1 - k) * N + j]"), /* rows upwards */
    };
    for (size_t i = 0; i < sizeof(srcs) / sizeof(*srcs); i++) {
        char *out = apply_ok("pack", NULL, 0, srcs[i], "mm");
        assert_contains(out, "B_pack");
        assert_same_result(srcs[i], out, MM_DRIVER, "mm");
        free(out);
    }
}


/* The transposed layout: B read along k is copied to [k][j], the pointer
 * that fed the reads is dropped (it would stop vectorize), and j can then
 * run in lanes; the panels follow once it does. */
static void test_pack__transposed(void **state)
{
    (void)state;
    char *t = apply_ok("pack", NULL, 0, MATMUL_TB, "mm");
    assert_contains(t, "b_packt[(k - b_packt_k0) * b_packt_nj + (j - b_packt_j0)] = (B + j * K)[k];");
    assert_contains(t, "s += a[k] * b_packt[(k - b_packt_k0) * b_packt_nj - b_packt_j0 + j];");
    /* the else branch keeps the pointer; the packed one does not */
    const char *els = strstr(t, "} else {");
    assert_non_null(els);
    const char *decl = strstr(t, "const float *b = B + j * K;");
    assert_true(decl != NULL && decl > els);
    assert_same_result(MATMUL_TB, t, MM_DRIVER, "mm");
    char *d = no_alloc_driver();
    assert_same_result(MATMUL_TB, t, d, "mm");
    free(d);
    long one = 1;
    assert_declines("pack", &one, 1, MATMUL_DOT, "mm", "'i' (line 8) changes inside the loop at line 4");
    assert_declines("pack", &one, 1,
                    "#include <stdint.h>\n"
                    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, "
                    "int64_t K)\n{\n"
                    "    for (int64_t i = 0; i < M; i++)\n"
                    "        for (int64_t j = 0; j < N; j++) {\n"
                    "            float acc = 0.0f;\n"
                    "            for (int64_t k = 0; k < K; k++)\n"
                    "                acc += B[k * N + j] * A[i * K + k];\n"
                    "            C[i * N + j] = acc;\n"
                    "        }\n}\n",
                    "mm", "not strided in 'j': nothing to transpose");
    long bad = 5;
    assert_declines("pack", &bad, 1, MATMUL_TB, "mm", "layout = 5 is out of range");
    /* vectorised, then the transposed buffer in panels */
    char *b = blocked(t, 4, 0);
    assert_contains(b, "(*(vf *)&b_packt[(k - b_packt_k0) * b_packt_nj - b_packt_j0 + j])");
    /* the rows left of 4 run in lanes too, not down the buffer's columns:
     * as one more block of 4 rows over the last 4 (register_block's `tail`)
     * where M >= 4, else one at a time */
    const char *tail = strstr(b, "if ((M > 0 ? M / 4 * 4 : 0) < M && M >= 4) {");
    assert_non_null(tail);
    assert_non_null(strstr(tail, "vf2 s_3 = (0.0f) - (vf2){0};"));
    const char *rest = strstr(b, "for (int64_t i = (M > 0 ? M / 4 * 4 : 0); i < M; i++)");
    assert_true(rest != NULL && rest > tail);
    assert_non_null(strstr(rest, "vf3 s = (0.0f) - (vf3){0};"));
    assert_same_result(MATMUL_TB, b, MM_DRIVER, "mm");
    char *pn = apply_ok("pack", NULL, 0, b, "mm");
    assert_contains(pn, "b_packt_pack[");
    assert_same_result(MATMUL_TB, pn, MM_DRIVER, "mm");
    free(pn);
    free(b);
    free(t);
}

/* register_block packs by default (panels only: the transposed layout is
 * not its business, see recipe_block.c): the schedule in one move; and
 * omp_parallel after it takes the rows loop, not a fill. */
static void test_pack__register_block_packs(void **state)
{
    (void)state;
    long rb[3] = {4, 0, 1}, omp[2] = {1, 0};
    static const char *const srcs[] = {MATMUL_ROWS, MATMUL_DOT};
    static const char *const want[] = {"b_pack[", "B_pack["};
    for (size_t i = 0; i < 2; i++) {
        char *out = apply_ok("register_block", rb, 3, srcs[i], "mm");
        assert_contains(out, want[i]);
        assert_same_result(srcs[i], out, MM_DRIVER, "mm");
        char *par = apply_ok("omp_parallel", omp, 2, out, "mm");
        /* the rows loop carries it (the fill beside it too: assert_fill_parallel) */
        const char *pr = par;
        bool rows = false;
        while (!rows && (pr = strstr(pr, "#pragma omp parallel for\n")) != NULL) {
            pr += strlen("#pragma omp parallel for\n");
            pr += strspn(pr, " ");
            rows = strncmp(pr, "for (int64_t i = 0;", 19) == 0;
        }
        if (!rows)
            print_error("omp_parallel took another nest:\n%s\n", par);
        assert_true(rows);
        assert_fill_parallel(par);
        assert_same_result(srcs[i], par, MM_DRIVER, "mm");
        free(par);
        free(out);
    }
}

/* pack 2 is `pack` layout 1, then the chain with panels: on the
 * dot-product form (B^T) the same text as the two recipes one after the
 * other, correct; where nothing is read strided in the column loop it
 * declines, naming layout 1's reason (it would otherwise repeat pack 1's
 * kernel). pack 1, the default, makes the transposed copy alone there (one
 * copy: no panels of it), and panels where there is nothing to transpose. */
static void test_pack__register_block_transposes(void **state)
{
    (void)state;
    long rb2[3] = {4, 0, 2}, rb1[3] = {4, 0, 1}, rb0[3] = {4, 0, 0}, lay1 = 1;
    char *out = apply_ok("register_block", rb2, 3, MATMUL_TB, "mm");
    char *t = apply_ok("pack", &lay1, 1, MATMUL_TB, "mm");
    char *two = apply_ok("register_block", rb1, 3, t, "mm");
    assert_string_equal(out, two);
    assert_contains(out, "b_packt_pack[");
    assert_same_result(MATMUL_TB, out, MM_DRIVER, "mm");
    free(two);
    free(out);
    /* pack 1: the transposed copy, the registers on it, nothing more */
    out = apply_ok("register_block", rb1, 3, MATMUL_TB, "mm");
    char *one = apply_ok("register_block", rb0, 3, t, "mm");
    assert_string_equal(out, one);
    assert_contains(out, "b_packt[");
    assert_lacks(out, "b_packt_pack[");
    assert_same_result(MATMUL_TB, out, MM_DRIVER, "mm");
    free(one);
    free(out);
    free(t);
    /* nothing to transpose: pack 1 puts the loads in panels, as before */
    out = apply_ok("register_block", rb1, 3, MATMUL_ROWS, "mm");
    assert_contains(out, "b_pack[");
    assert_lacks(out, "_packt");
    assert_same_result(MATMUL_ROWS, out, MM_DRIVER, "mm");
    free(out);
    assert_declines("register_block", rb2, 3, MATMUL_ROWS, "mm",
                    "pack 2 needs `pack` layout 1 to apply first");
    /* and two vectors per row on the transposed panels */
    long rb22[4] = {4, 4, 2, 2};
    out = apply_ok("register_block", rb22, 4, MATMUL_TB, "mm");
    assert_contains(out, "b_packt_pack[");
    assert_contains(out, "j += (2 * 4)) {");
    assert_same_result(MATMUL_TB, out, MM_DRIVER, "mm");
    free(out);
}

static void test_pack__declines(void **state)
{
    (void)state;
    assert_declines("pack", NULL, 0, MATMUL_ROWS, "mm", "apply vectorize or register_block first");
    /* the operand is the output */
    assert_declines("pack", NULL, 0, VEC_KERNEL("C[k * N + j]"), "mm",
                    "'C' (line 11) points into memory the kernel writes");
    /* the address moves with the row: nothing to reuse */
    assert_declines("pack", NULL, 0, VEC_KERNEL("B[(i + k) * N + j]"), "mm",
                    "changes inside the loop at line 6");
    /* a pointer stepped along k */
    assert_declines("pack", NULL, 0,
                    "#include <stdint.h>\n"
                    "typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));\n"
                    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, "
                    "int64_t K)\n{\n"
                    "    for (int64_t i = 0; i < M; i++)\n"
                    "        for (int64_t j = 0; j < N / 8 * 8; j += 8) {\n"
                    "            v8 acc = {0};\n"
                    "            const float *b = B;\n"
                    "            for (int64_t k = 0; k < K; k++) {\n"
                    "                acc += A[i * K + k] * (*(const v8 *)&b[j]);\n"
                    "                b += N;\n"
                    "            }\n"
                    "            *(v8 *)&C[i * N + j] = acc;\n"
                    "        }\n}\n",
                    "mm", "no vector load");
    /* a guarded read: the copy of the whole rectangle would read what the
     * guard keeps the loop from (here past the end of each row of B) */
    assert_declines("pack", NULL, 0,
                    "#include <stdint.h>\n"
                    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, "
                    "int64_t K)\n{\n"
                    "    for (int64_t i = 0; i < M; i++)\n"
                    "        for (int64_t j = 0; j < N; j++) {\n"
                    "            float acc = 0.0f;\n"
                    "            for (int64_t k = 0; k < K + 4; k++)\n"
                    "                acc += k < K ? B[j * K + k] * A[i * K + k] : 0.0f;\n"
                    "            C[i * N + j] = acc;\n"
                    "        }\n}\n",
                    "mm", "the loop at line 5 can skip part of an iteration ('?' at line 8)");
    assert_declines("pack", NULL, 0, VEC_KERNEL("B[k * N + j]); if (a > 0.0f) acc += a * (*(const v8 *)&B[k * N + j]"), "mm",
                    "('if' at line 11)");
    /* threads of one region could take different branches */
    char *b = blocked(MATMUL_ROWS, 4, 8);
    const char *at = strstr(b, "    for (int64_t i = 0;");
    assert_non_null(at);
    kevo_buf region = {0};
    assert_int_equal(kevo_buf_printf(&region, "%.*s#pragma omp parallel\n{\n#pragma omp for\n%s",
                                     (int)(at - b), b, at),
                     0);
    char *r = kevo_buf_detach(&region);
    /* close the region at the end of the function */
    char *last = strrchr(r, '}');
    assert_non_null(last);
    kevo_buf closed = {0};
    assert_int_equal(kevo_buf_printf(&closed, "%.*s}\n}\n", (int)(last - r), r), 0);
    char *c = kevo_buf_detach(&closed);
    assert_declines("pack", NULL, 0, c, "mm", "OpenMP");
    free(c);
    free(r);
    free(b);
}

/* Both fills of the transposed operand in OpenMP threads, the second
 * stepping by the panel width (a constant of the kernel, not a literal). */
static void test_pack__fills_in_threads(void **state)
{
    (void)state;
    const kevo_recipe_step tb[] = {{"register_block", {4, 8, 2, 1}, 4},
                                   {"omp_parallel", {1, 0}, 2}};
    char *out = chain_ok(tb, 2, MATMUL_TB, "mm");
    assert_parallel_above(out, "for (int64_t b_packt_jb = ");
    assert_fill_parallel(out);
    assert_same_result(MATMUL_TB, out, MM_DRIVER, "mm");
    char *d = no_alloc_driver();
    assert_same_result(MATMUL_TB, out, d, "mm");
    free(d);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack__after_register_block),
        cmocka_unit_test(test_pack__with_omp_parallel),
        cmocka_unit_test(test_pack__lanes_as_loaded),
        cmocka_unit_test(test_pack__transposed),
        cmocka_unit_test(test_pack__fills_in_threads),
        cmocka_unit_test(test_pack__register_block_packs),
        cmocka_unit_test(test_pack__register_block_transposes),
        cmocka_unit_test(test_pack__declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
