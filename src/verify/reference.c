/*
 * verify/reference.c - the evaluator's life: kevo_evaluator_new builds the
 * task's reference (or loads its results from the reference cache), starts
 * its runner and runs it on every (size set, seed); kevo_evaluator_free
 * undoes it. The expected outputs stay in kevo's memory, never on disk
 * outside the private cache, never in a candidate's process. Failures here
 * are kevo's or the task's, said as errors, never verdicts. Must not:
 * judge a candidate (the gate_*.c files do).
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void free_outputs(void **o, size_t n)
{
    for (size_t i = 0; o && i < n; i++)
        free(o[i]);
    free(o);
}

/* One buffer per output parameter, or NULL (all or nothing). */
static void **alloc_outputs(const kevo_task *t, const kevo_call_data *d)
{
    void **o = calloc(t->nparams, sizeof(void *));
    for (size_t p = 0; o && p < t->nparams; p++) {
        if (kevo_verify__is_output(t, p) && !(o[p] = malloc(d->bytes[p] ? d->bytes[p] : 1))) {
            free_outputs(o, t->nparams);
            return NULL;
        }
    }
    return o;
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
    free(ev->torch_python);
    free(ev->torch_tree);
    kevo_ref_cache__release(&ev->cached);
    if (ev->root && !ev->opts.keep_workdir)
        kevo_rmtree(ev->root);
    free(ev->root);
    kevo_buf_free(&ev->ref_problems);
    free(ev);
}

bool kevo_evaluator_reference_cached(const kevo_evaluator *ev)
{
    return ev->from_cache;
}

/* The correctness order: the smallest calls first, so that a wrong kernel
 * fails in milliseconds before the large sets run. */
static void order_by_size(kevo_evaluator *ev)
{
    for (size_t i = 0; i < ev->nids; i++)
        ev->order[i] = i;
    for (size_t i = 1; i < ev->nids; i++)
        for (size_t j = i; j > 0 && kevo_verify__call_bytes(ev->task, ev->data[ev->order[j]]) <
                                        kevo_verify__call_bytes(ev->task,
                                                                ev->data[ev->order[j - 1]]);
             j--) {
            size_t x = ev->order[j];
            ev->order[j] = ev->order[j - 1];
            ev->order[j - 1] = x;
        }
}

/* Copy `name` of folder `from` into `to` (world-readable: the runner has its
 * own uid). */
static int copy_into(const char *to, const char *from, const char *name, const char *as)
{
    char *src = kevo_path_join(from, name), *dst = kevo_path_join(to, as ? as : name);
    char *data = NULL;
    size_t len = 0;
    int error = src && dst ? kevo_file_read(&data, &len, src) : KEVO_ENOMEM;
    if (error == 0 && (error = kevo_file_write(dst, data, len)) == 0)
        chmod(dst, 0644);
    free(data);
    free(src);
    free(dst);
    return error;
}

/* A torch task's reference folder: task.json, the problem file and the
 * problem loader, which the runner script (copied by reference_build, or
 * from the cache) reads from its working folder. */
static int torch_prepare(kevo_evaluator *ev, const char *ref_dir)
{
    const kevo_task *t = ev->task;
    const char *ref = strrchr(t->reference_path, '/');
    ref = ref ? ref + 1 : t->reference_path;
    int error;
    if ((error = kevo_torch_python(&ev->torch_python, &ev->torch_tree)) < 0)
        return kevo_error_set(KEVO_EINVAL, "%s: %s", t->reference_path, kevo_error_last());
    char *tmp = kevo_path_join(ref_dir, "tmp"); /* torch wants a writable temp folder */
    error = tmp ? kevo_mkdirs(tmp, 0755) : KEVO_ENOMEM;
    if (error == 0)
        chmod(tmp, 01777);
    free(tmp);
    if (error < 0 || (error = copy_into(ref_dir, t->dir, "task.json", NULL)) < 0 ||
        (error = copy_into(ref_dir, t->dir, ref, NULL)) < 0 ||
        (error = copy_into(ref_dir, kevo_harness_dir(), "torch_problem.py", NULL)) < 0)
        return kevo_error_set(KEVO_EINFRA, "cannot prepare the torch reference: %s",
                              kevo_error_last());
    return 0;
}

/* Build the reference in ref_dir: the C backend, the task author's code;
 * for a torch task, its runner is the script harness/torch_runner.py. */
static int reference_build(kevo_evaluator *ev, const char *ref_dir, kevo_build_result *build)
{
    if (ev->task->torch) {
        double t0 = kevo_now_s();
        int error = copy_into(ref_dir, kevo_harness_dir(), "torch_runner.py", "runner");
        if (error < 0)
            return kevo_error_set(KEVO_EINFRA, "cannot prepare the torch reference: %s",
                                  kevo_error_last());
        ev->ref_build_s = kevo_now_s() - t0;
        build->ok = true;
        return 0;
    }
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
            if (c->bytes[id * np + p] !=
                (kevo_verify__is_output(ev->task, p) ? ev->data[id]->bytes[p] : 0))
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
            if (kevo_verify__is_output(ev->task, p))
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
            if (kevo_verify__is_output(ev->task, p)) {
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
    kevo_verdict v = kevo_verify__runner_failure(&msg, kevo_channel__child(ev->ref), error);
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
    ev->cand_channel_ns = ev->task->torch ? 0 : ev->channel_ns;
    return 0;
}

/* Once the inputs exist: the correctness order, the runners' memory limit,
 * the input channel, the reference's runner and the channel's cost. */
static int reference_start(kevo_evaluator *ev, kevo_child **dead, const char *runner,
                           const char *ref_dir)
{
    uint64_t total = 0;
    for (size_t id = 0; id < ev->nids; id++) {
        uint64_t b = kevo_verify__call_bytes(ev->task, ev->data[id]);
        total = b > total ? b : total;
    }
    order_by_size(ev);
    ev->runner_mem = ev->opts.mem_bytes ? ev->opts.mem_bytes : 6 * total + (3ULL << 30);
    int error = kevo_channel__inputs_new(&ev->inputs, ev->task, ev->data, ev->nids);
    if (error < 0)
        return error;
    if ((error = kevo_verify__runner_start(&ev->ref, dead, ev, NULL, runner, ref_dir, 0)) < 0) {
        /* what the runner said before it died (a torch reference's reason) */
        char why[512], tail[1024] = "";
        snprintf(why, sizeof(why), "%s", kevo_error_last());
        size_t n = 0;
        if (*dead) {
            kevo_child_wait(*dead, 2.0);
            n = kevo_child_log_tail(*dead, tail, sizeof(tail));
            if (!n)
                n = (size_t)snprintf(tail, sizeof(tail), "%s",
                                     kevo_proc_status_describe(&(*dead)->status));
        }
        while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
            tail[--n] = 0;
        const char *line = strrchr(tail, '\n');
        return kevo_error_set(ev->task->torch && n ? KEVO_EINVAL : KEVO_EINFRA,
                              "%s: cannot start the reference runner: %s%s%s",
                              ev->task->reference_path, why, n ? ": " : "",
                              line ? line + 1 : tail);
    }
    return channel_cost(ev);
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
    kevo_verify__inputs_gen gen = {0};
    kevo_evaluator *ev = NULL;
    bool locked = false, hit = false;
    int error = kevo_backend_check_task(task);
    if (error == 0)
        error = evaluator_alloc(&ev, task, opts);
    if (error < 0)
        goto done;
    /* Inputs are generated on every core while the reference builds (or
     * its cached results are read). */
    kevo_verify__slot_shared(); /* generating inputs is CPU work too */
    locked = true;
    kevo_verify__inputs_start(&gen, ev);
    if ((error = kevo_mkdtemp(&ev->root, "kevo-eval-")) < 0)
        goto done;
    chmod(ev->root, 0755);
    if ((error = kevo_verify__make_dir(&ref_dir, ev->root, "reference")) < 0)
        goto done;
    runner = kevo_path_join(ref_dir, "runner");
    if (task->torch && (error = torch_prepare(ev, ref_dir)) < 0)
        goto done;
    hit = ev->cache_key[0] && kevo_ref_cache__load(&ev->cached, ev->cache_key, runner) == 1;
    if (!hit && (error = reference_build(ev, ref_dir, &build)) < 0)
        goto done;
    if ((error = kevo_verify__inputs_join(&gen)) < 0)
        goto done;
    if (hit && !cache_matches(ev)) { /* other inputs: the entry is stale */
        kevo_ref_cache__release(&ev->cached);
        kevo_ref_cache__drop(ev->cache_key);
        hit = false;
        if ((error = reference_build(ev, ref_dir, &build)) < 0)
            goto done;
    }
    if ((error = reference_start(ev, &dead, runner, ref_dir)) < 0)
        goto done;
    if (hit) {
        error = use_cached(ev);
    } else if ((error = reference_calls(ev)) == 0) {
        kevo_verify__reference_check(ev);
        cache_store(ev, runner);
    }
    if (error == 0) {
        *out = ev;
        ev = NULL;
    }
done:
    kevo_verify__inputs_stop(&gen);
    if (locked)
        kevo_verify__slot_release();
    kevo_child_free(dead);
    kevo_build_result_clear(&build);
    free(ref_dir);
    free(runner);
    kevo_evaluator_free(ev);
    return error;
}
