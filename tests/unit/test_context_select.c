/*
 * test_context_select.c - selection: epsilon-greedy picks the best item at
 * the expected rate (alone and through whole context builds), unseen and
 * tied items, start points over Q2, the heuristic and passive ablations,
 * and the identifier scan behind the API channel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "context/internal.h"
#include "kevo/context.h"
#include "kevo/memory.h"
#include "kevo/util.h"
#include "store_select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |observed - expected| within 4 standard deviations of a binomial rate */
static void assert_rate(size_t hits, size_t trials, double p)
{
    double rate = (double)hits / (double)trials;
    double sd = sqrt(p * (1 - p) / (double)trials);
    if (fabs(rate - p) > 4 * sd + 1e-9)
        fail_msg("rate %.4f, expected %.4f (+- %.4f)", rate, p, 4 * sd);
}

static void test_context__egreedy_rate(void **state)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 2024);
    double q[10] = {0.1, -0.5, 0.3, 0.9, 0.2, 0.0, 0.85, -1, 0.4, 0.5};
    const double eps[] = {0.0, 0.1, 0.3, 1.0};
    for (size_t e = 0; e < sizeof(eps) / sizeof(eps[0]); e++) {
        size_t hits = 0, trials = 40000;
        for (size_t t = 0; t < trials; t++) {
            size_t pick;
            assert_int_equal(kevo_select_egreedy(&pick, q, 10, 1, eps[e], &rng), 1);
            hits += pick == 3;
        }
        assert_rate(hits, trials, (1 - eps[e]) + eps[e] / 10);
    }
    /* k picks are distinct; greedy order is by q */
    size_t out[10];
    assert_int_equal(kevo_select_egreedy(out, q, 10, 4, 0.0, &rng), 4);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 6);
    assert_int_equal(out[2], 9);
    assert_int_equal(out[3], 8);
    assert_int_equal(kevo_select_egreedy(out, q, 10, 50, 0.5, &rng), 10);
    int seen[10] = {0};
    for (int i = 0; i < 10; i++)
        seen[out[i]]++;
    for (int i = 0; i < 10; i++)
        assert_int_equal(seen[i], 1);
    /* ties go to the lowest index (callers order by similarity) */
    double tie[4] = {0.5, 0.7, 0.7, 0.7};
    assert_int_equal(kevo_select_egreedy(out, tie, 4, 1, 0.0, &rng), 1);
    assert_int_equal(out[0], 1);
    assert_int_equal(kevo_select_egreedy(out, tie, 0, 1, 0.0, &rng), 0);
}

static void test_context__identifiers(void **state)
{
    char **ids = NULL;
    size_t n = 0;
    const char *code = "for (int64_t i = 0; i < n; i++) { __m512 v = _mm512_loadu_ps(x + i);\n"
                       "  y[i] = 1e5f * v.abc + foo(i); _mm512_loadu_ps(y); }";
    assert_int_equal(kevo_identifiers_scan(&ids, &n, code, 16), 0);
    assert_int_equal(n, 3);
    assert_string_equal(ids[0], "__m512");
    assert_string_equal(ids[1], "_mm512_loadu_ps");
    assert_string_equal(ids[2], "foo");
    kevo_identifiers_free(ids, n);
    assert_int_equal(kevo_identifiers_scan(&ids, &n, NULL, 16), 0);
    assert_int_equal(n, 0);
    kevo_identifiers_free(ids, n);
}

typedef struct fixture {
    char *dir;
    kevo_memory *mem;
    int64_t items[10];
    const char *why; /* the store is not available here (store_select.h) */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-") < 0)
        return -1;
    *state = f;
    char *path = store_select_locator(f->dir, "kevo.db", &f->why);
    if (!path)
        return f->why ? 0 : -1;
    int error = kevo_memory_open(&f->mem, path);
    free(path);
    if (error < 0)
        return -1;
    for (int i = 0; i < 10; i++) {
        char title[32], body[128];
        snprintf(title, sizeof(title), "note %d", i);
        /* item 0 is the most similar to the query */
        snprintf(body, sizeof(body), "zebra quokka %s lesson number %d",
                 i == 0 ? "zebra quokka zebra quokka" : "", i);
        kevo_item it = {.kind = KEVO_ITEM_EXPERIENCE, .title = title, .body = body};
        if (kevo_memory_item_add(f->mem, &it, &f->items[i]) < 0)
            return -1;
    }
    *state = f;
    return 0;
}

static fixture *ready(void **state)
{
    fixture *f = *state;
    STORE_SELECT_READY(f->why);
    return f;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kevo_memory_free(f->mem);
    store_select_release(f->dir);
    kevo_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Record n draft attempts of task "other" that used `item`. */
/* A verdict by name; the test's own names are always valid. */
static kevo_verdict verdict_of(const char *name)
{
    kevo_verdict v = KEVO_VERDICT_INFRA_ERROR;
    assert_int_equal(kevo_verdict_parse(&v, name), 0);
    return v;
}

static void teach(kevo_memory *mem, int64_t item, const char *verdict, int n)
{
    for (int i = 0; i < n; i++) {
        kevo_attempt a = {.task = "other",
                          .backend = "c",
                          .generator = "test",
                          .stage = KEVO_STAGE_DRAFT,
                          .verdict = verdict_of(verdict),
                          .candidate_us = 1,
                          .reference_us = 1,
                          .speedup = !strcmp(verdict, "correct") ? 1 : 0};
        kevo_used_item u = {item, KEVO_STAGE_DRAFT, 1, 10, false};
        assert_int_equal(kevo_memory_attempt_record(mem, &a, &u, 1, NULL, NULL), 0);
    }
}

static void test_context__build_picks_best_at_rate(void **state)
{
    fixture *f = ready(state);
    int64_t best = f->items[7], bad = f->items[2];
    teach(f->mem, best, "correct", 20);
    teach(f->mem, bad, "incorrect", 5);
    kevo_context_query q = {
        .task = "qtask", .description = "zebra quokka", .stage = KEVO_STAGE_DRAFT};
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    cfg.n = 1;
    cfg.lambda = 10; /* a pool of all 10 notes */
    cfg.epsilon = 0.2;
    kevo_rng rng;
    kevo_rng_seed(&rng, 5);
    size_t hits = 0, trials = 3000, pool = 0;
    for (size_t t = 0; t < trials; t++) {
        kevo_context *ctx = NULL;
        assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
        assert_int_equal(ctx->n_used, 1);
        hits += ctx->used[0].item_id == best;
        pool = ctx->pool_size;
        kevo_context_free(ctx);
    }
    assert_int_equal(pool, 10);
    assert_rate(hits, trials, 0.8 + 0.2 / 10);

    /* greedy with room for 9 of 10: the item with negative evidence is the
     * one left out; unseen items (q_init 0) rank above it */
    cfg.n = 9;
    cfg.lambda = 2;
    cfg.epsilon = 0;
    kevo_context *ctx = NULL;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
    assert_int_equal(ctx->n_used, 9);
    assert_int_equal(ctx->used[0].item_id, best);
    /* unseen ties keep similarity order: the most similar comes next */
    assert_int_equal(ctx->used[1].item_id, f->items[0]);
    for (size_t i = 0; i < ctx->n_used; i++)
        assert_true(ctx->used[i].item_id != bad);
    kevo_context_free(ctx);
    /* optimistic initial Q: unseen items now beat the learnt best */
    cfg.q_init = 5;
    cfg.n = 1;
    cfg.lambda = 10;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
    assert_true(ctx->used[0].item_id != best);
    kevo_context_free(ctx);

    /* heuristic: similarity only, whatever the Q */
    cfg.mode = KEVO_CONTEXT_HEURISTIC;
    cfg.lambda = 3;
    cfg.q_init = 0;
    cfg.epsilon = 0.5;
    for (int t = 0; t < 20; t++) {
        assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
        assert_int_equal(ctx->n_used, 1);
        assert_int_equal(ctx->used[0].item_id, f->items[0]);
        kevo_context_free(ctx);
    }

    /* random: every item of the pool as often as any other, whatever the Q
     * and the similarity (`--retrieval random` of LLM runs) */
    cfg.mode = KEVO_CONTEXT_RANDOM;
    cfg.lambda = 10;
    size_t seen[10] = {0}, n_rand = 4000;
    for (size_t t = 0; t < n_rand; t++) {
        assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
        assert_int_equal(ctx->n_used, 1);
        for (int i = 0; i < 10; i++)
            seen[i] += ctx->used[0].item_id == f->items[i];
        kevo_context_free(ctx);
    }
    for (int i = 0; i < 10; i++)
        assert_rate(seen[i], n_rand, 0.1);
}

static void test_context__passive_recent_history(void **state)
{
    fixture *f = ready(state);
    teach(f->mem, f->items[1], "correct", 3);
    kevo_item_list *hist = NULL;
    kevo_item_filter hf = {.task = "other", .newest_first = 1};
    assert_int_equal(kevo_memory_item_list(&hist, f->mem, &hf), 0);
    assert_true(hist->n >= 3);
    kevo_context_query q = {
        .task = "other", .description = "zebra quokka", .stage = KEVO_STAGE_DRAFT};
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    cfg.mode = KEVO_CONTEXT_PASSIVE;
    kevo_context *ctx = NULL;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, NULL), 0);
    /* newest first, none of the unrelated notes */
    assert_int_equal(ctx->n_used, hist->n);
    for (size_t i = 0; i < ctx->n_used; i++)
        assert_int_equal(ctx->used[i].item_id, hist->items[i].id);
    int found = 0;
    for (size_t i = 0; i < ctx->n_sections; i++)
        found |= !strcmp(ctx->sections[i].title, "Recent history");
    assert_true(found);
    kevo_context_free(ctx);
    /* a small budget keeps only the newest */
    cfg.token_budget = 150;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, NULL), 0);
    assert_true(ctx->total_tokens <= 150);
    assert_true(ctx->n_used < hist->n);
    if (ctx->n_used)
        assert_int_equal(ctx->used[0].item_id, hist->items[0].id);
    kevo_context_free(ctx);
    kevo_item_list_free(hist);
}

static int64_t record(kevo_memory *mem, const char *task, kevo_stage stage, int64_t parent,
                      const char *verdict, double us)
{
    int ok = !strcmp(verdict, "correct");
    kevo_attempt a = {.task = task,
                      .backend = "c",
                      .generator = "test",
                      .stage = stage,
                      .parent_id = parent,
                      .verdict = verdict_of(verdict),
                      .source = "void k(void) { _mm512_setzero_ps(); }",
                      .candidate_us = ok ? us : 0,
                      .reference_us = 100,
                      .speedup = ok ? 100 / us : 0};
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, &a, NULL, 0, NULL, &id), 0);
    return id;
}

/* The start point the policy picks with the rule the context mode implies
 * (value: Q2; heuristic and passive: the fastest), every run. */
static int pick_start(int64_t *out, kevo_memory *mem, const char *task, const char *backend,
                      const kevo_context_config *cfg, kevo_rng *rng)
{
    kevo_start_query q = {.task = task,
                          .backend = backend,
                          .rule = cfg->mode == KEVO_CONTEXT_VALUE ? KEVO_START_Q2
                                                                  : KEVO_START_FASTEST,
                          .epsilon = cfg->epsilon,
                          .q_init = cfg->q_init};
    kevo_rng local;
    kevo_rng_seed(&local, 5);
    kevo_attempt *a = NULL;
    int error = kevo_context_start_point(&a, mem, &q, rng ? rng : &local);
    *out = a ? a->id : 0;
    if (a)
        assert_non_null(a->source); /* the caller gets the whole attempt */
    kevo_attempt_free(a);
    return error;
}

static void test_context__start_point(void **state)
{
    fixture *f = ready(state);
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    int64_t sp = 0;
    assert_int_equal(pick_start(&sp, f->mem, "sp", NULL, &cfg, NULL),
                     KEVO_ENOTFOUND);
    int64_t d[5];
    const double lat[5] = {50, 40, 30, 20, 12};
    for (int i = 0; i < 5; i++)
        d[i] = record(f->mem, "sp", KEVO_STAGE_DRAFT, 0, "correct", lat[i]);
    record(f->mem, "sp", KEVO_STAGE_DRAFT, 0, "incorrect", 0);
    /* refining d[1] works well (40 -> 20 us, twice), refining d[4] fails */
    int64_t c1 = record(f->mem, "sp", KEVO_STAGE_REFINE, d[1], "correct", 20);
    int64_t c2 = record(f->mem, "sp", KEVO_STAGE_REFINE, d[1], "correct", 21);
    record(f->mem, "sp", KEVO_STAGE_REFINE, d[4], "incorrect", 0);
    record(f->mem, "sp", KEVO_STAGE_REFINE, d[4], "crash", 0);
    double q;
    int64_t n;
    assert_int_equal(kevo_memory_q_start_get(&q, &n, f->mem, d[1]), 0);
    assert_true(q > 0 && n == 2);

    /* greedy: the highest Q2 */
    cfg.epsilon = 0;
    assert_int_equal(pick_start(&sp, f->mem, "sp", "c", &cfg, NULL), 0);
    assert_int_equal(sp, d[1]);
    /* epsilon-greedy rate over the 7 correct attempts */
    cfg.epsilon = 0.3;
    kevo_rng rng;
    kevo_rng_seed(&rng, 77);
    size_t hits = 0, trials = 20000;
    for (size_t t = 0; t < trials; t++) {
        assert_int_equal(pick_start(&sp, f->mem, "sp", "c", &cfg, &rng), 0);
        assert_true(sp == d[0] || sp == d[1] || sp == d[2] || sp == d[3] || sp == d[4] ||
                    sp == c1 || sp == c2);
        hits += sp == d[1];
    }
    assert_rate(hits, trials, 0.7 + 0.3 / 7);
    /* heuristic and passive: the lowest latency, whatever Q2 says */
    cfg.mode = KEVO_CONTEXT_HEURISTIC;
    assert_int_equal(pick_start(&sp, f->mem, "sp", "c", &cfg, &rng), 0);
    assert_int_equal(sp, d[4]);
    cfg.mode = KEVO_CONTEXT_PASSIVE;
    assert_int_equal(pick_start(&sp, f->mem, "sp", "c", &cfg, &rng), 0);
    assert_int_equal(sp, d[4]);
    /* other backends have no start point */
    assert_int_equal(pick_start(&sp, f->mem, "sp", "cuda", &cfg, &rng),
                     KEVO_ENOTFOUND);

    /* a refine context shows the start point and what was tried from it */
    kevo_memory_seed_builtin(f->mem);
    kevo_context_query cq = {.task = "sp",
                             .backend = "c",
                             .stage = KEVO_STAGE_REFINE,
                             .start_point_id = d[1],
                             .feedback = "latency 40 us",
                             .bottleneck = "memory bound"};
    kevo_context *ctx = NULL;
    cfg.mode = KEVO_CONTEXT_VALUE;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &cq, &cfg, &rng), 0);
    assert_int_equal(ctx->start_point_id, d[1]);
    const char *tried = NULL, *api = NULL, *practice = NULL;
    for (size_t i = 0; i < ctx->n_sections; i++) {
        if (ctx->sections[i].id == KEVO_SECTION_TRIED)
            tried = ctx->sections[i].text;
        if (ctx->sections[i].id == KEVO_SECTION_API)
            api = ctx->sections[i].text;
        if (ctx->sections[i].id == KEVO_SECTION_PRACTICE)
            practice = ctx->sections[i].text;
    }
    assert_non_null(tried);
    char line[64];
    snprintf(line, sizeof(line), "- #%lld correct", (long long)c1);
    assert_non_null(strstr(tried, line));
    assert_non_null(strstr(tried, "2.00x vs the start point"));
    /* exact-name lookup of an identifier in the start point's source */
    assert_non_null(api);
    assert_non_null(strstr(api, "_mm512_setzero_ps"));
    assert_non_null(strstr(api, "omp parallel for")); /* the c bundle */
    assert_non_null(practice);
    /* the matching practice is in the context once: selected as experience
     * or added as a best practice */
    char *all = NULL;
    assert_int_equal(kevo_context_render(&all, ctx), 0);
    const char *m = strstr(all, "Memory-bound kernels");
    assert_non_null(m);
    assert_null(strstr(m + 1, "Memory-bound kernels"));
    free(all);
    kevo_context_free(ctx);
}

/* The climb filter (the built-in generator's): a kernel slower than the
 * attempt it refines is never a start point, however high its Q2 (a
 * never-refined one counts q_init, above every refined one); the fastest
 * always is; exploration draws among the kept ones only. */
static void test_context__start_point_climb(void **state)
{
    fixture *f = ready(state);
    int64_t d = record(f->mem, "cl", KEVO_STAGE_DRAFT, 0, "correct", 40);
    int64_t a20 = record(f->mem, "cl", KEVO_STAGE_REFINE, d, "correct", 20);
    int64_t b10 = record(f->mem, "cl", KEVO_STAGE_REFINE, d, "correct", 10);
    int64_t c15 = record(f->mem, "cl", KEVO_STAGE_REFINE, b10, "correct", 15); /* slower */
    kevo_start_query q = {.task = "cl", .rule = KEVO_START_Q2, .epsilon = 0, .q_init = 0.5};
    kevo_rng rng;
    kevo_rng_seed(&rng, 3);
    kevo_attempt *a = NULL;
    /* a20 and c15 were never refined (q_init, above d and b10): without the
     * filter the tie goes to the faster, c15; with it c15 is out */
    assert_int_equal(kevo_context_start_point(&a, f->mem, &q, &rng), 0);
    assert_int_equal(a->id, c15);
    kevo_attempt_free(a);
    q.climb = true;
    assert_int_equal(kevo_context_start_point(&a, f->mem, &q, &rng), 0);
    assert_int_equal(a->id, a20);
    kevo_attempt_free(a);
    /* exploring: every kept one (d, a20, b10), never c15 */
    q.epsilon = 1;
    int seen[3] = {0};
    for (int t = 0; t < 300; t++) {
        assert_int_equal(kevo_context_start_point(&a, f->mem, &q, &rng), 0);
        assert_true(a->id != c15);
        seen[a->id == d ? 0 : a->id == a20 ? 1 : 2]++;
        kevo_attempt_free(a);
    }
    assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    /* newest rule: the newest kept one; the fastest is kept when the only one */
    q.rule = KEVO_START_NEWEST;
    assert_int_equal(kevo_context_start_point(&a, f->mem, &q, &rng), 0);
    assert_int_equal(a->id, b10);
    kevo_attempt_free(a);
    q.task = "cl1";
    int64_t only = record(f->mem, "cl1", KEVO_STAGE_DRAFT, 0, "correct", 40);
    record(f->mem, "cl1", KEVO_STAGE_REFINE, only, "correct", 50);
    assert_int_equal(kevo_context_start_point(&a, f->mem, &q, &rng), 0);
    assert_int_equal(a->id, only);
    kevo_attempt_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context__egreedy_rate),
        cmocka_unit_test(test_context__identifiers),
        cmocka_unit_test_setup_teardown(test_context__build_picks_best_at_rate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context__passive_recent_history, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context__start_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context__start_point_climb, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
