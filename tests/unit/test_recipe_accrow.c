/*
 * tests/unit/test_recipe_accrow.c - the `acc_row` recipe
 * (src/recipe/recipe_accrow.c): the sums a loop keeps in a scalar over an
 * inner loop, kept in a row along the loop with the inner loop outside it.
 * Each element adds the same terms in the same order, so each rewrite must
 * print exactly what the loop as written prints (built with gcc -O2, at
 * lengths below, at and across a chunk: 0, 1, 3, 300, 1000, chunks of 16
 * and 256). Where the new order could change what the kernel computes, it
 * declines, naming why. Also: permute's reduce 2, which ends in acc_row.
 */
#include "recipe_check.h"

static const long EVERY[2] = {-1, 256};
static const long SMALL[2] = {-1, 16};

/* Output channels j, positions i written a stride S apart: the form a
 * strided transposed convolution takes once its input channels are summed
 * per element. */
static const char STRIDED[] = "#include <stdint.h>\n"
                              "void k(const float *x, const float *w, float *y, int64_t C, "
                              "int64_t L, int64_t S)\n"
                              "{\n"
                              "    for (int64_t j = 0; j < 4; j++)\n"
                              "        for (int64_t i = 0; i < L; i++) {\n"
                              "            const int64_t o = i * S + 1;\n"
                              "            float acc = 0.25f;\n"
                              "            for (int64_t c = 0; c < C; c++) {\n"
                              "                const float xv = x[c * L + i];\n"
                              "                acc += xv * w[c * 4 + j];\n"
                              "            }\n"
                              "            y[j * (L * S + 2) + o] += acc;\n"
                              "        }\n"
                              "}\n";

static const char DRIVER[] =
    DRIVER_HEAD "void k(const float *x, const float *w, float *y, int64_t C, int64_t L, int64_t S);\n"
                "int main(void) { unsigned s = 3;\n"
                "  const int64_t len[] = {0, 1, 3, 300, 1000};\n"
                "  const int64_t C = 7, S = 3;\n"
                "  float *x = malloc(C * 1000 * 4), *w = malloc(C * 4 * 3 * 4);\n"
                "  float *y = malloc(4 * (1000 * S + 2) * 4);\n"
                "  for (int64_t i = 0; i < C * 1000; i++) x[i] = rnd(&s);\n"
                "  for (int64_t i = 0; i < C * 4 * 3; i++) w[i] = rnd(&s);\n"
                "  for (int l = 0; l < 5; l++) {\n"
                "    const int64_t n = 4 * (len[l] * S + 2);\n"
                "    for (int64_t i = 0; i < n; i++) y[i] = 0.125f * (float)(i % 5);\n"
                "    k(x, w, y, C, len[l], S);\n"
                "    for (int64_t i = 0; i < n; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  }\n"
                "  free(x); free(w); free(y); return 0; }\n";

/* The rewrite prints exactly what the original prints. */
static void assert_exact(const char *orig, const char *rewritten)
{
    assert_same_output(orig, rewritten, DRIVER, "k", 1000);
}

static char *acc_row_ok(const char *src, const long *params)
{
    char *out = apply_ok("acc_row", params, 2, src, "k");
    assert_exact(src, out);
    return out;
}

static void test_acc_row__strided_output(void **state)
{
    (void)state;
    char *out = acc_row_ok(STRIDED, EVERY);
    assert_contains(out, "float acc_row[256];");
    assert_contains(out, "acc_row[i - i_blk] = 0.25f;");
    assert_contains(out, "acc_row[i - i_blk] += xv * w[c * 4 + j];");
    assert_contains(out, "float acc = acc_row[i - i_blk];");
    /* the channel loop outside the row: its header before the row's loop */
    const char *c_loop = strstr(out, "for (int64_t c = 0; c < C; c++)");
    assert_non_null(c_loop);
    assert_non_null(strstr(c_loop, "for (int64_t i = i_blk; i < i_end; i++)"));
    /* the store's position `o`, an integer of i, only in the last loop:
     * the starting values and the sums do not read it (and vectorize
     * declines a loop that computes an integer of its variable) */
    const char *last = NULL; /* the last loop over the row */
    for (const char *p = out; (p = strstr(p, "for (int64_t i = i_blk; i < i_end; i++)")); p++)
        last = p;
    const char *o_decl = strstr(out, "const int64_t o = i * S + 1;");
    assert_non_null(last);
    assert_true(o_decl != NULL && o_decl > last);
    assert_null(strstr(o_decl + 1, "const int64_t o = i * S + 1;"));
    /* nothing left to take */
    assert_declines("acc_row", EVERY, 2, out, "k", "sums into a scalar");
    free(out);
    /* many chunks, the last one short */
    out = acc_row_ok(STRIDED, SMALL);
    assert_contains(out, "float acc_row[16];");
    free(out);
    /* `<=`, a guard and a single-statement inner loop */
    char *le = with(STRIDED, "i < L;", "i <= L - 1;");
    out = acc_row_ok(le, EVERY);
    free(out);
    char *guarded = with(STRIDED, "            const int64_t o = i * S + 1;\n",
                         "            if (i % 3 == 1) continue;\n"
                         "            const int64_t o = i * S + 1;\n");
    out = acc_row_ok(guarded, EVERY);
    free(out);
    /* a guard on the position: each loop takes it, and `o`, which it reads */
    char *on_o = with(STRIDED, "            float acc = 0.25f;\n",
                      "            if (o % 4 == 2) continue;\n            float acc = 0.25f;\n");
    out = acc_row_ok(on_o, EVERY);
    size_t n_o = 0;
    for (const char *p = out; (p = strstr(p, "const int64_t o = i * S + 1;")); p++)
        n_o++;
    assert_int_equal(n_o, 3);
    free(out);
    free(on_o);
    char *one = with(STRIDED,
                     "            for (int64_t c = 0; c < C; c++) {\n"
                     "                const float xv = x[c * L + i];\n"
                     "                acc += xv * w[c * 4 + j];\n"
                     "            }\n",
                     "            for (int64_t c = 0; c < C; c++)\n"
                     "                acc -= x[c * L + i] * w[c * 4 + j];\n");
    out = acc_row_ok(one, EVERY);
    assert_contains(out, "acc_row[i - i_blk] -= x[c * L + i] * w[c * 4 + j];");
    free(out);
    free(one);
    free(guarded);
    free(le);
}

static void test_acc_row__declines(void **state)
{
    (void)state;
    /* the element stores into what the sums read: the sums must come first */
    char *src = with(STRIDED, "y[j * (L * S + 2) + o] += acc;", "x[i] = acc;");
    char *rw = with(src, "const float *x,", "float *x,");
    assert_declines("acc_row", EVERY, 2, rw, "k", "writes what the loop at line 8 reads");
    free(rw);
    free(src);
    /* ... also through another pointer into the same parameter */
    src = with(STRIDED, "            const int64_t o = i * S + 1;\n",
               "            const int64_t o = i * S + 1;\n            float *xo = x + 1;\n");
    char *src2 = with(src, "y[j * (L * S + 2) + o] += acc;", "xo[i] = acc;");
    char *src3 = with(src2, "const float *x,", "float *x,");
    assert_declines("acc_row", EVERY, 2, src3, "k", "writes what the loop");
    free(src3);
    free(src2);
    free(src);
    /* the inner loop reads the sum */
    src = with(STRIDED, "acc += xv * w[c * 4 + j];", "acc += xv * acc;");
    assert_declines("acc_row", EVERY, 2, src, "k", "reads 'acc' other than");
    free(src);
    /* its bounds change with the row's variable */
    src = with(STRIDED, "c < C;", "c < i;");
    assert_declines("acc_row", EVERY, 2, src, "k", "names 'i'");
    free(src);
    /* it writes memory */
    src = with(STRIDED, "                acc += xv * w[c * 4 + j];\n",
               "                acc += xv * w[c * 4 + j];\n                y[c] = 0.0f;\n");
    assert_declines("acc_row", EVERY, 2, src, "k", "writes what it does not declare");
    free(src);
    /* a call with effects before the inner loop */
    src = with(STRIDED, "            const int64_t o = i * S + 1;\n",
               "            const int64_t o = i * S + 1;\n            const int r = rand();\n");
    char *with_stdlib = with(src, "#include <stdint.h>\n", "#include <stdint.h>\n#include <stdlib.h>\n");
    assert_declines("acc_row", EVERY, 2, with_stdlib, "k", "writes and calls nothing");
    free(with_stdlib);
    free(src);
    /* a pragma on the loop */
    src = with(STRIDED, "        for (int64_t i", "        #pragma omp simd\n        for (int64_t i");
    assert_declines("acc_row", EVERY, 2, src, "k", "carries a pragma");
    free(src);
    /* the loop can leave early */
    src = with(STRIDED, "y[j * (L * S + 2) + o] += acc;",
               "y[j * (L * S + 2) + o] += acc;\n            if (acc > 9.0f) break;");
    assert_declines("acc_row", EVERY, 2, src, "k", "leave early");
    free(src);
    /* a chunk it does not take */
    const long odd[2] = {-1, 100};
    assert_declines("acc_row", odd, 2, STRIDED, "k", "chunk is 100");
}

/* A gather convolution: each output position sums over the channels and two
 * loops of taps, a perfect nest whose headers do not change along the row. */
static const char GATHER[] = "#include <stdint.h>\n"
                             "void k(const float *x, const float *w, float *y, int64_t C, "
                             "int64_t L, int64_t S)\n"
                             "{\n"
                             "    for (int64_t j = 0; j < 4; j++)\n"
                             "        for (int64_t i = 0; i < L; i++) {\n"
                             "            float acc = 0.5f;\n"
                             "            for (int64_t c = 0; c < C; c++)\n"
                             "                for (int64_t t = 0; t < S; t++)\n"
                             "                    for (int64_t u = 0; u < 2; u++)\n"
                             "                        acc += x[c * L + (i + t + u) % L] * "
                             "w[(c * 4 + j) * 3 + t];\n"
                             "            y[j * (L * S + 2) + i] = acc;\n"
                             "        }\n"
                             "}\n";

/* The first `for` of `what` in out comes before the row's first loop over
 * the sums (the one after the starting values). */
static bool outside_row(const char *out, const char *what)
{
    const char *start = strstr(out, "for (int64_t i = i_blk; i < i_end; i++)");
    const char *sums = start ? strstr(start + 1, "for (int64_t i = i_blk; i < i_end; i++)") : NULL;
    const char *w = strstr(out, what);
    assert_non_null(sums);
    assert_non_null(w);
    return w < sums;
}

/* The rewrite of src keeps the tap loop t outside the row and u under it. */
static void assert_row_between_t_and_u(const char *src)
{
    char *out = acc_row_ok(src, EVERY);
    assert_true(outside_row(out, "for (int64_t t = 0"));
    assert_false(outside_row(out, "for (int64_t u = 0"));
    free(out);
}

static void test_acc_row__nest(void **state)
{
    (void)state;
    /* nest 1 (the default): the row innermost, under c, t and u */
    char *out = acc_row_ok(GATHER, EVERY);
    assert_true(outside_row(out, "for (int64_t c = 0"));
    assert_true(outside_row(out, "for (int64_t t = 0"));
    assert_true(outside_row(out, "for (int64_t u = 0"));
    assert_contains(out, "acc_row[i - i_blk] += x[c * L + (i + t + u) % L]");
    free(out);
    /* nest 0: inside c only, the taps under the row */
    const long nest0[3] = {-1, 256, 0};
    out = apply_ok("acc_row", nest0, 3, GATHER, "k");
    assert_exact(GATHER, out);
    assert_true(outside_row(out, "for (int64_t c = 0"));
    assert_false(outside_row(out, "for (int64_t t = 0"));
    free(out);
    /* a tap loop whose bound changes along the row stays under it, and so
     * does everything below it */
    char *varying = with(GATHER, "t < S;", "t < i % 3;");
    out = acc_row_ok(varying, EVERY);
    assert_true(outside_row(out, "for (int64_t c = 0"));
    assert_false(outside_row(out, "for (int64_t t = 0"));
    assert_false(outside_row(out, "for (int64_t u = 0"));
    free(out);
    free(varying);
    /* ... and one whose bound names what the body declares before the sum */
    char *decl = with(GATHER, "            float acc = 0.5f;\n",
                      "            const int64_t lim = i % 2 + 1;\n            float acc = 0.5f;\n");
    char *by_decl = with(decl, "u < 2;", "u < lim;");
    assert_row_between_t_and_u(by_decl);
    free(by_decl);
    free(decl);
    /* a loop that can leave early keeps its break inside the row: under it */
    char *brk = with(GATHER, "                    for (int64_t u = 0; u < 2; u++)\n"
                             "                        acc += x[c * L + (i + t + u) % L] * "
                             "w[(c * 4 + j) * 3 + t];\n",
                     "                    for (int64_t u = 0; u < 2; u++) {\n"
                     "                        if (t + u > 2) break;\n"
                     "                        acc += x[c * L + (i + t + u) % L] * "
                     "w[(c * 4 + j) * 3 + t];\n"
                     "                    }\n");
    assert_true(strcmp(brk, GATHER) != 0);
    assert_row_between_t_and_u(brk);
    free(brk);
    /* a nest that is not perfect: the row goes under the last perfect level */
    char *imperfect = with(GATHER, "                for (int64_t t = 0; t < S; t++)\n",
                           "                for (int64_t t = 0; t < S; t++) {\n"
                           "                    const float wt = w[(c * 4 + j) * 3 + t];\n");
    char *imperfect2 = with(imperfect, "w[(c * 4 + j) * 3 + t];\n            y[",
                            "wt;\n                }\n            y[");
    assert_row_between_t_and_u(imperfect2);
    free(imperfect2);
    free(imperfect);
    /* a nest it does not take */
    const long bad[3] = {-1, 256, 2};
    assert_declines("acc_row", bad, 3, GATHER, "k", "nest = 2 is out of range");
}

/* A strided 1-D transposed convolution written by its scatter definition:
 * permute with reduce 2 sums the input channels per element, then keeps
 * those sums in a row along the input positions. */
static const char SCATTER[] =
    "#include <stdint.h>\n"
    "void k(const float *x, const float *w, float *y, int64_t C, int64_t L, int64_t S)\n"
    "{\n"
    "    const int64_t OC = 4, K = 3, OL = (L - 1) * S + K;\n"
    "    for (int64_t c = 0; c < C; c++)\n"
    "        for (int64_t i = 0; i < L; i++)\n"
    "            for (int64_t j = 0; j < OC; j++)\n"
    "                for (int64_t t = 0; t < K; t++) {\n"
    "                    const int64_t o = i * S + t;\n"
    "                    if (o < 0 || o >= OL)\n"
    "                        continue;\n"
    "                    y[j * OL + o] += x[c * L + i] * w[(c * OC + j) * K + t];\n"
    "                }\n"
    "}\n";

static void test_acc_row__after_permute(void **state)
{
    (void)state;
    const long reduce2[5] = {-1, 1, 1, 0, 2};
    char *out = apply_ok("permute", reduce2, 5, SCATTER, "k");
    assert_contains(out, "kevo acc_row");
    /* the sums reassociate nothing, but the scatter's order of adding
     * channels into y changes: compared at rtol 1e-4 */
    assert_same_result(SCATTER, out, DRIVER, "k");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acc_row__strided_output),
        cmocka_unit_test(test_acc_row__declines),
        cmocka_unit_test(test_acc_row__after_permute),
        cmocka_unit_test(test_acc_row__nest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
