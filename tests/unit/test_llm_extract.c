/*
 * tests/unit/test_llm_extract.c - kevo_llm_extract_code() over the reply
 * shapes models actually produce: one or many fenced blocks, related and
 * foreign language tags, drafts followed by final versions, test harnesses
 * with main(), CRLF, unterminated fences, no fences at all, and replies
 * that hold no kernel (whose reason is shown to the model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/sys/backend.h"
#include "kevo/llm.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RELU                                                                                       \
    "void relu(const float *x, float *y, int64_t n)\n{\n    for (int64_t i = 0; i < n; i++)\n    " \
    "    y[i] = x[i] > 0 ? x[i] : 0;\n}\n"

/* Extract and compare, or fail showing what came back. */
/* The fence tags the CUDA and OpenCL backends give (kevo_backend.code_fence_tags). */
#define CUDA_TAGS (kevo_backend_find("cuda")->code_fence_tags)
#define OPENCL_TAGS (kevo_backend_find("opencl")->code_fence_tags)

static void expect_code(const char *reply, const char *lang, const char *kernel,
                        const char *expected)
{
    char *out = NULL;
    int rc = kevo_llm_extract_code(&out, reply, lang, kernel);
    if (rc != 0) {
        print_error("extract failed (%d): %s\n", rc, kevo_error_last());
        fail();
    }
    assert_string_equal(out, expected);
    free(out);
}

static void expect_not_found(const char *reply, const char *lang, const char *kernel,
                             const char *reason_part)
{
    char *out = (char *)1;
    int rc = kevo_llm_extract_code(&out, reply, lang, kernel);
    if (rc != KEVO_ENOTFOUND) {
        print_error("expected ENOTFOUND, got %d: %s\n", rc, out && rc == 0 ? out : "");
        fail();
    }
    assert_null(out);
    if (!strstr(kevo_error_last(), reason_part)) {
        print_error("reason '%s' lacks '%s'\n", kevo_error_last(), reason_part);
        fail();
    }
}

static void test_llm_extract__single_c_block(void **state)
{
    expect_code("Here is a fast kernel:\n\n```c\n#include <stdint.h>\n" RELU "```\n\nIt uses a "
                "branchless select.",
                "c", "relu", "#include <stdint.h>\n" RELU);
}

static void test_llm_extract__crlf(void **state)
{
    expect_code("Sure.\r\n```c\r\nvoid relu(const float *x, float *y, int64_t n)\r\n{\r\n}\r\n```"
                "\r\nDone.\r\n",
                "c", "relu", "void relu(const float *x, float *y, int64_t n)\n{\n}\n");
}

static void test_llm_extract__picks_language_over_other_blocks(void **state)
{
    expect_code(
        "Reference:\n```python\ndef relu(x):\n    return max(x, 0)\n```\nKernel:\n```c\n" RELU
        "```\nBuild:\n```bash\ngcc -O3 relu.c\n```\n",
        "c", "relu", RELU);
}

static void test_llm_extract__picks_block_that_defines_kernel(void **state)
{
    expect_code("Helper first:\n```c\nstatic inline float max0(float v) { return v > 0 ? v : 0; }\n"
                "```\nThen the kernel:\n```c\n" RELU "```\n",
                "c", "relu", RELU);
    /* ...even when the helper block comes last */
    expect_code("```c\n" RELU "```\n```c\nstatic inline float max0(float v) { return v; }\n```\n",
                "c", "relu", RELU);
}

static void test_llm_extract__last_definition_wins(void **state)
{
    expect_code(
        "First draft:\n```c\nvoid relu(const float *x, float *y, int64_t n) { /* v1 */ }\n"
        "```\nImproved:\n```c\nvoid relu(const float *x, float *y, int64_t n) { /* v2 */ }\n"
        "```\n",
        "c", "relu", "void relu(const float *x, float *y, int64_t n) { /* v2 */ }\n");
}

static void test_llm_extract__prefers_block_without_main(void **state)
{
    expect_code("```c\n" RELU "```\nAnd a test:\n```c\n#include <stdio.h>\n" RELU
                "int main(void) { return 0; }\n```\n",
                "c", "relu", RELU);
}

static void test_llm_extract__related_and_exact_tags(void **state)
{
    /* a C kernel labelled c++ is still taken when nothing better exists */
    expect_code("```cpp\n" RELU "```\n", "c", "relu", RELU);
    /* an exact tag beats a related one, wherever it is */
    expect_code("```c\nvoid relu(const float *x, float *y, int64_t n) { /* c */ }\n```\n"
                "```c++\nvoid relu(const float *x, float *y, int64_t n) { /* cpp */ }\n```\n",
                "c", "relu", "void relu(const float *x, float *y, int64_t n) { /* c */ }\n");
    expect_code("```C\n" RELU "```\n", "c", "relu", RELU); /* tag case does not matter */
    expect_code("``` c title=\"relu.c\"\n" RELU "```\n", "c", "relu", RELU);
    expect_code("```{.c}\n" RELU "```\n", "c", "relu", RELU);
}

static void test_llm_extract__bare_fence(void **state)
{
    expect_code("```\n" RELU "```", "c", "relu", RELU);
    /* an exact tag beats a bare fence */
    expect_code(
        "```\nvoid relu(float *y) { /* bare */ }\n```\n```c\nvoid relu(float *y) { /* c */ }"
        "\n```\n```\nvoid relu(float *y) { /* bare again */ }\n```\n",
        "c", "relu", "void relu(float *y) { /* c */ }\n");
}

static void test_llm_extract__unterminated_fence(void **state)
{
    expect_code("Here you go:\n```c\n" RELU, "c", "relu", RELU);
    expect_code("```c\n" RELU "\n\n", "c", "relu", RELU);
}

static void test_llm_extract__tilde_and_long_fences(void **state)
{
    expect_code("~~~c\n" RELU "~~~\n", "c", "relu", RELU);
    /* a four-backtick fence may contain a three-backtick line */
    expect_code("````c\n// usage: ```relu(x, y, n)```\n" RELU "```\n" RELU "````\n", "c", "relu",
                "// usage: ```relu(x, y, n)```\n" RELU "```\n" RELU);
    /* a closing fence must not carry an info string */
    expect_code("```c\n" RELU "```c\nvoid more(void) {}\n```\n", "c", "relu",
                RELU "```c\nvoid more(void) {}\n");
}

static void test_llm_extract__indented_fence(void **state)
{
    expect_code("1. Write the kernel:\n\n   ```c\n   " RELU "   ```\n", "c", "relu", "   " RELU);
}

static void test_llm_extract__definition_forms(void **state)
{
    /* return type on its own line, attributes, restrict, comments between */
    const char *k = "static void\nrelu (const float *restrict x, float *restrict y,\n"
                    "      int64_t n) __attribute__((hot))\n{\n}\n";
    char reply[512];
    snprintf(reply, sizeof(reply), "```c\n%s```\n", k);
    expect_code(reply, "c", "relu", k);
    /* only a call, a prototype, a comment and a string mention the name */
    expect_not_found(
        "```c\nvoid relu(const float *x, float *y, int64_t n);\n"
        "/* relu(x) { } */\nvoid f(void) { relu(0, 0, 0); puts(\"relu() {\"); }\n```\n",
        "c", "relu", "defines the function `relu`");
    /* a longer name that contains the kernel's is not the kernel */
    expect_not_found("```c\nvoid relu_v2(float *y) { }\nvoid my_relu(float *y) { }\n```\n", "c",
                     "relu", "`relu`");
}

static void test_llm_extract__cuda_and_opencl(void **state)
{
    const char *cu = "__global__ void relu(const float *x, float *y, int64_t n)\n{\n"
                     "    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
                     "    if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n";
    char reply[1024];
    snprintf(reply, sizeof(reply),
             "```cpp\n// host helper\nvoid launch(void) {}\n```\n```cuda\n%s```\n", cu);
    expect_code(reply, CUDA_TAGS, "relu", cu);
    snprintf(reply, sizeof(reply), "```cu\n%s```\n", cu);
    expect_code(reply, CUDA_TAGS, "relu", cu);

    const char *cl = "__kernel void relu(__global const float *x, __global float *y)\n{\n"
                     "    size_t i = get_global_id(0);\n    y[i] = fmax(x[i], 0.0f);\n}\n";
    snprintf(reply, sizeof(reply), "```opencl\n%s```\n", cl);
    expect_code(reply, OPENCL_TAGS, "relu", cl);
    snprintf(reply, sizeof(reply), "```cl\n%s```\n", cl);
    expect_code(reply, OPENCL_TAGS, "relu", cl);
    snprintf(reply, sizeof(reply), "```c\n%s```\n", cl); /* related tag */
    expect_code(reply, OPENCL_TAGS, "relu", cl);
    /* a cuda block is not an OpenCL kernel */
    snprintf(reply, sizeof(reply), "```cuda\n%s```\n", cu);
    expect_not_found(reply, OPENCL_TAGS, "relu", "none holds opencl code");
}

static void test_llm_extract__no_fences(void **state)
{
    /* the whole reply is code */
    expect_code("#include <stdint.h>\n" RELU, "c", "relu", "#include <stdint.h>\n" RELU);
    /* prose around unfenced code is trimmed */
    expect_code("Here is the kernel you asked for:\n\n#include <stdint.h>\n" RELU
                "\nThis version is vectorisable by the compiler.\n",
                "c", "relu", "#include <stdint.h>\n" RELU);
    expect_code("void relu(float *y)\n{\n    y[0] = 0;\n}", "c", "relu",
                "void relu(float *y)\n{\n    y[0] = 0;\n}\n");
    /* prose only */
    expect_not_found("I cannot help with that. Maybe use a loop.", "c", "relu",
                     "no fenced code block");
    /* code without the kernel */
    expect_not_found("static int helper(int v)\n{\n    return v;\n}\n", "c", "relu",
                     "does not define the function `relu`");
}

static void test_llm_extract__foreign_blocks_only(void **state)
{
    expect_not_found("```python\nimport numpy as np\n```\n```bash\nmake\n```\n", "c", "relu",
                     "none holds c code");
    expect_not_found("```python\nimport numpy as np\n```\n", "c", "relu", "(python)");
}

static void test_llm_extract__any_language_and_no_kernel_name(void **state)
{
    expect_code("```rust\nfn main() {}\n```\n```c\nint x;\n```\n", NULL, NULL, "int x;\n");
    expect_code("```c\nint a;\n```\n```c\nint b;\n```\n", "c", NULL, "int b;\n");
    expect_code("```python\nprint(1)\n```\n", NULL, NULL, "print(1)\n");
}

static void test_llm_extract__empty_and_bad_input(void **state)
{
    char *out = NULL;
    expect_not_found("", "c", "relu", "empty");
    expect_not_found(" \n\r\n\t", "c", "relu", "empty");
    expect_not_found(NULL, "c", "relu", "empty");
    /* empty blocks are skipped */
    expect_not_found("```c\n```\n```c\n\n\n```\n", "c", "relu", "blocks are empty");
    expect_code("```c\n```\n```c\n" RELU "```\n", "c", "relu", RELU);
    assert_int_equal(kevo_llm_extract_code(&out, "```c\nint x;\n```", "fortran", NULL),
                     KEVO_EINVAL);
    assert_null(out);
}

static void test_llm_extract__blank_lines_trimmed(void **state)
{
    expect_code("```c\n\n\n   \n" RELU "\n\n\n```\n", "c", "relu", RELU);
}

/* A reply of n copies of `piece` in a block, then the real kernel. */
static char *padded_reply(const char *piece, size_t n)
{
    size_t pl = strlen(piece), cap = n * pl + strlen(RELU) + 64;
    char *reply = malloc(cap);
    assert_non_null(reply);
    memcpy(reply, "```c\n", 5);
    for (size_t i = 0; i < n; i++)
        memcpy(reply + 5 + i * pl, piece, pl);
    snprintf(reply + 5 + n * pl, cap - 5 - n * pl, "\n```\n```c\n%s```\n", RELU);
    return reply;
}

/* 200 KB of unbalanced "relu(" inside a block, then the real kernel:
 * found in time that grows with the reply's length, not its square. The
 * same reply at a quarter of the length is timed beside it (best of
 * three, alternating): linear work reads about 4x, a scan that goes back
 * over the open parentheses 16x. A wall-clock bound (2 s) failed under
 * ASan on a loaded 2-core machine, where this reply takes 1.5 s. */
static void test_llm_extract__pathological_reply_is_fast(void **state)
{
    (void)state;
    size_t n = 40000;
    char *big = padded_reply("relu(", n), *small = padded_reply("relu(", n / 4);
    double best_big = 1e9, best_small = 1e9;
    for (int round = 0; round < 3; round++) {
        double t0 = kevo_now_s();
        expect_code(small, "c", "relu", RELU);
        double t1 = kevo_now_s();
        expect_code(big, "c", "relu", RELU);
        double t2 = kevo_now_s();
        best_small = t1 - t0 < best_small ? t1 - t0 : best_small;
        best_big = t2 - t1 < best_big ? t2 - t1 : best_big;
    }
    bool linear = best_big < 8.0 * best_small + 0.01;
    if (!linear)
        print_error("%zu bytes %.4f s, %zu bytes %.4f s\n", n * 5, best_big, n * 5 / 4,
                    best_small);
    free(big);
    free(small);
    assert_true(linear);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_extract__single_c_block),
        cmocka_unit_test(test_llm_extract__crlf),
        cmocka_unit_test(test_llm_extract__picks_language_over_other_blocks),
        cmocka_unit_test(test_llm_extract__picks_block_that_defines_kernel),
        cmocka_unit_test(test_llm_extract__last_definition_wins),
        cmocka_unit_test(test_llm_extract__prefers_block_without_main),
        cmocka_unit_test(test_llm_extract__related_and_exact_tags),
        cmocka_unit_test(test_llm_extract__bare_fence),
        cmocka_unit_test(test_llm_extract__unterminated_fence),
        cmocka_unit_test(test_llm_extract__tilde_and_long_fences),
        cmocka_unit_test(test_llm_extract__indented_fence),
        cmocka_unit_test(test_llm_extract__definition_forms),
        cmocka_unit_test(test_llm_extract__cuda_and_opencl),
        cmocka_unit_test(test_llm_extract__no_fences),
        cmocka_unit_test(test_llm_extract__foreign_blocks_only),
        cmocka_unit_test(test_llm_extract__any_language_and_no_kernel_name),
        cmocka_unit_test(test_llm_extract__empty_and_bad_input),
        cmocka_unit_test(test_llm_extract__blank_lines_trimmed),
        cmocka_unit_test(test_llm_extract__pathological_reply_is_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
