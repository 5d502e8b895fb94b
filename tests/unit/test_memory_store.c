/*
 * test_memory_store.c - the experience graph through kevo/memory.h: open
 * and migrate, runs, tasks, items and search, the one-transaction attempt
 * record (edges, rewards, Q, distillation), getters, bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/util.h"
#include "store_select.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    char *dir;
    char *path; /* a file, or a PostgreSQL URL (KEVO_TEST_STORE, store_select.h) */
    kevo_memory *mem;
    const char *why; /* the store is not available here */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-") < 0)
        return -1;
    *state = f;
    f->path = store_select_locator(f->dir, "kevo.db", &f->why);
    if (!f->path)
        return f->why ? 0 : -1;
    if (kevo_memory_open(&f->mem, f->path) < 0) {
        print_error("cannot open %s: %s\n", f->path, kevo_error_last());
        return -1;
    }
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
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

static int64_t add_item(kevo_memory *mem, kevo_item_kind kind, const char *title, const char *body,
                        const char *category, const char *backend, const char *tags)
{
    kevo_item it = {.kind = kind,
                    .title = title,
                    .body = body,
                    .category = category,
                    .backend = backend,
                    .tags = tags};
    int64_t id = 0;
    assert_int_equal(kevo_memory_item_add(mem, &it, &id), 0);
    assert_true(id > 0);
    return id;
}

/* What the SQLite half below does with files, on a PostgreSQL schema:
 * MUST_EXIST on a schema without kevo's tables, a schema holding someone
 * else's tables, and a store whose schema version a newer kevo wrote. */
static void open_reject_pg(fixture *f)
{
    const char *why = NULL, *server = pg_test_url(&why);
    char schema[128], url[1400];
    kevo_memory *m = NULL;
    assert_non_null(server);
    assert_int_equal(pg_test_schema_new(schema, url, sizeof(url), server), 0);
    assert_int_equal(kevo_memory_open_ex(&m, url, KEVO_MEMORY_MUST_EXIST), KEVO_ENOTFOUND);
    assert_null(m);
    assert_non_null(strstr(kevo_error_last(), "no such memory store"));
    char sql[512];
    snprintf(sql, sizeof(sql), "CREATE TABLE %s.attempts(x int)", schema);
    assert_int_equal(pg_test_admin(server, sql), 0);
    assert_int_equal(kevo_memory_open(&m, url), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "not a kevo memory store"));
    pg_test_schema_drop(server, schema);

    assert_int_equal(
        store_select_sql(f->dir, "UPDATE kevo_meta SET value = '99' WHERE key = 'schema_version'"),
        0);
    assert_int_equal(kevo_memory_open(&m, f->path), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "newer kevo"));
    assert_non_null(strstr(kevo_error_last(), "schema version 99"));
    assert_non_null(strstr(kevo_error_last(), "knows up to 4"));
    assert_int_equal(
        store_select_sql(f->dir, "UPDATE kevo_meta SET value = '4' WHERE key = 'schema_version'"),
        0);
    assert_int_equal(kevo_memory_open(&m, f->path), 0);
    kevo_memory_free(m);
}

static void test_memory__open_reopen_and_reject(void **state)
{
    fixture *f = ready(state);
    kevo_memory_stats st;
    assert_int_equal(kevo_memory_stats_get(&st, f->mem), 0);
    assert_int_equal(st.schema_version, store_select_is_pg() ? 4 : 4);
    assert_int_equal(st.attempts, 0);
    assert_true(st.bytes > 0);
    kevo_memory_free(f->mem);
    f->mem = NULL;
    assert_int_equal(kevo_memory_open(&f->mem, f->path), 0);
    if (store_select_is_pg()) {
        open_reject_pg(f);
        return;
    }

    /* missing file with MUST_EXIST */
    char *missing = kevo_path_join(f->dir, "nope.db");
    kevo_memory *m = NULL;
    assert_int_equal(kevo_memory_open_ex(&m, missing, KEVO_MEMORY_MUST_EXIST), KEVO_ENOTFOUND);
    assert_null(m);
    assert_non_null(strstr(kevo_error_last(), "nope.db"));
    free(missing);

    /* a text file */
    char *text = kevo_path_join(f->dir, "notes.txt");
    const char junk[] = "this is not a database, just some words that are long enough......"
                        "................................................................";
    assert_int_equal(kevo_file_write(text, junk, sizeof(junk)), 0);
    assert_int_equal(kevo_memory_open(&m, text), KEVO_EINVAL);
    free(text);

    /* an unrelated SQLite database */
    char *other = kevo_path_join(f->dir, "other.db");
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(kevo_memory_open(&m, other), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "not a kevo memory store"));

    /* a store from the future */
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(kevo_memory_open(&m, f->path), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "newer kevo"));
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    free(other);
}

static void test_memory__runs(void **state)
{
    fixture *f = ready(state);
    int64_t r1 = 0, r2 = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{\"generator\":\"builtin\"}", &r1), 0);
    assert_int_equal(kevo_memory_run_begin(f->mem, NULL, &r2), 0);
    assert_true(r2 > r1);
    assert_int_equal(kevo_memory_run_begin(f->mem, "{not json", NULL), KEVO_EINVAL);
    assert_int_equal(kevo_memory_run_finish(f->mem, r1, "done"), 0);
    assert_int_equal(kevo_memory_run_finish(f->mem, 12345, "done"), KEVO_ENOTFOUND);
    kevo_run *r = NULL;
    assert_int_equal(kevo_memory_run_get(&r, f->mem, r1), 0);
    assert_string_equal(r->config_json, "{\"generator\":\"builtin\"}");
    assert_string_equal(r->status, "done");
    assert_true(r->finished >= r->started && r->started > 0);
    assert_int_equal(strlen(r->uid), 32);
    kevo_run_free(r);
    kevo_run_list *l = NULL;
    assert_int_equal(kevo_memory_run_list(&l, f->mem), 0);
    assert_int_equal(l->n, 2);
    assert_string_equal(l->runs[1].status, "running");
    assert_string_equal(l->runs[1].config_json, "{}");
    kevo_run_list_free(l);
    assert_int_equal(kevo_memory_run_get(&r, f->mem, 999), KEVO_ENOTFOUND);
}

static void test_memory__tasks(void **state)
{
    fixture *f = ready(state);
    kevo_memory_task t = {.name = "softmax_rows",
                          .level = 1,
                          .category = "activation",
                          .description = "Row-wise softmax of an R x C matrix",
                          .reference = "void softmax_rows(void) {}",
                          .suite_path = "suites/c/level1/023_softmax_rows"};
    int64_t id = 0, id2 = 0;
    assert_int_equal(kevo_memory_task_upsert(f->mem, &t, &id), 0);
    kevo_memory_task upd = {.name = "softmax_rows", .description = "Softmax over rows"};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &upd, &id2), 0);
    assert_int_equal(id, id2);
    kevo_memory_task *got = NULL;
    assert_int_equal(kevo_memory_task_get(&got, f->mem, "softmax_rows"), 0);
    assert_string_equal(got->description, "Softmax over rows");
    assert_string_equal(got->category, "activation"); /* kept */
    assert_int_equal(got->level, 1);
    kevo_memory_task_free(got);
    assert_int_equal(kevo_memory_task_get(&got, f->mem, "nope"), KEVO_ENOTFOUND);
    kevo_memory_task t2 = {.name = "layernorm",
                           .category = "norm",
                           .description = "Layer normalisation over the last axis"};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &t2, NULL), 0);
    kevo_memory_task_array *l = NULL;
    assert_int_equal(kevo_memory_task_list(&l, f->mem), 0);
    assert_int_equal(l->n, 2);
    assert_string_equal(l->tasks[0].name, "layernorm"); /* by name */
    kevo_memory_task_array_free(l);
    assert_int_equal(kevo_memory_task_search(&l, f->mem, "normalisation axis", 5), 0);
    assert_int_equal(l->n, 1);
    assert_string_equal(l->tasks[0].name, "layernorm");
    kevo_memory_task_array_free(l);
    kevo_memory_task bad = {0};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &bad, NULL), KEVO_EINVAL);
}

static void test_memory__items_search_lookup(void **state)
{
    fixture *f = ready(state);
    int64_t a = add_item(f->mem, KEVO_ITEM_EXPERIENCE, "relu vectorised",
                         "AVX-512 max with zero made relu memory bound", "activation", "c", NULL);
    int64_t b = add_item(f->mem, KEVO_ITEM_BEST_PRACTICE, "Reductions",
                         "Use several partial sums for a reduction", "reduction", NULL, "sum");
    int64_t c =
        add_item(f->mem, KEVO_ITEM_API_DOC, "_mm512_max_ps", "lane-wise max", NULL, "c", NULL);
    int64_t d =
        add_item(f->mem, KEVO_ITEM_API_DOC, "_mm512_max_ps", "generic max", NULL, NULL, "bundle");
    kevo_item *it = NULL;
    assert_int_equal(kevo_memory_item_get(&it, f->mem, a), 0);
    assert_int_equal(it->kind, KEVO_ITEM_EXPERIENCE);
    assert_string_equal(it->title, "relu vectorised");
    assert_null(it->tags);
    assert_true(it->created > 0);
    kevo_item_free(it);
    assert_int_equal(kevo_memory_item_get(&it, f->mem, 9999), KEVO_ENOTFOUND);

    kevo_item_list *l = NULL;
    kevo_item_filter flt = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC)};
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &flt), 0);
    assert_int_equal(l->n, 2);
    kevo_item_list_free(l);
    kevo_item_filter tagged = {.tag = "bundle"};
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &tagged), 0);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->items[0].id, d);
    kevo_item_list_free(l);
    kevo_item_filter newest = {.newest_first = 1, .limit = 2};
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &newest), 0);
    assert_int_equal(l->n, 2);
    assert_int_equal(l->items[0].id, d);
    kevo_item_list_free(l);

    /* search */
    assert_int_equal(kevo_memory_item_search(&l, f->mem, "why is my reduction slow? sum", NULL), 0);
    assert_true(l->n >= 1);
    assert_int_equal(l->items[0].id, b);
    assert_non_null(l->scores);
    kevo_item_list_free(l);
    kevo_item_filter no_api = {
        .kinds = KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE) | KEVO_ITEM_BIT(KEVO_ITEM_BEST_PRACTICE) |
                 KEVO_ITEM_BIT(KEVO_ITEM_TRACE) | KEVO_ITEM_BIT(KEVO_ITEM_RECIPE)};
    assert_int_equal(kevo_memory_item_search(&l, f->mem, "max", &no_api), 0);
    assert_int_equal(l->n, 1);
    assert_int_equal(l->items[0].id, a);
    kevo_item_list_free(l);
    assert_int_equal(kevo_memory_item_search(&l, f->mem, "", NULL), 0);
    assert_int_equal(l->n, 0);
    kevo_item_list_free(l);
    /* FTS syntax in the query is just words */
    assert_int_equal(kevo_memory_item_search(&l, f->mem, "\"max\" OR NEAR( * ) : {", NULL), 0);
    kevo_item_list_free(l);

    /* exact-name lookup prefers the backend's own doc */
    assert_int_equal(kevo_memory_item_lookup_api(&it, f->mem, "_mm512_max_ps", "c"), 0);
    assert_int_equal(it->id, c);
    kevo_item_free(it);
    assert_int_equal(kevo_memory_item_lookup_api(&it, f->mem, "_mm512_max_ps", "cuda"), 0);
    assert_int_equal(it->id, d);
    kevo_item_free(it);
    assert_int_equal(kevo_memory_item_lookup_api(&it, f->mem, "_mm512_min_ps", "c"),
                     KEVO_ENOTFOUND);

    kevo_item badk = {.kind = 42, .title = "x", .body = "y"};
    assert_int_equal(kevo_memory_item_add(f->mem, &badk, NULL), KEVO_EINVAL);
    kevo_item notitle = {.kind = KEVO_ITEM_RECIPE, .body = "y"};
    assert_int_equal(kevo_memory_item_add(f->mem, &notitle, NULL), KEVO_EINVAL);
}

static void test_memory__seed_idempotent(void **state)
{
    fixture *f = ready(state);
    kevo_memory_stats s1, s2;
    assert_int_equal(kevo_memory_seed_builtin(f->mem), 0);
    assert_int_equal(kevo_memory_stats_get(&s1, f->mem), 0);
    assert_true(s1.items_by_kind[KEVO_ITEM_API_DOC] > 10);
    assert_true(s1.items_by_kind[KEVO_ITEM_BEST_PRACTICE] > 3);
    assert_int_equal(kevo_memory_seed_builtin(f->mem), 0);
    assert_int_equal(kevo_memory_stats_get(&s2, f->mem), 0);
    assert_int_equal(s1.items, s2.items);
}

/* A verdict by name; the test's own names are always valid. */
static kevo_verdict verdict_of(const char *name)
{
    kevo_verdict v = KEVO_VERDICT_INFRA_ERROR;
    assert_int_equal(kevo_verdict_parse(&v, name), 0);
    return v;
}

static kevo_attempt draft(const char *task, const char *verdict, double us, double ref)
{
    int ok = !strcmp(verdict, "correct");
    kevo_attempt a = {.task = task,
                      .backend = "c",
                      .generator = "test",
                      .stage = KEVO_STAGE_DRAFT,
                      .verdict = verdict_of(verdict),
                      .gates_json = "[]",
                      .feedback =
                          "  max abs error 0.5 at index 3\n\nexpected 1.0 got 1.5\nthird\nfourth",
                      .source = "#pragma omp parallel for\nvoid k(void) {}",
                      .candidate_us = ok ? us : 0,
                      .reference_us = ref,
                      .speedup = ok ? ref / us : 0,
                      .tokens_prompt = 100,
                      .tokens_completion = 50};
    return a;
}

static void test_memory__record_draft_and_refine(void **state)
{
    fixture *f = ready(state);
    kevo_memory_task t = {.name = "relu", .category = "activation", .level = 1};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &t, NULL), 0);
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{}", &run), 0);
    int64_t i1 = add_item(f->mem, KEVO_ITEM_BEST_PRACTICE, "p1", "b1", NULL, NULL, NULL);
    int64_t i2 = add_item(f->mem, KEVO_ITEM_RECIPE, "p2", "b2", NULL, NULL, NULL);

    /* draft, correct, 2x */
    kevo_attempt a = draft("relu", "correct", 50, 100);
    a.run_id = run;
    kevo_used_item used[2] = {{i1, KEVO_STAGE_DRAFT, 1, 30, false},
                              {i2, KEVO_STAGE_DRAFT, 2, 40, false}};
    int64_t d1 = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, used, 2, NULL, &d1), 0);
    double q;
    int64_t n;
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, i1, KEVO_STAGE_DRAFT), 0);
    assert_int_equal(n, 1);
    assert_true(fabs(q - 0.3) < 1e-12); /* 0 + 0.3 (1 - 0) */
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, d1), 0);
    assert_string_equal(got->task, "relu");
    assert_int_equal(got->run_id, run);
    assert_true(got->reward == 1.0 && got->reward_raw == 1.0);
    assert_true(got->created > 0);
    assert_int_equal(got->tokens_prompt, 100);
    kevo_attempt_free(got);
    kevo_used_item *u = NULL;
    size_t nu = 0;
    assert_int_equal(kevo_memory_attempt_used(&u, &nu, f->mem, d1), 0);
    assert_int_equal(nu, 2);
    assert_int_equal(u[0].item_id, i1);
    assert_int_equal(u[1].tokens, 40);
    free(u);

    /* distillation: an experience and (first correct) a trace */
    kevo_item_filter ef = {.task = "relu"};
    kevo_item_list *l = NULL;
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &ef), 0);
    assert_int_equal(l->n, 2);
    assert_int_equal(l->items[0].kind, KEVO_ITEM_EXPERIENCE);
    assert_string_equal(l->items[0].title, "relu draft #0: correct, 2.00x");
    assert_string_equal(l->items[0].category, "activation");
    assert_non_null(strstr(l->items[0].body, "OpenMP threads"));
    assert_non_null(strstr(l->items[0].body, "2.00x over the reference"));
    assert_non_null(strstr(l->items[0].body, "Why: max abs error 0.5 at index 3 / expected 1.0"));
    assert_null(strstr(l->items[0].body, "fourth"));
    assert_int_equal(l->items[1].kind, KEVO_ITEM_TRACE);
    assert_non_null(strstr(l->items[1].body, "#pragma omp parallel for"));
    int64_t *src = NULL;
    size_t nsrc = 0;
    assert_int_equal(kevo_memory_item_sources(&src, &nsrc, f->mem, l->items[0].id), 0);
    assert_int_equal(nsrc, 1);
    assert_int_equal(src[0], d1);
    free(src);
    kevo_item_list_free(l);

    /* draft, incorrect: Q drops, no trace */
    kevo_attempt b = draft("relu", "incorrect", 0, 100);
    kevo_used_item u1 = {i1, KEVO_STAGE_DRAFT, 1, 30, false};
    int64_t d2 = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &b, &u1, 1, NULL, &d2), 0);
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, i1, KEVO_STAGE_DRAFT), 0);
    assert_int_equal(n, 2);
    assert_true(fabs(q - (0.3 + 0.3 * (-1 - 0.3))) < 1e-12);

    /* refine from d1: 25 us (rho = 2) */
    kevo_attempt r = draft("relu", "correct", 25, 100);
    r.stage = KEVO_STAGE_REFINE;
    r.parent_id = d1;
    r.iteration = 1;
    r.recipes_json = "[\"unroll4\", {\"name\": \"omp_simd\"}]";
    kevo_used_item u2 = {i2, KEVO_STAGE_REFINE, 1, 10, false};
    int64_t r1 = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &r, &u2, 1, NULL, &r1), 0);
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, r1), 0);
    assert_true(fabs(got->reward - 0.6) < 1e-12);
    assert_int_equal(got->parent_id, d1);
    kevo_attempt_free(got);
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, i2, KEVO_STAGE_REFINE), 0);
    assert_true(fabs(q - 0.18) < 1e-12);
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, i2, KEVO_STAGE_DRAFT), 0);
    assert_true(fabs(q - 0.3) < 1e-12 && n == 1);
    assert_int_equal(kevo_memory_q_start_get(&q, &n, f->mem, d1), 0);
    assert_true(fabs(q - 0.18) < 1e-12 && n == 1);
    /* its experience names the start point and the recipes */
    kevo_item_filter tf = {
        .task = "relu", .newest_first = 1, .kinds = KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE)};
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &tf), 0);
    assert_non_null(strstr(l->items[0].body, "recipes unroll4, omp_simd"));
    assert_non_null(strstr(l->items[0].body, "Start point: attempt #1"));
    assert_non_null(strstr(l->items[0].body, "2.00x faster than the start point"));
    kevo_item_list_free(l);

    /* refine from d1 that fails: -1 */
    kevo_attempt r2 = draft("relu", "compile_error", 0, 100);
    r2.stage = KEVO_STAGE_REFINE;
    r2.parent_id = d1;
    int64_t r2id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &r2, NULL, 0, NULL, &r2id), 0);
    assert_int_equal(kevo_memory_q_start_get(&q, &n, f->mem, d1), 0);
    assert_true(fabs(q - (0.18 + 0.3 * (-1 - 0.18))) < 1e-12 && n == 2);

    /* infra_error: recorded, nothing learnt */
    kevo_attempt r3 = draft("relu", "infra_error", 0, 100);
    r3.stage = KEVO_STAGE_REFINE;
    r3.parent_id = d1;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &r3, &u2, 1, NULL, NULL), 0);
    assert_int_equal(kevo_memory_q_start_get(&q, &n, f->mem, d1), 0);
    assert_int_equal(n, 2);
    assert_int_equal(kevo_memory_q_get(&q, &n, f->mem, i2, KEVO_STAGE_REFINE), 0);
    assert_int_equal(n, 1);

    /* getters */
    kevo_attempt_list *al = NULL;
    assert_int_equal(kevo_memory_attempt_children(&al, f->mem, d1), 0);
    assert_int_equal(al->n, 3);
    assert_int_equal(al->attempts[0].id, r1);
    kevo_attempt_list_free(al);
    assert_int_equal(kevo_memory_attempts_of_task(&al, f->mem, "relu", 0), 0);
    assert_int_equal(al->n, 5);
    for (size_t i = 1; i < al->n; i++)
        assert_true(al->attempts[i].id > al->attempts[i - 1].id);
    kevo_attempt_list_free(al);
    assert_int_equal(kevo_memory_attempts_of_run(&al, f->mem, run), 0);
    assert_int_equal(al->n, 1);
    kevo_attempt_list_free(al);
    assert_int_equal(kevo_memory_attempt_best(&got, f->mem, "relu", 0, NULL), 0);
    assert_int_equal(got->id, r1);
    kevo_attempt_free(got);
    assert_int_equal(kevo_memory_attempt_best(&got, f->mem, "relu", run, "c"), 0);
    assert_int_equal(got->id, d1);
    kevo_attempt_free(got);
    assert_int_equal(kevo_memory_attempt_best(&got, f->mem, "gelu", 0, NULL), KEVO_ENOTFOUND);
    /* the attempts that used item i2 (d1 in its draft, r1 and r3 refining),
     * fastest correct first: what the built-in generator inherits from */
    kevo_attempt_filter uf = {.used_item = i2, .correct_only = 1, .best_first = 1};
    assert_int_equal(kevo_memory_attempt_list(&al, f->mem, &uf), 0);
    assert_int_equal(al->n, 2);
    assert_int_equal(al->attempts[0].id, r1);
    assert_int_equal(al->attempts[1].id, d1);
    kevo_attempt_list_free(al);
    uf.correct_only = 0;
    uf.best_first = 0;
    assert_int_equal(kevo_memory_attempt_list(&al, f->mem, &uf), 0);
    assert_int_equal(al->n, 3);
    kevo_attempt_list_free(al);
    /* the refine that beat d1 left a second trace */
    kevo_item_filter trf = {.task = "relu", .kinds = KEVO_ITEM_BIT(KEVO_ITEM_TRACE)};
    assert_int_equal(kevo_memory_item_list(&l, f->mem, &trf), 0);
    assert_int_equal(l->n, 2);
    kevo_item_list_free(l);
}

static void test_memory__record_rejects_and_rolls_back(void **state)
{
    fixture *f = ready(state);
    int64_t i1 = add_item(f->mem, KEVO_ITEM_RECIPE, "r", "b", NULL, NULL, NULL);
    kevo_memory_stats before, after;
    assert_int_equal(kevo_memory_stats_get(&before, f->mem), 0);

    kevo_attempt a = draft("relu", "correct", 10, 20);
    kevo_used_item used[2] = {{i1, KEVO_STAGE_DRAFT, 1, 3, false},
                              {i1 + 100, KEVO_STAGE_DRAFT, 2, 3, false}};
    /* the second item does not exist: nothing may stay behind */
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, used, 2, NULL, NULL), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "does not exist"));
    /* the same item twice */
    used[1].item_id = i1;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, used, 2, NULL, NULL), KEVO_EINVAL);
    /* bad fields */
    kevo_attempt bad = a;
    bad.verdict = (kevo_verdict)42;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &bad, NULL, 0, NULL, NULL), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "verdict"));
    bad = a;
    bad.task = NULL;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &bad, NULL, 0, NULL, NULL), KEVO_EINVAL);
    bad = a;
    bad.stage = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &bad, NULL, 0, NULL, NULL), KEVO_EINVAL);
    bad = a;
    bad.candidate_us = NAN;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &bad, NULL, 0, NULL, NULL), KEVO_EINVAL);
    bad = a;
    bad.parent_id = 777;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &bad, NULL, 0, NULL, NULL), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "parent_id 777"));
    kevo_learn_config cfg;
    kevo_learn_config_init(&cfg);
    cfg.alpha = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &cfg, NULL), KEVO_EINVAL);

    assert_int_equal(kevo_memory_stats_get(&after, f->mem), 0);
    assert_int_equal(after.attempts, before.attempts);
    assert_int_equal(after.items, before.items);
    assert_int_equal(after.edges_used, before.edges_used);
    assert_int_equal(after.q_items, before.q_items);

    /* a parent of another task */
    int64_t p = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, NULL, &p), 0);
    kevo_attempt other = draft("gelu", "correct", 10, 20);
    other.stage = KEVO_STAGE_REFINE;
    other.parent_id = p;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &other, NULL, 0, NULL, NULL), KEVO_EINVAL);

    /* an outer transaction that rolls back takes the attempt with it */
    assert_int_equal(kevo_memory_stats_get(&before, f->mem), 0);
    assert_int_equal(kevo_memory_tx_begin(f->mem), 0);
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, NULL, NULL), 0);
    assert_int_equal(kevo_memory_tx_rollback(f->mem), 0);
    assert_int_equal(kevo_memory_stats_get(&after, f->mem), 0);
    assert_int_equal(after.attempts, before.attempts);
}

static void test_memory__normalized_refine_rewards(void **state)
{
    fixture *f = ready(state);
    kevo_learn_config cfg;
    kevo_learn_config_init(&cfg);
    cfg.normalize = 1;
    cfg.clip = 2.0;
    kevo_attempt a = draft("relu", "correct", 100, 100);
    int64_t start = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &cfg, &start), 0);
    kevo_rng rng;
    kevo_rng_seed(&rng, 5);
    for (int i = 0; i < 200; i++) {
        kevo_attempt r = draft("relu", i % 7 == 0 ? "incorrect" : "correct",
                               100 * exp(kevo_rng_normal(&rng) * 0.2), 100);
        r.stage = KEVO_STAGE_REFINE;
        r.parent_id = start;
        int64_t id = 0;
        assert_int_equal(kevo_memory_attempt_record(f->mem, &r, NULL, 0, &cfg, &id), 0);
        kevo_attempt *got = NULL;
        assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id), 0);
        assert_true(got->reward >= -2.0 && got->reward <= 2.0);
        assert_true(got->reward_raw >= -1.0 && got->reward_raw <= 1.0);
        kevo_attempt_free(got);
    }
    double q;
    int64_t n;
    assert_int_equal(kevo_memory_q_start_get(&q, &n, f->mem, start), 0);
    assert_int_equal(n, 200);
    assert_true(q >= -2.0 && q <= 2.0);
}

/* The verdict is a type: one name table, one "compiled" predicate, and a
 * store row whose verdict is no verdict name is an error naming the
 * attempt, never a guess. */
static void test_memory__verdict_typed_at_the_store(void **state)
{
    fixture *f = ready(state);
    for (int v = 0; v < KEVO_VERDICT_COUNT; v++) {
        kevo_verdict back = KEVO_VERDICT_COUNT;
        assert_int_equal(kevo_verdict_parse(&back, kevo_verdict_name((kevo_verdict)v)), 0);
        assert_int_equal(back, v);
    }
    kevo_verdict back;
    assert_int_equal(kevo_verdict_parse(&back, "great"), KEVO_EINVAL);
    assert_int_equal(kevo_verdict_parse(&back, NULL), KEVO_EINVAL);
    assert_string_equal(kevo_verdict_name((kevo_verdict)99), "unknown");
    const int compiled[KEVO_VERDICT_COUNT] = {
        [KEVO_VERDICT_CORRECT] = 1, [KEVO_VERDICT_INCORRECT] = 1, [KEVO_VERDICT_TIMEOUT] = 1,
        [KEVO_VERDICT_CRASH] = 1};
    for (int v = 0; v < KEVO_VERDICT_COUNT; v++)
        assert_int_equal(kevo_verdict_compiled((kevo_verdict)v), compiled[v]);

    kevo_attempt a = draft("relu", "timeout", 0, 20);
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, NULL, &id), 0);
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id), 0);
    assert_int_equal(got->verdict, KEVO_VERDICT_TIMEOUT);
    kevo_attempt_free(got);
    if (store_select_is_pg()) {
        /* stored as its name there too; a hand edit is an error naming it */
        assert_int_equal(store_select_sql(f->dir, "UPDATE attempts SET verdict = 'great'"), 0);
        got = NULL;
        assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id), KEVO_EINVAL);
        assert_null(got);
        assert_non_null(strstr(kevo_error_last(), "great"));
        return;
    }
    /* stored as its name: the file stays readable by sqlite3 and scripts */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT verdict FROM attempts WHERE id = ?", -1, &st,
                                        NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "timeout");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(db, "UPDATE attempts SET verdict = 'great'", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, f->mem, id), KEVO_EINVAL);
    assert_null(got);
    assert_non_null(strstr(kevo_error_last(), "great"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory__open_reopen_and_reject, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__tasks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__items_search_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__seed_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__record_draft_and_refine, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__record_rejects_and_rolls_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_memory__normalized_refine_rewards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__verdict_typed_at_the_store, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
