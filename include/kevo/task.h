/*
 * kevo/task.h - tasks: task.json parsing and validation, the kernel's C
 * prototype, size expressions, deterministic input generation.
 *
 * The task module never runs code: it describes what to run. The format is
 * documented in docs/task-format.md.
 */
#ifndef KEVO_TASK_H
#define KEVO_TASK_H

#include "kevo/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { KEVO_DT_F32, KEVO_DT_F64, KEVO_DT_I32, KEVO_DT_I64, KEVO_DT_U8 } kevo_dtype;
typedef enum { KEVO_ROLE_IN, KEVO_ROLE_OUT, KEVO_ROLE_INOUT, KEVO_ROLE_SCALAR } kevo_role;
typedef enum {
    KEVO_INIT_NORMAL,
    KEVO_INIT_UNIFORM,
    KEVO_INIT_RANDINT,
    KEVO_INIT_CONST
} kevo_init_dist;

typedef struct kevo_init {
    kevo_init_dist dist;
    double a; /* mean | low | value (at the timed sizes when a_expr is set) */
    double b; /* std | high (... b_expr) */
    char *a_expr, *b_expr; /* uniform/randint low/high given as size expressions
                              ("num_classes"), evaluated per size set; else NULL */
} kevo_init;

typedef struct kevo_param {
    char *name;
    kevo_role role;
    kevo_dtype type;
    char **shape; /* ndim expressions (integers are kept as text) */
    size_t ndim;
    bool has_value; /* scalar with a fixed "value" */
    double value;
    kevo_init init;
    char *torch; /* torch tasks: "input:K" | "state:NAME" | "output:K"; NULL for size
                    scalars and in C tasks (docs/torch-tasks.md) */
} kevo_param;

/* A size configuration: name -> integer. */
typedef struct kevo_sizes {
    size_t n;
    char **names;
    int64_t *values;
} kevo_sizes;

typedef struct kevo_task {
    char *dir;            /* the task folder as given */
    char *json_path;      /* dir/task.json */
    char *reference_path; /* dir/reference.c, or the .py named by "reference" */
    bool torch;           /* the reference is a PyTorch module (docs/torch-tasks.md) */
    bool torch_eval;      /* torch_mode "eval": run the module in eval mode */
    char *kernelbench;    /* the KernelBench problem it is or translates, or NULL */
    char *draft_path;     /* torch tasks: dir/<draft>, a C start for the built-in
                             generator, or NULL */
    char *name;
    int level;
    char *category;
    char *description;
    kevo_param *params;
    size_t nparams;
    kevo_sizes sizes;        /* the timed configuration */
    kevo_sizes *check_sizes; /* extra configurations, each complete */
    size_t ncheck;
    double atol, rtol;
    char *flops, *bytes;
    char **backends;
    size_t nbackends;
    double timeout_s; /* wall limit of one reference call */
} kevo_task;

/* Load and validate DIR/task.json (and check its reference file exists).
 * On bad input returns KEVO_EINVAL (or KEVO_ENOTFOUND) with one message
 * naming the file, the field and the problem. *out is the caller's. */
int kevo_task_load(kevo_task **out, const char *dir);
void kevo_task_free(kevo_task *task);

/* Find every task folder (holding task.json) under root, sorted by path.
 * A relative root that is no folder from the cwd is looked up under the
 * data directory's suites/ (kevo_data_dir; a leading "suites/" is that
 * folder itself), so an installed kevo takes `kevo run c/level1`; the
 * paths found are then absolute. KEVO_ENOTFOUND when neither exists.
 * *out is an array of malloc'd strings; free with kevo_task_dirs_free. */
int kevo_task_find(char ***out, size_t *out_count, const char *root);
void kevo_task_dirs_free(char **dirs, size_t count);

/* "void relu(const float *x, float *y, int64_t N)" (no trailing ';'). */
int kevo_task_prototype(char **out, const kevo_task *task);
/* The C type of a dtype: "float", "int64_t", ... */
const char *kevo_dtype_ctype(kevo_dtype t);
const char *kevo_dtype_name(kevo_dtype t);
size_t kevo_dtype_size(kevo_dtype t);
bool kevo_dtype_is_float(kevo_dtype t);
const char *kevo_role_name(kevo_role r);

/* Evaluate an expression over sizes. integer=true: C integer semantics
 * (result must be an integer); false: double arithmetic. KEVO_EINVAL with
 * the problem on syntax errors, unknown names, division by zero. */
int kevo_expr_eval(double *out, const char *expr, const kevo_sizes *sizes, bool integer);

/* Number of size configurations: 1 (sizes) + ncheck. Set 0 is the timed
 * one. Borrowed pointer. */
size_t kevo_task_nsets(const kevo_task *task);
const kevo_sizes *kevo_task_set(const kevo_task *task, size_t index);

/* Shape of a buffer param under a size set: dims (up to 8) and element count. */
int kevo_task_param_shape(int64_t dims[8], size_t *out_ndim, int64_t *out_count,
                          const kevo_task *task, size_t param, const kevo_sizes *sizes);
/* Value of a scalar param under a size set (as double; exact for |v| < 2^53). */
int kevo_task_scalar_value(double *out, const kevo_task *task, size_t param,
                           const kevo_sizes *sizes);

/* The data of one call: for every param, a buffer (in/inout: generated
 * contents; out: size only, data NULL) or a scalar. */
typedef struct kevo_call_data {
    size_t nparams;
    void **data;       /* NULL for out and scalar params */
    size_t *bytes;     /* buffer size in bytes (0 for scalars) */
    int64_t *count;    /* element count (0 for scalars) */
    int64_t *dims;     /* nparams * 8 */
    size_t *ndim;
    double *scalar;    /* scalar values */
} kevo_call_data;

/* Generate inputs deterministically from (task name, size set, seed). */
int kevo_task_inputs(kevo_call_data **out, const kevo_task *task, size_t set, uint64_t seed);
void kevo_call_data_free(kevo_call_data *d);

/* flops / bytes of the timed configuration (0 when not given). */
int kevo_task_work(double *out_flops, double *out_bytes, const kevo_task *task);

bool kevo_task_supports(const kevo_task *task, const char *backend);

/* --- writing a task (task/author.c; `kevo tasks new`) ---------------------- */

typedef struct kevo_buf kevo_buf; /* kevo/util.h */

/* The task type whose C type is exactly the C type with this canonical
 * spelling (typedefs resolved, LP64): "float" f32, "double" f64, "int" i32,
 * "long" i64, "unsigned char" u8. KEVO_ENOTFOUND (no message) for any
 * other: a caller may still pass such an integer scalar through a cast. */
int kevo_dtype_from_c(kevo_dtype *out, const char *canonical);

/* The shape rule: when the task has exactly one size param (a scalar
 * without a value), every buffer param without a shape gets [that name].
 * Otherwise the names of the buffers without a shape are appended to
 * *missing, space-separated, and their shapes are left empty. */
int kevo_task_infer_shapes(kevo_task *task, kevo_buf *missing);

/* The check-size rule, for a task without check_sizes: three sets giving
 * every size 1, 7, and the prime nearest 1000^(1/k) (k the number of
 * sizes: 997, 31, 11, 5, ...), each left out when it equals the timed set
 * or an earlier one, when a buffer would be empty, or when the buffers
 * would hold more than 4 Mi elements (why is appended to *note).
 * KEVO_EINVAL when the task has check sizes already. */
int kevo_task_derive_check_sizes(kevo_task *task, kevo_buf *note);

/* The default `bytes`: every buffer's size once, one term per distinct
 * shape ("4*M*K + 4*K*N + 4*M*N"). *out is the caller's. */
int kevo_task_bytes_expr(char **out, const kevo_task *task);

/* task.json text for task (name, level, category, description, params
 * with shape, init and value, sizes, check_sizes, tolerance, flops, bytes,
 * backends unless just "c"), as kevo_task_load() reads it back. *out is
 * the caller's. */
int kevo_task_json(char **out, const kevo_task *task);

#ifdef __cplusplus
}
#endif
#endif
