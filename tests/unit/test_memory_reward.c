/*
 * test_memory_reward.c - the value learning in isolation and through the
 * store: reward bounds and signs, normalisation bounds, convergence of the
 * Monte-Carlo Q update to the mean reward of a stationary item.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/util.h"
#include "store_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void test_memory__reward_draft_signs(void **state)
{
    assert_true(kevo_memory_reward_draft(KEVO_VERDICT_CORRECT) == 1.0);
    for (int v = 0; v < KEVO_VERDICT_COUNT; v++)
        if (v != KEVO_VERDICT_CORRECT)
            assert_true(kevo_memory_reward_draft((kevo_verdict)v) == -1.0);
}

static void test_memory__reward_refine_bounds(void **state)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 7);
    for (int i = 0; i < 100000; i++) {
        double start = exp(kevo_rng_uniform(&rng) * 40 - 20);
        double now = exp(kevo_rng_uniform(&rng) * 40 - 20);
        double r = kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, start, now);
        assert_true(r >= -1.0 && r <= 1.0);
        if (start > now * 1.000001)
            assert_true(r > 0);
        if (start < now / 1.000001)
            assert_true(r < 0);
        assert_true(kevo_memory_reward_refine(KEVO_VERDICT_INCORRECT, start, now) == -1.0);
        assert_true(kevo_memory_reward_refine(KEVO_VERDICT_TIMEOUT, start, now) == -1.0);
    }
    assert_true(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 100, 100) == 0.0);
    /* rho = 2: tanh(log 2) = 3/5 */
    assert_true(fabs(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 200, 100) - 0.6) < 1e-12);
    assert_true(fabs(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 100, 200) + 0.6) < 1e-12);
    /* a correct refine 1000x slower is still scored above a failure */
    assert_true(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 1, 1e3) > -1.0);
    /* missing latencies: neutral */
    assert_true(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 0, 100) == 0.0);
    assert_true(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, 100, 0) == 0.0);
    assert_true(kevo_memory_reward_refine(KEVO_VERDICT_CORRECT, NAN, 100) == 0.0);
}

static void test_memory__reward_normalize_bounded(void **state)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 11);
    int64_t n = 0;
    double mean = 0, m2 = 0;
    for (int i = 0; i < 20000; i++) {
        /* heavy tails and constant stretches */
        double r = (i % 1000) < 500 ? 0.25 : tanh(kevo_rng_normal(&rng) * 3);
        double z = kevo_memory_reward_normalize(r, n, mean, m2, 0.01, 3.0);
        n++;
        double d = r - mean;
        mean += d / (double)n;
        m2 += d * (r - mean);
        assert_true(isfinite(z));
        assert_true(z >= -3.0 && z <= 3.0);
    }
    assert_true(kevo_memory_reward_normalize(1.0, 1, 1.0, 0.0, 0.01, 3.0) == 0.0);
    /* zero variance: the floor keeps it finite, the clip bounds it */
    double z = kevo_memory_reward_normalize(1.0, 10, 0.0, 0.0, 0.01, 3.0);
    assert_true(z == 3.0);
    z = kevo_memory_reward_normalize(0.05, 10, 0.0, 0.0, 0.01, 3.0);
    assert_true(fabs(z - 0.5) < 1e-12);
    /* no floor given: still finite */
    z = kevo_memory_reward_normalize(1.0, 10, 0.0, 0.0, 0.0, 2.0);
    assert_true(z == 2.0);
}

static void test_memory__q_step_converges(void **state)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 3);
    const double p = 0.7, mean = 2 * p - 1; /* +1 w.p. 0.7, -1 otherwise */
    /* default alpha: Q fluctuates around the mean; its time average hits it */
    double q = 0, sum = 0;
    int steps = 40000, burn = 1000;
    for (int i = 0; i < steps; i++) {
        double r = kevo_rng_uniform(&rng) < p ? 1.0 : -1.0;
        q = kevo_memory_q_step(q, r, 0.3);
        assert_true(q >= -1.0 && q <= 1.0);
        if (i >= burn)
            sum += q;
    }
    assert_true(fabs(sum / (steps - burn) - mean) < 0.03);
    /* small alpha: Q itself settles near the mean */
    q = 0;
    for (int i = 0; i < 20000; i++)
        q = kevo_memory_q_step(q, kevo_rng_uniform(&rng) < p ? 1.0 : -1.0, 0.005);
    assert_true(fabs(q - mean) < 0.1);
    /* deterministic reward: exact geometric convergence */
    q = 0;
    for (int i = 0; i < 200; i++)
        q = kevo_memory_q_step(q, 0.5, 0.3);
    assert_true(fabs(q - 0.5) < 1e-12);
}

/* Through the store: one item used by every draft attempt, correct with
 * probability 0.7; its Q1 must converge to 0.4 and count every update. */
static void test_memory__q_converges_in_store(void **state)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-"), 0);
    char *path = kevo_path_join(dir, "m.db");
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, path), 0);
    kevo_item it = {.kind = KEVO_ITEM_BEST_PRACTICE, .title = "tip", .body = "use SIMD"};
    int64_t item = 0;
    assert_int_equal(kevo_memory_item_add(mem, &it, &item), 0);
    kevo_learn_config cfg;
    kevo_learn_config_init(&cfg);
    cfg.alpha = 0.02;
    kevo_rng rng;
    kevo_rng_seed(&rng, 99);
    int n = 1500;
    double qsum = 0;
    int counted = 0;
    assert_int_equal(kevo_memory_tx_begin(mem), 0);
    for (int i = 0; i < n; i++) {
        int ok = kevo_rng_uniform(&rng) < 0.7;
        kevo_attempt a = {.task = "relu",
                          .backend = "c",
                          .generator = "test",
                          .stage = KEVO_STAGE_DRAFT,
                          .iteration = i,
                          .verdict = ok ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                          .source = "void relu(void) {}",
                          .candidate_us = ok ? 10 : 0,
                          .reference_us = 20,
                          .speedup = ok ? 2 : 0};
        kevo_used_item u = {.item_id = item, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 5};
        assert_int_equal(kevo_memory_attempt_record(mem, &a, &u, 1, &cfg, NULL), 0);
        if (i >= 500) {
            double q;
            int64_t cnt;
            assert_int_equal(kevo_memory_q_get(&q, &cnt, mem, item, KEVO_STAGE_DRAFT), 0);
            qsum += q;
            counted++;
        }
    }
    assert_int_equal(kevo_memory_tx_commit(mem), 0);
    double q;
    int64_t cnt;
    assert_int_equal(kevo_memory_q_get(&q, &cnt, mem, item, KEVO_STAGE_DRAFT), 0);
    assert_int_equal(cnt, n);
    assert_true(fabs(qsum / counted - 0.4) < 0.06);
    /* the refine Q of the item was never touched */
    assert_int_equal(kevo_memory_q_get(&q, &cnt, mem, item, KEVO_STAGE_REFINE), 0);
    assert_int_equal(cnt, 0);
    kevo_memory_free(mem);
    kevo_rmtree(dir);
    free(path);
    free(dir);
}

/* An item used without credit (the built-in generator's retune): the used
 * edge is recorded, its Q is not moved by the attempt's reward, the start
 * point's Q2 and the credited item's Q are. */
static void test_memory__no_credit_keeps_q(void **state)
{
    fixture *f = *state;
    kevo_memory *mem = f->mem;
    const kevo_learn_config cfg = f->cfg;
    kevo_item it = {.kind = KEVO_ITEM_BEST_PRACTICE, .title = "arm", .body = "register blocking"};
    int64_t arm = 0, other = 0;
    assert_int_equal(kevo_memory_item_add(mem, &it, &arm), 0);
    it.title = "other";
    assert_int_equal(kevo_memory_item_add(mem, &it, &other), 0);
    kevo_attempt d = {.task = "conv",
                      .backend = "c",
                      .generator = "test",
                      .stage = KEVO_STAGE_DRAFT,
                      .verdict = KEVO_VERDICT_CORRECT,
                      .source = "x",
                      .candidate_us = 100,
                      .reference_us = 100,
                      .speedup = 1};
    int64_t draft = 0, id = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, &d, NULL, 0, &cfg, &draft), 0);
    kevo_attempt a = d;
    a.stage = KEVO_STAGE_REFINE;
    a.iteration = 1;
    a.parent_id = draft;
    a.candidate_us = 200; /* 0.5x: reward tanh(log 0.5) */
    a.speedup = 0.5;
    kevo_used_item u[2] = {
        {.item_id = arm, .stage = KEVO_STAGE_REFINE, .rank = 1, .no_credit = true},
        {.item_id = other, .stage = KEVO_STAGE_REFINE, .rank = 2}};
    assert_int_equal(kevo_memory_attempt_record(mem, &a, u, 2, &cfg, &id), 0);
    double q;
    int64_t n;
    assert_int_equal(kevo_memory_q_get(&q, &n, mem, arm, KEVO_STAGE_REFINE), 0);
    assert_int_equal(n, 0);
    assert_float_equal(q, cfg.q_init, 1e-12);
    assert_int_equal(kevo_memory_q_get(&q, &n, mem, other, KEVO_STAGE_REFINE), 0);
    assert_int_equal(n, 1);
    assert_float_equal(q, cfg.q_init + cfg.alpha * (tanh(log(0.5)) - cfg.q_init), 1e-12);
    assert_int_equal(kevo_memory_q_start_get(&q, &n, mem, draft), 0);
    assert_int_equal(n, 1); /* the start point's Q2 learns from it */
    /* the edge is there: the attempt lists as one that used the arm */
    kevo_attempt_filter by_arm = {.used_item = arm};
    kevo_attempt_list *l = NULL;
    assert_int_equal(kevo_memory_attempt_list(&l, mem, &by_arm), 0);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->attempts[0].id, id);
    kevo_attempt_list_free(l);
}

/* Normalised refine rewards through the store, against the rewards before
 * each one (App. A: mu_{t-1}, sigma_{t-1}), the first two 0 (no spread
 * yet). Expected values computed here from the raw rewards. */
static void test_memory__normalize_uses_earlier_rewards(void **state)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-"), 0);
    char *path = kevo_path_join(dir, "m.db");
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, path), 0);
    kevo_learn_config cfg;
    kevo_learn_config_init(&cfg);
    cfg.normalize = 1;
    kevo_attempt d = {.task = "relu", .backend = "c", .generator = "test",
                      .stage = KEVO_STAGE_DRAFT, .verdict = KEVO_VERDICT_CORRECT, .source = "x",
                      .candidate_us = 100, .reference_us = 100, .speedup = 1};
    int64_t draft = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, &d, NULL, 0, &cfg, &draft), 0);
    const double new_us[] = {80, 50, 60, 90};
    double raw[4];
    for (int i = 0; i < 4; i++) {
        kevo_attempt a = d;
        a.stage = KEVO_STAGE_REFINE;
        a.iteration = i + 1;
        a.parent_id = draft;
        a.candidate_us = new_us[i];
        a.speedup = 100 / new_us[i];
        int64_t id = 0;
        assert_int_equal(kevo_memory_attempt_record(mem, &a, NULL, 0, &cfg, &id), 0);
        raw[i] = tanh(log(100 / new_us[i]));
        double expect = 0;
        if (i >= 2) {
            double mean = 0, var = 0;
            for (int k = 0; k < i; k++)
                mean += raw[k] / i;
            for (int k = 0; k < i; k++)
                var += (raw[k] - mean) * (raw[k] - mean) / (i - 1);
            expect = (raw[i] - mean) / sqrt(var > 0.01 ? var : 0.01);
        }
        kevo_attempt *got = NULL;
        assert_int_equal(kevo_memory_attempt_get(&got, mem, id), 0);
        if (fabs(got->reward - expect) > 1e-9)
            print_error("refine %d: reward %.6f, expected %.6f\n", i, got->reward, expect);
        assert_true(fabs(got->reward_raw - raw[i]) < 1e-12);
        assert_true(fabs(got->reward - expect) < 1e-9);
        kevo_attempt_free(got);
    }
    kevo_memory_free(mem);
    kevo_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory__reward_draft_signs),
        cmocka_unit_test(test_memory__reward_refine_bounds),
        cmocka_unit_test(test_memory__reward_normalize_bounded),
        cmocka_unit_test(test_memory__normalize_uses_earlier_rewards),
        cmocka_unit_test(test_memory__q_step_converges),
        cmocka_unit_test(test_memory__q_converges_in_store),
        cmocka_unit_test_setup_teardown(test_memory__no_credit_keeps_q, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
