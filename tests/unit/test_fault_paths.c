/*
 * test_fault_paths.c - "fail the Nth call" over kevo's main paths, in
 * process (kevo/fault.h; SQLite's test_malloc.c, curl's memdebug.c):
 *
 *   eval     kevo_evaluator_new + kevo_evaluator_eval of a tiny C task
 *            (candidate = the reference), allocations and process spawns
 *   record   kevo_memory_attempt_record of a refine attempt with used
 *            items into a fresh copy of a small store
 *   context  kevo_context_build (draft and refine) + kevo_context_render
 *   report   kevo_report_metrics, kevo_report_render (text, JSON, CSV),
 *            kevo_report_html
 *
 * For N = 1, 2, ... until a run completes without the fault firing: arm at
 * N, run the path, disarm, then check that the call returned 0 or a
 * negative error with a message, that nothing crashed or hung, that a
 * record left the store with the whole attempt (its items, edges and
 * Q-values) or with nothing of it, that the same path then succeeds
 * unarmed, and (sanitizer builds) that nothing leaked. Each N runs in a
 * forked copy of the test process, warmed by one unarmed run first, so a
 * crash is one finding, not the end of the test; the parent names the
 * failing call's site (its call stack, from the fault hook's hit hook)
 * with addr2line.
 *
 * Sizes (about a minute on two cores): every N of record, report and of
 * spawns; for context (~1200 allocations) and eval (~600, each run builds
 * and runs code) 600 and 20 values of N spread evenly over
 * them (offset by KEVO_FAULT_SEED, scaled by KEVO_FAULT_SCALE), and 5
 * with the latency gate on; a sanitizer build (a leak check per run) 120
 * values of N for context and for report. KEVO_FAULT_ALL=1 tries every N
 * (many minutes).
 *
 * Cases known to fail in other modules (KNOWN below: file:function, what
 * happens) are skipped with a `KNOWN:` note; KEVO_FAULT_STRICT=1 makes
 * them fail. KEVO_FAULT_VERBOSE=1 prints every N.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/context.h"
#include "kevo/fault.h"
#include "kevo/memory.h"
#include "kevo/report.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "kevo/verify.h"

#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* LeakSanitizer, when linked in (KEVO_SANITIZE=ON). */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* ---- known failures in other modules ---------------------------------- */

typedef enum problem {
    P_OK = 0,
    P_BAD_RETURN,   /* neither 0 nor a negative error with a message */
    P_HALF_WRITTEN, /* record: part of an attempt in the store */
    P_RERUN,        /* the same path failed unarmed afterwards */
    P_LEAK,         /* LeakSanitizer found a leak */
    P_SANITIZER,    /* ASan/UBSan stopped the child */
    P_CRASH,        /* killed by a signal */
    P_HANG,         /* past the per-run time limit */
    P_VERDICT,      /* eval: 0 but a candidate verdict other than correct/infra_error */
    P_COUNT
} problem;

static const char *const problem_names[P_COUNT] = {
    "ok", "bad return", "half-written store", "fails unarmed afterwards", "leak",
    "sanitizer error", "crash", "hang", "OOM blamed on the candidate"};

/* A finding that belongs to another module: skipped unless strict. `site`
 * is matched against the symbolised stack of the failing call ("fn (file:
 * line) < caller (file:line) < ..."): its parts, split at " < ", must
 * appear in that order. `path` is the path's name or "*". `problems`: a
 * mask of PB(problem) (a crash in a plain build is a sanitizer error in
 * a sanitizer build). */
#define PB(p) (1u << (p))
typedef struct known_case {
    const char *path;
    const char *site;
    unsigned problems;
    const char *note;
} known_case;

/* Empty: the four found when this test was written (task.c parse_sizes and
 * kevo_task_load, inputs.c kevo_call_data_free, verify/reference.c
 * alloc_outputs) are fixed. A new finding in another module's code goes
 * here, with file:function and what happens, until it is fixed. */
static const known_case KNOWN[] = {
    {NULL, NULL, 0, NULL}};

/* Whether the parts of `pattern` (split at " < ") appear in `stack` in
 * that order. */
static bool stack_matches(const char *stack, const char *pattern)
{
    const char *at = stack;
    while (*pattern) {
        const char *end = strstr(pattern, " < ");
        size_t len = end ? (size_t)(end - pattern) : strlen(pattern);
        char part[256];
        if (len >= sizeof(part))
            return false;
        memcpy(part, pattern, len);
        part[len] = '\0';
        const char *hit = strstr(at, part);
        if (!hit)
            return false;
        at = hit + len;
        pattern += len + (end ? 3 : 0);
    }
    return true;
}

/* ---- shared between the forked run and the parent --------------------- */

typedef struct shared {
    volatile long hits;
    volatile int nframes;
    volatile uintptr_t frames[KEVO_FAULT_MAX_FRAMES]; /* offsets from the program's base */
    volatile int rc;
    volatile int problem;
    char detail[512];
} shared;

static shared *g_shared;
static uintptr_t g_base;
static bool g_strict, g_verbose, g_all;

static int base_of_program(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1; /* the first object is the program */
}

static void on_hit(kevo_fault_kind kind, const void *const *frames, int n, void *arg)
{
    (void)kind;
    (void)arg;
    if (!g_shared || g_shared->nframes)
        return; /* the first hit names the site */
    for (int i = 0; i < n && i < KEVO_FAULT_MAX_FRAMES; i++)
        g_shared->frames[i] = (uintptr_t)frames[i] - g_base;
    g_shared->nframes = n;
}

static void child_problem(problem p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void child_problem(problem p, const char *fmt, ...)
{
    if (g_shared->problem)
        return;
    g_shared->problem = p;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_shared->detail, sizeof(g_shared->detail), fmt, ap);
    va_end(ap);
}

/* The error contract of every kevo call. */
static void check_return(const char *what, int rc)
{
    if (rc > 0 || (rc < 0 && !kevo_error_last()[0]))
        child_problem(P_BAD_RETURN, "%s returned %d with message \"%s\"", what, rc,
                      kevo_error_last());
}

/* ---- the fixture: a task, a store ------------------------------------- */

static const char TASK_JSON[] =
    "{\n"
    "  \"name\": \"fault_relu\", \"level\": 1, \"category\": \"activation\",\n"
    "  \"description\": \"Elementwise ReLU over N floats (fault-injection test)\",\n"
    "  \"params\": [\n"
    "    {\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"],\n"
    "     \"init\": {\"dist\": \"normal\", \"mean\": 0, \"std\": 1}},\n"
    "    {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]},\n"
    "    {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}\n"
    "  ],\n"
    "  \"sizes\": {\"N\": 4096},\n"
    "  \"check_sizes\": [{\"N\": 7}, {\"N\": 1003}],\n"
    "  \"tolerance\": {\"atol\": 1e-5, \"rtol\": 1e-5},\n"
    "  \"flops\": \"N\", \"bytes\": \"8*N\", \"backends\": [\"c\"]\n"
    "}\n";

static const char REFERENCE_C[] =
    "#include <stdint.h>\n\n"
    "void fault_relu(const float *x, float *y, int64_t N)\n"
    "{\n"
    "    for (int64_t i = 0; i < N; i++)\n"
    "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "}\n";

typedef struct fixture {
    char *root;     /* TMPDIR of the test, 0755 */
    char *task_dir; /* task.json + reference.c */
    kevo_task *task;
    char *template_db; /* a store with seeds and a few attempts; never written after setup */
    char *work_db;     /* a copy per record run */
    int64_t run_id, parent_id;
    kevo_used_item used[3];
    size_t n_used;
    kevo_memory_stats record_delta; /* what one unarmed record adds */
} fixture;

static fixture F;

static void write_text(const char *dir, const char *name, const char *text)
{
    char *path = kevo_path_join(dir, name);
    assert_non_null(path);
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
    free(path);
}

static int64_t add_attempt(kevo_memory *mem, kevo_stage stage, int iteration, int64_t parent,
                           kevo_verdict verdict, double speedup, const kevo_used_item *used,
                           size_t n_used)
{
    bool ok = verdict == KEVO_VERDICT_CORRECT;
    kevo_attempt a = {
        .run_id = F.run_id,
        .task = "fault_relu",
        .backend = "c",
        .generator = "replay",
        .stage = stage,
        .iteration = iteration,
        .parent_id = parent,
        .verdict = verdict,
        .gates_json = "[]",
        .feedback = ok ? "Correct." : "error: y[3] expected 0.5, got 0",
        .source = REFERENCE_C,
        .reference_us = 100,
        .candidate_us = ok ? 100 / speedup : 0,
        .speedup = ok ? speedup : 0,
        .tokens_prompt = 1000,
        .tokens_completion = 250,
    };
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, &a, used, n_used, NULL, &id), 0);
    return id;
}

static void build_template(void)
{
    F.template_db = kevo_path_join(F.root, "template.db");
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, F.template_db), 0);
    assert_int_equal(kevo_memory_seed_builtin(mem), 0);
    kevo_memory_task t = {.name = "fault_relu",
                          .level = 1,
                          .category = "activation",
                          .description = "Elementwise ReLU over N floats",
                          .reference = REFERENCE_C,
                          .suite_path = F.task_dir};
    assert_int_equal(kevo_memory_task_upsert(mem, &t, NULL), 0);
    assert_int_equal(kevo_memory_run_begin(mem, "{\"generator\":\"replay\"}", &F.run_id), 0);
    kevo_item_list *items = NULL;
    kevo_item_filter f = {.limit = 3, .no_body = 1};
    assert_int_equal(kevo_memory_item_list(&items, mem, &f), 0);
    assert_true(items->n >= 1);
    F.n_used = items->n < 3 ? items->n : 3;
    for (size_t i = 0; i < F.n_used; i++)
        F.used[i] = (kevo_used_item){.item_id = items->items[i].id,
                                     .stage = KEVO_STAGE_REFINE,
                                     .rank = (int)i + 1,
                                     .tokens = 100};
    kevo_item_list_free(items);
    kevo_used_item draft_used[3];
    memcpy(draft_used, F.used, sizeof(draft_used));
    for (size_t i = 0; i < F.n_used; i++)
        draft_used[i].stage = KEVO_STAGE_DRAFT;
    add_attempt(mem, KEVO_STAGE_DRAFT, 0, 0, KEVO_VERDICT_INCORRECT, 0, draft_used, F.n_used);
    F.parent_id = add_attempt(mem, KEVO_STAGE_DRAFT, 1, 0, KEVO_VERDICT_CORRECT, 1.0,
                              draft_used, F.n_used);
    int64_t child = add_attempt(mem, KEVO_STAGE_REFINE, 2, F.parent_id, KEVO_VERDICT_CORRECT,
                                1.5, F.used, F.n_used);
    add_attempt(mem, KEVO_STAGE_REFINE, 3, child, KEVO_VERDICT_COMPILE_ERROR, 0, F.used,
                F.n_used);
    assert_int_equal(kevo_memory_run_finish(mem, F.run_id, "done"), 0);
    kevo_memory_free(mem);
}

static int group_setup(void **state)
{
    (void)state;
    g_strict = getenv("KEVO_FAULT_STRICT") && !strcmp(getenv("KEVO_FAULT_STRICT"), "1");
    g_verbose = getenv("KEVO_FAULT_VERBOSE") && !strcmp(getenv("KEVO_FAULT_VERBOSE"), "1");
    g_all = getenv("KEVO_FAULT_ALL") && !strcmp(getenv("KEVO_FAULT_ALL"), "1");
    /* every call path, no reference cache */
    setenv("KEVO_CACHE", "off", 1);
    /* sandboxed compilers and runners run as other uids beneath TMPDIR */
    unsetenv("TMPDIR");
    if (kevo_mkdtemp(&F.root, "kevo-test-fault-") < 0 || chmod(F.root, 0755) < 0)
        return -1;
    setenv("TMPDIR", F.root, 1);
    F.task_dir = kevo_path_join(F.root, "fault_relu");
    if (kevo_mkdirs(F.task_dir, 0755) < 0 || chmod(F.task_dir, 0755) < 0)
        return -1;
    write_text(F.task_dir, "task.json", TASK_JSON);
    write_text(F.task_dir, "reference.c", REFERENCE_C);
    if (kevo_task_load(&F.task, F.task_dir) < 0) {
        fprintf(stderr, "task: %s\n", kevo_error_last());
        return -1;
    }
    build_template();
    F.work_db = kevo_path_join(F.root, "work.db");
    g_shared = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    if (g_shared == MAP_FAILED)
        return -1;
    dl_iterate_phdr(base_of_program, &g_base);
    kevo_fault_set_hit_hook(on_hit, NULL);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    kevo_fault_set_hit_hook(NULL, NULL);
    kevo_task_free(F.task);
    kevo_rmtree(F.root);
    free(F.root);
    free(F.task_dir);
    free(F.template_db);
    free(F.work_db);
    munmap(g_shared, sizeof(shared));
    return 0;
}

/* ---- the paths --------------------------------------------------------- */

/* A path runs once armed (armed = true: the caller arms right before) and
 * once unarmed; it reports problems through child_problem and returns the
 * path's first negative return code, or 0. `arm` is called right before
 * the calls under test so that setup allocations are not counted. */
typedef struct path_run {
    kevo_fault_kind kind;
    long n;   /* 0: unarmed */
    bool armed_now;
} path_run;

static void arm_now(path_run *r)
{
    kevo_error_clear();
    if (r->n > 0)
        kevo_fault_arm(r->kind, r->n);
    else if (r->n < 0)
        kevo_fault_arm(r->kind, 0); /* count only */
    r->armed_now = true;
}

static void disarm_now(path_run *r)
{
    if (r->armed_now)
        kevo_fault_disarm();
    r->armed_now = false;
}

/* eval: build the reference, judge the reference as a candidate. */
static int path_eval_with(path_run *r, bool latency)
{
    kevo_eval_options o;
    kevo_eval_options_default(&o);
    o.seeds = 3;
    o.skip_latency = !latency;
    o.no_reference_cache = true;
    o.min_time_s = 0.005;
    o.min_samples = 3;
    o.max_samples = 5;
    o.max_time_s = 1.0;
    kevo_evaluator *ev = NULL;
    kevo_eval_result res = {0};
    arm_now(r);
    int rc = kevo_evaluator_new(&ev, F.task, &o);
    int rc2 = 0;
    if (rc == 0)
        rc2 = kevo_evaluator_eval(ev, REFERENCE_C, &res);
    disarm_now(r);
    check_return("kevo_evaluator_new", rc);
    if (rc == 0)
        check_return("kevo_evaluator_eval", rc2);
    if (rc == 0 && rc2 == 0 && res.verdict != KEVO_VERDICT_CORRECT &&
        res.verdict != KEVO_VERDICT_INFRA_ERROR)
        child_problem(P_VERDICT, "the reference judged %s: %.200s",
                      kevo_verdict_name(res.verdict), res.feedback ? res.feedback : "");
    if (r->n == 0 && rc == 0 && rc2 == 0 && res.verdict != KEVO_VERDICT_CORRECT)
        child_problem(P_RERUN, "unarmed: the reference judged %s: %.200s",
                      kevo_verdict_name(res.verdict), res.feedback ? res.feedback : "");
    kevo_eval_result_clear(&res);
    kevo_evaluator_free(ev);
    return rc < 0 ? rc : rc2;
}

static int path_eval(path_run *r)
{
    return path_eval_with(r, false);
}

static int path_eval_latency(path_run *r)
{
    return path_eval_with(r, true);
}

static int copy_file(const char *from, const char *to)
{
    char *data = NULL;
    size_t len = 0;
    int error = kevo_file_read(&data, &len, from);
    if (error == 0)
        error = kevo_file_write(to, data, len);
    free(data);
    return error;
}

typedef struct store_state {
    kevo_memory_stats st;
    double q[3], q2;
    int64_t qn[3], q2n;
} store_state;

static void store_state_get(store_state *s, kevo_memory *mem)
{
    memset(s, 0, sizeof(*s));
    if (kevo_memory_stats_get(&s->st, mem) < 0)
        child_problem(P_RERUN, "stats: %s", kevo_error_last());
    for (size_t i = 0; i < F.n_used; i++)
        kevo_memory_q_get(&s->q[i], &s->qn[i], mem, F.used[i].item_id, KEVO_STAGE_REFINE);
    kevo_memory_q_start_get(&s->q2, &s->q2n, mem, F.parent_id);
}

static bool same_counts(const kevo_memory_stats *a, const kevo_memory_stats *b)
{
    return a->runs == b->runs && a->tasks == b->tasks && a->attempts == b->attempts &&
           a->attempts_correct == b->attempts_correct && a->items == b->items &&
           a->edges_used == b->edges_used && a->edges_distilled == b->edges_distilled &&
           a->q_items == b->q_items && a->q_starts == b->q_starts;
}

static bool same_values(const store_state *a, const store_state *b)
{
    for (size_t i = 0; i < F.n_used; i++)
        if (a->q[i] != b->q[i] || a->qn[i] != b->qn[i])
            return false;
    return a->q2 == b->q2 && a->q2n == b->q2n;
}

static void stats_add(kevo_memory_stats *out, const kevo_memory_stats *a,
                      const kevo_memory_stats *d)
{
    *out = *a;
    out->runs += d->runs;
    out->tasks += d->tasks;
    out->attempts += d->attempts;
    out->attempts_correct += d->attempts_correct;
    out->items += d->items;
    out->edges_used += d->edges_used;
    out->edges_distilled += d->edges_distilled;
    out->q_items += d->q_items;
    out->q_starts += d->q_starts;
}

static void stats_sub(kevo_memory_stats *out, const kevo_memory_stats *a,
                      const kevo_memory_stats *b)
{
    memset(out, 0, sizeof(*out));
    out->runs = a->runs - b->runs;
    out->tasks = a->tasks - b->tasks;
    out->attempts = a->attempts - b->attempts;
    out->attempts_correct = a->attempts_correct - b->attempts_correct;
    out->items = a->items - b->items;
    out->edges_used = a->edges_used - b->edges_used;
    out->edges_distilled = a->edges_distilled - b->edges_distilled;
    out->q_items = a->q_items - b->q_items;
    out->q_starts = a->q_starts - b->q_starts;
}

static int record_refine(kevo_memory *mem)
{
    kevo_attempt a = {
        .run_id = F.run_id,
        .task = "fault_relu",
        .backend = "c",
        .generator = "replay",
        .stage = KEVO_STAGE_REFINE,
        .iteration = 4,
        .parent_id = F.parent_id,
        .verdict = KEVO_VERDICT_CORRECT,
        .gates_json = "[{\"name\":\"compile\",\"ok\":true}]",
        .feedback = "Correct. 2.5x faster than the reference.",
        .source = "void fault_relu(const float *x, float *y, long N) { /* faster */ }\n",
        .recipes_json = "[\"unroll4\"]",
        .reference_us = 100,
        .candidate_us = 40,
        .speedup = 2.5,
        .tokens_prompt = 1200,
        .tokens_completion = 300,
    };
    int64_t id = 0;
    return kevo_memory_attempt_record(mem, &a, F.used, F.n_used, NULL, &id);
}

/* record: one refine attempt (refines edge, used edges, Q and Q2 updates,
 * an experience and a trace item) into a fresh copy of the store. */
static int path_record(path_run *r)
{
    kevo_memory *mem = NULL;
    int error = copy_file(F.template_db, F.work_db);
    if (error == 0)
        error = kevo_memory_open(&mem, F.work_db);
    if (error < 0) {
        child_problem(P_RERUN, "setup: %s", kevo_error_last());
        return error;
    }
    store_state before, after;
    store_state_get(&before, mem);
    arm_now(r);
    int rc = record_refine(mem);
    disarm_now(r);
    check_return("kevo_memory_attempt_record", rc);
    store_state_get(&after, mem);
    kevo_memory_stats whole;
    stats_add(&whole, &before.st, &F.record_delta);
    if (r->n <= 0) {
        stats_sub(&F.record_delta, &after.st, &before.st);
    } else if (rc < 0 && !(same_counts(&after.st, &before.st) && same_values(&after, &before))) {
        child_problem(P_HALF_WRITTEN,
                      "failed (%s) but the store changed: attempts %lld->%lld, items "
                      "%lld->%lld, used edges %lld->%lld, distilled edges %lld->%lld, Q2 n "
                      "%lld->%lld",
                      kevo_error_last(), (long long)before.st.attempts,
                      (long long)after.st.attempts, (long long)before.st.items,
                      (long long)after.st.items, (long long)before.st.edges_used,
                      (long long)after.st.edges_used, (long long)before.st.edges_distilled,
                      (long long)after.st.edges_distilled, (long long)before.q2n,
                      (long long)after.q2n);
    } else if (rc == 0 && !same_counts(&after.st, &whole)) {
        child_problem(P_HALF_WRITTEN,
                      "succeeded but recorded part of the attempt: attempts %lld (want %lld), "
                      "items %lld (want %lld), used edges %lld (want %lld), distilled edges "
                      "%lld (want %lld)",
                      (long long)after.st.attempts, (long long)whole.attempts,
                      (long long)after.st.items, (long long)whole.items,
                      (long long)after.st.edges_used, (long long)whole.edges_used,
                      (long long)after.st.edges_distilled, (long long)whole.edges_distilled);
    }
    kevo_memory_free(mem);
    return rc;
}

/* context: a draft and a refine context on the store, rendered. */
static int path_context(path_run *r)
{
    kevo_memory *mem = NULL;
    if (kevo_memory_open(&mem, F.template_db) < 0) {
        child_problem(P_RERUN, "setup: %s", kevo_error_last());
        return KEVO_ERROR;
    }
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    kevo_rng rng;
    kevo_rng_seed(&rng, 7);
    kevo_context_query q = {.task = "fault_relu",
                            .category = "activation",
                            .description = "Elementwise ReLU over N floats",
                            .reference = REFERENCE_C,
                            .backend = "c",
                            .stage = KEVO_STAGE_DRAFT};
    kevo_context *ctx = NULL;
    char *text = NULL;
    arm_now(r);
    int rc = kevo_context_build(&ctx, mem, &q, &cfg, &rng);
    check_return("kevo_context_build (draft)", rc);
    if (rc == 0) {
        rc = kevo_context_render(&text, ctx);
        check_return("kevo_context_render (draft)", rc);
    }
    kevo_context_free(ctx);
    free(text);
    ctx = NULL;
    text = NULL;
    if (rc == 0) {
        q.stage = KEVO_STAGE_REFINE;
        q.feedback = "Correct. 1.5x faster than the reference.";
        q.bottleneck = "memory bound: 8 bytes per flop";
        rc = kevo_context_build(&ctx, mem, &q, &cfg, &rng);
        check_return("kevo_context_build (refine)", rc);
        if (rc == 0) {
            rc = kevo_context_render(&text, ctx);
            check_return("kevo_context_render (refine)", rc);
        }
    }
    disarm_now(r);
    kevo_context_free(ctx);
    free(text);
    kevo_memory_free(mem);
    return rc;
}

/* report: metrics of the run and every rendering of them. */
static int path_report(path_run *r)
{
    kevo_memory *mem = NULL;
    if (kevo_memory_open(&mem, F.template_db) < 0) {
        child_problem(P_RERUN, "setup: %s", kevo_error_last());
        return KEVO_ERROR;
    }
    kevo_run_metrics *m = NULL;
    kevo_buf out = {0};
    arm_now(r);
    int rc = kevo_report_metrics(&m, mem, 0);
    check_return("kevo_report_metrics", rc);
    static const kevo_report_format fmts[] = {KEVO_REPORT_TEXT, KEVO_REPORT_JSON,
                                              KEVO_REPORT_CSV};
    for (size_t i = 0; rc == 0 && i < sizeof(fmts) / sizeof(fmts[0]); i++) {
        kevo_buf_clear(&out);
        rc = kevo_report_render(&out, (kevo_run_metrics *const *)&m, 1, fmts[i]);
        check_return("kevo_report_render", rc);
        kevo_buf_free(&out);
    }
    if (rc == 0) {
        rc = kevo_report_html(&out, mem, (kevo_run_metrics *const *)&m, 1);
        check_return("kevo_report_html", rc);
    }
    disarm_now(r);
    kevo_buf_free(&out);
    kevo_run_metrics_free(m);
    kevo_memory_free(mem);
    return rc;
}

/* ---- one N in a forked copy --------------------------------------------- */

typedef int (*path_fn)(path_run *r);

typedef struct outcome {
    problem problem;
    long hits;
    int rc;
    char site[1024]; /* symbolised stack of the failing call */
    char detail[512];
} outcome;

/* The crash signals' handlers from before cmocka installed its own (which
 * longjmp back into cmocka's runner: a crashed child would go on running
 * the rest of the tests). ASan's, in a sanitizer build. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS};
#define NCRASH (sizeof(crash_signals) / sizeof(crash_signals[0]))
static struct sigaction crash_handlers[NCRASH];

static void save_crash_handlers(void)
{
    for (size_t i = 0; i < NCRASH; i++)
        sigaction(crash_signals[i], NULL, &crash_handlers[i]);
}

/* The run of the path in the child: armed at n, then unarmed. */
static void child_main(path_fn fn, kevo_fault_kind kind, long n)
{
    for (size_t i = 0; i < NCRASH; i++)
        sigaction(crash_signals[i], &crash_handlers[i], NULL);
    path_run r = {.kind = kind, .n = n};
    int rc = fn(&r);
    g_shared->hits = kevo_fault_hits();
    g_shared->rc = rc;
    if (!g_shared->problem) {
        path_run again = {.kind = kind, .n = 0};
        int rc2 = fn(&again);
        if (rc2 < 0)
            child_problem(P_RERUN, "unarmed afterwards: %d %s", rc2, kevo_error_last());
    }
    if (!g_shared->problem && __lsan_do_recoverable_leak_check &&
        __lsan_do_recoverable_leak_check())
        child_problem(P_LEAK, "LeakSanitizer: see the report above");
    fflush(NULL);
    _exit(0);
}

static void symbolise(outcome *o, const shared *s)
{
    o->site[0] = '\0';
    if (s->nframes <= 0)
        return;
    kevo_buf cmd = {0};
    kevo_buf_printf(&cmd, "addr2line -f -i -s -e /proc/%d/exe", (int)getpid());
    for (int i = 0; i < s->nframes && i < 10; i++)
        kevo_buf_printf(&cmd, " 0x%lx", (unsigned long)(s->frames[i] - 1));
    kevo_buf_puts(&cmd, " 2>/dev/null");
    FILE *p = popen(kevo_buf_cstr(&cmd), "r");
    kevo_buf_free(&cmd);
    if (!p)
        return;
    /* pairs of lines: function, file:line; joined as "fn (file:line) < ..." */
    char fnname[256], where[256];
    size_t at = 0;
    while (fgets(fnname, sizeof(fnname), p) && fgets(where, sizeof(where), p)) {
        fnname[strcspn(fnname, "\n")] = '\0';
        where[strcspn(where, "\n")] = '\0';
        char *sp = strchr(where, ' ');
        if (sp)
            *sp = '\0';
        int w = snprintf(o->site + at, sizeof(o->site) - at, "%s%s (%s)", at ? " < " : "",
                         fnname, where);
        if (w < 0 || (size_t)w >= sizeof(o->site) - at)
            break;
        at += (size_t)w;
    }
    pclose(p);
}

static void run_one(outcome *o, path_fn fn, kevo_fault_kind kind, long n, double limit_s)
{
    memset(g_shared, 0, sizeof(*g_shared));
    memset(o, 0, sizeof(*o));
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL);
        child_main(fn, kind, n);
    }
    int ws = 0;
    double deadline = kevo_now_s() + limit_s;
    bool hung = false;
    for (;;) {
        pid_t w = waitpid(pid, &ws, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            ws = 0;
            break;
        }
        if (kevo_now_s() > deadline && !hung) {
            hung = true;
            kill(pid, SIGKILL);
        }
        usleep(2000);
    }
    o->hits = g_shared->hits;
    o->rc = g_shared->rc;
    memcpy(o->detail, g_shared->detail, sizeof(o->detail));
    o->detail[sizeof(o->detail) - 1] = '\0';
    o->problem = (problem)g_shared->problem;
    if (hung) {
        o->problem = P_HANG;
        snprintf(o->detail, sizeof(o->detail), "still running after %.0f s", limit_s);
    } else if (WIFSIGNALED(ws)) {
        o->problem = P_CRASH;
        snprintf(o->detail, sizeof(o->detail), "killed by signal %d (%s)", WTERMSIG(ws),
                 strsignal(WTERMSIG(ws)));
    } else if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
        o->problem = P_SANITIZER;
        snprintf(o->detail, sizeof(o->detail), "exited with status %d (sanitizer report above)",
                 WEXITSTATUS(ws));
    }
    if (o->problem != P_OK || g_verbose)
        symbolise(o, g_shared);
    if (o->problem == P_CRASH || o->problem == P_HANG || o->problem == P_SANITIZER)
        o->hits = o->hits ? o->hits : 1; /* it fired (or we cannot tell): go on */
}

static const known_case *known_for(const char *path, const outcome *o)
{
    for (const known_case *k = KNOWN; k->path; k++)
        if ((!strcmp(k->path, "*") || !strcmp(k->path, path)) &&
            (k->problems & PB(o->problem)) && stack_matches(o->site, k->site))
            return k;
    return NULL;
}

typedef struct sweep_stats {
    long runs, fired, errors, known, failed;
    double seconds;
} sweep_stats;

/* Which N to try: every one, or `budget` spread over 1..count. */
static long next_n(long n, long count, long budget, long offset)
{
    if (g_all || budget <= 0 || count <= budget)
        return n + 1;
    long step = (count + budget - 1) / budget;
    if (n == 0)
        return 1 + offset % step;
    return n + step;
}

static void sweep(const char *name, path_fn fn, kevo_fault_kind kind, long budget, double limit_s)
{
    double t0 = kevo_now_s();
    /* warm up in this process (the harness objects, the seccomp program,
     * what the path builds once per process) and count the calls */
    path_run warm = {.kind = kind, .n = -1};
    memset(g_shared, 0, sizeof(*g_shared));
    int rc = fn(&warm);
    long count = kevo_fault_calls(kind);
    if (rc < 0 || g_shared->problem)
        fail_msg("%s: the unarmed run fails: %d %s %s", name, rc, kevo_error_last(),
                 g_shared->detail);
    long offset = 0;
    if (getenv("KEVO_FAULT_SEED"))
        offset = strtol(getenv("KEVO_FAULT_SEED"), NULL, 10);
    sweep_stats st = {0};
    bool any_failed = false;
    for (long n = next_n(0, count, budget, offset);; n = next_n(n, count, budget, offset)) {
        outcome o;
        run_one(&o, fn, kind, n, limit_s);
        st.runs++;
        if (o.hits == 0 && o.problem == P_OK)
            break; /* the path made fewer than n calls: done */
        if (st.runs > 4 * (count + 10) + 1000)
            break;
        st.fired++;
        if (o.rc < 0)
            st.errors++;
        if (g_verbose)
            printf("  %s %s N=%ld: rc %d, %s%s%s | %s\n", name,
                   kind == KEVO_FAULT_ALLOC ? "alloc" : "spawn", n, o.rc,
                   problem_names[o.problem], o.detail[0] ? ": " : "", o.detail, o.site);
        if (o.problem == P_OK)
            continue;
        const known_case *k = known_for(name, &o);
        if (k && !g_strict) {
            st.known++;
            printf("KNOWN: %s %s N=%ld: %s (%s): %s\n       at %s\n", name,
                   kind == KEVO_FAULT_ALLOC ? "allocation" : "spawn", n,
                   problem_names[o.problem], o.detail, k->note, o.site);
            continue;
        }
        st.failed++;
        any_failed = true;
        printf("FAIL: %s %s N=%ld: %s: %s\n      failing call at %s\n", name,
               kind == KEVO_FAULT_ALLOC ? "allocation" : "spawn", n, problem_names[o.problem],
               o.detail, o.site[0] ? o.site : "(no site)");
        if (n > count + 1000)
            break;
    }
    if (!any_failed && st.runs > 4 * (count + 10) + 1000)
        fail_msg("%s: the fault kept firing far past the %ld unarmed calls", name, count);
    st.seconds = kevo_now_s() - t0;
    printf("%s/%s: %ld calls unarmed, %ld runs, %ld faults fired, %ld returned an error, "
           "%ld known, %ld failed, %.1f s\n",
           name, kind == KEVO_FAULT_ALLOC ? "alloc" : "spawn", count, st.runs, st.fired,
           st.errors, st.known, st.failed, st.seconds);
    fflush(stdout);
    if (any_failed)
        fail_msg("%s: %ld failing case(s), listed above", name, st.failed);
}

/* How many values of N a sampled sweep tries: `runs`, or `asan_runs` in a
 * sanitizer build (a leak check per run makes the store paths ~5x slower),
 * times KEVO_FAULT_SCALE (default 1). 0: every N. KEVO_FAULT_ALL=1: every
 * N everywhere. */
static long budget(long runs, long asan_runs)
{
    long b = __lsan_do_recoverable_leak_check ? asan_runs : runs;
    if (b == 0)
        return 0;
    const char *e = getenv("KEVO_FAULT_SCALE");
    double scale = e ? strtod(e, NULL) : 1.0;
    b = (long)(b * (scale > 0 ? scale : 1.0));
    return b > 0 ? b : 1;
}

static void test_fault__record_every_allocation(void **state)
{
    (void)state;
    sweep("record", path_record, KEVO_FAULT_ALLOC, 0, 30);
}

static void test_fault__context_every_allocation(void **state)
{
    (void)state;
    sweep("context", path_context, KEVO_FAULT_ALLOC, budget(600, 120), 30);
}

static void test_fault__report_every_allocation(void **state)
{
    (void)state;
    sweep("report", path_report, KEVO_FAULT_ALLOC, budget(0, 120), 30);
}

static void test_fault__eval_allocations(void **state)
{
    (void)state;
    sweep("eval", path_eval, KEVO_FAULT_ALLOC, budget(20, 20), 60);
}

static void test_fault__eval_latency_allocations(void **state)
{
    (void)state;
    sweep("eval+latency", path_eval_latency, KEVO_FAULT_ALLOC, budget(5, 5), 60);
}

static void test_fault__eval_every_spawn(void **state)
{
    (void)state;
    sweep("eval", path_eval, KEVO_FAULT_SPAWN, 0, 60);
}

int main(void)
{
    save_crash_handlers();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault__record_every_allocation),
        cmocka_unit_test(test_fault__context_every_allocation),
        cmocka_unit_test(test_fault__report_every_allocation),
        cmocka_unit_test(test_fault__eval_every_spawn),
        cmocka_unit_test(test_fault__eval_allocations),
        cmocka_unit_test(test_fault__eval_latency_allocations),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
