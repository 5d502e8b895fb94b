/*
 * test_memory_work.c - what kevo_memory adds above the store for shared
 * runs (issue 17): the work queue's wrappers (checks, owned copies, the
 * run finished with its last row), idempotent attempts by caller-given
 * uid, machines through export/import (and exports made before machines
 * existed), and the refine reward across machines. Store-level semantics
 * (claim order, leases, fencing, concurrency) are the store contract's
 * (test_store_contract.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    char *dir;
    kevo_memory *mem;
} fixture;

static kevo_memory *open_in(fixture *f, const char *name)
{
    char *p = kevo_path_join(f->dir, name);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, p), 0);
    free(p);
    return mem;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-work-") < 0)
        return -1;
    char *p = kevo_path_join(f->dir, "kevo.db");
    int error = kevo_memory_open(&f->mem, p);
    free(p);
    if (error < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kevo_memory_free(f->mem);
    kevo_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

#define BUNDLE "{\"task.json\":\"{}\",\"reference.c\":\"void relu(void) {}\"}"

static void add(kevo_memory *mem, int64_t run, const char *task)
{
    kevo_work w = {.run_id = run, .task = task, .backend = "c", .bundle = BUNDLE};
    assert_int_equal(kevo_memory_work_add(mem, &w), 0);
}

/* ---- the queue ---------------------------------------------------------- */

static void test_work__add_refuses_bad_input(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    add(f->mem, run, "relu");
    kevo_work w = {.run_id = run, .task = "relu", .backend = "c", .bundle = BUNDLE};
    assert_int_equal(kevo_memory_work_add(f->mem, &w), KEVO_EEXISTS);
    assert_non_null(strstr(kevo_error_last(), "relu"));
    w.task = "gelu";
    w.bundle = "[\"not\", \"an object\"]";
    assert_int_equal(kevo_memory_work_add(f->mem, &w), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "bundle"));
    w.bundle = "{\"task.json\": 3}";
    assert_int_equal(kevo_memory_work_add(f->mem, &w), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "task.json"));
    w.bundle = BUNDLE;
    w.backend = NULL;
    assert_int_equal(kevo_memory_work_add(f->mem, &w), KEVO_EINVAL);
    w.backend = "c";
    w.run_id = run + 100;
    assert_int_equal(kevo_memory_work_add(f->mem, &w), KEVO_ENOTFOUND);
    kevo_work_list *l = NULL;
    assert_int_equal(kevo_memory_work_list(&l, f->mem, 0, 1), 0);
    assert_int_equal(l->n, 1);
    assert_string_equal(l->work[0].task, "relu");
    assert_string_equal(l->work[0].bundle, BUNDLE);
    assert_int_equal(l->work[0].state, KEVO_WORK_QUEUED);
    assert_null(l->work[0].worker);
    kevo_work_list_free(l);
}

static void test_work__claim_gives_an_owned_row(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    add(f->mem, run, "relu");
    const char *backends[] = {"opencl", "c"};
    kevo_work *w = NULL;
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 0, "w1", 0, 1000), KEVO_EINVAL);
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 2, "", 0, 1000), KEVO_EINVAL);
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 2, "w1", 0, 0), KEVO_EINVAL);
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 2, "w1", 5000, 1000), 0);
    assert_non_null(w);
    assert_int_equal(w->run_id, run);
    assert_string_equal(w->task, "relu");
    assert_string_equal(w->backend, "c");
    assert_string_equal(w->bundle, BUNDLE);
    assert_string_equal(w->worker, "w1");
    assert_int_equal(w->state, KEVO_WORK_RUNNING);
    assert_int_equal(w->lease_until, 6000);
    assert_int_equal(w->claims, 1);
    kevo_work_free(w);
    w = NULL;
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 2, "w2", 5500, 1000),
                     KEVO_ENOTFOUND);
    assert_null(w);
    /* now_ms 0 is the clock: far past the 6000 ms lease */
    assert_int_equal(kevo_memory_work_claim(&w, f->mem, backends, 2, "w2", 0, 60000), 0);
    assert_string_equal(w->worker, "w2");
    assert_int_equal(w->claims, 2);
    assert_true(w->lease_until > 1700000000000LL);
    /* the lost lease: the first worker can neither renew nor finish */
    assert_int_equal(kevo_memory_work_renew(f->mem, run, "relu", "w1", 0, 1000), KEVO_ENOTFOUND);
    assert_int_equal(kevo_memory_work_finish(f->mem, run, "relu", "w1", KEVO_WORK_DONE, NULL, NULL),
                     KEVO_ENOTFOUND);
    assert_int_equal(kevo_memory_work_renew(f->mem, run, "relu", "w2", 0, 1000), 0);
    assert_int_equal(kevo_memory_work_finish(f->mem, run, "relu", "w2", KEVO_WORK_QUEUED, NULL,
                                             NULL),
                     KEVO_EINVAL);
    kevo_work_free(w);
}

static void test_work__last_finish_finishes_the_run(void **state)
{
    fixture *f = *state;
    int64_t run = 0, other = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &other), 0);
    add(f->mem, run, "relu");
    add(f->mem, run, "gelu");
    add(f->mem, other, "relu");
    const char *c[] = {"c"};
    kevo_work *a = NULL, *b = NULL;
    assert_int_equal(kevo_memory_work_claim(&a, f->mem, c, 1, "w1", 0, 60000), 0);
    assert_int_equal(kevo_memory_work_claim(&b, f->mem, c, 1, "w2", 0, 60000), 0);
    assert_int_equal(a->run_id, run);
    assert_int_equal(b->run_id, run);
    int finished = -1;
    assert_int_equal(kevo_memory_work_finish(f->mem, run, a->task, "w1", KEVO_WORK_FAILED,
                                             "the sandbox could not start", &finished),
                     0);
    assert_int_equal(finished, 0);
    kevo_run *r = NULL;
    assert_int_equal(kevo_memory_run_get(&r, f->mem, run), 0);
    assert_string_equal(r->status, "running");
    assert_int_equal(r->finished, 0);
    kevo_run_free(r);
    assert_int_equal(kevo_memory_work_finish(f->mem, run, b->task, "w2", KEVO_WORK_DONE, NULL,
                                             &finished),
                     0);
    assert_int_equal(finished, 1);
    assert_int_equal(kevo_memory_run_get(&r, f->mem, run), 0);
    assert_string_equal(r->status, "finished");
    assert_true(r->finished > 0);
    kevo_run_free(r);
    /* the other run goes on */
    assert_int_equal(kevo_memory_run_get(&r, f->mem, other), 0);
    assert_string_equal(r->status, "running");
    kevo_run_free(r);
    kevo_work_list *l = NULL;
    assert_int_equal(kevo_memory_work_list(&l, f->mem, run, 0), 0);
    assert_int_equal(l->n, 2);
    assert_int_equal(l->work[0].state, KEVO_WORK_FAILED);
    assert_string_equal(l->work[0].error, "the sandbox could not start");
    assert_null(l->work[0].bundle);
    assert_int_equal(l->work[1].state, KEVO_WORK_DONE);
    kevo_work_list_free(l);
    kevo_work_free(a);
    kevo_work_free(b);
}

static void test_work__stopped_run_keeps_its_status(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    add(f->mem, run, "relu");
    const char *c[] = {"c"};
    kevo_work *a = NULL;
    assert_int_equal(kevo_memory_work_claim(&a, f->mem, c, 1, "w1", 0, 60000), 0);
    assert_int_equal(kevo_memory_run_finish(f->mem, run, "stopped"), 0);
    int finished = -1;
    assert_int_equal(kevo_memory_work_finish(f->mem, run, "relu", "w1", KEVO_WORK_DONE, NULL,
                                             &finished),
                     0);
    assert_int_equal(finished, 0);
    kevo_run *r = NULL;
    assert_int_equal(kevo_memory_run_get(&r, f->mem, run), 0);
    assert_string_equal(r->status, "stopped");
    kevo_run_free(r);
    kevo_work_free(a);
}

static void test_work__state_names(void **state)
{
    (void)state;
    kevo_work_state s;
    assert_string_equal(kevo_work_state_name(KEVO_WORK_RUNNING), "running");
    assert_string_equal(kevo_work_state_name((kevo_work_state)9), "?");
    assert_int_equal(kevo_work_state_parse(&s, "failed"), 0);
    assert_int_equal(s, KEVO_WORK_FAILED);
    assert_int_equal(kevo_work_state_parse(&s, "lost"), KEVO_EINVAL);
}

static void test_work__not_exported(void **state)
{
    fixture *f = *state;
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    add(f->mem, run, "relu_in_the_queue");
    char *p = kevo_path_join(f->dir, "out.jsonl");
    assert_int_equal(kevo_memory_export(f->mem, p), 0);
    char *text = NULL;
    assert_int_equal(kevo_file_read(&text, NULL, p), 0);
    assert_null(strstr(text, "relu_in_the_queue"));
    assert_non_null(strstr(text, "\"type\":\"run\""));
    free(text);
    free(p);
}

/* ---- idempotent attempts ------------------------------------------------ */

static kevo_attempt draft(int64_t run, const char *uid)
{
    kevo_attempt a = {.run_id = run,
                      .task = "relu",
                      .backend = "c",
                      .generator = "builtin",
                      .stage = KEVO_STAGE_DRAFT,
                      .verdict = KEVO_VERDICT_CORRECT,
                      .source = "void relu(void) {}",
                      .candidate_us = 50,
                      .reference_us = 100,
                      .speedup = 2,
                      .uid = uid};
    return a;
}

static void test_uid__same_uid_recorded_once(void **state)
{
    fixture *f = *state;
    int64_t run = 0, item = 0, id1 = 0, id2 = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    kevo_item it = {.kind = KEVO_ITEM_BEST_PRACTICE, .title = "vectorise", .body = "use SIMD"};
    assert_int_equal(kevo_memory_item_add(f->mem, &it, &item), 0);
    kevo_used_item used = {.item_id = item, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 5};
    kevo_attempt a = draft(run, "run-x/relu/c/0");
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, &used, 1, NULL, &id1), 0);
    kevo_memory_stats s1;
    assert_int_equal(kevo_memory_stats_get(&s1, f->mem), 0);
    /* a retry of the same attempt (the same uid): nothing more */
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, &used, 1, NULL, &id2),
                     KEVO_MEMORY_RECORDED_BEFORE);
    assert_int_equal(id2, id1);
    kevo_memory_stats s2;
    assert_int_equal(kevo_memory_stats_get(&s2, f->mem), 0);
    assert_int_equal(s2.attempts, s1.attempts);
    assert_int_equal(s2.attempts, 1);
    assert_int_equal(s2.items, s1.items);
    assert_int_equal(s2.edges_used, s1.edges_used);
    assert_int_equal(s2.edges_distilled, s1.edges_distilled);
    double q = 0;
    int64_t n = 0;
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, item, KEVO_STAGE_DRAFT), 0);
    assert_int_equal(n, 1);
    assert_true(fabs(q - 0.3) < 1e-12); /* one step of alpha 0.3 towards +1 */
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id1), 0);
    assert_string_equal(got->uid, "run-x/relu/c/0");
    kevo_attempt_free(got);
    /* another uid is another attempt; no uid makes a fresh one */
    kevo_attempt b = draft(run, "run-x/relu/c/1");
    b.iteration = 1;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &b, NULL, 0, NULL, &id2), 0);
    assert_true(id2 != id1);
    kevo_attempt c = draft(run, "");
    c.iteration = 2;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &c, NULL, 0, NULL, &id2), 0);
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id2), 0);
    assert_int_equal(strlen(got->uid), 32);
    kevo_attempt_free(got);
}

/* ---- rewards across machines -------------------------------------------- */

static int64_t record(kevo_memory *mem, kevo_attempt *a)
{
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, a, NULL, 0, NULL, &id), 0);
    return id;
}

static double reward_of(kevo_memory *mem, int64_t id)
{
    kevo_attempt *a = NULL;
    assert_int_equal(kevo_memory_attempt_get(&a, mem, id), 0);
    double r = a->reward_raw;
    kevo_attempt_free(a);
    return r;
}

static void test_reward__start_point_on_another_machine(void **state)
{
    fixture *f = *state;
    /* the start point ran on a fast machine: 100 us, 2x its reference */
    kevo_attempt p = draft(0, NULL);
    p.candidate_us = 100;
    p.reference_us = 200;
    p.speedup = 2;
    p.machine = "fast-machine";
    int64_t parent = record(f->mem, &p);
    kevo_attempt r = draft(0, NULL);
    r.stage = KEVO_STAGE_REFINE;
    r.parent_id = parent;
    r.candidate_us = 150; /* on a machine where the reference takes 600 us */
    r.reference_us = 600;
    r.speedup = 4;
    r.machine = "slow-machine";
    /* the parent re-expressed here: 600 / 2 = 300 us; 150 us is 2x better
     * (not 150/100 = 1.5x worse, which comparing raw latencies says) */
    double got = reward_of(f->mem, record(f->mem, &r));
    assert_true(fabs(got - tanh(log(2.0))) < 1e-9);
    /* and its experience item says so, not "1.50x slower" */
    kevo_item_list *items = NULL;
    kevo_item_filter xf = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE), .task = "relu"};
    assert_int_equal(kevo_memory_item_list(&items, f->mem, &xf), 0);
    int said = 0;
    for (size_t i = 0; i < items->n; i++) {
        assert_null(strstr(items->items[i].body, "slower than the start point"));
        said += strstr(items->items[i].body, "2.00x faster than the start point (measured on "
                                             "another machine") != NULL;
    }
    assert_int_equal(said, 1);
    kevo_item_list_free(items);
    /* the same machine: raw latencies compare */
    r.machine = "fast-machine";
    r.candidate_us = 50;
    got = reward_of(f->mem, record(f->mem, &r));
    assert_true(fabs(got - tanh(log(2.0))) < 1e-9);
    /* one machine unknown (an old row): raw latencies, as before machines */
    r.machine = NULL;
    r.candidate_us = 200;
    got = reward_of(f->mem, record(f->mem, &r));
    assert_true(fabs(got - tanh(log(0.5))) < 1e-9);
    /* another machine without its reference timing: no evidence, 0 */
    r.machine = "slow-machine";
    r.reference_us = 0;
    r.candidate_us = 10;
    got = reward_of(f->mem, record(f->mem, &r));
    assert_true(fabs(got) < 1e-12);
    /* an incorrect refine is -1 wherever it ran */
    r.verdict = KEVO_VERDICT_INCORRECT;
    r.speedup = 0;
    got = reward_of(f->mem, record(f->mem, &r));
    assert_true(fabs(got + 1.0) < 1e-12);
}

/* ---- machines through export / import ------------------------------------ */

static void test_machines__export_import_round_trip(void **state)
{
    fixture *f = *state;
    kevo_memory_machine m = {.id = "abc123", .hostname = "node7", .cpu = "AMD EPYC 9654",
                             .gpu = "NVIDIA H200", .cores = 16, .first_seen = 1700000000000LL,
                             .last_seen = 1700000009000LL};
    assert_int_equal(kevo_memory_machine_upsert(f->mem, &m), 0);
    kevo_attempt a = draft(0, NULL);
    a.machine = "abc123";
    int64_t id = record(f->mem, &a);
    char *p = kevo_path_join(f->dir, "mem.jsonl");
    assert_int_equal(kevo_memory_export(f->mem, p), 0);
    kevo_memory *b = open_in(f, "b.db");
    kevo_import_stats st;
    assert_int_equal(kevo_memory_import(b, p, &st), 0);
    assert_int_equal(st.machines, 1);
    kevo_memory_machine_array *l = NULL;
    assert_int_equal(kevo_memory_machine_list(&l, b), 0);
    assert_int_equal(l->n, 1);
    assert_string_equal(l->machines[0].id, "abc123");
    assert_string_equal(l->machines[0].hostname, "node7");
    assert_string_equal(l->machines[0].cpu, "AMD EPYC 9654");
    assert_string_equal(l->machines[0].gpu, "NVIDIA H200");
    assert_int_equal(l->machines[0].cores, 16);
    assert_int_equal(l->machines[0].first_seen, 1700000000000LL);
    assert_int_equal(l->machines[0].last_seen, 1700000009000LL);
    kevo_memory_machine_array_free(l);
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, b, id), 0);
    assert_string_equal(got->machine, "abc123");
    kevo_attempt_free(got);
    /* exporting the import gives the same file */
    char *p2 = kevo_path_join(f->dir, "mem2.jsonl");
    assert_int_equal(kevo_memory_export(b, p2), 0);
    char *t1 = NULL, *t2 = NULL;
    assert_int_equal(kevo_file_read(&t1, NULL, p), 0);
    assert_int_equal(kevo_file_read(&t2, NULL, p2), 0);
    assert_string_equal(t1, t2);
    /* importing again merges, keeping first_seen */
    assert_int_equal(kevo_memory_import(b, p, &st), 0);
    assert_int_equal(kevo_memory_machine_list(&l, b), 0);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->machines[0].first_seen, 1700000000000LL);
    kevo_memory_machine_array_free(l);
    free(t1);
    free(t2);
    free(p2);
    free(p);
    kevo_memory_free(b);
}

static void test_machines__old_export_imports(void **state)
{
    fixture *f = *state;
    /* a version-1 export: no machine records, attempts without "machine" */
    const char *old =
        "{\"type\":\"header\",\"format\":\"kevo-memory\",\"version\":1}\n"
        "{\"type\":\"task\",\"name\":\"relu\",\"level\":1}\n"
        "{\"type\":\"attempt\",\"id\":7,\"uid\":\"old-uid-7\",\"run\":0,\"task\":\"relu\","
        "\"backend\":\"c\",\"generator\":\"builtin\",\"stage\":\"draft\",\"iteration\":0,"
        "\"parent\":0,\"verdict\":\"correct\",\"candidate_us\":5,\"reference_us\":10,"
        "\"speedup\":2,\"reward_raw\":1,\"reward\":1,\"created\":1700000000000}\n";
    char *p = kevo_path_join(f->dir, "old.jsonl");
    assert_int_equal(kevo_file_write(p, old, strlen(old)), 0);
    kevo_import_stats st;
    assert_int_equal(kevo_memory_import(f->mem, p, &st), 0);
    assert_int_equal(st.attempts, 1);
    assert_int_equal(st.machines, 0);
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, 7), 0);
    assert_null(got->machine);
    assert_string_equal(got->uid, "old-uid-7");
    kevo_attempt_free(got);
    /* a machine record without an id names the line */
    const char *bad = "{\"type\":\"header\",\"format\":\"kevo-memory\",\"version\":2}\n"
                      "{\"type\":\"machine\",\"hostname\":\"x\"}\n";
    assert_int_equal(kevo_file_write(p, bad, strlen(bad)), 0);
    assert_int_equal(kevo_memory_import(f->mem, p, &st), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), ":2:"));
    assert_non_null(strstr(kevo_error_last(), "'id'"));
    free(p);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_work__add_refuses_bad_input),
        T(test_work__claim_gives_an_owned_row),
        T(test_work__last_finish_finishes_the_run),
        T(test_work__stopped_run_keeps_its_status),
        T(test_work__state_names),
        T(test_work__not_exported),
        T(test_uid__same_uid_recorded_once),
        T(test_reward__start_point_on_another_machine),
        T(test_machines__export_import_round_trip),
        T(test_machines__old_export_imports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
