/*
 * test_context_budget.c - the token budget is never exceeded: the packer
 * over many thousands of random part sets, and whole context builds over
 * a random store with random budgets, quotas, modes and stages.
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *random_text(kevo_rng *rng, size_t len)
{
    static const char *words[] = {"float",
                                  "x[i]",
                                  "for",
                                  "(int64_t i = 0; i < N; i++)",
                                  "{",
                                  "}",
                                  "y",
                                  "=",
                                  "max",
                                  "0.0f",
                                  "#pragma omp parallel for",
                                  "memory",
                                  "bound",
                                  "über",
                                  "naïve",
                                  "→",
                                  "\n",
                                  "\n\n",
                                  "sum",
                                  "_mm512_loadu_ps",
                                  "_mm512_fmadd_ps",
                                  "tile",
                                  "reduction"};
    char *s = malloc(len + 1);
    size_t n = 0;
    while (n < len) {
        const char *w = words[kevo_rng_next(rng) % (sizeof(words) / sizeof(words[0]))];
        size_t wl = strlen(w);
        if (n + wl + 1 > len)
            break;
        memcpy(s + n, w, wl);
        n += wl;
        s[n++] = ' ';
    }
    while (n < len)
        s[n++] = 'a';
    s[n] = '\0';
    return s;
}

static void test_context__tokens_estimate(void **state)
{
    assert_int_equal(kevo_tokens_estimate(NULL, 0), 0);
    assert_int_equal(kevo_tokens_estimate("", 1), 0);
    assert_int_equal(kevo_tokens_estimate("abc", 1), 1);
    char buf[64];
    memset(buf, 'x', 32);
    buf[32] = '\0';
    assert_int_equal(kevo_tokens_estimate(buf, 1), 10); /* 32 / 3.2 */
    buf[33 - 1] = 'x';
    memset(buf, 'x', 47);
    buf[47] = '\0';
    assert_int_equal(kevo_tokens_estimate(buf, 0), 10); /* 47 / 4.7 */
    assert_int_equal(kevo_tokens_estimate_len(48, 4.7), 11);
    assert_int_equal(kevo_tokens_estimate_len(5, 0), 5);
}

/* The packer alone: random sections, caps, parts and cut permissions. */
static void test_context__pack_never_exceeds(void **state)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 1234);
    size_t cuts = 0, dropped = 0, parts = 0;
    for (int trial = 0; trial < 5000; trial++) {
        kevo_pack p = {.budget = 1 + (int)(kevo_rng_next(&rng) % 3000),
                       .bpt_code = 2.5 + kevo_rng_uniform(&rng) * 2,
                       .bpt_prose = 3.5 + kevo_rng_uniform(&rng) * 2,
                       .min_cut = (int)(kevo_rng_next(&rng) % 64)};
        kevo_pack_section sec[4] = {{.title = "A"},
                                    {.title = "Bee"},
                                    {.title = "C c c"},
                                    {.title = "Dddddddddddddddddddd"}};
        int n_sec = 1 + (int)(kevo_rng_next(&rng) % 4);
        for (int s = 0; s < n_sec; s++)
            sec[s].cap = (int)(kevo_rng_next(&rng) % (size_t)(p.budget + 100));
        int n_parts = (int)(kevo_rng_next(&rng) % 30);
        int sum_taken = 0;
        for (int i = 0; i < n_parts; i++) {
            size_t len = kevo_rng_next(&rng) % 6000;
            char *t = random_text(&rng, len);
            int s = (int)(kevo_rng_next(&rng) % (size_t)n_sec);
            int code = (int)(kevo_rng_next(&rng) & 1);
            int can_cut = (int)(kevo_rng_next(&rng) % 3 != 0);
            size_t before = sec[s].text.len;
            int taken = kevo_pack_add(&p, &sec[s], t, len, code, can_cut);
            assert_true(taken >= 0);
            parts++;
            if (taken == 0) {
                dropped++;
                assert_int_equal(sec[s].text.len, before);
            } else {
                sum_taken += taken;
                const char *added = sec[s].text.ptr + before;
                if (strstr(added, "[... cut: ") && len > 0 &&
                    kevo_tokens_estimate_len(len, code ? p.bpt_code : p.bpt_prose) > taken) {
                    cuts++;
                    assert_true(can_cut);
                }
            }
            assert_true(sec[s].tokens <= sec[s].cap || sec[s].tokens == 0);
            assert_true(p.total <= p.budget);
            free(t);
        }
        int total = 0;
        for (int s = 0; s < n_sec; s++) {
            total += sec[s].tokens;
            /* never more bytes than the estimate allows at the cheaper ratio */
            double bpt = p.bpt_code > p.bpt_prose ? p.bpt_code : p.bpt_prose;
            assert_true((double)sec[s].text.len <= (double)sec[s].tokens * bpt + 1e-9);
            kevo_buf_free(&sec[s].text);
        }
        assert_int_equal(total, p.total);
        assert_true(total <= p.budget);
        assert_true(sum_taken <= total);
    }
    /* the random sets exercised every path */
    assert_true(cuts > 100);
    assert_true(dropped > 100);
    assert_true(parts - dropped > 1000);
}

typedef struct fixture {
    char *dir;
    kevo_memory *mem;
} fixture;

static const char *categories[] = {"activation", "reduction", "matmul", "norm", "conv"};

/* A store with random items of random sizes, tasks and attempts. */
static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-") < 0)
        return -1;
    char *path = kevo_path_join(f->dir, "kevo.db");
    int error = kevo_memory_open(&f->mem, path);
    free(path);
    if (error < 0)
        return -1;
    kevo_rng rng;
    kevo_rng_seed(&rng, 42);
    kevo_memory_tx_begin(f->mem);
    kevo_memory_seed_builtin(f->mem);
    for (int i = 0; i < 400; i++) {
        size_t len =
            kevo_rng_next(&rng) % 4 == 0 ? kevo_rng_next(&rng) % 40000 : kevo_rng_next(&rng) % 1500;
        char *body = random_text(&rng, len);
        char title[64];
        snprintf(title, sizeof(title), "item %d about tile reduction max", i);
        kevo_item it = {.kind = (kevo_item_kind)(1 + kevo_rng_next(&rng) % KEVO_ITEM_KIND_MAX),
                        .title = title,
                        .body = body,
                        .category = categories[kevo_rng_next(&rng) % 5],
                        .task = i % 3 ? NULL : (i % 2 ? "t0" : "t1"),
                        .backend = i % 4 ? "c" : NULL,
                        .tags = i % 10 == 0 ? "bundle" : NULL};
        if (kevo_memory_item_add(f->mem, &it, NULL) < 0)
            return -1;
        free(body);
    }
    for (int t = 0; t < 2; t++) {
        char name[8];
        snprintf(name, sizeof(name), "t%d", t);
        char *ref = random_text(&rng, 2000 + kevo_rng_next(&rng) % 30000);
        kevo_memory_task task = {.name = name,
                                 .category = categories[t],
                                 .description = "a kernel with a max reduction and tiles",
                                 .reference = ref};
        kevo_memory_task_upsert(f->mem, &task, NULL);
        int64_t prev = 0;
        for (int a = 0; a < 30; a++) {
            char *src = random_text(&rng, kevo_rng_next(&rng) % 20000);
            int ok = a % 3 != 1;
            kevo_attempt at = {.task = name,
                               .backend = "c",
                               .generator = "test",
                               .stage = prev ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                               .parent_id = prev,
                               .verdict = ok ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                               .feedback = "mismatch at index 7\nexpected 1 got 2",
                               .source = src,
                               .candidate_us = ok ? 10 + a : 0,
                               .reference_us = 100,
                               .speedup = ok ? 100.0 / (10 + a) : 0};
            int64_t id = 0;
            if (kevo_memory_attempt_record(f->mem, &at, NULL, 0, NULL, &id) < 0)
                return -1;
            if (ok && !prev)
                prev = id;
            free(src);
        }
        free(ref);
    }
    kevo_memory_tx_commit(f->mem);
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

static void check_context(const kevo_context *ctx, const kevo_context_config *cfg)
{
    int sum = 0;
    for (size_t i = 0; i < ctx->n_sections; i++) {
        const kevo_context_section *s = &ctx->sections[i];
        assert_non_null(s->text);
        assert_true(s->tokens > 0);
        /* the bytes are within what the tokens allow at the cheaper ratio */
        assert_true((double)strlen(s->text) <= (double)s->tokens * cfg->bytes_per_token_prose);
        assert_int_equal(strncmp(s->text, "## ", 3), 0);
        if (i)
            assert_true(ctx->sections[i - 1].id < s->id);
        sum += s->tokens;
    }
    assert_int_equal(sum, ctx->total_tokens);
    assert_true(ctx->total_tokens <= cfg->token_budget);
    int used = 0;
    for (size_t i = 0; i < ctx->n_used; i++) {
        assert_int_equal(ctx->used[i].rank, (int)i + 1);
        assert_true(ctx->used[i].tokens > 0);
        for (size_t j = 0; j < i; j++)
            assert_true(ctx->used[j].item_id != ctx->used[i].item_id);
        used += ctx->used[i].tokens;
    }
    assert_true(used <= ctx->total_tokens);
    char *all = NULL;
    assert_int_equal(kevo_context_render(&all, ctx), 0);
    assert_true((double)strlen(all) <= (double)cfg->token_budget * cfg->bytes_per_token_prose);
    free(all);
}

static void test_context__build_never_exceeds(void **state)
{
    fixture *f = *state;
    kevo_rng rng;
    kevo_rng_seed(&rng, 777);
    size_t nonempty = 0, refine = 0, with_items = 0;
    for (int trial = 0; trial < 1500; trial++) {
        kevo_context_config cfg;
        kevo_context_config_init(&cfg);
        cfg.token_budget = 1 + (int)(kevo_rng_next(&rng) % 9000);
        cfg.mode = (kevo_context_mode)(kevo_rng_next(&rng) % 3);
        cfg.n = (int)(kevo_rng_next(&rng) % 12);
        cfg.lambda = 1 + (int)(kevo_rng_next(&rng) % 4);
        cfg.epsilon = kevo_rng_uniform(&rng);
        cfg.min_cut_tokens = (int)(kevo_rng_next(&rng) % 100);
        if (trial % 2)
            for (int s = 0; s < KEVO_SECTION_COUNT; s++)
                cfg.quota[s] = kevo_rng_uniform(&rng);
        if (trial % 5 == 0) {
            cfg.bytes_per_token_code = 2 + kevo_rng_uniform(&rng) * 2;
            cfg.bytes_per_token_prose = cfg.bytes_per_token_code + kevo_rng_uniform(&rng) * 2;
        }
        int t = (int)(kevo_rng_next(&rng) % 2);
        char name[8];
        snprintf(name, sizeof(name), "t%d", t);
        kevo_memory_task *task = NULL;
        assert_int_equal(kevo_memory_task_get(&task, f->mem, name), 0);
        char *fb = random_text(&rng, kevo_rng_next(&rng) % 8000);
        kevo_context_query q = {.task = name,
                                .category = task->category,
                                .description = task->description,
                                .reference = task->reference,
                                .backend = trial % 7 ? "c" : NULL,
                                .stage = trial % 2 ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                                .feedback = fb,
                                .bottleneck = trial % 3 ? "memory bound reduction" : NULL};
        kevo_context *ctx = NULL;
        assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, &rng), 0);
        check_context(ctx, &cfg);
        nonempty += ctx->n_sections > 0;
        refine += ctx->start_point_id != 0;
        with_items += ctx->n_used > 0;
        kevo_context_free(ctx);
        kevo_memory_task_free(task);
        free(fb);
    }
    assert_true(nonempty > 1000);
    assert_true(refine > 600);
    assert_true(with_items > 800);
}

static void test_context__defaults_fill_sections(void **state)
{
    fixture *f = *state;
    kevo_memory_task *task = NULL;
    assert_int_equal(kevo_memory_task_get(&task, f->mem, "t0"), 0);
    kevo_context_query q = {.task = "t0",
                            .category = task->category,
                            .description = task->description,
                            .reference = task->reference,
                            .backend = "c",
                            .stage = KEVO_STAGE_REFINE,
                            .feedback = "max abs error 0.3 at index 12",
                            .bottleneck = "memory bound: 80% of peak bandwidth"};
    /* the first correct attempt: every later one refined it */
    kevo_attempt_list *al = NULL;
    kevo_attempt_filter af = {.task = "t0", .correct_only = 1, .limit = 1};
    assert_int_equal(kevo_memory_attempt_list(&al, f->mem, &af), 0);
    q.start_point_id = al->attempts[0].id;
    kevo_attempt_list_free(al);
    kevo_context *ctx = NULL;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, NULL, NULL), 0);
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    check_context(ctx, &cfg);
    assert_true(ctx->start_point_id == q.start_point_id);
    int seen[KEVO_SECTION_COUNT] = {0};
    for (size_t i = 0; i < ctx->n_sections; i++)
        seen[ctx->sections[i].id] = 1;
    assert_true(seen[KEVO_SECTION_TASK] && seen[KEVO_SECTION_START_POINT] &&
                seen[KEVO_SECTION_TRIED] && seen[KEVO_SECTION_FEEDBACK] &&
                seen[KEVO_SECTION_EXPERIENCE] && seen[KEVO_SECTION_API]);
    /* the long reference was cut with a marker */
    assert_non_null(strstr(ctx->sections[0].text, "[... cut: "));
    kevo_context_free(ctx);
    kevo_memory_task_free(task);

    /* bad input */
    kevo_context_query bad = {.stage = KEVO_STAGE_DRAFT};
    assert_int_equal(kevo_context_build(&ctx, f->mem, &bad, NULL, NULL), KEVO_EINVAL);
    kevo_context_query none = {.task = "nope", .stage = KEVO_STAGE_REFINE};
    assert_int_equal(kevo_context_build(&ctx, f->mem, &none, NULL, NULL), KEVO_ENOTFOUND);
    cfg.token_budget = 0;
    q.stage = KEVO_STAGE_DRAFT;
    assert_int_equal(kevo_context_build(&ctx, f->mem, &q, &cfg, NULL), KEVO_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context__tokens_estimate),
        cmocka_unit_test(test_context__pack_never_exceeds),
        cmocka_unit_test_setup_teardown(test_context__build_never_exceeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context__defaults_fill_sections, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
