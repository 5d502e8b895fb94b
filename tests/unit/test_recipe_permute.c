/*
 * tests/unit/test_recipe_permute.c - the `permute` recipe
 * (src/recipe/recipe_permute.c): a nest whose only effect is one
 * accumulation `p[i] += e` is reordered so that the loop along the
 * accumulated element's contiguous index runs innermost, and the guards on
 * that loop become its bounds. Each rewrite is built with gcc and run at
 * extents that put every guard to work (outputs cropped by padding at both
 * ends, a stride larger than the kernel's reach, one input element, none),
 * and compared with the kernel as it was. Where reordering could change
 * what the nest computes it declines, naming why.
 */
#include "recipe_check.h"

/* the lane picked, the scatter's positions sunk, the loops selecting the
 * element outermost; the lane alone, the other loops in their order; both
 * without threads (test_permute__in_threads has them) */
static const long PICK[4] = {-1, 1, 1, 0};
static const long LANE_ONLY[4] = {-1, 0, 0, 0};

/* ConvTranspose1d by its scatter definition: stride 3, padding 2,
 * dilation 2, kernel 3 (constants, as the suite writes them). */
static const char CT1D[] =
    "#include <stdint.h>\n"
    "void ct(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t OC,\n"
    "        int64_t L)\n"
    "{\n"
    "    const int64_t KL = 3, SL = 3, PL = 2, DL = 2;\n"
    "    const int64_t OL = (L - 1) * SL - 2 * PL + DL * (KL - 1) + 1;\n"
    "    for (int64_t i = 0; i < N * OC * (OL > 0 ? OL : 0); i++)\n"
    "        y[i] = 0.0f;\n"
    "    for (int64_t n = 0; n < N; n++)\n"
    "        for (int64_t c = 0; c < C; c++) {\n"
    "            const float *xc = x + (n * C + c) * L;\n"
    "            for (int64_t il = 0; il < L; il++) {\n"
    "                const float xv = xc[il];\n"
    "                for (int64_t j = 0; j < OC; j++) {\n"
    "                    float *yo = y + (n * OC + j) * OL;\n"
    "                    for (int64_t kl = 0; kl < KL; kl++) {\n"
    "                        const int64_t ol = il * SL - PL + kl * DL;\n"
    "                        if (ol < 0 || ol >= OL)\n"
    "                            continue;\n"
    "                        yo[ol] += xv * w[(c * OC + j) * KL + kl];\n"
    "                    }\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "}\n";

/* Runs ct at several extents (N, C, OC, L) and prints y. */
static const char CT1D_DRIVER[] = DRIVER_HEAD
    "void ct(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t OC,\n"
    "        int64_t L);\n"
    "int main(void) { unsigned s = 11;\n"
    "  const int64_t ext[][4] = {{2, 3, 4, 17}, {1, 1, 1, 1}, {1, 2, 3, 2}, {3, 2, 5, 9},\n"
    "                            {1, 1, 2, 40}};\n"
    "  for (int e = 0; e < 5; e++) {\n"
    "    int64_t N = ext[e][0], C = ext[e][1], OC = ext[e][2], L = ext[e][3];\n"
    "    int64_t OL = (L - 1) * 3 - 4 + 4 + 1; if (OL < 0) OL = 0;\n"
    "    float *x = malloc((N*C*L+1)*4), *w = malloc((C*OC*3+1)*4), *y = malloc((N*OC*OL+1)*4);\n"
    "    for (int64_t i = 0; i < N*C*L; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < C*OC*3; i++) w[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < N*OC*OL; i++) y[i] = -7.0f;\n"
    "    ct(x, w, y, N, C, OC, L);\n"
    "    for (int64_t i = 0; i < N*OC*OL; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(w); free(y); }\n"
    "  return 0; }\n";

/* ConvTranspose2d, stride 1, no padding, kernel 3x5 as literal bounds, the
 * taps innermost: the scatter of one input pixel over the kernel window,
 * each output position declared from an input position and a tap. */
static const char CT2D[] =
    "#include <stdint.h>\n"
    "void ct(const float *x, const float *w, float *y, int64_t C, int64_t OC, int64_t H,\n"
    "        int64_t W)\n"
    "{\n"
    "    const int64_t OH = H + 2, OW = W + 4;\n"
    "    for (int64_t i = 0; i < OC * OH * OW; i++)\n"
    "        y[i] = 0.0f;\n"
    "    for (int64_t c = 0; c < C; c++)\n"
    "        for (int64_t ih = 0; ih < H; ih++)\n"
    "            for (int64_t iw = 0; iw < W; iw++)\n"
    "                for (int64_t oc = 0; oc < OC; oc++)\n"
    "                    for (int64_t kh = 0; kh < 3; kh++) {\n"
    "                        const int64_t oh = ih + kh;\n"
    "                        for (int64_t kw = 0; kw < 5; kw++) {\n"
    "                            const int64_t ow = iw + kw;\n"
    "                            y[(oc * OH + oh) * OW + ow] +=\n"
    "                                x[(c * H + ih) * W + iw] * w[((c * OC + oc) * 3 + kh) * 5 + "
    "kw];\n"
    "                        }\n"
    "                    }\n"
    "}\n";

static const char CT2D_DRIVER[] = DRIVER_HEAD
    "void ct(const float *x, const float *w, float *y, int64_t C, int64_t OC, int64_t H,\n"
    "        int64_t W);\n"
    "int main(void) { unsigned s = 5;\n"
    "  const int64_t ext[][4] = {{2, 3, 7, 13}, {1, 1, 1, 1}, {3, 2, 2, 0}, {1, 4, 5, 33}};\n"
    "  for (int e = 0; e < 4; e++) {\n"
    "    int64_t C = ext[e][0], OC = ext[e][1], H = ext[e][2], W = ext[e][3];\n"
    "    int64_t OH = H + 2, OW = W + 4;\n"
    "    float *x = malloc((C*H*W+1)*4), *w = malloc((C*OC*15+1)*4), *y = malloc((OC*OH*OW+1)*4);\n"
    "    for (int64_t i = 0; i < C*H*W; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < C*OC*15; i++) w[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < OC*OH*OW; i++) y[i] = -7.0f;\n"
    "    ct(x, w, y, C, OC, H, W);\n"
    "    for (int64_t i = 0; i < OC*OH*OW; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(w); free(y); }\n"
    "  return 0; }\n";

/* The position of needle in hay (asserted to be there). */
static size_t at(const char *hay, const char *needle)
{
    const char *p = strstr(hay, needle);
    if (!p)
        print_error("expected to find:\n%s\nin:\n%s\n", needle, hay);
    assert_non_null(p);
    return (size_t)(p - hay);
}

static void test_permute__strided_scatter_guards_become_bounds(void **state)
{
    (void)state;
    char *out = apply_ok("permute", PICK, 4, CT1D, "ct");
    assert_contains(out, "kevo permute: the loop at line 12 innermost, its guards as bounds");
    /* the input position runs innermost, below the tap, from bounds the
     * guard gave; the guard is gone */
    assert_true(at(out, "for (int64_t kl = 0; kl < KL; kl++)") <
                at(out, "for (int64_t il = il_lo; il < il_hi; il++)"));
    assert_lacks(out, "continue;");
    /* the output channels select the element: above the input channels,
     * which only add into it */
    assert_true(at(out, "for (int64_t j = 0; j < OC; j++)") <
                at(out, "for (int64_t c = 0; c < C; c++)"));
    assert_true(at(out, "for (int64_t c = 0; c < C; c++)") <
                at(out, "for (int64_t kl = 0; kl < KL; kl++)"));
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    /* the lane runs innermost already and no guard is left: nothing to do */
    assert_declines("permute", PICK, 4, out, "ct", "not this statement"); /* once is enough */
    /* every nest in threads: batch and output channels collapse, the input
     * channels (which would race) do not */
    kevo_recipe_step steps[] = {
        {"permute", {-1, 1, 1, 0}, 4}, {"omp_parallel", {3, 1}, 2}, {"flags", {6}, 1}};
    char *more = chain_ok(steps, 3, CT1D, "ct");
    assert_contains(more, "#pragma omp parallel for collapse(2)\n"
                          "        for (int64_t n = 0; n < N; n++) {\n"
                          "            for (int64_t j = 0; j < OC; j++) {");
    assert_same_result(CT1D, more, CT1D_DRIVER, "ct");
    free(more);
    free(out);
    /* a guard written `ol > OL - 1` and `0 > ol`, the padding a variable */
    char *src = with(CT1D, "if (ol < 0 || ol >= OL)", "if (0 > ol || ol > OL - 1)");
    out = apply_ok("permute", LANE_ONLY, 4, src, "ct");
    assert_lacks(out, "continue;");
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    free(out);
    free(src);
}

/* CT2D with the positions written into the index and the kernel width a
 * value the compiler cannot read as a small constant (caller frees). */
static char *inline_src_for_lane(void)
{
    char *a = with(CT2D, "y[(oc * OH + oh) * OW + ow]", "y[(oc * OH + ih + kh) * OW + iw + kw]");
    char *b = with(a, "    const int64_t OH = H + 2, OW = W + 4;\n",
                   "    const int64_t OH = H + 2, OW = W + 4, KW = 5 + 0 * H;\n");
    free(a);
    return b;
}

static void test_permute__scatter_runs_along_output_rows(void **state)
{
    (void)state;
    /* with scatter: both input positions go below the taps, iw last */
    char *out = apply_ok("permute", PICK, 4, CT2D, "ct");
    size_t kh = at(out, "for (int64_t kh = 0; kh < 3; kh++)");
    size_t kw = at(out, "for (int64_t kw = 0; kw < 5; kw++)");
    size_t ih = at(out, "for (int64_t ih = 0; ih < H; ih++)");
    size_t iw = at(out, "for (int64_t iw = 0; iw < W; iw++)");
    assert_true(kh < kw && kw < ih && ih < iw);
    assert_same_result(CT2D, out, CT2D_DRIVER, "ct");
    free(out);
    /* the lane alone: iw innermost, ih stays where it was; and so with the
     * positions written into the index (no declaration pairs ih with kh) */
    char *inline_src =
        with(CT2D, "y[(oc * OH + oh) * OW + ow]", "y[(oc * OH + ih + kh) * OW + iw + kw]");
    for (int v = 0; v < 2; v++) {
        out = apply_ok("permute", v ? PICK : LANE_ONLY, 4, v ? inline_src : CT2D, "ct");
        ih = at(out, "for (int64_t ih = 0; ih < H; ih++)");
        kw = at(out, "for (int64_t kw = 0; kw < 5; kw++)");
        iw = at(out, "for (int64_t iw = 0; iw < W; iw++)");
        assert_true(ih < kw && kw < iw);
        assert_same_result(CT2D, out, CT2D_DRIVER, "ct");
        free(out);
    }
    free(inline_src);
    /* the kernel width known only at run time: -1 takes the tap `kw`, the
     * last term, for the lane; -2 the outermost of the unscaled last terms,
     * the row `iw` */
    char *lane_src = inline_src_for_lane();
    char *run_time = with(lane_src, "kw < 5;", "kw < KW;");
    free(lane_src);
    const long outermost[4] = {-2, 1, 1, 0};
    for (int v = 0; v < 2; v++) {
        out = apply_ok("permute", v ? outermost : PICK, 4, run_time, "ct");
        iw = at(out, "for (int64_t iw = 0; iw < W; iw++)");
        kw = at(out, "for (int64_t kw = 0; kw < KW; kw++)");
        assert_true(v ? kw < iw : iw < kw);
        assert_same_result(CT2D, out, CT2D_DRIVER, "ct");
        free(out);
    }
    free(run_time);
    /* an explicit lane: the loop numbered 4 (oc, counting the zeroing loop) */
    const long oc_lane[4] = {4, 0, 0, 0};
    out = apply_ok("permute", oc_lane, 4, CT2D, "ct");
    kw = at(out, "for (int64_t kw = 0; kw < 5; kw++)");
    size_t oc = at(out, "for (int64_t oc = 0; oc < OC; oc++)");
    assert_true(kw < oc);
    assert_same_result(CT2D, out, CT2D_DRIVER, "ct");
    free(out);
}

/* CT1D with the input channels innermost (the order `permute:2,1` gives the
 * suite's grouped references), each output row through a pointer declared
 * from the group `c / CG`: a guard that becomes bounds pushes the division
 * below it, and the pointer that reads it must follow (the recipe sweep
 * found `g` used above its declaration). */
static const char CT1D_GROUPED[] =
    "#include <stdint.h>\n"
    "void ct(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t OC,\n"
    "        int64_t L)\n"
    "{\n"
    "    const int64_t KL = 3, SL = 3, PL = 2, DL = 2, G = 1, CG = C / G, OCG = OC / G;\n"
    "    const int64_t OL = (L - 1) * SL - 2 * PL + DL * (KL - 1) + 1;\n"
    "    for (int64_t i = 0; i < N * OC * (OL > 0 ? OL : 0); i++)\n"
    "        y[i] = 0.0f;\n"
    "    for (int64_t n = 0; n < N; n++)\n"
    "        for (int64_t il = 0; il < L; il++)\n"
    "            for (int64_t j = 0; j < OCG; j++)\n"
    "                for (int64_t kl = 0; kl < KL; kl++) {\n"
    "                    const int64_t ol = il * SL - PL + kl * DL;\n"
    "                    if (ol < 0 || ol >= OL)\n"
    "                        continue;\n"
    "                    for (int64_t c = 0; c < C; c++) {\n"
    "                        const int64_t g = c / CG;\n"
    "                        float *yo = y + (n * OC + g * OCG + j) * OL;\n"
    "                        yo[ol] += x[(n * C + c) * L + il] * w[(c * OCG + j) * KL + kl];\n"
    "                    }\n"
    "                }\n"
    "}\n";

static void test_permute__declarations_follow_what_they_read(void **state)
{
    (void)state;
    char *out = apply_ok("permute", PICK, 4, CT1D_GROUPED, "ct");
    assert_true(at(out, "const int64_t g = c / CG;") <
                at(out, "float *yo = y + (n * OC + g * OCG + j) * OL;"));
    assert_true(at(out, "for (int64_t il = il_lo; il < il_hi; il++)") <
                at(out, "const int64_t g = c / CG;"));
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    free(out);
}

/* By default the permuted nest runs in threads in the same step: the batch
 * and output-channel loops collapsed (and the zero fill in threads); where
 * omp_parallel declines on the nest, the permuted kernel stands. */
static void test_permute__in_threads(void **state)
{
    (void)state;
    char *out = apply_ok("permute", NULL, 0, CT1D, "ct");
    assert_true(strncmp(out, "// kevo: cflags -fopenmp\n", 25) == 0);
    assert_contains(out, "#pragma omp parallel for collapse(2)\n"
                         "        for (int64_t n = 0; n < N; n++) {\n"
                         "            for (int64_t j = 0; j < OC; j++) {");
    /* every nest: the zero fill too */
    assert_true(at(out, "#pragma omp parallel for\n    for (int64_t i = 0;") <
                at(out, "#pragma omp parallel for collapse(2)"));
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    free(out);
    /* every (n, j) adds into one row: the permuted nest cannot run in
     * threads (its loops would race), only the zero fill does */
    char *src = with(CT1D, "float *yo = y + (n * OC + j) * OL;", "float *yo = y;");
    out = apply_ok("permute", NULL, 0, src, "ct");
    assert_contains(out, "kevo permute");
    assert_true(at(out, "#pragma omp parallel for\n") < at(out, "y[i] = 0.0f;"));
    assert_lacks(out, "collapse");
    assert_null(strstr(strstr(out, "#pragma omp") + 1, "#pragma omp")); /* one, the fill's */
    assert_same_result(src, out, CT1D_DRIVER, "ct");
    free(out);
    free(src);
}

static void test_permute__declines(void **state)
{
    (void)state;
    /* the nest reads what it accumulates into: reordering changes what it reads */
    char *src = with(CT2D, "x[(c * H + ih) * W + iw] *", "y[0] * x[(c * H + ih) * W + iw] *");
    assert_declines("permute", PICK, 4, src, "ct", "which the accumulation writes");
    free(src);
    /* a second write in the nest: a statement, or inside the accumulation */
    src = with(CT1D, "const float xv = xc[il];", "const float xv = xc[il];\n y[0] = 1.0f;");
    assert_declines("permute", PICK, 4, src, "ct", "not this statement");
    free(src);
    src = with(CT1D, "yo[ol] += xv", "yo[ol] += (y[0] = xv)");
    assert_declines("permute", PICK, 4, src, "ct", "only write is one accumulation");
    free(src);
    /* an assignment, not an accumulation: the order decides which value stays */
    src = with(CT1D, "yo[ol] += ", "yo[ol] = ");
    assert_declines("permute", PICK, 4, src, "ct", "accumulation");
    free(src);
    /* a call kevo cannot prove pure */
    src = with(CT1D, "yo[ol] += xv", "yo[ol] += (float)rand() * xv");
    char *inc = with(src, "#include <stdint.h>\n", "#include <stdint.h>\n#include <stdlib.h>\n");
    assert_declines("permute", PICK, 4, inc, "ct", "calls rand");
    free(inc);
    free(src);
    /* a guard that is not `if (cond) continue;` */
    src = with(CT1D, "continue;", "break;");
    assert_declines("permute", PICK, 4, src, "ct", "permute");
    free(src);
    /* bounds that depend on an outer loop: not rectangular */
    src = with(CT2D, "kw < 5", "kw < 5 + ih");
    assert_declines("permute", PICK, 4, src, "ct", "rectangular");
    free(src);
    /* a loop index out of range */
    const long far[4] = {99, 0, 0, 0};
    assert_declines("permute", far, 4, CT2D, "ct", "out of range");
}

/* With `reduce`: ConvTranspose2d in two groups, stride 1, padding 1,
 * kernel 3, written as the suite writes them (the group a division of the
 * input channel); the output crops the scatter at both ends. */
static const char CT2D_GROUPS[] =
    "#include <stdint.h>\n"
    "void ct(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t OC,\n"
    "        int64_t H, int64_t W)\n"
    "{\n"
    "    const int64_t KH = 3, KW = 3, SH = 1, SW = 1, PH = 1, PW = 1, G = 2;\n"
    "    const int64_t CG = C / G, OCG = OC / G;\n"
    "    const int64_t OH = (H - 1) * SH - 2 * PH + KH, OW = (W - 1) * SW - 2 * PW + KW;\n"
    "    for (int64_t i = 0; i < N * OC * OH * OW; i++)\n"
    "        y[i] = 0.0f;\n"
    "    for (int64_t n = 0; n < N; n++)\n"
    "        for (int64_t c = 0; c < C; c++) {\n"
    "            const int64_t g = c / CG;\n"
    "            const float *xc = x + (n * C + c) * H * W;\n"
    "            for (int64_t ih = 0; ih < H; ih++)\n"
    "                for (int64_t iw = 0; iw < W; iw++) {\n"
    "                    const float xv = xc[ih * W + iw];\n"
    "                    for (int64_t j = 0; j < OCG; j++) {\n"
    "                        float *yo = y + (n * OC + g * OCG + j) * OH * OW;\n"
    "                        for (int64_t kh = 0; kh < KH; kh++) {\n"
    "                            const int64_t oh = ih * SH - PH + kh;\n"
    "                            if (oh < 0 || oh >= OH)\n"
    "                                continue;\n"
    "                            for (int64_t kw = 0; kw < KW; kw++) {\n"
    "                                const int64_t ow = iw * SW - PW + kw;\n"
    "                                if (ow < 0 || ow >= OW)\n"
    "                                    continue;\n"
    "                                yo[oh * OW + ow] += xv * w[((c * OCG + j) * KH + kh) * KW + "
    "kw];\n"
    "                            }\n"
    "                        }\n"
    "                    }\n"
    "                }\n"
    "        }\n"
    "}\n";

/* Runs ct at several extents (N, C, OC, H, W; the channels in two groups)
 * and prints y. The strides are read from the source's SH and SW. */
static const char CT2D_GROUPS_DRIVER[] = DRIVER_HEAD
    "void ct(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t OC,\n"
    "        int64_t H, int64_t W);\n"
    "int main(int argc, char **argv) { unsigned s = 3; int64_t S = argc > 1 ? atoi(argv[1]) : 1;\n"
    "  const int64_t ext[][5] = {{1, 2, 2, 1, 1}, {2, 4, 6, 5, 9}, {1, 2, 4, 3, 17},\n"
    "                            {1, 6, 2, 4, 2}, {1, 2, 2, 2, 40}};\n"
    "  for (int e = 0; e < 5; e++) {\n"
    "    int64_t N = ext[e][0], C = ext[e][1], OC = ext[e][2], H = ext[e][3], W = ext[e][4];\n"
    "    int64_t OH = (H - 1) * S - 2 + 3, OW = (W - 1) * S - 2 + 3;\n"
    "    float *x = malloc((N*C*H*W+1)*4), *w = malloc((C*(OC/2)*9+1)*4);\n"
    "    float *y = malloc((N*OC*OH*OW+1)*4);\n"
    "    for (int64_t i = 0; i < N*C*H*W; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < C*(OC/2)*9; i++) w[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < N*OC*OH*OW; i++) y[i] = -7.0f;\n"
    "    ct(x, w, y, N, C, OC, H, W);\n"
    "    for (int64_t i = 0; i < N*OC*OH*OW; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(w); free(y); }\n"
    "  return 0; }\n";

/* reduce: the input channels, which only add into an element, run
 * innermost into a scalar, cut in blocks of one group (their group selects
 * the element); the guards on the positions become bounds; with a width,
 * register_block follows in the same step. */
static void test_permute__reduce_sums_channels_in_registers(void **state)
{
    (void)state;
    const long reduce[5] = {-1, 1, 1, 0, 1};
    char *out = apply_ok("permute", reduce, 5, CT2D_GROUPS, "ct");
    assert_contains(out, "the loops that only add into it innermost");
    assert_lacks(out, "continue;");
    /* blocks of one group where the selecting loops run, g from the block */
    assert_contains(out, "for (int64_t c_blk = 0; c_blk < C; c_blk += (CG > 0 ? CG : 1)) {");
    assert_contains(out, "const int64_t g = c_blk / CG;");
    /* the channels of the block innermost, under the lane, into a scalar
     * added once */
    assert_true(at(out, "for (int64_t iw = ") < at(out, "float acc = 0.0f;"));
    assert_true(at(out, "float acc = 0.0f;") < at(out, "for (int64_t c = c_blk; c < "));
    assert_contains(out, "acc += xv * w[((c * OCG + j) * KH + kh) * KW + kw];");
    /* the output column written into the address as lane + offset */
    assert_contains(out, "yo[oh * OW + iw + (0 - (PW) + (kw))] += acc;");
    assert_same_result(CT2D_GROUPS, out, CT2D_GROUPS_DRIVER, "ct");
    free(out);
    /* with a width: register_block in the same step (vector accumulators
     * down the channels), then threads */
    const long blocked[5] = {-1, 1, 1, 1, 8};
    out = apply_ok("permute", blocked, 5, CT2D_GROUPS, "ct");
    assert_contains(out, "vector_size(32)");
    assert_contains(out, "#pragma omp parallel for collapse(2)");
    assert_same_result(CT2D_GROUPS, out, CT2D_GROUPS_DRIVER, "ct");
    free(out);
    /* 1-D: the loop above the lane would be the kernel tap, too short for
     * rows; the output channels go there (the rows share each input
     * vector), below the tap */
    out = apply_ok("permute", reduce, 5, CT1D, "ct");
    assert_true(at(out, "for (int64_t kl = 0; kl < KL; kl++)") <
                at(out, "for (int64_t j = 0; j < OC; j++)"));
    assert_true(at(out, "for (int64_t j = 0; j < OC; j++)") < at(out, "for (int64_t il = "));
    assert_true(at(out, "float acc = 0.0f;") < at(out, "for (int64_t c = 0; c < C; c++)"));
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    free(out);
    const long blocked16[5] = {-1, 1, 1, 1, 16};
    out = apply_ok("permute", blocked16, 5, CT1D, "ct");
    assert_same_result(CT1D, out, CT1D_DRIVER, "ct");
    free(out);
    /* strided: the output column is not contiguous in the lane; it stays a
     * declaration, and the sums stay right */
    char *src = with(CT2D_GROUPS, "SH = 1, SW = 1", "SH = 2, SW = 2");
    out = apply_ok("permute", reduce, 5, src, "ct");
    assert_contains(out, "const int64_t ow = iw * SW - PW + kw;");
    char *drv = with(CT2D_GROUPS_DRIVER, "argc > 1 ? atoi(argv[1]) : 1", "2");
    assert_same_result(src, out, drv, "ct");
    free(drv);
    free(out);
    free(src);
}

static void test_permute__reduce_declines(void **state)
{
    (void)state;
    const long reduce[5] = {-1, 1, 1, 0, 1};
    /* every loop selects the element or runs along it: nothing to sum */
    static const char ELEM[] = "#include <stdint.h>\n"
                               "void ct(const float *x, float *y, int64_t N)\n"
                               "{\n"
                               "    for (int64_t i = 0; i < N; i++)\n"
                               "        for (int64_t k = 0; k < 3; k++)\n"
                               "            y[i + k] += x[i] * 0.5f;\n"
                               "}\n";
    assert_declines("permute", reduce, 5, ELEM, "ct", "no loop only adds into it");
    /* the group from (c + 1) / CG: not one value over a block of CG */
    char *src = with(CT2D_GROUPS, "const int64_t g = c / CG;", "const int64_t g = (c + 1) / CG;");
    assert_declines("permute", reduce, 5, src, "ct", "otherwise than as `c / D`");
    free(src);
    /* a scaled channel divided: x * c / CG is (x * c) / CG */
    src = with(CT2D_GROUPS, "const int64_t g = c / CG;", "const int64_t g = 2 * c / CG;");
    assert_declines("permute", reduce, 5, src, "ct", "otherwise than as `c / D`");
    free(src);
    /* the divisor changes in the nest */
    src = with(CT2D_GROUPS, "const int64_t g = c / CG;", "const int64_t g = c / (n + 1);");
    assert_declines("permute", reduce, 5, src, "ct", "reduce");
    free(src);
    /* the channel loop does not start at 0: blocks would not start on a
     * multiple of CG */
    src = with(CT2D_GROUPS, "for (int64_t c = 0; c < C; c++)", "for (int64_t c = 1; c < C; c++)");
    assert_declines("permute", reduce, 5, src, "ct", "does not run from 0");
    free(src);
    /* not a float accumulation */
    src = with(CT1D, "float *y", "double *y");
    char *dbl = with(src, "float *yo", "double *yo");
    assert_declines("permute", reduce, 5, dbl, "ct", "not a float");
    free(dbl);
    free(src);
    /* a value reduce does not take */
    const long odd[5] = {-1, 1, 1, 0, 3};
    assert_declines("permute", odd, 5, CT1D, "ct", "it takes 0, 1, 2, 4, 8 or 16");
}


/* MaxPool2d as the suite writes it: the window's maximum kept in a scalar,
 * a bounds test on every tap, the stride and padding given at run time. */
static const char POOL2D[] =
    "#include <stdint.h>\n"
    "#include <math.h>\n"
    "void pool(const float *x, float *y, int64_t NC, int64_t H, int64_t W, int64_t K,\n"
    "          int64_t S, int64_t P)\n"
    "{\n"
    "    int64_t OH = (H + 2 * P - K) / S + 1;\n"
    "    int64_t OW = (W + 2 * P - K) / S + 1;\n"
    "    for (int64_t nc = 0; nc < NC; nc++) {\n"
    "        const float *xp = x + nc * H * W;\n"
    "        float *yp = y + nc * OH * OW;\n"
    "        for (int64_t oh = 0; oh < OH; oh++)\n"
    "            for (int64_t ow = 0; ow < OW; ow++) {\n"
    "                float m = -INFINITY;\n"
    "                for (int64_t kh = 0; kh < K; kh++) {\n"
    "                    int64_t ih = oh * S - P + kh;\n"
    "                    if (ih < 0 || ih >= H)\n"
    "                        continue;\n"
    "                    for (int64_t kw = 0; kw < K; kw++) {\n"
    "                        int64_t iw = ow * S - P + kw;\n"
    "                        if (iw < 0 || iw >= W)\n"
    "                            continue;\n"
    "                        float v = xp[ih * W + iw];\n"
    "                        if (v > m)\n"
    "                            m = v;\n"
    "                    }\n"
    "                }\n"
    "                yp[oh * OW + ow] = m;\n"
    "            }\n"
    "    }\n"
    "}\n";

/* Runs pool at extents (NC, H, W, K, S, P) that crop both ends of a row,
 * strides 1 (the constant copy), 2 and 3, a window as wide as the row. */
static const char POOL2D_DRIVER[] = DRIVER_HEAD
    "void pool(const float *x, float *y, int64_t NC, int64_t H, int64_t W, int64_t K,\n"
    "          int64_t S, int64_t P);\n"
    "int main(void) { unsigned s = 3;\n"
    "  const int64_t ext[][6] = {{2, 7, 9, 3, 1, 1}, {1, 5, 13, 4, 2, 2}, {3, 6, 11, 3, 3, 1},\n"
    "                            {1, 1, 1, 1, 1, 0}, {2, 4, 5, 5, 1, 2}, {1, 9, 17, 2, 2, 0}};\n"
    "  for (int e = 0; e < 6; e++) {\n"
    "    int64_t NC = ext[e][0], H = ext[e][1], W = ext[e][2], K = ext[e][3], S = ext[e][4],\n"
    "            P = ext[e][5];\n"
    "    int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;\n"
    "    float *x = malloc((NC*H*W+1)*4), *y = malloc((NC*OH*OW+1)*4);\n"
    "    for (int64_t i = 0; i < NC*H*W; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < NC*OH*OW; i++) y[i] = 7.0f;\n"
    "    pool(x, y, NC, H, W, K, S, P);\n"
    "    for (int64_t i = 0; i < NC*OH*OW; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(y); }\n"
    "  return 0; }\n";

/* AvgPool1d with the guard folded into the update (`if (in range) s +=
 * ...`) and the sum finished by a division. */
static const char POOL1D[] =
    "#include <stdint.h>\n"
    "void pool(const float *x, float *y, int64_t NC, int64_t L, int64_t K, int64_t S,\n"
    "          int64_t P)\n"
    "{\n"
    "    int64_t LO = (L + 2 * P - K) / S + 1;\n"
    "    for (int64_t nc = 0; nc < NC; nc++) {\n"
    "        const float *xr = x + nc * L;\n"
    "        float *yr = y + nc * LO;\n"
    "        for (int64_t o = 0; o < LO; o++) {\n"
    "            float s = 0.0f;\n"
    "            for (int64_t k = 0; k < K; k++) {\n"
    "                int64_t i = o * S - P + k;\n"
    "                if (i >= 0 && i < L)\n"
    "                    s += xr[i];\n"
    "            }\n"
    "            yr[o] = s / (float)K;\n"
    "        }\n"
    "    }\n"
    "}\n";

static const char POOL1D_DRIVER[] = DRIVER_HEAD
    "void pool(const float *x, float *y, int64_t NC, int64_t L, int64_t K, int64_t S,\n"
    "          int64_t P);\n"
    "int main(void) { unsigned s = 9;\n"
    "  const int64_t ext[][5] = {{2, 14, 8, 1, 4}, {1, 37, 3, 2, 1}, {3, 1, 1, 1, 0},\n"
    "                            {1, 23, 5, 3, 2}};\n"
    "  for (int e = 0; e < 4; e++) {\n"
    "    int64_t NC = ext[e][0], L = ext[e][1], K = ext[e][2], S = ext[e][3], P = ext[e][4];\n"
    "    int64_t LO = (L + 2 * P - K) / S + 1;\n"
    "    float *x = malloc((NC*L+1)*4), *y = malloc((NC*LO+1)*4);\n"
    "    for (int64_t i = 0; i < NC*L; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < NC*LO; i++) y[i] = 7.0f;\n"
    "    pool(x, y, NC, L, K, S, P);\n"
    "    for (int64_t i = 0; i < NC*LO; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(y); }\n"
    "  return 0; }\n";

static void test_permute__pool_window_kept_in_memory(void **state)
{
    (void)state;
    char *out = apply_ok("permute", PICK, 4, POOL2D, "pool");
    /* set, accumulated (the window's taps outside the row, the running
     * maximum in the element), no third loop: the store was the scalar */
    assert_contains(out, "'m' kept in yp[oh * OW + ow] (set, accumulated, finished)");
    assert_contains(out, "yp[oh * OW + ow] = m;");
    assert_contains(out, "yp[oh * OW + ow] = v > yp[oh * OW + ow] ? v : yp[oh * OW + ow];");
    assert_true(at(out, "for (int64_t kw = 0; kw < K; kw++)") <
                at(out, "for (int64_t ow = ow_lo; ow < ow_hi; ow++)"));
    /* the stride divides the bounds: run where positive, 1 as a constant,
     * the nest as written otherwise */
    assert_contains(out, "if (S > 0) {");
    assert_contains(out, "if (S == 1) {");
    assert_contains(out, "const __typeof__(S) S = 1;");
    assert_contains(out, "/* kevo permute: as written */");
    assert_same_result(POOL2D, out, POOL2D_DRIVER, "pool");
    /* once: the permuted copies sit in blocks, the one as written is kept */
    assert_declines("permute", PICK, 4, out, "pool", "permute");
    free(out);
    /* in threads, the same values */
    static const long THREADS[4] = {-1, 1, 1, 1};
    out = apply_ok("permute", THREADS, 4, POOL2D, "pool");
    assert_contains(out, "#pragma omp parallel for");
    assert_same_result(POOL2D, out, POOL2D_DRIVER, "pool");
    free(out);

    /* a sum under a guard, finished by a division: the guard becomes
     * `continue` and then bounds; a third loop divides */
    out = apply_ok("permute", PICK, 4, POOL1D, "pool");
    assert_contains(out, "yr[o] = yr[o] / (float)K;");
    assert_contains(out, "for (int64_t o = o_lo; o < o_hi; o++)");
    assert_same_result(POOL1D, out, POOL1D_DRIVER, "pool");
    free(out);

    /* the guarded sum as the whole unbraced body of its loop: braced
     * once it is a guard and an update */
    static const char BARE[] =
        "#include <stdint.h>\n"
        "void pool(const float *x, float *y, int64_t NC, int64_t L, int64_t K, int64_t S,\n"
        "          int64_t P)\n"
        "{\n"
        "    int64_t LO = (L + 2 * P - K) / S + 1;\n"
        "    for (int64_t nc = 0; nc < NC; nc++)\n"
        "        for (int64_t o = 0; o < LO; o++) {\n"
        "            float s = 0.0f;\n"
        "            for (int64_t k = 0; k < K; k++)\n"
        "                if (o * S - P + k >= 0 && o * S - P + k < L)\n"
        "                    s += x[nc * L + o * S - P + k];\n"
        "            y[nc * LO + o] = s;\n"
        "        }\n"
        "}\n";
    out = apply_ok("permute", PICK, 4, BARE, "pool");
    assert_contains(out, "for (int64_t o = o_lo; o < o_hi; o++)");
    assert_same_result(BARE, out, POOL1D_DRIVER, "pool");
    free(out);

    /* a minimum through fminf, the guard as `continue` */
    char *min = kevo_strdup(POOL2D);
    char *p = strstr(min, "float m = -INFINITY;");
    memcpy(p, "float m =  INFINITY;", 20);
    p = strstr(min, "if (v > m)\n                            m = v;");
    const char *fm = "m = fminf(m, v);";
    memcpy(p, fm, strlen(fm));
    memset(p + strlen(fm), ' ', strlen("if (v > m)\n                            m = v;") - strlen(fm));
    out = apply_ok("permute", PICK, 4, min, "pool");
    assert_contains(out, "yp[oh * OW + ow] = fminf(yp[oh * OW + ow], v);");
    assert_same_result(min, out, POOL2D_DRIVER, "pool");
    free(out);
    free(min);

    /* a maximum as a conditional expression */
    char *tern = kevo_strdup(POOL2D);
    p = strstr(tern, "if (v > m)\n                            m = v;");
    const char *te = "m = v > m ? v : m;";
    memcpy(p, te, strlen(te));
    memset(p + strlen(te), ' ', strlen("if (v > m)\n                            m = v;") - strlen(te));
    out = apply_ok("permute", PICK, 4, tern, "pool");
    assert_contains(out, "yp[oh * OW + ow] = v > yp[oh * OW + ow] ? v : yp[oh * OW + ow];");
    assert_same_result(tern, out, POOL2D_DRIVER, "pool");
    free(out);
    free(tern);
}

static void test_permute__pool_declines(void **state)
{
    (void)state;
    struct {
        const char *from, *to, *why;
    } cases[] = {
        /* every iteration stores the same element: kept in memory, the
         * sums of all of them would add up */
        {"yr[o] = s / (float)K;", "yr[0] = s / (float)K;", "as a term of its own"},
        /* the scalar set, not accumulated: under its guard, and alone */
        {"s += xr[i];", "s = xr[i];", "keeps no maximum or minimum"},
        {"if (i >= 0 && i < L)\n                    s += xr[i];",
         "if (i < 0 || i >= L) continue; s = xr[i];", "set, not accumulated"},
        /* the window reads the output */
        {"s += xr[i];", "s += yr[i];", "which the store writes"},
        /* the scalar read outside its updates */
        {"s += xr[i];", "s += xr[i] * s;", "reads it"},
        /* a double: kept in a float element it would round otherwise */
        {"float s = 0.0f;", "double s = 0.0;", "not a float"},
        /* a directive in the window may name the scalar */
        {"            for (int64_t k = 0; k < K; k++) {",
         "#pragma omp simd reduction(+:s)\n            for (int64_t k = 0; k < K; k++) {",
         "a directive in the loop"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *src = kevo_strdup(POOL1D);
        char *p = strstr(src, cases[c].from);
        assert_non_null(p);
        kevo_buf b = {0};
        kevo_buf_printf(&b, "%.*s%s%s", (int)(p - src), src, cases[c].to,
                        p + strlen(cases[c].from));
        assert_declines("permute", PICK, 4, kevo_buf_cstr(&b), "pool", cases[c].why);
        kevo_buf_free(&b);
        free(src);
    }
    /* the loop collapsed with the one around it: split, the nest would no
     * longer collapse */
    static const char COLLAPSED[] =
        "#include <stdint.h>\n"
        "void pool(const float *x, float *y, int64_t NC, int64_t L, int64_t K, int64_t S,\n"
        "          int64_t P)\n"
        "{\n"
        "    int64_t LO = (L + 2 * P - K) / S + 1;\n"
        "#pragma omp parallel for collapse(2)\n"
        "    for (int64_t nc = 0; nc < NC; nc++)\n"
        "        for (int64_t o = 0; o < LO; o++) {\n"
        "            float s = 0.0f;\n"
        "            for (int64_t k = 0; k < K; k++) {\n"
        "                int64_t i = o * S - P + k;\n"
        "                if (i < 0 || i >= L)\n"
        "                    continue;\n"
        "                s += x[nc * L + i];\n"
        "            }\n"
        "            y[nc * LO + o] = s;\n"
        "        }\n"
        "}\n";
    assert_declines("permute", PICK, 4, COLLAPSED, "pool", "is collapsed into the loop at line 7");
    /* no guard on the row: the split would only add passes */
    static const char NO_GUARD[] =
        "#include <stdint.h>\n"
        "void pool(const float *x, float *y, int64_t NC, int64_t K)\n"
        "{\n"
        "    for (int64_t o = 0; o < NC; o++) {\n"
        "        float s = 0.0f;\n"
        "        for (int64_t k = 0; k < K; k++)\n"
        "            s += x[o * K + k];\n"
        "        y[o] = s;\n"
        "    }\n"
        "}\n";
    assert_declines("permute", PICK, 4, NO_GUARD, "pool", "no guard in the loop at line 4 tests 'o'");
    /* a maximum cannot be summed in registers */
    static const long REDUCE[5] = {-1, 1, 1, 0, 1};
    assert_declines("permute", REDUCE, 5, POOL2D, "pool", "permute");
}

/* A 3x3 convolution with zero padding 1 written as a gather: the sum kept
 * in a scalar, the two positions declared in one statement, one guard on
 * both. */
static const char CONV_PAD[] =
    "#include <stdint.h>\n"
    "void conv(const float *x, const float *w, float *y, int64_t CI, int64_t CO, int64_t H,\n"
    "          int64_t W)\n"
    "{\n"
    "    for (int64_t co = 0; co < CO; co++)\n"
    "        for (int64_t oh = 0; oh < H; oh++)\n"
    "            for (int64_t ow = 0; ow < W; ow++) {\n"
    "                float acc = 0.5f;\n"
    "                for (int64_t ci = 0; ci < CI; ci++)\n"
    "                    for (int64_t kh = 0; kh < 3; kh++)\n"
    "                        for (int64_t kw = 0; kw < 3; kw++) {\n"
    "                            int64_t ih = oh + kh - 1, iw = ow + kw - 1;\n"
    "                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)\n"
    "                                continue;\n"
    "                            acc += x[(ci * H + ih) * W + iw] * w[((co * CI + ci) * 3 + kh) * 3 + kw];\n"
    "                        }\n"
    "                y[(co * H + oh) * W + ow] = acc > 0.0f ? acc : 0.0f;\n"
    "            }\n"
    "}\n";

static const char CONV_PAD_DRIVER[] = DRIVER_HEAD
    "void conv(const float *x, const float *w, float *y, int64_t CI, int64_t CO, int64_t H,\n"
    "          int64_t W);\n"
    "int main(void) { unsigned s = 21;\n"
    "  const int64_t ext[][4] = {{2, 3, 5, 7}, {1, 1, 1, 1}, {3, 2, 2, 19}, {1, 2, 6, 2}};\n"
    "  for (int e = 0; e < 4; e++) {\n"
    "    int64_t CI = ext[e][0], CO = ext[e][1], H = ext[e][2], W = ext[e][3];\n"
    "    float *x = malloc((CI*H*W+1)*4), *w = malloc((CO*CI*9+1)*4), *y = malloc((CO*H*W+1)*4);\n"
    "    for (int64_t i = 0; i < CI*H*W; i++) x[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < CO*CI*9; i++) w[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < CO*H*W; i++) y[i] = 7.0f;\n"
    "    conv(x, w, y, CI, CO, H, W);\n"
    "    for (int64_t i = 0; i < CO*H*W; i++) printf(\"%.9g\\n\", y[i]);\n"
    "    free(x); free(w); free(y); }\n"
    "  return 0; }\n";

static void test_permute__padded_conv_kept_in_memory(void **state)
{
    (void)state;
    char *out = apply_ok("permute", PICK, 4, CONV_PAD, "conv");
    /* the two positions declared apart, the guard split: the row's part
     * became bounds, the column's stays by the tap it depends on */
    assert_contains(out, "int64_t ih = oh + kh - 1;");
    assert_contains(out, "int64_t iw = ow + kw - 1;");
    assert_contains(out, "if (ih < 0) continue;");
    assert_lacks(out, "if (iw < 0) continue;");
    assert_contains(out, "for (int64_t ow = ow_lo; ow < ow_hi; ow++)");
    /* finished by the ReLU on the element */
    assert_contains(out,
                    "y[(co * H + oh) * W + ow] = y[(co * H + oh) * W + ow] > 0.0f ? "
                    "y[(co * H + oh) * W + ow] : 0.0f;");
    assert_same_result(CONV_PAD, out, CONV_PAD_DRIVER, "conv");
    free(out);

    /* a first loop with a scalar but no guard (its split would not pay)
     * does not hide the padded one after it */
    char *two = kevo_strdup(CONV_PAD);
    const char *first =
        "    for (int64_t i = 0; i < CO; i++) {\n"
        "        float t = 0.0f;\n"
        "        for (int64_t k = 0; k < 3; k++)\n"
        "            t += w[i * 3 + k];\n"
        "        y[i] = t;\n"
        "    }\n";
    char *body = strstr(two, "{\n") + 2;
    kevo_buf b = {0};
    kevo_buf_printf(&b, "%.*s%s%s", (int)(body - two), two, first, body);
    out = apply_ok("permute", PICK, 4, kevo_buf_cstr(&b), "conv");
    assert_contains(out, "'acc' kept in y[(co * H + oh) * W + ow]");
    assert_lacks(out, "'t' kept in");
    assert_same_result(kevo_buf_cstr(&b), out, CONV_PAD_DRIVER, "conv");
    free(out);
    kevo_buf_free(&b);
    free(two);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permute__strided_scatter_guards_become_bounds),
        cmocka_unit_test(test_permute__scatter_runs_along_output_rows),
        cmocka_unit_test(test_permute__declarations_follow_what_they_read),
        cmocka_unit_test(test_permute__in_threads),
        cmocka_unit_test(test_permute__declines),
        cmocka_unit_test(test_permute__reduce_sums_channels_in_registers),
        cmocka_unit_test(test_permute__reduce_declines),
        cmocka_unit_test(test_permute__pool_window_kept_in_memory),
        cmocka_unit_test(test_permute__pool_declines),
        cmocka_unit_test(test_permute__padded_conv_kept_in_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
