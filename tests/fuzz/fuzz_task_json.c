/*
 * tests/fuzz/fuzz_task_json.c - libFuzzer target for the task loader: the
 * input is written as task.json into one temp task folder (made once, with
 * an empty reference.c) and loaded; a task that loads is also turned into
 * its prototype, its shapes, its work and (when small) its inputs. The raw
 * bytes are also evaluated as a size expression in both modes.
 *
 * Besides the sanitizers it checks the loader's contract: a failure
 * returns a kevo error code with a message naming task.json.
 */
#include "kevo/task.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *task_dir;
static char *json_path;

static void cleanup(void)
{
    if (task_dir)
        kevo_rmtree(task_dir);
}

static void setup(void)
{
    if (kevo_mkdtemp(&task_dir, "kevo_fuzz_task_") < 0) {
        fprintf(stderr, "fuzz_task_json: %s\n", kevo_error_last());
        abort();
    }
    json_path = kevo_path_join(task_dir, "task.json");
    char *ref = kevo_path_join(task_dir, "reference.c");
    FILE *f = fopen(ref, "wb");
    if (!f)
        abort();
    fclose(f);
    free(ref);
    atexit(cleanup);
}

static void write_json(const uint8_t *data, size_t size)
{
    /* plain stdio, not kevo_file_write: no fsync per input */
    FILE *f = fopen(json_path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

static void exercise_task(const kevo_task *t)
{
    char *proto = NULL;
    if (kevo_task_prototype(&proto, t) < 0 || !proto || strncmp(proto, "void ", 5))
        abort();
    free(proto);

    double flops, bytes;
    if (kevo_task_work(&flops, &bytes, t) < 0)
        abort(); /* validated at load */

    /* every shape and scalar evaluates on every set (validated at load) */
    double total = 0;
    for (size_t s = 0; s < kevo_task_nsets(t); s++) {
        const kevo_sizes *sz = kevo_task_set(t, s);
        for (size_t i = 0; i < t->nparams; i++) {
            if (t->params[i].role == KEVO_ROLE_SCALAR) {
                double v;
                if (kevo_task_scalar_value(&v, t, i, sz) < 0)
                    abort();
                continue;
            }
            int64_t dims[8], count;
            size_t nd;
            if (kevo_task_param_shape(dims, &nd, &count, t, i, sz) < 0 || count < 1 ||
                nd != t->params[i].ndim)
                abort();
            total += (double)count * (double)kevo_dtype_size(t->params[i].type);
        }
    }
    /* generate the inputs of small tasks only (the fuzzer's RSS limit) */
    if (total <= 1 << 20) {
        for (size_t s = 0; s < kevo_task_nsets(t); s++) {
            kevo_call_data *d = NULL;
            if (kevo_task_inputs(&d, t, s, 1) < 0)
                abort();
            kevo_call_data_free(d);
        }
    }
}

static void exercise_expr(const uint8_t *data, size_t size)
{
    static char *names[] = {"N", "M", "K", "H", "W", "P", "S", "Z"};
    static int64_t values[] = {7, 1000000000000000LL, 3, 13, 0, 1, 2, 0};
    static const kevo_sizes sizes = {8, names, values};
    char *expr = malloc(size + 1);
    if (!expr)
        return;
    memcpy(expr, data, size);
    expr[size] = '\0';
    double v;
    for (int integer = 0; integer < 2; integer++) {
        int rc = kevo_expr_eval(&v, expr, &sizes, integer);
        if (rc < 0 && (rc != KEVO_EINVAL || !*kevo_error_last()))
            abort();
    }
    free(expr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!task_dir)
        setup();
    write_json(data, size);
    kevo_error_clear();
    kevo_task *t = NULL;
    int rc = kevo_task_load(&t, task_dir);
    if (rc == 0) {
        if (!t)
            abort();
        exercise_task(t);
        kevo_task_free(t);
    } else {
        if (t)
            abort();
        /* bad input: EINVAL with a message that names the file */
        if (rc != KEVO_EINVAL && rc != KEVO_ENOMEM) {
            fprintf(stderr, "unexpected error %d: %s\n", rc, kevo_error_last());
            abort();
        }
        if (rc == KEVO_EINVAL && !strstr(kevo_error_last(), json_path)) {
            fprintf(stderr, "message does not name %s: %s\n", json_path, kevo_error_last());
            abort();
        }
    }
    exercise_expr(data, size);
    return 0;
}
