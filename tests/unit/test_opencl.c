/*
 * tests/unit/test_opencl.c - the OpenCL backend's pure parts: the `// kevo:`
 * directives and size expressions (src/backend/opencl_spec.c), the C they
 * become in the runner, and the OpenCL anti-hack gate
 * (src/backend/source_gate_opencl.c); plus the backend registry. Nothing here
 * needs an OpenCL platform or runs a kernel (tests/integration/
 * test_opencl_candidates.sh does).
 *
 * Tasks come from suites/c (ctest runs in the source tree).
 */
#include "backend/opencl_spec.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define assert_contains(hay, needle) assert_contains_at(hay, needle, __FILE__, __LINE__)

static void assert_contains_at(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle)) {
        print_error("%s:%d: expected \"%s\" in \"%s\"\n", file, line, needle, hay ? hay : "(null)");
        _fail(file, line);
    }
}

static kevo_task *load(const char *dir)
{
    kevo_task *t = NULL;
    assert_int_equal(kevo_task_load(&t, dir), 0);
    return t;
}

/* Parse; returns the spec (or NULL when there were problems, then *problems). */
static kevo_ocl_spec *parse(const kevo_task *t, const char *src, kevo_buf *problems, bool *rejected)
{
    kevo_ocl_spec *spec = NULL;
    assert_int_equal(kevo_ocl_spec_parse(&spec, problems, rejected, t, src), 0);
    assert_non_null(spec);
    if (problems->len) {
        kevo_ocl_spec_free(spec);
        return NULL;
    }
    return spec;
}

static void test_opencl__spec_two_launches_and_scratch(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/013_softmax_rows"); /* x, y, R, C */
    const char *src = "// kevo: scratch stats f32 2*R\n"
                      "// kevo: launch row_stats global=R*64 local=64\n"
                      "//   a plain comment inside the block\n"
                      "// kevo: launch normalise global=ROUND_UP(R*C, 256) local=256 "
                      "args=x,y,C,stats\n"
                      "// kevo: options -cl-fast-relaxed-math\n"
                      "\n__kernel void row_stats() {}\n";
    kevo_buf problems = {0};
    bool rejected = true;
    kevo_ocl_spec *spec = parse(t, src, &problems, &rejected);
    assert_null(problems.ptr);
    assert_false(rejected);
    assert_int_equal(spec->nlaunches, 2);
    assert_int_equal(spec->nscratch, 1);
    assert_string_equal(spec->scratch[0].name, "stats");
    assert_int_equal(spec->scratch[0].type, KEVO_DT_F32);
    /* default args: every param, then every scratch buffer */
    const kevo_ocl_launch *a = &spec->launches[0];
    assert_string_equal(a->kernel, "row_stats");
    assert_int_equal(a->nargs, 5);
    assert_false(a->args[3].scratch);
    assert_int_equal(a->args[3].index, 3);
    assert_true(a->args[4].scratch);
    /* args= picks and orders */
    const kevo_ocl_launch *b = &spec->launches[1];
    assert_int_equal(b->nargs, 4);
    assert_int_equal(b->args[2].index, 3);
    assert_true(b->args[3].scratch);
    assert_true(b->has_local);
    assert_int_equal(b->dims, 1);
    /* evaluated on the timed sizes R=4096, C=2048 */
    int64_t v;
    assert_int_equal(kevo_ocl_expr_eval(&v, b->global[0], t, &t->sizes), 0);
    assert_int_equal(v, 4096 * 2048);
    assert_int_equal(kevo_ocl_expr_eval(&v, spec->scratch[0].count, t, &t->sizes), 0);
    assert_int_equal(v, 8192);
    assert_string_equal(spec->options[0], "-cl-fast-relaxed-math");
    assert_null(spec->options[1]);
    kevo_ocl_spec_free(spec);
    kevo_task_free(t);
}

static void test_opencl__spec_two_dimensions(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/015_matmul_square"); /* A, B, C, N */
    const char *src = "// kevo: launch mm global=ROUND_UP(N,16), ROUND_UP(N,16) local=16,16\n";
    kevo_buf problems = {0};
    bool rejected;
    kevo_ocl_spec *spec = parse(t, src, &problems, &rejected);
    assert_non_null(spec);
    assert_int_equal(spec->launches[0].dims, 2);
    int64_t v;
    /* N=67 in the last check set */
    assert_int_equal(
        kevo_ocl_expr_eval(&v, spec->launches[0].global[1], t, &t->check_sizes[t->ncheck - 1]), 0);
    assert_int_equal(v, 80);
    kevo_buf c = {0};
    kevo_ocl_expr_emit_c(&c, spec->launches[0].global[0]);
    assert_string_equal(c.ptr, "KEVO_OCL_ROUND_UP(S(3), INT64_C(16))");
    kevo_buf_free(&c);
    kevo_ocl_spec_free(spec);
    kevo_task_free(t);
}

static void test_opencl__spec_expressions(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/013_softmax_rows"); /* R=4096, C=2048 */
    static const struct {
        const char *expr;
        int64_t value;
    } cases[] = {{"CEIL_DIV(C, 3)", 683},       {"MIN(R, C) + MAX(R, C)", 6144},
                 {"-(R - C) * 2 + 8192", 4096}, {"C % 1000 / 2", 24},
                 {"ROUND_UP(1, 256)", 256},     {"((R))", 4096}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char src[200];
        snprintf(src, sizeof(src), "// kevo: launch k global=%s\n", cases[i].expr);
        kevo_buf problems = {0};
        bool rejected;
        kevo_ocl_spec *spec = parse(t, src, &problems, &rejected);
        if (!spec)
            fail_msg("%s: %s", cases[i].expr, problems.ptr);
        int64_t v = 0;
        assert_int_equal(kevo_ocl_expr_eval(&v, spec->launches[0].global[0], t, &t->sizes), 0);
        if (v != cases[i].value)
            fail_msg("%s = %lld, expected %lld", cases[i].expr, (long long)v,
                     (long long)cases[i].value);
        kevo_ocl_spec_free(spec);
    }
    /* a division by zero is found when evaluated, not parsed */
    kevo_buf problems = {0};
    bool rejected;
    kevo_ocl_spec *spec =
        parse(t, "// kevo: launch k global=R / (C - 2048)\n", &problems, &rejected);
    assert_non_null(spec);
    int64_t v;
    assert_int_equal(kevo_ocl_expr_eval(&v, spec->launches[0].global[0], t, &t->sizes),
                     KEVO_EINVAL);
    assert_contains(kevo_error_last(), "division by zero");
    kevo_ocl_spec_free(spec);
    spec = parse(t, "// kevo: launch k global=R*R*R*R*R*R\n", &problems, &rejected);
    assert_int_equal(kevo_ocl_expr_eval(&v, spec->launches[0].global[0], t, &t->sizes),
                     KEVO_EINVAL);
    assert_contains(kevo_error_last(), "overflow");
    kevo_ocl_spec_free(spec);
    kevo_task_free(t);
}

static void test_opencl__spec_problems(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/013_softmax_rows");
    static const struct {
        const char *src;
        const char *message;
        bool rejected;
    } cases[] = {
        {"__kernel void k() {}\n", "no launch given", false},
        {"// kevo: launch k global=N\n", "unknown name 'N' (names allowed: R, C)", false},
        {"// kevo: launch k global=x\n", "'x' is not an integer scalar param", false},
        {"// kevo: launch k global=POW(R,2)\n", "unknown function 'POW'", false},
        {"// kevo: launch k global=R,C local=64\n", "local= has 1 sizes but global= has 2", false},
        {"// kevo: launch k local=64\n", "no global= size", false},
        {"// kevo: launch k global=R+\n", "expression ends too early", false},
        {"// kevo: launch k global=R*1.5\n", "only integer literals", false},
        {"// kevo: launch k global=R args=x,nope\n", "`nope` is neither a param", false},
        {"// kevo: launch k global=R,C,R,C\n", "1 to 3 comma-separated sizes", false},
        {"// kevo: scratch s f16 R\n// kevo: launch k global=R\n", "is not one of f32", false},
        {"// kevo: scratch x f32 R\n// kevo: launch k global=R\n", "already used", false},
        {"// kevo: launchx k\n", "unknown directive", false},
        {"__kernel void k() {}\n// kevo: launch k global=R\n", "before any code", false},
        {"// kevo: options -cl-fast-relaxed-math -I/etc\n// kevo: launch k global=R\n",
         "`-I/etc` is not on the allow-list", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kevo_buf problems = {0};
        bool rejected = false;
        kevo_ocl_spec *spec = parse(t, cases[i].src, &problems, &rejected);
        if (spec)
            fail_msg("case %zu parsed: %s", i, cases[i].src);
        assert_contains(problems.ptr, cases[i].message);
        assert_int_equal(rejected, cases[i].rejected);
        kevo_buf_free(&problems);
    }
    kevo_task_free(t);
}

static int antihack(const kevo_task *t, const char *src, kevo_buf *findings)
{
    int violations = -1;
    const kevo_backend *be = kevo_backend_find("opencl"); /* the gate through the vtable */
    assert_non_null(be->source_gate);
    assert_int_equal(be->source_gate(be, t, src, &violations, findings), 0);
    return violations;
}

static void test_opencl__antihack_accepts_plain_kernels(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/001_relu");
    kevo_buf f = {0};
    const char *src =
        "// kevo: launch relu global=ROUND_UP(N,256) local=256\n"
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "#define LS 256\n"
        "static float helper(float v) { return fmax(v, 0.0f) + 0.0f * INFINITY * 0; }\n"
        "__attribute__((reqd_work_group_size(LS, 1, 1)))\n"
        "__kernel void relu(__global const float *x, __global float *y, const long N) {\n"
        "    __local float tmp[LS];\n"
        "    size_t i = get_global_id(0);\n"
        "    tmp[get_local_id(0)] = i < N ? x[i] : 0.0f;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    if (i < N) y[i] = helper(tmp[get_local_id(0)]) + (float)native_exp(0.0f) - 1.0f;\n"
        "}\n";
    if (antihack(t, src, &f) != 0)
        fail_msg("rejected: %s", f.ptr);
    kevo_buf_free(&f);
    kevo_task_free(t);
}

static void test_opencl__antihack_rejects(void **state)
{
    (void)state;
    kevo_task *t = load("suites/c/level1/001_relu");
    static const struct {
        const char *src;
        const char *finding;
    } cases[] = {
        {"#include \"/etc/passwd\"\n__kernel void k() {}\n", "line 1: include"},
        {"__kernel void k(__global float *y) { printf(\"%f\", y[0]); }\n", "printf"},
        {"int system(__constant char *c);\n__kernel void k() { system(\"id\"); }\n",
         "extern-function: `system` is declared but not defined"},
        {"__kernel void k() { __asm__(\"nop\"); }\n", "asm"},
        {"#pragma OPENCL EXTENSION cl_intel_printf : enable\n__kernel void k() {}\n",
         "extension `cl_intel_printf` is not allowed"},
        {"__attribute__((constructor)) void init(void) {}\n__kernel void k() {}\n", "constructor"},
        {"__kernel void k(__global float *reference_out) {}\n", "reference"},
        {"void kevo_harness_call(void) {}\n__kernel void k() { kevo_harness_call(); }\n",
         "reference"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kevo_buf f = {0};
        if (antihack(t, cases[i].src, &f) < 1)
            fail_msg("case %zu accepted: %s", i, cases[i].src);
        assert_contains(f.ptr, cases[i].finding);
        kevo_buf_free(&f);
    }
    kevo_task_free(t);
}

static void test_opencl__registry(void **state)
{
    (void)state;
    const kevo_backend *ocl = kevo_backend_find("opencl");
    const kevo_backend *cuda = kevo_backend_find("cuda");
    assert_non_null(ocl);
    assert_non_null(cuda);
    assert_string_equal(ocl->candidate_ext, ".cl");
    assert_string_equal(cuda->candidate_ext, ".cu");
    assert_non_null(ocl->runner_env);
    assert_true(cuda->flags & KEVO_BACKEND_NO_AS_LIMIT);
    int n = 0;
    for (const char *const *name = kevo_backend_names(); *name; name++)
        n++;
    assert_int_equal(n, 3);
    /* Without a GPU, CUDA says why it cannot run: never a verdict on the kernel. */
    const char *why = NULL;
    if (!cuda->can_run(cuda, &why))
        assert_contains(why, "no CUDA device");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opencl__spec_two_launches_and_scratch),
        cmocka_unit_test(test_opencl__spec_two_dimensions),
        cmocka_unit_test(test_opencl__spec_expressions),
        cmocka_unit_test(test_opencl__spec_problems),
        cmocka_unit_test(test_opencl__antihack_accepts_plain_kernels),
        cmocka_unit_test(test_opencl__antihack_rejects),
        cmocka_unit_test(test_opencl__registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
