/*
 * tests/unit/test_recipe.c - the source-rewrite recipes (kevo/recipe.h).
 *
 * For each recipe: it applies where it should (the output holds the expected
 * text), declines with a reason where its precondition fails, and the output
 * compiles and computes what the original computes: both are built with
 * `gcc -O2 -fopenmp` plus the flags of their cflags line, linked with a small
 * driver, run with OMP_NUM_THREADS=2, and their printed outputs compared.
 */
#include "recipe_check.h"

/* ---- kernels ------------------------------------------------------------ */

static const char MATMUL_PLAIN[] =
    "#include <stdint.h>\n"
    "void matmul_square(const float *A, const float *B, float *C, int64_t N) {\n"
    "    for (int64_t i = 0; i < N; i++)\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            float acc = 0.0f;\n"
    "            for (int64_t k = 0; k < N; k++) acc += A[i*N+k] * B[k*N+j];\n"
    "            C[i*N+j] = acc;\n"
    "        }\n"
    "}\n";

static const char MATMUL_PERFECT[] =
    "// kevo: cflags -O2\n"
    "#include <stdint.h>\n"
    "void matmul_square(const float *A, const float *B, float *C, int64_t N) {\n"
    "    for (int64_t i = 0; i < N; i++) {\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            for (int64_t k = 0; k < N; k++) {\n"
    "                C[i*N+j] += A[i*N+k] * B[k*N+j];\n"
    "            }\n"
    "        }\n"
    "    }\n"
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

/* Row statistics: max three ways, min, product, and a total over rows. */
static const char ROWSTATS[] =
    "#include <stdint.h>\n"
    "#include <math.h>\n"
    "void rowstats(const float *x, float *y, int64_t R, int64_t C) {\n"
    "    float total = 0.0f;\n"
    "    for (int64_t i = 0; i < R; i++) {\n"
    "        float m1 = -INFINITY, m2 = -INFINITY, lo = INFINITY, p = 1.0f;\n"
    "        for (int64_t j = 0; j < C; j++) {\n"
    "            m1 = m1 > x[i*C+j] ? m1 : x[i*C+j];\n"
    "            m2 = fmaxf(m2, x[i*C+j]);\n"
    "            if (x[i*C+j] < lo) lo = x[i*C+j];\n"
    "            p = p * (1.0f + 0.01f * x[i*C+j]);\n"
    "        }\n"
    "        y[4*i] = m1; y[4*i+1] = m2; y[4*i+2] = lo; y[4*i+3] = p;\n"
    "        total += m1;\n"
    "    }\n"
    "    y[4*R] = total;\n"
    "}\n";

static const char RELU[] = "#include <stdint.h>\n"
                           "\n"
                           "void relu(const float *x, float *y, int64_t N)\n"
                           "{\n"
                           "    for (int64_t i = 0; i < N; i++)\n"
                           "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
                           "}\n";

/* A 5-point stencil on the interior, bounds N-1 style. */
static const char STENCIL[] =
    "#include <stdint.h>\n"
    "void blur(const float *in, float *out, int64_t H, int64_t W) {\n"
    "    for (int64_t i = 1; i < H - 1; i++)\n"
    "        for (int64_t j = 1; j < W - 1; j++)\n"
    "            out[i*W+j] = 0.2f * (in[(i-1)*W+j] + in[(i+1)*W+j] + in[i*W+j-1]\n"
    "                                 + in[i*W+j+1] + in[i*W+j]);\n"
    "}\n";

/* A conv-like nest with an inclusive bound and an inner window loop. */
static const char CONV[] = "#include <stdint.h>\n"
                           "void blur(const float *in, float *out, int64_t H, int64_t W) {\n"
                           "    for (int64_t i = 0; i <= H - 3; i++)\n"
                           "        for (int64_t j = 0; j <= W - 3; j++) {\n"
                           "            float s = 0.0f;\n"
                           "            for (int64_t di = 0; di < 3; di++)\n"
                           "                for (int64_t dj = 0; dj < 3; dj++)\n"
                           "                    s += in[(i+di)*W + j+dj] * (float)(1 + di + dj);\n"
                           "            out[i*W+j] = s;\n"
                           "        }\n"
                           "}\n";

/* ---- drivers ------------------------------------------------------------ */

static const char DRIVER_MATMUL[] = DRIVER_HEAD
    "void matmul_square(const float *A, const float *B, float *C, int64_t N);\n"
    "int main(void) { int64_t N = 37; unsigned s = 7;\n"
    "  float *A = malloc(N*N*4), *B = malloc(N*N*4), *C = malloc(N*N*4);\n"
    "  for (int64_t i = 0; i < N*N; i++) { A[i] = rnd(&s); B[i] = rnd(&s); C[i] = rnd(&s); }\n"
    "  matmul_square(A, B, C, N);\n"
    "  for (int64_t i = 0; i < N*N; i++) printf(\"%.9g\\n\", C[i]);\n"
    "  return 0; }\n";

static const char DRIVER_ROWS[] =
    DRIVER_HEAD "void KERNEL(const float *x, float *y, int64_t R, int64_t C);\n"
                "int main(void) { int64_t R = 13, C = 53; unsigned s = 3;\n"
                "  float *x = malloc(R*C*4), *y = malloc((4*R+1)*4);\n"
                "  for (int64_t i = 0; i < R*C; i++) x[i] = rnd(&s);\n"
                "  for (int64_t i = 0; i < 4*R+1; i++) y[i] = -7.0f;\n"
                "  KERNEL(x, y, R, C);\n"
                "  for (int64_t i = 0; i < 4*R+1; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  return 0; }\n";

static const char DRIVER_ROWPTR[] =
    DRIVER_HEAD "void f(const float *x, float *y, int64_t n, int64_t m);\n"
                "int main(void) { int64_t n = 13, m = 29; unsigned s = 11;\n"
                "  float *x = malloc(n*m*4), *y = malloc(n*m*4);\n"
                "  for (int64_t i = 0; i < n*m; i++) { x[i] = rnd(&s); y[i] = rnd(&s); }\n"
                "  f(x, y, n, m);\n"
                "  for (int64_t i = 0; i < n*m; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  return 0; }\n";

static const char DRIVER_RELU[] =
    DRIVER_HEAD "void relu(const float *x, float *y, int64_t N);\n"
                "int main(void) { int64_t N = 1001; unsigned s = 5;\n"
                "  float *x = malloc(N*4), *y = malloc(N*4);\n"
                "  for (int64_t i = 0; i < N; i++) { x[i] = rnd(&s); y[i] = 9.0f; }\n"
                "  relu(x, y, N);\n"
                "  for (int64_t i = 0; i < N; i++) printf(\"%.9g\\n\", y[i]);\n"
                "  return 0; }\n";

static const char DRIVER_BLUR[] =
    DRIVER_HEAD "void blur(const float *in, float *out, int64_t H, int64_t W);\n"
                "int main(void) { int64_t H = 37, W = 45; unsigned s = 11;\n"
                "  float *in = malloc(H*W*4), *out = malloc(H*W*4);\n"
                "  for (int64_t i = 0; i < H*W; i++) { in[i] = rnd(&s); out[i] = 0.0f; }\n"
                "  blur(in, out, H, W);\n"
                "  for (int64_t i = 0; i < H*W; i++) printf(\"%.9g\\n\", out[i]);\n"
                "  return 0; }\n";

/* Position of needle in hay (asserting it is there). */
static size_t pos(const char *hay, const char *needle)
{
    assert_contains(hay, needle);
    return (size_t)(strstr(hay, needle) - hay);
}

/* ---- registry, cflags --------------------------------------------------- */

static void test_recipe__registry_lists_recipes(void **state)
{
    (void)state;
    size_t n = 0;
    const kevo_recipe_desc *d = kevo_recipe_list(&n);
    static const char *const want[] = {
        "flags",          "restrict",    "omp_parallel",  "omp_simd", "interchange",
        "tile",           "unroll",      "unroll_jam",    "fuse",     "vectorize",
        "register_block", "pack",        "kblock",        "permute",  "stream",
        "scan",           "acc_row",     "split",         "ocl_ndrange", "ocl_work_group",
        "ocl_coarsen",    "ocl_local_tile"};
    assert_int_equal(n, 22);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(d[i].name, want[i]);
        assert_string_equal(d[i].backend, i < 18 ? "c" : "opencl");
        assert_non_null(d[i].description);
        assert_non_null(d[i].precondition);
        assert_true(d[i].n_params <= KEVO_RECIPE_MAX_PARAMS);
        for (size_t k = 0; k < d[i].n_params; k++) {
            const kevo_recipe_param_desc *p = &d[i].params[k];
            assert_true(p->def >= p->min && p->def <= p->max);
            for (size_t c = 0; c < p->n_choices; c++)
                assert_true(p->choices[c] >= p->min && p->choices[c] <= p->max);
        }
    }
    assert_null(kevo_recipe_find("vectorize_everything"));
    char *out = NULL;
    assert_int_equal(kevo_recipe_apply(&out, "nope", NULL, 0, RELU, "relu"), KEVO_ENOTFOUND);
    assert_contains(kevo_error_last(), "tile");
}

static void test_recipe__cflags_line(void **state)
{
    (void)state;
    char *f = NULL, *s = NULL, *s2 = NULL;
    bool changed = false;

    assert_true(kevo_cflags_allowed("-O3"));
    assert_true(kevo_cflags_allowed("-mprefer-vector-width=512"));
    assert_false(kevo_cflags_allowed("-O0"));
    assert_false(kevo_cflags_allowed("-fplugin=evil.so"));
    assert_false(kevo_cflags_allowed(""));

    assert_int_equal(kevo_recipe_cflags_get(&f, RELU), 0);
    assert_string_equal(f, "");
    free(f);

    assert_int_equal(kevo_recipe_cflags_add(&s, &changed, RELU, "-O3  -march=native"), 0);
    assert_true(changed);
    assert_true(strncmp(s, "// kevo: cflags -O3 -march=native\n#include", 42) == 0);
    assert_string_equal(s + strlen("// kevo: cflags -O3 -march=native\n"), RELU);

    /* merge: no duplicates, -O level replaced */
    assert_int_equal(kevo_recipe_cflags_add(&s2, &changed, s, "-march=native -O2 -fopenmp"), 0);
    assert_true(changed);
    assert_int_equal(kevo_recipe_cflags_get(&f, s2), 0);
    assert_string_equal(f, "-march=native -O2 -fopenmp");
    free(f);
    free(s);
    s = NULL;

    /* nothing new: unchanged, same text */
    assert_int_equal(kevo_recipe_cflags_add(&s, &changed, s2, "-fopenmp"), 0);
    assert_false(changed);
    assert_string_equal(s, s2);
    free(s);
    s = NULL;
    /* nor when the flags include the -O level already there: it stays put
     * (moving it made a duplicate candidate the generator spent an attempt on) */
    assert_int_equal(kevo_recipe_cflags_add(&s, &changed, s2, "-O2 -march=native"), 0);
    assert_false(changed);
    assert_string_equal(s, s2);
    free(s);
    s = NULL;

    assert_int_equal(kevo_recipe_cflags_add(&s, &changed, s2, "-O3 -fno-omit-frame-pointer"),
                     KEVO_EINVAL);
    assert_null(s);
    assert_contains(kevo_error_last(), "-fno-omit-frame-pointer");
    free(s2);

    /* a line with messy spacing is read as single-spaced words */
    assert_int_equal(kevo_recipe_cflags_get(&f, "// kevo: cflags   -O3\t-ffast-math \nint x;\n"),
                     0);
    assert_string_equal(f, "-O3 -ffast-math");
    free(f);
    /* not a cflags line */
    assert_int_equal(kevo_recipe_cflags_get(&f, "// kevo: cflagsX -O3\n"), 0);
    assert_string_equal(f, "");
    free(f);
}

/* ---- flags, restrict ---------------------------------------------------- */

static void test_recipe__flags(void **state)
{
    (void)state;
    long set = 2;
    char *out = apply_ok("flags", &set, 1, MATMUL_PERFECT, "matmul_square");
    assert_true(strncmp(out, "// kevo: cflags -O2 -ffast-math\n", 32) == 0);
    assert_string_equal(out + 32, MATMUL_PERFECT + strlen("// kevo: cflags -O2\n"));
    assert_declines("flags", &set, 1, out, "matmul_square", "already");
    long bad = 99;
    assert_declines("flags", &bad, 1, out, "matmul_square", "out of range");
    set = 0;
    char *o3 = apply_ok("flags", &set, 1, out, "matmul_square");
    assert_true(strncmp(o3, "// kevo: cflags -ffast-math -O3 -march=native\n", 46) == 0);
    assert_same_result(MATMUL_PERFECT, o3, DRIVER_MATMUL, "matmul_square");
    free(out);
    free(o3);
}

/* A flag set that builds the same program declines: an attempt would time
 * the kernel against itself. The C backend compiles with -std=gnu11 -O3
 * -march=native, so -O3 -march=native (set 0), -ffp-contract=fast (4, gcc's
 * default in GNU C) and -mtune=native (7, implied by -march=native) change
 * nothing, nor -fno-math-errno (3) once -ffast-math is on the line; -O3
 * does after a -O2 there (test_recipe__flags). */
static void test_recipe__flags_that_change_nothing_decline(void **state)
{
    (void)state;
    const long noop[] = {0, 4, 7}, real[] = {1, 2, 3, 5, 6};
    for (size_t i = 0; i < 3; i++)
        assert_declines("flags", &noop[i], 1, RELU, "relu", "changes nothing");
    for (size_t i = 0; i < 5; i++) {
        char *out = apply_ok("flags", &real[i], 1, RELU, "relu");
        free(out);
    }
    long fast = 2, errno_set = 3, all = 6;
    char *out = apply_ok("flags", &fast, 1, RELU, "relu");
    assert_declines("flags", &errno_set, 1, out, "relu", "changes nothing");
    char *more = apply_ok("flags", &all, 1, out, "relu"); /* -funroll-loops is new */
    assert_contains(more, "-funroll-loops");
    free(out);
    free(more);
}

static void test_recipe__restrict(void **state)
{
    (void)state;
    char *out = apply_ok("restrict", NULL, 0, MATMUL_PLAIN, "matmul_square");
    assert_contains(out, "void matmul_square(const float *restrict A, const float *restrict B, "
                         "float *restrict C, int64_t N) {");
    assert_same_result(MATMUL_PLAIN, out, DRIVER_MATMUL, "matmul_square");
    assert_declines("restrict", NULL, 0, out, "matmul_square", "already restrict");
    assert_declines("restrict", NULL, 0,
                    "void scale(float a, int n) { for (int i = 0; i < n; i++) a *= 2; }\n", "scale",
                    "no pointer parameter");
    /* array declarators take the qualifier inside the brackets */
    static const char arrays[] = "void f(float a[], const float b[4], float *c, int n) {\n"
                                 "    for (int i = 0; i < n; i++) a[i] = b[i % 4] + c[i];\n}\n";
    char *arr = apply_ok("restrict", NULL, 0, arrays, "f");
    assert_contains(arr, "void f(float a[restrict], const float b[restrict 4], "
                         "float *restrict c, int n)");
    assert_declines("restrict", NULL, 0, arr, "f", "already restrict");
    free(arr);
    /* function pointers are not objects: not restrict-qualifiable */
    assert_declines("restrict", NULL, 0, "void f(void (*cb)(int), int n) { cb(n); }\n", "f",
                    "no pointer parameter");
    free(out);
}

/* ---- omp_parallel ------------------------------------------------------- */

static void test_recipe__omp_parallel_matmul_plain(void **state)
{
    (void)state;
    char *out = apply_ok("omp_parallel", NULL, 0, MATMUL_PLAIN, "matmul_square");
    assert_true(strncmp(out, "// kevo: cflags -fopenmp\n", 25) == 0);
    assert_contains(out, "    #pragma omp parallel for collapse(2)\n"
                         "    for (int64_t i = 0; i < N; i++)\n");
    assert_same_result(MATMUL_PLAIN, out, DRIVER_MATMUL, "matmul_square");
    assert_declines("omp_parallel", NULL, 0, out, "matmul_square", "already has an omp parallel");
    long one = 1;
    char *c1 = apply_ok("omp_parallel", &one, 1, MATMUL_PLAIN, "matmul_square");
    assert_contains(c1, "#pragma omp parallel for\n");
    free(c1);
    free(out);
}

static void test_recipe__omp_parallel_collapse_clamped_to_race_free(void **state)
{
    (void)state;
    long three = 3;
    char *out = apply_ok("omp_parallel", &three, 1, MATMUL_PERFECT, "matmul_square");
    /* collapsing k would make iterations race on C[i*N+j]: clamped to 2 */
    assert_contains(out, "#pragma omp parallel for collapse(2)\n");
    assert_true(strncmp(out, "// kevo: cflags -O2 -fopenmp\n", 29) == 0);
    assert_same_result(MATMUL_PERFECT, out, DRIVER_MATMUL, "matmul_square");
    free(out);
}

static void test_recipe__omp_parallel_reduction_and_private(void **state)
{
    (void)state;
    char *out = apply_ok("omp_parallel", NULL, 0, ROWSTATS, "rowstats");
    assert_contains(out, "#pragma omp parallel for reduction(+:total)\n");
    assert_same_result(ROWSTATS, out, DRIVER_ROWS, "rowstats");
    free(out);

    static const char outer_decls[] =
        "#include <stdint.h>\n"
        "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
        "    int64_t i, j;\n"
        "    float acc;\n"
        "    for (i = 0; i < R; i++) {\n"
        "        acc = 0.0f;\n"
        "        for (j = 0; j < C; j++) acc += x[i*C+j];\n"
        "        y[i] = acc;\n"
        "    }\n"
        "}\n";
    /* the outer loop must declare its variable */
    assert_declines("omp_parallel", NULL, 0, outer_decls, "rowsum", "is not in the form");
    static const char inner_decls[] =
        "#include <stdint.h>\n"
        "void rowsum(const float *x, float *y, int64_t R, int64_t C) {\n"
        "    int64_t j;\n"
        "    float acc;\n"
        "    for (int64_t i = 0; i < R; i++) {\n"
        "        acc = 0.0f;\n"
        "        for (j = 0; j < C; j++) acc += x[i*C+j];\n"
        "        y[i] = acc;\n"
        "    }\n"
        "}\n";
    out = apply_ok("omp_parallel", NULL, 0, inner_decls, "rowsum");
    assert_contains(out, "#pragma omp parallel for private(");
    assert_contains(out, "acc");
    assert_same_result(inner_decls, out, DRIVER_ROWS, "rowsum");
    free(out);
}

static void test_recipe__omp_parallel_all_nests(void **state)
{
    (void)state;
    static const char two[] =
        "#include <stdint.h>\n"
        "void relu(const float *x, float *y, int64_t N) {\n"
        "    for (int64_t i = 0; i < N; i++) y[i] = x[i];\n"
        "    if (N > 0) for (int64_t i = 0; i < N; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;\n"
        "}\n";
    char *first = apply_ok("omp_parallel", NULL, 0, two, "relu");
    long all[] = {2, 1};
    char *every = apply_ok("omp_parallel", all, 2, two, "relu");
    size_t n1 = 0, n2 = 0;
    for (const char *p = first; (p = strstr(p, "#pragma omp parallel for")); p++)
        n1++;
    for (const char *p = every; (p = strstr(p, "#pragma omp parallel for")); p++)
        n2++;
    assert_int_equal(n1, 1);
    assert_int_equal(n2, 2);
    /* a loop that does not start its line gets the pragma on a line of its own */
    assert_contains(every, "if (N > 0) \n    #pragma omp parallel for\n    for (int64_t i = 0;");
    assert_same_result(two, every, DRIVER_RELU, "relu");
    free(first);
    free(every);
}

/* A scatter: iterations ih and ih + 1 of the parallel loop reach one
 * element through different taps kh (`ih + kh`, `ih * 2 - 1 + kh` with
 * three taps). Caught by the attack `permute` made routine: collapse(2)
 * over n and ih of a transposed convolution whose kernel size is a
 * parameter, a race the correctness gate saw at one check size. */
static void test_recipe__omp_parallel_refuses_a_scatter(void **state)
{
    (void)state;
    static const char scatter[] = "#include <stdint.h>\n"
                                  "void f(const float *x, float *y, int64_t H, int64_t K) {\n"
                                  "    for (int64_t ih = 0; ih < H; ih++)\n"
                                  "        for (int64_t kh = 0; kh < K; kh++)\n"
                                  "            y[ih + kh] += x[ih];\n"
                                  "}\n";
    assert_declines("omp_parallel", NULL, 0, scatter, "f", "a scatter");
    /* the stride and the kernel size given at run time (Level 2's
     * convtranspose2d_gelu_groupnorm: `permute` reduce 8 threaded ih there,
     * and a kernel the run called correct failed a later check): ih * S +
     * kh meets for two ih whenever K > S; a bound written from the factor
     * (`c < C` beside `n * C`) stays a linearisation */
    static const char runtime[] =
        "#include <stdint.h>\n"
        "void f(const float *x, float *y, int64_t N, int64_t H, int64_t S, int64_t K) {\n"
        "    const int64_t OH = (H - 1) * S + K;\n"
        "    for (int64_t n = 0; n < N; n++)\n"
        "        for (int64_t ih = 0; ih < H; ih++)\n"
        "            for (int64_t kh = 0; kh < K; kh++)\n"
        "                y[n * OH + ih * S + kh] += x[n * H + ih];\n"
        "}\n";
    long both[2] = {2, 0};
    char *rt = apply_ok("omp_parallel", both, 2, runtime, "f");
    assert_contains(rt, "    #pragma omp parallel for\n    for (int64_t n = 0;");
    free(rt);
    static const char runtime_ih[] =
        "#include <stdint.h>\n"
        "void f(const float *x, float *y, int64_t H, int64_t S, int64_t K) {\n"
        "    for (int64_t ih = 0; ih < H; ih++)\n"
        "        for (int64_t kh = 0; kh < K; kh++)\n"
        "            y[ih * S + kh] += x[ih];\n"
        "}\n";
    assert_declines("omp_parallel", NULL, 0, runtime_ih, "f", "a scatter");
    static const char linear[] = "#include <stdint.h>\n"
                                 "void f(const float *x, float *y, int64_t R, int64_t C) {\n"
                                 "    for (int64_t r = 0; r < R; r++)\n"
                                 "        for (int64_t c = 0; c < C; c++)\n"
                                 "            y[r * C + c] = 2.0f * x[r * C + c];\n"
                                 "}\n";
    char *lin = apply_ok("omp_parallel", NULL, 0, linear, "f");
    assert_contains(lin, "#pragma omp parallel for collapse(2)\n    for (int64_t r = 0;");
    free(lin);
#define STRIDED_SCATTER(KH)                                                                        \
    "#include <stdint.h>\n"                                                                        \
    "void f(const float *x, float *y, int64_t N, int64_t H) {\n"                                   \
    "    const int64_t S = 2, KH = " KH ", OH = 2 * H + 1;\n"                                      \
    "    for (int64_t n = 0; n < N; n++)\n"                                                        \
    "        for (int64_t ih = 0; ih < H; ih++)\n"                                                 \
    "            for (int64_t kh = 0; kh < KH; kh++) {\n"                                          \
    "                const int64_t oh = ih * S - 1 + kh;\n"                                        \
    "                if (oh < 0 || oh >= OH) continue;\n"                                          \
    "                y[n * OH + oh] += x[n * H + ih];\n"                                           \
    "            }\n"                                                                              \
    "}\n"
    static const char strided[] = STRIDED_SCATTER("3"), two_taps[] = STRIDED_SCATTER("2");
    /* n is apart (a symbolic row stride), ih is not: collapse(2) clamps to n */
    long two[2] = {2, 0};
    char *out = apply_ok("omp_parallel", two, 2, strided, "f");
    assert_contains(out, "    #pragma omp parallel for\n    for (int64_t n = 0;");
    free(out);
    /* two taps under a stride of 2 never meet: ih runs in threads too */
    out = apply_ok("omp_parallel", two, 2, two_taps, "f");
    assert_contains(out, "#pragma omp parallel for collapse(2)");
    free(out);
}

static void test_recipe__omp_parallel_declines(void **state)
{
    (void)state;
    assert_declines("omp_parallel", NULL, 0, "void f(float *y) { y[0] = 1.0f; }\n", "f",
                    "no for loop");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(float *y, int n) { for (int i = n; i > 0; i--) y[i-1] = 0; }\n", "f",
                    "is not in the form 'for (T i = a; i < b; i++)'");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(float *y, long n) {\n"
                    "    for (long i = 0, e = n; i < e; i++) y[i] = 0;\n}\n",
                    "f", "declares or assigns several variables");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(const float *x, float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) y[0] += x[i];\n}\n",
                    "f", "does not use the loop variable 'i'");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(const float *x, float *y, int n) {\n"
                    "    float last = 0;\n"
                    "    for (int i = 0; i < n; i++) { y[i] = last; last = x[i]; }\n}\n",
                    "f", "'last' (declared outside the loop) is written inside it");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(float *y, int n) {\n"
                    "    for (int i = 1; i < n; i++) y[i] = y[i-1] * 0.5f;\n}\n",
                    "f", "also read at another index");
    assert_declines("omp_parallel", NULL, 0,
                    "void f(float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) *y++ = 0.0f;\n}\n",
                    "f", "pointer expression");
}

/* A store through a pointer declared in the loop is a store into the
 * buffer the pointer derives from: iterations that share the element race
 * (a transposed convolution's scatter once got `collapse(2)` over its
 * input channels this way, which the correctness gate caught only because
 * the race showed at a check size). */
static void test_recipe__omp_parallel_sees_through_row_pointers(void **state)
{
    (void)state;
    /* the row does not depend on i, or only through a division: shared */
    assert_declines("omp_parallel", NULL, 0,
                    "#include <stdint.h>\n"
                    "void f(const float *x, float *y, int64_t n, int64_t m) {\n"
                    "    for (int64_t i = 0; i < n; i++) {\n"
                    "        float *yr = y;\n"
                    "        for (int64_t j = 0; j < m; j++) yr[j] += x[i * m + j];\n"
                    "    }\n}\n",
                    "f", "does not use the loop variable 'i'");
    static const char halves[] = "#include <stdint.h>\n"
                                 "void f(const float *x, float *y, int64_t n, int64_t m) {\n"
                                 "    for (int64_t i = 0; i < n; i++) {\n"
                                 "        const int64_t g = i / 2;\n"
                                 "        float *yr = y + g * m;\n"
                                 "        for (int64_t j = 0; j < m; j++) yr[j] += x[i * m + j];\n"
                                 "    }\n}\n";
    assert_declines("omp_parallel", NULL, 0, halves, "f", "or only divides it");
    /* the scatter: collapsing the input channels is refused, n alone runs in threads */
    static const char scatter[] =
        "#include <stdint.h>\n"
        "void f(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t L) {\n"
        "    const int64_t G = 1, CG = C / G, OL = L + 2;\n"
        "    for (int64_t n = 0; n < N; n++)\n"
        "        for (int64_t c = 0; c < C; c++) {\n"
        "            const int64_t g = c / CG;\n"
        "            float *yo = y + (n * G + g) * OL;\n"
        "            for (int64_t l = 0; l < L; l++)\n"
        "                for (int64_t k = 0; k < 3; k++) {\n"
        "                    const int64_t o = l + k;\n"
        "                    yo[o] += x[(n * C + c) * L + l] * w[c * 3 + k];\n"
        "                }\n"
        "        }\n}\n";
    long collapse2 = 2;
    char *out = apply_ok("omp_parallel", &collapse2, 1, scatter, "f");
    assert_contains(out, "    #pragma omp parallel for\n    for (int64_t n = 0;");
    assert_lacks(out, "collapse");
    free(out);
    /* a row that moves with i, directly or through a declaration: parallel */
    static const char rows[] = "#include <stdint.h>\n"
                               "void f(const float *x, float *y, int64_t n, int64_t m) {\n"
                               "    for (int64_t i = 0; i < n; i++) {\n"
                               "        const int64_t r = i * m;\n"
                               "        float *yr = y + r;\n"
                               "        for (int64_t j = 0; j < m; j++) yr[j] += x[i * m + j];\n"
                               "    }\n}\n";
    out = apply_ok("omp_parallel", NULL, 0, rows, "f");
    assert_contains(out, "#pragma omp parallel for");
    free(out);
}

/* ---- omp_simd ----------------------------------------------------------- */

static void test_recipe__omp_simd_rowsum_reduction(void **state)
{
    (void)state;
    char *out = apply_ok("omp_simd", NULL, 0, ROWSUM, "rowsum");
    assert_true(strncmp(out, "// kevo: cflags -fopenmp-simd -fno-trapping-math\n", 49) == 0);
    assert_contains(out, "        #pragma omp simd reduction(+:acc)\n"
                         "        for (int64_t j = 0; j < C; j++)\n");
    assert_same_result(ROWSUM, out, DRIVER_ROWS, "rowsum");
    assert_declines("omp_simd", NULL, 0, out, "rowsum", "already has omp simd");
    free(out);

    char *mm = apply_ok("omp_simd", NULL, 0, MATMUL_PLAIN, "matmul_square");
    assert_contains(mm, "#pragma omp simd reduction(+:acc)\n            for (int64_t k = 0;");
    assert_same_result(MATMUL_PLAIN, mm, DRIVER_MATMUL, "matmul_square");
    free(mm);
}

static void test_recipe__omp_simd_min_max_product(void **state)
{
    (void)state;
    char *out = apply_ok("omp_simd", NULL, 0, ROWSTATS, "rowstats");
    assert_contains(out, "#pragma omp simd reduction(max:m1, m2) reduction(min:lo) "
                         "reduction(*:p)\n");
    assert_same_result(ROWSTATS, out, DRIVER_ROWS, "rowstats");
    free(out);

    static const char forms[] = "void f(const float *x, float *y, int n) {\n"
                                "    float a = 0, b = 1, c = 0, d = 0;\n"
                                "    for (int i = 0; i < n; i++) {\n"
                                "        a = a + x[i] * 2.0f;\n"
                                "        b *= x[i];\n"
                                "        c = x[i] + c;\n"
                                "        d -= x[i];\n"
                                "    }\n"
                                "    y[0] = a; y[1] = b; y[2] = c; y[3] = d;\n"
                                "}\n";
    out = apply_ok("omp_simd", NULL, 0, forms, "f");
    assert_contains(out, "#pragma omp simd reduction(+:a, c, d) reduction(*:b)\n");
    free(out);
}

static void test_recipe__omp_simd_elementwise(void **state)
{
    (void)state;
    char *out = apply_ok("omp_simd", NULL, 0, RELU, "relu");
    assert_contains(out, "    #pragma omp simd\n    for (int64_t i = 0; i < N; i++)\n");
    assert_same_result(RELU, out, DRIVER_RELU, "relu");
    free(out);
}

static void test_recipe__omp_simd_declines(void **state)
{
    (void)state;
    assert_declines("omp_simd", NULL, 0, MATMUL_PERFECT, "matmul_square",
                    "does not use the loop variable 'k'");
    assert_declines("omp_simd", NULL, 0,
                    "void f(float *y, const float *x, int n) {\n"
                    "    for (int i = 1; i < n; i++) y[i] = y[i-1] + x[i];\n}\n",
                    "f", "also read at another index");
    assert_declines("omp_simd", NULL, 0,
                    "void f(float *y, const float *x, int n) {\n"
                    "    float s = 0;\n"
                    "    for (int i = 0; i < n; i++) { s = s * 0.5f + x[i]; y[i] = s; }\n}\n",
                    "f", "'s' (declared outside the loop)");
    assert_declines("omp_simd", NULL, 0, "void f(float *y) { y[0] = 1.0f; }\n", "f", "no for loop");
    /* an unroll hint is dropped, not a reason to decline (test_recipe_vec.c) */
    char *unrolled = apply_ok("unroll", NULL, 0, RELU, "relu");
    char *simd = apply_ok("omp_simd", NULL, 0, unrolled, "relu");
    assert_contains(simd, "#pragma omp simd");
    assert_null(strstr(simd, "#pragma GCC unroll"));
    free(simd);
    free(unrolled);
    assert_declines("omp_simd", NULL, 0,
                    "void f(float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) { if (y[i] < 0) break; y[i] = 1; }\n}\n",
                    "f", "can leave early");
    /* a break of an inner switch is fine */
    char *sw = apply_ok("omp_simd", NULL, 0,
                        "void f(float *y, int n) {\n"
                        "    for (int i = 0; i < n; i++) { switch (i & 1) { case 0: y[i] = 1; "
                        "break; default: y[i] = 2; } }\n}\n",
                        "f");
    free(sw);
}

/* A conditional holding a division (huber_loss's form): under gcc's default
 * -ftrapping-math the division may not run speculatively, the branch stays
 * and the pragma vectorises nothing; omp_simd adds -fno-trapping-math, which
 * changes no value, and gcc 12 then vectorises the row loop. */
static void test_recipe__omp_simd_vectorises_a_branch_with_division(void **state)
{
    (void)state;
    static const char huber[] = "#include <stdint.h>\n"
                                "#include <math.h>\n"
                                "void rowhuber(const float *x, float *y, int64_t R, int64_t C) {\n"
                                "    for (int64_t i = 0; i < R; i++) {\n"
                                "        float s = 0.0f;\n"
                                "        for (int64_t j = 0; j < C; j++) {\n"
                                "            float r = fabsf(x[i*C+j]);\n"
                                "            s += r < 0.5f ? 0.5f * r * r / 0.7f : r - 0.25f;\n"
                                "        }\n"
                                "        y[i] = s;\n"
                                "    }\n"
                                "}\n";
    char *out = apply_ok("omp_simd", NULL, 0, huber, "rowhuber");
    assert_true(strncmp(out, "// kevo: cflags -fopenmp-simd -fno-trapping-math\n", 49) == 0);
    assert_contains(out, "        #pragma omp simd reduction(+:s)\n"
                         "        for (int64_t j = 0; j < C; j++) {\n");
    assert_same_result(huber, out, DRIVER_ROWS, "rowhuber");

    char *dir = NULL, *flags = NULL, *report = NULL;
    char kpath[512], info[600], opt[640];
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-recipe-"), 0);
    snprintf(kpath, sizeof(kpath), "%s/k.c", dir);
    snprintf(info, sizeof(info), "%s/vec.txt", dir);
    snprintf(opt, sizeof(opt), "-fopt-info-vec-optimized=%s", info);
    assert_int_equal(kevo_file_write(kpath, out, strlen(out)), 0);
    assert_int_equal(kevo_recipe_cflags_get(&flags, out), 0);
    char *argv[20];
    int n = 0;
    argv[n++] = "gcc";
    argv[n++] = "-std=gnu11";
    argv[n++] = "-O3";
    argv[n++] = "-march=native";
    n = append_cflags(argv, n, 14, flags); /* then 5 more and NULL */
    argv[n++] = opt;
    argv[n++] = "-c";
    argv[n++] = kpath;
    argv[n++] = "-o";
    argv[n++] = "/dev/null";
    argv[n] = NULL;
    assert_int_equal(run(argv, NULL), 0);
    assert_int_equal(kevo_file_read(&report, NULL, info), 0);
    assert_contains(report, "k.c:7:17: optimized: loop vectorized"); /* the omp simd loop */
    free(report);
    free(flags);
    kevo_rmtree(dir);
    free(dir);
    free(out);
}

static void test_recipe__omp_parallel_then_simd_merge(void **state)
{
    (void)state;
    char *par = apply_ok("omp_parallel", NULL, 0, RELU, "relu");
    char *both = apply_ok("omp_simd", NULL, 0, par, "relu");
    assert_contains(both, "#pragma omp parallel for simd\n    for (int64_t i = 0;");
    assert_lacks(both, "#pragma omp simd");
    assert_true(strncmp(both, "// kevo: cflags -fopenmp -fopenmp-simd -fno-trapping-math\n", 58) == 0);
    assert_same_result(RELU, both, DRIVER_RELU, "relu");

    static const char total[] = "#include <stdint.h>\n"
                                "void relu(const float *x, float *y, int64_t N) {\n"
                                "    float s = 0.0f;\n"
                                "    for (int64_t i = 0; i < N; i++)\n"
                                "        s += x[i];\n"
                                "    for (int64_t i = 0; i < N; i++) y[i] = s;\n"
                                "}\n";
    char *simd = apply_ok("omp_simd", NULL, 0, total, "relu");
    char *merged = apply_ok("omp_parallel", NULL, 0, simd, "relu");
    assert_contains(merged, "#pragma omp parallel for simd reduction(+:s)\n");
    assert_same_result(total, merged, DRIVER_RELU, "relu");
    free(par);
    free(both);
    free(simd);
    free(merged);
}

/* ---- interchange -------------------------------------------------------- */

static void test_recipe__interchange_perfect_matmul(void **state)
{
    (void)state;
    char *out = apply_ok("interchange", NULL, 0, MATMUL_PERFECT, "matmul_square");
    size_t i = pos(out, "for (int64_t i = 0;"), k = pos(out, "for (int64_t k = 0;"),
           j = pos(out, "for (int64_t j = 0;");
    assert_true(i < k && k < j); /* i-k-j */
    assert_contains(out, "C[i*N+j] += A[i*N+k] * B[k*N+j];");
    assert_same_result(MATMUL_PERFECT, out, DRIVER_MATMUL, "matmul_square");
    /* after interchange the innermost j loop vectorises */
    char *simd = apply_ok("omp_simd", NULL, 0, out, "matmul_square");
    assert_contains(simd, "#pragma omp simd\n            for (int64_t j = 0;");
    assert_same_result(MATMUL_PERFECT, simd, DRIVER_MATMUL, "matmul_square");

    long outer = 0;
    char *ji = apply_ok("interchange", &outer, 1, MATMUL_PERFECT, "matmul_square");
    assert_true(pos(ji, "for (int64_t j = 0;") < pos(ji, "for (int64_t i = 0;"));
    assert_same_result(MATMUL_PERFECT, ji, DRIVER_MATMUL, "matmul_square");
    free(out);
    free(simd);
    free(ji);
}

/* The row-update matmul (the suite's matmul_square reference): the
 * declarations between k and j sink into the j loop, then the two swap. */
static const char MATMUL_SQUARE_ROWS[] =
    "#include <stdint.h>\n"
    "void matmul_square(const float *A, const float *B, float *C, int64_t N)\n"
    "{\n"
    "    for (int64_t i = 0; i < N; i++) {\n"
    "        float *c = C + i * N;\n"
    "        for (int64_t j = 0; j < N; j++)\n"
    "            c[j] = 0.0f;\n"
    "        for (int64_t k = 0; k < N; k++) {\n"
    "            float a = A[i * N + k];\n"
    "            const float *b = B + k * N;\n"
    "            for (int64_t j = 0; j < N; j++)\n"
    "                c[j] += a * b[j];\n"
    "        }\n"
    "    }\n"
    "}\n";

static void test_recipe__interchange_sinks_declarations(void **state)
{
    (void)state;
    /* -1: the zeroing loop has no partner; the k-j pair is the first that swaps */
    char *out = apply_ok("interchange", NULL, 0, MATMUL_SQUARE_ROWS, "matmul_square");
    size_t j = pos(out, "for (int64_t j = 0; j < N; j++) {\n            for (int64_t k = 0;");
    size_t a = pos(out, "float a = A[i * N + k];");
    size_t b = pos(out, "const float *b = B + k * N;");
    size_t upd = pos(out, "c[j] += a * b[j];");
    assert_true(j < a && a < b && b < upd);
    assert_same_result(MATMUL_SQUARE_ROWS, out, DRIVER_MATMUL, "matmul_square");
    free(out);
    /* a declaration reading what the inner loop writes cannot sink */
    assert_declines("interchange", NULL, 0,
                    "void f(float *c, int n) {\n"
                    "    for (int k = 0; k < n; k++) {\n"
                    "        float a = c[0];\n"
                    "        for (int j = 0; j < n; j++) c[j] += a;\n"
                    "    }\n}\n",
                    "f", "or to follow only declarations it can sink");
    /* a row pointer the inner loop stores through sinks (recomputed each
     * iteration: the same stores in another order), and the swap makes
     * the x reads stride-1 in the new inner loop */
    static const char ROWPTR[] = "#include <stdint.h>\n"
                                 "void f(const float *x, float *y, int64_t n, int64_t m)\n"
                                 "{\n"
                                 "    for (int64_t i = 0; i < n; i++) {\n"
                                 "        float *yr = y + i * m;\n"
                                 "        for (int64_t j = 0; j < m; j++)\n"
                                 "            yr[j] += x[j * n + i];\n"
                                 "    }\n"
                                 "}\n";
    char *rp = apply_ok("interchange", NULL, 0, ROWPTR, "f");
    assert_true(pos(rp, "for (int64_t j = 0; j < m; j++)") <
                pos(rp, "for (int64_t i = 0; i < n; i++)"));
    assert_true(pos(rp, "for (int64_t i = 0; i < n; i++)") < pos(rp, "float *yr = y + i * m;"));
    assert_same_result(ROWPTR, rp, DRIVER_ROWPTR, "f");
    free(rp);
    /* the inner loop's body a loop with a pragma: the block holding the sunk
     * declaration opens above the pragma, which stays on its loop (the
     * recipe sweep's conv_transpose2d walk: `{` after `#pragma omp simd`) */
    static const char UNDER_PRAGMA[] = "#include <stdint.h>\n"
                                       "void f(const float *x, float *y, int64_t n, int64_t m)\n"
                                       "{\n"
                                       "    for (int64_t i = 0; i < n; i++) {\n"
                                       "        float a = x[i];\n"
                                       "        for (int64_t k = 0; k < 4; k++)\n"
                                       "            #pragma omp simd\n"
                                       "            for (int64_t j = 0; j < m; j++)\n"
                                       "                y[i * m + j] += a * x[k * m + j];\n"
                                       "    }\n"
                                       "}\n";
    const long outer[1] = {0};
    char *up = apply_ok("interchange", outer, 1, UNDER_PRAGMA, "f");
    assert_contains(up, "#pragma omp simd\n            for (int64_t j = 0;");
    assert_same_result(UNDER_PRAGMA, up, DRIVER_ROWPTR, "f");
    free(up);
    /* nor an accumulator the inner loop updates (sinking would zero it
     * each iteration: the cumsum scan), nor an array it stores into */
    assert_declines(
        "interchange", NULL, 0,
        "void f(const float *x, float *y, int R, int C) {\n"
        "    for (int r = 0; r < R; r++) {\n"
        "        float acc = 0.0f;\n"
        "        for (int c = 0; c < C; c++) { acc += x[r * C + c]; y[r * C + c] = acc; }\n"
        "    }\n}\n",
        "f", "or to follow only declarations it can sink");
    assert_declines("interchange", NULL, 0,
                    "void f(const float *x, float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        float t[4] = {0};\n"
                    "        for (int j = 0; j < n; j++) { t[j & 3] += x[i * n + j]; y[i * n + j] "
                    "= t[j & 3]; }\n"
                    "    }\n}\n",
                    "f", "or to follow only declarations it can sink");
    /* but not one read through it: first would see the stores made since */
    assert_declines("interchange", NULL, 0,
                    "void f(float *y, int n) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        float *yr = y + i * n;\n"
                    "        float first = yr[0];\n"
                    "        for (int j = 0; j < n; j++) yr[j] += first;\n"
                    "    }\n}\n",
                    "f", "or to follow only declarations it can sink");
    /* nor one the inner loop's header uses */
    assert_declines("interchange", NULL, 0,
                    "void f(float *c, int n) {\n"
                    "    for (int k = 0; k < n; k++) {\n"
                    "        int m = n - 1;\n"
                    "        for (int j = 0; j < m; j++) c[j * n + k] += 1.0f;\n"
                    "    }\n}\n",
                    "f", "or to follow only declarations it can sink");
}

static void test_recipe__interchange_declines(void **state)
{
    (void)state;
    assert_declines("interchange", NULL, 0, MATMUL_PLAIN, "matmul_square",
                    "not perfectly nested: 'float acc = 0.0f;' (line 5) lies between them");
    assert_declines("interchange", NULL, 0, RELU, "relu", "no enclosing loop");
    assert_declines("interchange", NULL, 0,
                    "void f(float *a, int n) {\n"
                    "    for (int i = 0; i < n; i++)\n"
                    "        for (int j = 0; j < i; j++) a[i*n+j] = 0;\n}\n",
                    "f", "must not depend on the swapped induction variables");
    long bad = 7;
    assert_declines("interchange", &bad, 1, MATMUL_PERFECT, "matmul_square", "out of range");
    char *par = apply_ok("omp_parallel", NULL, 0, MATMUL_PERFECT, "matmul_square");
    long outer = 0;
    assert_declines("interchange", &outer, 1, par, "matmul_square", "carries '#pragma omp");
    /* j is collapsed into the parallel loop: swapping j and k would race */
    assert_declines("interchange", NULL, 0, par, "matmul_square", "collapsed into");
    free(par);
    assert_declines("interchange", NULL, 0,
                    "void f(float *a, int n) {\n"
                    "    for (int i = 1; i < n; i++)\n"
                    "        for (int j = 0; j < n - 1; j++) a[i*n+j] = a[(i-1)*n+j+1];\n}\n",
                    "f", "possible dependence");
}

/* ---- tile --------------------------------------------------------------- */

static void test_recipe__tile_stencil_sizes_not_multiple(void **state)
{
    (void)state;
    long p[] = {-1, 2, 8, 16};
    char *out = apply_ok("tile", p, 4, STENCIL, "blur");
    assert_contains(out, "for (int64_t i_tile = 1; i_tile < (H - 1); i_tile += 8)");
    assert_contains(out, "for (int64_t j_tile = 1; j_tile < (W - 1); j_tile += 16)");
    assert_contains(out, "for (int64_t i = i_tile; i < (i_tile + 8 < (H - 1) ? i_tile + 8 : "
                         "(H - 1)); i++)");
    assert_same_result(STENCIL, out, DRIVER_BLUR, "blur");
    free(out);

    long q[] = {-1, 2, 5, 7};
    char *conv = apply_ok("tile", q, 4, CONV, "blur");
    assert_contains(conv, "i_tile < ((H - 3) + 1)");
    assert_same_result(CONV, conv, DRIVER_BLUR, "blur");
    free(conv);
}

static void test_recipe__tile_matmul(void **state)
{
    (void)state;
    long p[] = {-1, 3, 16, 8, 5};
    char *out = apply_ok("tile", p, 5, MATMUL_PERFECT, "matmul_square");
    assert_contains(out, "k_tile += 5");
    assert_same_result(MATMUL_PERFECT, out, DRIVER_MATMUL, "matmul_square");
    free(out);
    /* plain matmul: the i-j pair is perfect (the j loop is i's whole body) */
    char *plain = apply_ok("tile", NULL, 0, MATMUL_PLAIN, "matmul_square");
    assert_contains(plain, "i_tile += 32");
    assert_contains(plain, "j_tile += 32");
    assert_lacks(plain, "k_tile");
    assert_same_result(MATMUL_PLAIN, plain, DRIVER_MATMUL, "matmul_square");
    free(plain);
}

static void test_recipe__tile_declines(void **state)
{
    (void)state;
    assert_declines("tile", NULL, 0, RELU, "relu", "no nested loops");
    assert_declines("tile", NULL, 0,
                    "void f(float *a, int n) {\n"
                    "    for (int i = 0; i < n; i++)\n"
                    "        for (int j = i; j < n; j++) a[i*n+j] = 0;\n}\n",
                    "f", "not rectangular");
    assert_declines("tile", NULL, 0,
                    "void f(float *a, int n) {\n"
                    "    for (int i = 0; i < n; i++) {\n"
                    "        a[i] = 0;\n"
                    "        for (int j = 0; j < n; j++) a[i] += 1;\n"
                    "    }\n}\n",
                    "f", "not perfectly nested");
    assert_declines(
        "tile", NULL, 0,
        "void f(float *a, int n) {\n"
        "    for (int i = 1; i < n; i++)\n"
        "        for (int j = 1; j < n; j++) a[i*n+j] = a[(i-1)*n+j] + a[i*n+j-1];\n}\n",
        "f", "possible dependence");
    assert_declines("tile", NULL, 0,
                    "void f(float *a, int n) {\n"
                    "    for (int i = 0; i < n; i += 2)\n"
                    "        for (int j = 0; j < n; j++) a[i*n+j] = 0;\n}\n",
                    "f", "is not in the form");
    long bad[] = {-1, 2, 1};
    assert_declines("tile", bad, 3, STENCIL, "blur", "out of range");
}

/* ---- unroll ------------------------------------------------------------- */

static void test_recipe__unroll(void **state)
{
    (void)state;
    long f8 = 8, f2 = 2;
    char *out = apply_ok("unroll", &f8, 1, RELU, "relu");
    assert_contains(out, "    #pragma GCC unroll 8\n    for (int64_t i = 0;");
    assert_same_result(RELU, out, DRIVER_RELU, "relu");
    assert_declines("unroll", &f8, 1, out, "relu", "already has '#pragma GCC unroll 8'");
    char *two = apply_ok("unroll", &f2, 1, out, "relu");
    assert_contains(two, "#pragma GCC unroll 2\n");
    assert_lacks(two, "unroll 8");
    char *simd = apply_ok("omp_simd", NULL, 0, RELU, "relu");
    assert_declines("unroll", &f2, 1, simd, "relu", "carries '#pragma omp simd'");
    char *mm = apply_ok("unroll", &f2, 1, MATMUL_PLAIN, "matmul_square");
    assert_same_result(MATMUL_PLAIN, mm, DRIVER_MATMUL, "matmul_square");
    long bad = 0;
    assert_declines("unroll", &bad, 1, RELU, "relu", "out of range");
    /* factor 1 keeps a loop rolled (-funroll-loops would unroll it); `loop`
     * marks one innermost loop only, and a loop holding others is no
     * innermost loop */
    long one[2] = {1, 2}, outer[2] = {1, 0}, far[2] = {1, 9};
    char *rolled = apply_ok("unroll", one, 2, MATMUL_PLAIN, "matmul_square");
    assert_contains(rolled, "            #pragma GCC unroll 1\n            for (int64_t k = 0;");
    assert_same_result(MATMUL_PLAIN, rolled, DRIVER_MATMUL, "matmul_square");
    free(rolled);
    assert_declines("unroll", outer, 2, MATMUL_PLAIN, "matmul_square", "holds other loops");
    assert_declines("unroll", far, 2, MATMUL_PLAIN, "matmul_square", "out of range");
    free(out);
    free(two);
    free(simd);
    free(mm);
}

/* ---- chains ------------------------------------------------------------- */

static void test_recipe__chain_matmul_interchange_tile_parallel(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {
        {.recipe = "interchange"},
        {.recipe = "tile", .params = {-1, 3, 16, 8, 32}, .n_params = 5},
        {.recipe = "omp_parallel", .params = {3}, .n_params = 1},
        {.recipe = "restrict"},
    };
    char *out = NULL;
    int rc = kevo_recipe_apply_chain(&out, steps, 4, MATMUL_PERFECT, "matmul_square");
    if (rc)
        print_error("%s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_contains(out, "#pragma omp parallel for\n    for (int64_t i_tile = 0;");
    assert_contains(out, "float *restrict C");
    assert_same_result(MATMUL_PERFECT, out, DRIVER_MATMUL, "matmul_square");
    free(out);
}

static void test_recipe__chain_rowsum_parallel_simd_flags(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {
        {.recipe = "restrict"},
        {.recipe = "omp_parallel"},
        {.recipe = "omp_simd"},
        {.recipe = "flags", .params = {6}, .n_params = 1},
    };
    char *out = NULL;
    assert_int_equal(kevo_recipe_apply_chain(&out, steps, 4, ROWSUM, "rowsum"), 0);
    assert_true(strncmp(out,
                        "// kevo: cflags -fopenmp -fopenmp-simd -fno-trapping-math -O3 "
                        "-march=native -ffast-math -funroll-loops\n",
                        102) == 0);
    assert_contains(out, "#pragma omp parallel for\n");
    assert_contains(out, "#pragma omp simd reduction(+:acc)\n");
    assert_same_result(ROWSUM, out, DRIVER_ROWS, "rowsum");
    free(out);
}

static void test_recipe__chain_stencil_tile_parallel_unroll(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {
        {.recipe = "tile", .params = {-1, 2, 16, 8}, .n_params = 4},
        {.recipe = "omp_parallel", .params = {2}, .n_params = 1},
        {.recipe = "unroll", .params = {4}, .n_params = 1},
    };
    char *out = NULL;
    int rc = kevo_recipe_apply_chain(&out, steps, 3, STENCIL, "blur");
    if (rc)
        print_error("%s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_contains(out, "#pragma omp parallel for collapse(2)\n");
    assert_contains(out, "#pragma GCC unroll 4\n");
    assert_same_result(STENCIL, out, DRIVER_BLUR, "blur");
    free(out);

    kevo_recipe_step conv_steps[] = {
        {.recipe = "omp_parallel"},
        {.recipe = "omp_simd"},
    };
    assert_int_equal(kevo_recipe_apply_chain(&out, conv_steps, 2, CONV, "blur"), 0);
    assert_contains(out, "#pragma omp parallel for collapse(2)\n");
    assert_contains(out, "#pragma omp simd reduction(+:s)\n");
    assert_same_result(CONV, out, DRIVER_BLUR, "blur");
    free(out);
}

static void test_recipe__chain_failure_names_step(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {{.recipe = "restrict"}, {.recipe = "interchange"}};
    char *out = NULL;
    assert_int_equal(kevo_recipe_apply_chain(&out, steps, 2, MATMUL_PLAIN, "matmul_square"),
                     KEVO_EINVAL);
    assert_null(out);
    assert_contains(kevo_error_last(), "step 2 (interchange): interchange: the loops at line 4");
    assert_int_equal(kevo_recipe_apply_chain(&out, steps, 0, RELU, "relu"), 0);
    assert_string_equal(out, RELU);
    free(out);
}

static void test_recipe__chain_json_roundtrip(void **state)
{
    (void)state;
    kevo_recipe_step steps[] = {
        {.recipe = "interchange"},
        {.recipe = "tile", .params = {-1, 3, 16}, .n_params = 3},
        {.recipe = "flags", .params = {2}, .n_params = 1},
        {.recipe = "omp_simd"},
    };
    char *json = NULL;
    assert_int_equal(kevo_recipe_chain_to_json(&json, steps, 4), 0);
    assert_contains(json, "{\"recipe\":\"tile\",\"params\":{\"loop\":-1,\"depth\":3,"
                          "\"size0\":16,\"size1\":32,\"size2\":32}}");
    assert_contains(json, "\"flags\":\"-ffast-math\"");
    assert_contains(json, "{\"recipe\":\"omp_simd\",\"params\":{}}");

    kevo_recipe_step *back = NULL;
    size_t n = 0;
    assert_int_equal(kevo_recipe_chain_from_json(&back, &n, json), 0);
    assert_int_equal(n, 4);
    assert_string_equal(back[1].recipe, "tile");
    assert_int_equal(back[1].n_params, 5);
    assert_int_equal(back[1].params[1], 3);
    assert_int_equal(back[1].params[2], 16);
    assert_int_equal(back[1].params[4], 32);
    assert_int_equal(back[2].params[0], 2);

    char *a = NULL, *b = NULL;
    assert_int_equal(kevo_recipe_apply_chain(&a, steps, 4, MATMUL_PERFECT, "matmul_square"), 0);
    assert_int_equal(kevo_recipe_apply_chain(&b, back, n, MATMUL_PERFECT, "matmul_square"), 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(json);
    kevo_recipe_chain_free(back);
    kevo_recipe_chain_free(NULL);

    /* positional params, omitted params, flags by name */
    assert_int_equal(kevo_recipe_chain_from_json(
                         &back, &n,
                         "[{\"recipe\":\"unroll\",\"params\":[8]},{\"recipe\":\"restrict\"},"
                         "{\"recipe\":\"flags\",\"flags\":\"-fno-math-errno\"}]"),
                     0);
    assert_int_equal(n, 3);
    assert_int_equal(back[0].params[0], 8);
    assert_int_equal(back[2].params[0], 3);
    kevo_recipe_chain_free(back);

    static const char *const bad[] = {
        "{}",
        "[1]",
        "[{\"recipe\":\"nope\"}]",
        "[{\"recipe\":\"unroll\",\"params\":{\"f\":2}}]",
        "[{\"recipe\":\"unroll\",\"params\":{\"factor\":1.5}}]",
        "[{\"recipe\":\"unroll\",\"params\":{\"factor\":1000}}]",
        "[{\"recipe\":\"flags\",\"flags\":\"-O0\"}]",
        "not json",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        back = NULL;
        assert_int_equal(kevo_recipe_chain_from_json(&back, &n, bad[i]), KEVO_EINVAL);
        assert_null(back);
    }
    kevo_recipe_step unknown = {.recipe = "nope"};
    assert_int_equal(kevo_recipe_chain_to_json(&json, &unknown, 1), KEVO_ENOTFOUND);
}

/* ---- params, check ------------------------------------------------------ */

static void test_recipe__params_default_and_mutate(void **state)
{
    (void)state;
    long p[KEVO_RECIPE_MAX_PARAMS];
    size_t n = 0;
    assert_int_equal(kevo_recipe_params_default(p, &n, "tile"), 0);
    assert_int_equal(n, 5);
    assert_int_equal(p[0], -1);
    assert_int_equal(p[1], 2);
    assert_int_equal(p[2], 32);
    assert_int_equal(kevo_recipe_params_default(p, &n, "restrict"), 0);
    assert_int_equal(n, 0);
    assert_int_equal(kevo_recipe_params_default(p, &n, "nope"), KEVO_ENOTFOUND);

    kevo_rng rng;
    kevo_rng_seed(&rng, 42);
    bool changed = false;
    assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "restrict", NULL, NULL), 0);
    assert_false(changed);

    /* unroll: always a different factor among 2/4/8/16 */
    kevo_recipe_params_default(p, &n, "unroll");
    for (int i = 0; i < 50; i++) {
        long before = p[0];
        assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "unroll", NULL, NULL), 0);
        assert_true(changed);
        assert_true(p[0] != before);
        assert_true(p[0] == 2 || p[0] == 4 || p[0] == 8 || p[0] == 16);
    }
    /* tile sizes stay among the choices, every result applies */
    kevo_recipe_params_default(p, &n, "tile");
    for (int i = 0; i < 20; i++) {
        assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "tile", STENCIL, "blur"), 0);
        assert_true(changed);
        for (int k = 2; k < 5; k++)
            assert_true(p[k] == 8 || p[k] == 16 || p[k] == 32 || p[k] == 64 || p[k] == 128);
        assert_true(p[1] == 2); /* the stencil nest is 2 deep */
        assert_true(p[0] == -1 || p[0] == 0);
        char *out = apply_ok("tile", p, n, STENCIL, "blur");
        free(out);
    }
    /* collapse is narrowed to the deepest parallel band of the kernel: the
     * plain matmul's i-j pair (k is not perfectly nested) */
    kevo_recipe_params_default(p, &n, "omp_parallel");
    bool saw_one = false;
    for (int i = 0; i < 30; i++) {
        assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "omp_parallel", MATMUL_PLAIN,
                                                   "matmul_square"),
                         0);
        assert_true(changed);
        assert_true(p[0] == 1 || p[0] == 2);
        assert_true(p[1] == 0 || p[1] == 1);
        saw_one |= p[0] == 1;
    }
    assert_true(saw_one);
    /* same seed, same sequence */
    kevo_rng r1, r2;
    long a[KEVO_RECIPE_MAX_PARAMS], b[KEVO_RECIPE_MAX_PARAMS];
    kevo_rng_seed(&r1, 9);
    kevo_rng_seed(&r2, 9);
    kevo_recipe_params_default(a, &n, "tile");
    kevo_recipe_params_default(b, &n, "tile");
    for (int i = 0; i < 10; i++) {
        kevo_recipe_params_mutate(&changed, a, &r1, "tile", NULL, NULL);
        kevo_recipe_params_mutate(&changed, b, &r2, "tile", NULL, NULL);
        assert_memory_equal(a, b, sizeof(long) * n);
    }
}

/* Issue 20: the built-in generator declares a recipe applicable with its
 * defaults and then rewrites with parameters mutated from them. On the demo's
 * relu already unrolled by 8 (an earlier step), `unroll` applies with its
 * default factor 4, and the mutation used to pick 8, which declines ("the
 * loop already has '#pragma GCC unroll 8'"): an attempt booked as a compile
 * error. Mutation with a source now hands out only values that apply. */
static void test_recipe__mutate_keeps_applicable_unroll(void **state)
{
    (void)state;
    long p[KEVO_RECIPE_MAX_PARAMS] = {8};
    size_t n = 0;
    char *by8 = apply_ok("unroll", p, 1, RELU, "relu");
    bool ok = false, changed = false, saw[17] = {false};
    assert_int_equal(kevo_recipe_check(&ok, NULL, "unroll", by8, "relu"), 0);
    assert_true(ok); /* factor 4 != 8 */
    kevo_rng rng;
    kevo_rng_seed(&rng, 20);
    for (int i = 0; i < 60; i++) {
        kevo_recipe_params_default(p, &n, "unroll");
        assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "unroll", by8, "relu"), 0);
        assert_true(changed);
        assert_true(p[0] == 2 || p[0] == 16);
        saw[p[0]] = true;
        char *out = apply_ok("unroll", p, n, by8, "relu");
        free(out);
    }
    assert_true(saw[2] && saw[16]);
    /* without a source, the static choices, 8 among them */
    bool saw8 = false;
    for (int i = 0; i < 60; i++) {
        kevo_recipe_params_default(p, &n, "unroll");
        kevo_recipe_params_mutate(&changed, p, &rng, "unroll", NULL, NULL);
        saw8 |= p[0] == 8;
    }
    assert_true(saw8);
    free(by8);
}

/* An input keeps what each recipe run on it gave (the generator checks,
 * probes mutations and rewrites with the same recipe and parameters): a
 * second run gives the same text as the first and as a fresh parse, and a
 * decline says the same reason again. */
static void test_recipe__input_runs_repeat_alike(void **state)
{
    (void)state;
    long p8[KEVO_RECIPE_MAX_PARAMS] = {8};
    char *by8 = apply_ok("unroll", p8, 1, RELU, "relu");
    kevo_recipe_input *in = NULL;
    assert_int_equal(kevo_recipe_input_new(&in, by8, "relu"), 0);
    char *a = NULL, *b = NULL, *why1 = NULL, *why2 = NULL;
    bool ok = true;
    for (int round = 0; round < 2; round++) {
        char **why = round ? &why2 : &why1;
        assert_int_equal(kevo_recipe_input_check(&ok, why, "unroll", p8, 1, in), 0);
        assert_false(ok);
        assert_non_null(*why);
        assert_non_null(strstr(*why, "unroll 8"));
    }
    assert_string_equal(why1, why2);
    long p2[KEVO_RECIPE_MAX_PARAMS] = {2};
    assert_int_equal(kevo_recipe_input_check(&ok, NULL, "unroll", p2, 1, in), 0);
    assert_true(ok);
    assert_int_equal(kevo_recipe_input_apply(&a, "unroll", p2, 1, in), 0);
    assert_int_equal(kevo_recipe_input_apply(&b, "unroll", p2, 1, in), 0);
    assert_string_equal(a, b);
    char *fresh = apply_ok("unroll", p2, 1, by8, "relu");
    assert_string_equal(a, fresh);
    free(b);
    b = NULL;
    assert_int_equal(kevo_recipe_input_apply(&b, "unroll", p8, 1, in), KEVO_EINVAL);
    assert_null(b);
    kevo_recipe_input_free(in);
    free(a);
    free(b);
    free(fresh);
    free(why1);
    free(why2);
    free(by8);
}

/* The same for `flags`: on a source whose cflags line has -mtune=native and
 * -ffast-math, a mutation never picks set 7 (-mtune=native) or 2
 * (-ffast-math), which are there, nor 0 (-O3 -march=native, the compile
 * line's own), 3 (-fno-math-errno, implied by -ffast-math) or 4
 * (-ffp-contract=fast, gcc's default), which change nothing: all decline,
 * the default set 0 too. When no change applies, the parameters are left
 * alone. */
static void test_recipe__mutate_keeps_applicable_flags(void **state)
{
    (void)state;
    char *src = NULL;
    bool ok = true, changed = false;
    assert_int_equal(kevo_recipe_cflags_add(&src, NULL, RELU, "-mtune=native -ffast-math"), 0);
    assert_int_equal(kevo_recipe_check(&ok, NULL, "flags", src, "relu"), 0);
    assert_false(ok);
    kevo_rng rng;
    kevo_rng_seed(&rng, 7);
    long p[KEVO_RECIPE_MAX_PARAMS];
    size_t n = 0;
    for (int i = 0; i < 80; i++) {
        kevo_recipe_params_default(p, &n, "flags");
        assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "flags", src, "relu"), 0);
        assert_true(changed);
        assert_true(p[0] == 1 || p[0] == 5 || p[0] == 6);
        char *out = apply_ok("flags", p, n, src, "relu");
        free(out);
    }
    /* every flag set on the line: no value applies, nothing changes */
    char *all = NULL;
    assert_int_equal(kevo_recipe_cflags_add(&all, NULL, RELU,
                                            "-O3 -march=native -funroll-loops -ffast-math "
                                            "-fno-math-errno -ffp-contract=fast "
                                            "-mprefer-vector-width=512 -mtune=native"),
                     0);
    kevo_recipe_params_default(p, &n, "flags");
    assert_int_equal(kevo_recipe_params_mutate(&changed, p, &rng, "flags", all, "relu"), 0);
    assert_false(changed);
    assert_int_equal(p[0], 0);
    free(all);
    free(src);
}

static void test_recipe__check(void **state)
{
    (void)state;
    bool ok = false;
    char *why = NULL;
    assert_int_equal(kevo_recipe_check(&ok, &why, "omp_simd", ROWSUM, "rowsum"), 0);
    assert_true(ok);
    assert_null(why);
    assert_int_equal(kevo_recipe_check(&ok, &why, "interchange", MATMUL_PLAIN, "matmul_square"), 0);
    assert_false(ok);
    assert_non_null(why);
    assert_contains(why, "not perfectly nested");
    free(why);
    assert_int_equal(kevo_recipe_check(&ok, &why, "tile", "void f( {", "f"), 0);
    assert_false(ok);
    assert_contains(why, "does not parse");
    free(why);
    assert_int_equal(kevo_recipe_check(&ok, NULL, "tile", MATMUL_PLAIN, "matmul_square"), 0);
    assert_true(ok);
    assert_int_equal(kevo_recipe_check(&ok, &why, "nope", RELU, "relu"), KEVO_ENOTFOUND);
    assert_null(why);
}

/* ---- parsing, scope ----------------------------------------------------- */

static void test_recipe__parse_errors_and_missing_kernel(void **state)
{
    (void)state;
    assert_declines("omp_simd", NULL, 0, "void relu(float *y, int n) { for (;;) y[0] = }\n", "relu",
                    "does not parse: line 1");
    assert_declines("omp_simd", NULL, 0, RELU, "gelu", "kernel function 'gelu' is not defined");
    assert_declines("omp_simd", NULL, 0, "void gelu(float *y, int n);\n", "gelu",
                    "declared but not defined");
    /* OpenMP, <math.h> and <omp.h> parse */
    static const char with_omp[] = "// kevo: cflags -O3 -fopenmp\n"
                                   "#include <math.h>\n#include <omp.h>\n#include <stdint.h>\n"
                                   "void relu(const float *x, float *y, int64_t N) {\n"
                                   "    int nt = omp_get_max_threads();\n"
                                   "    #pragma omp parallel for num_threads(nt)\n"
                                   "    for (int64_t i = 0; i < N; i++) y[i] = fmaxf(x[i], 0.0f);\n"
                                   "}\n";
    char *out = apply_ok("restrict", NULL, 0, with_omp, "relu");
    assert_same_result(RELU, out, DRIVER_RELU, "relu");
    free(out);
}

static void test_recipe__text_outside_kernel_untouched(void **state)
{
    (void)state;
    static const char src[] =
        "// kevo: cflags -O3\n"
        "#include <stdint.h>\n"
        "static float table[4];\n"
        "static void before(float *p, int n) { for (int i = 0; i < n; i++) p[i] = 0; }\n"
        "#define SQ(x) ((x) * (x))\n"
        "void relu(const float *x, float *y, int64_t N) {\n"
        "    for (int64_t i = 0; i < N; i++)\n"
        "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
        "}\n"
        "static void after(float *p, int n) { for (int i = 0; i < n; i++) p[i] = SQ(p[i]); }\n";
    const char *recipes[] = {"restrict", "omp_parallel", "omp_simd", "unroll"};
    const char *fn = strstr(src, "void relu");
    const char *fn_end = strstr(src, "static void after");
    for (size_t r = 0; r < 4; r++) {
        char *out = apply_ok(recipes[r], NULL, 0, src, "relu");
        /* the cflags line may change; everything else outside relu() is kept */
        const char *body = strchr(out, '\n') + 1;
        const char *src_body = strchr(src, '\n') + 1;
        assert_memory_equal(body, src_body, (size_t)(fn - src_body));
        assert_string_equal(out + strlen(out) - strlen(fn_end), fn_end);
        assert_true(strncmp(out, "// kevo: cflags -O3", 19) == 0);
        free(out);
    }
}

int main(void)
{
    setenv("OMP_NUM_THREADS", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recipe__registry_lists_recipes),
        cmocka_unit_test(test_recipe__cflags_line),
        cmocka_unit_test(test_recipe__flags),
        cmocka_unit_test(test_recipe__flags_that_change_nothing_decline),
        cmocka_unit_test(test_recipe__restrict),
        cmocka_unit_test(test_recipe__omp_parallel_matmul_plain),
        cmocka_unit_test(test_recipe__omp_parallel_collapse_clamped_to_race_free),
        cmocka_unit_test(test_recipe__omp_parallel_reduction_and_private),
        cmocka_unit_test(test_recipe__omp_parallel_all_nests),
        cmocka_unit_test(test_recipe__omp_parallel_refuses_a_scatter),
        cmocka_unit_test(test_recipe__omp_parallel_declines),
        cmocka_unit_test(test_recipe__omp_parallel_sees_through_row_pointers),
        cmocka_unit_test(test_recipe__omp_simd_rowsum_reduction),
        cmocka_unit_test(test_recipe__omp_simd_vectorises_a_branch_with_division),
        cmocka_unit_test(test_recipe__omp_simd_min_max_product),
        cmocka_unit_test(test_recipe__omp_simd_elementwise),
        cmocka_unit_test(test_recipe__omp_simd_declines),
        cmocka_unit_test(test_recipe__omp_parallel_then_simd_merge),
        cmocka_unit_test(test_recipe__interchange_perfect_matmul),
        cmocka_unit_test(test_recipe__interchange_sinks_declarations),
        cmocka_unit_test(test_recipe__interchange_declines),
        cmocka_unit_test(test_recipe__tile_stencil_sizes_not_multiple),
        cmocka_unit_test(test_recipe__tile_matmul),
        cmocka_unit_test(test_recipe__tile_declines),
        cmocka_unit_test(test_recipe__unroll),
        cmocka_unit_test(test_recipe__chain_matmul_interchange_tile_parallel),
        cmocka_unit_test(test_recipe__chain_rowsum_parallel_simd_flags),
        cmocka_unit_test(test_recipe__chain_stencil_tile_parallel_unroll),
        cmocka_unit_test(test_recipe__chain_failure_names_step),
        cmocka_unit_test(test_recipe__chain_json_roundtrip),
        cmocka_unit_test(test_recipe__params_default_and_mutate),
        cmocka_unit_test(test_recipe__mutate_keeps_applicable_unroll),
        cmocka_unit_test(test_recipe__input_runs_repeat_alike),
        cmocka_unit_test(test_recipe__mutate_keeps_applicable_flags),
        cmocka_unit_test(test_recipe__check),
        cmocka_unit_test(test_recipe__parse_errors_and_missing_kernel),
        cmocka_unit_test(test_recipe__text_outside_kernel_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
