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
#include "verify/channel.h"
#include "verify/ref_cache.h"
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
    kevo_channel_inputs *inputs;  /* shared, read-only to every runner */
    kevo_channel_runner *ref;
    size_t nsets;
    int seeds;
    size_t nids;
    kevo_call_data **data; /* [nids] */
    void ***expected;      /* [nids][nparams] */
    double *ref_call_s;    /* [nids] */
    size_t *order;         /* [nids] correctness order: smallest calls first */
    double channel_ns;     /* median no-op round trip of the reference runner */
    double ref_build_s;
    uint64_t runner_mem;
    int serial;
    kevo_buf ref_problems;
    int near_constant;
    char cache_key[33];    /* empty: no reference cache for this evaluator */
    uint64_t *input_hash;  /* [nids] when caching: ties outputs to their inputs */
    kevo_ref_cached cached;
    bool from_cache;       /* expected[][] point into cached's mapping */
};

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

/* ---- runners ---- */

static int runner_start(kevo_channel_runner **out, kevo_child **dead, const kevo_evaluator *ev,
                        const kevo_backend *be, const char *runner, const char *dir)
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
    /* Every C runner, the reference's included, gets a uid of its own: no
     * two runners can signal, trace or write for each other. A device
     * backend's runner_env prepares its driver cache for uid nobody. */
    unsigned uid = be && be->runner_env ? 0 : kevo_sandbox_fresh_uid();
    kevo_sandbox_opts o = {.workdir = dir, .mem_bytes = no_as ? 0 : ev->runner_mem, .cpu_s = 600,
                           .untrusted = true, .extra_env = env, .file_bytes = 1 << 20,
                           .run_as_uid = uid};
    error = kevo_channel__start(out, dead, ev->inputs, runner, &o);
    kevo_strv_free(extra);
    return error;
}

static bool is_output(const kevo_task *t, size_t p)
{
    return t->params[p].role == KEVO_ROLE_OUT || t->params[p].role == KEVO_ROLE_INOUT;
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
        if (is_output(t, p))
            o[p] = malloc(d->bytes[p] ? d->bytes[p] : 1);
    return o;
}

/* Compare every out/inout buffer of one call against expected[p]; mismatch
 * descriptions go to *mism (empty when all match). */
static void compare_outputs(kevo_buf *mism, const kevo_task *t, const kevo_call_data *d,
                            const void *const *expected, kevo_channel_runner *r)
{
    for (size_t p = 0; p < t->nparams; p++) {
        if (!is_output(t, p))
            continue;
        const void *actual = kevo_channel__output(r, p);
        if (kevo_compare_allclose(t->params[p].type, expected[p], actual, d->count[p], t->atol,
                                  t->rtol))
            continue;
        kevo_compare_stats st;
        kevo_compare_output(&st, mism, t->params[p].name, t->params[p].type, &d->dims[p * 8],
                            d->ndim[p], expected[p], actual, d->count[p], t->atol, t->rtol);
    }
}

/* How a runner failed, as a verdict + message. error: what the channel
 * returned; its message is still in kevo_error_last(). */
static kevo_verdict runner_failure(kevo_buf *msg, kevo_child *c, int error)
{
    char why[512];
    snprintf(why, sizeof(why), "%s", kevo_error_last());
    if (error == KEVO_ETIMEOUT) {
        kevo_child_kill(c);
        kevo_buf_puts(msg, "did not return in time (killed)");
        return KEVO_VERDICT_TIMEOUT;
    }
    if (!kevo_child_exited_within(c, 1.0)) {
        /* alive: it broke the protocol (stray or malformed bytes) */
        kevo_child_kill(c);
        kevo_buf_puts(msg, why);
        return KEVO_VERDICT_CRASH;
    }
    if (c->status.kind == KEVO_EXIT_NORMAL && c->status.exit_code == KEVO_RUNNER_EXIT_DEVICE) {
        char tail[1024];
        size_t len = kevo_child_log_tail(c, tail, sizeof(tail));
        while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
            tail[--len] = 0;
        const char *line = strrchr(tail, '\n');
        line = line ? line + 1 : tail;
        char clean[301];
        size_t k = 0;
        for (const char *q = line; *q && k < 300; q++)
            clean[k++] = (*q >= 32 && *q < 127) ? *q : '?';
        clean[k] = 0;
        kevo_buf_printf(msg, "the device harness gave up: %s", k ? clean : "(no reason given)");
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
    kevo_channel__free(ev->ref);
    kevo_channel__inputs_free(ev->inputs);
    for (size_t i = 0; i < ev->nids; i++) {
        if (ev->expected && ev->from_cache)
            free(ev->expected[i]);
        else if (ev->expected)
            free_outputs(ev->expected[i], ev->task->nparams);
        if (ev->data)
            kevo_call_data_free(ev->data[i]);
    }
    free(ev->expected);
    free(ev->data);
    free(ev->ref_call_s);
    free(ev->order);
    free(ev->input_hash);
    kevo_ref_cache__release(&ev->cached);
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

static double expected_value(const kevo_task *t, size_t p, const void *e, int64_t i)
{
    switch (t->params[p].type) {
    case KEVO_DT_F32: return ((const float *)e)[i];
    case KEVO_DT_F64: return ((const double *)e)[i];
    case KEVO_DT_I32: return ((const int32_t *)e)[i];
    case KEVO_DT_I64: return (double)((const int64_t *)e)[i];
    default: return ((const uint8_t *)e)[i];
    }
}

/* What the reference's outputs say about the task, in one pass over them:
 * - NaN/Inf in the true values;
 * - near-constant: every true value over all size sets and seeds within
 *   2 x atol of one value (a kernel returning a constant would pass);
 * - tolerance sanity, per float output and size set (a kernel sees the
 *   sizes, so it may approximate on one set only): atol, the absolute
 *   slack, must stay under 1% of the range of the true values on every set
 *   of at least 64 values (smaller sets are there for edge cases, and their
 *   range says little). Above that, a kernel that knows the input
 *   distributions (a typical value, a constant scale in place of a
 *   computed norm) passes without computing the function. rtol is relative
 *   by nature and not judged here. */
#define KEVO_TOL_SHARE 0.01
#define KEVO_TOL_MIN_VALUES 64
static void check_outputs(kevo_evaluator *ev)
{
    const kevo_task *t = ev->task;
    size_t nsets = ev->nids / (size_t)ev->seeds;
    for (size_t p = 0; p < t->nparams; p++) {
        if (!is_output(t, p))
            continue;
        bool exact = !kevo_dtype_is_float(t->params[p].type);
        double lo = INFINITY, hi = -INFINITY;
        int64_t nonfinite = 0;
        kevo_buf loose = {0}; /* the first set whose range atol swallows */
        for (size_t set = 0; set < nsets; set++) {
            double slo = INFINITY, shi = -INFINITY;
            int64_t n = 0;
            for (int k = 0; k < ev->seeds; k++) {
                size_t id = set * (size_t)ev->seeds + (size_t)k;
                for (int64_t i = 0; i < ev->data[id]->count[p]; i++) {
                    double v = expected_value(t, p, ev->expected[id][p], i);
                    if (!isfinite(v)) {
                        nonfinite++;
                        continue;
                    }
                    slo = v < slo ? v : slo;
                    shi = v > shi ? v : shi;
                    n++;
                }
            }
            lo = slo < lo ? slo : lo;
            hi = shi > hi ? shi : hi;
            if (exact || loose.len || n < KEVO_TOL_MIN_VALUES || shi - slo <= 2 * t->atol ||
                t->atol <= KEVO_TOL_SHARE * (shi - slo))
                continue;
            kevo_buf b = {0};
            describe_sizes(&b, kevo_task_set(t, set));
            kevo_buf_printf(&loose,
                            "output '%s' on sizes %s: atol=%g is %.1f%% of the range "
                            "[%.3g, %.3g] of its true values (%d seeds), so a kernel that "
                            "approximates from the input distribution instead of computing "
                            "could pass: set atol <= %.2g (1%% of the range)\n",
                            t->params[p].name, kevo_buf_cstr(&b), t->atol,
                            100.0 * t->atol / (shi - slo), slo, shi, ev->seeds,
                            KEVO_TOL_SHARE * (shi - slo));
            kevo_buf_free(&b);
        }
        if (nonfinite)
            kevo_buf_printf(&ev->ref_problems, "output '%s': the reference produces %lld NaN/Inf "
                            "values\n", t->params[p].name, (long long)nonfinite);
        if (hi - lo <= 2 * t->atol && !(exact && hi > lo)) {
            ev->near_constant++;
            kevo_buf_printf(&ev->ref_problems, "output '%s' is near-constant: every true value "
                            "over all size sets and seeds lies in [%g, %g], within atol=%g of "
                            "one value, so a kernel returning a constant would pass\n",
                            t->params[p].name, lo, hi, t->atol);
        }
        kevo_buf_puts(&ev->ref_problems, kevo_buf_cstr(&loose));
        kevo_buf_free(&loose);
    }
}

static uint64_t call_bytes(const kevo_task *t, const kevo_call_data *d)
{
    uint64_t b = 0;
    for (size_t p = 0; p < t->nparams; p++)
        b += d->bytes[p];
    return b;
}

/* The correctness order: the smallest calls first, so that a wrong kernel
 * fails in milliseconds before the large sets run. */
static void order_by_size(kevo_evaluator *ev)
{
    for (size_t i = 0; i < ev->nids; i++)
        ev->order[i] = i;
    for (size_t i = 1; i < ev->nids; i++)
        for (size_t j = i; j > 0 && call_bytes(ev->task, ev->data[ev->order[j]]) <
                                        call_bytes(ev->task, ev->data[ev->order[j - 1]]);
             j--) {
            size_t x = ev->order[j];
            ev->order[j] = ev->order[j - 1];
            ev->order[j - 1] = x;
        }
}

/* Input generation for every (size set, seed) on worker threads: the same
 * bytes as one after the other (each set is its own deterministic stream),
 * in a fraction of the time. */
typedef struct {
    kevo_evaluator *ev;
    pthread_t th[16];
    int nth;
    pthread_mutex_t lock;
    size_t next;
    char *why;  /* the first failure's message (kevo_error_last is per thread) */
    int error;
} inputs_gen;

static void *inputs_worker(void *arg)
{
    inputs_gen *g = arg;
    kevo_evaluator *ev = g->ev;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        size_t id = g->next++;
        bool stop = g->error < 0;
        pthread_mutex_unlock(&g->lock);
        if (stop || id >= ev->nids)
            return NULL;
        int e = kevo_task_inputs(&ev->data[id], ev->task, id / (size_t)ev->seeds,
                                 (uint64_t)(id % (size_t)ev->seeds));
        if (e == 0 && ev->input_hash)
            ev->input_hash[id] = kevo_ref_cache__inputs_hash(ev->task, ev->data[id]);
        if (e < 0) {
            pthread_mutex_lock(&g->lock);
            if (g->error == 0) {
                g->error = e;
                g->why = strdup(kevo_error_last());
            }
            pthread_mutex_unlock(&g->lock);
        }
    }
}

static void inputs_start(inputs_gen *g, kevo_evaluator *ev)
{
    g->ev = ev;
    pthread_mutex_init(&g->lock, NULL);
    int n = kevo_cpu_count();
    n = n < 16 ? n : 16;
    n = (size_t)n < ev->nids ? n : (int)ev->nids;
    for (g->nth = 0; g->nth < n; g->nth++)
        if (pthread_create(&g->th[g->nth], NULL, inputs_worker, g) != 0)
            break;
    if (g->nth == 0)
        inputs_worker(g); /* no thread to be had: here, then */
}

/* Waits for the workers and releases what they shared; a no-op once done
 * (or never started). Keeps the caller's error: on an early exit from
 * kevo_evaluator_new the workers still write into ev. */
static void inputs_stop(inputs_gen *g)
{
    if (!g->ev)
        return;
    for (int i = 0; i < g->nth; i++)
        pthread_join(g->th[i], NULL);
    g->nth = 0;
    free(g->why);
    g->why = NULL;
    pthread_mutex_destroy(&g->lock);
    g->ev = NULL;
}

/* inputs_stop, then the first worker's failure as this thread's error. */
static int inputs_join(inputs_gen *g)
{
    for (int i = 0; i < g->nth; i++)
        pthread_join(g->th[i], NULL);
    g->nth = 0;
    int error = g->error < 0 ? kevo_error_set(g->error, "%s", g->why ? g->why
                                                                     : "input generation failed")
                             : 0;
    inputs_stop(g);
    return error;
}

/* Build the reference in ref_dir: the C backend, the task author's code. */
static int reference_build(kevo_evaluator *ev, const char *ref_dir, kevo_build_result *build)
{
    char *source = NULL;
    const kevo_backend *c = kevo_backend_find("c");
    int error = kevo_file_read(&source, NULL, ev->task->reference_path);
    if (error == 0)
        error = c->build(c, ev->task, source, true, ref_dir, build);
    free(source);
    if (error < 0)
        return error;
    ev->ref_build_s = build->seconds;
    if (!build->ok)
        return kevo_error_set(KEVO_EINVAL, "%s: the reference does not build:\n%s",
                              ev->task->reference_path,
                              build->diagnostics ? build->diagnostics : "");
    return 0;
}

/* A cached entry serves exactly the inputs it was computed from. */
static bool cache_matches(const kevo_evaluator *ev)
{
    const kevo_ref_cached *c = &ev->cached;
    size_t np = ev->task->nparams;
    if (c->nids != ev->nids || c->nparams != np)
        return false;
    for (size_t id = 0; id < ev->nids; id++) {
        if (c->input_hash[id] != ev->input_hash[id])
            return false;
        for (size_t p = 0; p < np; p++)
            if (c->bytes[id * np + p] != (is_output(ev->task, p) ? ev->data[id]->bytes[p] : 0))
                return false;
    }
    return true;
}

/* The reference's results from the cache entry in ev->cached. */
static int use_cached(kevo_evaluator *ev)
{
    static const uint64_t empty_output;
    const kevo_ref_cached *c = &ev->cached;
    size_t np = ev->task->nparams;
    ev->from_cache = true;
    for (size_t id = 0; id < ev->nids; id++) {
        if (!(ev->expected[id] = calloc(np, sizeof(void *))))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        for (size_t p = 0; p < np; p++)
            if (is_output(ev->task, p))
                ev->expected[id][p] = c->out[id * np + p] ? (void *)c->out[id * np + p]
                                                          : (void *)&empty_output;
        ev->ref_call_s[id] = c->call_s[id];
    }
    ev->near_constant = c->near_constant;
    ev->ref_build_s = c->build_s;
    kevo_buf_puts(&ev->ref_problems, c->problems ? c->problems : "");
    return 0;
}

/* Keep what the reference just produced for the next evaluator (best effort). */
static void cache_store(kevo_evaluator *ev, const char *runner_path)
{
    kevo_ref_cached c;
    size_t np = ev->task->nparams;
    if (!ev->cache_key[0] || kevo_ref_cache__alloc(&c, ev->nids, np) < 0)
        return;
    for (size_t id = 0; id < ev->nids; id++) {
        c.input_hash[id] = ev->input_hash[id];
        c.call_s[id] = ev->ref_call_s[id];
        for (size_t p = 0; p < np; p++)
            if (is_output(ev->task, p)) {
                c.bytes[id * np + p] = ev->data[id]->bytes[p];
                c.out[id * np + p] = ev->expected[id][p];
            }
    }
    c.near_constant = ev->near_constant;
    c.problems = strdup(kevo_buf_cstr(&ev->ref_problems));
    c.build_s = ev->ref_build_s;
    if (c.problems)
        (void)kevo_ref_cache__store(ev->cache_key, runner_path, &c);
    kevo_ref_cache__release(&c);
}

/* The reference runner failed (error: what the channel returned): the
 * task's problem, said as such. */
static int reference_failed(kevo_evaluator *ev, int error)
{
    kevo_buf msg = {0};
    kevo_verdict v = runner_failure(&msg, kevo_channel__child(ev->ref), error);
    error = kevo_error_set(v == KEVO_VERDICT_TIMEOUT ? KEVO_ETIMEOUT : KEVO_EINVAL,
                           "%s: the reference failed to run: %s", ev->task->reference_path,
                           kevo_buf_cstr(&msg));
    kevo_buf_free(&msg);
    return error;
}

/* Run the reference on every (size set, seed): its outputs and call times. */
static int reference_calls(kevo_evaluator *ev)
{
    const kevo_task *task = ev->task;
    for (size_t id = 0; id < ev->nids; id++) {
        int64_t ns;
        uint32_t bad;
        kevo_channel__set_inputs(ev->inputs, ev->data[id], 0);
        int error = kevo_channel__call(ev->ref, ev->data[id], 0, task->timeout_s, &ns, &bad);
        if (error < 0)
            return reference_failed(ev, error);
        if (bad != UINT32_MAX)
            return kevo_error_set(KEVO_EINVAL, "%s: the reference writes outside '%s'",
                                  task->reference_path, task->params[bad].name);
        if (!(ev->expected[id] = alloc_outputs(task, ev->data[id])))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        for (size_t p = 0; p < task->nparams; p++)
            if (ev->expected[id][p])
                memcpy(ev->expected[id][p], kevo_channel__output(ev->ref, p),
                       ev->data[id]->bytes[p]);
        ev->ref_call_s[id] = (double)ns * 1e-9;
    }
    return 0;
}

/* The channel's own cost, measured on the reference (code the task's
 * author wrote, not a candidate's) and subtracted from both sides. */
static int channel_cost(kevo_evaluator *ev)
{
    double noop[21], mn, cv;
    for (int i = 0; i < 21; i++) {
        int64_t ns;
        int error = kevo_channel__noop(ev->ref, &ns);
        if (error < 0)
            return reference_failed(ev, error);
        noop[i] = (double)ns;
    }
    kevo_stats(noop, 21, &ev->channel_ns, &mn, &cv);
    return 0;
}

static int evaluator_alloc(kevo_evaluator **out, const kevo_task *task,
                           const kevo_eval_options *opts)
{
    kevo_evaluator *ev = *out = calloc(1, sizeof(*ev));
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
    if (!ev->be)
        return kevo_error_set(KEVO_EINVAL, "unknown backend '%s'", ev->opts.backend);
    ev->nsets = kevo_task_nsets(task);
    ev->seeds = ev->opts.seeds;
    ev->nids = ev->nsets * (size_t)ev->seeds;
    ev->data = calloc(ev->nids, sizeof(*ev->data));
    ev->expected = calloc(ev->nids, sizeof(*ev->expected));
    ev->ref_call_s = calloc(ev->nids, sizeof(double));
    ev->order = calloc(ev->nids, sizeof(size_t));
    if (!ev->data || !ev->expected || !ev->ref_call_s || !ev->order)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (!ev->opts.no_reference_cache && kevo_ref_cache__dir() &&
        kevo_ref_cache__key(ev->cache_key, task, ev->seeds) == 0 &&
        !(ev->input_hash = calloc(ev->nids, sizeof(uint64_t))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    return 0; /* cache_key stays empty when there is no cache (or no key) */
}

int kevo_evaluator_new(kevo_evaluator **out, const kevo_task *task, const kevo_eval_options *opts)
{
    *out = NULL;
    char *ref_dir = NULL, *runner = NULL;
    kevo_build_result build = {0};
    kevo_child *dead = NULL;
    inputs_gen gen = {0};
    kevo_evaluator *ev = NULL;
    int error = evaluator_alloc(&ev, task, opts);
    if (error < 0)
        goto done;
    /* Inputs are generated on every core while the reference builds (or
     * its cached results are read). */
    inputs_start(&gen, ev);
    if ((error = kevo_mkdtemp(&ev->root, "kevo-eval-")) < 0)
        goto done;
    chmod(ev->root, 0755);
    if ((error = make_dir(&ref_dir, ev->root, "reference")) < 0)
        goto done;
    runner = kevo_path_join(ref_dir, "runner");
    pthread_rwlock_rdlock(&timing_slot);
    bool hit = ev->cache_key[0] && kevo_ref_cache__load(&ev->cached, ev->cache_key, runner) == 1;
    if (!hit && (error = reference_build(ev, ref_dir, &build)) < 0)
        goto done_locked;
    if ((error = inputs_join(&gen)) < 0)
        goto done_locked;
    if (hit && !cache_matches(ev)) { /* other inputs: the entry is stale */
        kevo_ref_cache__release(&ev->cached);
        kevo_ref_cache__drop(ev->cache_key);
        hit = false;
        if ((error = reference_build(ev, ref_dir, &build)) < 0)
            goto done_locked;
    }
    uint64_t total = 0;
    for (size_t id = 0; id < ev->nids; id++) {
        uint64_t b = call_bytes(task, ev->data[id]);
        total = b > total ? b : total;
    }
    order_by_size(ev);
    ev->runner_mem = ev->opts.mem_bytes ? ev->opts.mem_bytes : 6 * total + (3ULL << 30);
    if ((error = kevo_channel__inputs_new(&ev->inputs, task, ev->data, ev->nids)) < 0)
        goto done_locked;
    if ((error = runner_start(&ev->ref, &dead, ev, NULL, runner, ref_dir)) < 0) {
        error = kevo_error_set(KEVO_EINFRA, "cannot start the reference runner: %s",
                               kevo_error_last());
        goto done_locked;
    }
    if ((error = channel_cost(ev)) < 0)
        goto done_locked;
    if (hit) {
        error = use_cached(ev);
    } else if ((error = reference_calls(ev)) == 0) {
        check_outputs(ev);
        cache_store(ev, runner);
    }
    if (error == 0) {
        *out = ev;
        ev = NULL;
    }
done_locked:
    pthread_rwlock_unlock(&timing_slot);
done:
    inputs_stop(&gen);
    kevo_child_free(dead);
    kevo_build_result_clear(&build);
    free(ref_dir);
    free(runner);
    kevo_evaluator_free(ev);
    return error;
}

bool kevo_evaluator_reference_cached(const kevo_evaluator *ev)
{
    return ev->from_cache;
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
        int64_t ns;
        uint32_t bad;
        const kevo_call_data *d = ev->data[k % ev->seeds];
        kevo_channel__set_inputs(ev->inputs, d, 0);
        if (kevo_channel__call(ev->ref, d, 0, ev->task->timeout_s, &ns, &bad) == 0)
            s[n++] = ((double)ns - ev->channel_ns) * 1e-6;
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

static void describe_call(kevo_buf *where, const kevo_evaluator *ev, size_t id)
{
    kevo_buf_puts(where, "sizes ");
    describe_sizes(where, kevo_task_set(ev->task, id / (size_t)ev->seeds));
    kevo_buf_printf(where, ", seed %zu", id % (size_t)ev->seeds);
}

int kevo_evaluator_eval(kevo_evaluator *ev, const char *source, kevo_eval_result *r)
{
    const kevo_task *t = ev->task;
    memset(r, 0, sizeof(*r));
    double start = kevo_now_s();
    int error = 0;
    kevo_buf fb = {0};
    char *dir = NULL;
    kevo_channel_runner *cand = NULL;
    kevo_child *dead = NULL;
    kevo_build_result build = {0};
    double *cs = NULL, *rs = NULL;
    void **ref_out = NULL;
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

    /* Gate 3: correctness, smallest calls first */
    g = gate(r, "correctness");
    g0 = kevo_now_s();
    if ((error = runner_start(&cand, &dead, ev, ev->be, build.runner_path, dir)) < 0) {
        kevo_buf msg = {0};
        kevo_verdict v = dead ? runner_failure(&msg, dead, error) : KEVO_VERDICT_INFRA_ERROR;
        /* A device runner that dies during its setup (device, context,
         * prebuilt program; no kernel has run) failed on the machine's
         * driver or on the sandbox's rules for it, not on the kernel. */
        if (dead && ev->be->runner_env)
            v = KEVO_VERDICT_INFRA_ERROR;
        kevo_buf_printf(&g->messages, "the program died before the first call: %s\n",
                        dead ? kevo_buf_cstr(&msg) : kevo_error_last());
        kevo_buf_printf(&fb, "The program died before the kernel was called: %s",
                        dead ? kevo_buf_cstr(&msg) : kevo_error_last());
        kevo_buf_free(&msg);
        finish(r, v, &fb);
        error = 0;
        goto done;
    }
    for (size_t k = 0; k < ev->nids; k++) {
        size_t id = ev->order[k];
        const kevo_call_data *d = ev->data[id];
        int64_t ns;
        uint32_t bad;
        kevo_buf where = {0};
        describe_call(&where, ev, id);
        kevo_channel__set_inputs(ev->inputs, d, 0);
        if ((error = kevo_channel__call(cand, d, 0, call_timeout(ev, id), &ns, &bad)) < 0) {
            kevo_buf msg = {0};
            kevo_verdict v = runner_failure(&msg, kevo_channel__child(cand), error);
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
        if (bad != UINT32_MAX) {
            kevo_buf_printf(&g->messages, "%s: wrote outside '%s'\n", where.ptr,
                            t->params[bad].name);
            kevo_buf_printf(&fb, "Crashed on %s: the kernel wrote outside output '%s' (before "
                            "its start or past its end).", where.ptr, t->params[bad].name);
            kevo_buf_free(&where);
            finish(r, KEVO_VERDICT_CRASH, &fb);
            goto done;
        }
        kevo_buf mism = {0};
        compare_outputs(&mism, t, d, (const void *const *)ev->expected[id], cand);
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

    /* Gate 4: latency, interleaved ABBA; every round on fresh inputs (a
     * stored set of the timed sizes, rotated by a random amount), and the
     * candidate's outputs of every timed call checked against the
     * reference's for the very same inputs. */
    pthread_rwlock_unlock(&timing_slot);
    pthread_rwlock_wrlock(&timing_slot);
    slot = 2;
    g = gate(r, "latency");
    g0 = kevo_now_s();
    int cap = ev->opts.max_samples > 0 ? ev->opts.max_samples : 1000;
    cs = calloc((size_t)cap, sizeof(double));
    rs = calloc((size_t)cap, sizeof(double));
    ref_out = calloc(t->nparams, sizeof(void *));
    if (!cs || !rs || !ref_out) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto infra;
    }
    int nc = 0, nr = 0, checked = 0;
    double csum = 0, rsum = 0;
    kevo_rng rot_rng;
    kevo_rng_seed(&rot_rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)ev->serial * 7919u + 17u));
    for (int i = 0;; i++) {
        uint32_t id = (uint32_t)(i % ev->seeds);
        const kevo_call_data *d = ev->data[id];
        bool warm = i < 2;
        uint64_t rot = 1 + kevo_rng_next(&rot_rng) % 1000003u; /* same for both sides */
        kevo_channel__set_inputs(ev->inputs, d, rot);
        for (int side = 0; side < 2; side++) {
            bool ref_side = (side == 0) == (i % 2 == 0);
            int64_t ns;
            uint32_t bad;
            kevo_channel_runner *c = ref_side ? ev->ref : cand;
            (void)kevo_channel__pin(c, i); /* best effort: timing stays valid without */
            if ((error = kevo_channel__call(c, d, rot, ref_side ? t->timeout_s
                                                                 : call_timeout(ev, id),
                                            &ns, &bad)) < 0) {
                if (ref_side) {
                    error = kevo_error_set(KEVO_EINFRA, "the reference runner failed during "
                                                        "timing: %s", kevo_error_last());
                    goto infra;
                }
                kevo_buf msg = {0};
                kevo_verdict v = runner_failure(&msg, kevo_channel__child(cand), error);
                kevo_buf_printf(&g->messages, "timed call: %s\n", msg.ptr);
                kevo_buf_printf(&fb, "Failed during timing (repeated calls): %s.", msg.ptr);
                kevo_buf_free(&msg);
                finish(r, v, &fb);
                error = 0;
                goto done;
            }
            if (!ref_side && bad != UINT32_MAX) {
                kevo_buf_printf(&fb, "Crashed during timing: wrote outside '%s'.",
                                t->params[bad].name);
                finish(r, KEVO_VERDICT_CRASH, &fb);
                goto done;
            }
            if (ref_side)
                for (size_t p = 0; p < t->nparams; p++)
                    ref_out[p] = (void *)kevo_channel__output(ev->ref, p);
            if (warm)
                continue;
            /* kevo's clock around the call, less the channel's own cost */
            double us = ((double)ns - ev->channel_ns) * 1e-3;
            if (us < 0)
                us = 0;
            if (ref_side && nr < cap)
                rs[nr++] = us, rsum += us * 1e-6;
            else if (!ref_side && nc < cap)
                cs[nc++] = us, csum += us * 1e-6;
        }
        /* Both sides ran on the same inputs: the candidate must match. */
        kevo_buf mism = {0};
        compare_outputs(&mism, t, d, (const void *const *)ref_out, cand);
        checked++;
        if (mism.len) {
            kevo_buf_printf(&g->messages, "timed call %d (sizes of the timed set, seed %u, "
                            "inputs rotated): wrong results\n%s", i + 1, id, mism.ptr);
            kevo_buf_printf(&fb, "Correct on the checked calls but wrong on timed call %d "
                                 "(the outputs of every timed call are compared with the "
                                 "reference's on the same inputs; a kernel must compute every "
                                 "call in full):\n%s", i + 1, mism.ptr);
            kevo_buf_free(&mism);
            finish(r, KEVO_VERDICT_INCORRECT, &fb);
            goto done;
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
    kevo_latency *L = &r->latency;
    kevo_stats(cs, nc, &L->candidate_us, &L->candidate_min_us, &L->candidate_cv);
    kevo_stats(rs, nr, &L->reference_us, &L->reference_min_us, &L->reference_cv);
    L->candidate_samples = nc;
    L->reference_samples = nr;
    L->speedup = L->candidate_us > 0 ? L->reference_us / L->candidate_us : 0;
    r->has_latency = true;
    g->ok = true;
    g->seconds = kevo_now_s() - g0;
    kevo_buf_printf(&g->messages, "candidate median %.1f us (min %.1f, cv %.1f%%, %d calls); "
                    "reference median %.1f us (min %.1f, cv %.1f%%, %d calls); outputs of all "
                    "%d timed rounds checked\n",
                    L->candidate_us, L->candidate_min_us, 100 * L->candidate_cv, nc,
                    L->reference_us, L->reference_min_us, 100 * L->reference_cv, nr, checked);
    kevo_buf_printf(&fb, "Correct. Median latency %.1f us against the reference's %.1f us: "
                    "speedup %.2fx.", L->candidate_us, L->reference_us, L->speedup);
    finish(r, KEVO_VERDICT_CORRECT, &fb);
    goto done;

infra:
    kevo_buf_printf(&fb, "kevo failed (not the candidate's fault): %s", kevo_error_last());
    finish(r, KEVO_VERDICT_INFRA_ERROR, &fb);
    error = 0;
done:
    if (slot == 2 && ev->ref)
        (void)kevo_channel__pin(ev->ref, -1); /* the next candidate's calls run anywhere */
    if (slot)
        pthread_rwlock_unlock(&timing_slot);
    kevo_channel__free(cand);
    kevo_child_free(dead);
    free(cs);
    free(rs);
    free(ref_out);
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
