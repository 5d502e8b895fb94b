/*
 * test_report_model.c - the report's loader and its renderers apart
 * (src/report/load.c, report/model.h): the model of a synthetic store
 * holds each task's attempts in decision order, its first compiled /
 * correct iteration and best kernel, the runs' `used` edges and the items'
 * learned Q per stage, highest first; and the page renders from the model
 * with the store already closed, twice to the same bytes but for the
 * generation time and nonce.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/report.h"
#include "kevo/util.h"
#include "report/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

static int64_t record(fixture *f, int64_t run, const char *task, kevo_stage stage, int iteration,
                      int64_t parent, kevo_verdict verdict, double speedup,
                      const kevo_used_item *used, size_t nused)
{
    bool ok = verdict == KEVO_VERDICT_CORRECT;
    kevo_attempt a = {
        .run_id = run,
        .task = task,
        .backend = "c",
        .generator = "replay",
        .stage = stage,
        .iteration = iteration,
        .parent_id = parent,
        .verdict = verdict,
        .feedback = ok ? "Correct." : "error: something failed",
        .source = "void k(void) {}\n",
        .reference_us = 100,
        .candidate_us = ok ? 100 / speedup : 0,
        .speedup = ok ? speedup : 0,
        .tokens_prompt = 40,
        .tokens_completion = 10,
    };
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, used, nused, &f->cfg, &id), 0);
    return id;
}

/* Strip what differs between two renderings of one model: the nonce and
 * the generation time. */
static void mask(char *html)
{
    static const char *const marks[] = {"nonce-", "nonce=\"", "generated "};
    for (size_t k = 0; k < sizeof(marks) / sizeof(marks[0]); k++)
        for (char *p = html; (p = strstr(p, marks[k]));) {
            p += strlen(marks[k]);
            while (*p && *p != '\'' && *p != '"' && *p != ' ')
                *p++ = 'X';
        }
}

static void test_report_model__load_then_render_without_store(void **state)
{
    fixture *f = *state;
    kevo_item unroll = {.kind = KEVO_ITEM_RECIPE, .title = "unroll", .body = "unroll loops"};
    kevo_item omp = {.kind = KEVO_ITEM_RECIPE, .title = "omp_parallel", .body = "threads"};
    int64_t i1 = 0, i2 = 0;
    assert_int_equal(kevo_memory_item_add(f->mem, &unroll, &i1), 0);
    assert_int_equal(kevo_memory_item_add(f->mem, &omp, &i2), 0);

    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{\"generator\":\"replay\"}", &run), 0);
    kevo_used_item u1[] = {{i1, KEVO_STAGE_REFINE, 1, 10, false}};
    kevo_used_item u2[] = {{i2, KEVO_STAGE_REFINE, 1, 10, false},
                           {i1, KEVO_STAGE_REFINE, 2, 10, false}};
    int64_t d = record(f, run, "relu", KEVO_STAGE_DRAFT, 0, 0, KEVO_VERDICT_CORRECT, 1.0, NULL, 0);
    int64_t b = record(f, run, "relu", KEVO_STAGE_REFINE, 1, d, KEVO_VERDICT_CORRECT, 2.5, u1, 1);
    record(f, run, "relu", KEVO_STAGE_REFINE, 2, b, KEVO_VERDICT_COMPILE_ERROR, 0, u2, 2);
    record(f, run, "conv", KEVO_STAGE_DRAFT, 0, 0, KEVO_VERDICT_COMPILE_ERROR, 0, NULL, 0);
    record(f, run, "conv", KEVO_STAGE_DRAFT, 1, 0, KEVO_VERDICT_INCORRECT, 0, NULL, 0);
    assert_int_equal(kevo_memory_run_finish(f->mem, run, "finished"), 0);

    kevo_run_metrics *m = NULL;
    assert_int_equal(kevo_report_metrics(&m, f->mem, 0), 0); /* 0 = the latest */
    assert_int_equal(m->run_id, run);
    assert_int_equal(m->ntasks, 2);
    kevo_report__model *model = NULL;
    assert_int_equal(kevo_report__model_load(&model, f->mem, &m, 1), 0);
    /* the store is gone: from here on only the model is read */
    kevo_memory_free(f->mem);
    f->mem = NULL;

    assert_int_equal(model->nruns, 1);
    assert_string_equal(model->store_path, f->path);
    const kevo_report__run *v = &model->runs[0];
    assert_int_equal(v->list->n, 5);
    assert_int_equal(v->iters, 3);
    long relu = kevo_report__task_find(v, "relu"), conv = kevo_report__task_find(v, "conv");
    assert_true(relu >= 0 && conv >= 0 && relu != conv);
    assert_int_equal(kevo_report__task_find(v, "gelu"), -1);
    const kevo_report__task *t = &v->tasks[relu];
    assert_int_equal(t->natt, 3);
    assert_int_equal(t->first_correct, 1);
    assert_int_equal(t->first_compiled, 1);
    assert_int_equal(v->list->attempts[t->best].id, b);
    t = &v->tasks[conv];
    assert_int_equal(t->natt, 2);
    assert_int_equal(t->first_correct, 0);
    assert_int_equal(t->best, SIZE_MAX);
    assert_int_equal(t->first_compiled, 2); /* an incorrect kernel compiled */
    /* used edges: i1 twice and i2 once at the refine stage, none at draft */
    assert_int_equal(kevo_report__use_count(model, i1, KEVO_STAGE_REFINE, 0), 2);
    assert_int_equal(kevo_report__use_count(model, i2, KEVO_STAGE_REFINE, 0), 1);
    assert_int_equal(kevo_report__use_count(model, i1, KEVO_STAGE_DRAFT, 0), 0);
    /* learned Q, per stage, highest first */
    assert_int_equal(model->q[0].stage, KEVO_STAGE_DRAFT);
    assert_int_equal(model->q[1].stage, KEVO_STAGE_REFINE);
    assert_true(model->q[1].n >= 1);
    for (size_t i = 1; i < model->q[1].n; i++)
        assert_true(model->q[1].e[i - 1].q >= model->q[1].e[i].q);

    kevo_buf a = {0}, c = {0};
    assert_int_equal(kevo_report__html_render(&a, model), 0);
    assert_int_equal(kevo_report__html_render(&c, model), 0);
    char *pa = kevo_buf_detach(&a), *pc = kevo_buf_detach(&c);
    assert_non_null(strstr(pa, "omp_parallel"));
    assert_non_null(strstr(pa, "used in run 1"));
    mask(pa);
    mask(pc);
    assert_string_equal(pa, pc);
    free(pa);
    free(pc);
    kevo_report__model_free(model);
    kevo_run_metrics_free(m);
}

static void test_report_model__no_runs_and_no_such_run(void **state)
{
    fixture *f = *state;
    kevo_run *run = NULL;
    kevo_attempt_list *list = NULL;
    int64_t id = -1;
    assert_int_equal(kevo_report__run_load(&run, &list, &id, f->mem, 0), KEVO_ENOTFOUND);
    assert_null(run);
    assert_null(list);
    assert_non_null(strstr(kevo_error_last(), "no runs recorded yet"));
    int64_t r = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &r), 0);
    assert_true(kevo_report__run_load(&run, &list, &id, f->mem, r + 7) < 0);
    assert_null(run);
    assert_null(list);
    assert_int_equal(kevo_report__run_load(&run, &list, &id, f->mem, 0), 0);
    assert_int_equal(id, r);
    assert_int_equal(list->n, 0);
    kevo_attempt_list_free(list);
    kevo_run_free(run);
    kevo_report__model_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_model__load_then_render_without_store, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_model__no_runs_and_no_such_run, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
