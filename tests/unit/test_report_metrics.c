/*
 * test_report_metrics.c - the papers' metrics of kevo report
 * (src/report/metrics.c, docs/report.md "Definitions"): CR and Acc per
 * kernel, round 1, by iteration, per level, pass@k over the draft-stage
 * samples, tokens_estimated, the one geometric mean of best speedups
 * (failed tasks at 1.0x) and the paired ratio of two runs, on stores built
 * by hand from a table. Every expected value is computed here from the
 * table by its own loops (pass@k by enumerating the subsets of samples),
 * never by the report's formulas.
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

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-12

#include "store_fixture.h"

/* ---- the table a store is built from ------------------------------------ */

#define MAX_ATT 8

/* One attempt: 'D'raft or 'R'efine, the verdict's name, the speedup (when
 * correct; 0 = correct but not timed), and whether its tokens are estimates. */
typedef struct row {
    char stage;
    const char *verdict;
    double speedup;
    int estimated;
} row;

/* One task: its level (0 = not in the tasks table) and its attempts at
 * iterations 0, 1, ... */
typedef struct task_rows {
    const char *name;
    int level;
    row att[MAX_ATT];
} task_rows;

static size_t natt(const task_rows *t)
{
    size_t n = 0;
    while (n < MAX_ATT && t->att[n].verdict)
        n++;
    return n;
}

/* Written out here, not kevo_verdict_compiled(): the candidate built and ran. */
static bool row_compiled(const row *r)
{
    static const char *const ran[] = {"correct", "incorrect", "timeout", "crash"};
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(r->verdict, ran[i]))
            return true;
    return false;
}

static bool row_correct(const row *r)
{
    return !strcmp(r->verdict, "correct");
}

/* Run 1. Levels 1, 2, 3 and one task the tasks table has no level for. */
static const task_rows RUN1[] = {
    {"a",
     1,
     {{'D', "compile_error", 0, 0},
      {'D', "correct", 2.0, 0},
      {'R', "correct", 3.0, 0},
      {'R', "incorrect", 0, 0}}},
    {"b",
     1,
     {{'D', "correct", 0.5, 0},
      {'R', "correct", 0.8, 0},
      {'R', "timeout", 0, 0},
      {'R', "crash", 0, 0}}},
    {"c",
     2,
     {{'D', "incorrect", 0, 1},
      {'D', "incorrect", 0, 0},
      {'D', "correct", 4.0, 0},
      {'R', "compile_error", 0, 0}}},
    {"d",
     2,
     {{'D', "compile_error", 0, 0},
      {'D', "rejected", 0, 0},
      {'D', "infra_error", 0, 0},
      {'D', "compile_error", 0, 0}}},
    {"e", 0, {{'D', "correct", 0, 0}}}, /* correct, never timed */
    {"f",
     3,
     {{'D', "incorrect", 0, 0},
      {'D', "correct", 1.2, 0},
      {'D', "incorrect", 0, 0},
      {'D', "incorrect", 0, 0},
      {'D', "correct", 1.1, 0},
      {'D', "compile_error", 0, 0},
      {'D', "incorrect", 0, 0}}},
};
#define NRUN1 (sizeof(RUN1) / sizeof(RUN1[0]))

/* Run 2, for --compare: a and c solved by both, b only by run 1, g only here. */
static const task_rows RUN2[] = {
    {"a", 1, {{'D', "correct", 1.5, 0}}},
    {"b", 1, {{'D', "incorrect", 0, 0}, {'D', "correct", 0, 0}}}, /* solved, not timed */
    {"c", 2, {{'D', "correct", 5.0, 0}, {'R', "correct", 2.5, 0}}},
    {"g", 1, {{'D', "correct", 2.0, 0}}},
};
#define NRUN2 (sizeof(RUN2) / sizeof(RUN2[0]))

static int64_t build_run(fixture *f, const task_rows *tasks, size_t n)
{
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{\"iterations\":8}", &run), 0);
    for (size_t k = 0; k < n; k++) {
        const task_rows *t = &tasks[k];
        if (t->level) {
            kevo_memory_task mt = {.name = t->name, .level = t->level, .category = "test"};
            assert_int_equal(kevo_memory_task_upsert(f->mem, &mt, NULL), 0);
        }
        int64_t start = 0;
        for (size_t i = 0; i < natt(t); i++) {
            const row *r = &t->att[i];
            kevo_verdict v;
            assert_int_equal(kevo_verdict_parse(&v, r->verdict), 0);
            bool ok = v == KEVO_VERDICT_CORRECT;
            kevo_attempt a = {
                .run_id = run,
                .task = t->name,
                .backend = "c",
                .generator = "replay",
                .stage = r->stage == 'D' ? KEVO_STAGE_DRAFT : KEVO_STAGE_REFINE,
                .iteration = (int)i,
                .parent_id = r->stage == 'R' ? start : 0,
                .verdict = v,
                .feedback = ok ? "Correct." : "failed",
                .source = "void k(void) {}\n",
                .reference_us = 100,
                .candidate_us = ok && r->speedup > 0 ? 100 / r->speedup : 0,
                .speedup = ok ? r->speedup : 0,
                .tokens_prompt = 40,
                .tokens_completion = 10,
                .tokens_estimated = r->estimated,
            };
            int64_t id = 0;
            assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &f->cfg, &id), 0);
            if (ok)
                start = id;
        }
    }
    return run;
}

/* ---- expected values, from the table ----------------------------------- */

/* The best correct speedup, or 1.0 (no correct kernel, or none timed). */
static double expect_best(const task_rows *t)
{
    double best = 0;
    for (size_t i = 0; i < natt(t); i++)
        if (row_correct(&t->att[i]) && t->att[i].speedup > best)
            best = t->att[i].speedup;
    return best > 0 ? best : 1.0;
}

static bool any_upto(const task_rows *t, size_t upto, bool (*pred)(const row *))
{
    for (size_t i = 0; i < natt(t) && i < upto; i++)
        if (pred(&t->att[i]))
            return true;
    return false;
}

/* pass@k of one task by enumeration: of all subsets of min(k, n) of its
 * draft samples, the share holding a correct one. */
static double expect_pass_task(const task_rows *t, int k)
{
    bool s[MAX_ATT];
    int n = 0;
    for (size_t i = 0; i < natt(t); i++)
        if (t->att[i].stage == 'D')
            s[n++] = row_correct(&t->att[i]);
    int m = k < n ? k : n;
    long total = 0, hit = 0;
    for (unsigned mask = 0; mask < (1u << n); mask++) {
        if (__builtin_popcount(mask) != m)
            continue;
        total++;
        bool any = false;
        for (int i = 0; i < n; i++)
            any |= (mask >> i & 1u) && s[i];
        hit += any;
    }
    return (double)hit / (double)total;
}

static int draft_samples(const task_rows *t)
{
    int n = 0;
    for (size_t i = 0; i < natt(t); i++)
        n += t->att[i].stage == 'D';
    return n;
}

/* The papers' rates over the tasks of `tasks` at `level` (-1 = all). */
typedef struct expect_rates {
    int tasks;
    double cr, acc, r1cr, r1acc, fast1, geomean;
    double pass[3];
    int sampled;
} expect_rates;

static expect_rates expect(const task_rows *tasks, size_t n, int level)
{
    static const int ks[3] = {1, 5, 10};
    expect_rates e = {0};
    double logsum = 0;
    int solved = 0;
    for (size_t k = 0; k < n; k++) {
        const task_rows *t = &tasks[k];
        if (level >= 0 && t->level != level)
            continue;
        e.tasks++;
        e.cr += any_upto(t, MAX_ATT, row_compiled);
        bool ok = any_upto(t, MAX_ATT, row_correct);
        e.acc += ok;
        e.r1cr += row_compiled(&t->att[0]);
        e.r1acc += row_correct(&t->att[0]);
        if (ok) {
            solved++;
            logsum += log(expect_best(t));
            e.fast1 += expect_best(t) > 1.0;
        }
        if (draft_samples(t) > 0) {
            e.sampled++;
            for (int j = 0; j < 3; j++)
                e.pass[j] += expect_pass_task(t, ks[j]);
        }
    }
    e.cr /= e.tasks;
    e.acc /= e.tasks;
    e.r1cr /= e.tasks;
    e.r1acc /= e.tasks;
    e.fast1 /= e.tasks;
    e.geomean = solved ? exp(logsum / solved) : 0;
    for (int j = 0; j < 3; j++)
        e.pass[j] = e.sampled ? e.pass[j] / e.sampled : 0;
    return e;
}

static void assert_near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= EPS * (1 + fabs(want))))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

static void assert_rates(const kevo_paper_rates *r, const expect_rates *e, int kmax)
{
    static const int ks[3] = {1, 5, 10};
    assert_int_equal(r->tasks, e->tasks);
    assert_near(r->cr_per_kernel, e->cr, "cr_per_kernel");
    assert_near(r->acc, e->acc, "acc");
    assert_near(r->round1_cr, e->r1cr, "round1_cr");
    assert_near(r->round1_acc, e->r1acc, "round1_acc");
    assert_near(r->fast_1, e->fast1, "fast_1");
    assert_near(r->geomean_speedup, e->geomean, "geomean_speedup");
    assert_int_equal(r->pass_at_k_tasks, e->sampled);
    size_t want_n = 0;
    for (int j = 0; j < 3; j++)
        want_n += ks[j] <= kmax;
    assert_int_equal(r->npass_at_k, want_n);
    for (size_t j = 0; j < r->npass_at_k; j++) {
        assert_int_equal(r->pass_at_k[j].k, ks[j]);
        assert_near(r->pass_at_k[j].value, e->pass[j], "pass@k");
    }
}

static kevo_run_metrics *metrics(fixture *f, int64_t run)
{
    kevo_run_metrics *m = NULL;
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    return m;
}

/* ---- tests -------------------------------------------------------------- */

static void test_report_metrics__pass_at_k_matches_enumeration(void **state)
{
    (void)state;
    static const int ks[3] = {1, 5, 10};
    for (int n = 1; n <= 12; n++)
        for (int c = 0; c <= n; c++)
            for (int j = 0; j < 3; j++) {
                int k = ks[j], m = k < n ? k : n;
                long total = 0, hit = 0; /* samples 0..c-1 are the correct ones */
                for (unsigned mask = 0; mask < (1u << n); mask++)
                    if (__builtin_popcount(mask) == m) {
                        total++;
                        hit += (mask & ((1u << c) - 1u)) != 0;
                    }
                char what[64];
                snprintf(what, sizeof(what), "pass@%d n=%d c=%d", k, n, c);
                assert_near(kevo_report__pass_at_k(n, c, k), (double)hit / (double)total, what);
            }
    assert_near(kevo_report__pass_at_k(0, 0, 1), 0, "no sample");
    /* a hand value: 7 samples, 2 correct, k = 5: 1 - C(5,5)/C(7,5) = 20/21 */
    assert_near(kevo_report__pass_at_k(7, 2, 5), 20.0 / 21.0, "pass@5 7/2");
}

static void test_report_metrics__run_rates(void **state)
{
    fixture *f = *state;
    int64_t run = build_run(f, RUN1, NRUN1);
    kevo_run_metrics *m = metrics(f, run);
    int kmax = 0;
    for (size_t k = 0; k < NRUN1; k++)
        if ((int)natt(&RUN1[k]) > kmax)
            kmax = (int)natt(&RUN1[k]);
    assert_int_equal(kmax, 7); /* so pass@1 and pass@5, not pass@10 */

    expect_rates e = expect(RUN1, NRUN1, -1);
    assert_rates(&m->paper, &e, kmax);
    /* by hand, for the table above */
    assert_near(m->paper.cr_per_kernel, 5.0 / 6.0, "CR by hand");
    assert_near(m->paper.acc, 5.0 / 6.0, "Acc by hand");
    assert_near(m->paper.round1_cr, 4.0 / 6.0, "round1 CR by hand");   /* a, d fail */
    assert_near(m->paper.round1_acc, 2.0 / 6.0, "round1 Acc by hand"); /* b, e */
    /* pass@1 = mean(1/2, 1/1, 1/3, 0/4, 1/1, 2/7) */
    assert_near(m->paper.pass_at_k[0].value, (0.5 + 1 + 1.0 / 3 + 0 + 1 + 2.0 / 7) / 6, "pass@1");
    /* pass@5: a, b, c, e have fewer than 5 samples and one correct: 1; d: 0 */
    assert_near(m->paper.pass_at_k[1].value, (4 + 20.0 / 21.0) / 6, "pass@5");
    /* the existing fields agree with the papers' names */
    assert_near(m->compiled_rate, m->paper.cr_per_kernel, "compiled_rate = cr_per_kernel");
    assert_near(m->correct_rate, m->paper.acc, "correct_rate = acc");
    assert_near(m->fast_1, m->paper.fast_1, "fast_1");
    assert_true(m->tokens_estimated); /* c's first attempt */

    /* geometric means: solved tasks a 3.0, b 0.8, c 4.0, e 1.0 (untimed),
     * f 1.2; over every task d counts 1.0 */
    assert_near(m->geomean_speedup, pow(3.0 * 0.8 * 4.0 * 1.0 * 1.2, 1.0 / 5), "geomean");
    assert_near(m->geomean_speedup_all_tasks, pow(3.0 * 0.8 * 4.0 * 1.0 * 1.0 * 1.2, 1.0 / 6),
                "geomean all tasks");
    kevo_run_metrics_free(m);
}

static void test_report_metrics__by_iteration(void **state)
{
    fixture *f = *state;
    int64_t run = build_run(f, RUN1, NRUN1);
    kevo_run_metrics *m = metrics(f, run);
    assert_int_equal(m->niterations, 7);
    for (size_t i = 1; i <= 7; i++) {
        double cr = 0, acc = 0;
        for (size_t k = 0; k < NRUN1; k++) {
            cr += any_upto(&RUN1[k], i, row_compiled);
            acc += any_upto(&RUN1[k], i, row_correct);
        }
        assert_int_equal(m->by_iteration[i - 1].iteration, (int)i);
        assert_near(m->by_iteration[i - 1].cr_per_kernel, cr / NRUN1, "by_iteration cr");
        assert_near(m->by_iteration[i - 1].acc, acc / NRUN1, "by_iteration acc");
    }
    /* the first is round 1, the last the whole budget */
    assert_near(m->by_iteration[0].cr_per_kernel, m->paper.round1_cr, "iteration 1 = round 1");
    assert_near(m->by_iteration[0].acc, m->paper.round1_acc, "iteration 1 = round 1");
    assert_near(m->by_iteration[6].cr_per_kernel, m->compiled_rate, "last = CR");
    assert_near(m->by_iteration[6].acc, m->correct_rate, "last = Acc");
    /* by hand: after 2 iterations a, b, c, e, f correct ones: b, e, a, f */
    assert_near(m->by_iteration[1].acc, 4.0 / 6.0, "acc after 2 by hand");
    kevo_run_metrics_free(m);
}

static void test_report_metrics__per_level(void **state)
{
    fixture *f = *state;
    int64_t run = build_run(f, RUN1, NRUN1);
    kevo_run_metrics *m = metrics(f, run);
    static const int levels[] = {0, 1, 2, 3};
    assert_int_equal(m->nlevels, 4);
    for (size_t j = 0; j < 4; j++) {
        assert_int_equal(m->per_level[j].level, levels[j]);
        expect_rates e = expect(RUN1, NRUN1, levels[j]);
        assert_rates(&m->per_level[j].r, &e, 7);
    }
    /* level 2 by hand: c compiles and is correct, d neither; round 1: c's
     * incorrect draft compiled; pass@1 = (1/3 + 0) / 2 */
    const kevo_paper_rates *l2 = &m->per_level[2].r;
    assert_near(l2->cr_per_kernel, 0.5, "level 2 CR");
    assert_near(l2->round1_cr, 0.5, "level 2 round1 CR");
    assert_near(l2->round1_acc, 0, "level 2 round1 Acc");
    assert_near(l2->pass_at_k[0].value, 1.0 / 6, "level 2 pass@1");
    for (size_t k = 0; k < m->ntasks; k++)
        if (!strcmp(m->per_task[k].task, "e"))
            assert_int_equal(m->per_task[k].level, 0);
    kevo_run_metrics_free(m);
}

static void test_report_metrics__json_fields(void **state)
{
    fixture *f = *state;
    int64_t run = build_run(f, RUN1, NRUN1);
    kevo_run_metrics *m = metrics(f, run);
    kevo_buf out = {0};
    assert_int_equal(kevo_report_render(&out, &m, 1, KEVO_REPORT_JSON), 0);
    cJSON *j = cJSON_Parse(kevo_buf_cstr(&out));
    assert_non_null(j);
#define NUM(o, k) cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive((o), (k)))
    expect_rates e = expect(RUN1, NRUN1, -1);
    assert_near(NUM(j, "cr_per_kernel"), e.cr, "json cr_per_kernel");
    assert_near(NUM(j, "acc"), e.acc, "json acc");
    assert_near(NUM(j, "correct_rate"), e.acc, "json correct_rate kept");
    assert_near(NUM(j, "round1_cr"), e.r1cr, "json round1_cr");
    assert_near(NUM(j, "round1_acc"), e.r1acc, "json round1_acc");
    cJSON *pk = cJSON_GetObjectItemCaseSensitive(j, "pass_at_k");
    assert_true(cJSON_IsObject(pk));
    assert_int_equal(cJSON_GetArraySize(pk), 2);
    assert_near(NUM(pk, "1"), e.pass[0], "json pass@1");
    assert_near(NUM(pk, "5"), e.pass[1], "json pass@5");
    assert_null(cJSON_GetObjectItemCaseSensitive(pk, "10"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "tokens_estimated")));
    cJSON *it = cJSON_GetObjectItemCaseSensitive(j, "by_iteration");
    assert_int_equal(cJSON_GetArraySize(it), 7);
    cJSON *last = cJSON_GetArrayItem(it, 6);
    assert_near(NUM(last, "iteration"), 7, "json last iteration");
    assert_near(NUM(last, "acc"), e.acc, "json last acc");
    cJSON *pl = cJSON_GetObjectItemCaseSensitive(j, "per_level");
    assert_int_equal(cJSON_GetArraySize(pl), 4);
    cJSON *l1 = cJSON_GetArrayItem(pl, 1);
    expect_rates e1 = expect(RUN1, NRUN1, 1);
    assert_near(NUM(l1, "level"), 1, "json level");
    assert_near(NUM(l1, "tasks"), 2, "json level tasks");
    assert_near(NUM(l1, "acc"), e1.acc, "json level acc");
    assert_near(NUM(l1, "geomean_speedup"), e1.geomean, "json level geomean");
    assert_near(NUM(cJSON_GetObjectItemCaseSensitive(l1, "pass_at_k"), "1"), e1.pass[0],
                "json level pass@1");
#undef NUM
    cJSON_Delete(j);
    kevo_buf_free(&out);
    kevo_run_metrics_free(m);
}

static void test_report_metrics__paired_ratio(void **state)
{
    fixture *f = *state;
    int64_t r1 = build_run(f, RUN1, NRUN1), r2 = build_run(f, RUN2, NRUN2);
    kevo_run_metrics *runs[2] = {metrics(f, r1), metrics(f, r2)};
    assert_false(runs[1]->tokens_estimated);

    /* the tasks both solved, the per-task ratios' geometric mean */
    double logsum = 0;
    int n = 0;
    for (size_t i = 0; i < NRUN1; i++)
        for (size_t k = 0; k < NRUN2; k++)
            if (!strcmp(RUN1[i].name, RUN2[k].name) && any_upto(&RUN1[i], MAX_ATT, row_correct) &&
                any_upto(&RUN2[k], MAX_ATT, row_correct)) {
                logsum += log(expect_best(&RUN1[i]) / expect_best(&RUN2[k]));
                n++;
            }
    assert_int_equal(n, 3); /* a, b (untimed in run 2: 1.0x), c */
    double want = exp(logsum / n);
    assert_near(want, cbrt(3.0 / 1.5 * 0.8 / 1.0 * 4.0 / 5.0), "by hand");

    double ratio = 0;
    int paired = 0;
    assert_int_equal(kevo_report_paired(&ratio, &paired, runs[0], runs[1]), 0);
    assert_int_equal(paired, 3);
    assert_near(ratio, want, "paired_geomean_ratio");
    assert_int_equal(kevo_report_paired(&ratio, &paired, runs[1], runs[0]), 0);
    assert_near(ratio, 1 / want, "paired, the other way round");

    kevo_buf out = {0};
    assert_int_equal(kevo_report_render(&out, runs, 2, KEVO_REPORT_JSON), 0);
    cJSON *j = cJSON_Parse(kevo_buf_cstr(&out));
    assert_non_null(j);
    assert_near(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "paired_geomean_ratio")),
                want, "json paired_geomean_ratio");
    assert_near(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "paired_tasks")), 3,
                "json paired_tasks");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "runs")), 2);
    cJSON_Delete(j);
    kevo_buf_clear(&out);
    assert_int_equal(kevo_report_render(&out, runs, 2, KEVO_REPORT_TEXT), 0);
    assert_non_null(strstr(kevo_buf_cstr(&out), "paired geomean ratio"));
    assert_non_null(strstr(kevo_buf_cstr(&out), "(over 3 task(s) both solved)"));
    kevo_buf_free(&out);
    kevo_run_metrics_free(runs[0]);
    kevo_run_metrics_free(runs[1]);
}

static void test_report_metrics__nothing_paired_nothing_sampled(void **state)
{
    fixture *f = *state;
    /* refine-only attempts (start points from an earlier run): no draft
     * sample, so no pass@k; nothing solved by both runs */
    static const task_rows only_refine[] = {
        {"x", 1, {{'R', "correct", 2.0, 0}, {'R', "crash", 0, 0}}}};
    static const task_rows failed[] = {{"x", 1, {{'D', "compile_error", 0, 0}}}};
    int64_t r1 = build_run(f, only_refine, 1), r2 = build_run(f, failed, 1);
    kevo_run_metrics *runs[2] = {metrics(f, r1), metrics(f, r2)};
    assert_int_equal(runs[0]->paper.pass_at_k_tasks, 0);
    assert_int_equal(runs[0]->paper.npass_at_k, 0);
    assert_near(runs[0]->paper.round1_acc, 1, "refine-only round 1");
    assert_near(runs[1]->geomean_speedup, 0, "no correct kernel: 0");
    assert_near(runs[1]->geomean_speedup_all_tasks, 1, "failed task at 1.0x");
    kevo_buf out = {0};
    assert_int_equal(kevo_report_render(&out, runs, 2, KEVO_REPORT_JSON), 0);
    cJSON *j = cJSON_Parse(kevo_buf_cstr(&out));
    assert_non_null(j);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "paired_geomean_ratio")));
    assert_near(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "paired_tasks")), 0,
                "json paired_tasks");
    cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "runs"), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r0, "pass_at_k")), 0);
    cJSON_Delete(j);
    kevo_buf_free(&out);
    kevo_run_metrics_free(runs[0]);
    kevo_run_metrics_free(runs[1]);
}

/* A run whose attempts were measured on two machines: each machine's
 * summary is over the best speedups measured there, the machines' names
 * come from the store, text names both, JSON carries them and each task's
 * best machine. */
static void test_report_metrics__per_machine(void **state)
{
    fixture *f = *state;
    kevo_memory_machine ma = {.id = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", .hostname = "cpu-box",
                              .cpu = "Xeon", .cores = 2};
    kevo_memory_machine mb = {.id = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", .hostname = "gpu-box",
                              .cpu = "EPYC", .gpu = "H200", .cores = 64};
    assert_int_equal(kevo_memory_machine_upsert(f->mem, &ma), 0);
    assert_int_equal(kevo_memory_machine_upsert(f->mem, &mb), 0);
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{\"iterations\":8}", &run), 0);
    /* task x: 2.0 on a, 8.0 on b; task y: 3.0 on a only; task z: incorrect on b */
    struct { const char *task, *machine; double speedup; bool ok; } rows[] = {
        {"x", ma.id, 2.0, true}, {"x", mb.id, 8.0, true}, {"y", ma.id, 3.0, true},
        {"y", ma.id, 1.5, true}, {"z", mb.id, 0, false},
    };
    int iter[3] = {0, 0, 0};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int t = rows[i].task[0] - 'x';
        kevo_attempt a = {.run_id = run, .task = rows[i].task, .backend = "c",
                          .generator = "replay", .stage = KEVO_STAGE_DRAFT,
                          .iteration = iter[t]++,
                          .verdict = rows[i].ok ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                          .feedback = "f", .source = "void k(void) {}\n", .reference_us = 100,
                          .candidate_us = rows[i].ok ? 100 / rows[i].speedup : 0,
                          .speedup = rows[i].ok ? rows[i].speedup : 0,
                          .machine = rows[i].machine};
        int64_t id = 0;
        assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &f->cfg, &id), 0);
    }
    kevo_run_metrics *m = metrics(f, run);
    assert_int_equal(m->nmachines, 2);
    const kevo_machine_metrics *a = &m->per_machine[0], *b = &m->per_machine[1];
    assert_string_equal(a->id, ma.id);
    assert_string_equal(a->hostname, "cpu-box");
    assert_string_equal(b->gpu, "H200");
    assert_int_equal(a->attempts, 3);
    assert_int_equal(b->attempts, 2);
    assert_int_equal(a->tasks, 2);
    assert_int_equal(b->tasks, 1);
    assert_near(a->geomean_speedup, sqrt(2.0 * 3.0), "machine a's geomean: x 2.0, y 3.0");
    assert_near(b->geomean_speedup, 8.0, "machine b's geomean: x 8.0");
    for (size_t k = 0; k < m->ntasks; k++)
        if (!strcmp(m->per_task[k].task, "x"))
            assert_string_equal(m->per_task[k].machine, mb.id);
    kevo_buf out = {0};
    kevo_run_metrics *runs[1] = {m};
    assert_int_equal(kevo_report_render(&out, runs, 1, KEVO_REPORT_TEXT), 0);
    assert_non_null(strstr(kevo_buf_cstr(&out), "measured on 2 machines"));
    assert_non_null(strstr(kevo_buf_cstr(&out), "gpu-box"));
    kevo_buf_clear(&out);
    assert_int_equal(kevo_report_render(&out, runs, 1, KEVO_REPORT_JSON), 0);
    cJSON *j = cJSON_Parse(kevo_buf_cstr(&out));
    assert_non_null(j);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "machines")), 2);
    cJSON_Delete(j);
    kevo_buf_free(&out);
    kevo_run_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_metrics__pass_at_k_matches_enumeration),
        cmocka_unit_test_setup_teardown(test_report_metrics__run_rates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__by_iteration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__per_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__json_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__paired_ratio, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__nothing_paired_nothing_sampled, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_metrics__per_machine, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
