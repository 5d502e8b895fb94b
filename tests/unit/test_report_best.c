/*
 * test_report_best.c - kevo_report_best_kernels() (src/report/best.c):
 * per task of a run its best correct attempt, the first of the highest
 * speedup, the same kernel kevo_report_metrics() counts; tasks with no
 * correct attempt listed with none; the task's folder from the tasks
 * table; the latest run by default; unknown runs and empty stores
 * KEVO_ENOTFOUND. Stores built by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/report.h"
#include "kevo/util.h"

#include <string.h>

#include "store_fixture.h"

static int64_t attempt_add(fixture *f, int64_t run, const char *task, const char *verdict,
                           double speedup, const char *source)
{
    kevo_verdict v;
    assert_int_equal(kevo_verdict_parse(&v, verdict), 0);
    bool ok = v == KEVO_VERDICT_CORRECT;
    kevo_attempt a = {
        .run_id = run,
        .task = task,
        .backend = "c",
        .generator = "replay",
        .stage = KEVO_STAGE_DRAFT,
        .verdict = v,
        .feedback = "x",
        .source = source,
        .reference_us = 100,
        .candidate_us = ok && speedup > 0 ? 100 / speedup : 0,
        .speedup = ok ? speedup : 0,
    };
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &f->cfg, &id), 0);
    return id;
}

static const kevo_best_kernel *entry(const kevo_best_kernels *b, const char *task)
{
    for (size_t k = 0; k < b->ntasks; k++)
        if (!strcmp(b->per_task[k].task, task))
            return &b->per_task[k];
    fail_msg("task %s not listed", task);
    return NULL;
}

static void test_report_best__first_of_highest_speedup(void **state)
{
    fixture *f = *state;
    int64_t run = 0, run2 = 0;
    kevo_memory_task mt = {.name = "a", .level = 1, .suite_path = "/tasks/a"};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &mt, NULL), 0);
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    attempt_add(f, run, "a", "incorrect", 0, "a0");
    attempt_add(f, run, "a", "correct", 1.5, "a1");
    int64_t want_a = attempt_add(f, run, "a", "correct", 2.0, "a2");
    attempt_add(f, run, "a", "correct", 2.0, "a3"); /* equal: the first stays */
    attempt_add(f, run, "b", "compile_error", 0, "b0");
    int64_t want_c = attempt_add(f, run, "c", "correct", 0, "c0"); /* not timed */
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run2), 0);
    int64_t want_a2 = attempt_add(f, run2, "a", "correct", 5.0, "a4");

    kevo_best_kernels *b = NULL;
    kevo_run_metrics *m = NULL;
    assert_int_equal(kevo_report_best_kernels(&b, f->mem, run), 0);
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    assert_int_equal(b->run_id, run);
    assert_int_equal(b->ntasks, 3);
    assert_int_equal(m->ntasks, 3);
    for (size_t k = 0; k < 3; k++) /* the metrics' order */
        assert_string_equal(b->per_task[k].task, m->per_task[k].task);
    const kevo_best_kernel *a = entry(b, "a");
    assert_non_null(a->attempt);
    assert_int_equal(a->attempt->id, want_a);
    assert_string_equal(a->attempt->source, "a2");
    assert_true(a->attempt->speedup == m->per_task[0].best_speedup);
    assert_string_equal(a->suite_path, "/tasks/a");
    assert_null(entry(b, "b")->attempt);
    assert_null(entry(b, "b")->suite_path);
    assert_int_equal(entry(b, "c")->attempt->id, want_c);
    kevo_best_kernels_free(b);
    kevo_run_metrics_free(m);

    assert_int_equal(kevo_report_best_kernels(&b, f->mem, 0), 0); /* the latest */
    assert_int_equal(b->run_id, run2);
    assert_int_equal(b->ntasks, 1);
    assert_int_equal(b->per_task[0].attempt->id, want_a2);
    kevo_best_kernels_free(b);

    assert_int_equal(kevo_report_best_kernels(&b, f->mem, run2 + 10), KEVO_ENOTFOUND);
    assert_null(b);
    kevo_best_kernels_free(NULL);
}

static void test_report_best__empty_store(void **state)
{
    fixture *f = *state;
    kevo_best_kernels *b = NULL;
    assert_int_equal(kevo_report_best_kernels(&b, f->mem, 0), KEVO_ENOTFOUND);
    assert_null(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_best__first_of_highest_speedup, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_best__empty_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
