/*
 * tests/unit/test_task_author.c - writing a task (task/author.c, what
 * `kevo tasks new` uses): task.json text that kevo_task_load reads back to
 * the same task, the C-type mapping, the shape rule, the check-size rule
 * (sets that would leave a buffer empty or too large are left out, and
 * say so) and the default bytes expression.
 *
 * Tasks are loaded from tiny folders under a fresh mkdtemp() directory;
 * nothing here compiles or runs a kernel.
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

static char *tmpdir(void)
{
    char path[] = "/tmp/kevo_test_author_XXXXXX";
    char *dir = mkdtemp(path);
    assert_non_null(dir);
    return strdup(dir);
}

/* A task folder holding `json` and an empty reference.c, loaded. */
static kevo_task *load_json(const char *dir, const char *json)
{
    char *jp = kevo_path_join(dir, "task.json"), *rp = kevo_path_join(dir, "reference.c");
    assert_int_equal(kevo_file_write(jp, json, strlen(json)), 0);
    assert_int_equal(kevo_file_write(rp, "\n", 1), 0);
    free(jp);
    free(rp);
    kevo_task *t = NULL;
    if (kevo_task_load(&t, dir) < 0)
        fail_msg("%s", kevo_error_last());
    return t;
}

/* Forget every buffer's shape (as a task being written has none yet). */
static void drop_shapes(kevo_task *t)
{
    for (size_t i = 0; i < t->nparams; i++) {
        for (size_t d = 0; d < t->params[i].ndim; d++)
            free(t->params[i].shape[d]);
        free(t->params[i].shape);
        t->params[i].shape = NULL;
        t->params[i].ndim = 0;
    }
}

static void test_task_author__json_reads_back_the_same_task(void **state)
{
    (void)state;
    kevo_task *a = NULL, *b = NULL;
    char *json = NULL, *dir = tmpdir();
    assert_int_equal(kevo_task_load(&a, KEVO_SOURCE_DIR "/suites/c/level1/028_rmsnorm_lastdim"), 0);
    assert_int_equal(kevo_task_json(&json, a), 0);
    b = load_json(dir, json);
    assert_string_equal(b->name, a->name);
    assert_int_equal(b->level, a->level);
    assert_string_equal(b->category, a->category);
    assert_string_equal(b->description, a->description);
    assert_int_equal(b->nparams, a->nparams);
    for (size_t i = 0; i < a->nparams; i++) {
        const kevo_param *p = &a->params[i], *q = &b->params[i];
        assert_string_equal(q->name, p->name);
        assert_int_equal(q->role, p->role);
        assert_int_equal(q->type, p->type);
        assert_int_equal(q->ndim, p->ndim);
        for (size_t d = 0; d < p->ndim; d++)
            assert_string_equal(q->shape[d], p->shape[d]);
        assert_int_equal(q->has_value, p->has_value);
        assert_true(q->value == p->value); /* 1e-05 exactly: the shortest decimal */
        assert_int_equal(q->init.dist, p->init.dist);
        assert_true(q->init.a == p->init.a && q->init.b == p->init.b);
    }
    assert_int_equal(b->sizes.n, a->sizes.n);
    assert_memory_equal(b->sizes.values, a->sizes.values, a->sizes.n * sizeof(int64_t));
    assert_int_equal(b->ncheck, a->ncheck);
    for (size_t c = 0; c < a->ncheck; c++)
        assert_memory_equal(b->check_sizes[c].values, a->check_sizes[c].values,
                            a->check_sizes[c].n * sizeof(int64_t));
    assert_true(b->atol == a->atol && b->rtol == a->rtol);
    assert_string_equal(b->flops, a->flops);
    assert_string_equal(b->bytes, a->bytes);
    assert_int_equal(b->nbackends, 2); /* ["c", "opencl"] written, since not just c */
    assert_string_equal(b->backends[1], "opencl");
    /* a name with a quote is escaped, not broken JSON */
    free(b->description);
    b->description = strdup("say \"hi\"\n");
    free(json);
    assert_int_equal(kevo_task_json(&json, b), 0);
    assert_non_null(strstr(json, "\"say \\\"hi\\\"\\n\""));
    free(json);
    kevo_task_free(a);
    kevo_task_free(b);
    kevo_rmtree(dir);
    free(dir);
}

static void test_task_author__c_types(void **state)
{
    (void)state;
    kevo_dtype t;
    assert_int_equal(kevo_dtype_from_c(&t, "float"), 0);
    assert_int_equal(t, KEVO_DT_F32);
    assert_int_equal(kevo_dtype_from_c(&t, "double"), 0);
    assert_int_equal(t, KEVO_DT_F64);
    assert_int_equal(kevo_dtype_from_c(&t, "int"), 0);
    assert_int_equal(t, KEVO_DT_I32);
    assert_int_equal(kevo_dtype_from_c(&t, "long"), 0);
    assert_int_equal(t, KEVO_DT_I64);
    assert_int_equal(kevo_dtype_from_c(&t, "unsigned char"), 0);
    assert_int_equal(t, KEVO_DT_U8);
    /* the same size but another C type: not exact (a cast is the caller's) */
    assert_int_equal(kevo_dtype_from_c(&t, "long long"), KEVO_ENOTFOUND);
    assert_int_equal(kevo_dtype_from_c(&t, "unsigned long"), KEVO_ENOTFOUND);
    assert_int_equal(kevo_dtype_from_c(&t, "char"), KEVO_ENOTFOUND);
    assert_int_equal(kevo_dtype_from_c(&t, NULL), KEVO_ENOTFOUND);
}

static void test_task_author__shape_rule(void **state)
{
    (void)state;
    char *dir = tmpdir();
    kevo_buf missing = {0};
    /* one size (eps has a value and is a float: not a size) -> [n] */
    kevo_task *t = load_json(dir, "{\"name\": \"f\", \"level\": 1, \"category\": \"c\", "
                                  "\"description\": \"d\", \"params\": ["
                                  "{\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", "
                                  "\"shape\": [\"n\", 2]},"
                                  "{\"name\": \"y\", \"role\": \"out\", \"type\": \"i32\", "
                                  "\"shape\": [3]},"
                                  "{\"name\": \"n\", \"role\": \"scalar\", \"type\": \"i64\"},"
                                  "{\"name\": \"eps\", \"role\": \"scalar\", \"type\": \"f32\", "
                                  "\"value\": 0.5}],"
                                  "\"sizes\": {\"n\": 10}, \"flops\": \"n\", \"bytes\": \"n\"}");
    drop_shapes(t);
    assert_int_equal(kevo_task_infer_shapes(t, &missing), 0);
    assert_int_equal(missing.len, 0);
    assert_int_equal(t->params[0].ndim, 1);
    assert_string_equal(t->params[0].shape[0], "n");
    assert_string_equal(t->params[1].shape[0], "n");
    kevo_task_free(t);

    /* two sizes -> no guess: both buffers named, shapes left empty; a
     * shape given stays */
    t = load_json(dir, "{\"name\": \"g\", \"level\": 1, \"category\": \"c\", "
                       "\"description\": \"d\", \"params\": ["
                       "{\"name\": \"a\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"m\"]},"
                       "{\"name\": \"b\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"k\"]},"
                       "{\"name\": \"c\", \"role\": \"out\", \"type\": \"f32\", "
                       "\"shape\": [\"m\"]},"
                       "{\"name\": \"m\", \"role\": \"scalar\", \"type\": \"i32\"},"
                       "{\"name\": \"k\", \"role\": \"scalar\", \"type\": \"i32\"}],"
                       "\"sizes\": {\"m\": 4, \"k\": 5}, \"flops\": \"m\", \"bytes\": \"m\"}");
    drop_shapes(t);
    t->params[1].shape = calloc(1, sizeof(char *));
    t->params[1].shape[0] = strdup("k*2");
    t->params[1].ndim = 1;
    assert_int_equal(kevo_task_infer_shapes(t, &missing), 0);
    assert_string_equal(kevo_buf_cstr(&missing), "a c");
    assert_int_equal(t->params[0].ndim, 0);
    assert_string_equal(t->params[1].shape[0], "k*2");
    kevo_task_free(t);
    kevo_buf_free(&missing);
    kevo_rmtree(dir);
    free(dir);
}

static kevo_task *one_buffer(const char *dir, const char *shape, int n)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"name\": \"h\", \"level\": 1, \"category\": \"c\", \"description\": \"d\", "
             "\"params\": [{\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", "
             "\"shape\": [\"%s\"]}, {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}],"
             "\"sizes\": {\"N\": %d}, \"flops\": \"0\", \"bytes\": \"4*N\"}",
             shape, n);
    return load_json(dir, json);
}

static void test_task_author__check_size_rule(void **state)
{
    (void)state;
    char *dir = tmpdir();
    kevo_buf note = {0};
    /* one size: 1, 7, 997 */
    kevo_task *t = one_buffer(dir, "N", 4096);
    assert_int_equal(kevo_task_derive_check_sizes(t, &note), 0);
    assert_int_equal(t->ncheck, 3);
    assert_int_equal(t->check_sizes[0].values[0], 1);
    assert_int_equal(t->check_sizes[1].values[0], 7);
    assert_int_equal(t->check_sizes[2].values[0], 997);
    assert_string_equal(t->check_sizes[2].names[0], "N");
    assert_int_equal(note.len, 0);
    kevo_task_free(t);

    /* N - 8 is empty at 1 and 7: left out, said; the timed value is not repeated */
    t = one_buffer(dir, "N - 8", 997);
    assert_int_equal(kevo_task_derive_check_sizes(t, &note), 0);
    assert_int_equal(t->ncheck, 0);
    assert_non_null(strstr(kevo_buf_cstr(&note), "all sizes 1 left out (a buffer would be empty)"));
    assert_non_null(strstr(kevo_buf_cstr(&note), "all sizes 7 left out"));
    kevo_task_free(t);

    /* N*N*N at 997 is a billion elements: left out as too large */
    kevo_buf_clear(&note);
    t = one_buffer(dir, "N*N*N", 16);
    assert_int_equal(kevo_task_derive_check_sizes(t, &note), 0);
    assert_int_equal(t->ncheck, 2);
    assert_non_null(strstr(kevo_buf_cstr(&note), "all sizes 997 left out (buffers too large)"));
    kevo_task_free(t);
    kevo_buf_free(&note);

    /* three sizes: the prime nearest 10 is 11 */
    t = load_json(dir, "{\"name\": \"g\", \"level\": 1, \"category\": \"c\", "
                       "\"description\": \"d\", \"params\": ["
                       "{\"name\": \"c\", \"role\": \"out\", \"type\": \"f32\", "
                       "\"shape\": [\"M\", \"N\", \"K\"]},"
                       "{\"name\": \"M\", \"role\": \"scalar\", \"type\": \"i64\"},"
                       "{\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"},"
                       "{\"name\": \"K\", \"role\": \"scalar\", \"type\": \"i64\"}],"
                       "\"sizes\": {\"M\": 4, \"N\": 5, \"K\": 6}, \"flops\": \"0\", "
                       "\"bytes\": \"0\"}");
    assert_int_equal(kevo_task_derive_check_sizes(t, &note), 0);
    assert_int_equal(t->ncheck, 3);
    assert_int_equal(t->check_sizes[2].values[1], 11);
    kevo_task_free(t);
    kevo_buf_free(&note);
    kevo_rmtree(dir);
    free(dir);
}

static void test_task_author__bytes(void **state)
{
    (void)state;
    char *dir = tmpdir();
    char *bytes = NULL;
    kevo_task *t = load_json(dir, "{\"name\": \"g\", \"level\": 1, \"category\": \"c\", "
                                  "\"description\": \"d\", \"params\": ["
                                  "{\"name\": \"a\", \"role\": \"in\", \"type\": \"f32\", "
                                  "\"shape\": [\"M\", \"K\"]},"
                                  "{\"name\": \"b\", \"role\": \"in\", \"type\": \"f64\", "
                                  "\"shape\": [\"M\", \"K\"]},"
                                  "{\"name\": \"c\", \"role\": \"out\", \"type\": \"u8\", "
                                  "\"shape\": [\"(K + 2) / 2\", 3]},"
                                  "{\"name\": \"M\", \"role\": \"scalar\", \"type\": \"i64\"},"
                                  "{\"name\": \"K\", \"role\": \"scalar\", \"type\": \"i64\"}],"
                                  "\"sizes\": {\"M\": 4, \"K\": 6}, \"flops\": \"0\", "
                                  "\"bytes\": \"0\"}");
    assert_int_equal(kevo_task_bytes_expr(&bytes, t), 0);
    /* one term per distinct shape; an expression dimension parenthesised */
    assert_string_equal(bytes, "12*M*K + 1*((K + 2) / 2)*3");
    double v;
    assert_int_equal(kevo_expr_eval(&v, bytes, &t->sizes, false), 0);
    assert_true(v == 12 * 4 * 6 + 4 * 3);
    free(bytes);
    kevo_task_free(t);
    kevo_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_author__json_reads_back_the_same_task),
        cmocka_unit_test(test_task_author__c_types),
        cmocka_unit_test(test_task_author__shape_rule),
        cmocka_unit_test(test_task_author__check_size_rule),
        cmocka_unit_test(test_task_author__bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
