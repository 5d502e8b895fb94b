/*
 * backend/opencl_spec.h - the host part of an OpenCL candidate: the
 * `// kevo:` directives of its leading comment block (launches, scratch
 * buffers, build options) and the size expressions they use. Parsing is
 * pure: nothing here runs code. Internal to src/backend; the format is
 * documented in docs/backends/opencl.md.
 */
#ifndef KEVO_BACKEND_OPENCL_SPEC_H
#define KEVO_BACKEND_OPENCL_SPEC_H

#include "kevo/task.h"
#include "kevo/util.h"

#include <stdbool.h>
#include <stdint.h>

#define KEVO_OCL_MAX_LAUNCHES 16
#define KEVO_OCL_MAX_SCRATCH 8
#define KEVO_OCL_MAX_ARGS 64

typedef struct kevo_ocl_expr kevo_ocl_expr;

/* An argument of a launch: a task param (index) or a scratch buffer. */
typedef struct kevo_ocl_arg {
    bool scratch;
    size_t index;
} kevo_ocl_arg;

typedef struct kevo_ocl_launch {
    char *kernel;
    unsigned line;
    unsigned dims; /* 1..3 */
    kevo_ocl_expr *global[3];
    kevo_ocl_expr *local[3]; /* all NULL: the implementation chooses */
    bool has_local;
    bool default_args; /* no args=: every param, then every scratch buffer */
    kevo_ocl_arg args[KEVO_OCL_MAX_ARGS];
    size_t nargs;
} kevo_ocl_launch;

typedef struct kevo_ocl_scratch {
    char *name;
    unsigned line;
    kevo_dtype type;
    kevo_ocl_expr *count; /* elements */
} kevo_ocl_scratch;

typedef struct kevo_ocl_spec {
    kevo_ocl_launch launches[KEVO_OCL_MAX_LAUNCHES];
    size_t nlaunches;
    kevo_ocl_scratch scratch[KEVO_OCL_MAX_SCRATCH];
    size_t nscratch;
    char **options; /* allow-listed build options, NULL-terminated */
} kevo_ocl_spec;

/* Parse the directives of `source` for `task`. Problems of the candidate
 * are appended to *problems, one line each ("line N: ..."); *rejected is
 * set when one of them is a build option off the allow-list. *out (the
 * caller's, kevo_ocl_spec_free) is complete only when no problem was found.
 * Returns negative only on kevo's own failures (memory). */
int kevo_ocl_spec_parse(kevo_ocl_spec **out, kevo_buf *problems, bool *rejected,
                        const kevo_task *task, const char *source);
void kevo_ocl_spec_free(kevo_ocl_spec *spec);

/* Value of an expression under a size set. KEVO_EINVAL with the problem
 * (division by zero, overflow) in kevo_error_last(). */
int kevo_ocl_expr_eval(int64_t *out, const kevo_ocl_expr *e, const kevo_task *task,
                       const kevo_sizes *sizes);
/* The expression as C over `S(i)` (the i-th scalar param as int64_t) and
 * the helpers KEVO_OCL_DIV/MOD/ROUND_UP/CEIL_DIV/MIN/MAX of
 * harness/runner_opencl.h. */
void kevo_ocl_expr_emit_c(kevo_buf *b, const kevo_ocl_expr *e);
/* The expression in the candidate's notation (fully parenthesised), for
 * messages. */
void kevo_ocl_expr_print(kevo_buf *b, const kevo_ocl_expr *e, const kevo_task *task);

/* Build options candidates may ask for with `// kevo: options ...`. */
bool kevo_ocl_option_allowed(const char *opt);
/* The OpenCL C spelling of a task type: "float", "long", "uchar"... */
const char *kevo_ocl_type_name(kevo_dtype t);

#endif
