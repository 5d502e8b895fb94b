/*
 * verify/evaluator.c - runs the four gates on a candidate.
 *
 *   anti-hack  static analysis (antihack_c.c) of the source
 *   compile    the backend builds a runner; object-level rule breaks
 *              (constructors, forbidden symbols) make the verdict `rejected`
 *   correctness every size set x seeds; inputs are sent to the runner,
 *              outputs come back and are compared here, in kevo's process,
 *              against the reference's outputs computed at start-up by a
 *              separate runner; the candidate never sees them
 *   latency    reference and candidate calls interleaved (ABBA order) on
 *              rotating input sets until both sides have enough samples;
 *              outputs are re-checked after the timed loop
 *
 * It judges and reports; it never decides what to try next.
 */
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/verify.h"
#include "verify/antihack.h"
#include "../../harness/protocol.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One timing slot per machine: every build and run of kernel code holds the
 * lock shared; a latency measurement holds it exclusively, so with
 * `kevo run --jobs N` nothing else of kevo's runs while a speedup is
 * measured. */
static pthread_rwlock_t timing_slot = PTHREAD_RWLOCK_INITIALIZER;

struct kevo_evaluator {
    const kevo_task *task;
    kevo_eval_options opts;
    const kevo_backend *be;
    char *root;
    kevo_child *ref;
    size_t nsets;
    int seeds;
    size_t nids;
    kevo_call_data **data; /* [nids] */
    void ***expected;      /* [nids][nparams] */
    double *ref_call_s;    /* [nids] */
    double ref_build_s;
    uint64_t runner_mem;
    int serial;
    kevo_buf ref_problems;
    int near_constant;
};

static const char *verdict_names[] = {"correct", "incorrect", "compile_error", "rejected",
                                      "timeout", "crash", "infra_error"};

const char *kevo_verdict_name(kevo_verdict v)
{
    return verdict_names[v];
}

int kevo_verdict_parse(kevo_verdict *out, const char *name)
{
    for (int i = 0; i < 7; i++)
        if (!strcmp(verdict_names[i], name)) {
            *out = (kevo_verdict)i;
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL, "unknown verdict '%s'", name);
}

void kevo_eval_options_default(kevo_eval_options *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = "c";
    o->seeds = 3;
    o->min_time_s = 1.0;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->max_time_s = 30;
}

void kevo_eval_result_clear(kevo_eval_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ngates; i++)
        kevo_buf_free(&r->gates[i].messages);
    free(r->feedback);
    memset(r, 0, sizeof(*r));
}

static void describe_sizes(kevo_buf *b, const kevo_sizes *s)
{
    for (size_t i = 0; i < s->n; i++)
        kevo_buf_printf(b, "%s%s=%lld", i ? ", " : "", s->names[i], (long long)s->values[i]);
}

/* ---- runner I/O ---- */

/* The reference runner runs under its own unprivileged uid, apart from
 * every candidate's (nobody). */
#define KEVO_REFERENCE_UID 65533

/* be: the backend whose runner this is (its runner_env applies); NULL for
 * the reference. */
static int runner_start(kevo_child **out, const kevo_evaluator *ev, const kevo_backend *be,
                        const char *runner, const char *dir)
{
    char threads[32];
    char **extra = NULL;
    const char *env[16] = {threads, NULL};
    snprintf(threads, sizeof(threads), "OMP_NUM_THREADS=%d", kevo_cpu_count());
    int error = 0;
    if (be && be->runner_env && (error = be->runner_env(be, dir, &extra)) < 0)
        return error;
    for (size_t i = 0, n = 1; extra && extra[i] && n + 1 < sizeof(env) / sizeof(env[0]); i++)
        env[n++] = extra[i], env[n] = NULL;
    bool no_as = be && (be->flags & KEVO_BACKEND_NO_AS_LIMIT);
    kevo_sandbox_opts o = {.workdir = dir, .mem_bytes = no_as ? 0 : ev->runner_mem, .cpu_s = 600,
                           .untrusted = true, .extra_env = env, .file_bytes = 1 << 20,
                           .run_as_uid = be ? 0 : KEVO_REFERENCE_UID};
    const char *argv[] = {runner, NULL};
    error = kevo_sandbox_spawn(out, argv, &o);
    kevo_strv_free(extra);
    if (error < 0)
        return error;
    char hello[8];
    if ((error = kevo_child_read(*out, hello, 8, 30)) < 0)
        return error;
    if (memcmp(hello, KEVO_RUNNER_HELLO, 8))
        return kevo_error_set(KEVO_EIO, "runner sent a bad greeting");
    const kevo_task *t = ev->task;
    uint32_t n = (uint32_t)t->nparams;
    uint8_t roles[KEVO_RUNNER_MAX_PARAMS], types[KEVO_RUNNER_MAX_PARAMS];
    for (size_t i = 0; i < t->nparams; i++) {
        roles[i] = (uint8_t)t->params[i].role;
        types[i] = (uint8_t)t->params[i].type;
    }
    if ((error = kevo_child_write(*out, &n, 4)) < 0 ||
        (error = kevo_child_write(*out, roles, n)) < 0 ||
        (error = kevo_child_write(*out, types, n)) < 0)
        return error;
    return 0;
}

static int runner_load(kevo_child *c, const kevo_task *t, uint32_t id, const kevo_call_data *d)
{
    int error;
    char cmd = 'D';
    if ((error = kevo_child_write(c, &cmd, 1)) < 0 || (error = kevo_child_write(c, &id, 4)) < 0)
        return error;
    for (size_t p = 0; p < t->nparams; p++) {
        if (t->params[p].role == KEVO_ROLE_SCALAR) {
            if ((error = kevo_child_write(c, &d->scalar[p], 8)) < 0)
                return error;
            continue;
        }
        uint64_t n = d->bytes[p];
        if ((error = kevo_child_write(c, &n, 8)) < 0)
            return error;
        if (t->params[p].role != KEVO_ROLE_OUT && (error = kevo_child_write(c, d->data[p], n)) < 0)
            return error;
    }
    return 0;
}

typedef struct {
    uint8_t status;
    uint32_t bad_param;
    int64_t ns;    /* the runner's own clock (inside the untrusted process) */
    int64_t rt_ns; /* timed calls: kevo's clock around the 'X' round trip */
} call_reply;

/* One call. With outputs: prepare, call and send back every out/inout
 * buffer ('C'). Without: a timed call, prepared first ('P', inputs rotated
 * by rot) and then timed by kevo around the 'X' round trip. */
static int runner_call(call_reply *r, kevo_child *c, const kevo_task *t, uint32_t id,
                       const kevo_call_data *d, void **outputs, double timeout_s, uint64_t rot)
{
    int error;
    r->rt_ns = 0;
    if (!outputs) {
        char cmd = 'P', ack;
        if ((error = kevo_child_write(c, &cmd, 1)) < 0 ||
            (error = kevo_child_write(c, &id, 4)) < 0 ||
            (error = kevo_child_write(c, &rot, 8)) < 0 ||
            (error = kevo_child_read(c, &ack, 1, 60)) < 0)
            return error;
    }
    char cmd = outputs ? 'C' : 'X';
    int64_t t0 = kevo_now_ns();
    if ((error = kevo_child_write(c, &cmd, 1)) < 0 || (error = kevo_child_write(c, &id, 4)) < 0)
        return error;
    if ((error = kevo_child_read(c, &r->status, 1, timeout_s)) < 0 ||
        (error = kevo_child_read(c, &r->bad_param, 4, 5)) < 0 ||
        (error = kevo_child_read(c, &r->ns, 8, 5)) < 0)
        return error;
    r->rt_ns = kevo_now_ns() - t0;
    if (!outputs)
        return 0;
    for (size_t p = 0; p < t->nparams; p++) {
        kevo_role role = t->params[p].role;
        if (role != KEVO_ROLE_OUT && role != KEVO_ROLE_INOUT)
            continue;
        if ((error = kevo_child_read(c, outputs[p], d->bytes[p], 60)) < 0)
            return error;
    }
    return 0;
}

/* Median round trip of a no-op command: the pipe's share of a timed call. */
static int pipe_baseline(double *out_ns, kevo_child *c)
{
    double s[21];
    for (int i = 0; i < 21; i++) {
        char cmd = 'N', ack;
        int64_t t0 = kevo_now_ns();
        int error;
        if ((error = kevo_child_write(c, &cmd, 1)) < 0 || (error = kevo_child_read(c, &ack, 1, 5)) < 0)
            return error;
        s[i] = (double)(kevo_now_ns() - t0);
    }
    double med, mn, cv;
    kevo_stats(s, 21, &med, &mn, &cv);
    *out_ns = med;
    return 0;
}

static void free_outputs(void **o, size_t n)
{
    for (size_t i = 0; o && i < n; i++)
        free(o[i]);
    free(o);
}

static void **alloc_outputs(const kevo_task *t, const kevo_call_data *d)
{
    void **o = calloc(t->nparams, sizeof(void *));
    for (size_t p = 0; o && p < t->nparams; p++)
        if (t->params[p].role == KEVO_ROLE_OUT || t->params[p].role == KEVO_ROLE_INOUT)
            o[p] = malloc(d->bytes[p] ? d->bytes[p] : 1);
    return o;
}

/* Compare every out/inout buffer of one call; mismatch descriptions go to
 * *mism (empty when all match). */
static void compare_outputs(kevo_buf *mism, const kevo_task *t, const kevo_call_data *d,
                            void *const *expected, void *const *actual)
{
    for (size_t p = 0; p < t->nparams; p++) {
        kevo_role role = t->params[p].role;
        if (role != KEVO_ROLE_OUT && role != KEVO_ROLE_INOUT)
            continue;
        kevo_compare_stats st;
        kevo_compare_output(&st, mism, t->params[p].name, t->params[p].type, &d->dims[p * 8],
                            d->ndim[p], expected[p], actual[p], d->count[p], t->atol, t->rtol);
    }
}

/* The last non-empty line of dir/child.log (a device harness's reason
 * for giving up), at most 300 characters; "" when none. */
static void last_log_line(kevo_buf *out, const char *dir)
{
    char *path = kevo_path_join(dir, "child.log"), *text = NULL;
    size_t len = 0;
    if (kevo_file_read(&text, &len, path) == 0) {
        while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            len--;
        size_t start = len;
        while (start && text[start - 1] != '\n')
            start--;
        size_t n = len - start > 300 ? 300 : len - start;
        kevo_buf_put(out, text + start, n);
    }
    free(text);
    free(path);
}

/* How the runner process failed, as a verdict + message. dir: the runner's
 * directory (for a device harness's reason), may be NULL. */
static kevo_verdict runner_failure(kevo_buf *msg, kevo_child *c, int error, const char *dir)
{
    if (error == KEVO_ETIMEOUT) {
        kevo_child_kill(c);
        kevo_buf_puts(msg, "did not return in time (killed)");
        return KEVO_VERDICT_TIMEOUT;
    }
    kevo_child_wait(c, 2.0);
    if (dir && c->status.kind == KEVO_EXIT_NORMAL &&
        c->status.exit_code == KEVO_RUNNER_EXIT_DEVICE) {
        kevo_buf why = {0};
        last_log_line(&why, dir);
        kevo_buf_printf(msg, "the device harness gave up: %s",
                        why.len ? why.ptr : "(no reason given)");
        kevo_buf_free(&why);
    } else if (c->status.kind == KEVO_EXIT_NORMAL && c->status.exit_code == 13)
        kevo_buf_puts(msg, "the runner could not allocate the task's buffers (memory limit)");
    else if (c->status.kind == KEVO_EXIT_NORMAL)
        kevo_buf_printf(msg, "the process exited during the call (status %d): a kernel must "
                             "return normally", c->status.exit_code);
    else
        kevo_buf_puts(msg, kevo_proc_status_describe(&c->status));
    return c->status.kind == KEVO_EXIT_TIMEOUT ? KEVO_VERDICT_TIMEOUT : KEVO_VERDICT_CRASH;
}

/* ---- evaluator ---- */

static int make_dir(char **out, const char *root, const char *name)
{
    *out = kevo_path_join(root, name);
    int error = kevo_mkdirs(*out, 0755);
    chmod(*out, 0755);
    return error;
}

void kevo_evaluator_free(kevo_evaluator *ev)
{
    if (!ev)
        return;
    if (ev->ref) {
        char q = 'Q';
        kevo_child_write(ev->ref, &q, 1);
        kevo_child_free(ev->ref);
    }
    for (size_t i = 0; i < ev->nids; i++) {
        if (ev->expected)
            free_outputs(ev->expected[i], ev->task->nparams);
        if (ev->data)
            kevo_call_data_free(ev->data[i]);
    }
    free(ev->expected);
    free(ev->data);
    free(ev->ref_call_s);
    if (ev->root && !ev->opts.keep_workdir)
        kevo_rmtree(ev->root);
    free(ev->root);
    kevo_buf_free(&ev->ref_problems);
    free(ev);
}

static double call_timeout(const kevo_evaluator *ev, size_t id)
{
    double t = 10.0 * ev->ref_call_s[id] + 5.0;
    return t < ev->task->timeout_s ? t : ev->task->timeout_s;
}

static void check_near_constant(kevo_evaluator *ev)
{
    const kevo_task *t = ev->task;
    for (size_t p = 0; p < t->nparams; p++) {
        kevo_role role = t->params[p].role;
        if (role != KEVO_ROLE_OUT && role != KEVO_ROLE_INOUT)
            continue;
        double lo = INFINITY, hi = -INFINITY;
        int64_t nonfinite = 0;
        for (size_t id = 0; id < ev->nids; id++) {
            const void *e = ev->expected[id][p];
            for (int64_t i = 0; i < ev->data[id]->count[p]; i++) {
                double v;
                switch (t->params[p].type) {
                case KEVO_DT_F32: v = ((const float *)e)[i]; break;
                case KEVO_DT_F64: v = ((const double *)e)[i]; break;
                case KEVO_DT_I32: v = ((const int32_t *)e)[i]; break;
                case KEVO_DT_I64: v = (double)((const int64_t *)e)[i]; break;
                default: v = ((const uint8_t *)e)[i]; break;
                }
                if (!isfinite(v)) {
                    nonfinite++;
                    continue;
                }
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
        if (nonfinite)
            kevo_buf_printf(&ev->ref_problems, "output '%s': the reference produces %lld NaN/Inf "
                            "values\n", t->params[p].name, (long long)nonfinite);
        bool exact = !kevo_dtype_is_float(t->params[p].type);
        if (hi - lo <= 2 * t->atol && !(exact && hi > lo)) {
            ev->near_constant++;
            kevo_buf_printf(&ev->ref_problems, "output '%s' is near-constant: every true value "
                            "over all size sets and seeds lies in [%g, %g], within atol=%g of "
                            "one value, so a kernel returning a constant would pass\n",
                            t->params[p].name, lo, hi, t->atol);
        }
    }
}

int kevo_evaluator_new(kevo_evaluator **out, const kevo_task *task, const kevo_eval_options *opts)
{
    *out = NULL;
    int error = 0;
    char *ref_dir = NULL, *source = NULL;
    kevo_build_result build = {0};
    bool slot_held = false;
    kevo_evaluator *ev = calloc(1, sizeof(*ev));
    if (!ev)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    ev->task = task;
    if (opts)
        ev->opts = *opts;
    else
        kevo_eval_options_default(&ev->opts);
    if (!ev->opts.backend)
        ev->opts.backend = "c";
    if (ev->opts.seeds < 3)
        ev->opts.seeds = 3;
    ev->be = kevo_backend_find(ev->opts.backend);
    if (!ev->be) {
        error = kevo_error_set(KEVO_EINVAL, "unknown backend '%s'", ev->opts.backend);
        goto done;
    }
    ev->nsets = kevo_task_nsets(task);
    ev->seeds = ev->opts.seeds;
    ev->nids = ev->nsets * (size_t)ev->seeds;
    if (ev->nids > KEVO_RUNNER_MAX_SETS) {
        error = kevo_error_set(KEVO_EINVAL, "%s: too many size sets x seeds (%zu > %d)",
                               task->json_path, ev->nids, KEVO_RUNNER_MAX_SETS);
        goto done;
    }
    ev->data = calloc(ev->nids, sizeof(*ev->data));
    ev->expected = calloc(ev->nids, sizeof(*ev->expected));
    ev->ref_call_s = calloc(ev->nids, sizeof(double));
    if (!ev->data || !ev->expected || !ev->ref_call_s) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    uint64_t total = 0;
    for (size_t id = 0; id < ev->nids; id++) {
        if ((error = kevo_task_inputs(&ev->data[id], task, id / (size_t)ev->seeds,
                                      (uint64_t)(id % (size_t)ev->seeds))) < 0)
            goto done;
        for (size_t p = 0; p < task->nparams; p++)
            total += ev->data[id]->bytes[p];
    }
    ev->runner_mem = ev->opts.mem_bytes ? ev->opts.mem_bytes : 3 * total + (3ULL << 30);
    if ((error = kevo_mkdtemp(&ev->root, "kevo-eval-")) < 0)
        goto done;
    chmod(ev->root, 0755);
    if ((error = make_dir(&ref_dir, ev->root, "reference")) < 0)
        goto done;
    if ((error = kevo_file_read(&source, NULL, task->reference_path)) < 0)
        goto done;
    pthread_rwlock_rdlock(&timing_slot);
    slot_held = true;
    if ((error = kevo_backend_find("c")->build(kevo_backend_find("c"), task, source, true,
                                               ref_dir, &build)) < 0)
        goto done;
    ev->ref_build_s = build.seconds;
    if (!build.ok) {
        error = kevo_error_set(KEVO_EINVAL, "%s: the reference does not build:\n%s",
                               task->reference_path, build.diagnostics ? build.diagnostics : "");
        goto done;
    }
    if ((error = runner_start(&ev->ref, ev, NULL, build.runner_path, ref_dir)) < 0) {
        error = kevo_error_set(KEVO_EINFRA, "cannot start the reference runner: %s",
                               kevo_error_last());
        goto done;
    }
    for (size_t id = 0; id < ev->nids; id++) {
        if ((error = runner_load(ev->ref, task, (uint32_t)id, ev->data[id])) < 0)
            goto ref_failed;
        ev->expected[id] = alloc_outputs(task, ev->data[id]);
        call_reply r;
        if ((error = runner_call(&r, ev->ref, task, (uint32_t)id, ev->data[id], ev->expected[id],
                                 task->timeout_s, 0)) < 0)
            goto ref_failed;
        if (r.status != KEVO_RUNNER_OK) {
            error = kevo_error_set(KEVO_EINVAL, "%s: the reference writes past the end of '%s'",
                                   task->reference_path, task->params[r.bad_param].name);
            goto done;
        }
        ev->ref_call_s[id] = (double)r.ns * 1e-9;
    }
    check_near_constant(ev);
    *out = ev;
    ev = NULL;
    goto done;
ref_failed: {
    kevo_buf msg = {0};
    kevo_verdict v = runner_failure(&msg, ev->ref, error, NULL);
    error = kevo_error_set(v == KEVO_VERDICT_TIMEOUT ? KEVO_ETIMEOUT : KEVO_EINVAL,
                           "%s: the reference failed to run: %s", task->reference_path,
                           kevo_buf_cstr(&msg));
    kevo_buf_free(&msg);
}
done:
    if (slot_held)
        pthread_rwlock_unlock(&timing_slot);
    kevo_build_result_clear(&build);
    free(ref_dir);
    free(source);
    kevo_evaluator_free(ev);
    return error;
}

int kevo_evaluator_reference_report(kevo_reference_report *out, kevo_evaluator *ev)
{
    memset(out, 0, sizeof(*out));
    out->build_s = ev->ref_build_s;
    double s[16];
    int n = 0;
    for (int k = 0; k < ev->seeds && n < 16; k++)
        s[n++] = ev->ref_call_s[k] * 1e3;
    /* time a few more calls for a steadier figure */
    for (int k = 0; k < 3 && n < 16; k++) {
        call_reply r;
        if (runner_call(&r, ev->ref, ev->task, (uint32_t)(k % ev->seeds), ev->data[0], NULL,
                        ev->task->timeout_s, 0) == 0)
            s[n++] = (double)r.ns * 1e-6;
    }
    double med, mn, cv;
    kevo_stats(s, n, &med, &mn, &cv);
    out->timed_ms = med;
    out->near_constant = ev->near_constant;
    kevo_buf_puts(&out->problems, kevo_buf_cstr(&ev->ref_problems));
    return 0;
}

static kevo_gate *gate(kevo_eval_result *r, const char *name)
{
    kevo_gate *g = &r->gates[r->ngates++];
    g->name = name;
    g->ran = true;
    return g;
}

static void finish(kevo_eval_result *r, kevo_verdict v, kevo_buf *feedback)
{
    r->verdict = v;
    r->feedback = kevo_buf_detach(feedback);
}

int kevo_evaluator_eval(kevo_evaluator *ev, const char *source, kevo_eval_result *r)
{
    const kevo_task *t = ev->task;
    memset(r, 0, sizeof(*r));
    double start = kevo_now_s();
    int error = 0;
    kevo_buf fb = {0};
    char *dir = NULL;
    kevo_child *cand = NULL;
    kevo_build_result build = {0};
    void **outputs = NULL;
    double *cs = NULL, *rs = NULL;
    int slot = 0; /* 1: timing slot held shared, 2: exclusive */

    /* Gate 1: anti-hack */
    kevo_gate *g = gate(r, "anti-hack");
    double g0 = kevo_now_s();
    if (!source || !*source || strspn(source, " \t\r\n") == strlen(source)) {
        kevo_buf_puts(&g->messages, "the candidate is empty\n");
        kevo_buf_puts(&fb, "The candidate file is empty: write the kernel function.");
        finish(r, KEVO_VERDICT_COMPILE_ERROR, &fb);
        g->ok = false;
        goto done;
    }
    if (ev->opts.skip_antihack) {
        kevo_buf_puts(&g->messages, "skipped (--unsafe-skip-antihack): runtime defences only\n");
        g->ok = true;
    } else {
        int violations = 0;
        if ((error = kevo_antihack(ev->be->name, &violations, &g->messages, t, source)) < 0) {
            kevo_buf_printf(&fb, "kevo could not analyse the candidate: %s", kevo_error_last());
            finish(r, KEVO_VERDICT_INFRA_ERROR, &fb);
            error = 0;
            goto done;
        }
        g->ok = violations == 0;
        g->seconds = kevo_now_s() - g0;
        if (!g->ok) {
            kevo_buf_printf(&fb, "Rejected by the anti-hack gate (%d rule%s broken):\n%s",
                            violations, violations == 1 ? "" : "s", kevo_buf_cstr(&g->messages));
            finish(r, KEVO_VERDICT_REJECTED, &fb);
            goto done;
        }
    }
    g->seconds = kevo_now_s() - g0;

    /* Gate 2: compile */
    pthread_rwlock_rdlock(&timing_slot);
    slot = 1;
    g = gate(r, "compile");
    char name[32];
    snprintf(name, sizeof(name), "candidate-%d", ++ev->serial);
    if ((error = make_dir(&dir, ev->root, name)) < 0)
        goto infra;
    if ((error = ev->be->build(ev->be, t, source, false, dir, &build)) < 0)
        goto infra;
    g->seconds = build.seconds;
    if (!build.ok) {
        g->ok = false;
        kevo_buf_puts(&g->messages, build.diagnostics ? build.diagnostics : "");
        if (build.rejected) {
            kevo_buf_printf(&fb, "Rejected: %s", build.diagnostics);
            finish(r, KEVO_VERDICT_REJECTED, &fb);
        } else {
            kevo_buf_printf(&fb, "Compilation failed:\n%s", build.diagnostics);
            finish(r, KEVO_VERDICT_COMPILE_ERROR, &fb);
        }
        goto done;
    }
    g->ok = true;
    kevo_buf_printf(&g->messages, "built in %.2f s\n", build.seconds);
    if (build.diagnostics && *build.diagnostics)
        kevo_buf_printf(&g->messages, "%s\n", build.diagnostics);
    const char *why = NULL;
    if (ev->be->can_run && !ev->be->can_run(ev->be, &why)) {
        g = gate(r, "correctness");
        g->ok = false;
        kevo_buf_printf(&g->messages, "not run: %s\n", why);
        kevo_buf_printf(&fb, "Compiled, but not run: %s. No verdict on correctness or speed.",
                        why);
        finish(r, KEVO_VERDICT_INFRA_ERROR, &fb);
        goto done;
    }

    /* Gate 3: correctness */
    g = gate(r, "correctness");
    g0 = kevo_now_s();
    if ((error = runner_start(&cand, ev, ev->be, build.runner_path, dir)) < 0) {
        kevo_buf msg = {0};
        kevo_verdict v = cand ? runner_failure(&msg, cand, error, dir) : KEVO_VERDICT_INFRA_ERROR;
        /* A device runner that dies during its setup (device, context,
         * prebuilt program; no kernel has run) failed on the machine's
         * driver or on the sandbox's rules for it, not on the kernel. */
        if (cand && strcmp(ev->be->name, "c") != 0)
            v = KEVO_VERDICT_INFRA_ERROR;
        kevo_buf_printf(&g->messages, "the program died before the first call: %s\n",
                        cand ? kevo_buf_cstr(&msg) : kevo_error_last());
        kevo_buf_printf(&fb, "The program died before the kernel was called: %s",
                        cand ? kevo_buf_cstr(&msg) : kevo_error_last());
        kevo_buf_free(&msg);
        finish(r, v, &fb);
        error = 0;
        goto done;
    }
    for (size_t id = 0; id < ev->nids; id++) {
        const kevo_call_data *d = ev->data[id];
        const kevo_sizes *sz = kevo_task_set(t, id / (size_t)ev->seeds);
        call_reply rep;
        kevo_buf where = {0};
        kevo_buf_puts(&where, "sizes ");
        describe_sizes(&where, sz);
        kevo_buf_printf(&where, ", seed %zu", id % (size_t)ev->seeds);
        outputs = alloc_outputs(t, d);
        if ((error = runner_load(cand, t, (uint32_t)id, d)) < 0 ||
            (error = runner_call(&rep, cand, t, (uint32_t)id, d, outputs, call_timeout(ev, id),
                                 0)) < 0) {
            kevo_buf msg = {0};
            kevo_verdict v = runner_failure(&msg, cand, error, dir);
            kevo_buf_printf(&g->messages, "%s: %s\n", where.ptr, msg.ptr);
            if (v == KEVO_VERDICT_TIMEOUT)
                kevo_buf_printf(&fb, "Timed out on %s: the call did not return within %.1f s "
                                "(the reference takes %.3f s).", where.ptr, call_timeout(ev, id),
                                ev->ref_call_s[id]);
            else
                kevo_buf_printf(&fb, "Crashed on %s: %s.", where.ptr, msg.ptr);
            kevo_buf_free(&msg);
            kevo_buf_free(&where);
            finish(r, v, &fb);
            error = 0;
            goto done;
        }
        if (rep.status == KEVO_RUNNER_OVERRUN) {
            kevo_buf_printf(&g->messages, "%s: wrote outside '%s'\n", where.ptr,
                            t->params[rep.bad_param].name);
            kevo_buf_printf(&fb, "Crashed on %s: the kernel wrote outside output '%s' (before "
                            "its start or past its end).", where.ptr,
                            t->params[rep.bad_param].name);
            kevo_buf_free(&where);
            finish(r, KEVO_VERDICT_CRASH, &fb);
            goto done;
        }
        kevo_buf mism = {0};
        compare_outputs(&mism, t, d, ev->expected[id], outputs);
        free_outputs(outputs, t->nparams);
        outputs = NULL;
        if (mism.len) {
            kevo_buf_printf(&g->messages, "%s:\n%s", where.ptr, mism.ptr);
            kevo_buf_printf(&fb, "Wrong results on %s:\n%s", where.ptr, mism.ptr);
            kevo_buf_free(&mism);
            kevo_buf_free(&where);
            finish(r, KEVO_VERDICT_INCORRECT, &fb);
            goto done;
        }
        kevo_buf_free(&where);
    }
    g->ok = true;
    g->seconds = kevo_now_s() - g0;
    kevo_buf_printf(&g->messages, "%zu size sets x %d seeds match (atol %g, rtol %g)\n",
                    ev->nsets, ev->seeds, t->atol, t->rtol);
    if (ev->opts.skip_latency) {
        kevo_buf_puts(&fb, "Correct on every size set and seed (latency not measured).");
        finish(r, KEVO_VERDICT_CORRECT, &fb);
        goto done;
    }

    /* Gate 4: latency, interleaved ABBA on rotating input sets of the timed sizes */
    pthread_rwlock_unlock(&timing_slot);
    pthread_rwlock_wrlock(&timing_slot);
    slot = 2;
    g = gate(r, "latency");
    g0 = kevo_now_s();
    int cap = ev->opts.max_samples > 0 ? ev->opts.max_samples : 1000;
    cs = calloc((size_t)cap, sizeof(double));
    rs = calloc((size_t)cap, sizeof(double));
    int nc = 0, nr = 0;
    double csum = 0, rsum = 0;
    double base_ns[2] = {0, 0}; /* [0] reference, [1] candidate */
    if ((error = pipe_baseline(&base_ns[0], ev->ref)) < 0) {
        error = kevo_error_set(KEVO_EINFRA, "the reference runner failed during timing");
        goto infra;
    }
    if ((error = pipe_baseline(&base_ns[1], cand)) < 0) {
        kevo_buf msg = {0};
        kevo_verdict v = runner_failure(&msg, cand, error, dir);
        kevo_buf_printf(&fb, "Failed during timing: %s.", msg.ptr);
        kevo_buf_free(&msg);
        finish(r, v, &fb);
        error = 0;
        goto done;
    }
    double own_sum = 0, kevo_sum = 0; /* cross-check of the runner's own clock */
    kevo_rng rot_rng;
    kevo_rng_seed(&rot_rng, (uint64_t)ev->serial * 7919u + 17u);
    for (int i = 0;; i++) {
        uint32_t id = (uint32_t)(i % ev->seeds);
        bool warm = i < 2;
        uint64_t rot = 1 + kevo_rng_next(&rot_rng) % 1000003u; /* same for both sides */
        for (int side = 0; side < 2; side++) {
            bool ref_side = (side == 0) == (i % 2 == 0);
            call_reply rep;
            kevo_child *c = ref_side ? ev->ref : cand;
            /* only the side being timed may run: a candidate's threads that
             * outlive its call cannot steal CPU from the reference */
            kevo_child_resume(c);
            kevo_child_pause(ref_side ? cand : ev->ref);
            if ((error = runner_call(&rep, c, t, id, ev->data[id], NULL,
                                     ref_side ? t->timeout_s : call_timeout(ev, id), rot)) < 0) {
                if (ref_side) {
                    error = kevo_error_set(KEVO_EINFRA, "the reference runner failed during "
                                                        "timing");
                    goto infra;
                }
                kevo_buf msg = {0};
                kevo_verdict v = runner_failure(&msg, cand, error, dir);
                kevo_buf_printf(&g->messages, "timed call: %s\n", msg.ptr);
                kevo_buf_printf(&fb, "Failed during timing (repeated calls): %s.", msg.ptr);
                kevo_buf_free(&msg);
                finish(r, v, &fb);
                error = 0;
                goto done;
            }
            if (!ref_side && rep.status == KEVO_RUNNER_OVERRUN) {
                kevo_buf_printf(&fb, "Crashed during timing: wrote past the end of '%s'.",
                                t->params[rep.bad_param].name);
                finish(r, KEVO_VERDICT_CRASH, &fb);
                goto done;
            }
            if (warm)
                continue;
            /* kevo's clock around the call, less the pipe's round trip */
            double us = ((double)rep.rt_ns - base_ns[ref_side ? 0 : 1]) * 1e-3;
            if (us < 0)
                us = 0;
            if (!ref_side) {
                own_sum += (double)rep.ns * 1e-3;
                kevo_sum += us;
            }
            if (ref_side && nr < cap)
                rs[nr++] = us, rsum += us * 1e-6;
            else if (!ref_side && nc < cap)
                cs[nc++] = us, csum += us * 1e-6;
        }
        /* Enough: the minimum count, and either the minimum timed time per side or
         * three times that in wall time (buffer refills between calls are not timed). */
        double wall = kevo_now_s() - g0;
        bool enough = nc >= ev->opts.min_samples && nr >= ev->opts.min_samples &&
                      ((csum >= ev->opts.min_time_s && rsum >= ev->opts.min_time_s) ||
                       wall >= 3 * ev->opts.min_time_s);
        bool capped = nc >= cap || nr >= cap ||
                      (kevo_now_s() - g0 > ev->opts.max_time_s && nc >= 3 && nr >= 3);
        if (enough || capped)
            break;
    }
    kevo_child_resume(cand);
    kevo_child_resume(ev->ref);
    /* Re-check outputs after the timed loop, on every timed input set. */
    for (int k = 0; k < ev->seeds; k++) {
        const kevo_call_data *d = ev->data[k];
        call_reply rep;
        outputs = alloc_outputs(t, d);
        if ((error = runner_call(&rep, cand, t, (uint32_t)k, d, outputs, call_timeout(ev, k), 0)) <
            0) {
            kevo_buf msg = {0};
            kevo_verdict v = runner_failure(&msg, cand, error, dir);
            kevo_buf_printf(&fb, "Failed when outputs were re-checked after timing: %s.", msg.ptr);
            kevo_buf_free(&msg);
            finish(r, v, &fb);
            error = 0;
            goto done;
        }
        kevo_buf mism = {0};
        compare_outputs(&mism, t, d, ev->expected[k], outputs);
        free_outputs(outputs, t->nparams);
        outputs = NULL;
        if (mism.len) {
            kevo_buf_printf(&g->messages, "outputs wrong after the timed loop:\n%s", mism.ptr);
            kevo_buf_printf(&fb, "Correct on the first calls but wrong after repeated calls "
                                 "(does the kernel keep state or cache results between calls?):"
                                 "\n%s", mism.ptr);
            kevo_buf_free(&mism);
            finish(r, KEVO_VERDICT_INCORRECT, &fb);
            goto done;
        }
    }
    kevo_latency *L = &r->latency;
    kevo_stats(cs, nc, &L->candidate_us, &L->candidate_min_us, &L->candidate_cv);
    kevo_stats(rs, nr, &L->reference_us, &L->reference_min_us, &L->reference_cv);
    L->candidate_samples = nc;
    L->reference_samples = nr;
    L->speedup = L->candidate_us > 0 ? L->reference_us / L->candidate_us : 0;
    r->has_latency = true;
    g->ok = true;
    g->seconds = kevo_now_s() - g0;
    if (kevo_sum > 0 && own_sum < 0.5 * kevo_sum && kevo_sum - own_sum > 1000.0 * nc)
        kevo_buf_printf(&g->messages, "note: the candidate process's own clock read %.0f%% of "
                        "kevo's (the harness's timer or its code may have been tampered with); "
                        "kevo's measurement is the one reported\n", 100 * own_sum / kevo_sum);
    kevo_buf_printf(&g->messages, "candidate median %.1f us (min %.1f, cv %.1f%%, %d calls); "
                    "reference median %.1f us (min %.1f, cv %.1f%%, %d calls)\n",
                    L->candidate_us, L->candidate_min_us, 100 * L->candidate_cv, nc,
                    L->reference_us, L->reference_min_us, 100 * L->reference_cv, nr);
    kevo_buf_printf(&fb, "Correct. Median latency %.1f us against the reference's %.1f us: "
                    "speedup %.2fx.", L->candidate_us, L->reference_us, L->speedup);
    finish(r, KEVO_VERDICT_CORRECT, &fb);
    goto done;

infra:
    kevo_buf_printf(&fb, "kevo failed (not the candidate's fault): %s", kevo_error_last());
    finish(r, KEVO_VERDICT_INFRA_ERROR, &fb);
    error = 0;
done:
    kevo_child_resume(ev->ref); /* the reference runner serves the next candidate */
    if (slot)
        pthread_rwlock_unlock(&timing_slot);
    if (cand) {
        kevo_child_resume(cand);
        char q = 'Q';
        if (!cand->exited)
            kevo_child_write(cand, &q, 1);
        kevo_child_free(cand);
    }
    free_outputs(outputs, t->nparams);
    free(cs);
    free(rs);
    kevo_build_result_clear(&build);
    if (dir && !ev->opts.keep_workdir)
        kevo_rmtree(dir);
    free(dir);
    kevo_buf_free(&fb);
    r->seconds = kevo_now_s() - start;
    return error;
}

int kevo_eval_result_json(char **out, const kevo_eval_result *r, const kevo_task *t, bool pretty)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", t ? t->name : "");
    cJSON_AddStringToObject(o, "verdict", kevo_verdict_name(r->verdict));
    cJSON *gates = cJSON_AddArrayToObject(o, "gates");
    for (size_t i = 0; i < r->ngates; i++) {
        const kevo_gate *g = &r->gates[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", g->name);
        cJSON_AddBoolToObject(j, "ok", g->ok);
        cJSON_AddNumberToObject(j, "seconds", g->seconds);
        cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
        const char *p = kevo_buf_cstr(&g->messages);
        while (*p) {
            const char *eol = strchr(p, '\n');
            size_t len = eol ? (size_t)(eol - p) : strlen(p);
            char *line = strndup(p, len);
            if (len)
                cJSON_AddItemToArray(msgs, cJSON_CreateString(line));
            free(line);
            p += len + (eol ? 1 : 0);
        }
        cJSON_AddItemToArray(gates, j);
    }
    cJSON_AddStringToObject(o, "feedback", r->feedback ? r->feedback : "");
    if (r->has_latency) {
        cJSON *l = cJSON_AddObjectToObject(o, "latency");
        cJSON_AddNumberToObject(l, "candidate_us", r->latency.candidate_us);
        cJSON_AddNumberToObject(l, "reference_us", r->latency.reference_us);
        cJSON_AddNumberToObject(l, "speedup", r->latency.speedup);
        cJSON_AddNumberToObject(l, "candidate_min_us", r->latency.candidate_min_us);
        cJSON_AddNumberToObject(l, "reference_min_us", r->latency.reference_min_us);
        cJSON_AddNumberToObject(l, "candidate_cv", r->latency.candidate_cv);
        cJSON_AddNumberToObject(l, "reference_cv", r->latency.reference_cv);
        cJSON_AddNumberToObject(l, "candidate_samples", r->latency.candidate_samples);
        cJSON_AddNumberToObject(l, "reference_samples", r->latency.reference_samples);
    } else {
        cJSON_AddNullToObject(o, "latency");
    }
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    *out = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}
