/*
 * tests/unit/test_task.c - the task module: task.json parsing and strict
 * validation (errors name the file and the field), the kernel prototype,
 * size expressions, deterministic input generation and task discovery.
 *
 * Every test writes its own tiny task folders under a fresh mkdtemp()
 * directory and removes them; nothing here compiles or runs a kernel.
 */
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
#include <cjson/cJSON.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

#define assert_contains(hay, needle) assert_contains_at(hay, needle, __FILE__, __LINE__)

static void assert_contains_at(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle)) {
        print_error("%s:%d: expected \"%s\" in \"%s\"\n", file, line, needle,
                    hay ? hay : "(null)");
        _fail(file, line);
    }
}

/* A fresh private directory; the caller removes it with kevo_rmtree. */
static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/kevo_test_task_XXXXXX", base && *base ? base : "/tmp");
    char *dir = mkdtemp(path);
    assert_non_null(dir);
    return strdup(dir);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *path = kevo_path_join(dir, name);
    assert_non_null(path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(path);
}

/* A task folder holding `json` as task.json and, when with_ref, an empty
 * reference.c. The caller removes it. */
static char *make_task_dir(const char *json, bool with_ref)
{
    char *dir = make_tmpdir();
    if (json)
        write_file(dir, "task.json", json);
    if (with_ref)
        write_file(dir, "reference.c", "/* reference */\n");
    return dir;
}

/* A valid task with one param of each role; edited by the error tests. */
static const char BASE_JSON[] =
    "{\n"
    "  \"name\": \"base_kernel\",\n"
    "  \"level\": 2,\n"
    "  \"category\": \"elementwise\",\n"
    "  \"description\": \"a task for the unit tests\",\n"
    "  \"params\": [\n"
    "    {\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
    "     \"init\": {\"dist\": \"uniform\", \"low\": -2, \"high\": 3}},\n"
    "    {\"name\": \"y\", \"role\": \"out\", \"type\": \"f64\", \"shape\": [\"R\", \"C\"]},\n"
    "    {\"name\": \"z\", \"role\": \"inout\", \"type\": \"i32\", \"shape\": [\"R*C\", 2],\n"
    "     \"init\": {\"dist\": \"randint\", \"low\": -5, \"high\": 5}},\n"
    "    {\"name\": \"eps\", \"role\": \"scalar\", \"type\": \"f32\", \"value\": 0.5},\n"
    "    {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}\n"
    "  ],\n"
    "  \"sizes\": {\"N\": 10, \"R\": 3, \"C\": 4},\n"
    "  \"check_sizes\": [{\"N\": 1, \"R\": 1, \"C\": 1}, {\"N\": 7, \"R\": 2, \"C\": 5}],\n"
    "  \"flops\": \"2*N\",\n"
    "  \"bytes\": \"4*N + 8*R*C\"\n"
    "}\n";

static cJSON *base_json(void)
{
    cJSON *root = cJSON_Parse(BASE_JSON);
    assert_non_null(root);
    return root;
}

static cJSON *param_of(cJSON *root, int i)
{
    cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "params"), i);
    assert_non_null(p);
    return p;
}

static void set_item(cJSON *obj, const char *key, cJSON *value)
{
    assert_non_null(value);
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
    else
        cJSON_AddItemToObject(obj, key, value);
}

static void set_raw(cJSON *obj, const char *key, const char *json)
{
    set_item(obj, key, cJSON_Parse(json));
}

/* Load `root` (consumed) from a fresh folder and expect failure with
 * `code`; the message must name task.json's path and contain every
 * non-NULL string in the NULL-terminated list. */
static void expect_load_error(cJSON *root, int code, ...)
{
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    char *dir = make_task_dir(text, true);
    free(text);
    char *json_path = kevo_path_join(dir, "task.json");
    kevo_task *t = (kevo_task *)0x1;
    int rc = kevo_task_load(&t, dir);
    const char *msg = kevo_error_last();
    if (rc != code)
        print_error("rc %d (%s), expected %d; message: %s\n", rc, kevo_error_name(rc), code, msg);
    assert_int_equal(rc, code);
    assert_null(t);
    assert_contains(msg, json_path);
    va_list ap;
    va_start(ap, code);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
        assert_contains(msg, s);
    va_end(ap);
    free(json_path);
    kevo_rmtree(dir);
    free(dir);
}

static kevo_task *load_text(const char *json, char **out_dir)
{
    char *dir = make_task_dir(json, true);
    kevo_task *t = NULL;
    int rc = kevo_task_load(&t, dir);
    if (rc < 0)
        print_error("load failed: %s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_non_null(t);
    *out_dir = dir;
    return t;
}

static kevo_task *load_cjson(cJSON *root, char **out_dir)
{
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    kevo_task *t = load_text(text, out_dir);
    free(text);
    return t;
}

static void remove_dir(char *dir)
{
    kevo_rmtree(dir);
    free(dir);
}

/* ---- loading a valid task ---- */

static void test_task__load_valid(void **state)
{
    char *dir;
    kevo_task *t = load_text(BASE_JSON, &dir);

    assert_string_equal(t->name, "base_kernel");
    assert_int_equal(t->level, 2);
    assert_string_equal(t->category, "elementwise");
    assert_string_equal(t->description, "a task for the unit tests");
    assert_string_equal(t->dir, dir);
    assert_non_null(strstr(t->json_path, "task.json"));
    assert_non_null(strstr(t->reference_path, "reference.c"));

    assert_int_equal(t->nparams, 5);
    const char *names[] = {"x", "y", "z", "eps", "N"};
    const kevo_role roles[] = {KEVO_ROLE_IN, KEVO_ROLE_OUT, KEVO_ROLE_INOUT, KEVO_ROLE_SCALAR,
                               KEVO_ROLE_SCALAR};
    const kevo_dtype types[] = {KEVO_DT_F32, KEVO_DT_F64, KEVO_DT_I32, KEVO_DT_F32, KEVO_DT_I64};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(t->params[i].name, names[i]);
        assert_int_equal(t->params[i].role, roles[i]);
        assert_int_equal(t->params[i].type, types[i]);
    }
    /* shapes: expressions and integers are both kept as text */
    assert_int_equal(t->params[0].ndim, 1);
    assert_string_equal(t->params[0].shape[0], "N");
    assert_int_equal(t->params[1].ndim, 2);
    assert_string_equal(t->params[1].shape[0], "R");
    assert_string_equal(t->params[1].shape[1], "C");
    assert_int_equal(t->params[2].ndim, 2);
    assert_string_equal(t->params[2].shape[0], "R*C");
    assert_string_equal(t->params[2].shape[1], "2");
    assert_int_equal(t->params[3].ndim, 0);
    assert_true(t->params[3].has_value);
    assert_true(t->params[3].value == 0.5);
    assert_false(t->params[4].has_value);

    /* init: given ones kept */
    assert_int_equal(t->params[0].init.dist, KEVO_INIT_UNIFORM);
    assert_true(t->params[0].init.a == -2 && t->params[0].init.b == 3);
    assert_int_equal(t->params[2].init.dist, KEVO_INIT_RANDINT);
    assert_true(t->params[2].init.a == -5 && t->params[2].init.b == 5);

    /* sizes and check_sizes */
    assert_int_equal(t->sizes.n, 3);
    assert_string_equal(t->sizes.names[0], "N");
    assert_int_equal(t->sizes.values[0], 10);
    assert_string_equal(t->sizes.names[1], "R");
    assert_int_equal(t->sizes.values[1], 3);
    assert_string_equal(t->sizes.names[2], "C");
    assert_int_equal(t->sizes.values[2], 4);
    assert_int_equal(t->ncheck, 2);
    assert_int_equal(t->check_sizes[0].n, 3);
    assert_int_equal(t->check_sizes[1].values[0], 7);
    assert_int_equal(t->check_sizes[1].values[2], 5);
    assert_int_equal(kevo_task_nsets(t), 3);
    assert_ptr_equal(kevo_task_set(t, 0), &t->sizes);
    assert_ptr_equal(kevo_task_set(t, 2), &t->check_sizes[1]);

    /* defaults */
    assert_true(t->atol == 1e-2);
    assert_true(t->rtol == 1e-2);
    assert_int_equal(t->nbackends, 1);
    assert_string_equal(t->backends[0], "c");
    assert_true(kevo_task_supports(t, "c"));
    assert_false(kevo_task_supports(t, "cuda"));
    assert_true(t->timeout_s == 60);

    /* flops / bytes in double precision on the timed sizes */
    assert_string_equal(t->flops, "2*N");
    double flops = -1, bytes = -1;
    assert_int_equal(kevo_task_work(&flops, &bytes, t), 0);
    assert_true(flops == 20);
    assert_true(bytes == 4 * 10 + 8 * 3 * 4);

    /* shapes and scalars under a size set */
    int64_t dims[8];
    size_t nd = 0;
    int64_t count = 0;
    assert_int_equal(kevo_task_param_shape(dims, &nd, &count, t, 2, kevo_task_set(t, 2)), 0);
    assert_int_equal(nd, 2);
    assert_int_equal(dims[0], 10);
    assert_int_equal(dims[1], 2);
    assert_int_equal(count, 20);
    double v = 0;
    assert_int_equal(kevo_task_scalar_value(&v, t, 4, kevo_task_set(t, 1)), 0);
    assert_true(v == 1);
    assert_int_equal(kevo_task_scalar_value(&v, t, 3, kevo_task_set(t, 1)), 0);
    assert_true(v == 0.5);

    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__load_explicit_options(void **state)
{
    cJSON *root = base_json();
    set_raw(root, "tolerance", "{\"atol\": 1e-5, \"rtol\": 0.25}");
    set_raw(root, "backends", "[\"c\", \"cuda\"]");
    set_raw(root, "timeout_s", "12.5");
    char *dir;
    kevo_task *t = load_cjson(root, &dir);
    assert_true(t->atol == 1e-5);
    assert_true(t->rtol == 0.25);
    assert_int_equal(t->nbackends, 2);
    assert_true(kevo_task_supports(t, "cuda"));
    assert_false(kevo_task_supports(t, "opencl"));
    assert_true(t->timeout_s == 12.5);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__default_inits(void **state)
{
    /* no init: floats normal(0,1), integers randint within [0, 100) */
    cJSON *root = base_json();
    set_raw(root, "params",
            "[{\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"]},"
            " {\"name\": \"i\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"]},"
            " {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]}]");
    char *dir;
    kevo_task *t = load_cjson(root, &dir);
    assert_int_equal(t->params[0].init.dist, KEVO_INIT_NORMAL);
    assert_true(t->params[0].init.a == 0 && t->params[0].init.b == 1);
    assert_int_equal(t->params[1].init.dist, KEVO_INIT_RANDINT);
    assert_true(t->params[1].init.a == 0 && t->params[1].init.b == 100);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__init_range_from_sizes(void **state)
{
    /* class indices below a size: randint's high may be a size expression,
     * evaluated on each size set, so every set's labels are valid indices */
    cJSON *root = base_json();
    set_raw(root, "params",
            "[{\"name\": \"t\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"],"
            "  \"init\": {\"dist\": \"randint\", \"low\": 0, \"high\": \"C\"}},"
            " {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]}]");
    char *dir;
    kevo_task *t = load_cjson(root, &dir);
    assert_string_equal(t->params[0].init.b_expr, "C");
    assert_true(t->params[0].init.b == 4); /* the timed set's value */
    for (size_t set = 0; set < kevo_task_nsets(t); set++) {
        int64_t c = kevo_task_set(t, set)->values[2];
        int64_t seen_max = -1;
        for (uint64_t seed = 0; seed < 3; seed++) {
            kevo_call_data *d = NULL;
            assert_int_equal(kevo_task_inputs(&d, t, set, seed), 0);
            for (int64_t i = 0; i < d->count[0]; i++) {
                int64_t v = ((int64_t *)d->data[0])[i];
                assert_true(v >= 0 && v < c);
                seen_max = v > seen_max ? v : seen_max;
            }
            kevo_call_data_free(d);
        }
        if (set == 0)
            assert_true(seen_max == c - 1); /* 30 draws of 4 classes reach the top one */
    }
    kevo_task_free(t);
    remove_dir(dir);
    /* a range that is empty on some set is refused, naming the set */
    root = base_json();
    set_raw(root, "params",
            "[{\"name\": \"t\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"],"
            "  \"init\": {\"dist\": \"randint\", \"low\": 1, \"high\": \"C\"}},"
            " {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]}]");
    expect_load_error(root, KEVO_EINVAL, "params[0].init", "size set 1 gives [1, 1)", NULL);
}

static void test_task__load_suite_relu(void **state)
{
    /* the shipped first task must load (tests run from the source root) */
    kevo_task *t = NULL;
    int rc = kevo_task_load(&t, "suites/c/level1/001_relu");
    if (rc < 0)
        print_error("%s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_string_equal(t->name, "relu");
    kevo_task_free(t);
    kevo_task_free(NULL);
}

/* ---- prototype and dtype tables ---- */

static void test_task__prototype_every_role_and_dtype(void **state)
{
    static const char json[] =
        "{\"name\": \"every_dtype\", \"level\": 1, \"category\": \"fused\",\n"
        " \"description\": \"one param per role and dtype\",\n"
        " \"params\": [\n"
        "  {\"name\": \"a\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"b\", \"role\": \"in\", \"type\": \"f64\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"c\", \"role\": \"in\", \"type\": \"i32\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"d\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"e\", \"role\": \"in\", \"type\": \"u8\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"of\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"od\", \"role\": \"out\", \"type\": \"f64\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"oi\", \"role\": \"out\", \"type\": \"i32\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"ol\", \"role\": \"out\", \"type\": \"i64\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"ob\", \"role\": \"out\", \"type\": \"u8\", \"shape\": [\"N\"]},\n"
        "  {\"name\": \"xf\", \"role\": \"inout\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
        "   \"init\": {\"dist\": \"const\", \"value\": 1}},\n"
        "  {\"name\": \"xb\", \"role\": \"inout\", \"type\": \"u8\", \"shape\": [\"N\"],\n"
        "   \"init\": {\"dist\": \"const\", \"value\": 1}},\n"
        "  {\"name\": \"sf\", \"role\": \"scalar\", \"type\": \"f32\", \"value\": 0.5},\n"
        "  {\"name\": \"sd\", \"role\": \"scalar\", \"type\": \"f64\", \"value\": 1e-5},\n"
        "  {\"name\": \"si\", \"role\": \"scalar\", \"type\": \"i32\", \"value\": 3},\n"
        "  {\"name\": \"sb\", \"role\": \"scalar\", \"type\": \"u8\", \"value\": 7},\n"
        "  {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}\n"
        " ],\n"
        " \"sizes\": {\"N\": 4}, \"flops\": \"N\", \"bytes\": \"N\"}\n";
    char *dir;
    kevo_task *t = load_text(json, &dir);
    char *proto = NULL;
    assert_int_equal(kevo_task_prototype(&proto, t), 0);
    assert_string_equal(proto,
                        "void every_dtype(const float *a, const double *b, const int32_t *c, "
                        "const int64_t *d, const uint8_t *e, float *of, double *od, int32_t *oi, "
                        "int64_t *ol, uint8_t *ob, float *xf, uint8_t *xb, float sf, double sd, "
                        "int32_t si, uint8_t sb, int64_t N)");
    free(proto);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__prototype_suite_relu(void **state)
{
    kevo_task *t = NULL;
    assert_int_equal(kevo_task_load(&t, "suites/c/level1/001_relu"), 0);
    char *proto = NULL;
    assert_int_equal(kevo_task_prototype(&proto, t), 0);
    assert_string_equal(proto, "void relu(const float *x, float *y, int64_t N)");
    free(proto);
    kevo_task_free(t);
}

static void test_task__dtype_tables(void **state)
{
    const struct {
        kevo_dtype t;
        const char *name, *ctype;
        size_t size;
        bool is_float;
    } rows[] = {
        {KEVO_DT_F32, "f32", "float", 4, true},   {KEVO_DT_F64, "f64", "double", 8, true},
        {KEVO_DT_I32, "i32", "int32_t", 4, false}, {KEVO_DT_I64, "i64", "int64_t", 8, false},
        {KEVO_DT_U8, "u8", "uint8_t", 1, false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_string_equal(kevo_dtype_name(rows[i].t), rows[i].name);
        assert_string_equal(kevo_dtype_ctype(rows[i].t), rows[i].ctype);
        assert_int_equal(kevo_dtype_size(rows[i].t), rows[i].size);
        assert_int_equal(kevo_dtype_is_float(rows[i].t), rows[i].is_float);
    }
    assert_string_equal(kevo_role_name(KEVO_ROLE_IN), "in");
    assert_string_equal(kevo_role_name(KEVO_ROLE_OUT), "out");
    assert_string_equal(kevo_role_name(KEVO_ROLE_INOUT), "inout");
    assert_string_equal(kevo_role_name(KEVO_ROLE_SCALAR), "scalar");
}

/* ---- expressions ---- */

static char *expr_names[] = {"H", "P", "K", "S", "N", "Z", "W_2"};
static int64_t expr_values[] = {13, 1, 3, 2, 7, 0, 5};
static const kevo_sizes expr_sizes = {7, expr_names, expr_values};

static double eval_ok(const char *expr, bool integer)
{
    double v = -12345;
    int rc = kevo_expr_eval(&v, expr, &expr_sizes, integer);
    if (rc < 0)
        print_error("\"%s\": %s\n", expr, kevo_error_last());
    assert_int_equal(rc, 0);
    return v;
}

static void eval_err(const char *expr, bool integer, const char *what)
{
    double v = -12345;
    int rc = kevo_expr_eval(&v, expr, &expr_sizes, integer);
    assert_int_equal(rc, KEVO_EINVAL);
    assert_true(v == -12345); /* *out untouched on error */
    assert_contains(kevo_error_last(), what);
}

static void test_task__expr_precedence_and_parentheses(void **state)
{
    assert_true(eval_ok("1 + 2 * 3", true) == 7);
    assert_true(eval_ok("(1 + 2) * 3", true) == 9);
    assert_true(eval_ok("2 * 3 + 4 * 5", true) == 26);
    assert_true(eval_ok("2 - 3 - 4", true) == -5);       /* left associative */
    assert_true(eval_ok("100 / 10 / 5", true) == 2);     /* left associative */
    assert_true(eval_ok("2 * 3 % 4", true) == 2);        /* same precedence, left to right */
    assert_true(eval_ok("((((5))))", true) == 5);
    assert_true(eval_ok("-3 + 10", true) == 7);
    assert_true(eval_ok("2 * -3", true) == -6);
    assert_true(eval_ok("  42  ", true) == 42);
    assert_true(eval_ok("0", true) == 0);
}

static void test_task__expr_sizes(void **state)
{
    assert_true(eval_ok("H", true) == 13);
    assert_true(eval_ok("W_2 * N", true) == 35);
    assert_true(eval_ok("(H + 2*P - K) / S + 1", true) == 7); /* (13+2-3)/2+1 */
    assert_true(eval_ok("H+2*P-K", true) == 12);
}

static void test_task__expr_integer_division_truncates(void **state)
{
    assert_true(eval_ok("7 / 2", true) == 3);
    assert_true(eval_ok("-7 / 2", true) == -3);  /* C truncates toward zero */
    assert_true(eval_ok("7 / -2", true) == -3);
    assert_true(eval_ok("1 / 3 * 3", true) == 0);
    assert_true(eval_ok("H / S", true) == 6);
    assert_true(eval_ok("7 % 3", true) == 1);
    assert_true(eval_ok("-7 % 3", true) == -1);  /* C: sign of the dividend */
    assert_true(eval_ok("7 % -3", true) == 1);
    assert_true(eval_ok("H % N", true) == 6);
}

static void test_task__expr_double_mode(void **state)
{
    assert_true(eval_ok("7 / 2", false) == 3.5);
    assert_true(eval_ok("1 / 3 * 3", false) == 1.0 / 3 * 3);
    assert_true(eval_ok("2*N*N*N", false) == 686);
    assert_true(eval_ok("1.5 * 2", false) == 3);
    assert_true(eval_ok("2.5e3", false) == 2500);
}

static void test_task__expr_errors(void **state)
{
    eval_err("M + 1", true, "unknown size name");
    eval_err("M + 1", true, "M + 1"); /* the expression is quoted */
    eval_err("H2", true, "unknown size name"); /* no prefix match */
    eval_err("1 / 0", true, "division by zero");
    eval_err("1 / 0", false, "division by zero");
    eval_err("7 % 0", true, "division by zero");
    eval_err("N / (K - 3)", true, "division by zero");
    eval_err("N / Z", false, "division by zero");
    eval_err("1 + 2 )", true, "trailing");
    eval_err("3 x", true, "trailing");
    eval_err("3 4", true, "trailing");
    eval_err("(1 + 2", true, "missing ')'");
    eval_err("1 +", true, "unexpected end");
    eval_err("1 + * 2", true, "unexpected character");
    eval_err("", true, "empty");
    eval_err("1.5", true, "non-integer");
    /* no sizes at all: names are unknown */
    double v;
    assert_int_equal(kevo_expr_eval(&v, "N", NULL, true), KEVO_EINVAL);
    assert_int_equal(kevo_expr_eval(&v, "12", NULL, true), 0);
    assert_true(v == 12);
}

/* ---- bad task.json: each names the file and the field ---- */

static void test_task__missing_required_fields(void **state)
{
    const char *fields[] = {"name",  "level", "category", "description",
                            "params", "sizes", "flops",    "bytes"};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        cJSON *root = base_json();
        cJSON_DeleteItemFromObject(root, fields[i]);
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "'%s'", fields[i]);
        expect_load_error(root, KEVO_EINVAL, quoted, "missing", NULL);
    }
}

static void test_task__wrong_field_types(void **state)
{
    cJSON *root = base_json();
    set_raw(root, "level", "\"1\"");
    expect_load_error(root, KEVO_EINVAL, "'level'", NULL);

    root = base_json();
    set_raw(root, "level", "4");
    expect_load_error(root, KEVO_EINVAL, "'level'", "1..3", NULL);

    root = base_json();
    set_raw(root, "level", "1.5");
    expect_load_error(root, KEVO_EINVAL, "'level'", NULL);

    root = base_json();
    set_raw(root, "name", "7");
    expect_load_error(root, KEVO_EINVAL, "'name'", "string", NULL);

    root = base_json();
    set_raw(root, "name", "\"not-an-identifier\"");
    expect_load_error(root, KEVO_EINVAL, "'name'", "C identifier", NULL);

    root = base_json();
    set_raw(root, "description", "\"\"");
    expect_load_error(root, KEVO_EINVAL, "'description'", "empty", NULL);

    root = base_json();
    set_raw(root, "params", "{}");
    expect_load_error(root, KEVO_EINVAL, "'params'", NULL);

    root = base_json();
    set_raw(root, "params", "[]");
    expect_load_error(root, KEVO_EINVAL, "'params'", NULL);

    root = base_json();
    set_raw(root, "sizes", "[1, 2]");
    expect_load_error(root, KEVO_EINVAL, "'sizes'", NULL);

    root = base_json();
    set_raw(root, "sizes", "{\"N\": -1, \"R\": 3, \"C\": 4}");
    expect_load_error(root, KEVO_EINVAL, "'sizes'", "'N'", NULL);

    root = base_json();
    set_raw(root, "sizes", "{\"N\": 2.5, \"R\": 3, \"C\": 4}");
    expect_load_error(root, KEVO_EINVAL, "'sizes'", "'N'", NULL);

    root = base_json();
    set_raw(root, "flops", "12");
    expect_load_error(root, KEVO_EINVAL, "'flops'", "string", NULL);

    root = base_json();
    set_raw(root, "check_sizes", "{\"N\": 1}");
    expect_load_error(root, KEVO_EINVAL, "'check_sizes'", NULL);

    root = base_json();
    set_raw(root, "tolerance", "{\"atol\": -1}");
    expect_load_error(root, KEVO_EINVAL, "'tolerance'", NULL);

    root = base_json();
    set_raw(root, "tolerance", "{\"atol\": \"small\"}");
    expect_load_error(root, KEVO_EINVAL, "'tolerance'", NULL);

    root = base_json();
    set_raw(root, "backends", "[\"Metal GPU\"]"); /* not a name (a registered one: test_backend) */
    expect_load_error(root, KEVO_EINVAL, "'backends'", NULL);

    root = base_json();
    set_raw(root, "backends", "[]");
    expect_load_error(root, KEVO_EINVAL, "'backends'", NULL);

    root = base_json();
    set_raw(root, "timeout_s", "0");
    expect_load_error(root, KEVO_EINVAL, "'timeout_s'", NULL);

    root = base_json();
    set_raw(root, "timeout_s", "\"60\"");
    expect_load_error(root, KEVO_EINVAL, "'timeout_s'", NULL);
}

static void test_task__unknown_fields(void **state)
{
    cJSON *root = base_json();
    set_raw(root, "nmae", "\"typo\"");
    expect_load_error(root, KEVO_EINVAL, "'nmae'", "unknown field", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shap", "[\"N\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shap'", "unknown field", NULL);

    root = base_json();
    set_raw(root, "tolerance", "{\"atol\": 0.1, \"rtl\": 0.1}");
    expect_load_error(root, KEVO_EINVAL, "'tolerance.rtl'", "unknown field", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"normal\", \"sd\": 2}");
    expect_load_error(root, KEVO_EINVAL, "params[0].init.sd", "unknown field", NULL);
}

static void test_task__unknown_dtype(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 1), "type", "\"f16\"");
    expect_load_error(root, KEVO_EINVAL, "'params[1]'", "unknown type", "'f16'", NULL);

    root = base_json();
    set_raw(param_of(root, 1), "type", "3");
    expect_load_error(root, KEVO_EINVAL, "'params[1].type'", "string", NULL);
}

static void test_task__unknown_role(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 0), "role", "\"input\"");
    expect_load_error(root, KEVO_EINVAL, "'params[0]'", "unknown role", "'input'", NULL);

    root = base_json();
    cJSON_DeleteItemFromObject(param_of(root, 2), "role");
    expect_load_error(root, KEVO_EINVAL, "'params[2].role'", "missing", NULL);
}

static void test_task__bad_params(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 2), "name", "\"x\"");
    expect_load_error(root, KEVO_EINVAL, "'params[2].name'", "duplicate", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "name", "\"2x\"");
    expect_load_error(root, KEVO_EINVAL, "'params[0]'", "C identifier", NULL);

    root = base_json();
    cJSON_DeleteItemFromObject(param_of(root, 0), "shape");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[1,1,1,1,1,1,1,1,1]"); /* 9 dims */
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[\"N\", true]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "dimension 1", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[\"M\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "unknown size name", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "value", "3");
    expect_load_error(root, KEVO_EINVAL, "params[0]", "only for scalars", NULL);

    root = base_json();
    set_raw(param_of(root, 3), "shape", "[\"N\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[3].shape'", "scalar", NULL);

    root = base_json();
    set_raw(param_of(root, 3), "value", "\"0.5\"");
    expect_load_error(root, KEVO_EINVAL, "'params[3].value'", "number", NULL);

    root = base_json();
    cJSON_DeleteItemFromObject(param_of(root, 2), "init");
    expect_load_error(root, KEVO_EINVAL, "'params[2].init'", "inout", NULL);

    /* only inputs: nothing computed */
    root = base_json();
    set_raw(root, "params",
            "[{\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"]}]");
    expect_load_error(root, KEVO_EINVAL, "'params'", "out", NULL);

    root = base_json();
    set_raw(root, "params", "[{\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\","
                            " \"shape\": [\"N\"]}, 5]");
    expect_load_error(root, KEVO_EINVAL, "'params[1]'", "object", NULL);
}

static void test_task__unknown_init_dist(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"gaussian\"}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "unknown dist", "'gaussian'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"mean\": 0}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "dist", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "\"normal\"");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"uniform\", \"low\": 3, \"high\": 3}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "high", NULL);

    root = base_json();
    set_raw(param_of(root, 2), "init", "{\"dist\": \"randint\", \"low\": 5, \"high\": 1}");
    expect_load_error(root, KEVO_EINVAL, "'params[2].init'", "high", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"normal\", \"std\": -1}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "std", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"const\"}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "value", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"normal\", \"mean\": \"0\"}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "numbers", NULL);

    /* a range bound may be a size expression, not any text */
    root = base_json();
    set_raw(param_of(root, 0), "init", "{\"dist\": \"uniform\", \"low\": \"0\", \"high\": \"NN\"}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "NN", NULL);
}

static void test_task__check_sizes_entry_missing_a_size(void **state)
{
    cJSON *root = base_json();
    set_raw(root, "check_sizes", "[{\"N\": 1, \"R\": 1, \"C\": 1}, {\"N\": 2, \"R\": 2}]");
    expect_load_error(root, KEVO_EINVAL, "'check_sizes[1]'", NULL);

    /* same count, one name different */
    root = base_json();
    set_raw(root, "check_sizes", "[{\"N\": 1, \"R\": 1, \"D\": 1}]");
    expect_load_error(root, KEVO_EINVAL, "'check_sizes[0]'", "'D'", NULL);

    root = base_json();
    set_raw(root, "check_sizes", "[7]");
    expect_load_error(root, KEVO_EINVAL, "'check_sizes[0]'", NULL);
}

static void test_task__scalar_without_value_or_size(void **state)
{
    cJSON *root = base_json();
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(root, "params"),
                         cJSON_Parse("{\"name\": \"alpha\", \"role\": \"scalar\", "
                                     "\"type\": \"f32\"}"));
    expect_load_error(root, KEVO_EINVAL, "'params[5]'", "'alpha'", "value", NULL);

    /* a float scalar cannot take its value from the integer sizes */
    root = base_json();
    set_raw(param_of(root, 4), "type", "\"f64\"");
    expect_load_error(root, KEVO_EINVAL, "'params[4]'", "integer type", NULL);
}

static void test_task__out_param_with_init(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 1), "init", "{\"dist\": \"const\", \"value\": 0}");
    expect_load_error(root, KEVO_EINVAL, "'params[1].init'", "out", NULL);
}

static void test_task__shape_with_zero_elements(void **state)
{
    cJSON *root = base_json();
    set_raw(param_of(root, 0), "shape", "[\"N - 10\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "'x'", "0 elements", NULL);

    /* empty under a check_sizes entry only */
    root = base_json();
    set_raw(root, "check_sizes", "[{\"N\": 1, \"R\": 0, \"C\": 1}]");
    expect_load_error(root, KEVO_EINVAL, "'params[1].shape'", "check_sizes", NULL);

    /* negative dimensions never count as elements */
    root = base_json();
    set_raw(param_of(root, 1), "shape", "[\"R - 4\", \"C - 5\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[1].shape'", "'y'", NULL);

    root = base_json();
    set_raw(param_of(root, 1), "shape", "[0]");
    expect_load_error(root, KEVO_EINVAL, "'params[1].shape'", NULL);
}

static void test_task__bad_expressions_in_fields(void **state)
{
    cJSON *root = base_json();
    set_raw(root, "flops", "\"2*M\"");
    expect_load_error(root, KEVO_EINVAL, "'flops'", "unknown size name", NULL);

    root = base_json();
    set_raw(root, "bytes", "\"4*N +\"");
    expect_load_error(root, KEVO_EINVAL, "'bytes'", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[\"N / (R - 3)\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "division by zero", NULL);
}

static void test_task__invalid_json(void **state)
{
    const char *texts[] = {
        "{\"name\": \"x\",,}",
        "{\n\"name\": \"x\",\n\"level\": 1\n",
        "",
        "not json",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char *dir = make_task_dir(texts[i], true);
        char *json_path = kevo_path_join(dir, "task.json");
        kevo_task *t = NULL;
        assert_int_equal(kevo_task_load(&t, dir), KEVO_EINVAL);
        assert_null(t);
        assert_contains(kevo_error_last(), json_path);
        assert_contains(kevo_error_last(), "invalid JSON");
        free(json_path);
        remove_dir(dir);
    }
    /* the line of the error is reported */
    char *dir = make_task_dir("{\n\"name\": \"x\",\n\"level\": 1,\n  oops\n}", true);
    kevo_task *t = NULL;
    assert_int_equal(kevo_task_load(&t, dir), KEVO_EINVAL);
    assert_contains(kevo_error_last(), "line 4");
    remove_dir(dir);

    /* valid JSON, not an object */
    dir = make_task_dir("[1, 2, 3]", true);
    assert_int_equal(kevo_task_load(&t, dir), KEVO_EINVAL);
    assert_contains(kevo_error_last(), "task.json");
    assert_contains(kevo_error_last(), "object");
    remove_dir(dir);
}

static void test_task__missing_reference(void **state)
{
    char *dir = make_task_dir(BASE_JSON, false);
    char *ref = kevo_path_join(dir, "reference.c");
    kevo_task *t = (kevo_task *)0x1;
    assert_int_equal(kevo_task_load(&t, dir), KEVO_ENOTFOUND);
    assert_null(t);
    assert_contains(kevo_error_last(), ref);
    assert_contains(kevo_error_last(), "missing");
    free(ref);
    remove_dir(dir);
}

static void test_task__missing_task_json(void **state)
{
    char *dir = make_task_dir(NULL, true);
    char *json_path = kevo_path_join(dir, "task.json");
    kevo_task *t = (kevo_task *)0x1;
    assert_int_equal(kevo_task_load(&t, dir), KEVO_ENOTFOUND);
    assert_null(t);
    assert_contains(kevo_error_last(), json_path);
    assert_contains(kevo_error_last(), "missing");
    free(json_path);

    /* the folder itself missing */
    char *gone = kevo_path_join(dir, "no_such_task");
    assert_int_equal(kevo_task_load(&t, gone), KEVO_ENOTFOUND);
    assert_null(t);
    assert_contains(kevo_error_last(), gone);
    free(gone);
    remove_dir(dir);
}

/* ---- deterministic inputs ---- */

static const char INPUTS_JSON[] =
    "{\"name\": \"inputs_kernel\", \"level\": 1, \"category\": \"fused\",\n"
    " \"description\": \"one input per distribution\",\n"
    " \"params\": [\n"
    "  {\"name\": \"nrm\", \"role\": \"in\", \"type\": \"f64\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"normal\", \"mean\": 3, \"std\": 2}},\n"
    "  {\"name\": \"uni\", \"role\": \"in\", \"type\": \"f64\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"uniform\", \"low\": -2, \"high\": 3}},\n"
    "  {\"name\": \"unf\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"uniform\", \"low\": 0.5, \"high\": 0.75}},\n"
    "  {\"name\": \"rnd\", \"role\": \"in\", \"type\": \"f64\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"randint\", \"low\": -5, \"high\": 5}},\n"
    "  {\"name\": \"rni\", \"role\": \"inout\", \"type\": \"i32\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"randint\", \"low\": 10, \"high\": 13}},\n"
    "  {\"name\": \"cst\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"const\", \"value\": -7}},\n"
    "  {\"name\": \"csf\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"const\", \"value\": 0.25}},\n"
    "  {\"name\": \"dfi\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"]},\n"
    "  {\"name\": \"byt\", \"role\": \"in\", \"type\": \"u8\", \"shape\": [\"N\"],\n"
    "   \"init\": {\"dist\": \"randint\", \"low\": 0, \"high\": 256}},\n"
    "  {\"name\": \"out\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\", 2]},\n"
    "  {\"name\": \"eps\", \"role\": \"scalar\", \"type\": \"f64\", \"value\": 1e-5},\n"
    "  {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}\n"
    " ],\n"
    " \"sizes\": {\"N\": 100000}, \"check_sizes\": [{\"N\": 33}],\n"
    " \"flops\": \"N\", \"bytes\": \"N\"}\n";

enum { P_NRM, P_UNI, P_UNF, P_RND, P_RNI, P_CST, P_CSF, P_DFI, P_BYT, P_OUT, P_EPS, P_N };

static void test_task__inputs_same_seed_same_bytes(void **state)
{
    char *dir;
    kevo_task *t = load_text(INPUTS_JSON, &dir);
    for (size_t set = 0; set < kevo_task_nsets(t); set++) {
        kevo_call_data *a = NULL, *b = NULL;
        assert_int_equal(kevo_task_inputs(&a, t, set, 42), 0);
        assert_int_equal(kevo_task_inputs(&b, t, set, 42), 0);
        assert_int_equal(a->nparams, t->nparams);
        for (size_t i = 0; i < a->nparams; i++) {
            assert_int_equal(a->bytes[i], b->bytes[i]);
            assert_true(a->scalar[i] == b->scalar[i]);
            if (a->data[i])
                assert_memory_equal(a->data[i], b->data[i], a->bytes[i]);
            else
                assert_null(b->data[i]);
        }
        kevo_call_data_free(a);
        kevo_call_data_free(b);
    }
    kevo_call_data_free(NULL);
    kevo_task_free(t);
    remove_dir(dir);
}

/* The same task loaded from another folder gives the same bytes: only
 * (task name, set, seed) matter, not the path. */
static void test_task__inputs_independent_of_folder(void **state)
{
    char *d1, *d2;
    kevo_task *t1 = load_text(INPUTS_JSON, &d1);
    kevo_task *t2 = load_text(INPUTS_JSON, &d2);
    kevo_call_data *a = NULL, *b = NULL;
    assert_int_equal(kevo_task_inputs(&a, t1, 1, 7), 0);
    assert_int_equal(kevo_task_inputs(&b, t2, 1, 7), 0);
    for (size_t i = 0; i < a->nparams; i++)
        if (a->data[i])
            assert_memory_equal(a->data[i], b->data[i], a->bytes[i]);
    kevo_call_data_free(a);
    kevo_call_data_free(b);
    kevo_task_free(t1);
    kevo_task_free(t2);
    remove_dir(d1);
    remove_dir(d2);
}

static void test_task__inputs_different_seed_differs(void **state)
{
    char *dir;
    kevo_task *t = load_text(INPUTS_JSON, &dir);
    kevo_call_data *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(kevo_task_inputs(&a, t, 0, 1), 0);
    assert_int_equal(kevo_task_inputs(&b, t, 0, 2), 0);
    assert_int_equal(kevo_task_inputs(&c, t, 1, 1), 0);
    const int random_params[] = {P_NRM, P_UNI, P_UNF, P_RND, P_RNI, P_DFI, P_BYT};
    for (size_t k = 0; k < sizeof(random_params) / sizeof(random_params[0]); k++) {
        int i = random_params[k];
        assert_int_equal(a->bytes[i], b->bytes[i]);
        assert_true(memcmp(a->data[i], b->data[i], a->bytes[i]) != 0);
        /* another size set: another stream, not a prefix of the first */
        assert_true(memcmp(a->data[i], c->data[i], c->bytes[i]) != 0);
    }
    /* const inputs do not depend on the seed */
    assert_memory_equal(a->data[P_CST], b->data[P_CST], a->bytes[P_CST]);
    /* two params of the same task get different streams */
    assert_true(memcmp(a->data[P_NRM], a->data[P_UNI], a->bytes[P_NRM]) != 0);
    kevo_call_data_free(a);
    kevo_call_data_free(b);
    kevo_call_data_free(c);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__inputs_layout(void **state)
{
    char *dir;
    kevo_task *t = load_text(INPUTS_JSON, &dir);
    kevo_call_data *d = NULL;
    assert_int_equal(kevo_task_inputs(&d, t, 1, 3), 0);
    assert_int_equal(d->nparams, 12);
    assert_int_equal(d->count[P_NRM], 33);
    assert_int_equal(d->bytes[P_NRM], 33 * 8);
    assert_int_equal(d->bytes[P_UNF], 33 * 4);
    assert_int_equal(d->bytes[P_BYT], 33);
    assert_int_equal(d->ndim[P_NRM], 1);
    assert_int_equal(d->dims[P_NRM * 8], 33);
    /* out: sized, no data */
    assert_null(d->data[P_OUT]);
    assert_int_equal(d->count[P_OUT], 66);
    assert_int_equal(d->bytes[P_OUT], 66 * 4);
    assert_int_equal(d->ndim[P_OUT], 2);
    assert_int_equal(d->dims[P_OUT * 8 + 0], 33);
    assert_int_equal(d->dims[P_OUT * 8 + 1], 2);
    /* inout: generated */
    assert_non_null(d->data[P_RNI]);
    /* scalars: no buffer, value from "value" or from the size set */
    assert_null(d->data[P_EPS]);
    assert_int_equal(d->bytes[P_EPS], 0);
    assert_true(d->scalar[P_EPS] == 1e-5);
    assert_true(d->scalar[P_N] == 33);
    kevo_call_data_free(d);
    kevo_task_free(t);
    remove_dir(dir);
}

/* kevo_rng_normal's shape, tails included: 2M draws in 20 bins against
 * the normal distribution's probabilities (Pearson's chi-square, 19
 * degrees of freedom; 70 is beyond the 1e-6 quantile, and the seed is
 * fixed, so this cannot flake). A wrong strip table, a wrong tail or a
 * correlation between strip and position would show here. */
static void test_task__rng_normal_shape(void **state)
{
    (void)state;
    const double edge[] = {-4, -3.44, -3, -2.5, -2, -1.5, -1, -0.5, -0.25, 0,
                           0.25, 0.5, 1, 1.5, 2, 2.5, 3, 3.44, 4};
    enum { NE = sizeof(edge) / sizeof(edge[0]), NB = NE + 1, N = 2000000 };
    long count[NB] = {0};
    kevo_rng r;
    kevo_rng_seed(&r, 20261201);
    double sum = 0;
    for (int k = 0; k < N; k++) {
        double z = kevo_rng_normal(&r);
        sum += z;
        int b = 0;
        while (b < NE && z >= edge[b])
            b++;
        count[b]++;
    }
    double chi = 0;
    for (int b = 0; b < NB; b++) {
        double lo = b == 0 ? 0 : 0.5 * erfc(-edge[b - 1] / sqrt(2.0));
        double hi = b == NE ? 1 : 0.5 * erfc(-edge[b] / sqrt(2.0));
        double e = (hi - lo) * N;
        chi += (count[b] - e) * (count[b] - e) / e;
    }
    if (chi > 70)
        print_error("chi-square %.1f over %d bins\n", chi, NB);
    assert_true(chi < 70);
    assert_true(fabs(sum / N) < 0.005);
}

static void test_task__inputs_distributions(void **state)
{
    char *dir;
    kevo_task *t = load_text(INPUTS_JSON, &dir);
    kevo_call_data *d = NULL;
    assert_int_equal(kevo_task_inputs(&d, t, 0, 12345), 0);
    const int64_t n = 100000;
    assert_int_equal(d->count[P_NRM], n);

    /* normal(3, 2): sample mean and std close over 100k samples
     * (standard error of the mean 0.006, of the std ~0.0045) */
    const double *nrm = d->data[P_NRM];
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; i++)
        sum += nrm[i];
    double mean = sum / (double)n;
    for (int64_t i = 0; i < n; i++)
        sq += (nrm[i] - mean) * (nrm[i] - mean);
    double sd = sqrt(sq / (double)(n - 1));
    assert_true(fabs(mean - 3) < 0.05);
    assert_true(fabs(sd - 2) < 0.05);

    /* uniform [-2, 3): within bounds, spread over the range */
    const double *uni = d->data[P_UNI];
    double lo = INFINITY, hi = -INFINITY;
    sum = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(uni[i] >= -2 && uni[i] < 3);
        lo = fmin(lo, uni[i]);
        hi = fmax(hi, uni[i]);
        sum += uni[i];
    }
    assert_true(lo < -1.99 && hi > 2.99);
    assert_true(fabs(sum / (double)n - 0.5) < 0.05);

    /* uniform f32 [0.5, 0.75) */
    const float *unf = d->data[P_UNF];
    for (int64_t i = 0; i < n; i++)
        assert_true(unf[i] >= 0.5f && unf[i] < 0.75f);

    /* randint [-5, 5) in a float buffer: integers, low reached, high never */
    const double *rnd = d->data[P_RND];
    int hist[10] = {0};
    for (int64_t i = 0; i < n; i++) {
        assert_true(rnd[i] == floor(rnd[i]));
        assert_true(rnd[i] >= -5 && rnd[i] < 5);
        hist[(int)rnd[i] + 5]++;
    }
    for (int k = 0; k < 10; k++)
        assert_true(hist[k] > n / 10 - 1000 && hist[k] < n / 10 + 1000);

    /* randint [10, 13) in an int32 buffer */
    const int32_t *rni = d->data[P_RNI];
    int seen[3] = {0};
    for (int64_t i = 0; i < n; i++) {
        assert_true(rni[i] >= 10 && rni[i] < 13);
        seen[rni[i] - 10] = 1;
    }
    assert_true(seen[0] && seen[1] && seen[2]);

    /* const: exact */
    const int64_t *cst = d->data[P_CST];
    const float *csf = d->data[P_CSF];
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(cst[i], -7);
        assert_true(csf[i] == 0.25f);
    }

    /* default integer init: randint [0, 100) */
    const int64_t *dfi = d->data[P_DFI];
    for (int64_t i = 0; i < n; i++)
        assert_true(dfi[i] >= 0 && dfi[i] < 100);

    /* u8 randint [0, 256): full byte range, no wrap-around */
    const uint8_t *byt = d->data[P_BYT];
    int bytes_seen[256] = {0};
    for (int64_t i = 0; i < n; i++)
        bytes_seen[byt[i]] = 1;
    for (int k = 0; k < 256; k++)
        assert_true(bytes_seen[k]);

    kevo_call_data_free(d);
    kevo_task_free(t);
    remove_dir(dir);
}

/* ---- discovery ---- */

static void mkdir_p(const char *root, const char *rel)
{
    char *p = kevo_path_join(root, rel);
    assert_int_equal(kevo_mkdirs(p, 0755), 0);
    free(p);
}

static void test_task__find_nested_sorted(void **state)
{
    char *root = make_tmpdir();
    const char *tasks[] = {"level2/b_task", "level1/020_z", "level1/003_a", "level1/group/010_m",
                           "zeta"};
    for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
        mkdir_p(root, tasks[i]);
        char *d = kevo_path_join(root, tasks[i]);
        write_file(d, "task.json", "{}");
        free(d);
    }
    mkdir_p(root, "level1/not_a_task"); /* no task.json */
    mkdir_p(root, "empty");
    mkdir_p(root, ".hidden");
    char *hidden = kevo_path_join(root, ".hidden");
    write_file(hidden, "task.json", "{}");
    free(hidden);
    write_file(root, "stray.json", "{}");

    const char *expect[] = {"level1/003_a", "level1/020_z", "level1/group/010_m",
                            "level2/b_task", "zeta"};
    /* with and without a trailing slash */
    for (int slash = 0; slash < 2; slash++) {
        char rootarg[4200];
        snprintf(rootarg, sizeof(rootarg), "%s%s", root, slash ? "/" : "");
        char **dirs = NULL;
        size_t n = 0;
        assert_int_equal(kevo_task_find(&dirs, &n, rootarg), 0);
        assert_int_equal(n, 5);
        for (size_t i = 0; i < n; i++) {
            char *want = kevo_path_join(root, expect[i]);
            assert_string_equal(dirs[i], want);
            free(want);
        }
        kevo_task_dirs_free(dirs, n);
    }

    /* a root that is itself a task */
    char *zeta = kevo_path_join(root, "zeta");
    char **dirs = NULL;
    size_t n = 0;
    assert_int_equal(kevo_task_find(&dirs, &n, zeta), 0);
    assert_int_equal(n, 1);
    assert_string_equal(dirs[0], zeta);
    kevo_task_dirs_free(dirs, n);
    free(zeta);

    /* nothing found is not an error */
    char *empty = kevo_path_join(root, "empty");
    assert_int_equal(kevo_task_find(&dirs, &n, empty), 0);
    assert_int_equal(n, 0);
    kevo_task_dirs_free(dirs, n);
    free(empty);

    /* a missing root is */
    char *gone = kevo_path_join(root, "gone");
    assert_int_equal(kevo_task_find(&dirs, &n, gone), KEVO_ENOTFOUND);
    assert_contains(kevo_error_last(), gone);
    assert_null(dirs);
    assert_int_equal(n, 0);
    free(gone);
    kevo_task_dirs_free(NULL, 0);

    remove_dir(root);
}

static void test_task__find_suite(void **state)
{
    char **dirs = NULL;
    size_t n = 0;
    assert_int_equal(kevo_task_find(&dirs, &n, "suites/c/level1"), 0);
    assert_true(n >= 1);
    assert_string_equal(dirs[0], "suites/c/level1/001_relu");
    for (size_t i = 1; i < n; i++)
        assert_true(strcmp(dirs[i - 1], dirs[i]) < 0);
    kevo_task_dirs_free(dirs, n);
}

/* ---- robustness: found by fuzz_task_json (tests/fuzz/corpus/fuzz_task_json/crash_*) ---- */

static void test_task__shape_out_of_range(void **state)
{
    /* a literal dimension beyond int64_t: was an undefined double -> long long cast */
    cJSON *root = base_json();
    set_raw(param_of(root, 0), "shape", "[1e300]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "dimension 0", NULL);

    /* an expression beyond int64_t: was an undefined double -> int64_t cast */
    root = base_json();
    set_raw(root, "sizes", "{\"N\": 1000000000000000, \"R\": 3, \"C\": 4}");
    cJSON_DeleteItemFromObject(root, "check_sizes");
    set_raw(param_of(root, 0), "shape", "[\"N*N*N\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "dimension 0", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[\"99999999999999999999\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", NULL);

    /* an element count beyond int64_t: was a signed overflow */
    root = base_json();
    set_raw(root, "sizes", "{\"N\": 1000000000000000, \"R\": 3, \"C\": 4}");
    cJSON_DeleteItemFromObject(root, "check_sizes");
    set_raw(param_of(root, 0), "shape", "[\"N\", \"N\", \"N\"]");
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "4 GiB", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "shape", "[1e15, 1e15, 0]"); /* a zero after an overflow */
    expect_load_error(root, KEVO_EINVAL, "'params[0].shape'", "0 elements", NULL);
}

static void test_task__expr_nesting_limit(void **state)
{
    /* the evaluator recursed without a limit: a long run of '(' or '-'
     * overflowed the stack */
    enum { DEEP = 100000 };
    char *deep = malloc(2 * DEEP + 2);
    memset(deep, '(', DEEP);
    deep[DEEP] = '1';
    memset(deep + DEEP + 1, ')', DEEP);
    deep[2 * DEEP + 1] = '\0';
    eval_err(deep, true, "nested too deeply");
    eval_err(deep, false, "nested too deeply");
    memset(deep, '-', DEEP);
    deep[DEEP] = '1';
    deep[DEEP + 1] = '\0';
    eval_err(deep, true, "nested too deeply");
    free(deep);

    /* ordinary nesting still works */
    char ok[512];
    memset(ok, '(', 100);
    ok[100] = '7';
    memset(ok + 101, ')', 100);
    ok[201] = '\0';
    assert_true(eval_ok(ok, true) == 7);
    assert_true(eval_ok("--7", true) == 7);
    assert_true(eval_ok("-(-(3))", true) == 3);

    /* and inside a task.json */
    cJSON *root = base_json();
    char *flops = malloc(2 * 5000 + 2);
    memset(flops, '(', 5000);
    flops[5000] = 'N';
    memset(flops + 5001, ')', 5000);
    flops[10001] = '\0';
    set_item(root, "flops", cJSON_CreateString(flops));
    free(flops);
    expect_load_error(root, KEVO_EINVAL, "'flops'", "nested too deeply", NULL);
}

static void test_task__integer_init_out_of_range(void **state)
{
    /* values an integer type cannot hold: the conversion was undefined
     * (and machine-dependent, breaking reproducible inputs) */
    cJSON *root = base_json();
    set_raw(param_of(root, 0), "type", "\"u8\"");
    set_raw(param_of(root, 0), "init", "{\"dist\": \"randint\", \"low\": -5, \"high\": 5}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "u8", NULL);

    root = base_json();
    set_raw(param_of(root, 0), "type", "\"u8\"");
    set_raw(param_of(root, 0), "init", "{\"dist\": \"uniform\", \"low\": 0, \"high\": 300}");
    expect_load_error(root, KEVO_EINVAL, "'params[0].init'", "u8", NULL);

    root = base_json();
    set_raw(param_of(root, 2), "init", "{\"dist\": \"const\", \"value\": 1e300}");
    expect_load_error(root, KEVO_EINVAL, "'params[2].init'", "i32", NULL);

    root = base_json();
    set_raw(param_of(root, 2), "init", "{\"dist\": \"const\", \"value\": 2.5}");
    expect_load_error(root, KEVO_EINVAL, "'params[2].init'", "i32", NULL);

    root = base_json();
    set_raw(param_of(root, 2), "init",
            "{\"dist\": \"randint\", \"low\": 0, \"high\": 2147483649}");
    expect_load_error(root, KEVO_EINVAL, "'params[2].init'", "i32", NULL);

    /* the edges of the ranges are fine */
    root = base_json();
    set_raw(param_of(root, 2), "init",
            "{\"dist\": \"randint\", \"low\": -2147483648, \"high\": 2147483648}");
    char *dir;
    kevo_task *t = load_cjson(root, &dir);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__inputs_integer_normal_saturates(void **state)
{
    /* normal() on integer types has unbounded tails: values saturate */
    static const char json[] =
        "{\"name\": \"sat\", \"level\": 1, \"category\": \"fused\", \"description\": \"d\",\n"
        " \"params\": [\n"
        "  {\"name\": \"b\", \"role\": \"in\", \"type\": \"u8\", \"shape\": [\"N\"],\n"
        "   \"init\": {\"dist\": \"normal\", \"mean\": 128, \"std\": 1000}},\n"
        "  {\"name\": \"i\", \"role\": \"in\", \"type\": \"i32\", \"shape\": [\"N\"],\n"
        "   \"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1e300}},\n"
        "  {\"name\": \"l\", \"role\": \"in\", \"type\": \"i64\", \"shape\": [\"N\"],\n"
        "   \"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1e300}},\n"
        "  {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]}\n"
        " ],\n"
        " \"sizes\": {\"N\": 1000}, \"flops\": \"N\", \"bytes\": \"N\"}\n";
    char *dir;
    kevo_task *t = load_text(json, &dir);
    kevo_call_data *d = NULL;
    assert_int_equal(kevo_task_inputs(&d, t, 0, 9), 0);
    const uint8_t *b = d->data[0];
    const int32_t *i32 = d->data[1];
    const int64_t *i64 = d->data[2];
    int b0 = 0, b255 = 0, imin = 0, imax = 0, lmin = 0, lmax = 0;
    for (int k = 0; k < 1000; k++) {
        b0 += b[k] == 0;
        b255 += b[k] == 255;
        imin += i32[k] == INT32_MIN;
        imax += i32[k] == INT32_MAX;
        lmin += i64[k] == INT64_MIN;
        lmax += i64[k] == INT64_MAX;
    }
    assert_true(b0 > 300 && b255 > 300);
    assert_true(imin > 400 && imax > 400 && imin + imax == 1000);
    assert_true(lmin > 400 && lmax > 400 && lmin + lmax == 1000);
    kevo_call_data_free(d);
    kevo_task_free(t);
    remove_dir(dir);
}

static void test_task__suite_tasks_all_load(void **state)
{
    char **dirs = NULL;
    size_t n = 0;
    assert_int_equal(kevo_task_find(&dirs, &n, "suites"), 0);
    assert_true(n >= 1);
    for (size_t i = 0; i < n; i++) {
        kevo_task *t = NULL;
        int rc = kevo_task_load(&t, dirs[i]);
        if (rc < 0)
            print_error("%s\n", kevo_error_last());
        assert_int_equal(rc, 0);
        char *proto = NULL;
        assert_int_equal(kevo_task_prototype(&proto, t), 0);
        free(proto);
        kevo_task_free(t);
    }
    kevo_task_dirs_free(dirs, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task__load_valid),
        cmocka_unit_test(test_task__load_explicit_options),
        cmocka_unit_test(test_task__default_inits),
        cmocka_unit_test(test_task__init_range_from_sizes),
        cmocka_unit_test(test_task__load_suite_relu),
        cmocka_unit_test(test_task__prototype_every_role_and_dtype),
        cmocka_unit_test(test_task__prototype_suite_relu),
        cmocka_unit_test(test_task__dtype_tables),
        cmocka_unit_test(test_task__expr_precedence_and_parentheses),
        cmocka_unit_test(test_task__expr_sizes),
        cmocka_unit_test(test_task__expr_integer_division_truncates),
        cmocka_unit_test(test_task__expr_double_mode),
        cmocka_unit_test(test_task__expr_errors),
        cmocka_unit_test(test_task__missing_required_fields),
        cmocka_unit_test(test_task__wrong_field_types),
        cmocka_unit_test(test_task__unknown_fields),
        cmocka_unit_test(test_task__unknown_dtype),
        cmocka_unit_test(test_task__unknown_role),
        cmocka_unit_test(test_task__bad_params),
        cmocka_unit_test(test_task__unknown_init_dist),
        cmocka_unit_test(test_task__check_sizes_entry_missing_a_size),
        cmocka_unit_test(test_task__scalar_without_value_or_size),
        cmocka_unit_test(test_task__out_param_with_init),
        cmocka_unit_test(test_task__shape_with_zero_elements),
        cmocka_unit_test(test_task__bad_expressions_in_fields),
        cmocka_unit_test(test_task__invalid_json),
        cmocka_unit_test(test_task__missing_reference),
        cmocka_unit_test(test_task__missing_task_json),
        cmocka_unit_test(test_task__inputs_same_seed_same_bytes),
        cmocka_unit_test(test_task__inputs_independent_of_folder),
        cmocka_unit_test(test_task__inputs_different_seed_differs),
        cmocka_unit_test(test_task__inputs_layout),
        cmocka_unit_test(test_task__inputs_distributions),
        cmocka_unit_test(test_task__rng_normal_shape),
        cmocka_unit_test(test_task__find_nested_sorted),
        cmocka_unit_test(test_task__find_suite),
        cmocka_unit_test(test_task__shape_out_of_range),
        cmocka_unit_test(test_task__expr_nesting_limit),
        cmocka_unit_test(test_task__integer_init_out_of_range),
        cmocka_unit_test(test_task__inputs_integer_normal_saturates),
        cmocka_unit_test(test_task__suite_tasks_all_load),
    };
    return cmocka_run_group_tests_name("task", tests, NULL, NULL);
}
