/*
 * harness/runner_opencl.h - what kevo generates per OpenCL candidate
 * (spec.c: params, scratch buffers, launches, size expressions as C) and
 * what harness/runner_opencl.c reads. The program binary itself is linked
 * in from blob.S (`.incbin "program.bin"`).
 */
#ifndef KEVO_HARNESS_RUNNER_OPENCL_H
#define KEVO_HARNESS_RUNNER_OPENCL_H

#include <stdint.h>

typedef struct kevo_ocl_launch_desc {
    const char *kernel;
    unsigned dims;      /* 1..3 */
    unsigned has_local; /* 0: the implementation chooses the work-group size */
    unsigned nargs;
    const int *args; /* >= 0: task param index; < 0: scratch buffer -(arg + 1) */
} kevo_ocl_launch_desc;

extern const unsigned kevo_ocl_nparams;
extern const unsigned char kevo_ocl_roles[]; /* KEVO_RROLE_* */
extern const unsigned char kevo_ocl_types[]; /* KEVO_RT_* */
extern const char *const kevo_ocl_param_names[];
extern const unsigned kevo_ocl_nscratch;
extern const unsigned char kevo_ocl_scratch_types[];
extern const char *const kevo_ocl_scratch_names[];
extern const unsigned kevo_ocl_nlaunches;
extern const kevo_ocl_launch_desc kevo_ocl_launches[];
/* The platform and device the program was built for (indices). */
extern const unsigned kevo_ocl_platform_index, kevo_ocl_device_index;
extern const unsigned char kevo_ocl_binary[], kevo_ocl_binary_end[];

/* Element count of scratch buffer j, and the work sizes of launch i, from
 * the call's scalars. 0, or -1 on a division by zero or an overflow. */
int kevo_ocl_scratch_count(unsigned j, const double *s, int64_t *out);
int kevo_ocl_geometry(unsigned i, const double *s, int64_t global[3], int64_t local[3]);

/* Helpers of the generated expressions: C integer semantics, and a flag
 * instead of undefined behaviour. */
extern int kevo_ocl_expr_error;
static inline int64_t kevo_ocl_arith(int op, int64_t a, int64_t b)
{
    int64_t r = 0;
    switch (op) {
    case '+':
        kevo_ocl_expr_error |= __builtin_add_overflow(a, b, &r);
        break;
    case '-':
        kevo_ocl_expr_error |= __builtin_sub_overflow(a, b, &r);
        break;
    case '*':
        kevo_ocl_expr_error |= __builtin_mul_overflow(a, b, &r);
        break;
    case '/':
    case '%':
        if (b == 0 || (a == INT64_MIN && b == -1))
            kevo_ocl_expr_error = 1;
        else
            r = op == '/' ? a / b : a % b;
        break;
    case 'c': /* CEIL_DIV */
    case 'r': /* ROUND_UP */
        if (b <= 0 || a < 0) {
            kevo_ocl_expr_error = 1;
            break;
        }
        r = a / b + (a % b != 0);
        if (op == 'r')
            kevo_ocl_expr_error |= __builtin_mul_overflow(r, b, &r);
        break;
    case 'm':
        r = a < b ? a : b;
        break;
    case 'M':
        r = a > b ? a : b;
        break;
    }
    return r;
}
#define KEVO_OCL_NEG(a) kevo_ocl_arith('-', 0, (a))
#define KEVO_OCL_ADD(a, b) kevo_ocl_arith('+', (a), (b))
#define KEVO_OCL_SUB(a, b) kevo_ocl_arith('-', (a), (b))
#define KEVO_OCL_MUL(a, b) kevo_ocl_arith('*', (a), (b))
#define KEVO_OCL_DIV(a, b) kevo_ocl_arith('/', (a), (b))
#define KEVO_OCL_MOD(a, b) kevo_ocl_arith('%', (a), (b))
#define KEVO_OCL_CEIL_DIV(a, b) kevo_ocl_arith('c', (a), (b))
#define KEVO_OCL_ROUND_UP(a, b) kevo_ocl_arith('r', (a), (b))
#define KEVO_OCL_MIN(a, b) kevo_ocl_arith('m', (a), (b))
#define KEVO_OCL_MAX(a, b) kevo_ocl_arith('M', (a), (b))

#endif
