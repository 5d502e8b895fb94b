/*
 * test_memory_export.c - the memory as an artifact: export -> import
 * round-trips exactly, importing twice adds nothing, importing into a
 * non-empty store remaps ids, bad files are refused whole; filtering
 * leaves no trace of the excluded tasks (not in an export, not in the
 * search index, not in the bytes of the file) and relearns the Q-values of
 * what remains as if the excluded tasks had never run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-") < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kevo_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static char *in_dir(fixture *f, const char *name)
{
    return kevo_path_join(f->dir, name);
}

static kevo_memory *open_store(fixture *f, const char *name)
{
    char *p = in_dir(f, name);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, p), 0);
    free(p);
    return mem;
}

/* Fill a store: two tasks (optionally skipping one), shared items, drafts
 * and refines, a normalised learner, a run per task and a shared run. */
static void fill(kevo_memory *mem, const char *keep, const char *drop, int with_drop, int normalize)
{
    kevo_rng rng;
    kevo_rng_seed(&rng, 31337);
    assert_int_equal(kevo_memory_seed_builtin(mem), 0);
    int64_t shared[4];
    for (int i = 0; i < 4; i++) {
        char title[32];
        snprintf(title, sizeof(title), "shared lesson %d", i);
        kevo_item it = {.kind = KEVO_ITEM_BEST_PRACTICE,
                        .title = title,
                        .body = "vectorise with ünïcödé → care",
                        .tags = i ? NULL : "x y"};
        assert_int_equal(kevo_memory_item_add(mem, &it, &shared[i]), 0);
    }
    char cfg_both[256];
    snprintf(cfg_both, sizeof(cfg_both),
             "{\"tasks\":[\"%s\",\"%s\"],\"by_task\":{\"%s\":3},\"model\":\"m\"}", keep, drop,
             drop);
    int64_t run_both = 0, run_drop = 0;
    assert_int_equal(kevo_memory_run_begin(mem, cfg_both, &run_both), 0);
    assert_int_equal(kevo_memory_run_begin(mem, "{\"only\":\"drop\"}", &run_drop), 0);
    kevo_learn_config lc;
    kevo_learn_config_init(&lc);
    lc.normalize = normalize;
    const char *names[2] = {keep, drop};
    int64_t last[2] = {0, 0};
    for (int i = 0; i < 60; i++) {
        int t = i % 2;
        int ok = kevo_rng_uniform(&rng) < 0.6;
        double us = 10 + kevo_rng_uniform(&rng) * 20;
        kevo_used_item used[2] = {{shared[i % 4], 0, 1, 11, false},
                                  {shared[(i + 1) % 4], 0, 2, 12, false}};
        /* some edges learn nothing (a retune's): a Q relearnt after a
         * filter skips them too, and an export carries the flag */
        used[1].no_credit = i % 3 == 0;
        if (t == 1 && !with_drop)
            continue;
        kevo_memory_task task = {.name = names[t],
                                 .level = 1,
                                 .category = "activation",
                                 .description = t ? "drop this operator" : "keep this one",
                                 .reference = "void k(void) {}"};
        assert_int_equal(kevo_memory_task_upsert(mem, &task, NULL), 0);
        kevo_attempt a = {.run_id = t ? (i % 4 == 1 ? run_drop : run_both) : run_both,
                          .task = names[t],
                          .backend = "c",
                          .generator = "test",
                          .stage = last[t] ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                          .iteration = i,
                          .parent_id = last[t],
                          .verdict = ok ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                          .gates_json = "[{\"gate\":\"compile\",\"ok\":true}]",
                          .feedback = t ? "drop feedback line" : "keep feedback line",
                          .source = t ? "// drop source" : "// keep source",
                          .recipes_json = i % 5 ? NULL : "[\"unroll\"]",
                          .candidate_us = ok ? us : 0,
                          .reference_us = 40.123456789,
                          .speedup = ok ? 40.123456789 / us : 0,
                          .tokens_prompt = 1000 + i,
                          .tokens_completion = 200,
                          .tokens_estimated = i % 2};
        int64_t id = 0;
        assert_int_equal(kevo_memory_attempt_record(mem, &a, used, 2, &lc, &id), 0);
        if (ok && !last[t])
            last[t] = id;
    }
    assert_int_equal(kevo_memory_run_finish(mem, run_both, "done"), 0);
}

static void test_memory__export_import_round_trip(void **state)
{
    fixture *f = *state;
    kevo_memory *a = open_store(f, "a.db");
    fill(a, "keepme_relu", "dropme_gelu", 1, 1);
    char *f1 = in_dir(f, "a.jsonl"), *f2 = in_dir(f, "b.jsonl"), *f3 = in_dir(f, "c.jsonl");
    assert_int_equal(kevo_memory_export(a, f1), 0);

    kevo_memory *b = open_store(f, "b.db");
    kevo_import_stats is;
    assert_int_equal(kevo_memory_import(b, f1, &is), 0);
    assert_int_equal(is.skipped, 0);
    assert_true(is.attempts > 0 && is.items > 0 && is.edges > 0 && is.q_rows > 0 && is.runs == 2);
    assert_int_equal(kevo_memory_export(b, f2), 0);
    char *t1 = NULL, *t2 = NULL;
    size_t l1 = 0, l2 = 0;
    assert_int_equal(kevo_file_read(&t1, &l1, f1), 0);
    assert_int_equal(kevo_file_read(&t2, &l2, f2), 0);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1);
    assert_non_null(strstr(t1, "\"type\":\"reward_stats\""));
    assert_non_null(strstr(t1, "\"type\":\"q_start\""));
    free(t2);

    kevo_memory_stats sa, sb;
    assert_int_equal(kevo_memory_stats_get(&sa, a), 0);
    assert_int_equal(kevo_memory_stats_get(&sb, b), 0);
    assert_int_equal(sa.attempts, sb.attempts);
    assert_int_equal(sa.items, sb.items);
    assert_int_equal(sa.edges_used, sb.edges_used);
    assert_int_equal(sa.q_items, sb.q_items);
    assert_int_equal(sa.q_starts, sb.q_starts);

    /* twice: nothing new */
    assert_int_equal(kevo_memory_import(b, f1, &is), 0);
    assert_int_equal(is.attempts + is.items + is.runs + is.tasks + is.q_rows, 0);
    assert_true(is.skipped > 0);
    assert_int_equal(kevo_memory_export(b, f2), 0);
    assert_int_equal(kevo_file_read(&t2, &l2, f2), 0);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1);
    free(t2);

    /* into a store with its own records: ids remap, everything arrives */
    kevo_memory *c = open_store(f, "c.db");
    kevo_item own = {.kind = KEVO_ITEM_RECIPE, .title = "own", .body = "mine"};
    assert_int_equal(kevo_memory_item_add(c, &own, NULL), 0);
    kevo_attempt oa = {.task = "own_task", .stage = KEVO_STAGE_DRAFT, .verdict = KEVO_VERDICT_CRASH};
    assert_int_equal(kevo_memory_attempt_record(c, &oa, NULL, 0, NULL, NULL), 0);
    kevo_memory_stats sc0, sc1;
    assert_int_equal(kevo_memory_stats_get(&sc0, c), 0);
    assert_int_equal(kevo_memory_import(c, f1, &is), 0);
    assert_int_equal(kevo_memory_stats_get(&sc1, c), 0);
    assert_int_equal(sc1.attempts, sc0.attempts + sa.attempts);
    assert_int_equal(sc1.items, sc0.items + sa.items);
    assert_int_equal(sc1.edges_used, sa.edges_used);
    assert_int_equal(sc1.edges_distilled, sc0.edges_distilled + sa.edges_distilled);
    assert_int_equal(sc1.q_starts, sa.q_starts);
    /* the refines edges point at the remapped parents */
    kevo_attempt_list *al = NULL;
    assert_int_equal(kevo_memory_attempts_of_task(&al, c, "keepme_relu", 0), 0);
    int refines = 0;
    for (size_t i = 0; i < al->n; i++) {
        if (!al->attempts[i].parent_id)
            continue;
        kevo_attempt *p = NULL;
        assert_int_equal(kevo_memory_attempt_get(&p, c, al->attempts[i].parent_id), 0);
        assert_string_equal(p->task, "keepme_relu");
        kevo_attempt_free(p);
        refines++;
    }
    assert_true(refines > 5);
    kevo_attempt_list_free(al);
    assert_int_equal(kevo_memory_export(c, f3), 0);

    free(t1);
    free(f1);
    free(f2);
    free(f3);
    kevo_memory_free(a);
    kevo_memory_free(b);
    kevo_memory_free(c);
}

static void write_text(const char *path, const char *text)
{
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
}

static void test_memory__import_rejects_bad_files(void **state)
{
    fixture *f = *state;
    kevo_memory *m = open_store(f, "m.db");
    char *p = in_dir(f, "bad.jsonl");
    const char *header = "{\"type\":\"header\",\"format\":\"kevo-memory\",\"version\":1}\n";
    struct {
        const char *body;
        const char *message;
    } cases[] = {
        {"", "empty file"},
        {"{\"type\":\"run\",\"id\":1}\n", ":1: the first line must be the header"},
        {"{\"type\":\"header\",\"format\":\"other\",\"version\":1}\n", "format"},
        {"{\"type\":\"header\",\"format\":\"kevo-memory\",\"version\":9}\n", "newer kevo"},
        {"HEADER{\"type\":\"item\",\"id\":1,\"uid\":\"u1\",\"kind\":\"trace\",\"title\":\"t\"}\n",
         ":2: missing field 'body'"},
        {"HEADER{\"type\":\"item\",\"id\":1,\"uid\":\"u1\",\"kind\":\"wisdom\",\"title\":\"t\","
         "\"body\":\"b\"}\n",
         ":2: field 'kind'"},
        {"HEADER{\"type\":\"spaceship\"}\n", ":2: unknown record type 'spaceship'"},
        {"HEADER{\"type\":\"item\",\"id\":1,\"uid\":\"u1\",\"kind\":\"trace\",\"title\":\"t\","
         "\"body\":\"b\"}\nnot json\n",
         ":3: not a JSON object"},
        {"HEADER{\"type\":\"used\",\"attempt\":5,\"item\":1,\"stage\":\"draft\"}\n",
         ":2: refers to attempt 5"},
        {"HEADER{\"type\":\"attempt\",\"id\":1,\"uid\":\"a\",\"task\":\"t\",\"stage\":\"draft\","
         "\"verdict\":\"great\"}\n",
         ":2: field 'verdict'"},
        {"HEADER{\"type\":\"attempt\",\"id\":1.5,\"uid\":\"a\",\"task\":\"t\",\"stage\":\"draft\","
         "\"verdict\":\"crash\"}\n",
         ":2: field 'id' is not a non-negative integer"},
    };
    kevo_memory_stats before, after;
    assert_int_equal(kevo_memory_stats_get(&before, m), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kevo_buf b = {0};
        const char *body = cases[i].body;
        if (!strncmp(body, "HEADER", 6)) {
            kevo_buf_puts(&b, header);
            body += 6;
        }
        kevo_buf_puts(&b, body);
        write_text(p, kevo_buf_cstr(&b));
        kevo_buf_free(&b);
        int rc = kevo_memory_import(m, p, NULL);
        if (rc != KEVO_EINVAL || !strstr(kevo_error_last(), cases[i].message))
            fail_msg("case %zu: rc %d, message '%s'", i, rc, kevo_error_last());
        assert_non_null(strstr(kevo_error_last(), "bad.jsonl"));
    }
    /* nothing of the partly good files stayed */
    assert_int_equal(kevo_memory_stats_get(&after, m), 0);
    assert_int_equal(after.items, before.items);
    assert_int_equal(kevo_memory_import(m, "/nonexistent/file.jsonl", NULL), KEVO_ENOTFOUND);
    free(p);
    kevo_memory_free(m);
}

static int contains(const char *hay, size_t len, const char *needle)
{
    return memmem(hay, len, needle, strlen(needle)) != NULL;
}

static double q_of_title(kevo_memory *mem, const char *title, kevo_stage stage, int64_t *n)
{
    kevo_item_list *l = NULL;
    kevo_item_filter flt = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_BEST_PRACTICE)};
    assert_int_equal(kevo_memory_item_list(&l, mem, &flt), 0);
    double q = NAN;
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].title, title))
            assert_int_equal(kevo_memory_q_get(&q, n, mem, l->items[i].id, stage), 0);
    kevo_item_list_free(l);
    return q;
}

static void filter_case(fixture *f, int normalize)
{
    const char *keep = "keepme_relu", *drop = "dropme_gelu";
    kevo_memory *m = open_store(f, "f.db");
    fill(m, keep, drop, 1, normalize);
    kevo_memory_stats s0;
    assert_int_equal(kevo_memory_stats_get(&s0, m), 0);
    const char *names[] = {drop, "no_such_task"};
    kevo_filter_stats fs;
    kevo_learn_config lc;
    kevo_learn_config_init(&lc);
    lc.normalize = normalize; /* as fill() recorded */
    assert_int_equal(kevo_memory_filter_tasks(m, names, 2, &lc, &fs), 0);
    assert_int_equal(fs.tasks, 1);
    assert_int_equal(fs.attempts, 30);
    assert_int_equal(fs.runs, 1);
    assert_true(fs.items >= 30);
    assert_true(fs.q_recomputed >= 4);

    /* not in an export */
    char *out = in_dir(f, "filtered.jsonl");
    assert_int_equal(kevo_memory_export(m, out), 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(kevo_file_read(&text, &len, out), 0);
    assert_false(contains(text, len, "dropme"));
    assert_false(contains(text, len, "drop this operator"));
    assert_false(contains(text, len, "drop feedback"));
    assert_false(contains(text, len, "drop source"));
    assert_true(contains(text, len, keep));
    /* the shared run's config lost the name, kept the rest */
    assert_true(contains(text, len,
                         "{\\\"tasks\\\":[\\\"keepme_relu\\\"],\\\"by_task\\\":{},"
                         "\\\"model\\\":\\\"m\\\"}"));
    free(text);

    /* what the remaining attempts taught is what they alone would teach */
    kevo_memory *ref = open_store(f, "ref.db");
    fill(ref, keep, drop, 0, normalize);
    for (int i = 0; i < 4; i++) {
        char title[32];
        snprintf(title, sizeof(title), "shared lesson %d", i);
        for (int st = KEVO_STAGE_DRAFT; st <= KEVO_STAGE_REFINE; st++) {
            int64_t n1 = -1, n2 = -2;
            double q1 = q_of_title(m, title, (kevo_stage)st, &n1);
            double q2 = q_of_title(ref, title, (kevo_stage)st, &n2);
            assert_int_equal(n1, n2);
            assert_true(fabs(q1 - q2) < 1e-12);
        }
    }
    kevo_memory_stats sf, sr;
    assert_int_equal(kevo_memory_stats_get(&sf, m), 0);
    assert_int_equal(kevo_memory_stats_get(&sr, ref), 0);
    assert_int_equal(sf.attempts, sr.attempts);
    assert_int_equal(sf.items, sr.items);
    assert_int_equal(sf.edges_used, sr.edges_used);
    assert_int_equal(sf.q_starts, sr.q_starts);
    kevo_memory_free(ref);

    /* not in the search index */
    kevo_item_list *l = NULL;
    assert_int_equal(kevo_memory_item_search(&l, m, "dropme gelu drop", NULL), 0);
    assert_int_equal(l->n, 0);
    kevo_item_list_free(l);
    kevo_memory_task *t = NULL;
    assert_int_equal(kevo_memory_task_get(&t, m, drop), KEVO_ENOTFOUND);
    kevo_memory_free(m);

    /* not in the bytes on disk */
    char *db = in_dir(f, "f.db");
    assert_int_equal(kevo_file_read(&text, &len, db), 0);
    assert_false(contains(text, len, "dropme"));
    assert_false(contains(text, len, "drop feedback"));
    assert_true(contains(text, len, "keepme"));
    free(text);
    char *wal = in_dir(f, "f.db-wal");
    if (kevo_file_read(&text, &len, wal) == 0) {
        assert_false(contains(text, len, "dropme"));
        free(text);
    }
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw,
                                        "SELECT count(*) FROM item_vocab WHERE term = 'dropme'", -1,
                                        &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    free(wal);
    free(db);
    free(out);
}

static void test_memory__filter_leaves_no_trace(void **state)
{
    filter_case(*state, 0);
}

static void test_memory__filter_leaves_no_trace_normalized(void **state)
{
    filter_case(*state, 1);
}

/* Relearning after a filter uses the values the runs learnt with (their
 * stored configuration), not the library's defaults; runs that disagree
 * are refused, naming them. */
static void test_memory__filter_relearns_with_the_runs_values(void **state)
{
    kevo_memory *m = open_store(*state, "lc.db");
    kevo_learn_config lc;
    assert_int_equal(kevo_memory_learn_config_of_runs(&lc, m), 0); /* no run: defaults */
    assert_true(lc.alpha == 0.3 && lc.q_init == 0.0 && lc.normalize == 0);
    int64_t r1 = 0, r2 = 0, r3 = 0;
    assert_int_equal(kevo_memory_run_begin(m, "{\"alpha\":0.2,\"q_init\":0.5,\"normalize\":true}",
                                           &r1), 0);
    assert_int_equal(kevo_memory_run_begin(m, "{\"alpha\":0.2,\"q_init\":0.5,\"normalize\":true,"
                                              "\"seed\":7}", &r2), 0);
    assert_int_equal(kevo_memory_learn_config_of_runs(&lc, m), 0);
    assert_true(lc.alpha == 0.2 && lc.q_init == 0.5 && lc.normalize == 1);
    assert_int_equal(kevo_memory_run_begin(m, "{\"alpha\":0.3,\"q_init\":0.5}", &r3), 0);
    assert_int_equal(kevo_memory_learn_config_of_runs(&lc, m), KEVO_EINVAL);
    char want[64];
    snprintf(want, sizeof(want), "runs %lld and %lld", (long long)r1, (long long)r3);
    assert_non_null(strstr(kevo_error_last(), want));
    kevo_memory_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memory__export_import_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__import_rejects_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__filter_leaves_no_trace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory__filter_relearns_with_the_runs_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_memory__filter_leaves_no_trace_normalized, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
