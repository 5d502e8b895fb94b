/*
 * test_store_contract.c - the kevo_store contract (include/kevo/sys/store.h):
 * one list of tests that every store must pass, run against each store in
 * `impls` below (SQLite on a file, SQLite in memory; PostgreSQL once it
 * exists, skipped with a printed reason when no server is configured).
 *
 * Each test asserts what a method's comment in store.h promises (or what
 * kevo_memory relies on, said so where it is), through the vtable only.
 * It must not reach past the vtable: no sqlite3 calls, no internal
 * headers, no assumption about a store's ids beyond "positive, requested
 * ones honoured when free". Writes happen inside tx_begin/tx_commit, as
 * kevo_memory issues them.
 *
 * Adding a store: write its open_fresh (and open_again when a second
 * handle can reach the same storage) and add one line to `impls`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "contract_helpers.h"
#include "pg_helpers.h"
#include "kevo/sys/store.h"
#include "kevo/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the implementations under test ---------------------------------- */

typedef struct store_impl {
    const char *name;
    /* Open a fresh, empty store whose storage lives in (or is named after)
     * the private folder `dir`. 0 with *out NULL and *why set: not
     * available here (no server configured...): the tests skip. */
    int (*open_fresh)(kevo_store **out, const char **why, const char *dir);
    /* Optional: a second handle on the storage open_fresh made (another
     * process would see the same). NULL: the storage is private to one
     * handle (":memory:"); the tests that need two handles skip. */
    int (*open_again)(kevo_store **out, const char *dir);
    /* Optional: release what open_fresh made outside `dir` (after the
     * store is freed). */
    void (*cleanup)(const char *dir);
} store_impl;

static int sqlite_file_open(kevo_store **out, const char **why, const char *dir)
{
    (void)why;
    char *path = kevo_path_join(dir, "kevo.db");
    int error = kevo_store_sqlite_open(out, path, 0);
    free(path);
    return error;
}

static int sqlite_file_again(kevo_store **out, const char *dir)
{
    char *path = kevo_path_join(dir, "kevo.db");
    int error = kevo_store_sqlite_open(out, path, KEVO_MEMORY_MUST_EXIST);
    free(path);
    return error;
}

static int sqlite_memory_open(kevo_store **out, const char **why, const char *dir)
{
    (void)why;
    (void)dir;
    return kevo_store_sqlite_open(out, ":memory:", 0);
}

/* The PostgreSQL store (tests/unit/pg_helpers.h finds the server): each
 * fresh store is a schema of its own, whose URL is kept in the fixture's
 * folder for open_again and whose schema pg_cleanup drops. */
static int pg_open_url(kevo_store **out, const char *dir, unsigned flags)
{
    char *file = kevo_path_join(dir, "pg-url");
    char *url = NULL;
    int error = kevo_file_read(&url, NULL, file);
    if (error == 0)
        error = kevo_store_pg_open(out, url, flags);
    free(url);
    free(file);
    return error;
}

static int pg_open(kevo_store **out, const char **why, const char *dir)
{
    const char *server = pg_test_url(why);
    char schema[128], url[1400];
    *out = NULL;
    if (!server)
        return 0;
    if (pg_test_schema_new(schema, url, sizeof(url), server) < 0)
        return kevo_error_set(KEVO_EIO, "cannot make a test schema on %s", server);
    char *file = kevo_path_join(dir, "pg-url");
    char *sfile = kevo_path_join(dir, "pg-schema");
    int error = kevo_file_write(file, url, strlen(url));
    if (error == 0)
        error = kevo_file_write(sfile, schema, strlen(schema));
    free(file);
    free(sfile);
    return error < 0 ? error : pg_open_url(out, dir, 0);
}

static int pg_again(kevo_store **out, const char *dir)
{
    return pg_open_url(out, dir, KEVO_MEMORY_MUST_EXIST);
}

static void pg_cleanup(const char *dir)
{
    const char *why = NULL, *server = pg_test_url(&why);
    char *sfile = kevo_path_join(dir, "pg-schema");
    char *schema = NULL;
    if (server && kevo_file_read(&schema, NULL, sfile) == 0)
        pg_test_schema_drop(server, schema);
    free(schema);
    free(sfile);
}

static const store_impl impls[] = {
    {"sqlite-file", sqlite_file_open, sqlite_file_again, NULL},
    {"sqlite-memory", sqlite_memory_open, NULL, NULL},
    {"postgresql", pg_open, pg_again, pg_cleanup},
};

/* ---- fixture ----------------------------------------------------------- */

static const store_impl *current; /* the implementation the group runs against */

typedef struct fx {
    const store_impl *impl;
    char *dir;
    kevo_store *s;
    const char *why; /* when s is NULL */
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    f->impl = current;
    if (kevo_mkdtemp(&f->dir, "kevo-store-contract-") < 0)
        return -1;
    if (f->impl->open_fresh(&f->s, &f->why, f->dir) < 0) {
        print_error("%s: cannot open a fresh store: %s\n", f->impl->name, kevo_error_last());
        return -1;
    }
    if (!f->s && !f->why)
        f->why = "not available";
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (!f)
        return 0;
    kevo_store_free(f->s);
    if (f->impl->cleanup)
        f->impl->cleanup(f->dir);
    kevo_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* The fixture's store, or skip with the implementation's reason. */
static fx *ready(void **state)
{
    fx *f = *state;
    if (!f->s)
        CONTRACT_SKIP("store %s: %s", f->impl->name, f->why);
    return f;
}

#define OK(expr) assert_int_equal((expr), 0)

static void assert_str_or_null(const char *got, const char *want)
{
    if (!want)
        assert_null(got);
    else {
        assert_non_null(got);
        assert_string_equal(got, want);
    }
}

/* ---- collecting what *_each methods give ------------------------------ */

#define COLL_MAX 128

typedef struct coll {
    size_t n, calls;
    int64_t a[COLL_MAX], b[COLL_MAX], c[COLL_MAX];
    double x[COLL_MAX];
    char *str[COLL_MAX];
    size_t stop_at; /* return 1 on that call */
    int fail;       /* return this (< 0) on the first call */
} coll;

static int coll_push(coll *c, int64_t a, int64_t b, int64_t cc, double x, const char *str)
{
    c->calls++;
    if (c->n < COLL_MAX) {
        c->a[c->n] = a;
        c->b[c->n] = b;
        c->c[c->n] = cc;
        c->x[c->n] = x;
        c->str[c->n] = str ? strdup(str) : NULL;
        c->n++;
    }
    if (c->fail)
        return c->fail;
    if (c->stop_at && c->calls >= c->stop_at)
        return 1;
    return 0;
}

static void coll_reset(coll *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->str[i]);
    memset(c, 0, sizeof(*c));
}

static int cb_run(void *arg, const kevo_run *r)
{
    return coll_push(arg, r->id, r->finished, r->started, 0, r->status);
}

static int cb_task(void *arg, const kevo_memory_task *t, double score)
{
    return coll_push(arg, t->id, t->level, 0, score, t->name);
}

static int cb_attempt(void *arg, const kevo_attempt *a)
{
    return coll_push(arg, a->id, a->parent_id, a->run_id, a->reward, a->source);
}

static int cb_item(void *arg, const kevo_item *it, double score)
{
    return coll_push(arg, it->id, (int64_t)it->kind, 0, score, it->body);
}

static int cb_used(void *arg, const kevo_used_edge *e)
{
    return coll_push(arg, e->attempt_id, e->used.item_id, e->used.rank, e->used.tokens, NULL);
}

static int cb_distilled(void *arg, const kevo_distilled_edge *e)
{
    return coll_push(arg, e->item_id, e->attempt_id, 0, 0, NULL);
}

static int cb_q(void *arg, const kevo_q_row *row)
{
    return coll_push(arg, row->id, (int64_t)row->stage, row->n, row->q, NULL);
}

static int cb_start(void *arg, const kevo_start_point *sp)
{
    return coll_push(arg, sp->attempt_id, sp->n, 0, sp->q, NULL);
}

/* ---- record helpers (each write in its own, possibly nested, tx) ------- */

static int uid_serial;

static const char *next_uid(char *buf, size_t cap)
{
    snprintf(buf, cap, "contract-uid-%d", ++uid_serial);
    return buf;
}

static int64_t run_add(kevo_store *s, int64_t want)
{
    char uid[48];
    kevo_run r = {.id = want,
                  .uid = next_uid(uid, sizeof(uid)),
                  .config_json = "{\"budget\":3}",
                  .status = "running",
                  .started = 1700000000000,
                  .finished = 0};
    int64_t id = 0;
    OK(s->tx_begin(s));
    OK(s->run_insert(s, &r, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0);
    return id;
}

static kevo_attempt attempt_of(const char *task, kevo_verdict verdict)
{
    kevo_attempt a = {.task = task,
                      .backend = "c",
                      .generator = "builtin",
                      .stage = KEVO_STAGE_DRAFT,
                      .verdict = verdict,
                      .source = "void k(void) {}",
                      .candidate_us = 10.0,
                      .reference_us = 20.0,
                      .speedup = verdict == KEVO_VERDICT_CORRECT ? 2.0 : 0.0,
                      .created = 1700000000001};
    return a;
}

static int64_t attempt_put(kevo_store *s, kevo_attempt a)
{
    char uid[48];
    if (!a.uid)
        a.uid = next_uid(uid, sizeof(uid));
    int64_t id = 0;
    OK(s->tx_begin(s));
    OK(s->attempt_insert(s, &a, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0);
    return id;
}

static int64_t attempt_add(kevo_store *s, const char *task, kevo_verdict verdict)
{
    return attempt_put(s, attempt_of(task, verdict));
}

static kevo_item item_of(kevo_item_kind kind, const char *title, const char *body)
{
    kevo_item it = {.kind = kind, .title = title, .body = body, .created = 1700000000002};
    return it;
}

static int64_t item_put(kevo_store *s, kevo_item it)
{
    char uid[48];
    if (!it.uid)
        it.uid = next_uid(uid, sizeof(uid));
    int64_t id = 0;
    OK(s->tx_begin(s));
    OK(s->item_insert(s, &it, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0);
    return id;
}

static int64_t item_add(kevo_store *s, kevo_item_kind kind, const char *title, const char *body)
{
    return item_put(s, item_of(kind, title, body));
}

/* Items that match nothing the tests search for, so that the searched
 * words are rare (BM25 gives words in most documents no weight). */
static void fillers(kevo_store *s, int n)
{
    static const char *const words[] = {"alpha", "bravo", "charlie", "delta", "echo",
                                        "foxtrot", "golf", "hotel", "india", "juliet"};
    for (int i = 0; i < n; i++) {
        char title[64], body[128];
        snprintf(title, sizeof(title), "filler %s %d", words[i % 10], i);
        snprintf(body, sizeof(body), "%s %s unrelated padding text number %d", words[i % 10],
                 words[(i + 3) % 10], i);
        item_add(s, KEVO_ITEM_BEST_PRACTICE, title, body);
    }
}

static size_t count_runs(kevo_store *s)
{
    coll c = {0};
    OK(s->run_each(s, 0, cb_run, &c));
    size_t n = c.n;
    coll_reset(&c);
    return n;
}

static size_t count_attempts(kevo_store *s, const kevo_attempt_filter *flt)
{
    coll c = {0};
    OK(s->attempt_each(s, 0, flt, cb_attempt, &c));
    size_t n = c.n;
    coll_reset(&c);
    return n;
}

static size_t count_items(kevo_store *s)
{
    coll c = {0};
    OK(s->item_each(s, 0, NULL, cb_item, &c));
    size_t n = c.n;
    coll_reset(&c);
    return n;
}

static size_t count_tasks(kevo_store *s)
{
    coll c = {0};
    OK(s->task_each(s, NULL, cb_task, &c));
    size_t n = c.n;
    coll_reset(&c);
    return n;
}

/* ---- the vtable itself -------------------------------------------------- */

static void test_store__contract_vtable_complete(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    assert_true(s->version >= 1);
    assert_true(s->version <= KEVO_STORE_VERSION);
    assert_non_null(s->name);
    assert_true(strlen(s->name) > 0);
    /* every method but free and compact is required */
    void (*const required[])(void) = {
        (void (*)(void))s->tx_begin,       (void (*)(void))s->tx_begin_read,
        (void (*)(void))s->tx_commit,      (void (*)(void))s->tx_rollback,
        (void (*)(void))s->run_insert,     (void (*)(void))s->run_update,
        (void (*)(void))s->run_each,       (void (*)(void))s->run_delete,
        (void (*)(void))s->task_upsert,    (void (*)(void))s->task_each,
        (void (*)(void))s->task_search,    (void (*)(void))s->task_delete,
        (void (*)(void))s->attempt_insert, (void (*)(void))s->attempt_each,
        (void (*)(void))s->attempt_delete, (void (*)(void))s->attempt_set_reward,
        (void (*)(void))s->item_insert,    (void (*)(void))s->item_each,
        (void (*)(void))s->item_search,    (void (*)(void))s->item_lookup,
        (void (*)(void))s->item_delete,    (void (*)(void))s->find_uid,
        (void (*)(void))s->used_insert,    (void (*)(void))s->used_each,
        (void (*)(void))s->distilled_insert, (void (*)(void))s->distilled_each,
        (void (*)(void))s->q_get,          (void (*)(void))s->q_set,
        (void (*)(void))s->q_each,         (void (*)(void))s->start_each,
        (void (*)(void))s->reward_stats_get, (void (*)(void))s->reward_stats_set,
        (void (*)(void))s->stats,
    };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
        if (!required[i])
            fail_msg("store %s: required method #%zu is NULL", s->name, i);
    }
    /* a fresh store is empty */
    kevo_memory_stats st;
    OK(s->stats(s, &st));
    assert_int_equal(st.runs + st.tasks + st.attempts + st.items + st.edges_used +
                         st.edges_distilled + st.q_items + st.q_starts,
                     0);
}

/* ---- transactions ------------------------------------------------------ */

static void test_store__contract_tx_rollback(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t keep_item = item_add(s, KEVO_ITEM_EXPERIENCE, "kept", "committed before");

    OK(s->tx_begin(s));
    int64_t run = run_add(s, 0);
    kevo_memory_task t = {.name = "rolled_task", .description = "gone after rollback"};
    OK(s->task_upsert(s, &t, NULL));
    kevo_attempt a = attempt_of("rolled_task", KEVO_VERDICT_CORRECT);
    a.run_id = run;
    int64_t att = attempt_put(s, a);
    int64_t it = item_add(s, KEVO_ITEM_TRACE, "rolled", "rolledword body");
    kevo_used_item u = {.item_id = it, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 5};
    OK(s->used_insert(s, att, &u));
    OK(s->distilled_insert(s, it, att));
    kevo_q_row q = {KEVO_Q_ITEM, keep_item, KEVO_STAGE_DRAFT, 0.5, 1};
    OK(s->q_set(s, &q));
    kevo_reward_stats rs = {KEVO_STAGE_REFINE, 3, 0.25, 1.5};
    OK(s->reward_stats_set(s, &rs));
    OK(s->tx_rollback(s));

    kevo_memory_stats st;
    OK(s->stats(s, &st));
    assert_int_equal(st.runs, 0);
    assert_int_equal(st.tasks, 0);
    assert_int_equal(st.attempts, 0);
    assert_int_equal(st.items, 1);
    assert_int_equal(st.edges_used, 0);
    assert_int_equal(st.edges_distilled, 0);
    assert_int_equal(st.q_items, 0);
    double qv = 1;
    int64_t n = 1;
    OK(s->q_get(s, KEVO_Q_ITEM, keep_item, KEVO_STAGE_DRAFT, &qv, &n));
    assert_int_equal(n, 0);
    kevo_reward_stats got;
    OK(s->reward_stats_get(s, KEVO_STAGE_REFINE, &got));
    assert_int_equal(got.n, 0);
    /* the rolled-back item is not searchable either */
    coll c = {0};
    OK(s->item_search(s, "rolledword", NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    /* and the store still takes writes */
    run_add(s, 0);
    assert_int_equal(count_runs(s), 1);
}

static void test_store__contract_tx_nested(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    /* inner rollback keeps the outer transaction's writes */
    OK(s->tx_begin(s));
    run_add(s, 0);
    OK(s->tx_begin(s));
    run_add(s, 0);
    OK(s->tx_rollback(s));
    assert_int_equal(count_runs(s), 1);
    OK(s->tx_commit(s));
    assert_int_equal(count_runs(s), 1);

    /* an inner commit is undone by the outer rollback */
    OK(s->tx_begin(s));
    OK(s->tx_begin(s));
    run_add(s, 0);
    OK(s->tx_commit(s));
    OK(s->tx_rollback(s));
    assert_int_equal(count_runs(s), 1);

    /* three levels deep, committed all the way */
    OK(s->tx_begin(s));
    OK(s->tx_begin(s));
    OK(s->tx_begin(s));
    run_add(s, 0);
    OK(s->tx_commit(s));
    OK(s->tx_commit(s));
    OK(s->tx_commit(s));
    assert_int_equal(count_runs(s), 2);
}

static void test_store__contract_tx_unbalanced_is_an_error(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    assert_true(s->tx_commit(s) < 0);
    assert_true(s->tx_rollback(s) < 0);
    /* and the store is still usable */
    run_add(s, 0);
    assert_int_equal(count_runs(s), 1);
}

static void test_store__contract_tx_read_snapshot(void **state)
{
    fx *f = ready(state);
    kevo_store *a = f->s, *b = NULL;
    run_add(a, 0);
    /* a read transaction ends with commit or rollback like any other */
    OK(a->tx_begin_read(a));
    assert_int_equal(count_runs(a), 1);
    OK(a->tx_commit(a));
    OK(a->tx_begin_read(a));
    assert_int_equal(count_runs(a), 1);
    OK(a->tx_rollback(a));
    assert_int_equal(count_runs(a), 1);

    if (!f->impl->open_again)
        CONTRACT_SKIP("store %s: no second handle on the same storage", f->impl->name);
    OK(f->impl->open_again(&b, f->dir));
    OK(a->tx_begin_read(a));
    assert_int_equal(count_runs(a), 1);
    run_add(b, 0); /* committed by another handle while a reads */
    assert_int_equal(count_runs(b), 2);
    assert_int_equal(count_runs(a), 1); /* every read sees the same state */
    OK(a->tx_commit(a));
    assert_int_equal(count_runs(a), 2);
    kevo_store_free(b);
}

static void test_store__contract_tx_isolation(void **state)
{
    fx *f = ready(state);
    if (!f->impl->open_again)
        CONTRACT_SKIP("store %s: no second handle on the same storage", f->impl->name);
    kevo_store *a = f->s, *b = NULL;
    OK(f->impl->open_again(&b, f->dir));
    OK(a->tx_begin(a));
    run_add(a, 0);
    assert_int_equal(count_runs(a), 1);
    assert_int_equal(count_runs(b), 0); /* not committed yet */
    OK(a->tx_commit(a));
    assert_int_equal(count_runs(b), 1);
    kevo_store_free(b);
}

static void test_store__contract_durability(void **state)
{
    fx *f = ready(state);
    if (!f->impl->open_again)
        CONTRACT_SKIP("store %s: the storage does not outlive its handle", f->impl->name);
    kevo_store *s = f->s;
    int64_t kept = run_add(s, 0);
    OK(s->tx_begin(s));
    run_add(s, 0);
    item_add(s, KEVO_ITEM_EXPERIENCE, "never committed", "body");
    /* the handle goes away mid-transaction, as a killed process would */
    kevo_store_free(s);
    f->s = NULL;
    OK(f->impl->open_again(&f->s, f->dir));
    s = f->s;
    coll c = {0};
    OK(s->run_each(s, 0, cb_run, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], kept);
    coll_reset(&c);
    assert_int_equal(count_items(s), 0);
}

/* ---- runs ---------------------------------------------------------------- */

static int cb_run_exact(void *arg, const kevo_run *r)
{
    const kevo_run *want = arg;
    assert_int_equal(r->id, want->id);
    assert_str_or_null(r->uid, want->uid);
    assert_str_or_null(r->config_json, want->config_json);
    assert_str_or_null(r->status, want->status);
    assert_int_equal(r->started, want->started);
    assert_int_equal(r->finished, want->finished);
    ((kevo_run *)want)->id = -r->id; /* seen */
    return 0;
}

static void test_store__contract_run_roundtrip(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_run r = {.uid = "run-uid-1",
                  .config_json = "{\"tasks\":[\"relu\"],\"budget\":4}",
                  .status = "running",
                  .started = 1700000000123,
                  .finished = 0};
    int64_t id = 0;
    OK(s->tx_begin(s));
    OK(s->run_insert(s, &r, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0);
    kevo_run want = r;
    want.id = id;
    OK(s->run_each(s, id, cb_run_exact, &want));
    assert_int_equal(want.id, -id); /* the callback ran */

    /* run_each(0): all runs, by id */
    int64_t id2 = run_add(s, 0), id3 = run_add(s, 0);
    coll c = {0};
    OK(s->run_each(s, 0, cb_run, &c));
    assert_int_equal(c.n, 3);
    assert_int_equal(c.a[0], id);
    assert_true(c.a[0] < c.a[1] && c.a[1] < c.a[2]);
    assert_true((c.a[1] == id2 && c.a[2] == id3));
    coll_reset(&c);
    /* an unknown id: no row, no error */
    OK(s->run_each(s, id3 + 1000, cb_run, &c));
    assert_int_equal(c.n, 0);
}

static void test_store__contract_run_update(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t id = run_add(s, 0);
    OK(s->tx_begin(s));
    OK(s->run_update(s, id, "done", 1700000009999, NULL));
    OK(s->tx_commit(s));
    coll c = {0};
    OK(s->run_each(s, id, cb_run, &c));
    assert_int_equal(c.n, 1);
    assert_string_equal(c.str[0], "done");
    assert_int_equal(c.b[0], 1700000009999);
    coll_reset(&c);

    /* config_json NULL kept it; a new one replaces it */
    kevo_run want = {.id = id, .status = "stopped", .finished = 1700000010000,
                     .config_json = "{\"budget\":3}", .started = 1700000000000};
    char uid[48];
    snprintf(uid, sizeof(uid), "contract-uid-%d", uid_serial);
    want.uid = uid;
    OK(s->tx_begin(s));
    OK(s->run_update(s, id, "stopped", 1700000010000, NULL));
    OK(s->tx_commit(s));
    OK(s->run_each(s, id, cb_run_exact, &want));
    assert_int_equal(want.id, -id);
    OK(s->tx_begin(s));
    OK(s->run_update(s, id, "stopped", 1700000010000, "{\"budget\":9}"));
    OK(s->tx_commit(s));
    want.id = id;
    want.config_json = "{\"budget\":9}";
    OK(s->run_each(s, id, cb_run_exact, &want));
    assert_int_equal(want.id, -id);

    /* kevo_memory_run_finish passes this through as its own ENOTFOUND */
    OK(s->tx_begin(s));
    assert_int_equal(s->run_update(s, id + 77, "done", 1, NULL), KEVO_ENOTFOUND);
    OK(s->tx_rollback(s));
}

static void test_store__contract_run_delete(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t a = run_add(s, 0), b = run_add(s, 0);
    OK(s->tx_begin(s));
    OK(s->run_delete(s, a));
    /* deleting what is not there is not an error (filter.c deletes
     * defensively after cascades) */
    OK(s->run_delete(s, a));
    OK(s->run_delete(s, b + 1000));
    OK(s->tx_commit(s));
    coll c = {0};
    OK(s->run_each(s, 0, cb_run, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], b);
    coll_reset(&c);
    OK(s->run_each(s, a, cb_run, &c));
    assert_int_equal(c.n, 0);
}

/* ---- requested ids ------------------------------------------------------ */

static void test_store__contract_requested_ids(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    /* honoured when free */
    assert_int_equal(run_add(s, 42), 42);
    kevo_attempt a = attempt_of("ids_task", KEVO_VERDICT_CORRECT);
    a.id = 4242;
    assert_int_equal(attempt_put(s, a), 4242);
    kevo_item it = item_of(KEVO_ITEM_EXPERIENCE, "ids", "ids body");
    it.id = 424242;
    assert_int_equal(item_put(s, it), 424242);

    /* taken: a fresh id, reported through out_id */
    int64_t r2 = run_add(s, 42);
    assert_true(r2 > 0 && r2 != 42);
    int64_t a2 = attempt_put(s, a);
    assert_true(a2 > 0 && a2 != 4242);
    int64_t i2 = item_put(s, it);
    assert_true(i2 > 0 && i2 != 424242);

    /* the reported ids are the rows' ids */
    coll c = {0};
    OK(s->run_each(s, r2, cb_run, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], r2);
    coll_reset(&c);
    OK(s->attempt_each(s, a2, NULL, cb_attempt, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], a2);
    coll_reset(&c);
    OK(s->item_each(s, i2, NULL, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], i2);
    coll_reset(&c);
    assert_int_equal(count_runs(s), 2);
    assert_int_equal(count_items(s), 2);
    assert_int_equal(count_attempts(s, NULL), 2);
}

/* ---- tasks -------------------------------------------------------------- */

static int cb_task_exact(void *arg, const kevo_memory_task *t, double score)
{
    (void)score;
    kevo_memory_task *want = arg;
    if (want->id)
        assert_int_equal(t->id, want->id);
    assert_str_or_null(t->name, want->name);
    assert_int_equal(t->level, want->level);
    assert_str_or_null(t->category, want->category);
    assert_str_or_null(t->description, want->description);
    assert_str_or_null(t->reference, want->reference);
    assert_str_or_null(t->suite_path, want->suite_path);
    want->level = -1000 - want->level; /* seen */
    return 0;
}

static void test_store__contract_task_upsert(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_memory_task t = {.name = "relu",
                          .level = 1,
                          .category = "activation",
                          .description = "Elementwise ReLU",
                          .reference = "void relu(void) {}",
                          .suite_path = "suites/c/level1/001_relu"};
    int64_t id = 0, id2 = 0;
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &t, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0);
    kevo_memory_task want = t;
    want.id = id;
    OK(s->task_each(s, "relu", cb_task_exact, &want));
    assert_int_equal(want.level, -1001);

    /* NULL fields and level 0 keep the stored values; same id */
    kevo_memory_task bare = {.name = "relu"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &bare, &id2));
    OK(s->tx_commit(s));
    assert_int_equal(id2, id);
    want = t;
    want.id = id;
    OK(s->task_each(s, "relu", cb_task_exact, &want));
    assert_int_equal(want.level, -1001);

    /* given fields replace */
    kevo_memory_task upd = {.name = "relu", .level = 2, .description = "ReLU, again"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &upd, &id2));
    OK(s->tx_commit(s));
    assert_int_equal(id2, id);
    want.level = 2;
    want.description = "ReLU, again";
    OK(s->task_each(s, "relu", cb_task_exact, &want));
    assert_int_equal(want.level, -1002);

    /* task_each(NULL): all tasks by name */
    kevo_memory_task z = {.name = "zeta"}, a = {.name = "abs"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &z, NULL));
    OK(s->task_upsert(s, &a, NULL));
    OK(s->tx_commit(s));
    coll c = {0};
    OK(s->task_each(s, NULL, cb_task, &c));
    assert_int_equal(c.n, 3);
    assert_string_equal(c.str[0], "abs");
    assert_string_equal(c.str[1], "relu");
    assert_string_equal(c.str[2], "zeta");
    coll_reset(&c);
    OK(s->task_each(s, "no_such_task", cb_task, &c));
    assert_int_equal(c.n, 0);

    /* the name is required */
    kevo_memory_task nameless = {.level = 1, .description = "no name"};
    OK(s->tx_begin(s));
    assert_true(s->task_upsert(s, &nameless, NULL) < 0);
    OK(s->tx_rollback(s));
    assert_int_equal(count_tasks(s), 3);
}

static void test_store__contract_task_search(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_memory_task ts[] = {
        {.name = "zebra_stripes", .category = "zebra", .description = "zebra zebra stripes"},
        {.name = "matmul",
         .category = "gemm",
         .description = "a long description of a matrix multiply that mentions a zebra once "
                        "among many other words about tiles blocks and caches"},
        {.name = "relu", .category = "activation", .description = "Elementwise ReLU"},
        {.name = "softmax", .category = "normalization", .description = "Row softmax"},
    };
    int64_t ids[4];
    OK(s->tx_begin(s));
    for (int i = 0; i < 4; i++)
        OK(s->task_upsert(s, &ts[i], &ids[i]));
    OK(s->tx_commit(s));

    coll c = {0};
    OK(s->task_search(s, "zebra", 10, cb_task, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], ids[0]); /* name, category and description */
    assert_int_equal(c.a[1], ids[1]);
    assert_true(c.x[0] > c.x[1]); /* higher = better */
    coll_reset(&c);
    /* at most `limit` */
    OK(s->task_search(s, "zebra", 1, cb_task, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], ids[0]);
    coll_reset(&c);
    /* matches category */
    OK(s->task_search(s, "activation", 10, cb_task, &c));
    assert_int_equal(c.n, 1);
    assert_string_equal(c.str[0], "relu");
    coll_reset(&c);
    /* nothing matches: no row, no error */
    OK(s->task_search(s, "qwxyzzy", 10, cb_task, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    /* an updated description is what is searched */
    kevo_memory_task upd = {.name = "relu", .description = "rectifier quagga"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &upd, NULL));
    OK(s->tx_commit(s));
    OK(s->task_search(s, "quagga", 10, cb_task, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], ids[2]);
    coll_reset(&c);
}

static void test_store__contract_task_delete(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_memory_task t = {.name = "gone", .description = "okapi task"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &t, NULL));
    OK(s->tx_commit(s));
    attempt_add(s, "kept", KEVO_VERDICT_CORRECT);
    OK(s->tx_begin(s));
    OK(s->task_delete(s, "gone"));
    OK(s->task_delete(s, "never_there"));
    OK(s->tx_commit(s));
    coll c = {0};
    OK(s->task_each(s, NULL, cb_task, &c));
    assert_int_equal(c.n, 1);
    assert_string_equal(c.str[0], "kept");
    coll_reset(&c);
    OK(s->task_search(s, "okapi", 10, cb_task, &c));
    assert_int_equal(c.n, 0);
    assert_int_equal(count_attempts(s, NULL), 1);
}

/* ---- attempts ------------------------------------------------------------ */

static int cb_attempt_exact(void *arg, const kevo_attempt *a)
{
    kevo_attempt *w = arg;
    assert_int_equal(a->id, w->id);
    assert_int_equal(a->run_id, w->run_id);
    assert_str_or_null(a->task, w->task);
    assert_str_or_null(a->backend, w->backend);
    assert_str_or_null(a->generator, w->generator);
    assert_int_equal(a->stage, w->stage);
    assert_int_equal(a->iteration, w->iteration);
    assert_int_equal(a->parent_id, w->parent_id);
    assert_int_equal(a->verdict, w->verdict);
    assert_str_or_null(a->gates_json, w->gates_json);
    assert_str_or_null(a->feedback, w->feedback);
    assert_str_or_null(a->source, w->source);
    assert_str_or_null(a->recipes_json, w->recipes_json);
    assert_true(a->candidate_us == w->candidate_us);
    assert_true(a->reference_us == w->reference_us);
    assert_true(a->speedup == w->speedup);
    assert_int_equal(a->tokens_prompt, w->tokens_prompt);
    assert_int_equal(a->tokens_completion, w->tokens_completion);
    assert_int_equal(a->tokens_estimated, w->tokens_estimated);
    assert_int_equal(a->created, w->created);
    assert_str_or_null(a->uid, w->uid);
    assert_true(a->reward_raw == w->reward_raw);
    assert_true(a->reward == w->reward);
    w->iteration = -1; /* seen */
    return 0;
}

static void test_store__contract_attempt_roundtrip(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t run = run_add(s, 0);
    int64_t parent = attempt_add(s, "sigmoid", KEVO_VERDICT_CORRECT);
    kevo_attempt a = {.run_id = run,
                      .task = "sigmoid",
                      .backend = "opencl",
                      .generator = "replay",
                      .stage = KEVO_STAGE_REFINE,
                      .iteration = 3,
                      .parent_id = parent,
                      .verdict = KEVO_VERDICT_INCORRECT,
                      .gates_json = "[{\"gate\":\"compile\",\"ok\":true}]",
                      .feedback = "max abs error 0.5 at index 7",
                      .source = "__kernel void sigmoid() {}",
                      .recipes_json = "[\"unroll4\"]",
                      .candidate_us = 12.5,
                      .reference_us = 40.25,
                      .speedup = 0.0,
                      .tokens_prompt = 1234,
                      .tokens_completion = 567,
                      .tokens_estimated = 1,
                      .created = 1700000004242,
                      .uid = "attempt-uid-roundtrip",
                      .reward_raw = -0.75,
                      .reward = -1.25};
    int64_t id = 0;
    OK(s->tx_begin(s));
    OK(s->attempt_insert(s, &a, &id));
    OK(s->tx_commit(s));
    assert_true(id > 0 && id != parent);
    kevo_attempt want = a;
    want.id = id;
    OK(s->attempt_each(s, id, NULL, cb_attempt_exact, &want));
    assert_int_equal(want.iteration, -1);

    /* the task row was created when missing (bare: only its name) */
    kevo_memory_task wt = {.name = "sigmoid"};
    OK(s->task_each(s, "sigmoid", cb_task_exact, &wt));
    assert_int_equal(wt.level, -1000);

    /* a task that exists keeps its fields */
    kevo_memory_task full = {.name = "tanh", .level = 1, .category = "activation"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &full, NULL));
    OK(s->tx_commit(s));
    attempt_add(s, "tanh", KEVO_VERDICT_COMPILE_ERROR);
    OK(s->task_each(s, "tanh", cb_task_exact, &full));
    assert_int_equal(full.level, -1001);
    assert_int_equal(count_tasks(s), 2);

    /* an unknown id: nothing */
    coll c = {0};
    OK(s->attempt_each(s, id + 100, NULL, cb_attempt, &c));
    assert_int_equal(c.n, 0);
}

static void test_store__contract_attempt_bad_input(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    char uid[48];
    kevo_attempt bad[3];
    bad[0] = attempt_of("bad_task", KEVO_VERDICT_CORRECT);
    bad[0].stage = (kevo_stage)0; /* not a stage */
    bad[1] = attempt_of("bad_task", KEVO_VERDICT_CORRECT);
    bad[1].stage = (kevo_stage)3;
    bad[2] = attempt_of("bad_task", KEVO_VERDICT_CORRECT);
    bad[2].task = NULL; /* required */
    for (int i = 0; i < 3; i++) {
        bad[i].uid = next_uid(uid, sizeof(uid));
        int64_t id = -5;
        OK(s->tx_begin(s));
        int rc = s->attempt_insert(s, &bad[i], &id);
        OK(s->tx_rollback(s));
        if (rc >= 0)
            fail_msg("bad attempt #%d was accepted (rc %d, id %lld)", i, rc, (long long)id);
    }
    assert_int_equal(count_attempts(s, NULL), 0);
}

/* A verdict that is not a kevo_verdict is refused at insert (KEVO_EINVAL
 * naming the field), never stored under a made-up name: such a row would
 * make every later attempt_each that reaches it fail. */
static void test_store__contract_attempt_bad_verdict_refused(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    attempt_add(s, "good_task", KEVO_VERDICT_CORRECT);
    kevo_attempt a = attempt_of("bad_task", KEVO_VERDICT_CORRECT);
    a.verdict = KEVO_VERDICT_COUNT; /* no verdict */
    a.uid = "bad-verdict";
    OK(s->tx_begin(s));
    int rc = s->attempt_insert(s, &a, NULL);
    int named = rc < 0 && strstr(kevo_error_last(), "verdict") != NULL;
    coll c = {0};
    int list_rc = s->attempt_each(s, 0, NULL, cb_attempt, &c);
    coll_reset(&c);
    OK(s->tx_rollback(s));
    assert_int_equal(rc, KEVO_EINVAL);
    assert_true(named);
    assert_int_equal(list_rc, 0);
    assert_int_equal(count_attempts(s, NULL), 1);
}

static void test_store__contract_attempt_filters(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t r1 = run_add(s, 0), r2 = run_add(s, 0);
    int64_t it = item_add(s, KEVO_ITEM_RECIPE, "unroll4", "unroll by four");
    kevo_attempt a;
    int64_t id[6];
    a = attempt_of("t1", KEVO_VERDICT_CORRECT); /* 0: t1 c draft r1, 2.0x 10us */
    a.run_id = r1;
    id[0] = attempt_put(s, a);
    a = attempt_of("t1", KEVO_VERDICT_INCORRECT); /* 1: t1 c draft r1 */
    a.run_id = r1;
    a.source = "wrong";
    id[1] = attempt_put(s, a);
    a = attempt_of("t1", KEVO_VERDICT_CORRECT); /* 2: t1 opencl refine r2, child of 0, 3.0x 5us */
    a.run_id = r2;
    a.backend = "opencl";
    a.stage = KEVO_STAGE_REFINE;
    a.parent_id = id[0];
    a.speedup = 3.0;
    a.candidate_us = 5.0;
    id[2] = attempt_put(s, a);
    a = attempt_of("t2", KEVO_VERDICT_CORRECT); /* 3: t2 c draft r2, 3.0x 4us (ties 2 on speedup) */
    a.run_id = r2;
    a.speedup = 3.0;
    a.candidate_us = 4.0;
    id[3] = attempt_put(s, a);
    a = attempt_of("t1", KEVO_VERDICT_CORRECT); /* 4: t1 c refine, child of 0, 3.0x, no latency */
    a.stage = KEVO_STAGE_REFINE;
    a.parent_id = id[0];
    a.speedup = 3.0;
    a.candidate_us = 0.0;
    id[4] = attempt_put(s, a);
    a = attempt_of("t1", KEVO_VERDICT_TIMEOUT); /* 5: t1 c draft, no run */
    id[5] = attempt_put(s, a);
    kevo_used_item u = {.item_id = it, .stage = KEVO_STAGE_REFINE, .rank = 1, .tokens = 9};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, id[2], &u));
    OK(s->used_insert(s, id[4], &u));
    OK(s->tx_commit(s));

    struct {
        kevo_attempt_filter flt;
        size_t n;
        int want[6];
    } cases[] = {
        {{0}, 6, {0, 1, 2, 3, 4, 5}},
        {{.run_id = 0}, 6, {0, 1, 2, 3, 4, 5}},
        {{.run_id = 1}, 0, {0}}, /* replaced below by r1 */
        {{.task = "t2"}, 1, {3}},
        {{.task = "nope"}, 0, {0}},
        {{.backend = "opencl"}, 1, {2}},
        {{.parent_id = 1}, 0, {0}}, /* replaced below by id[0] */
        {{.used_item = 1}, 0, {0}}, /* replaced below by it */
        {{.correct_only = 1}, 4, {0, 2, 3, 4}},
        {{.stage = KEVO_STAGE_REFINE}, 2, {2, 4}},
        {{.stage = KEVO_STAGE_DRAFT, .task = "t1"}, 3, {0, 1, 5}},
        {{.limit = 2}, 2, {0, 1}},
        {{.newest_first = 1}, 6, {5, 4, 3, 2, 1, 0}},
        {{.newest_first = 1, .limit = 2}, 2, {5, 4}},
        /* speedup desc, then latency asc (none measured last), then id */
        {{.best_first = 1, .correct_only = 1}, 4, {3, 2, 4, 0}},
        {{.best_first = 1, .newest_first = 1, .correct_only = 1}, 4, {3, 2, 4, 0}},
        {{.task = "t1", .run_id = 2, .correct_only = 1}, 1, {2}},
    };
    cases[2].flt.run_id = r1;
    cases[2].n = 2;
    cases[2].want[0] = 0;
    cases[2].want[1] = 1;
    cases[16].flt.run_id = r2;
    cases[6].flt.parent_id = id[0];
    cases[6].n = 2;
    cases[6].want[0] = 2;
    cases[6].want[1] = 4;
    cases[7].flt.used_item = it;
    cases[7].n = 2;
    cases[7].want[0] = 2;
    cases[7].want[1] = 4;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        coll c = {0};
        OK(s->attempt_each(s, 0, &cases[k].flt, cb_attempt, &c));
        if (c.n != cases[k].n)
            fail_msg("filter case %zu: %zu attempts, want %zu", k, c.n, cases[k].n);
        for (size_t i = 0; i < c.n; i++)
            if (c.a[i] != id[cases[k].want[i]])
                fail_msg("filter case %zu: #%zu is attempt %lld, want %lld", k, i,
                         (long long)c.a[i], (long long)id[cases[k].want[i]]);
        coll_reset(&c);
    }

    /* no_source leaves source NULL, the rest is there */
    kevo_attempt_filter ns = {.no_source = 1, .task = "t1"};
    coll c = {0};
    OK(s->attempt_each(s, 0, &ns, cb_attempt, &c));
    assert_int_equal(c.n, 5);
    for (size_t i = 0; i < c.n; i++)
        assert_null(c.str[i]);
    coll_reset(&c);
    OK(s->attempt_each(s, 0, NULL, cb_attempt, &c));
    assert_string_equal(c.str[1], "wrong");
    coll_reset(&c);
}

static void test_store__contract_attempt_set_reward(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_attempt a = attempt_of("rw", KEVO_VERDICT_CORRECT);
    a.reward_raw = 0.5;
    a.reward = 0.25;
    int64_t id = attempt_put(s, a), other = attempt_put(s, a);
    OK(s->tx_begin(s));
    OK(s->attempt_set_reward(s, id, -0.875));
    OK(s->tx_commit(s));
    kevo_attempt want = a;
    char uid[48];
    snprintf(uid, sizeof(uid), "contract-uid-%d", uid_serial - 1);
    want.uid = uid;
    want.id = id;
    want.reward = -0.875; /* reward_raw stays */
    OK(s->attempt_each(s, id, NULL, cb_attempt_exact, &want));
    assert_int_equal(want.iteration, -1);
    coll c = {0};
    OK(s->attempt_each(s, other, NULL, cb_attempt, &c));
    assert_int_equal(c.n, 1);
    assert_true(c.x[0] == 0.25);
    coll_reset(&c);
}

static void test_store__contract_attempt_delete_cascades(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t it = item_add(s, KEVO_ITEM_EXPERIENCE, "lesson", "lesson body");
    int64_t root = attempt_add(s, "casc", KEVO_VERDICT_CORRECT);
    kevo_attempt a = attempt_of("casc", KEVO_VERDICT_CORRECT);
    a.stage = KEVO_STAGE_REFINE;
    a.parent_id = root;
    int64_t child = attempt_put(s, a);
    a.parent_id = child;
    int64_t grandchild = attempt_put(s, a);
    int64_t other = attempt_add(s, "casc", KEVO_VERDICT_CORRECT);
    kevo_used_item u = {.item_id = it, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 3};
    kevo_q_row q_root = {KEVO_Q_START, root, KEVO_STAGE_REFINE, 0.5, 2};
    kevo_q_row q_gc = {KEVO_Q_START, grandchild, KEVO_STAGE_REFINE, 0.1, 1};
    kevo_q_row q_other = {KEVO_Q_START, other, KEVO_STAGE_REFINE, 0.7, 1};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, root, &u));
    OK(s->used_insert(s, grandchild, &u));
    OK(s->used_insert(s, other, &u));
    OK(s->distilled_insert(s, it, root));
    OK(s->distilled_insert(s, it, grandchild));
    OK(s->distilled_insert(s, it, other));
    OK(s->q_set(s, &q_root));
    OK(s->q_set(s, &q_gc));
    OK(s->q_set(s, &q_other));
    OK(s->tx_commit(s));

    OK(s->tx_begin(s));
    OK(s->attempt_delete(s, root));
    OK(s->attempt_delete(s, root)); /* not there any more: not an error */
    OK(s->tx_commit(s));

    coll c = {0};
    OK(s->attempt_each(s, 0, NULL, cb_attempt, &c));
    assert_int_equal(c.n, 1); /* child and grandchild went with root */
    assert_int_equal(c.a[0], other);
    coll_reset(&c);
    OK(s->used_each(s, 0, 0, cb_used, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], other);
    coll_reset(&c);
    OK(s->distilled_each(s, 0, 0, cb_distilled, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.b[0], other);
    coll_reset(&c);
    OK(s->q_each(s, KEVO_Q_START, cb_q, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], other);
    coll_reset(&c);
    double qv = 9;
    int64_t n = 9;
    OK(s->q_get(s, KEVO_Q_START, root, KEVO_STAGE_REFINE, &qv, &n));
    assert_int_equal(n, 0);
    assert_true(qv == 0.0);
    assert_int_equal(count_items(s), 1); /* items are not attempts' to delete */
}

/* ---- items --------------------------------------------------------------- */

static int cb_item_exact(void *arg, const kevo_item *it, double score)
{
    (void)score;
    kevo_item *w = arg;
    assert_int_equal(it->id, w->id);
    assert_int_equal(it->kind, w->kind);
    assert_str_or_null(it->title, w->title);
    assert_str_or_null(it->body, w->body);
    assert_str_or_null(it->category, w->category);
    assert_str_or_null(it->task, w->task);
    assert_str_or_null(it->backend, w->backend);
    assert_str_or_null(it->tags, w->tags);
    assert_int_equal(it->created, w->created);
    assert_str_or_null(it->uid, w->uid);
    w->created = -1; /* seen */
    return 0;
}

static void test_store__contract_item_roundtrip(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++) {
        char uid[32], title[32];
        snprintf(uid, sizeof(uid), "item-uid-%d", k);
        snprintf(title, sizeof(title), "title %d", k);
        kevo_item it = {.kind = (kevo_item_kind)k,
                        .title = title,
                        .body = "the body\nwith two lines and unicode: \xc3\xa9",
                        .category = k % 2 ? "activation" : NULL,
                        .task = k % 2 ? NULL : "relu",
                        .backend = k == 1 ? "cuda" : NULL,
                        .tags = "bundle memory-bound",
                        .created = 1700000000000 + k,
                        .uid = uid};
        int64_t id = 0;
        OK(s->tx_begin(s));
        OK(s->item_insert(s, &it, &id));
        OK(s->tx_commit(s));
        assert_true(id > 0);
        kevo_item want = it;
        want.id = id;
        OK(s->item_each(s, id, NULL, cb_item_exact, &want));
        assert_int_equal(want.created, -1);
    }
    assert_int_equal(count_items(s), KEVO_ITEM_KIND_MAX);

    /* title and body are required */
    kevo_item no_title = item_of(KEVO_ITEM_EXPERIENCE, NULL, "body");
    kevo_item no_body = item_of(KEVO_ITEM_EXPERIENCE, "title", NULL);
    no_title.uid = "item-uid-bad-1";
    no_body.uid = "item-uid-bad-2";
    OK(s->tx_begin(s));
    assert_true(s->item_insert(s, &no_title, NULL) < 0);
    OK(s->tx_rollback(s));
    OK(s->tx_begin(s));
    assert_true(s->item_insert(s, &no_body, NULL) < 0);
    OK(s->tx_rollback(s));
    assert_int_equal(count_items(s), KEVO_ITEM_KIND_MAX);
}

static void test_store__contract_item_filters(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_item it;
    int64_t id[6];
    it = item_of(KEVO_ITEM_API_DOC, "clEnqueue", "doc");
    it.backend = "opencl";
    it.tags = "bundle";
    id[0] = item_put(s, it);
    it = item_of(KEVO_ITEM_API_DOC, "cudaMemcpy", "doc");
    it.backend = "cuda";
    it.tags = "bundle vector";
    id[1] = item_put(s, it);
    it = item_of(KEVO_ITEM_EXPERIENCE, "lesson", "doc");
    it.category = "activation";
    it.task = "relu";
    it.tags = "vectorize";
    id[2] = item_put(s, it);
    it = item_of(KEVO_ITEM_BEST_PRACTICE, "advice", "doc");
    it.category = "activation";
    it.tags = "memory_bound";
    id[3] = item_put(s, it);
    it = item_of(KEVO_ITEM_TRACE, "trace", "doc");
    it.task = "relu";
    it.backend = "opencl";
    id[4] = item_put(s, it);
    it = item_of(KEVO_ITEM_RECIPE, "unroll", "doc");
    id[5] = item_put(s, it);

    struct {
        kevo_item_filter flt;
        size_t n;
        int want[6];
    } cases[] = {
        {{0}, 6, {0, 1, 2, 3, 4, 5}},
        {{.kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC)}, 2, {0, 1}},
        {{.kinds = KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE) | KEVO_ITEM_BIT(KEVO_ITEM_RECIPE)},
         2,
         {2, 5}},
        {{.category = "activation"}, 2, {2, 3}},
        {{.task = "relu"}, 2, {2, 4}},
        /* that backend's items and those with none */
        {{.backend = "opencl"}, 5, {0, 2, 3, 4, 5}},
        {{.backend = "cuda", .kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC)}, 1, {1}},
        /* one whole word of tags */
        {{.tag = "bundle"}, 2, {0, 1}},
        {{.tag = "vector"}, 1, {1}},
        {{.tag = "vec"}, 0, {0}},
        {{.limit = 2}, 2, {0, 1}},
        {{.limit = 2, .offset = 3}, 2, {3, 4}},
        {{.offset = 4}, 2, {4, 5}},
        {{.newest_first = 1, .limit = 3}, 3, {5, 4, 3}},
        {{.newest_first = 1, .offset = 1, .kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC)}, 1, {0}},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        coll c = {0};
        OK(s->item_each(s, 0, &cases[k].flt, cb_item, &c));
        if (c.n != cases[k].n)
            fail_msg("item filter case %zu: %zu items, want %zu", k, c.n, cases[k].n);
        for (size_t i = 0; i < c.n; i++)
            if (c.a[i] != id[cases[k].want[i]])
                fail_msg("item filter case %zu: #%zu is item %lld, want %lld", k, i,
                         (long long)c.a[i], (long long)id[cases[k].want[i]]);
        coll_reset(&c);
    }
    /* no_body leaves body NULL */
    kevo_item_filter nb = {.no_body = 1};
    coll c = {0};
    OK(s->item_each(s, 0, &nb, cb_item, &c));
    assert_int_equal(c.n, 6);
    for (size_t i = 0; i < c.n; i++)
        assert_null(c.str[i]);
    coll_reset(&c);
}

/* The tag filter is one literal word of the space-separated tags: '_' and
 * '%' are plain characters (tag "memory_bound" does not match
 * "memoryXbound"), and a word is never matched inside another. */
static void test_store__contract_item_filter_tag_is_literal(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_item it = item_of(KEVO_ITEM_BEST_PRACTICE, "a", "doc");
    it.tags = "memory_bound";
    int64_t want = item_put(s, it);
    it.tags = "memoryXbound";
    item_put(s, it);
    it.tags = "compute-bound 100%";
    item_put(s, it);
    kevo_item_filter flt = {.tag = "memory_bound"};
    coll c = {0};
    OK(s->item_each(s, 0, &flt, cb_item, &c));
    size_t n = c.n;
    int64_t first = c.n ? c.a[0] : 0;
    coll_reset(&c);
    assert_int_equal(n, 1);
    assert_int_equal(first, want);
    flt.tag = "%"; /* no item has the word "%" (one has "100%") */
    OK(s->item_each(s, 0, &flt, cb_item, &c));
    n = c.n;
    coll_reset(&c);
    assert_int_equal(n, 0);
    flt.tag = "memory"; /* a part of a word is not the word */
    OK(s->item_each(s, 0, &flt, cb_item, &c));
    n = c.n;
    coll_reset(&c);
    assert_int_equal(n, 0);
    flt.tag = "100%"; /* the second word of "compute-bound 100%" */
    OK(s->item_each(s, 0, &flt, cb_item, &c));
    n = c.n;
    coll_reset(&c);
    assert_int_equal(n, 1);
}

static void test_store__contract_item_search_ranking(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 12);
    int64_t strong = item_add(s, KEVO_ITEM_EXPERIENCE, "narwhal tiling", "narwhal narwhal tiles");
    int64_t weak =
        item_add(s, KEVO_ITEM_EXPERIENCE, "a long note",
                 "this note is long and talks about many things: caches, loops, vector widths, "
                 "register pressure, and once about a narwhal, then more about memory traffic");
    kevo_item t = item_of(KEVO_ITEM_TRACE, "narwhal trace", "narwhal source");
    t.backend = "cuda";
    t.category = "activation";
    t.tags = "fast";
    int64_t trace = item_put(s, t);

    coll c = {0};
    OK(s->item_search(s, "narwhal", NULL, cb_item, &c));
    assert_int_equal(c.n, 3);
    for (size_t i = 1; i < c.n; i++)
        assert_true(c.x[i - 1] >= c.x[i]); /* best first, higher = better */
    assert_int_equal(c.a[c.n - 1], weak);
    assert_true(c.x[0] > c.x[c.n - 1]);
    assert_non_null(c.str[0]); /* bodies come back */
    coll_reset(&c);

    /* a query word nothing has, next to one that matches: still found */
    OK(s->item_search(s, "qqzzyx narwhal", NULL, cb_item, &c));
    assert_int_equal(c.n, 3);
    coll_reset(&c);
    /* nothing matches: no row, no error */
    OK(s->item_search(s, "qqzzyx", NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);

    /* filters */
    kevo_item_filter k1 = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_TRACE)};
    OK(s->item_search(s, "narwhal", &k1, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], trace);
    coll_reset(&c);
    kevo_item_filter k3 = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_EXPERIENCE) |
                                    KEVO_ITEM_BIT(KEVO_ITEM_API_DOC) |
                                    KEVO_ITEM_BIT(KEVO_ITEM_RECIPE)};
    OK(s->item_search(s, "narwhal", &k3, cb_item, &c));
    assert_int_equal(c.n, 2);
    assert_true((c.a[0] == strong && c.a[1] == weak));
    coll_reset(&c);
    kevo_item_filter be = {.backend = "opencl"}; /* excludes the cuda trace */
    OK(s->item_search(s, "narwhal", &be, cb_item, &c));
    assert_int_equal(c.n, 2);
    coll_reset(&c);
    kevo_item_filter cat = {.category = "activation"};
    OK(s->item_search(s, "narwhal", &cat, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], trace);
    coll_reset(&c);
    kevo_item_filter tag = {.tag = "fast", .no_body = 1};
    OK(s->item_search(s, "narwhal", &tag, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], trace);
    assert_null(c.str[0]);
    coll_reset(&c);
    kevo_item_filter lim = {.limit = 1};
    OK(s->item_search(s, "narwhal", &lim, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0] == weak, 0);
    coll_reset(&c);
}

static void test_store__contract_item_search_default_limit(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 30);
    for (int i = 0; i < 25; i++) {
        char title[32];
        snprintf(title, sizeof(title), "quokka note %d", i);
        item_add(s, KEVO_ITEM_EXPERIENCE, title, "quokka");
    }
    coll c = {0};
    OK(s->item_search(s, "quokka", NULL, cb_item, &c));
    assert_int_equal(c.n, 20); /* at most 20 when limit is 0 */
    coll_reset(&c);
    kevo_item_filter lim = {.limit = 25};
    OK(s->item_search(s, "quokka", &lim, cb_item, &c));
    assert_int_equal(c.n, 25);
    coll_reset(&c);
}

/* A search sees the items added after an earlier search, also for a word
 * no item had then (the SQLite store caches document frequencies: the
 * cache must follow inserts, deletes and rollbacks). */
static void test_store__contract_item_search_sees_new_items(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 6);
    coll c = {0};
    OK(s->item_search(s, "axolotl", NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    int64_t id = item_add(s, KEVO_ITEM_EXPERIENCE, "axolotl lesson", "the axolotl regrows");
    OK(s->item_search(s, "axolotl", NULL, cb_item, &c));
    size_t n = c.n;
    int64_t first = c.n ? c.a[0] : 0;
    coll_reset(&c);
    assert_int_equal(n, 1);
    assert_int_equal(first, id);
}

static size_t search_count(kevo_store *s, const char *query)
{
    coll c = {0};
    OK(s->item_search(s, query, NULL, cb_item, &c));
    size_t n = c.n;
    coll_reset(&c);
    return n;
}

/* What a search sees follows rollbacks and deletes too. */
static void test_store__contract_item_search_follows_rollback_and_delete(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 6);
    int64_t keep = item_add(s, KEVO_ITEM_EXPERIENCE, "capybara one", "a capybara");
    assert_int_equal(search_count(s, "capybara"), 1);
    /* added and searched inside a transaction, then rolled back */
    kevo_item it = item_of(KEVO_ITEM_EXPERIENCE, "capybara two", "capybara again");
    char uid[48];
    it.uid = next_uid(uid, sizeof(uid));
    OK(s->tx_begin(s));
    int64_t id = 0;
    OK(s->item_insert(s, &it, &id));
    assert_int_equal(search_count(s, "capybara"), 2);
    OK(s->tx_rollback(s));
    assert_int_equal(search_count(s, "capybara"), 1);
    /* deleted */
    OK(s->tx_begin(s));
    OK(s->item_delete(s, keep));
    OK(s->tx_commit(s));
    assert_int_equal(search_count(s, "capybara"), 0);
    /* non-ASCII text is counted as the index tokenizes it */
    item_add(s, KEVO_ITEM_EXPERIENCE, "caf\xc3\xa9 capybara", "na\xc3\xafve capybara");
    assert_int_equal(search_count(s, "capybara"), 1);
}

/* A search on one handle sees what another handle on the same storage
 * committed after the first handle's last search. */
static void test_store__contract_item_search_sees_other_handle(void **state)
{
    fx *f = ready(state);
    kevo_store *b = NULL;
    if (!f->impl->open_again)
        CONTRACT_SKIP("store %s: no second handle on the same storage", f->impl->name);
    fillers(f->s, 6);
    assert_int_equal(search_count(f->s, "pangolin"), 0);
    OK(f->impl->open_again(&b, f->dir));
    item_add(b, KEVO_ITEM_EXPERIENCE, "pangolin scales", "the pangolin rolls up");
    assert_int_equal(search_count(f->s, "pangolin"), 1);
    kevo_store_free(b);
}

/* With only a backend filter the search still finds a matching item of
 * that backend ranked below many of other backends: the filter applies
 * before the limit, never after. */
static void test_store__contract_item_search_backend_filter_complete(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 40);
    for (int i = 0; i < 14; i++) {
        kevo_item it = item_of(KEVO_ITEM_TRACE, "wombat wombat", "wombat wombat wombat");
        it.backend = "opencl";
        item_put(s, it);
    }
    kevo_item mine =
        item_of(KEVO_ITEM_TRACE, "cuda note",
                "a long body about many other things: warps, shared memory, occupancy, "
                "registers, coalescing, streams, and once a wombat");
    mine.backend = "cuda";
    int64_t want = item_put(s, mine);
    kevo_item_filter flt = {.backend = "cuda", .limit = 1};
    coll c = {0};
    OK(s->item_search(s, "wombat", &flt, cb_item, &c));
    size_t n = c.n;
    int64_t first = c.n ? c.a[0] : 0;
    coll_reset(&c);
    assert_int_equal(n, 1);
    assert_int_equal(first, want);
}

static void test_store__contract_item_lookup(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_item it = item_of(KEVO_ITEM_API_DOC, "barrier", "generic");
    int64_t generic = item_put(s, it);
    it.backend = "opencl";
    it.body = "opencl barrier";
    int64_t ocl = item_put(s, it);
    it.backend = "cuda";
    int64_t cuda = item_put(s, it);
    it = item_of(KEVO_ITEM_EXPERIENCE, "barrier", "not an api doc");
    item_put(s, it);
    it = item_of(KEVO_ITEM_API_DOC, "Barrier", "other case");
    item_put(s, it);
    it = item_of(KEVO_ITEM_API_DOC, "barrier2", "other title");
    item_put(s, it);

    coll c = {0};
    OK(s->item_lookup(s, KEVO_ITEM_API_DOC, "barrier", "opencl", cb_item, &c));
    assert_int_equal(c.n, 2); /* that backend's first, then the backend-less */
    assert_int_equal(c.a[0], ocl);
    assert_int_equal(c.a[1], generic);
    coll_reset(&c);
    OK(s->item_lookup(s, KEVO_ITEM_API_DOC, "barrier", "cuda", cb_item, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], cuda);
    assert_int_equal(c.a[1], generic);
    coll_reset(&c);
    OK(s->item_lookup(s, KEVO_ITEM_API_DOC, "barrier", "metal", cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], generic);
    coll_reset(&c);
    OK(s->item_lookup(s, KEVO_ITEM_API_DOC, "barr", "opencl", cb_item, &c));
    assert_int_equal(c.n, 0); /* exactly the title */
    coll_reset(&c);
    OK(s->item_lookup(s, KEVO_ITEM_RECIPE, "barrier", "opencl", cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
}

static void test_store__contract_item_delete_cascades(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 4);
    int64_t gone = item_add(s, KEVO_ITEM_EXPERIENCE, "pangolin", "pangolin body");
    int64_t kept = item_add(s, KEVO_ITEM_EXPERIENCE, "kept", "kept body");
    int64_t att = attempt_add(s, "itdel", KEVO_VERDICT_CORRECT);
    kevo_used_item u1 = {.item_id = gone, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 1};
    kevo_used_item u2 = {.item_id = kept, .stage = KEVO_STAGE_DRAFT, .rank = 2, .tokens = 1};
    kevo_q_row q1 = {KEVO_Q_ITEM, gone, KEVO_STAGE_DRAFT, 0.5, 1};
    kevo_q_row q2 = {KEVO_Q_ITEM, gone, KEVO_STAGE_REFINE, 0.25, 2};
    kevo_q_row q3 = {KEVO_Q_ITEM, kept, KEVO_STAGE_DRAFT, 0.75, 3};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, att, &u1));
    OK(s->used_insert(s, att, &u2));
    OK(s->distilled_insert(s, gone, att));
    OK(s->distilled_insert(s, kept, att));
    OK(s->q_set(s, &q1));
    OK(s->q_set(s, &q2));
    OK(s->q_set(s, &q3));
    OK(s->tx_commit(s));
    OK(s->tx_begin(s));
    OK(s->item_delete(s, gone));
    OK(s->item_delete(s, gone)); /* not there: not an error */
    OK(s->tx_commit(s));

    coll c = {0};
    OK(s->item_each(s, gone, NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    OK(s->used_each(s, att, 0, cb_used, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.b[0], kept);
    coll_reset(&c);
    OK(s->distilled_each(s, 0, att, cb_distilled, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], kept);
    coll_reset(&c);
    OK(s->q_each(s, KEVO_Q_ITEM, cb_q, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], kept);
    coll_reset(&c);
    OK(s->item_search(s, "pangolin", NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    assert_int_equal(count_attempts(s, NULL), 1);
}

/* ---- uids ------------------------------------------------------------------ */

static void test_store__contract_find_uid(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_run r = {.uid = "R-1", .config_json = "{}", .status = "running", .started = 1};
    kevo_attempt a = attempt_of("uidtask", KEVO_VERDICT_CORRECT);
    a.uid = "A-1";
    kevo_item it = item_of(KEVO_ITEM_EXPERIENCE, "u", "u");
    it.uid = "I-1";
    int64_t rid = 0, aid = 0, iid = 0, got = 0;
    OK(s->tx_begin(s));
    OK(s->run_insert(s, &r, &rid));
    OK(s->attempt_insert(s, &a, &aid));
    OK(s->item_insert(s, &it, &iid));
    OK(s->tx_commit(s));
    OK(s->find_uid(s, KEVO_STORE_RUNS, "R-1", &got));
    assert_int_equal(got, rid);
    OK(s->find_uid(s, KEVO_STORE_ATTEMPTS, "A-1", &got));
    assert_int_equal(got, aid);
    OK(s->find_uid(s, KEVO_STORE_ITEMS, "I-1", &got));
    assert_int_equal(got, iid);
    /* not found: KEVO_ENOTFOUND; a uid of another table is not found */
    assert_int_equal(s->find_uid(s, KEVO_STORE_RUNS, "nope", &got), KEVO_ENOTFOUND);
    assert_int_equal(s->find_uid(s, KEVO_STORE_RUNS, "A-1", &got), KEVO_ENOTFOUND);
    assert_int_equal(s->find_uid(s, KEVO_STORE_ITEMS, "R-1", &got), KEVO_ENOTFOUND);
    assert_int_equal(s->find_uid(s, KEVO_STORE_ATTEMPTS, "I-1", &got), KEVO_ENOTFOUND);
    /* gone with its record */
    OK(s->tx_begin(s));
    OK(s->item_delete(s, iid));
    OK(s->tx_commit(s));
    assert_int_equal(s->find_uid(s, KEVO_STORE_ITEMS, "I-1", &got), KEVO_ENOTFOUND);
}

/* ---- edges ----------------------------------------------------------------- */

static void test_store__contract_used_edges(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t i1 = item_add(s, KEVO_ITEM_EXPERIENCE, "e1", "b");
    int64_t i2 = item_add(s, KEVO_ITEM_EXPERIENCE, "e2", "b");
    int64_t i3 = item_add(s, KEVO_ITEM_EXPERIENCE, "e3", "b");
    int64_t a1 = attempt_add(s, "edges", KEVO_VERDICT_CORRECT);
    int64_t a2 = attempt_add(s, "edges", KEVO_VERDICT_INCORRECT);
    kevo_used_item u[] = {
        {.item_id = i1, .stage = KEVO_STAGE_DRAFT, .rank = 3, .tokens = 30},
        {.item_id = i2, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 10},
        {.item_id = i3, .stage = KEVO_STAGE_DRAFT, .rank = 2, .tokens = 20},
    };
    kevo_used_item dup = {.item_id = i2, .stage = KEVO_STAGE_REFINE, .rank = 9, .tokens = 99};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, a2, &u[0])); /* a2 first: order is by attempt id, not insertion */
    for (int i = 0; i < 3; i++)
        OK(s->used_insert(s, a1, &u[i]));
    OK(s->used_insert(s, a1, &dup)); /* existing edge: a no-op */
    OK(s->tx_commit(s));

    coll c = {0};
    OK(s->used_each(s, 0, 0, cb_used, &c));
    assert_int_equal(c.n, 4);
    int64_t want_att[] = {a1, a1, a1, a2}, want_item[] = {i2, i3, i1, i1};
    int64_t want_rank[] = {1, 2, 3, 3};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c.a[i], want_att[i]);
        assert_int_equal(c.b[i], want_item[i]);
        assert_int_equal(c.c[i], want_rank[i]);
    }
    assert_true(c.x[0] == 10); /* the duplicate did not overwrite */
    coll_reset(&c);
    OK(s->used_each(s, a1, 0, cb_used, &c));
    assert_int_equal(c.n, 3);
    assert_int_equal(c.b[0], i2);
    assert_int_equal(c.b[2], i1);
    coll_reset(&c);
    OK(s->used_each(s, 0, i1, cb_used, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], a1);
    assert_int_equal(c.a[1], a2);
    coll_reset(&c);
    OK(s->used_each(s, a2, i1, cb_used, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.c[0], 3);
    coll_reset(&c);
    OK(s->used_each(s, a2, i2, cb_used, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
}

static void test_store__contract_distilled_edges(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t a1 = attempt_add(s, "dist", KEVO_VERDICT_CORRECT);
    int64_t a2 = attempt_add(s, "dist", KEVO_VERDICT_CORRECT);
    int64_t i1 = item_add(s, KEVO_ITEM_EXPERIENCE, "d1", "b");
    int64_t i2 = item_add(s, KEVO_ITEM_EXPERIENCE, "d2", "b");
    OK(s->tx_begin(s));
    OK(s->distilled_insert(s, i2, a2));
    OK(s->distilled_insert(s, i2, a1));
    OK(s->distilled_insert(s, i1, a2));
    OK(s->distilled_insert(s, i1, a2)); /* existing: a no-op */
    OK(s->tx_commit(s));
    coll c = {0};
    OK(s->distilled_each(s, 0, 0, cb_distilled, &c));
    assert_int_equal(c.n, 3); /* by item id, then attempt id */
    assert_int_equal(c.a[0], i1);
    assert_int_equal(c.b[0], a2);
    assert_int_equal(c.a[1], i2);
    assert_int_equal(c.b[1], a1);
    assert_int_equal(c.a[2], i2);
    assert_int_equal(c.b[2], a2);
    coll_reset(&c);
    OK(s->distilled_each(s, i2, 0, cb_distilled, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.b[0], a1);
    coll_reset(&c);
    OK(s->distilled_each(s, 0, a2, cb_distilled, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], i1);
    assert_int_equal(c.a[1], i2);
    coll_reset(&c);
    OK(s->distilled_each(s, i1, a1, cb_distilled, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
}

/* Deleting a record deletes its edges and Q rows (store.h), which only
 * holds if edges and Q rows never point at records that do not exist. */
static void test_store__contract_refuses_dangling_references(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t att = attempt_add(s, "dangle", KEVO_VERDICT_CORRECT);
    int64_t it = item_add(s, KEVO_ITEM_EXPERIENCE, "real", "b");
    int64_t missing = att + it + 1000;
    kevo_used_item u = {.item_id = missing, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 1};
    kevo_used_item ok = {.item_id = it, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 1};
    kevo_q_row qi = {KEVO_Q_ITEM, missing, KEVO_STAGE_DRAFT, 0.5, 1};
    kevo_q_row qs = {KEVO_Q_START, missing, KEVO_STAGE_REFINE, 0.5, 1};
    kevo_attempt orphan = attempt_of("dangle", KEVO_VERDICT_CORRECT);
    orphan.uid = "orphan";
    orphan.parent_id = missing;
    struct {
        const char *what;
        int rc;
    } r[6];
    OK(s->tx_begin(s));
    r[0].what = "used edge to a missing item";
    r[0].rc = s->used_insert(s, att, &u);
    r[1].what = "used edge from a missing attempt";
    r[1].rc = s->used_insert(s, missing, &ok);
    r[2].what = "distilled edge to a missing attempt";
    r[2].rc = s->distilled_insert(s, it, missing);
    r[3].what = "Q row of a missing item";
    r[3].rc = s->q_set(s, &qi);
    r[4].what = "Q2 row of a missing attempt";
    r[4].rc = s->q_set(s, &qs);
    r[5].what = "attempt refining a missing parent";
    r[5].rc = s->attempt_insert(s, &orphan, NULL);
    OK(s->tx_rollback(s));
    for (int i = 0; i < 6; i++)
        if (r[i].rc >= 0)
            fail_msg("store %s accepted a %s", f->impl->name, r[i].what);
    kevo_memory_stats st;
    OK(s->stats(s, &st));
    assert_int_equal(st.edges_used + st.edges_distilled + st.q_items + st.q_starts, 0);
    assert_int_equal(st.attempts, 1);
}

/* ---- Q-values, start points, reward statistics --------------------------- */

static void test_store__contract_q_rows(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    int64_t i1 = item_add(s, KEVO_ITEM_EXPERIENCE, "q1", "b");
    int64_t i2 = item_add(s, KEVO_ITEM_EXPERIENCE, "q2", "b");
    int64_t att = attempt_add(s, "qtask", KEVO_VERDICT_CORRECT);
    double q = 7;
    int64_t n = 7;
    /* no row: n = 0, q = 0 */
    OK(s->q_get(s, KEVO_Q_ITEM, i1, KEVO_STAGE_DRAFT, &q, &n));
    assert_int_equal(n, 0);
    assert_true(q == 0.0);
    q = n = 7;
    OK(s->q_get(s, KEVO_Q_START, att, KEVO_STAGE_REFINE, &q, &n));
    assert_int_equal(n, 0);
    assert_true(q == 0.0);

    kevo_q_row rows[] = {
        {KEVO_Q_ITEM, i2, KEVO_STAGE_REFINE, -0.5, 4},
        {KEVO_Q_ITEM, i2, KEVO_STAGE_DRAFT, 0.125, 1},
        {KEVO_Q_ITEM, i1, KEVO_STAGE_REFINE, 0.375, 2},
        {KEVO_Q_START, att, KEVO_STAGE_REFINE, 0.625, 3},
    };
    OK(s->tx_begin(s));
    for (int i = 0; i < 4; i++)
        OK(s->q_set(s, &rows[i]));
    OK(s->tx_commit(s));
    OK(s->q_get(s, KEVO_Q_ITEM, i2, KEVO_STAGE_REFINE, &q, &n));
    assert_true(q == -0.5);
    assert_int_equal(n, 4);
    OK(s->q_get(s, KEVO_Q_ITEM, i2, KEVO_STAGE_DRAFT, &q, &n));
    assert_true(q == 0.125);
    assert_int_equal(n, 1);
    OK(s->q_get(s, KEVO_Q_ITEM, i1, KEVO_STAGE_DRAFT, &q, &n)); /* other stage */
    assert_int_equal(n, 0);
    OK(s->q_get(s, KEVO_Q_START, att, KEVO_STAGE_REFINE, &q, &n));
    assert_true(q == 0.625);
    assert_int_equal(n, 3);
    /* item and start rows are apart even when ids coincide */
    OK(s->q_get(s, KEVO_Q_ITEM, att, KEVO_STAGE_REFINE, &q, &n));
    if (att != i1 && att != i2)
        assert_int_equal(n, 0);

    /* q_get_many (version 3, optional): what q_get gives, per id, in one
     * call; missing ids 0/0, repeated ids repeated */
    if (s->version >= 3 && s->q_get_many) {
        int64_t ids[] = {i2, 999999, i1, i2};
        double qs[4] = {9, 9, 9, 9};
        int64_t ns[4] = {9, 9, 9, 9};
        OK(s->q_get_many(s, KEVO_Q_ITEM, ids, 4, KEVO_STAGE_REFINE, qs, ns));
        for (int i = 0; i < 4; i++) {
            double q1 = 0;
            int64_t n1 = 0;
            OK(s->q_get(s, KEVO_Q_ITEM, ids[i], KEVO_STAGE_REFINE, &q1, &n1));
            assert_true(qs[i] == q1);
            assert_int_equal(ns[i], n1);
        }
        assert_int_equal(ns[1], 0);
        assert_true(qs[0] == -0.5 && ns[0] == 4 && qs[3] == -0.5);
        int64_t sid[] = {att};
        OK(s->q_get_many(s, KEVO_Q_START, sid, 1, KEVO_STAGE_REFINE, qs, ns));
        assert_true(qs[0] == 0.625);
        assert_int_equal(ns[0], 3);
    }

    /* q_each: a target's rows by id then stage; start rows are refine */
    coll c = {0};
    OK(s->q_each(s, KEVO_Q_ITEM, cb_q, &c));
    assert_int_equal(c.n, 3);
    assert_int_equal(c.a[0], i1);
    assert_int_equal(c.b[0], KEVO_STAGE_REFINE);
    assert_int_equal(c.a[1], i2);
    assert_int_equal(c.b[1], KEVO_STAGE_DRAFT);
    assert_int_equal(c.a[2], i2);
    assert_int_equal(c.b[2], KEVO_STAGE_REFINE);
    assert_int_equal(c.c[2], 4);
    assert_true(c.x[2] == -0.5);
    coll_reset(&c);
    OK(s->q_each(s, KEVO_Q_START, cb_q, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], att);
    assert_int_equal(c.b[0], KEVO_STAGE_REFINE);
    assert_int_equal(c.c[0], 3);
    coll_reset(&c);

    /* update in place; n = 0 deletes */
    kevo_q_row upd = {KEVO_Q_ITEM, i2, KEVO_STAGE_REFINE, 0.875, 5};
    kevo_q_row del = {KEVO_Q_ITEM, i2, KEVO_STAGE_DRAFT, 0.0, 0};
    kevo_q_row del_start = {KEVO_Q_START, att, KEVO_STAGE_REFINE, 0.0, 0};
    OK(s->tx_begin(s));
    OK(s->q_set(s, &upd));
    OK(s->q_set(s, &del));
    OK(s->q_set(s, &del_start));
    OK(s->q_set(s, &del)); /* deleting no row: fine */
    OK(s->tx_commit(s));
    OK(s->q_get(s, KEVO_Q_ITEM, i2, KEVO_STAGE_REFINE, &q, &n));
    assert_true(q == 0.875);
    assert_int_equal(n, 5);
    OK(s->q_get(s, KEVO_Q_ITEM, i2, KEVO_STAGE_DRAFT, &q, &n));
    assert_int_equal(n, 0);
    assert_true(q == 0.0);
    OK(s->q_each(s, KEVO_Q_ITEM, cb_q, &c));
    assert_int_equal(c.n, 2);
    coll_reset(&c);
    OK(s->q_each(s, KEVO_Q_START, cb_q, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    kevo_memory_stats st;
    OK(s->stats(s, &st));
    assert_int_equal(st.q_items, 2);
    assert_int_equal(st.q_starts, 0);
}

static void test_store__contract_start_points(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_attempt a = attempt_of("sp", KEVO_VERDICT_CORRECT);
    a.candidate_us = 8.0;
    a.speedup = 2.5;
    int64_t c1 = attempt_put(s, a);
    attempt_add(s, "sp", KEVO_VERDICT_INCORRECT);
    a.backend = "opencl";
    a.candidate_us = 4.0;
    a.speedup = 5.0;
    int64_t c2 = attempt_put(s, a);
    attempt_add(s, "other_task", KEVO_VERDICT_CORRECT);
    kevo_q_row q = {KEVO_Q_START, c2, KEVO_STAGE_REFINE, 0.25, 2};
    OK(s->tx_begin(s));
    OK(s->q_set(s, &q));
    OK(s->tx_commit(s));

    coll c = {0};
    OK(s->start_each(s, "sp", NULL, cb_start, &c));
    assert_int_equal(c.n, 2); /* the correct ones, by id */
    assert_int_equal(c.a[0], c1);
    assert_int_equal(c.b[0], 0); /* never updated */
    assert_true(c.x[0] == 0.0);
    assert_int_equal(c.a[1], c2);
    assert_int_equal(c.b[1], 2);
    assert_true(c.x[1] == 0.25);
    coll_reset(&c);
    OK(s->start_each(s, "sp", "opencl", cb_start, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], c2);
    coll_reset(&c);
    OK(s->start_each(s, "sp", "cuda", cb_start, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    OK(s->start_each(s, "no_task", NULL, cb_start, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
}

typedef struct start_full {
    kevo_start_point sp;
    int seen;
} start_full;

static int cb_start_full(void *arg, const kevo_start_point *sp)
{
    start_full *w = arg;
    w->sp = *sp;
    w->seen++;
    return 0;
}

static void test_store__contract_start_point_fields(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_attempt a = attempt_of("spf", KEVO_VERDICT_CORRECT);
    a.candidate_us = 3.25;
    a.speedup = 6.5;
    int64_t id = attempt_put(s, a);
    start_full w = {0};
    OK(s->start_each(s, "spf", "c", cb_start_full, &w));
    assert_int_equal(w.seen, 1);
    assert_int_equal(w.sp.attempt_id, id);
    assert_true(w.sp.candidate_us == 3.25);
    assert_true(w.sp.speedup == 6.5);
    assert_int_equal(w.sp.n, 0);
}

static void test_store__contract_reward_stats(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    kevo_reward_stats got;
    memset(&got, 0x5a, sizeof(got));
    OK(s->reward_stats_get(s, KEVO_STAGE_REFINE, &got));
    assert_int_equal(got.n, 0);
    kevo_reward_stats r = {KEVO_STAGE_REFINE, 5, 0.375, 2.5};
    kevo_reward_stats d = {KEVO_STAGE_DRAFT, 2, -0.5, 0.125};
    OK(s->tx_begin(s));
    OK(s->reward_stats_set(s, &r));
    OK(s->reward_stats_set(s, &d));
    OK(s->tx_commit(s));
    OK(s->reward_stats_get(s, KEVO_STAGE_REFINE, &got));
    assert_int_equal(got.stage, KEVO_STAGE_REFINE);
    assert_int_equal(got.n, 5);
    assert_true(got.mean == 0.375);
    assert_true(got.m2 == 2.5);
    OK(s->reward_stats_get(s, KEVO_STAGE_DRAFT, &got));
    assert_int_equal(got.n, 2);
    assert_true(got.mean == -0.5);
    r.n = 6;
    r.mean = 0.5;
    OK(s->tx_begin(s));
    OK(s->reward_stats_set(s, &r));
    OK(s->tx_commit(s));
    OK(s->reward_stats_get(s, KEVO_STAGE_REFINE, &got));
    assert_int_equal(got.n, 6);
    assert_true(got.mean == 0.5);
    /* n = 0 reads back as "none" */
    kevo_reward_stats zero = {KEVO_STAGE_DRAFT, 0, 0, 0};
    OK(s->tx_begin(s));
    OK(s->reward_stats_set(s, &zero));
    OK(s->tx_commit(s));
    OK(s->reward_stats_get(s, KEVO_STAGE_DRAFT, &got));
    assert_int_equal(got.n, 0);
}

/* ---- stats and compaction -------------------------------------------------- */

static void test_store__contract_stats(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    run_add(s, 0);
    kevo_memory_task t = {.name = "bare"};
    OK(s->tx_begin(s));
    OK(s->task_upsert(s, &t, NULL));
    OK(s->tx_commit(s));
    int64_t a1 = attempt_add(s, "st", KEVO_VERDICT_CORRECT);
    int64_t a2 = attempt_add(s, "st", KEVO_VERDICT_CRASH);
    int64_t i1 = item_add(s, KEVO_ITEM_EXPERIENCE, "s1", "b");
    item_add(s, KEVO_ITEM_EXPERIENCE, "s2", "b");
    item_add(s, KEVO_ITEM_API_DOC, "s3", "b");
    kevo_used_item u = {.item_id = i1, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 1};
    kevo_q_row qi = {KEVO_Q_ITEM, i1, KEVO_STAGE_DRAFT, 0.5, 1};
    kevo_q_row qs = {KEVO_Q_START, a1, KEVO_STAGE_REFINE, 0.5, 1};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, a1, &u));
    OK(s->used_insert(s, a2, &u));
    OK(s->distilled_insert(s, i1, a2));
    OK(s->q_set(s, &qi));
    OK(s->q_set(s, &qs));
    OK(s->tx_commit(s));
    kevo_memory_stats st;
    memset(&st, 0x5a, sizeof(st));
    OK(s->stats(s, &st));
    assert_int_equal(st.runs, 1);
    assert_int_equal(st.tasks, 2);
    assert_int_equal(st.attempts, 2);
    assert_int_equal(st.attempts_correct, 1);
    assert_int_equal(st.items, 3);
    assert_int_equal(st.items_by_kind[KEVO_ITEM_EXPERIENCE], 2);
    assert_int_equal(st.items_by_kind[KEVO_ITEM_API_DOC], 1);
    assert_int_equal(st.items_by_kind[KEVO_ITEM_TRACE], 0);
    assert_int_equal(st.items_by_kind[KEVO_ITEM_RECIPE], 0);
    assert_int_equal(st.items_by_kind[KEVO_ITEM_BEST_PRACTICE], 0);
    assert_int_equal(st.edges_used, 2);
    assert_int_equal(st.edges_distilled, 1);
    assert_int_equal(st.q_items, 1);
    assert_int_equal(st.q_starts, 1);
    assert_true(st.schema_version >= 1);
    assert_true(st.bytes > 0);
}

static void test_store__contract_compact(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    if (!s->compact)
        CONTRACT_SKIP("store %s: no compact method (optional)", f->impl->name);
    fillers(s, 8);
    int64_t gone = item_add(s, KEVO_ITEM_EXPERIENCE, "secret", "secretword body");
    int64_t kept = item_add(s, KEVO_ITEM_EXPERIENCE, "kept", "keptword body");
    int64_t att = attempt_add(s, "cmp", KEVO_VERDICT_CORRECT);
    OK(s->tx_begin(s));
    OK(s->item_delete(s, gone));
    OK(s->tx_commit(s));
    OK(s->compact(s));
    /* what was kept is all there, searchable, and the store takes writes */
    assert_int_equal(count_items(s), 9);
    coll c = {0};
    OK(s->item_search(s, "keptword", NULL, cb_item, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.a[0], kept);
    coll_reset(&c);
    OK(s->item_search(s, "secretword", NULL, cb_item, &c));
    assert_int_equal(c.n, 0);
    coll_reset(&c);
    OK(s->attempt_each(s, att, NULL, cb_attempt, &c));
    assert_int_equal(c.n, 1);
    coll_reset(&c);
    item_add(s, KEVO_ITEM_EXPERIENCE, "after", "afterword body");
    OK(s->item_search(s, "afterword", NULL, cb_item, &c));
    assert_int_equal(c.n, 1);
    coll_reset(&c);
    OK(s->compact(s)); /* twice is fine */
}

/* ---- callbacks: > 0 stops (method returns 0), < 0 fails with that code ---- */

static void test_store__contract_each_stop_and_fail(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    fillers(s, 6);
    int64_t it[2], at[2];
    for (int i = 0; i < 2; i++) {
        run_add(s, 0);
        char name[16];
        snprintf(name, sizeof(name), "cbtask%d", i);
        kevo_memory_task t = {.name = name, .description = "capybara"};
        OK(s->tx_begin(s));
        OK(s->task_upsert(s, &t, NULL));
        OK(s->tx_commit(s));
        at[i] = attempt_add(s, "cbtask0", KEVO_VERDICT_CORRECT);
        it[i] = item_add(s, KEVO_ITEM_API_DOC, "capybara", "capybara doc");
    }
    kevo_used_item u0 = {.item_id = it[0], .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 1};
    kevo_used_item u1 = {.item_id = it[1], .stage = KEVO_STAGE_DRAFT, .rank = 2, .tokens = 1};
    kevo_q_row q0 = {KEVO_Q_ITEM, it[0], KEVO_STAGE_DRAFT, 0.5, 1};
    kevo_q_row q1 = {KEVO_Q_ITEM, it[1], KEVO_STAGE_DRAFT, 0.5, 1};
    OK(s->tx_begin(s));
    OK(s->used_insert(s, at[0], &u0));
    OK(s->used_insert(s, at[0], &u1));
    OK(s->distilled_insert(s, it[0], at[0]));
    OK(s->distilled_insert(s, it[1], at[0]));
    OK(s->q_set(s, &q0));
    OK(s->q_set(s, &q1));
    OK(s->tx_commit(s));

    static const char *const names[] = {"run_each",    "task_each",   "task_search",
                                        "attempt_each", "item_each",  "item_search",
                                        "item_lookup",  "used_each",  "distilled_each",
                                        "q_each",       "start_each"};
    for (int mode = 0; mode < 3; mode++) {
        for (int m = 0; m < 11; m++) {
            coll c = {0};
            if (mode == 1)
                c.stop_at = 1;
            else if (mode == 2)
                c.fail = -42;
            int rc = 0;
            switch (m) {
            case 0: rc = s->run_each(s, 0, cb_run, &c); break;
            case 1: rc = s->task_each(s, NULL, cb_task, &c); break;
            case 2: rc = s->task_search(s, "capybara", 10, cb_task, &c); break;
            case 3: rc = s->attempt_each(s, 0, NULL, cb_attempt, &c); break;
            case 4: rc = s->item_each(s, 0, NULL, cb_item, &c); break;
            case 5: rc = s->item_search(s, "capybara", NULL, cb_item, &c); break;
            case 6: rc = s->item_lookup(s, KEVO_ITEM_API_DOC, "capybara", "c", cb_item, &c); break;
            case 7: rc = s->used_each(s, 0, 0, cb_used, &c); break;
            case 8: rc = s->distilled_each(s, 0, 0, cb_distilled, &c); break;
            case 9: rc = s->q_each(s, KEVO_Q_ITEM, cb_q, &c); break;
            case 10: rc = s->start_each(s, "cbtask0", NULL, cb_start, &c); break;
            }
            size_t calls = c.calls;
            coll_reset(&c);
            if (mode == 0 && (rc != 0 || calls < 2))
                fail_msg("%s: rc %d with %zu rows, want 0 with >= 2", names[m], rc, calls);
            if (mode == 1 && (rc != 0 || calls != 1))
                fail_msg("%s: callback > 0 gave rc %d after %zu calls, want 0 after 1",
                         names[m], rc, calls);
            if (mode == 2 && (rc != -42 || calls != 1))
                fail_msg("%s: callback -42 gave rc %d after %zu calls, want -42 after 1",
                         names[m], rc, calls);
        }
    }
    /* the store is still fine after callbacks stopped its statements */
    assert_int_equal(count_runs(s), 2);
    run_add(s, 0);
    assert_int_equal(count_runs(s), 3);
}

/* ---- main ------------------------------------------------------------------ */

/* ---- version 2: the work queue ----------------------------------------- */

/* The fixture's store when it has version 2's methods, else skip. */
static fx *ready_v2(void **state)
{
    fx *f = ready(state);
    kevo_store *s = f->s;
    if (s->version < 2 || !s->work_add || !s->work_claim || !s->work_renew || !s->work_finish ||
        !s->work_each || !s->machine_upsert || !s->machine_each)
        CONTRACT_SKIP("store %s: version %u, no work queue / machines (store version 2)",
                      f->impl->name, s->version);
    return f;
}

#define BUNDLE "{\"task.json\":\"{}\",\"reference.c\":\"void k(void) {}\"}"
#define T0 1700000000000LL

static int work_add(kevo_store *s, int64_t run, const char *task, const char *backend)
{
    kevo_work w = {.run_id = run, .task = task, .backend = backend, .bundle = BUNDLE,
                   .updated = T0};
    int error = s->tx_begin(s);
    if (error < 0)
        return error;
    error = s->work_add(s, &w);
    if (error < 0) {
        s->tx_rollback(s);
        return error;
    }
    return s->tx_commit(s);
}

/* One claimed row, copied. */
typedef struct claimed {
    int calls;
    int64_t run_id, lease_until, claims, updated;
    char task[64], backend[16], worker[64], bundle[256], error[64];
    kevo_work_state state;
} claimed;

/* Keeps the first row it is given (and counts the calls). */
static int cb_claimed(void *arg, const kevo_work *w)
{
    claimed *c = arg;
    if (c->calls++)
        return 0;
    snprintf(c->error, sizeof(c->error), "%s", w->error ? w->error : "(null)");
    c->run_id = w->run_id;
    c->lease_until = w->lease_until;
    c->claims = w->claims;
    c->updated = w->updated;
    c->state = w->state;
    snprintf(c->task, sizeof(c->task), "%s", w->task ? w->task : "");
    snprintf(c->backend, sizeof(c->backend), "%s", w->backend ? w->backend : "");
    snprintf(c->worker, sizeof(c->worker), "%s", w->worker ? w->worker : "");
    snprintf(c->bundle, sizeof(c->bundle), "%s", w->bundle ? w->bundle : "(null)");
    return 0;
}

static int claim(kevo_store *s, const char *const *backends, size_t n, const char *worker,
                 int64_t now, int64_t lease, claimed *out)
{
    memset(out, 0, sizeof(*out));
    int error = s->tx_begin(s);
    if (error < 0)
        return error;
    error = s->work_claim(s, backends, n, worker, now, lease, cb_claimed, out);
    if (error < 0) {
        s->tx_rollback(s);
        return error;
    }
    return s->tx_commit(s);
}

static int renew(kevo_store *s, int64_t run, const char *task, const char *worker, int64_t now,
                 int64_t lease)
{
    int error = s->tx_begin(s);
    if (error == 0 && (error = s->work_renew(s, run, task, worker, now, lease)) < 0)
        s->tx_rollback(s);
    else if (error == 0)
        error = s->tx_commit(s);
    return error;
}

static int finish(kevo_store *s, int64_t run, const char *task, const char *worker,
                  kevo_work_state state, const char *why, int64_t now)
{
    int error = s->tx_begin(s);
    if (error == 0 && (error = s->work_finish(s, run, task, worker, state, why, now)) < 0)
        s->tx_rollback(s);
    else if (error == 0)
        error = s->tx_commit(s);
    return error;
}

static int cb_work(void *arg, const kevo_work *w)
{
    return coll_push(arg, w->run_id, (int64_t)w->state, w->claims, (double)w->lease_until,
                     w->task);
}

static void test_store__contract_work_add_and_each(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    int64_t r1 = run_add(s, 0), r2 = run_add(s, 0);
    OK(work_add(s, r2, "b_task", "c"));
    OK(work_add(s, r1, "z_task", "c"));
    OK(work_add(s, r1, "a_task", "opencl"));
    /* a task is added to a run once; another run may have it */
    assert_int_equal(work_add(s, r1, "z_task", "cuda"), KEVO_EEXISTS);
    OK(work_add(s, r2, "z_task", "c"));
    assert_int_equal(work_add(s, r2 + 1000, "x", "c"), KEVO_ENOTFOUND);
    coll c = {0};
    OK(s->work_each(s, 0, 0, cb_work, &c));
    /* by run, then insertion order */
    assert_int_equal(c.n, 4);
    assert_string_equal(c.str[0], "z_task");
    assert_string_equal(c.str[1], "a_task");
    assert_string_equal(c.str[2], "b_task");
    assert_string_equal(c.str[3], "z_task");
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(c.b[i], KEVO_WORK_QUEUED);
        assert_int_equal(c.c[i], 0);
    }
    coll_reset(&c);
    OK(s->work_each(s, r1, 0, cb_work, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], r1);
    coll_reset(&c);
    /* bundles only when asked for */
    claimed one = {0};
    OK(s->work_each(s, r2, 0, cb_claimed, &one));
    assert_string_equal(one.bundle, "(null)");
    memset(&one, 0, sizeof(one));
    OK(s->work_each(s, r2, 1, cb_claimed, &one));
    assert_string_equal(one.bundle, BUNDLE);
    assert_string_equal(one.backend, "c");
    assert_int_equal(one.updated, T0);
    /* a run's deletion deletes its rows */
    OK(s->tx_begin(s));
    OK(s->run_delete(s, r2));
    OK(s->tx_commit(s));
    OK(s->work_each(s, 0, 0, cb_work, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.a[0], r1);
    assert_int_equal(c.a[1], r1);
    coll_reset(&c);
}

static void test_store__contract_work_claim(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    int64_t r1 = run_add(s, 0), r2 = run_add(s, 0);
    OK(work_add(s, r2, "r2_c", "c"));
    OK(work_add(s, r1, "r1_cuda", "cuda"));
    OK(work_add(s, r1, "r1_c", "c"));
    const char *c_only[] = {"c"}, *both[] = {"opencl", "cuda"}, *none[] = {"npu"};
    claimed w;
    assert_int_equal(claim(s, none, 1, "w1", T0, 1000, &w), KEVO_ENOTFOUND);
    assert_int_equal(w.calls, 0);
    /* oldest run first, only the worker's backends */
    OK(claim(s, c_only, 1, "w1", T0, 1000, &w));
    assert_int_equal(w.calls, 1);
    assert_int_equal(w.run_id, r1);
    assert_string_equal(w.task, "r1_c");
    assert_string_equal(w.worker, "w1");
    assert_int_equal(w.state, KEVO_WORK_RUNNING);
    assert_int_equal(w.lease_until, T0 + 1000);
    assert_int_equal(w.claims, 1);
    assert_int_equal(w.updated, T0);
    assert_string_equal(w.bundle, BUNDLE);
    OK(claim(s, both, 2, "w2", T0, 1000, &w));
    assert_string_equal(w.task, "r1_cuda");
    /* a held row with a live lease is not claimable */
    OK(claim(s, c_only, 1, "w3", T0 + 10, 1000, &w));
    assert_string_equal(w.task, "r2_c");
    assert_int_equal(claim(s, c_only, 1, "w3", T0 + 999, 1000, &w), KEVO_ENOTFOUND);
    /* a finished run's rows are not claimable, even with expired leases */
    OK(s->tx_begin(s));
    OK(s->run_update(s, r1, "stopped", T0 + 5, NULL));
    OK(s->tx_commit(s));
    OK(claim(s, c_only, 1, "w4", T0 + 5000, 1000, &w));
    assert_int_equal(w.run_id, r2); /* r2's expired row, not r1's */
    assert_int_equal(w.claims, 2);
    assert_string_equal(w.worker, "w4");
    assert_int_equal(claim(s, c_only, 1, "w4", T0 + 5000, 1000, &w), KEVO_ENOTFOUND);
    assert_int_equal(claim(s, both, 2, "w4", T0 + 5000, 1000, &w), KEVO_ENOTFOUND);
}

static void test_store__contract_work_lease_and_fencing(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    int64_t r = run_add(s, 0);
    OK(work_add(s, r, "t1", "c"));
    OK(work_add(s, r, "t2", "c"));
    const char *c_only[] = {"c"};
    claimed w;
    OK(claim(s, c_only, 1, "old", T0, 1000, &w));
    assert_string_equal(w.task, "t1");
    /* only the holder renews; not a row that is not held at all */
    assert_int_equal(renew(s, r, "t1", "other", T0 + 10, 1000), KEVO_ENOTFOUND);
    assert_int_equal(renew(s, r, "t2", "old", T0 + 10, 1000), KEVO_ENOTFOUND);
    assert_int_equal(renew(s, r, "nope", "old", T0 + 10, 1000), KEVO_ENOTFOUND);
    OK(renew(s, r, "t1", "old", T0 + 500, 1000)); /* lease now T0 + 1500 */
    assert_int_equal(claim(s, c_only, 1, "new", T0 + 1400, 1000, &w), 0);
    assert_string_equal(w.task, "t2"); /* t1 is still held */
    /* t1's lease expires: another worker takes it over */
    OK(claim(s, c_only, 1, "new", T0 + 1501, 1000, &w));
    assert_string_equal(w.task, "t1");
    assert_string_equal(w.worker, "new");
    assert_int_equal(w.claims, 2);
    /* the old holder has lost it: no renew, no finish */
    assert_int_equal(renew(s, r, "t1", "old", T0 + 1600, 1000), KEVO_ENOTFOUND);
    assert_int_equal(finish(s, r, "t1", "old", KEVO_WORK_DONE, NULL, T0 + 1600), KEVO_ENOTFOUND);
    /* the new holder finishes; the row is then neither renewable nor
     * finishable nor claimable */
    OK(finish(s, r, "t1", "new", KEVO_WORK_FAILED, "compile farm down", T0 + 1700));
    assert_int_equal(renew(s, r, "t1", "new", T0 + 1800, 1000), KEVO_ENOTFOUND);
    assert_int_equal(finish(s, r, "t1", "new", KEVO_WORK_DONE, NULL, T0 + 1800), KEVO_ENOTFOUND);
    OK(finish(s, r, "t2", "new", KEVO_WORK_DONE, NULL, T0 + 1900));
    assert_int_equal(claim(s, c_only, 1, "late", T0 + 99999, 1000, &w), KEVO_ENOTFOUND);
    coll c = {0};
    OK(s->work_each(s, r, 0, cb_work, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.b[0], KEVO_WORK_FAILED);
    assert_int_equal(c.b[1], KEVO_WORK_DONE);
    coll_reset(&c);
    /* the failed row keeps its holder and says why; a lease no longer */
    claimed first = {0};
    OK(s->work_each(s, r, 0, cb_claimed, &first));
    assert_int_equal(first.calls, 2);
    assert_string_equal(first.task, "t1");
    assert_string_equal(first.worker, "new");
    assert_string_equal(first.error, "compile farm down");
    assert_int_equal(first.lease_until, 0);
    assert_int_equal(first.updated, T0 + 1700);
}

/* Each child claims in a loop until nothing is left and writes the tasks
 * it got, one a line, to `path`. */
static int claim_loop_child(const store_impl *impl, const char *dir, const char *worker,
                            const char *path)
{
    kevo_store *s = NULL;
    if (impl->open_again(&s, dir) < 0)
        return 3;
    FILE *out = fopen(path, "w");
    if (!out)
        return 4;
    const char *c_only[] = {"c"};
    int rc = 0;
    for (;;) {
        claimed w;
        int error = claim(s, c_only, 1, worker, T0 + 1, 600000, &w);
        if (error == KEVO_ENOTFOUND)
            break;
        if (error < 0 || w.calls != 1) {
            fprintf(stderr, "%s: claim failed: %s\n", worker, kevo_error_last());
            rc = 5;
            break;
        }
        fprintf(out, "%s\n", w.task);
    }
    fclose(out);
    kevo_store_free(s);
    return rc;
}

static int read_lines(const char *path, char lines[][32], int max)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    if (!f)
        return -1;
    char buf[32];
    while (n < max && fgets(buf, sizeof(buf), f)) {
        buf[strcspn(buf, "\n")] = '\0';
        snprintf(lines[n++], 32, "%s", buf);
    }
    fclose(f);
    return n;
}

static void test_store__contract_work_claim_concurrent(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    if (!f->impl->open_again)
        CONTRACT_SKIP("store %s: no second handle", f->impl->name);
    enum { ROWS = 60, KIDS = 3 };
    int64_t r = run_add(s, 0);
    OK(s->tx_begin(s));
    for (int i = 0; i < ROWS; i++) {
        char task[32];
        snprintf(task, sizeof(task), "task_%02d", i);
        kevo_work w = {.run_id = r, .task = task, .backend = "c", .bundle = BUNDLE,
                       .updated = T0};
        OK(s->work_add(s, &w));
    }
    OK(s->tx_commit(s));
    fflush(NULL);
    pid_t kids[KIDS];
    char paths[KIDS][4200];
    for (int k = 0; k < KIDS; k++) {
        char worker[16], name[32];
        snprintf(worker, sizeof(worker), "worker%d", k);
        snprintf(name, sizeof(name), "claimed-%d", k);
        char *p = kevo_path_join(f->dir, name);
        snprintf(paths[k], sizeof(paths[k]), "%s", p);
        free(p);
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0)
            _exit(claim_loop_child(f->impl, f->dir, worker, paths[k]));
    }
    for (int k = 0; k < KIDS; k++) {
        int status = 0;
        assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    /* every row claimed exactly once: the union is all, no two share */
    int seen[ROWS] = {0}, total = 0;
    for (int k = 0; k < KIDS; k++) {
        char lines[ROWS + 1][32];
        int n = read_lines(paths[k], lines, ROWS + 1);
        assert_true(n >= 0);
        for (int i = 0; i < n; i++) {
            int idx = -1;
            assert_int_equal(sscanf(lines[i], "task_%d", &idx), 1);
            assert_true(idx >= 0 && idx < ROWS);
            seen[idx]++;
            total++;
        }
    }
    assert_int_equal(total, ROWS);
    for (int i = 0; i < ROWS; i++)
        assert_int_equal(seen[i], 1);
    /* and the store agrees: all running, each claimed once */
    coll c = {0};
    OK(s->work_each(s, r, 0, cb_work, &c));
    assert_int_equal(c.n, ROWS);
    for (size_t i = 0; i < c.n; i++) {
        assert_int_equal(c.b[i], KEVO_WORK_RUNNING);
        assert_int_equal(c.c[i], 1);
    }
    coll_reset(&c);
}

/* ---- version 2: machines and attempts.machine -------------------------- */

static int cb_machine(void *arg, const kevo_memory_machine *m)
{
    char text[512];
    snprintf(text, sizeof(text), "%s|%s|%s|%s", m->id, m->hostname ? m->hostname : "-",
             m->cpu ? m->cpu : "-", m->gpu ? m->gpu : "-");
    return coll_push(arg, m->cores, m->first_seen, m->last_seen, 0, text);
}

static void machine_put(kevo_store *s, const kevo_memory_machine *m)
{
    OK(s->tx_begin(s));
    OK(s->machine_upsert(s, m));
    OK(s->tx_commit(s));
}

static void test_store__contract_machines(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    machine_put(s, &(kevo_memory_machine){.id = "m2", .hostname = "h2", .cpu = "EPYC",
                                          .gpu = "", .cores = 2, .last_seen = T0});
    machine_put(s, &(kevo_memory_machine){.id = "m1", .hostname = "h1", .cpu = "Xeon",
                                          .gpu = "H200", .cores = 16, .first_seen = T0 - 5,
                                          .last_seen = T0});
    coll c = {0};
    OK(s->machine_each(s, cb_machine, &c));
    assert_int_equal(c.n, 2); /* by id */
    assert_string_equal(c.str[0], "m1|h1|Xeon|H200");
    assert_int_equal(c.a[0], 16);
    assert_int_equal(c.b[0], T0 - 5);
    assert_int_equal(c.c[0], T0);
    assert_string_equal(c.str[1], "m2|h2|EPYC|");
    assert_int_equal(c.b[1], T0); /* first_seen 0: its last_seen */
    coll_reset(&c);
    /* update: given fields replace, NULL / 0 keep; last_seen never goes
     * back; first_seen kept */
    machine_put(s, &(kevo_memory_machine){.id = "m1", .hostname = "h1-renamed",
                                          .first_seen = T0 + 100, .last_seen = T0 + 100});
    machine_put(s, &(kevo_memory_machine){.id = "m1", .cpu = "Xeon 2", .last_seen = T0 + 50});
    OK(s->machine_each(s, cb_machine, &c));
    assert_string_equal(c.str[0], "m1|h1-renamed|Xeon 2|H200");
    assert_int_equal(c.a[0], 16);
    assert_int_equal(c.b[0], T0 - 5);
    assert_int_equal(c.c[0], T0 + 100);
    coll_reset(&c);
}

static int cb_attempt_machine(void *arg, const kevo_attempt *a)
{
    return coll_push(arg, a->id, 0, 0, 0, a->machine);
}

static void test_store__contract_attempt_machine(void **state)
{
    fx *f = ready_v2(state);
    kevo_store *s = f->s;
    kevo_attempt a = attempt_of("machine_task", KEVO_VERDICT_CORRECT);
    a.machine = "0123456789abcdef0123456789abcdef";
    int64_t with = attempt_put(s, a);
    a.machine = NULL;
    int64_t without = attempt_put(s, a);
    coll c = {0};
    OK(s->attempt_each(s, with, NULL, cb_attempt_machine, &c));
    assert_int_equal(c.n, 1);
    assert_str_or_null(c.str[0], "0123456789abcdef0123456789abcdef");
    coll_reset(&c);
    OK(s->attempt_each(s, without, NULL, cb_attempt_machine, &c));
    assert_int_equal(c.n, 1);
    assert_null(c.str[0]);
    coll_reset(&c);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_store__contract_vtable_complete),
        T(test_store__contract_tx_rollback),
        T(test_store__contract_tx_nested),
        T(test_store__contract_tx_unbalanced_is_an_error),
        T(test_store__contract_tx_read_snapshot),
        T(test_store__contract_tx_isolation),
        T(test_store__contract_durability),
        T(test_store__contract_run_roundtrip),
        T(test_store__contract_run_update),
        T(test_store__contract_run_delete),
        T(test_store__contract_requested_ids),
        T(test_store__contract_task_upsert),
        T(test_store__contract_task_search),
        T(test_store__contract_task_delete),
        T(test_store__contract_attempt_roundtrip),
        T(test_store__contract_attempt_bad_input),
        T(test_store__contract_attempt_bad_verdict_refused),
        T(test_store__contract_attempt_filters),
        T(test_store__contract_attempt_set_reward),
        T(test_store__contract_attempt_delete_cascades),
        T(test_store__contract_item_roundtrip),
        T(test_store__contract_item_filters),
        T(test_store__contract_item_filter_tag_is_literal),
        T(test_store__contract_item_search_ranking),
        T(test_store__contract_item_search_default_limit),
        T(test_store__contract_item_search_sees_new_items),
        T(test_store__contract_item_search_follows_rollback_and_delete),
        T(test_store__contract_item_search_sees_other_handle),
        T(test_store__contract_item_search_backend_filter_complete),
        T(test_store__contract_item_lookup),
        T(test_store__contract_item_delete_cascades),
        T(test_store__contract_find_uid),
        T(test_store__contract_used_edges),
        T(test_store__contract_distilled_edges),
        T(test_store__contract_refuses_dangling_references),
        T(test_store__contract_q_rows),
        T(test_store__contract_start_points),
        T(test_store__contract_start_point_fields),
        T(test_store__contract_reward_stats),
        T(test_store__contract_stats),
        T(test_store__contract_compact),
        T(test_store__contract_each_stop_and_fail),
        T(test_store__contract_work_add_and_each),
        T(test_store__contract_work_claim),
        T(test_store__contract_work_lease_and_fencing),
        T(test_store__contract_work_claim_concurrent),
        T(test_store__contract_machines),
        T(test_store__contract_attempt_machine),
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
        char group[64];
        snprintf(group, sizeof(group), "store_contract[%s]", impls[i].name);
        current = &impls[i];
        print_message("%s\n", group);
        failed += cmocka_run_group_tests_name(group, tests, NULL, NULL);
    }
    return failed;
}
