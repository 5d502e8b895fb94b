/*
 * tests/unit/test_recipe_opencl.c - the OpenCL port of a C reference and the
 * OpenCL recipes (kevo/recipe.h), at the text level: what they write, where
 * they decline and why. That their output builds and computes the
 * reference's result under PoCL is tests/integration/test_opencl_recipes.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "backend/opencl_draft.h"
#include "kevo/recipe.h"

#include <stdlib.h>
#include <string.h>

static const char SCALE[] = "#include <math.h>\n"
                            "#include <stdint.h>\n"
                            "void scale(const float *x, float *y, int64_t N)\n"
                            "{\n"
                            "    // c comment\n"
                            "    const float k = 2.0f;\n"
                            "    for (int64_t i = 0; i < N; i++)\n"
                            "        y[i] = k * expf(x[i]);\n"
                            "}\n";

static const char ROWS[] = "#include <stdint.h>\n"
                           "void rows(const float *x, float *y, int64_t R, int64_t C)\n"
                           "{\n"
                           "    for (int64_t r = 0; r < R; r++) {\n"
                           "        const float *xr = x + r * C;\n"
                           "        double s = 0.0;\n"
                           "        for (int64_t c = 0; c < C; c++)\n"
                           "            s += xr[c];\n"
                           "        y[r] = (float)s;\n"
                           "    }\n"
                           "}\n";

static const char GEMM2[] = "#include <stdint.h>\n"
                            "void mm(const float *a, const float *b, float *c, int64_t M, int64_t "
                            "N, int64_t K)\n"
                            "{\n"
                            "    for (int64_t i = 0; i < M; i++)\n"
                            "        for (int64_t j = 0; j < N; j++) {\n"
                            "            float acc = 0.0f;\n"
                            "            for (int64_t k = 0; k < K; k++)\n"
                            "                acc += a[i * K + k] * b[k * N + j];\n"
                            "            c[i * N + j] = acc;\n"
                            "        }\n"
                            "    for (int64_t i = 0; i < M * N; i++)\n"
                            "        c[i] *= 2.0f;\n"
                            "}\n";

static const char TOTAL[] = "#include <stdint.h>\n"
                            "void total(const float *x, float *y, int64_t N)\n"
                            "{\n"
                            "    float s = 0.0f;\n"
                            "    for (int64_t i = 0; i < N; i++)\n"
                            "        s += x[i];\n"
                            "    y[0] = s;\n"
                            "}\n";

static const char LOCAL_KERNEL[] =
    "// kevo: launch scale global=ROUND_UP(N,64) local=64\n"
    "__kernel void scale(__global const float *x, __global float *y, long N)\n"
    "{\n"
    "    __local float t[64];\n"
    "    const long i = (0) + (long)get_global_id(0);\n"
    "    t[get_local_id(0)] = i < N ? x[i] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (i < N)\n"
    "        y[i] = t[get_local_id(0)];\n"
    "}\n";

static char *port(const char *src, const char *kernel)
{
    char *out = NULL;
    assert_int_equal(kevo_backend__opencl_port(&out, src, kernel), 0);
    assert_true(kevo_recipe_is_opencl(out));
    return out;
}

static char *apply(const char *src, const char *kernel, const char *recipe, const long *p,
                   size_t n)
{
    char *out = NULL;
    int e = kevo_recipe_apply(&out, recipe, p, n, src, kernel);
    if (e != 0)
        fail_msg("%s: %s", recipe, kevo_error_last());
    return out;
}

static void declines(const char *src, const char *kernel, const char *recipe, const char *why)
{
    char *out = NULL;
    assert_int_equal(kevo_recipe_apply(&out, recipe, NULL, 0, src, kernel), KEVO_EINVAL);
    assert_null(out);
    if (!strstr(kevo_error_last(), why))
        fail_msg("%s: expected '%s' in '%s'", recipe, why, kevo_error_last());
}

static void test_port__maps_types_qualifiers_and_maths(void **state)
{
    (void)state;
    char *p = port(SCALE, "scale");
    assert_non_null(strstr(p, "// kevo: launch scale global=1 local=1\n"));
    assert_non_null(strstr(p, "__kernel void scale(__global const float *x, __global float *y, "
                              "long N)"));
    assert_non_null(strstr(p, "exp(x[i])"));
    assert_null(strstr(p, "#include"));
    assert_null(strstr(p, "cl_khr_fp64"));
    free(p);
    p = port(ROWS, "rows");
    assert_non_null(strstr(p, "const float __global *xr"));
    assert_non_null(strstr(p, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    /* an OpenCL source is not ported twice, and C recipes leave it alone */
    char *again = NULL;
    assert_int_equal(kevo_backend__opencl_port(&again, p, "rows"), KEVO_EINVAL);
    declines(p, "rows", "omp_parallel", "rewrites c candidates");
    declines(SCALE, "scale", "ocl_ndrange", "rewrites opencl candidates");
    free(p);
}

static void test_ndrange__one_and_two_dimensions(void **state)
{
    (void)state;
    char *p = port(SCALE, "scale");
    char *o = apply(p, "scale", "ocl_ndrange", NULL, 0);
    assert_non_null(strstr(o, "// kevo: launch scale global=ROUND_UP(N,64) local=64\n"));
    assert_non_null(strstr(o, "const long i = (0) + (long)get_global_id(0);"));
    assert_non_null(strstr(o, "if (!(i < (N)))"));
    /* the declaration outside the nest is kept, the comment does not swallow it */
    assert_non_null(strstr(o, "const float k = 2.0f;"));
    declines(o, "scale", "ocl_ndrange", "one work-item");
    free(o);
    free(p);

    p = port(GEMM2, "mm");
    long two = 2;
    o = apply(p, "mm", "ocl_ndrange", &two, 1);
    assert_non_null(strstr(o, "// kevo: launch mm global=ROUND_UP(N,16),ROUND_UP(M,16) "
                              "local=16,16\n// kevo: launch mm_2 global=ROUND_UP(M*N,64) "
                              "local=64\n"));
    assert_non_null(strstr(o, "const long i = (0) + (long)get_global_id(1);"));
    assert_non_null(strstr(o, "const long j = (0) + (long)get_global_id(0);"));
    assert_non_null(strstr(o, "__kernel void mm_2("));
    free(o);
    free(p);

    p = port(TOTAL, "total");
    declines(p, "total", "ocl_ndrange", "");
    free(p);
    p = port(ROWS, "rows");
    o = apply(p, "rows", "ocl_ndrange", &two, 1); /* the nest is not perfect: 1-D */
    assert_non_null(strstr(o, "global=ROUND_UP(R,64) local=64"));
    free(o);
    free(p);
}

static void test_work_group_and_coarsen(void **state)
{
    (void)state;
    char *p = port(SCALE, "scale");
    char *o = apply(p, "scale", "ocl_ndrange", NULL, 0);
    long wg[2] = {256, 1};
    char *w = apply(o, "scale", "ocl_work_group", wg, 2);
    assert_non_null(strstr(w, "global=ROUND_UP(N,256) local=256\n"));
    long c[2] = {8, 0};
    char *k = apply(w, "scale", "ocl_coarsen", c, 2);
    assert_non_null(strstr(k, "global=ROUND_UP(CEIL_DIV(N,8),256) local=256\n"));
    assert_non_null(strstr(k, "(long)get_global_id(0) * 8 + kv_c;"));
    assert_non_null(strstr(k, "kv_c < 8; kv_c++"));
    declines(k, "scale", "ocl_coarsen", "no 1-D launch");
    long cs[2] = {4, 1};
    char *s = apply(w, "scale", "ocl_coarsen", cs, 2);
    assert_non_null(strstr(s, "+ (long)kv_c * (long)get_global_size(0);"));
    free(s);
    free(k);
    free(w);
    free(o);
    free(p);
    /* a kernel designed around its work-group keeps its size */
    declines(LOCAL_KERNEL, "scale", "ocl_work_group", "work-group functions");
    declines(LOCAL_KERNEL, "scale", "ocl_coarsen", "no 1-D launch");
}

static void test_local_tile__matrix_product(void **state)
{
    (void)state;
    char *p = port(GEMM2, "mm");
    long two = 2, t8 = 8;
    char *o = apply(p, "mm", "ocl_ndrange", &two, 1);
    char *t = apply(o, "mm", "ocl_local_tile", &t8, 1);
    assert_non_null(strstr(t, "// kevo: launch mm global=ROUND_UP(N,8),ROUND_UP(M,8) local=8,8\n"
                              "// kevo: launch mm_2 global=ROUND_UP(M*N,64) local=64\n"));
    assert_non_null(strstr(t, "__local float kv_ta[8][9];"));
    assert_non_null(strstr(t, "kv_ta[kv_li][kv_lj] = k < (K) ? a[i * K + k] : 0;"));
    assert_non_null(strstr(t, "kv_tb[kv_li][kv_lj] = k < (K) ? b[k * N + j] : 0;"));
    assert_non_null(strstr(t, "acc += kv_ta[kv_li][kv_kk] * kv_tb[kv_kk][kv_lj];"));
    assert_non_null(strstr(t, "barrier(CLK_LOCAL_MEM_FENCE);"));
    /* tiled once; its work-group size is now part of its design (the
     * elementwise kernel beside it keeps its own) */
    declines(t, "mm", "ocl_local_tile", "work-group functions");
    long wg[2] = {128, 4};
    char *w = apply(t, "mm", "ocl_work_group", wg, 2);
    assert_non_null(strstr(w, "global=ROUND_UP(N,8),ROUND_UP(M,8) local=8,8\n"));
    assert_non_null(strstr(w, "global=ROUND_UP(M*N,128) local=128\n"));
    free(w);
    free(t);
    free(o);
    o = apply(p, "mm", "ocl_ndrange", NULL, 0);
    declines(o, "mm", "ocl_local_tile", "no 2-D launch");
    free(o);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port__maps_types_qualifiers_and_maths),
        cmocka_unit_test(test_ndrange__one_and_two_dimensions),
        cmocka_unit_test(test_work_group_and_coarsen),
        cmocka_unit_test(test_local_tile__matrix_product),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
