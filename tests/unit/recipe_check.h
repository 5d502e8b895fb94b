/*
 * tests/unit/recipe_check.h - what the recipe tests share: apply a recipe
 * (asserting it applies), assert its text and its decline's reason, and
 * check that a rewritten source computes what the original computes (both
 * built with gcc -O2 -fopenmp plus the flags of their cflags line, linked
 * with a small driver that prints the outputs, run with OMP_NUM_THREADS as
 * set, outputs compared at rtol 1e-4). Included by one test file each (not
 * a test itself: tests/CMakeLists.txt globs test_*.c).
 */
#ifndef KEVO_TESTS_RECIPE_CHECK_H
#define KEVO_TESTS_RECIPE_CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/recipe.h"
#include "kevo/util.h"

#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define KEVO_TEST_UNUSED __attribute__((unused))

/* The drivers' common head: stdio, stdint, stdlib and a seeded generator
 * of floats in [-0.5, 0.5). */
#define DRIVER_HEAD                                                                                \
    "#include <stdio.h>\n#include <stdint.h>\n#include <stdlib.h>\n"                               \
    "static float rnd(unsigned *s) { *s = *s * 1103515245u + 12345u;\n"                            \
    "  return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f; }\n"

/* The matmul fixtures of the vectorize and pack tests (one prototype). */
/* C = A B, the dot-product form: j holds the reduction loop over k. */
static KEVO_TEST_UNUSED const char MATMUL_DOT[] =
    "#include <stdint.h>\n"
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    for (int64_t i = 0; i < M; i++)\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            float acc = 0.0f;\n"
    "            for (int64_t k = 0; k < K; k++)\n"
    "                acc += A[i * K + k] * B[k * N + j];\n"
    "            C[i * N + j] = acc;\n"
    "        }\n"
    "}\n";

/* C = A B, the row-update form of the suite's matmul references. */
static KEVO_TEST_UNUSED const char MATMUL_ROWS[] =
    "#include <stdint.h>\n"
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    for (int64_t i = 0; i < M; i++) {\n"
    "        float *c = C + i * N;\n"
    "        for (int64_t j = 0; j < N; j++)\n"
    "            c[j] = 0.0f;\n"
    "        for (int64_t k = 0; k < K; k++) {\n"
    "            float a = A[i * K + k];\n"
    "            const float *b = B + k * N;\n"
    "            for (int64_t j = 0; j < N; j++)\n"
    "                c[j] += a * b[j];\n"
    "        }\n"
    "    }\n"
    "}\n";

/* A driver for kernels with the prototype of MATMUL_DOT: the driver runs it at
 * several extents (M, N, K) and prints C. */
static KEVO_TEST_UNUSED const char MM_DRIVER[] = DRIVER_HEAD
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K);\n"
    "int main(void) { unsigned s = 7;\n"
    "  const int64_t ext[][3] = {{7, 37, 13}, {3, 5, 4}, {2, 16, 33}, {1, 1, 1}, {0, 9, 3},\n"
    "                            {4, 0, 3}, {5, 19, 0}};\n"
    "  for (int e = 0; e < 7; e++) { int64_t M = ext[e][0], N = ext[e][1], K = ext[e][2];\n"
    "    float *A = malloc((M*K+N*K+M*N+1)*4), *B = malloc((K*N+N*K+M*N+1)*4), *C = malloc((M*N+1)*4);\n"
    "    for (int64_t i = 0; i < M*K+N*K+M*N; i++) A[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < K*N+N*K+M*N; i++) B[i] = rnd(&s);\n"
    "    for (int64_t i = 0; i < M*N; i++) C[i] = -7.0f;\n"
    "    mm(A, B, C, M, N, K);\n"
    "    for (int64_t i = 0; i < M*N; i++) printf(\"%.9g\\n\", C[i]);\n"
    "    free(A); free(B); free(C); }\n"
    "  return 0; }\n";

/* C = A B^T with row pointers, the suite's matmul_trans_b reference form:
 * the reads of B are strided in j. */
static KEVO_TEST_UNUSED const char MATMUL_TB[] =
    "#include <stdint.h>\n"
    "void mm(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)\n"
    "{\n"
    "    for (int64_t i = 0; i < M; i++) {\n"
    "        const float *a = A + i * K;\n"
    "        for (int64_t j = 0; j < N; j++) {\n"
    "            const float *b = B + j * K;\n"
    "            float s = 0.0f;\n"
    "            for (int64_t k = 0; k < K; k++)\n"
    "                s += a[k] * b[k];\n"
    "            C[i * N + j] = s;\n"
    "        }\n"
    "    }\n"
    "}\n";

/* MM_DRIVER with an aligned_alloc that always fails (it takes the libc
 * one's place in the linked program). */
static KEVO_TEST_UNUSED const char NO_ALLOC_DRIVER[] =
    "#include <stddef.h>\n"
    "void *aligned_alloc(size_t a, size_t n) { (void)a; (void)n; return NULL; }\n";

static KEVO_TEST_UNUSED char *no_alloc_driver(void)
{
    size_t a = strlen(NO_ALLOC_DRIVER), b = strlen(MM_DRIVER);
    char *d = malloc(a + b + 1);
    assert_non_null(d);
    memcpy(d, NO_ALLOC_DRIVER, a);
    memcpy(d + a, MM_DRIVER, b + 1);
    return d;
}

/* src with the first `from` replaced by `to` (asserted to be there). */
static KEVO_TEST_UNUSED char *with(const char *src, const char *from, const char *to)
{
    const char *at = strstr(src, from);
    assert_non_null(at);
    size_t a = (size_t)(at - src), f = strlen(from), t = strlen(to);
    char *out = malloc(strlen(src) - f + t + 1);
    assert_non_null(out);
    memcpy(out, src, a);
    memcpy(out + a, to, t);
    strcpy(out + a + t, at + f);
    return out;
}

static KEVO_TEST_UNUSED char *apply_ok(const char *recipe, const long *params, size_t n, const char *src,
                      const char *kernel)
{
    char *out = NULL;
    int rc = kevo_recipe_apply(&out, recipe, params, n, src, kernel);
    if (rc != 0)
        print_error("%s failed: %s\n", recipe, kevo_error_last());
    assert_int_equal(rc, 0);
    assert_non_null(out);
    return out;
}

static KEVO_TEST_UNUSED void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        print_error("expected to find:\n%s\nin:\n%s\n", needle, hay);
    assert_non_null(strstr(hay, needle));
}

static KEVO_TEST_UNUSED void assert_lacks(const char *hay, const char *needle)
{
    if (strstr(hay, needle))
        print_error("did not expect:\n%s\nin:\n%s\n", needle, hay);
    assert_null(strstr(hay, needle));
}

/* The recipe declines with KEVO_EINVAL and a reason containing `why`. */
static KEVO_TEST_UNUSED void assert_declines(const char *recipe, const long *params, size_t n, const char *src,
                            const char *kernel, const char *why)
{
    char *out = NULL;
    int rc = kevo_recipe_apply(&out, recipe, params, n, src, kernel);
    if (rc == 0)
        print_error("%s unexpectedly applied:\n%s\n", recipe, out);
    assert_int_equal(rc, KEVO_EINVAL);
    assert_null(out);
    if (!strstr(kevo_error_last(), why))
        print_error("reason '%s' lacks '%s'\n", kevo_error_last(), why);
    assert_non_null(strstr(kevo_error_last(), why));
    assert_non_null(strstr(kevo_error_last(), recipe));
}

static KEVO_TEST_UNUSED int run(char *const argv[], const char *stdout_path)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status = -1;
    posix_spawn_file_actions_init(&fa);
    if (stdout_path)
        posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) == 0)
        waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Append the flags of a cflags line (each on kevo's allow-list) to argv[n..cap);
 * the new count. Tokenises `flags` in place. */
static KEVO_TEST_UNUSED int append_cflags(char **argv, int n, int cap, char *flags)
{
    for (char *tok = strtok(flags, " "); tok && n < cap; tok = strtok(NULL, " ")) {
        assert_true(kevo_cflags_allowed(tok));
        argv[n++] = tok;
    }
    return n;
}

/* Build `src` (with its cflags line) + driver in dir under `name`, run it,
 * and return its output (caller frees). */
static KEVO_TEST_UNUSED char *build_and_run(const char *dir, const char *name, const char *src, const char *driver,
                           const char *kernel)
{
    char kpath[512], dpath[512], kobj[512], dobj[512], bin[512], outp[512], def[128];
    char *flags = NULL, *output = NULL;
    snprintf(kpath, sizeof(kpath), "%s/%s.c", dir, name);
    snprintf(dpath, sizeof(dpath), "%s/%s_driver.c", dir, name);
    snprintf(kobj, sizeof(kobj), "%s/%s.o", dir, name);
    snprintf(dobj, sizeof(dobj), "%s/%s_driver.o", dir, name);
    snprintf(bin, sizeof(bin), "%s/%s.bin", dir, name);
    snprintf(outp, sizeof(outp), "%s/%s.out", dir, name);
    snprintf(def, sizeof(def), "-DKERNEL=%s", kernel);
    assert_int_equal(kevo_file_write(kpath, src, strlen(src)), 0);
    assert_int_equal(kevo_file_write(dpath, driver, strlen(driver)), 0);

    assert_int_equal(kevo_recipe_cflags_get(&flags, src), 0);
    char *argv[40];
    int n = 0;
    argv[n++] = "gcc";
    argv[n++] = "-O2";
    argv[n++] = "-fopenmp";
    argv[n++] = "-Werror=implicit-function-declaration";
    n = append_cflags(argv, n, 30, flags);
    argv[n++] = "-c";
    argv[n++] = kpath;
    argv[n++] = "-o";
    argv[n++] = kobj;
    argv[n] = NULL;
    int rc = run(argv, NULL);
    if (rc != 0)
        print_error("candidate does not compile:\n%s\n", src);
    assert_int_equal(rc, 0);
    char *dargv[] = {"gcc", "-O2", def, "-c", dpath, "-o", dobj, NULL};
    assert_int_equal(run(dargv, NULL), 0);
    char *largv[] = {"gcc", "-fopenmp", dobj, kobj, "-o", bin, "-lm", NULL};
    assert_int_equal(run(largv, NULL), 0);
    char *rargv[] = {bin, NULL};
    assert_int_equal(run(rargv, outp), 0);
    assert_int_equal(kevo_file_read(&output, NULL, outp), 0);
    free(flags);
    return output;
}

/* The rewritten source prints exactly what the original prints (a
 * rewrite that keeps every operation in its order: bit for bit), and the
 * driver prints more than min_len bytes. */
static KEVO_TEST_UNUSED void assert_same_output(const char *orig, const char *rewritten,
                                                const char *driver, const char *kernel,
                                                size_t min_len)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-exact-"), 0);
    char *a = build_and_run(dir, "orig", orig, driver, kernel);
    char *b = build_and_run(dir, "new", rewritten, driver, kernel);
    if (strcmp(a, b) != 0)
        print_error("outputs differ; rewritten:\n%s\n", rewritten);
    assert_true(strlen(a) > min_len);
    assert_string_equal(a, b);
    free(a);
    free(b);
    kevo_rmtree(dir);
    free(dir);
}

/* The rewritten source computes what the original computes (rtol 1e-4). */
static KEVO_TEST_UNUSED void assert_same_result(const char *orig, const char *rewritten, const char *driver,
                               const char *kernel)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-recipe-"), 0);
    char *a = build_and_run(dir, "orig", orig, driver, kernel);
    char *b = build_and_run(dir, "new", rewritten, driver, kernel);
    char *pa = a, *pb = b;
    size_t count = 0;
    for (;;) {
        char *ea, *eb;
        double x = strtod(pa, &ea), y = strtod(pb, &eb);
        if (ea == pa || eb == pb) {
            assert_true(ea == pa && eb == pb); /* same number of values */
            break;
        }
        double tol = 1e-5 + 1e-4 * fmax(fabs(x), fabs(y));
        if (!(fabs(x - y) <= tol || (isinf(x) && x == y)))
            print_error("value %zu differs: %.9g vs %.9g\n--- rewritten:\n%s\n", count, x, y,
                        rewritten);
        assert_true(fabs(x - y) <= tol || (isinf(x) && x == y));
        pa = ea;
        pb = eb;
        count++;
    }
    assert_true(count > 0);
    free(a);
    free(b);
    kevo_rmtree(dir);
    free(dir);
}

/* Apply a chain of recipes (asserting each step applies). */
static KEVO_TEST_UNUSED char *chain_ok(const kevo_recipe_step *steps, size_t n, const char *src, const char *kernel)
{
    char *out = NULL;
    int rc = kevo_recipe_apply_chain(&out, steps, n, src, kernel);
    if (rc != 0)
        print_error("chain failed: %s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    return out;
}

#endif
