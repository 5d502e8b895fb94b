/*
 * tests/unit/test_recipe_split.c - the `split` recipe
 * (src/recipe/recipe_split.c): a loop split in three at the bounds its
 * guards imply, the tests that cannot pass left out of the interior. Every
 * guard takes the branch it took, so each rewrite must print exactly what
 * the loop as written prints (both built with gcc -O2), at sizes whose
 * interior is empty, one wide, all but the border, with padding 0, 1, 2,
 * strides 1, 2, 3 and, where the stride is a parameter, 0 and -1 (no
 * interior: the loop as written runs). Where a test could pass inside the
 * interior, or dropping it could change what runs, split leaves it, and
 * declines when nothing is left to drop.
 */
#include "recipe_check.h"

static const long EVERY[2] = {-1, 0}; /* split alone */

/* A padded 3x3 convolution, the Level 2 form: the declarations of the
 * input position, one guard testing both. */
static const char CONV[] = "#include <stdint.h>\n"
                           "void k(const float *x, const float *w, float *y, int64_t H, "
                           "int64_t W, int64_t OH, int64_t OW, int64_t P, int64_t S)\n"
                           "{\n"
                           "    for (int64_t oh = 0; oh < OH; oh++)\n"
                           "        for (int64_t ow = 0; ow < OW; ow++) {\n"
                           "            float acc = 0.125f;\n"
                           "            for (int64_t kh = 0; kh < 3; kh++)\n"
                           "                for (int64_t kw = 0; kw < 3; kw++) {\n"
                           "                    int64_t ih = oh * 1 - P + kh, iw = ow * 1 - P + kw;\n"
                           "                    if (ih < 0 || ih >= H || iw < 0 || iw >= W)\n"
                           "                        continue;\n"
                           "                    acc += x[ih * W + iw] * w[kh * 3 + kw];\n"
                           "                }\n"
                           "            y[oh * OW + ow] = acc;\n"
                           "        }\n"
                           "}\n";

/* Each case: H, W, P, S, OH, OW. */
static const char DRIVER[] =
    DRIVER_HEAD "void k(const float *x, const float *w, float *y, int64_t H, int64_t W, "
                "int64_t OH, int64_t OW, int64_t P, int64_t S);\n"
                "int main(void) { unsigned s = 5;\n"
                "  const int64_t cs[][6] = {\n"
                "    {5, 5, 1, 1, 5, 5}, {1, 1, 1, 1, 1, 1}, {2, 2, 0, 1, 1, 1}, {3, 3, 1, 1, 3, 3},\n"
                "    {3, 4, 1, 1, 3, 4}, {17, 9, 2, 1, 19, 11}, {6, 6, 2, 2, 4, 4}, {9, 13, 1, 3, 4, 5},\n"
                "    {4, 4, 0, 1, 2, 2}, {4, 4, 1, 0, 3, 3}, {4, 4, 1, -1, 3, 3}, {0, 5, 1, 1, 2, 5},\n"
                "    {5, 5, 1, 1, 0, 5}, {5, 5, 1, 1, 9, 9}};\n"
                "  /* the image inside a margin of other values: a read the guards\n"
                "     should have kept out of it changes the sums */\n"
                "  float *xm = malloc((17 * 13 + 2 * 64) * 4), *x = xm + 64;\n"
                "  float *w = malloc(9 * 4), *y = malloc(19 * 11 * 4);\n"
                "  for (int i = 0; i < 17 * 13 + 2 * 64; i++) xm[i] = rnd(&s) + 3.0f;\n"
                "  for (int i = 0; i < 9; i++) w[i] = rnd(&s);\n"
                "  for (int c = 0; c < 14; c++) {\n"
                "    const int64_t *q = cs[c];\n"
                "    for (int64_t i = 0; i < q[4] * q[5]; i++) y[i] = -9.0f;\n"
                "    k(x, w, y, q[0], q[1], q[4], q[5], q[2], q[3]);\n"
                "    for (int64_t i = 0; i < q[4] * q[5]; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  }\n"
                "  free(xm); free(w); free(y); return 0; }\n";

/* A 1-D max pool with the guard the other way round, as Level 1 writes
 * it: `if (i >= 0 && i < L && x[i] > m) m = x[i];`. */
static const char POOL[] = "#include <math.h>\n"
                           "#include <stdint.h>\n"
                           "void k(const float *x, float *y, int64_t L, int64_t LO, int64_t K, "
                           "int64_t S, int64_t P)\n"
                           "{\n"
                           "    for (int64_t o = 0; o < LO; o++) {\n"
                           "        float m = -INFINITY;\n"
                           "        for (int64_t j = 0; j < K; j++) {\n"
                           "            int64_t i = o * S - P + j;\n"
                           "            if (i >= 0 && i < L && x[i] > m)\n"
                           "                m = x[i];\n"
                           "        }\n"
                           "        y[o] = m;\n"
                           "    }\n"
                           "}\n";

/* Each case: L, LO, K, S, P. */
static const char POOL_DRIVER[] =
    DRIVER_HEAD "void k(const float *x, float *y, int64_t L, int64_t LO, int64_t K, int64_t S, "
                "int64_t P);\n"
                "int main(void) { unsigned s = 11;\n"
                "  const int64_t cs[][5] = {{9, 9, 3, 1, 1}, {1, 3, 3, 1, 1}, {30, 15, 4, 2, 1},\n"
                "    {30, 12, 5, 3, 2}, {5, 7, 2, 1, 0}, {8, 4, 3, 0, 1}, {8, 4, 3, -2, 1},\n"
                "    {8, 0, 3, 1, 1}, {8, 6, 0, 1, 1}, {2, 4, 6, 1, 2}};\n"
                "  float xm[30 + 2 * 16], *x = xm + 16, y[16];\n"
                "  for (int i = 0; i < 30 + 2 * 16; i++) xm[i] = rnd(&s) + 3.0f * (i % 2);\n"
                "  for (int c = 0; c < 10; c++) {\n"
                "    const int64_t *q = cs[c];\n"
                "    for (int i = 0; i < 16; i++) y[i] = 7.0f;\n"
                "    k(x, y, q[0], q[1], q[2], q[3], q[4]);\n"
                "    for (int i = 0; i < 16; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  }\n"
                "  return 0; }\n";

/* The rewrite prints exactly what the original prints. */
static void assert_exact(const char *orig, const char *rewritten, const char *driver)
{
    assert_same_output(orig, rewritten, driver, "k", 100);
}

static char *split_ok(const char *src, const char *driver)
{
    char *out = apply_ok("split", EVERY, 2, src, "k");
    assert_exact(src, out, driver);
    return out;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_split__conv(void **state)
{
    (void)state;
    char *out = split_ok(CONV, DRIVER);
    /* oh in three, ow in three inside oh's interior */
    assert_contains(out, "for (int64_t oh = 0; oh < oh_lo; oh++)");
    assert_contains(out, "for (int64_t oh = oh_lo; oh < oh_hi; oh++)");
    assert_contains(out, "for (int64_t oh = oh_hi; oh < OH; oh++)");
    assert_contains(out, "for (int64_t ow = ow_lo; ow < ow_hi; ow++)");
    /* the whole test on oh's borders, the test on iw on ow's, none inside */
    assert_int_equal(count(out, "if (ih < 0 || ih >= H || iw < 0 || iw >= W)"), 2);
    assert_int_equal(count(out, "if (iw < 0 || iw >= W)"), 2);
    assert_int_equal(count(out, "continue;"), 4);
    /* the interior reads the positions as sums, the row's variable added */
    assert_contains(out, "acc += x[(oh * 1 - P + kh) * W + ow * 1 - P + kw] * w[kh * 3 + kw];");
    assert_int_equal(count(out, "int64_t ih = oh * 1 - P + kh, iw = ow * 1 - P + kw;"), 4);
    /* ow's bounds computed once, before oh's copies: the interior of oh
     * holds ow's three loops alone */
    const char *ow_lo = strstr(out, "long long ow_lo");
    const char *oh_in = strstr(out, "for (int64_t oh = oh_lo; oh < oh_hi; oh++)");
    assert_true(ow_lo != NULL && oh_in != NULL && ow_lo < oh_in);
    /* split again, the copies are not split again (their interior would
     * be empty): the columns of the top and bottom rows are */
    char *again = split_ok(out, DRIVER);
    assert_lacks(again, "oh_lo2");
    assert_contains(again, "for (int64_t ow = ow_lo2; ow < ow_hi2; ow++)");
    free(again);
    free(out);

    /* strides 2 (a literal: no check at run time) and S (checked > 0) */
    char *s2 = with(CONV, "oh * 1 - P + kh, iw = ow * 1 - P + kw", "oh * 2 - P + kh, iw = ow * 2 - P + kw");
    out = split_ok(s2, DRIVER);
    assert_lacks(out, "> 0)");
    free(out);
    free(s2);
    char *ss = with(CONV, "oh * 1 - P + kh, iw = ow * 1 - P + kw", "S * oh - P + kh, iw = ow * S - P + kw");
    out = split_ok(ss, DRIVER);
    assert_contains(out, "if (((long long)(S)) > 0) {");
    free(out);
    free(ss);
    /* `<=` loops, the test written X op E, a dilation parameter on the taps */
    char *le = with(CONV, "oh < OH;", "oh <= OH - 1;");
    char *flip = with(le, "ih >= H ||", "H <= ih ||");
    char *dil = with(flip, "oh * 1 - P + kh,", "oh - P + kh * S,");
    out = split_ok(dil, DRIVER);
    free(out);
    free(dil);
    free(flip);
    free(le);
    /* the tests written <= and >: their bounds one further in */
    char *lege = with(CONV, "ih < 0 || ih >= H || iw < 0 || iw >= W", "ih <= -1 || ih > H - 1 || -1 >= iw || W - 1 < iw");
    out = split_ok(lege, DRIVER);
    assert_int_equal(count(out, "-1 >= iw || W - 1 < iw"), 4);
    assert_int_equal(count(out, "continue;"), 4);
    free(out);
    /* a term opening with a parenthesis (`- (P) * 1 + kh`: kh is a term of
     * its own, added) */
    char *paren = with(CONV, "oh * 1 - P + kh,", "oh * 1 - (P) * 1 + kh,");
    out = split_ok(paren, DRIVER);
    assert_int_equal(count(out, "continue;"), 4);
    free(out);
    free(paren);
    /* the taps run backwards in the positions (a flipped filter) */
    char *flipped = with(CONV, "oh * 1 - P + kh,", "oh * 1 - P + 2 - kh,");
    out = split_ok(flipped, DRIVER);
    assert_int_equal(count(out, "continue;"), 4);
    free(out);
    free(flipped);
    free(lege);
    /* one test kept beside the dropped ones: the interior keeps it alone */
    char *kept = with(CONV, "iw >= W)", "iw >= W || kh == kw)");
    out = split_ok(kept, DRIVER);
    assert_contains(out, "if (kh == kw)");
    free(out);
    free(kept);
    /* the loop chosen by index: ow alone (loop 1), oh's test stays on it */
    const long one[2] = {1, 0};
    out = apply_ok("split", one, 2, CONV, "k");
    assert_exact(CONV, out, DRIVER);
    assert_lacks(out, "oh_lo");
    assert_contains(out, "if (ih < 0 || ih >= H)");
    free(out);
}

static void test_split__run_guard(void **state)
{
    (void)state;
    char *out = split_ok(POOL, POOL_DRIVER);
    /* the interior keeps the comparison with the maximum alone */
    assert_contains(out, "if (x[o * S - P + j] > m)");
    assert_contains(out, "m = x[o * S - P + j];");
    assert_int_equal(count(out, "if (i >= 0 && i < L && x[i] > m)"), 2);
    free(out);
    /* an average: the guarded statement alone is left */
    char *avg = with(POOL, "if (i >= 0 && i < L && x[i] > m)\n                m = x[i];",
                     "if (i >= 0 && i < L)\n                m += x[i];");
    char *avg0 = with(avg, "float m = -INFINITY;", "float m = 0.0f;");
    out = split_ok(avg0, POOL_DRIVER);
    assert_contains(out, "m += x[o * S - P + j];");
    assert_int_equal(count(out, "if (i >= 0 && i < L)"), 2);
    assert_int_equal(count(out, "int64_t i = o * S - P + j;"), 2);
    free(out);
    free(avg0);
    free(avg);
    /* a global bound is not taken (a function the loop calls could change
     * it): its test stays in every copy, the other is dropped */
    char *glob = with(POOL, "i < L &&", "i < LIM &&");
    char *glob2 = with(glob, "void k(", "int64_t LIM = 29;\nvoid k(");
    out = split_ok(glob2, POOL_DRIVER);
    assert_int_equal(count(out, "< LIM &&"), 3);
    free(out);
    free(glob2);
    free(glob);
    /* under sizeof a use's type would change: the interior keeps the
     * declaration */
    char *sz = with(POOL, "m = x[i];", "m = x[i] + 0.0f * (float)sizeof(i);");
    out = split_ok(sz, POOL_DRIVER);
    assert_int_equal(count(out, "int64_t i = o * S - P + j;"), 3);
    assert_contains(out, "if (x[i] > m)");
    free(out);
    free(sz);
    /* the outputs running down the input: o with coefficient -1 */
    char *down = with(POOL, "int64_t i = o * S - P + j;", "int64_t i = P + S - o + j;");
    out = split_ok(down, POOL_DRIVER);
    assert_contains(out, "for (int64_t o = o_lo; o < o_hi; o++)");
    free(out);
    free(down);
}

/* The declines, on the pool's loop over outputs (loop 0). */
static void test_split__declines(void **state)
{
    (void)state;
    static const long OUTER[2] = {0, 0};
    char *src;
    /* the taps' bound changes with the loop's variable: o stays, the taps
     * are split */
    src = with(POOL, "j < K;", "j < o;");
    char *taps = apply_ok("split", EVERY, 2, src, "k");
    assert_lacks(taps, "o_lo");
    assert_contains(taps, "for (int64_t j = j_lo; j < j_hi; j++)");
    assert_exact(src, taps, POOL_DRIVER);
    free(taps);
    assert_declines("split", OUTER, 2, src, "k", "split can drop");
    free(src);
    /* the padding is written inside the loop */
    src = with(POOL, "        y[o] = m;\n", "        y[o] = m;\n        P++;\n");
    assert_declines("split", OUTER, 2, src, "k", "split can drop");
    free(src);
    /* the position read from memory */
    src = with(POOL, "i < L &&", "i < (int64_t)x[0] &&");
    char *src2 = with(src, "i >= 0 &&", "");
    assert_declines("split", OUTER, 2, src2, "k", "split can drop");
    free(src2);
    free(src);
    /* a test that calls */
    src = with(POOL, "i < L &&", "i < labs(L) &&");
    char *src3 = with(src, "i >= 0 &&", "");
    char *src4 = with(src3, "#include <math.h>\n", "#include <math.h>\n#include <stdlib.h>\n");
    assert_declines("split", OUTER, 2, src4, "k", "nothing to split at");
    free(src4);
    free(src3);
    free(src);
    /* the position declared unsigned: a test on it wraps */
    src = with(POOL, "int64_t i = o * S - P + j;", "uint64_t i = o * S - P + j;");
    assert_declines("split", OUTER, 2, src, "k", "split can drop");
    free(src);
    /* the position written after its declaration */
    src = with(POOL, "int64_t i = o * S - P + j;\n", "int64_t i = o * S - P + j;\n            i += 0;\n");
    assert_declines("split", OUTER, 2, src, "k", "split can drop");
    free(src);
    /* a pragma on the loop, a loop that leaves early */
    src = with(POOL, "    for (int64_t o", "    #pragma omp simd\n    for (int64_t o");
    assert_declines("split", OUTER, 2, src, "k", "pragma");
    free(src);
    src = with(POOL, "        y[o] = m;\n", "        y[o] = m;\n        if (m > 9.0f) break;\n");
    assert_declines("split", OUTER, 2, src, "k", "leave early");
    free(src);
    /* its address taken: it could change through a pointer */
    src = with(POOL, "        y[o] = m;\n", "        y[o] = m;\n        int64_t *pp = &P; (void)pp;\n");
    assert_declines("split", OUTER, 2, src, "k", "split can drop");
    free(src);
}

/* The interior is what register_block and vectorize take: the chain
 * computes what the convolution does; with `then` (default 2) the same
 * step gives what the chain gives; a follow-up that declines is left out. */
static void test_split__then_register_block(void **state)
{
    (void)state;
    const kevo_recipe_step steps[] = {
        {"split", {-1, 0}, 2}, {"register_block", {0}, 0}, {"omp_parallel", {2, 1}, 2}};
    char *out = chain_ok(steps, 3, CONV, "k");
    assert_contains(out, "vf ");
    assert_contains(out, "#pragma omp parallel for");
    assert_same_result(CONV, out, DRIVER, "k");
    char *one = apply_ok("split", NULL, 0, CONV, "k");
    assert_string_equal(one, out);
    free(one);
    free(out);
    /* then 1: threads only */
    const long threads[2] = {-1, 1};
    out = apply_ok("split", threads, 2, CONV, "k");
    assert_contains(out, "#pragma omp parallel for");
    assert_lacks(out, "vf ");
    free(out);
    /* the pool: register_block declines it, the threads follow the split */
    out = apply_ok("split", NULL, 0, POOL, "k");
    assert_contains(out, "for (int64_t o = o_lo; o < o_hi; o++)");
    assert_lacks(out, "vf ");
    assert_same_result(POOL, out, POOL_DRIVER, "k");
    free(out);
    const long odd[2] = {-1, 3};
    assert_declines("split", odd, 2, CONV, "k", "out of range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split__conv),
        cmocka_unit_test(test_split__run_guard),
        cmocka_unit_test(test_split__declines),
        cmocka_unit_test(test_split__then_register_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
