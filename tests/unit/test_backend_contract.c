/*
 * test_backend_contract.c - the kevo_backend contract
 * (include/kevo/sys/backend.h): one list of tests run against every
 * registered backend (kevo_backend_names), plus the registry itself.
 *
 * What each backend must do: say who it is (version, name, extension,
 * fence language), be found by name, build a trivially correct candidate
 * of a tiny task (written here, in a temporary folder) into a runner,
 * turn a syntax error and a refused build hint into a verdict (ok=false
 * with diagnostics), never a negative error, and give results that
 * kevo_build_result_clear frees entirely (the sanitizer build checks the
 * "entirely": run it under -DKEVO_SANITIZE=ON too).
 *
 * A backend whose toolchain is missing here (build returns KEVO_EINFRA)
 * has its build tests skipped with the reason printed. Building needs no
 * device (the CUDA backend compiles without a GPU); running a runner is
 * the verifier's business and not tested here.
 *
 * It must not: switch on a backend's name except to pick the candidate
 * sources below (written in that backend's language), or look inside a
 * backend's ctx. A registered backend with no entry in `candidates` fails
 * test_backend__contract_has_candidates: adding a backend means adding its
 * three sources here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "contract_helpers.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the tiny task and each backend's candidates ----------------------- */

#define TASK_NAME "contract_relu"

static const char task_json[] =
    "{\n"
    "  \"name\": \"" TASK_NAME "\",\n"
    "  \"level\": 1,\n"
    "  \"category\": \"activation\",\n"
    "  \"description\": \"Contract-test task: y = max(x, 0) over N floats\",\n"
    "  \"params\": [\n"
    "    {\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
    "     \"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}},\n"
    "    {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]},\n"
    "    {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}\n"
    "  ],\n"
    "  \"sizes\": {\"N\": 4096},\n"
    "  \"check_sizes\": [{\"N\": 1}, {\"N\": 7}],\n"
    "  \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5},\n"
    "  \"flops\": \"N\",\n"
    "  \"bytes\": \"8*N\",\n"
    "  \"backends\": [\"c\", \"opencl\", \"cuda\"]\n"
    "}\n";

static const char reference_c[] = "#include <stdint.h>\n"
                                  "\n"
                                  "void " TASK_NAME "(const float *x, float *y, int64_t N)\n"
                                  "{\n"
                                  "    for (int64_t i = 0; i < N; i++)\n"
                                  "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
                                  "}\n";

typedef struct backend_candidates {
    const char *backend;
    const char *good;         /* trivially correct */
    const char *syntax_error; /* does not compile */
    const char *bad_hint;     /* a build hint/option off the allow-list */
    bool builds_reference;    /* build(is_reference=true) is this backend's job */
} backend_candidates;

static const backend_candidates candidates[] = {
    {"c", reference_c,
     "#include <stdint.h>\n"
     "void " TASK_NAME "(const float *x, float *y, int64_t N)\n"
     "{\n"
     "    y[0] = ;\n"
     "}\n",
     "// kevo: cflags -O2 -fplugin=/tmp/evil.so\n" /* rest: the reference */
     "#include <stdint.h>\n"
     "void " TASK_NAME "(const float *x, float *y, int64_t N) { (void)x; (void)y; (void)N; }\n",
     true},
    {"opencl",
     "// kevo: launch " TASK_NAME " global=ROUND_UP(N,64) local=64\n"
     "__kernel void " TASK_NAME "(__global const float *x, __global float *y, const long N)\n"
     "{\n"
     "    size_t i = get_global_id(0);\n"
     "    if (i < (size_t)N)\n"
     "        y[i] = fmax(x[i], 0.0f);\n"
     "}\n",
     "// kevo: launch " TASK_NAME " global=ROUND_UP(N,64) local=64\n"
     "__kernel void " TASK_NAME "(__global const float *x, __global float *y, const long N)\n"
     "{\n"
     "    y[0] = ;\n"
     "}\n",
     "// kevo: launch " TASK_NAME " global=ROUND_UP(N,64) local=64\n"
     "// kevo: options -cl-fast-relaxed-math -cl-std=CL9.9 -I/etc\n"
     "__kernel void " TASK_NAME "(__global const float *x, __global float *y, const long N)\n"
     "{\n"
     "}\n",
     false},
    {"cuda",
     "#include <cuda_runtime.h>\n"
     "#include <stdint.h>\n"
     "__global__ void relu_kernel(const float *x, float *y, int64_t n)\n"
     "{\n"
     "    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
     "    if (i < n)\n"
     "        y[i] = fmaxf(x[i], 0.0f);\n"
     "}\n"
     "extern \"C\" void " TASK_NAME "(const float *x, float *y, int64_t N)\n"
     "{\n"
     "    relu_kernel<<<(unsigned)((N + 255) / 256), 256>>>(x, y, N);\n"
     "}\n",
     "#include <stdint.h>\n"
     "extern \"C\" void " TASK_NAME "(const float *x, float *y, int64_t N)\n"
     "{\n"
     "    int = ;\n"
     "}\n",
     "// kevo: nvcc -use_fast_math -Xcompiler=-fplugin=/tmp/evil.so\n"
     "#include <stdint.h>\n"
     "extern \"C\" void " TASK_NAME "(const float *x, float *y, int64_t N) {}\n",
     false},
};

/* ---- fixture: one backend, a task folder, a build folder --------------- */

static const kevo_backend *current;

typedef struct fx {
    const kevo_backend *be;
    const backend_candidates *cand;
    char *dir; /* holds task/ and builds */
    kevo_task *task;
    int serial;
} fx;

static const backend_candidates *candidates_of(const char *name)
{
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
        if (!strcmp(candidates[i].backend, name))
            return &candidates[i];
    return NULL;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    f->be = current;
    f->cand = candidates_of(current->name);
    if (kevo_mkdtemp(&f->dir, "kevo-backend-contract-") < 0)
        return -1;
    /* compilers may run as another uid: the folders must be reachable */
    chmod(f->dir, 0755);
    char *tdir = kevo_path_join(f->dir, "task");
    char *json = kevo_path_join(tdir, "task.json");
    char *ref = kevo_path_join(tdir, "reference.c");
    int error = kevo_mkdirs(tdir, 0755);
    if (error == 0)
        error = kevo_file_write(json, task_json, strlen(task_json));
    if (error == 0)
        error = kevo_file_write(ref, reference_c, strlen(reference_c));
    if (error == 0)
        error = kevo_task_load(&f->task, tdir);
    if (error < 0)
        print_error("cannot write or load the contract task: %s\n", kevo_error_last());
    free(tdir);
    free(json);
    free(ref);
    *state = f;
    return error < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (!f)
        return 0;
    kevo_task_free(f->task);
    kevo_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* A fresh private build folder (the caller frees the path). */
static char *build_dir(fx *f)
{
    char name[32];
    snprintf(name, sizeof(name), "build-%d", ++f->serial);
    char *d = kevo_path_join(f->dir, name);
    assert_int_equal(kevo_mkdirs(d, 0755), 0);
    chmod(d, 0755);
    return d;
}

static void assert_cleared(const kevo_build_result *r)
{
    assert_false(r->ok);
    assert_false(r->rejected);
    assert_null(r->runner_path);
    assert_null(r->diagnostics);
    assert_null(r->cflags_used);
    assert_true(r->seconds == 0.0);
}

/* Build `source`; skip when kevo's own toolchain is missing (KEVO_EINFRA),
 * otherwise the call must return 0: every outcome of the source is a
 * verdict. */
static void build(fx *f, const char *source, bool is_reference, kevo_build_result *out)
{
    if (!f->cand)
        fail_msg("backend %s has no contract candidates (add them to `candidates`)",
                 f->be->name);
    char *dir = build_dir(f);
    memset(out, 0x5a, sizeof(*out)); /* build owns every field of *out */
    int rc = f->be->build(f->be, f->task, source, is_reference, dir, out);
    free(dir);
    if (rc == KEVO_EINFRA) {
        char why[512];
        snprintf(why, sizeof(why), "%s", kevo_error_last());
        kevo_build_result_clear(out);
        CONTRACT_SKIP("backend %s: toolchain not usable here: %.400s", f->be->name, why);
    }
    if (rc != 0)
        fail_msg("backend %s: build returned %d (%s); a source's failure is a verdict, "
                 "not an error",
                 f->be->name, rc, kevo_error_last());
    assert_true(out->seconds >= 0.0);
}

/* Every flag bit kevo/sys/backend.h defines (version 2 adds capabilities). */
static unsigned known_flags(void)
{
    unsigned m = KEVO_BACKEND_NO_AS_LIMIT;
#ifdef KEVO_BACKEND_CAP_BUILTIN_GENERATOR
    m |= KEVO_BACKEND_CAP_BUILTIN_GENERATOR;
#endif
#ifdef KEVO_BACKEND_CAP_NEEDS_DEVICE
    m |= KEVO_BACKEND_CAP_NEEDS_DEVICE;
#endif
    return m;
}

/* ---- the registry --------------------------------------------------------- */

static void test_backend__registry_names_and_find(void **state)
{
    (void)state;
    const char *const *names = kevo_backend_names();
    assert_non_null(names);
    size_t n = 0;
    for (; names[n]; n++) {
        const kevo_backend *be = kevo_backend_find(names[n]);
        if (!be)
            fail_msg("kevo_backend_names() lists '%s' but kevo_backend_find does not find it",
                     names[n]);
        assert_string_equal(be->name, names[n]);
        for (size_t j = 0; j < n; j++)
            if (!strcmp(names[j], names[n]))
                fail_msg("backend '%s' is registered twice", names[n]);
    }
    assert_true(n >= 1);
    assert_non_null(kevo_backend_find("c")); /* the reference is always built as C */
    assert_null(kevo_backend_find("no-such-backend"));
    assert_null(kevo_backend_find(""));
    assert_null(kevo_backend_find("C")); /* names are exact */
#if KEVO_BACKEND_VERSION >= 2
    assert_null(kevo_backend_find(NULL)); /* promised from version 2 */
    /* kevo_backend_at walks the same registry, in the same order */
    for (size_t i = 0; i <= n; i++) {
        const kevo_backend *be = kevo_backend_at(i);
        if (i == n)
            assert_null(be);
        else
            assert_ptr_equal(be, kevo_backend_find(names[i]));
    }
    assert_string_equal(names[0], "c"); /* c first */
#endif
}

static void test_backend__registry_has_candidates(void **state)
{
    (void)state;
    for (const char *const *n = kevo_backend_names(); *n; n++)
        if (!candidates_of(*n))
            fail_msg("backend '%s' is registered but has no contract candidates in "
                     "tests/unit/test_backend_contract.c",
                     *n);
}

static void test_backend__build_result_clear(void **state)
{
    (void)state;
    kevo_build_result_clear(NULL); /* a no-op */
    kevo_build_result r = {0};
    kevo_build_result_clear(&r); /* an empty result */
    assert_cleared(&r);
    /* a result with every owned field set: the sanitizer build sees a leak
     * if clear misses one */
    r.ok = true;
    r.rejected = true;
    r.runner_path = strdup("/nonexistent/runner");
    r.diagnostics = strdup("diagnostics");
    r.cflags_used = calloc(3, sizeof(char *));
    assert_non_null(r.cflags_used);
    r.cflags_used[0] = strdup("-O3");
    r.cflags_used[1] = strdup("-ffast-math");
    r.seconds = 1.5;
    kevo_build_result_clear(&r);
    assert_cleared(&r);
    kevo_build_result_clear(&r); /* twice is fine */
    assert_cleared(&r);
}

/* ---- the list every backend passes ---------------------------------------- */

static void test_backend__contract_identity(void **state)
{
    fx *f = *state;
    const kevo_backend *be = f->be;
    assert_int_equal(be->version, KEVO_BACKEND_VERSION);
    assert_non_null(be->name);
    assert_true(strlen(be->name) > 0);
    assert_ptr_equal(kevo_backend_find(be->name), be);
    assert_non_null(be->candidate_ext);
    assert_true(be->candidate_ext[0] == '.' && strlen(be->candidate_ext) > 1);
    assert_null(strchr(be->candidate_ext + 1, '/'));
    assert_non_null(be->code_language);
    assert_true(strlen(be->code_language) > 0);
    for (const char *p = be->code_language; *p; p++)
        if (*p == ' ' || *p == '\n' || *p == '`')
            fail_msg("backend %s: code_language '%s' cannot follow a ``` fence", be->name,
                     be->code_language);
    assert_non_null(be->build);
    /* only flags this header defines */
    if (be->flags & ~known_flags())
        fail_msg("backend %s: flags 0x%x has bits kevo/sys/backend.h does not define", be->name,
                 be->flags);
}

#if KEVO_BACKEND_VERSION >= 2
/* Version 2 fields: the fence tags start with code_language, the built-in
 * generator capability goes with the draft hook, API notes are well formed. */
static void test_backend__contract_v2_fields(void **state)
{
    fx *f = *state;
    const kevo_backend *be = f->be;
    if (be->version < 2)
        CONTRACT_SKIP("backend %s: version %u has no version 2 fields", be->name, be->version);
    assert_non_null(be->code_fence_tags);
    size_t n = strlen(be->code_language);
    if (strncmp(be->code_fence_tags, be->code_language, n) ||
        (be->code_fence_tags[n] != '\0' && be->code_fence_tags[n] != ' ' &&
         be->code_fence_tags[n] != ';'))
        fail_msg("backend %s: code_fence_tags '%s' does not start with code_language '%s'",
                 be->name, be->code_fence_tags, be->code_language);
    bool cap = (be->flags & KEVO_BACKEND_CAP_BUILTIN_GENERATOR) != 0;
    if (cap != (be->draft != NULL))
        fail_msg("backend %s: KEVO_BACKEND_CAP_BUILTIN_GENERATOR is %s but draft is %s",
                 be->name, cap ? "set" : "clear", be->draft ? "set" : "NULL");
    assert_true(kevo_backend_has(be, be->flags));
    assert_false(kevo_backend_has(NULL, 0));
    if (be->napi_notes)
        assert_non_null(be->api_notes);
    for (size_t i = 0; i < be->napi_notes; i++) {
        const kevo_backend_note *note = &be->api_notes[i];
        if (!note->title || !*note->title || !note->body || !*note->body)
            fail_msg("backend %s: API note #%zu lacks a title or a body", be->name, i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(be->api_notes[j].title, note->title))
                fail_msg("backend %s: two API notes are titled '%s' (the title is part of "
                         "the item's uid)",
                         be->name, note->title);
    }
}
#endif

static void test_backend__contract_extension_unique(void **state)
{
    fx *f = *state;
    for (const char *const *n = kevo_backend_names(); *n; n++) {
        const kevo_backend *o = kevo_backend_find(*n);
        if (o != f->be && !strcmp(o->candidate_ext, f->be->candidate_ext))
            fail_msg("backends %s and %s share the candidate extension %s", f->be->name,
                     o->name, o->candidate_ext);
    }
}

static void test_backend__contract_can_run_explains(void **state)
{
    fx *f = *state;
    if (!f->be->can_run) {
        print_message("backend %s: no can_run (runners always execute here)\n", f->be->name);
        return;
    }
    const char *why = NULL;
    bool yes = f->be->can_run(f->be, &why);
    const char *why2 = NULL;
    bool again = f->be->can_run(f->be, &why2);
    assert_int_equal(yes, again); /* a property of the machine, not of the call */
    if (!yes) {
        if (!why || !*why)
            fail_msg("backend %s: can_run says no without saying why", f->be->name);
        assert_non_null(why2);
        assert_string_equal(why, why2);
        print_message("backend %s: cannot run here: %s\n", f->be->name, why);
    }
    /* why may be NULL when the caller does not want it */
    assert_int_equal(f->be->can_run(f->be, NULL), yes);
}

static void test_backend__contract_build_good(void **state)
{
    fx *f = *state;
    kevo_build_result r;
    build(f, f->cand ? f->cand->good : NULL, false, &r);
    if (!r.ok)
        fail_msg("backend %s: a correct candidate did not build: %s", f->be->name,
                 r.diagnostics ? r.diagnostics : "(no diagnostics)");
    assert_false(r.rejected);
    assert_non_null(r.runner_path);
    /* the runner is inside the build folder and executable */
    assert_non_null(strstr(r.runner_path, f->dir));
    assert_int_equal(access(r.runner_path, X_OK), 0);
    struct stat sb;
    assert_int_equal(stat(r.runner_path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode) && sb.st_size > 0);
    /* informative, and when there: NULL-terminated strings */
    for (char **p = r.cflags_used; p && *p; p++)
        assert_true(strlen(*p) < 4096);
    const char *why = NULL;
    if (f->be->can_run && !f->be->can_run(f->be, &why))
        print_message("backend %s: built; its runner cannot execute here (%s)\n", f->be->name,
                      why ? why : "?");
    kevo_build_result_clear(&r);
    assert_cleared(&r);
}

static void test_backend__contract_build_syntax_error_is_a_verdict(void **state)
{
    fx *f = *state;
    kevo_build_result r;
    build(f, f->cand ? f->cand->syntax_error : NULL, false, &r);
    assert_false(r.ok);
    assert_false(r.rejected); /* a compile error breaks no rule */
    assert_null(r.runner_path);
    if (!r.diagnostics || !*r.diagnostics)
        fail_msg("backend %s: a syntax error gave no diagnostics", f->be->name);
    /* the compiler's words, trimmed: not the whole build log */
    assert_true(strlen(r.diagnostics) < 64 * 1024);
    kevo_build_result_clear(&r);
    assert_cleared(&r);
}

static void test_backend__contract_build_bad_hint_is_rejected(void **state)
{
    fx *f = *state;
    kevo_build_result r;
    build(f, f->cand ? f->cand->bad_hint : NULL, false, &r);
    assert_false(r.ok);
    assert_true(r.rejected); /* a flag off the allow-list breaks a rule */
    assert_null(r.runner_path);
    if (!r.diagnostics || !*r.diagnostics)
        fail_msg("backend %s: a refused build hint gave no reason", f->be->name);
    kevo_build_result_clear(&r);
    assert_cleared(&r);
}

static void test_backend__contract_build_reference(void **state)
{
    fx *f = *state;
    if (!f->cand || !f->cand->builds_reference)
        CONTRACT_SKIP("backend %s: the reference is built by the C backend", f->be->name);
    kevo_build_result r;
    build(f, reference_c, true, &r);
    if (!r.ok)
        fail_msg("backend %s: the reference did not build: %s", f->be->name,
                 r.diagnostics ? r.diagnostics : "(no diagnostics)");
    assert_false(r.rejected);
    assert_non_null(r.runner_path);
    assert_int_equal(access(r.runner_path, X_OK), 0);
    kevo_build_result_clear(&r);
    assert_cleared(&r);
}

static void test_backend__contract_runner_env(void **state)
{
    fx *f = *state;
    if (!f->be->runner_env) {
        print_message("backend %s: no runner_env (optional)\n", f->be->name);
        return;
    }
    char *dir = build_dir(f);
    char **env = (char **)(uintptr_t)1;
    int rc = f->be->runner_env(f->be, dir, &env);
    if (rc < 0)
        fail_msg("backend %s: runner_env failed: %s", f->be->name, kevo_error_last());
    size_t n = 0;
    for (char **p = env; p && *p; p++, n++) {
        const char *eq = strchr(*p, '=');
        if (!eq || eq == *p)
            fail_msg("backend %s: runner_env gave '%s', not K=V", f->be->name, *p);
    }
    if (env)
        print_message("backend %s: runner_env gives %zu variable(s)\n", f->be->name, n);
    kevo_strv_free(env); /* the caller's; the sanitizer build checks it is all */
    /* the directory is still the caller's to remove */
    assert_int_equal(access(dir, F_OK), 0);
    free(dir);
}

/* ---- main ------------------------------------------------------------------ */

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest registry[] = {
        cmocka_unit_test(test_backend__registry_names_and_find),
        cmocka_unit_test(test_backend__registry_has_candidates),
        cmocka_unit_test(test_backend__build_result_clear),
    };
    const struct CMUnitTest contract[] = {
        T(test_backend__contract_identity),
        T(test_backend__contract_extension_unique),
#if KEVO_BACKEND_VERSION >= 2
        T(test_backend__contract_v2_fields),
#endif
        T(test_backend__contract_can_run_explains),
        T(test_backend__contract_build_good),
        T(test_backend__contract_build_syntax_error_is_a_verdict),
        T(test_backend__contract_build_bad_hint_is_rejected),
        T(test_backend__contract_build_reference),
        T(test_backend__contract_runner_env),
    };
    int failed = cmocka_run_group_tests_name("backend_registry", registry, NULL, NULL);
    for (const char *const *n = kevo_backend_names(); *n; n++) {
        current = kevo_backend_find(*n);
        if (!current) /* the registry test has failed already */
            continue;
        char group[64];
        snprintf(group, sizeof(group), "backend_contract[%s]", *n);
        print_message("%s\n", group);
        failed += cmocka_run_group_tests_name(group, contract, NULL, NULL);
    }
    return failed;
}
