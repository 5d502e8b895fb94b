/*
 * bench/gemm_baseline.c - one GEMM-shaped task, three contenders, one
 * sandboxed process: a kevo kernel (a `kevo best --out` file, or any C
 * file defining the task's function), the task's single-threaded C
 * reference, and OpenBLAS's cblas_sgemm (Debian's libopenblas0-pthread,
 * dlopen'ed), on the same inputs, in alternating calls, with the same
 * thread count.
 *
 *   bench_gemm_baseline TASK_DIR KERNEL.c [--size NAME=V]... [--threads T]
 *       [--rounds R] [--warmup W] [--ref-calls N] [--seed S] [--work DIR]
 *       [--openblas LIB] [--timeout S] [--json]
 *
 * Covered tasks (suites/c/level1; each maps to cblas_sgemm, row-major,
 * alpha 1, beta 0): matmul_square, matmul_rect, matmul_tall_skinny (plain
 * A*B); matmul_trans_a (TransA: A stored K x M); matmul_trans_b (TransB: B
 * stored N x K); matmul_batched (one sgemm per batch entry, in a loop);
 * matmul_3d_tensor (one sgemm with BATCH*M rows: A and C are contiguous
 * [BATCH*M] row blocks and B is shared). Any other task is refused by name,
 * and a covered task whose parameters are not the table's (names, roles,
 * element counts) is refused too.
 *
 * Two processes. This one parses, checks the task and builds; the kernel
 * and the reference are loaded, called, timed and cross-checked only in a
 * child: this program re-executed (a copy in the work folder) in the
 * hidden `--measure` mode under kevo_sandbox_run with `untrusted` set (as
 * kevo runs its candidate runners, src/verify/runner.c: a uid of its own,
 * PID, network and mount namespaces with a read-only minimal root that
 * holds the system's libraries, the work folder and the task folder, the
 * seccomp policy that kills on sockets and process creation, a scrubbed
 * environment holding only OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
 * OMP_WAIT_POLICY and OPENBLAS_THREAD_TIMEOUT, a memory limit, --timeout S
 * of wall clock, default 600). Before it loads either library the child
 * adds a seccomp deny-list of its own (x86-64: no exec, no file opened for
 * writing, no file created, renamed or removed), so even without root (no
 * namespaces, same uid) a kernel cannot leave files behind. The child's
 * report (the table or the JSON) comes back as one framed block of its
 * output and is printed here; a child that is killed (a forbidden system
 * call, a crash, the time or memory limit) or ends without a report is one
 * line on stderr naming the kernel file, exit status 1, never a row.
 *
 * How it is fair: the kernel and the reference are compiled as kevo's C
 * backend compiles them (kevo_c_compile_flags: gcc -std=gnu11 -O3
 * -march=native, the kernel's `// kevo: cflags` hint, the forced proto.h;
 * gcc under kevo_sandbox_run as uid nobody when root, as src/backend does)
 * plus -fPIC, and linked -shared (the kernel with -fopenmp when its hint
 * has it); the reference gets no hint, so it is single-threaded. The
 * inputs are kevo's own (kevo_task_inputs, seed S, at the sizes given).
 * OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are T in the child's
 * environment (T defaults to kevo_cpu_count(), what kevo's latency gate
 * gives a candidate) and openblas_set_num_threads(T) is checked back.
 * Idle pool threads of one library must not spin on the cores while the
 * other computes: unless already set in the environment, OMP_WAIT_POLICY
 * is PASSIVE and OPENBLAS_THREAD_TIMEOUT is 4 (2^4 cycles); both values
 * are printed (set to the empty string: the libraries' own defaults,
 * libgomp's spin-then-sleep and OpenBLAS's 2^28-cycle spin). Warm-up:
 * one reference call, then W calls each of the kernel and OpenBLAS,
 * alternating; then R rounds call each contender once, the order rotating
 * every round; the reference, when its call took over 0.1 s, only in N
 * evenly spread rounds. Latency: the median of a
 * contender's calls (clock_gettime MONOTONIC around the one call).
 * GFLOP/s = the task's "flops" at the sizes / the median.
 *
 * The outputs are cross-checked: each contender's output buffer is filled
 * with NaN before its first call and compared after its last against
 * OpenBLAS's: max |C - C_openblas| / max |C_openblas|, printed; above
 * 1e-3 (or an element never written) the exit status is 1.
 *
 * Exit status: 0 measured and cross-checked; 1 an output disagrees with
 * OpenBLAS, or the sandboxed child was killed or gave no report; 2 bad
 * usage or a task this table does not cover; 3 the kernel or the
 * reference does not build or load, or libopenblas cannot be loaded
 * (install libopenblas0-pthread).
 *
 * Must not: install anything, write outside its work folder (a mkdtemp
 * folder under $TMPDIR unless --work is given, removed at the end), or
 * load or call the kernel or the reference in this process. It is no
 * gate: the child's report is as trustworthy as the kernel it ran with (a
 * hostile kernel can print a forged one); the sandbox protects the
 * machine, not the numbers.
 */
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

/* The hidden mode of the sandboxed child (argv[1]); never typed by hand. */
#define MEASURE_FLAG "--measure"
/* The child's report: this line, its length in bytes, then the bytes. */
#define REPORT_MARK "\n@@kevo-gemm-baseline-report "
/* Limits of the compiler runs: src/backend/toolchain.h's. */
#define TOOL_TIMEOUT_S 120.0
#define TOOL_MEM (4ULL << 30)

/* ---- the task table ------------------------------------------------------ */
typedef enum {
    GEMM_PLAIN,
    GEMM_TRANS_A,
    GEMM_TRANS_B,
    GEMM_BATCHED,
    GEMM_BATCH_SHARED_B
} gemm_kind;

typedef struct gemm_task {
    const char *name;
    gemm_kind kind;
    const char *scalars[4]; /* the size parameters, in prototype order */
    size_t nscalars;
} gemm_task;

static const gemm_task gemm_tasks[] = {
    {"matmul_square", GEMM_PLAIN, {"N"}, 1},
    {"matmul_rect", GEMM_PLAIN, {"M", "N", "K"}, 3},
    {"matmul_tall_skinny", GEMM_PLAIN, {"M", "N", "K"}, 3},
    {"matmul_trans_a", GEMM_TRANS_A, {"M", "N", "K"}, 3},
    {"matmul_trans_b", GEMM_TRANS_B, {"M", "N", "K"}, 3},
    {"matmul_batched", GEMM_BATCHED, {"BATCH", "M", "N", "K"}, 4},
    {"matmul_3d_tensor", GEMM_BATCH_SHARED_B, {"BATCH", "M", "N", "K"}, 4},
};
#define N_GEMM_TASKS (sizeof(gemm_tasks) / sizeof(gemm_tasks[0]))

/* The shape of one call: C (batch x m x n) = op(A) (m x k) * op(B) (k x n). */
typedef struct gemm_shape {
    int64_t batch, m, n, k;
} gemm_shape;

/* CBLAS enum values (cblas.h); no header needed, so libopenblas0-pthread
 * (the runtime package) is enough. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                               const float *a, int lda, const float *b, int ldb, float beta,
                               float *c, int ldc);
typedef void (*kernel1_fn)(const float *, const float *, float *, int64_t);
typedef void (*kernel3_fn)(const float *, const float *, float *, int64_t, int64_t, int64_t);
typedef void (*kernel4_fn)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                           int64_t);

typedef struct openblas_lib {
    void *handle;
    cblas_sgemm_fn sgemm;
    void (*set_num_threads)(int);
    int (*get_num_threads)(void);
    char *(*get_config)(void);
    char *(*get_corename)(void);
} openblas_lib;

/* One contender's state: what it calls and what it measured. */
typedef struct contender {
    const char *name;
    void *fn;        /* kernel/reference entry point (NULL for OpenBLAS) */
    float *out;      /* its own C buffer */
    double *samples; /* seconds per timed call */
    size_t nsamples;
    double median_s, min_s, max_s;
    double rel_err; /* against OpenBLAS's output */
} contender;

typedef struct bench_options {
    const char *task_dir, *kernel_path, *work, *openblas;
    char **sizes; /* NAME=V strings, borrowed from argv */
    size_t nsizes;
    int threads, rounds, warmup, ref_calls, timeout_s;
    uint64_t seed;
    bool json;
} bench_options;

/* ---- building the kernel and the reference ------------------------------- */

/* Run argv (argv[0] an absolute path) in dir as kevo's C backend runs its
 * toolchain (src/backend/toolchain.c): kevo_sandbox_run with a scrubbed
 * environment, its time and memory limits, dir handed to uid nobody and
 * the tool run as nobody when the bench is root. 0 when it exited 0; else
 * KEVO_EINFRA with its output. */
static int tool_run(const char *dir, const char *const *argv)
{
    kevo_sandbox_opts so = {.workdir = dir,
                            .wall_timeout_s = TOOL_TIMEOUT_S,
                            .mem_bytes = TOOL_MEM,
                            .cpu_s = TOOL_TIMEOUT_S,
                            .drop_privileges = true};
    kevo_proc_status st;
    char *text = NULL;
    int error = kevo_sandbox_prepare_dir(dir);
    if (error == 0)
        error = kevo_sandbox_run(&st, &text, 1 << 20, argv, &so);
    if (error == 0 && (st.kind != KEVO_EXIT_NORMAL || st.exit_code != 0)) {
        kevo_buf cmd = {0};
        for (const char *const *a = argv; *a; a++)
            kevo_buf_printf(&cmd, "%s%s", a == argv ? "" : " ", *a);
        error = kevo_error_set(KEVO_EINFRA, "`%s` in %s failed (%s; --work DIR keeps it):\n%.2000s",
                               kevo_buf_cstr(&cmd), dir, kevo_proc_status_describe(&st),
                               text ? text : "");
        kevo_buf_free(&cmd);
    }
    free(text);
    return error;
}

/* Compile `source` as kevo's C backend does (plus -fPIC) and link it as
 * dir/kernel.so (loaded by the sandboxed child only: load_so). A reference
 * takes no hint from its source. *out_line: the compile line. */
static int build_so(char **out_line, const kevo_task *task, const char *source, bool is_reference,
                    const char *dir)
{
    int error = 0;
    char **hint = NULL;
    char *proto = NULL;
    kevo_buf protoh = {0}, line = {0};
    if (is_reference)
        hint = calloc(1, sizeof(char *));
    else if ((error = kevo_cflags_parse(&hint, source)) < 0)
        goto done;
    if (!hint) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if ((error = kevo_mkdirs(dir, 0755)) < 0 ||
        (error = kevo_c_proto_header(&proto, &protoh, task)) < 0)
        goto done;
    char *kpath = kevo_path_join(dir, KEVO_C_KERNEL_FILE);
    char *ppath = kevo_path_join(dir, KEVO_C_PROTO_FILE);
    if (!kpath || !ppath)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0)
        error = kevo_file_write(kpath, source, strlen(source));
    if (error == 0)
        error = kevo_file_write(ppath, kevo_buf_cstr(&protoh), protoh.len);
    free(kpath);
    free(ppath);
    if (error < 0)
        goto done;
    const char *cc[48];
    bool openmp = false;
    size_t n = kevo_c_compile_flags(cc, 40, hint, &openmp);
    cc[n++] = "-fPIC";
    cc[n++] = "-c";
    cc[n++] = KEVO_C_KERNEL_FILE;
    cc[n++] = "-o";
    cc[n++] = "kernel.o";
    cc[n] = NULL;
    for (size_t i = 0; i < n; i++)
        kevo_buf_printf(&line, "%s%s", i ? " " : "", cc[i]);
    if ((error = tool_run(dir, cc)) < 0)
        goto done;
    const char *ld[] = {"/usr/bin/gcc", "-shared",  "-o",
                        "kernel.so",    "kernel.o", openmp ? "-fopenmp" : "-lm",
                        "-lm",          NULL};
    if ((error = tool_run(dir, ld)) < 0)
        goto done;
    *out_line = kevo_buf_detach(&line);
    if (!*out_line)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
done:
    kevo_strv_free(hint);
    free(proto);
    kevo_buf_free(&protoh);
    kevo_buf_free(&line);
    return error;
}

/* In the sandboxed child: dlopen dir/kernel.so; *out_fn is the task's
 * function. */
static int load_so(void **out_fn, const kevo_task *task, bool is_reference, const char *dir)
{
    int error = 0;
    char *so = kevo_path_join(dir, "kernel.so"), *proto = NULL;
    kevo_buf protoh = {0};
    void *h = so ? dlopen(so, RTLD_NOW | RTLD_LOCAL) : NULL;
    *out_fn = NULL;
    if (!h) {
        error = kevo_error_set(KEVO_EINFRA, "dlopen %s: %s", so ? so : "kernel.so", dlerror());
        goto done;
    }
    *out_fn = dlsym(h, task->name);
    if (!*out_fn) {
        (void)kevo_c_proto_header(&proto, &protoh, task);
        error =
            kevo_error_set(KEVO_EINVAL, "%s defines no function `%s` (the task's prototype: %s)",
                           is_reference ? task->reference_path : "the kernel file", task->name,
                           proto ? proto : "?");
    }
done:
    free(so);
    free(proto);
    kevo_buf_free(&protoh);
    return error;
}

static int openblas_load(openblas_lib *out, const char *name, int threads)
{
    memset(out, 0, sizeof(*out));
    out->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!out->handle)
        return kevo_error_set(KEVO_EINFRA,
                              "cannot load %s (%s): install Debian's OpenBLAS, "
                              "`apt-get install -y libopenblas0-pthread`",
                              name, dlerror());
    out->sgemm = (cblas_sgemm_fn)dlsym(out->handle, "cblas_sgemm");
    *(void **)&out->set_num_threads = dlsym(out->handle, "openblas_set_num_threads");
    *(void **)&out->get_num_threads = dlsym(out->handle, "openblas_get_num_threads");
    *(void **)&out->get_config = dlsym(out->handle, "openblas_get_config");
    *(void **)&out->get_corename = dlsym(out->handle, "openblas_get_corename");
    if (!out->sgemm || !out->set_num_threads || !out->get_num_threads)
        return kevo_error_set(KEVO_EINFRA,
                              "%s has no cblas_sgemm / openblas_set_num_threads / "
                              "openblas_get_num_threads: not an OpenBLAS library",
                              name);
    out->set_num_threads(threads);
    int got = out->get_num_threads();
    if (got != threads)
        return kevo_error_set(KEVO_EINFRA,
                              "openblas_set_num_threads(%d) left %d threads (an OpenBLAS built "
                              "for fewer threads?): the comparison would not be at the same "
                              "thread count",
                              threads, got);
    return 0;
}

/* ---- the task: table entry, sizes, checks -------------------------------- */

static const gemm_task *gemm_task_find(const char *name)
{
    for (size_t i = 0; i < N_GEMM_TASKS; i++)
        if (!strcmp(gemm_tasks[i].name, name))
            return &gemm_tasks[i];
    return NULL;
}

static int size_override(kevo_task *task, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *end = NULL;
    long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
    if (!eq || eq == arg || !end || end == eq + 1 || *end || v < 1 || v > (1LL << 31) - 1)
        return kevo_error_set(KEVO_EINVAL, "--size %s: want NAME=V with V an integer in 1..2^31-1",
                              arg);
    for (size_t i = 0; i < task->sizes.n; i++) {
        if (strlen(task->sizes.names[i]) == (size_t)(eq - arg) &&
            !strncmp(task->sizes.names[i], arg, (size_t)(eq - arg))) {
            task->sizes.values[i] = v;
            return 0;
        }
    }
    kevo_buf names = {0};
    for (size_t i = 0; i < task->sizes.n; i++)
        kevo_buf_printf(&names, "%s%s", i ? ", " : "", task->sizes.names[i]);
    int error = kevo_error_set(KEVO_EINVAL, "--size %s: %s has no size named %.*s (its sizes: %s)",
                               arg, task->json_path, (int)(eq - arg), arg, kevo_buf_cstr(&names));
    kevo_buf_free(&names);
    return error;
}

/* The table's view of the task, checked against task.json: params A, B, C
 * (in, in, out, f32) and the size scalars in the table's order, and the
 * element counts of A, B and C the mapping to sgemm assumes. */
static int gemm_shape_of(gemm_shape *out, const gemm_task *g, const kevo_task *task,
                         const kevo_call_data *d)
{
    static const char *bufs[3] = {"A", "B", "C"};
    if (task->nparams != 3 + g->nscalars)
        return kevo_error_set(KEVO_EINVAL, "%s: %zu params, the table expects %zu for %s",
                              task->json_path, task->nparams, 3 + g->nscalars, g->name);
    for (size_t i = 0; i < task->nparams; i++) {
        const kevo_param *p = &task->params[i];
        const char *want = i < 3 ? bufs[i] : g->scalars[i - 3];
        kevo_role role = i < 2 ? KEVO_ROLE_IN : i == 2 ? KEVO_ROLE_OUT : KEVO_ROLE_SCALAR;
        if (strcmp(p->name, want) || p->role != role || (i < 3 && p->type != KEVO_DT_F32) ||
            (i >= 3 && p->type != KEVO_DT_I64))
            return kevo_error_set(KEVO_EINVAL,
                                  "%s: param %zu is `%s` (%s %s), the table expects `%s` (%s %s) "
                                  "for %s",
                                  task->json_path, i, p->name, kevo_role_name(p->role),
                                  kevo_dtype_name(p->type), want, kevo_role_name(role),
                                  i < 3 ? "f32" : "i64", g->name);
    }
    double s[4];
    for (size_t i = 0; i < g->nscalars; i++)
        s[i] = d->scalar[3 + i];
    gemm_shape sh = {1, 0, 0, 0};
    if (g->nscalars == 1) {
        sh.m = sh.n = sh.k = (int64_t)s[0];
    } else if (g->nscalars == 3) {
        sh.m = (int64_t)s[0], sh.n = (int64_t)s[1], sh.k = (int64_t)s[2];
    } else {
        sh.batch = (int64_t)s[0], sh.m = (int64_t)s[1], sh.n = (int64_t)s[2], sh.k = (int64_t)s[3];
    }
    int64_t bsh = g->kind == GEMM_BATCH_SHARED_B ? 1 : sh.batch;
    int64_t want[3] = {sh.batch * sh.m * sh.k, bsh * sh.k * sh.n, sh.batch * sh.m * sh.n};
    for (int i = 0; i < 3; i++)
        if (d->count[i] != want[i])
            return kevo_error_set(KEVO_EINVAL,
                                  "%s: %s has %lld elements at these sizes, the sgemm mapping of "
                                  "%s expects %lld",
                                  task->json_path, bufs[i], (long long)d->count[i], g->name,
                                  (long long)want[i]);
    if (sh.m * sh.batch > INT32_MAX || sh.n > INT32_MAX || sh.k > INT32_MAX)
        return kevo_error_set(KEVO_EINVAL, "sizes beyond cblas_sgemm's int dimensions");
    *out = sh;
    return 0;
}

/* ---- the calls ----------------------------------------------------------- */

static void call_openblas(const openblas_lib *ob, const gemm_task *g, const gemm_shape *s,
                          const float *A, const float *B, float *C)
{
    int m = (int)s->m, n = (int)s->n, k = (int)s->k;
    switch (g->kind) {
    case GEMM_PLAIN:
        ob->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0f, A, k, B, n, 0.0f,
                  C, n);
        break;
    case GEMM_TRANS_A: /* A stored K x M */
        ob->sgemm(CBLAS_ROW_MAJOR, CBLAS_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0f, A, m, B, n, 0.0f, C,
                  n);
        break;
    case GEMM_TRANS_B: /* B stored N x K */
        ob->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, m, n, k, 1.0f, A, k, B, k, 0.0f, C,
                  n);
        break;
    case GEMM_BATCHED:
        for (int64_t b = 0; b < s->batch; b++)
            ob->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, n, k, 1.0f,
                      A + b * s->m * s->k, k, B + b * s->k * s->n, n, 0.0f, C + b * s->m * s->n, n);
        break;
    case GEMM_BATCH_SHARED_B:
        ob->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)(s->batch * s->m), n, k,
                  1.0f, A, k, B, n, 0.0f, C, n);
        break;
    }
}

static void call_kernel(void *fn, const gemm_task *g, const kevo_call_data *d, float *C)
{
    const float *A = d->data[0], *B = d->data[1];
    const double *s = d->scalar + 3;
    switch (g->nscalars) {
    case 1:
        ((kernel1_fn)fn)(A, B, C, (int64_t)s[0]);
        break;
    case 3:
        ((kernel3_fn)fn)(A, B, C, (int64_t)s[0], (int64_t)s[1], (int64_t)s[2]);
        break;
    default:
        ((kernel4_fn)fn)(A, B, C, (int64_t)s[0], (int64_t)s[1], (int64_t)s[2], (int64_t)s[3]);
        break;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bench_ctx {
    const gemm_task *g;
    gemm_shape shape;
    const kevo_call_data *d;
    const openblas_lib *ob;
} bench_ctx;

/* One call of contender c (index 0 kernel, 1 OpenBLAS, 2 reference), timed. */
static double timed_call(const bench_ctx *x, int which, contender *c)
{
    double t0 = now_s();
    if (which == 1)
        call_openblas(x->ob, x->g, &x->shape, x->d->data[0], x->d->data[1], c->out);
    else
        call_kernel(c->fn, x->g, x->d, c->out);
    return now_s() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void summarize(contender *c)
{
    double *v = malloc(c->nsamples * sizeof(double));
    if (!v || c->nsamples == 0) {
        free(v);
        return;
    }
    memcpy(v, c->samples, c->nsamples * sizeof(double));
    qsort(v, c->nsamples, sizeof(double), cmp_double);
    size_t n = c->nsamples;
    c->median_s = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    c->min_s = v[0];
    c->max_s = v[n - 1];
    free(v);
}

/* max |x - ref| / max |ref|; +inf when x has a NaN/inf (an element never
 * written keeps the NaN it was filled with) or ref is all zeros but x not. */
static double rel_error(const float *x, const float *ref, int64_t n)
{
    double maxref = 0, maxdiff = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(ref[i]))
            return INFINITY;
        double r = fabs((double)ref[i]), e = fabs((double)x[i] - (double)ref[i]);
        maxref = r > maxref ? r : maxref;
        maxdiff = e > maxdiff ? e : maxdiff;
    }
    return maxref > 0 ? maxdiff / maxref : maxdiff > 0 ? INFINITY : 0;
}

/* ---- options ------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_gemm_baseline TASK_DIR KERNEL.c [--size NAME=V]... [--threads T]\n"
               "         [--rounds R] [--warmup W] [--ref-calls N] [--seed S] [--work DIR]\n"
               "         [--openblas LIB] [--timeout S] [--json]\n"
               "Times KERNEL.c (a `kevo best --out` file or any C file defining the task's\n"
               "function), the task's single-threaded reference and OpenBLAS cblas_sgemm on the\n"
               "same inputs in one process inside kevo's sandbox (untrusted: no network, no\n"
               "process creation, no writes outside its work folder, a scrubbed environment),\n"
               "alternating calls, T threads for the kernel and\n"
               "OpenBLAS (default: all cores, as kevo's latency gate). Tasks: matmul_square,\n"
               "matmul_rect, matmul_tall_skinny, matmul_trans_a, matmul_trans_b, matmul_batched,\n"
               "matmul_3d_tensor.\n"
               "  --size NAME=V   override one of the task's sizes (repeatable)\n"
               "  --rounds R      timed rounds, one call of each contender per round (default 21)\n"
               "  --warmup W      untimed calls of the kernel and OpenBLAS first (default 3; the\n"
               "                  reference: 1)\n"
               "  --ref-calls N   timed reference calls when one takes over 0.1 s (default 3)\n"
               "  --seed S        kevo_task_inputs seed (default 1)\n"
               "  --work DIR      build folder, kept (default: a temporary one, removed)\n"
               "  --openblas LIB  the library to dlopen (default libopenblas.so.0)\n"
               "  --timeout S     wall-clock limit of the sandboxed measurement (default 600)\n"
               "  --json          one JSON object instead of the table\n"
               "exit status: 0 ok, 1 an output disagrees with OpenBLAS (> 1e-3 of max |C|) or\n"
               "the sandboxed measurement was killed (a forbidden call, a crash, a limit),\n"
               "2 bad usage or task not covered, 3 build/load failure or no libopenblas\n");
}

static int int_arg(int *out, const char *opt, const char *v, int lo, int hi)
{
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || x < lo || x > hi)
        return kevo_error_set(KEVO_EINVAL, "%s wants an integer in %d..%d, got `%s`", opt, lo, hi,
                              v ? v : "");
    *out = (int)x;
    return 0;
}

static int options_parse(bench_options *o, int argc, char **argv)
{
    memset(o, 0, sizeof(*o));
    o->threads = kevo_cpu_count();
    o->rounds = 21;
    o->warmup = 3;
    o->ref_calls = 3;
    o->timeout_s = 600;
    o->seed = 1;
    o->openblas = "libopenblas.so.0";
    o->sizes = calloc((size_t)argc, sizeof(char *));
    if (!o->sizes)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    const char *pos[2] = {NULL, NULL};
    size_t npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int error = 0;
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (a[0] == '-' && a[1] == '-') {
            if (!v)
                return kevo_error_set(KEVO_EINVAL, "%s needs a value", a);
            i++;
            if (!strcmp(a, "--size"))
                o->sizes[o->nsizes++] = (char *)v;
            else if (!strcmp(a, "--threads"))
                error = int_arg(&o->threads, a, v, 1, 1024);
            else if (!strcmp(a, "--rounds"))
                error = int_arg(&o->rounds, a, v, 1, 100000);
            else if (!strcmp(a, "--warmup"))
                error = int_arg(&o->warmup, a, v, 0, 1000);
            else if (!strcmp(a, "--ref-calls"))
                error = int_arg(&o->ref_calls, a, v, 1, 100000);
            else if (!strcmp(a, "--timeout"))
                error = int_arg(&o->timeout_s, a, v, 1, 86400);
            else if (!strcmp(a, "--seed")) {
                int s = 0;
                error = int_arg(&s, a, v, 0, 1 << 30);
                o->seed = (uint64_t)s;
            } else if (!strcmp(a, "--work"))
                o->work = v;
            else if (!strcmp(a, "--openblas"))
                o->openblas = v;
            else
                return kevo_error_set(KEVO_EINVAL, "unknown option %s", a);
            if (error < 0)
                return error;
            continue;
        }
        if (npos == 2)
            return kevo_error_set(KEVO_EINVAL, "one TASK_DIR and one KERNEL.c, got a third `%s`",
                                  a);
        pos[npos++] = a;
    }
    if (npos != 2)
        return kevo_error_set(KEVO_EINVAL, "want TASK_DIR and KERNEL.c");
    o->task_dir = pos[0];
    o->kernel_path = pos[1];
    return 0;
}

/* What the child's environment holds for `name`: the user's value when set
 * and not empty, nothing when set empty (NAME= in the environment: the
 * library's own default), else `value`. *kv gets "NAME=V" (empty: none);
 * the return is what the report prints. */
static const char *env_in_force(kevo_buf *kv, const char *name, const char *value)
{
    const char *cur = getenv(name);
    if (cur && !*cur) /* libgomp warns about an empty OMP_WAIT_POLICY */
        return "(library default)";
    const char *v = cur ? cur : value;
    kevo_buf_printf(kv, "%s=%s", name, v);
    return v;
}

/* ---- output -------------------------------------------------------------- */

static double gflops(double flops, double s)
{
    return s > 0 ? flops / s * 1e-9 : 0;
}

/* What the output states besides the timings. */
typedef struct run_info {
    char openblas[256];
    int kernel_threads;
    const char *kernel_line, *ref_line, *wait_policy, *blas_timeout;
    const char *ref_path;                 /* the reference file as the user's TASK_DIR names it */
    double load_before[3], load_after[3]; /* getloadavg: 1, 5, 15 min */
    char when[32];                        /* UTC, at the start of the timing */
    bool pass;
} run_info;

static void json_text(FILE *f, const char *s)
{
    for (const char *p = s; *p; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            fputc(*p, f);
}

static void print_json(FILE *f, const bench_options *o, const kevo_task *task, const contender *c,
                       double flops, const run_info *ri)
{
    fprintf(f, "{\"task\":\"%s\",\"sizes\":{", task->name);
    for (size_t i = 0; i < task->sizes.n; i++)
        fprintf(f, "%s\"%s\":%lld", i ? "," : "", task->sizes.names[i],
                (long long)task->sizes.values[i]);
    fprintf(f, "},\"flops\":%.0f,\"threads\":%d,\"kernel_threads\":%d,\"seed\":%llu,", flops,
            o->threads, ri->kernel_threads, (unsigned long long)o->seed);
    fprintf(f,
            "\"rounds\":%d,\"date\":\"%s\",\"loadavg_before\":[%.2f,%.2f,%.2f],"
            "\"loadavg_after\":[%.2f,%.2f,%.2f],",
            o->rounds, ri->when, ri->load_before[0], ri->load_before[1], ri->load_before[2],
            ri->load_after[0], ri->load_after[1], ri->load_after[2]);
    fprintf(f, "\"omp_wait_policy\":\"%s\",\"openblas_thread_timeout\":\"", ri->wait_policy);
    json_text(f, ri->blas_timeout);
    fprintf(f, "\",\"openblas\":\"");
    json_text(f, ri->openblas);
    fprintf(f, "\",\"kernel_file\":\"");
    json_text(f, o->kernel_path);
    fprintf(f, "\",\"kernel_build\":\"");
    json_text(f, ri->kernel_line);
    fprintf(f, "\",\"reference_build\":\"");
    json_text(f, ri->ref_line);
    fprintf(f, "\",\"contenders\":{");
    for (int i = 0; i < 3; i++) {
        double e = i == 1 ? 0.0 : c[i].rel_err;
        fprintf(f,
                "%s\"%s\":{\"calls\":%zu,\"median_ms\":%.4f,\"min_ms\":%.4f,\"max_ms\":%.4f,"
                "\"gflops\":%.3f,\"max_rel_err\":",
                i ? "," : "", c[i].name, c[i].nsamples, c[i].median_s * 1e3, c[i].min_s * 1e3,
                c[i].max_s * 1e3, gflops(flops, c[i].median_s));
        /* JSON has no inf: null is "a NaN/inf or an element never written" */
        if (isfinite(e))
            fprintf(f, "%.3g}", e);
        else
            fprintf(f, "null}");
    }
    fprintf(f,
            "},\"kernel_over_openblas\":%.4f,\"kernel_over_reference\":%.4f,"
            "\"cross_check\":\"%s\"}\n",
            c[1].median_s / c[0].median_s, c[2].median_s / c[0].median_s,
            ri->pass ? "ok" : "FAILED");
}

static void print_table(FILE *f, const bench_options *o, const kevo_task *task, const contender *c,
                        double flops, const run_info *ri)
{
    fprintf(f, "# kernel:    %s (%d thread%s)\n#   build:   %s\n", o->kernel_path,
            ri->kernel_threads, ri->kernel_threads == 1 ? ", no -fopenmp" : "s", ri->kernel_line);
    fprintf(f, "# reference: %s (1 thread)\n#   build:   %s\n", ri->ref_path, ri->ref_line);
    fprintf(f, "# OpenBLAS:  %s (%d threads)\n", ri->openblas, o->threads);
    fprintf(f,
            "# OMP_WAIT_POLICY=%s OPENBLAS_THREAD_TIMEOUT=%s; inputs: kevo_task_inputs seed %llu;"
            " %d rounds, order rotating; latency = median\n",
            ri->wait_policy, ri->blas_timeout, (unsigned long long)o->seed, o->rounds);
    fprintf(f, "# %s, load average %.2f %.2f %.2f before, %.2f %.2f %.2f after\n", ri->when,
            ri->load_before[0], ri->load_before[1], ri->load_before[2], ri->load_after[0],
            ri->load_after[1], ri->load_after[2]);
    kevo_buf sz = {0};
    for (size_t i = 0; i < task->sizes.n; i++)
        kevo_buf_printf(&sz, "%s%s=%lld", i ? "," : "", task->sizes.names[i],
                        (long long)task->sizes.values[i]);
    fprintf(f, "%-18s %-26s %3s %9s %9s %9s %8s %8s %9s %9s %s\n", "task", "sizes", "thr", "kevo",
            "OpenBLAS", "ref", "kevo/OB", "kevo/ref", "err kevo", "err ref", "check");
    fprintf(f, "%-18s %-26s %3d %9.2f %9.2f %9.2f %7.2fx %7.2fx %9.1e %9.1e %s\n", task->name,
            kevo_buf_cstr(&sz), o->threads, gflops(flops, c[0].median_s),
            gflops(flops, c[1].median_s), gflops(flops, c[2].median_s),
            c[1].median_s / c[0].median_s, c[2].median_s / c[0].median_s, c[0].rel_err,
            c[2].rel_err, ri->pass ? "ok" : "FAILED");
    fprintf(f,
            "# GFLOP/s at the median (kevo %zu calls %.3f ms, OpenBLAS %zu calls %.3f ms, "
            "reference %zu calls %.3f ms); err = max |C - C_OpenBLAS| / max |C_OpenBLAS|\n",
            c[0].nsamples, c[0].median_s * 1e3, c[1].nsamples, c[1].median_s * 1e3, c[2].nsamples,
            c[2].median_s * 1e3);
    kevo_buf_free(&sz);
}

/* ---- the sandboxed child ------------------------------------------------- */

#define REL_TOL 1e-3

#if defined(__x86_64__)
#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define KILL_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_KILL_PROCESS)
#define ERRNO_NR(nr, e)                                                                            \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ERRNO | (e))
/* Flags that make an open write, create or truncate. */
#define OPEN_WRITE_BITS                                                                            \
    (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY))
/* nr, whose flags are argument i: EACCES with any OPEN_WRITE_BITS, else allowed */
#define READ_ONLY_OPEN(nr, i)                                                                      \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), LD_ARG(i),                                    \
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, OPEN_WRITE_BITS, 0, 1),                               \
        RET(SECCOMP_RET_ERRNO | EACCES), RET(SECCOMP_RET_ALLOW)
#endif

/* The child's own lock-down, on every thread, before the kernel or the
 * reference is loaded (so their constructors run under it too), on top of
 * the sandbox's policy: files may be opened for reading only (dlopen still
 * works), and exec, process creation and every call that creates, renames,
 * removes, truncates or re-permissions a file kill the process. What it
 * adds shows where the sandbox has no mount namespace (not root): there
 * the child runs as the user, and this is what keeps a kernel from
 * writing into $HOME or /tmp. Negative when it cannot be installed. */
static int lock_down(void)
{
#if defined(__x86_64__)
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        LD_NR,
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x32 ABI */
        RET(SECCOMP_RET_KILL_PROCESS),
        KILL_NR(__NR_execve),
        KILL_NR(__NR_execveat),
        KILL_NR(__NR_fork),
        KILL_NR(__NR_vfork),
        KILL_NR(__NR_mkdir),
        KILL_NR(__NR_mkdirat),
        KILL_NR(__NR_mknod),
        KILL_NR(__NR_mknodat),
        KILL_NR(__NR_symlink),
        KILL_NR(__NR_symlinkat),
        KILL_NR(__NR_link),
        KILL_NR(__NR_linkat),
        KILL_NR(__NR_rename),
        KILL_NR(__NR_renameat),
        KILL_NR(__NR_renameat2),
        KILL_NR(__NR_unlink),
        KILL_NR(__NR_unlinkat),
        KILL_NR(__NR_rmdir),
        KILL_NR(__NR_chmod),
        KILL_NR(__NR_fchmod),
        KILL_NR(__NR_fchmodat),
        KILL_NR(__NR_chown),
        KILL_NR(__NR_fchown),
        KILL_NR(__NR_lchown),
        KILL_NR(__NR_fchownat),
        KILL_NR(__NR_truncate),
        KILL_NR(__NR_ftruncate),
        KILL_NR(__NR_fallocate),
        KILL_NR(__NR_socket),
        KILL_NR(__NR_socketpair),
        KILL_NR(__NR_connect),
        KILL_NR(__NR_ptrace),
        ERRNO_NR(__NR_creat, EACCES),
        ERRNO_NR(__NR_openat2, ENOSYS),
        ERRNO_NR(__NR_clone3, ENOSYS),
        /* clone: threads only (OpenMP, OpenBLAS), never a new process */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        LD_ARG(0),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_KILL_PROCESS),
        READ_ONLY_OPEN(__NR_open, 1),
        READ_ONLY_OPEN(__NR_openat, 2),
        RET(SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
        return kevo_error_set(KEVO_EINFRA,
                              "cannot install the measuring child's seccomp "
                              "lock-down: %s",
                              strerror(errno));
#endif
    return 0;
}

/* The task as the parent checked it: the table entry, sizes, inputs,
 * shape and flops. *status: 2 for the caller when it fails. */
static int task_setup(kevo_task **task, const gemm_task **g, kevo_call_data **d, gemm_shape *shape,
                      double *flops, const bench_options *o)
{
    int error = 0;
    if ((error = kevo_task_load(task, o->task_dir)) < 0)
        return error;
    if (!(*g = gemm_task_find((*task)->name)))
        return kevo_error_set(KEVO_EINVAL,
                              "task `%s` (%s) is not GEMM-shaped for this bench: it maps only "
                              "matmul_square, matmul_rect, matmul_tall_skinny, matmul_trans_a, "
                              "matmul_trans_b, matmul_batched, matmul_3d_tensor to cblas_sgemm",
                              (*task)->name, (*task)->json_path);
    for (size_t i = 0; i < o->nsizes; i++)
        if ((error = size_override(*task, o->sizes[i])) < 0)
            return error;
    if ((error = kevo_task_inputs(d, *task, 0, o->seed)) < 0 ||
        (error = gemm_shape_of(shape, *g, *task, *d)) < 0)
        return error;
    *flops = 0;
    if (!(*task)->flops)
        return kevo_error_set(KEVO_EINVAL, "%s gives no \"flops\"", (*task)->json_path);
    return kevo_expr_eval(flops, (*task)->flops, &(*task)->sizes, false);
}

/* argv: exe --measure WORK KERNEL_BUILD REFERENCE_BUILD WAIT_POLICY
 * BLAS_TIMEOUT REFERENCE_PATH TASK_DIR KERNEL.c [options]: load WORK/kernel/kernel.so,
 * WORK/reference/kernel.so and OpenBLAS, time, cross-check, and write the
 * report (the table or the JSON) as one REPORT_MARK block on stdout. */
static int measure_main(int argc, char **argv)
{
    bench_options o;
    kevo_task *task = NULL;
    kevo_call_data *d = NULL;
    const gemm_task *g = NULL;
    void *kfn = NULL, *rfn = NULL;
    openblas_lib ob = {0};
    contender c[3] = {{.name = "kernel"}, {.name = "openblas"}, {.name = "reference"}};
    char *report = NULL, *kdir = NULL, *rdir = NULL;
    size_t report_len = 0;
    int status = 2, error = 0;
    if (argc < 10) {
        fprintf(stderr,
                "bench_gemm_baseline: %s is the mode of the sandboxed child that the "
                "bench starts itself\n",
                MEASURE_FLAG);
        return 2;
    }
    /* the sandbox put a seccomp filter on this process before exec; a
     * --measure typed by hand would run the kernel unsandboxed */
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2) {
        fprintf(stderr,
                "bench_gemm_baseline: %s runs only inside kevo's sandbox (the bench "
                "starts it itself): refusing to load a kernel outside it\n",
                MEASURE_FLAG);
        return 2;
    }
    const char *work = argv[2];
    run_info ri = {.kernel_threads = 1,
                   .kernel_line = argv[3],
                   .ref_line = argv[4],
                   .wait_policy = argv[5],
                   .blas_timeout = argv[6],
                   .ref_path = argv[7]};
    if ((error = options_parse(&o, argc - 7, argv + 7)) < 0)
        goto done;
    gemm_shape shape;
    double flops = 0;
    if ((error = task_setup(&task, &g, &d, &shape, &flops, &o)) < 0)
        goto done;
    status = 3;
    kdir = kevo_path_join(work, "kernel");
    rdir = kevo_path_join(work, "reference");
    if (!kdir || !rdir) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    /* OpenBLAS (trusted) first: its thread pool starts at load, and the
     * lock-down reaches those threads too */
    if ((error = openblas_load(&ob, o.openblas, o.threads)) < 0 || (error = lock_down()) < 0 ||
        (error = load_so(&kfn, task, false, kdir)) < 0 ||
        (error = load_so(&rfn, task, true, rdir)) < 0)
        goto done;
    /* the libgomp the kernel loaded (if it did), asked for its team size */
    void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (gomp) {
        int (*max_threads)(void) = NULL;
        *(void **)&max_threads = dlsym(gomp, "omp_get_max_threads");
        ri.kernel_threads = max_threads ? max_threads() : o.threads;
        dlclose(gomp);
    }
    snprintf(ri.openblas, sizeof(ri.openblas), "%s, %s%s%s", o.openblas,
             ob.get_config ? ob.get_config() : "(no openblas_get_config)",
             ob.get_corename ? ", core " : "", ob.get_corename ? ob.get_corename() : "");

    /* buffers: NaN-filled, so an element a contender never writes shows */
    int64_t nc = d->count[2];
    c[0].fn = kfn;
    c[2].fn = rfn;
    size_t cap = (size_t)o.rounds;
    for (int i = 0; i < 3; i++) {
        c[i].out = malloc((size_t)nc * sizeof(float));
        c[i].samples = calloc(cap, sizeof(double));
        if (!c[i].out || !c[i].samples) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory for C (%lld floats)", (long long)nc);
            goto done;
        }
        for (int64_t j = 0; j < nc; j++)
            c[i].out[j] = NAN;
    }
    bench_ctx x = {.g = g, .shape = shape, .d = d, .ob = &ob};
    kevo_iso_time(ri.when, sizeof(ri.when));
    if (getloadavg(ri.load_before, 3) < 0)
        ri.load_before[0] = ri.load_before[1] = ri.load_before[2] = -1; /* unknown */
    /* warm-up, alternating; the reference once (it tells whether it is slow) */
    double ref_first = timed_call(&x, 2, &c[2]);
    for (int w = 0; w < o.warmup; w++) {
        timed_call(&x, 0, &c[0]);
        timed_call(&x, 1, &c[1]);
    }
    /* a slow reference runs in ref_calls rounds spread over the run */
    int ref_every = 1;
    if (ref_first > 0.1 && o.ref_calls < o.rounds)
        ref_every = o.rounds / o.ref_calls;
    for (int r = 0; r < o.rounds; r++) {
        for (int j = 0; j < 3; j++) {
            int which = (r + j) % 3;
            bool slow_ref_off =
                ref_every > 1 && (r % ref_every != 0 || (int)c[2].nsamples >= o.ref_calls);
            if (which == 2 && slow_ref_off)
                continue;
            c[which].samples[c[which].nsamples++] = timed_call(&x, which, &c[which]);
        }
    }
    if (getloadavg(ri.load_after, 3) < 0)
        ri.load_after[0] = ri.load_after[1] = ri.load_after[2] = -1;
    for (int i = 0; i < 3; i++)
        summarize(&c[i]);
    c[0].rel_err = rel_error(c[0].out, c[1].out, nc);
    c[2].rel_err = rel_error(c[2].out, c[1].out, nc);
    bool pass = c[0].rel_err <= REL_TOL && c[2].rel_err <= REL_TOL;
    /* OpenBLAS against itself is the anchor: it must have written C */
    if (rel_error(c[1].out, c[1].out, nc) != 0)
        pass = false;
    ri.pass = pass;
    FILE *f = open_memstream(&report, &report_len);
    if (!f) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory for the report");
        goto done;
    }
    if (o.json)
        print_json(f, &o, task, c, flops, &ri);
    else
        print_table(f, &o, task, c, flops, &ri);
    if (fclose(f) != 0 || !report) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory for the report");
        goto done;
    }
    if (!pass)
        fprintf(stderr,
                "bench_gemm_baseline: %s: outputs disagree with OpenBLAS (kernel %.3g, "
                "reference %.3g; tolerance %.0e of max |C|, inf: a NaN/inf or an element never "
                "written)\n",
                task->name, c[0].rel_err, c[2].rel_err, REL_TOL);
    fflush(stdout);
    printf("%s%zu\n", REPORT_MARK, report_len);
    fwrite(report, 1, report_len, stdout);
    fflush(stdout);
    status = pass ? 0 : 1;
done:
    if (error < 0)
        fprintf(stderr, "bench_gemm_baseline: %s\n", kevo_error_last());
    /* no cleanup: the libraries' pool threads live on until exit */
    fflush(stdout);
    fflush(stderr);
    _exit(status);
}

/* ---- the parent ---------------------------------------------------------- */

/* Print the child's report (its REPORT_MARK block) on stdout and the rest
 * of its output on stderr; the bench's exit status. A child that did not
 * exit by itself with 0 or 1 and a report (or 3, a load failure it
 * explained) is one line naming the kernel file, status 1. */
static int relay(const kevo_proc_status *st, const char *out, const bench_options *o)
{
    const char *mark = NULL, *body = NULL, *after = NULL;
    for (const char *p = out; (p = strstr(p, REPORT_MARK)); p++)
        mark = p;
    if (mark) {
        const char *q = mark + strlen(REPORT_MARK);
        char *end = NULL;
        unsigned long long n = strtoull(q, &end, 10);
        if (end != q && *end == '\n' && n <= strlen(end + 1)) {
            body = end + 1;
            after = body + n;
        }
    }
    fwrite(out, 1, body ? (size_t)(mark - out) : strlen(out), stderr);
    if (body)
        fputs(after, stderr);
    bool normal = st->kind == KEVO_EXIT_NORMAL;
    if (normal && st->exit_code == 3)
        return 3;
    if (normal && (st->exit_code == 0 || st->exit_code == 1) && body) {
        fwrite(body, 1, (size_t)(after - body), stdout);
        return st->exit_code;
    }
    fprintf(stderr,
            "bench_gemm_baseline: %s: no measurement: the sandboxed run of the kernel %s%s%s\n",
            o->kernel_path, kevo_proc_status_describe(st),
            st->kind == KEVO_EXIT_TIMEOUT ? " (--timeout)" : "",
            normal && (st->exit_code == 0 || st->exit_code == 1) ? " without a report" : "");
    return 1;
}

/* Copy this program into the work folder (mode 0755), where the sandboxed
 * child, which sees nothing of the build folder, can exec it. */
static int copy_self(char **out, const char *work)
{
    char *text = NULL;
    size_t len = 0;
    int error = kevo_file_read(&text, &len, "/proc/self/exe");
    *out = kevo_path_join(work, "bench_gemm_baseline");
    if (error == 0 && !*out)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0)
        error = kevo_file_write(*out, text, len);
    if (error == 0 && chmod(*out, 0755) < 0)
        error = kevo_error_set(KEVO_EIO, "chmod %s: %s", *out, strerror(errno));
    free(text);
    return error;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], MEASURE_FLAG))
        return measure_main(argc, argv);
    bench_options o;
    kevo_task *task = NULL;
    kevo_call_data *d = NULL;
    const gemm_task *g = NULL;
    char *source = NULL, *work = NULL, *kernel_line = NULL, *ref_line = NULL, *self = NULL;
    char *task_real = NULL, *blas_dir = NULL, *output = NULL;
    const char **cargv = NULL;
    kevo_buf env_kv[4] = {{0}};
    int status = 2;
    int error = 0;
    bool owned_work = false;

    if ((error = options_parse(&o, argc, argv)) < 0) {
        fprintf(stderr, "bench_gemm_baseline: %s\n", kevo_error_last());
        usage(stderr);
        free(o.sizes);
        return 2;
    }
    /* the child's whole environment besides PATH, HOME, TMPDIR, LANG */
    kevo_buf_printf(&env_kv[0], "OMP_NUM_THREADS=%d", o.threads);
    kevo_buf_printf(&env_kv[1], "OPENBLAS_NUM_THREADS=%d", o.threads);
    const char *wait_policy = env_in_force(&env_kv[2], "OMP_WAIT_POLICY", "PASSIVE");
    const char *blas_timeout = env_in_force(&env_kv[3], "OPENBLAS_THREAD_TIMEOUT", "4");
    const char *env[5] = {NULL};
    for (size_t i = 0, n = 0; i < 4; i++)
        if (env_kv[i].len)
            env[n++] = kevo_buf_cstr(&env_kv[i]);

    gemm_shape shape;
    double flops = 0;
    if ((error = task_setup(&task, &g, &d, &shape, &flops, &o)) < 0)
        goto done;
    /* what the child holds: the inputs, three C buffers; plus the
     * libraries' mappings and pool-thread stacks */
    uint64_t data = 4ULL * (uint64_t)(d->count[0] + d->count[1] + 4 * d->count[2]);
    uint64_t mem = (8ULL << 30) + 2 * data;
    kevo_call_data_free(d);
    d = NULL;
    size_t len = 0;
    if ((error = kevo_file_read(&source, &len, o.kernel_path)) < 0)
        goto done;
    status = 3;
    if (o.work) {
        work = strdup(o.work);
        if (!work || (error = kevo_mkdirs(work, 0755)) < 0) {
            if (!work)
                error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
    } else {
        if ((error = kevo_mkdtemp(&work, "kevo-gemm-baseline.")) < 0)
            goto done;
        owned_work = true;
    }
    /* the child may run as another uid: it must read (not write) here */
    if (chmod(work, 0755) < 0) {
        error = kevo_error_set(KEVO_EIO, "chmod %s: %s", work, strerror(errno));
        goto done;
    }
    char *kdir = kevo_path_join(work, "kernel"), *rdir = kevo_path_join(work, "reference");
    char *rsrc = NULL;
    if (!kdir || !rdir)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0)
        error = build_so(&kernel_line, task, source, false, kdir);
    if (error == 0)
        error = kevo_file_read(&rsrc, &len, task->reference_path);
    if (error == 0)
        error = build_so(&ref_line, task, rsrc, true, rdir);
    free(kdir);
    free(rdir);
    free(rsrc);
    if (error < 0 || (error = copy_self(&self, work)) < 0)
        goto done;
    /* the child reads the task folder (task.json: the inputs) and, when
     * --openblas names one outside the system's folders, the library's */
    if (!(task_real = realpath(o.task_dir, NULL))) {
        error = kevo_error_set(KEVO_EIO, "%s: %s", o.task_dir, strerror(errno));
        goto done;
    }
    const char *ro[3] = {task_real, NULL, NULL};
    if (strchr(o.openblas, '/')) {
        char *real = realpath(o.openblas, NULL);
        char *slash = real ? strrchr(real, '/') : NULL;
        if (slash && slash != real)
            *slash = '\0';
        if (real && strncmp(real, "/usr/", 5) && strcmp(real, "/usr") && strncmp(real, "/lib", 4))
            ro[1] = blas_dir = real;
        else
            free(real);
    }
    char nums[5][24];
    snprintf(nums[0], sizeof(nums[0]), "%d", o.threads);
    snprintf(nums[1], sizeof(nums[1]), "%d", o.rounds);
    snprintf(nums[2], sizeof(nums[2]), "%d", o.warmup);
    snprintf(nums[3], sizeof(nums[3]), "%d", o.ref_calls);
    snprintf(nums[4], sizeof(nums[4]), "%llu", (unsigned long long)o.seed);
    if (!(cargv = calloc(24 + 2 * o.nsizes, sizeof(char *)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    size_t k = 0;
    const char *head[] = {self,          MEASURE_FLAG,  work,         kernel_line,
                          ref_line,      wait_policy,   blas_timeout, task->reference_path,
                          task_real,     o.kernel_path, "--threads",  nums[0],
                          "--rounds",    nums[1],       "--warmup",   nums[2],
                          "--ref-calls", nums[3],       "--seed",     nums[4],
                          "--openblas",  o.openblas};
    for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
        cargv[k++] = head[i];
    for (size_t i = 0; i < o.nsizes; i++) {
        cargv[k++] = "--size";
        cargv[k++] = o.sizes[i];
    }
    if (o.json)
        cargv[k++] = "--json";
    cargv[k] = NULL;
    kevo_sandbox_opts so = {.workdir = work,
                            .wall_timeout_s = o.timeout_s,
                            .mem_bytes = mem,
                            .cpu_s = (double)o.timeout_s * (o.threads + 1),
                            .file_bytes = 1 << 20,
                            .untrusted = true,
                            .run_as_uid = kevo_sandbox_fresh_uid(),
                            .extra_env = env,
                            .ro_paths = ro};
    kevo_proc_status st;
    fflush(stdout);
    /* not root (no PID namespace): the child runs as this uid, and a
     * non-dumpable parent's /proc/PID/environ is closed to it */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if ((error = kevo_sandbox_run(&st, &output, 16 << 20, cargv, &so)) < 0)
        goto done;
    status = relay(&st, output ? output : "", &o);
done:
    if (error < 0)
        fprintf(stderr, "bench_gemm_baseline: %s\n", kevo_error_last());
    if (owned_work && work)
        (void)kevo_rmtree(work);
    for (int i = 0; i < 4; i++)
        kevo_buf_free(&env_kv[i]);
    free(cargv);
    free(output);
    free(task_real);
    free(blas_dir);
    free(self);
    free(work);
    free(kernel_line);
    free(ref_line);
    free(source);
    free(o.sizes);
    kevo_call_data_free(d);
    kevo_task_free(task);
    return status;
}
