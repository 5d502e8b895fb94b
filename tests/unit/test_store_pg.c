/*
 * test_store_pg.c - what the PostgreSQL store promises beyond the store
 * contract: many writers on one database never lose a Q update (the
 * advisory lock of tx_begin), the connection errors name host and database
 * but never the password, the conninfo helpers of kevo/util.h, and no
 * sandboxed child ever sees the password (or an API key) in its
 * environment.
 *
 * The lost-update test forks two processes, each with its own connection,
 * that record K attempts using the same item at the same time through
 * kevo_memory_attempt_record (q_get then q_set inside one transaction);
 * the final Q must equal the Q recomputed sequentially from the stored
 * rewards in attempt-id order, with n = 2K. Without the lock the two
 * read-modify-writes interleave and updates are lost. Skips, printing why,
 * when there is no PostgreSQL test server (pg_helpers.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "contract_helpers.h"
#include "kevo/memory.h"
#include "kevo/sandbox.h"
#include "kevo/sys/store.h"
#include "kevo/util.h"
#include "pg_helpers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define K 40

typedef struct fx {
    const char *server;
    char schema[128];
    char url[1400];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    const char *why = NULL;
    if (!f)
        return -1;
    *state = f;
    f->server = pg_test_url(&why);
    if (f->server && pg_test_schema_new(f->schema, f->url, sizeof(f->url), f->server) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (f->server)
        pg_test_schema_drop(f->server, f->schema);
    free(f);
    return 0;
}

static fx *ready(void **state)
{
    fx *f = *state;
    const char *why = NULL;
    if (!f->server) {
        pg_test_url(&why);
        CONTRACT_SKIP("%s", why);
    }
    return f;
}

/* One writer: its own connection, K attempts each using `item`, correct
 * and not by turns (rewards +1 / -1), started when `go` is readable. */
static int writer(const char *url, int64_t item, int who, int go)
{
    char c;
    if (read(go, &c, 1) != 1)
        return 10;
    kevo_memory *mem = NULL;
    if (kevo_memory_open(&mem, url) < 0) {
        fprintf(stderr, "writer %d: %s\n", who, kevo_error_last());
        return 11;
    }
    for (int i = 0; i < K; i++) {
        kevo_attempt a = {.task = "shared_task",
                          .backend = "c",
                          .generator = "builtin",
                          .stage = KEVO_STAGE_DRAFT,
                          .iteration = who * 1000 + i,
                          .verdict = (i + who) % 3 ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                          .source = "void k(void) {}",
                          .candidate_us = 10,
                          .reference_us = 20,
                          .speedup = (i + who) % 3 ? 2.0 : 0.0};
        kevo_used_item u = {.item_id = item, .stage = KEVO_STAGE_DRAFT, .rank = 1, .tokens = 5};
        if (kevo_memory_attempt_record(mem, &a, &u, 1, NULL, NULL) < 0) {
            fprintf(stderr, "writer %d: attempt %d: %s\n", who, i, kevo_error_last());
            kevo_memory_free(mem);
            return 12;
        }
    }
    kevo_memory_free(mem);
    return 0;
}

static void test_store_pg__no_lost_q_update(void **state)
{
    fx *f = ready(state);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, f->url), 0);
    kevo_item it = {.kind = KEVO_ITEM_EXPERIENCE, .title = "shared lesson", .body = "used by all"};
    int64_t item = 0;
    assert_int_equal(kevo_memory_item_add(mem, &it, &item), 0);

    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pids[2];
    for (int w = 0; w < 2; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            close(go[1]);
            _exit(writer(f->url, item, w, go[0]));
        }
    }
    close(go[0]);
    /* both start at once */
    assert_int_equal(write(go[1], "gg", 2), 2);
    close(go[1]);
    for (int w = 0; w < 2; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("writer %d failed (status %d)", w, status);
    }

    double q = 0;
    int64_t n = 0;
    assert_int_equal(kevo_memory_q_get(&q, &n, mem, item, KEVO_STAGE_DRAFT), 0);
    assert_int_equal(n, 2 * K);

    /* the same updates, one after the other, in the order the store kept */
    kevo_attempt_filter flt = {.used_item = item, .no_source = 1};
    kevo_attempt_list *l = NULL;
    assert_int_equal(kevo_memory_attempt_list(&l, mem, &flt), 0);
    assert_int_equal(l->n, 2 * K);
    kevo_learn_config cfg;
    kevo_learn_config_init(&cfg);
    double want = cfg.q_init;
    int from_both = 0;
    for (size_t i = 0; i < l->n; i++) {
        want = kevo_memory_q_step(want, l->attempts[i].reward, cfg.alpha);
        if (i && (l->attempts[i].iteration < 1000) != (l->attempts[i - 1].iteration < 1000))
            from_both++;
    }
    kevo_attempt_list_free(l);
    if (fabs(q - want) > 1e-12)
        fail_msg("final Q %.17g, sequential replay of the stored rewards gives %.17g: an "
                 "update was lost",
                 q, want);
    print_message("[ INFO     ] writers took turns %d times over %d attempts\n", from_both, 2 * K);
    kevo_memory_free(mem);
}

/* A store at schema version 1 (before machines and the work queue) is
 * migrated forward on open, keeping what it holds. */
static void test_store_pg__migrates_forward(void **state)
{
    fx *f = ready(state);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, f->url), 0);
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(mem, "{}", &run), 0);
    kevo_item it = {.kind = KEVO_ITEM_EXPERIENCE, .title = "remembered", .body = "from before"};
    assert_int_equal(kevo_memory_item_add(mem, &it, NULL), 0);
    kevo_memory_free(mem);
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "SET search_path = %s; DROP TABLE work; DROP TABLE machines;"
             " ALTER TABLE attempts DROP COLUMN machine; DROP TABLE item_words;"
             " ALTER TABLE used DROP COLUMN no_credit;"
             " UPDATE kevo_meta SET value = '1' WHERE key = 'schema_version'",
             f->schema);
    assert_int_equal(pg_test_admin(f->server, sql), 0);
    assert_int_equal(kevo_memory_open(&mem, f->url), 0);
    kevo_memory_stats st;
    assert_int_equal(kevo_memory_stats_get(&st, mem), 0);
    assert_int_equal(st.schema_version, 4);
    assert_int_equal(st.runs, 1);
    /* the word counts were rebuilt from the items already there */
    kevo_item_list *l = NULL;
    assert_int_equal(kevo_memory_item_search(&l, mem, "remembered", NULL), 0);
    assert_int_equal(l->n, 1);
    kevo_item_list_free(l);
    kevo_memory_machine m = {.id = "m1", .hostname = "h", .cores = 2, .last_seen = 5};
    assert_int_equal(kevo_memory_machine_upsert(mem, &m), 0);
    kevo_memory_free(mem);
}

/* The search's document frequencies (item_words) equal a recount from
 * the items after inserts and deletes in nested transactions, rolled back
 * and committed, and a search inside a transaction counts its own
 * uncommitted items. */
static void test_store_pg__word_counts_exact(void **state)
{
    fx *f = ready(state);
    kevo_store *s = NULL;
    assert_int_equal(kevo_store_pg_open(&s, f->url, 0), 0);
    kevo_item a = {
        .kind = KEVO_ITEM_EXPERIENCE, .title = "okapi one", .body = "okapi zebra", .uid = "w-a"};
    kevo_item b = a, c = a, d = a;
    b.uid = "w-b";
    b.title = "okapi two";
    c.uid = "w-c";
    c.body = "zebra only";
    d.uid = "w-d";
    int64_t ida = 0, id = 0;
    assert_int_equal(s->tx_begin(s), 0);
    assert_int_equal(s->item_insert(s, &a, &ida), 0);
    assert_int_equal(s->tx_begin(s), 0);
    assert_int_equal(s->item_insert(s, &b, &id), 0);
    assert_int_equal(s->tx_rollback(s), 0);
    assert_int_equal(s->tx_begin(s), 0);
    assert_int_equal(s->item_insert(s, &c, &id), 0);
    assert_int_equal(s->tx_commit(s), 0);
    assert_int_equal(s->tx_commit(s), 0);
    assert_int_equal(s->tx_begin(s), 0);
    assert_int_equal(s->item_delete(s, ida), 0);
    assert_int_equal(s->item_insert(s, &d, &id), 0);
    assert_int_equal(s->tx_commit(s), 0);
    assert_int_equal(s->tx_begin(s), 0);
    kevo_item e = a;
    e.uid = "w-e";
    assert_int_equal(s->item_insert(s, &e, &id), 0);
    assert_int_equal(s->tx_rollback(s), 0);
    kevo_store_free(s);
    char sql[2048];
    snprintf(sql, sizeof(sql),
             "SET search_path = %s; DO $$ BEGIN IF EXISTS ("
             " (SELECT word, df FROM item_words WHERE df <> 0 EXCEPT"
             "  (SELECT t.word, count(*) FROM items, unnest(tsvector_to_array(items.fts)) t(word)"
             "   GROUP BY t.word UNION ALL SELECT '', count(*) FROM items))"
             " UNION ALL"
             " ((SELECT t.word, count(*) FROM items, unnest(tsvector_to_array(items.fts)) t(word)"
             "   GROUP BY t.word UNION ALL SELECT '', count(*) FROM items) EXCEPT"
             "  SELECT word, df FROM item_words WHERE df <> 0))"
             " THEN RAISE EXCEPTION 'item_words differs from a recount'; END IF; END $$",
             f->schema);
    assert_int_equal(pg_test_admin(f->server, sql), 0);
}

/* Text that is not UTF-8 (a candidate printed raw bytes into its
 * feedback, or wrote them in its source) is stored, invalid bytes as
 * U+FFFD, never refused: the attempt is kept. */
static void test_store_pg__invalid_utf8_is_kept(void **state)
{
    fx *f = ready(state);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, f->url), 0);
    kevo_attempt a = {.task = "bytes_task",
                      .backend = "c",
                      .generator = "builtin",
                      .stage = KEVO_STAGE_DRAFT,
                      .verdict = KEVO_VERDICT_INCORRECT,
                      .feedback = "got \xff\xfe at index 3, caf\xc3\xa9 ok, cut \xe2\x82",
                      .source = "void k(void) { /* \xc0\xaf */ }"};
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(mem, &a, NULL, 0, NULL, &id), 0);
    kevo_attempt *got = NULL;
    assert_int_equal(kevo_memory_attempt_get(&got, mem, id), 0);
    assert_string_equal(got->feedback, "got \xef\xbf\xbd\xef\xbf\xbd at index 3, caf\xc3\xa9 ok, "
                                       "cut \xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(got->source, "void k(void) { /* \xef\xbf\xbd\xef\xbf\xbd */ }");
    kevo_attempt_free(got);
    /* and a search with such bytes is no error */
    kevo_item_list *l = NULL;
    assert_int_equal(kevo_memory_item_search(&l, mem, "index \xff\xfe bytes", NULL), 0);
    kevo_item_list_free(l);
    kevo_memory_free(mem);
}

/* A wrong password: KEVO_EIO, one line naming the user, host and
 * database and libpq's reason; never the password itself. */
static void test_store_pg__bad_login_names_no_password(void **state)
{
    fx *f = ready(state);
    /* the test server's role kevo_pw must give a password (pg_server.sh) */
    char url[2048];
    const char *host = strstr(f->server, "host=");
    assert_non_null(host);
    char hostdir[1024];
    snprintf(hostdir, sizeof(hostdir), "%s", host + 5);
    hostdir[strcspn(hostdir, "&")] = '\0';
    snprintf(url, sizeof(url), "postgresql://kevo_pw:WrongSecret123@/kevo?host=%s", hostdir);
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, url), KEVO_EIO);
    assert_null(mem);
    const char *msg = kevo_error_last();
    print_message("[ INFO     ] %s\n", msg);
    assert_null(strstr(msg, "WrongSecret123"));
    assert_null(strchr(msg, '\n'));
    assert_non_null(strstr(msg, "kevo_pw@"));
    assert_non_null(strstr(msg, "/kevo"));
    assert_non_null(strstr(msg, "password authentication failed"));

    /* nor in a key=value string, nor in the PGPASSWORD it may come from */
    snprintf(url, sizeof(url), "pg:host=%s dbname=kevo user=kevo_pw password='Wrong Secret456'",
             hostdir);
    assert_int_equal(kevo_memory_open(&mem, url), KEVO_EIO);
    assert_null(strstr(kevo_error_last(), "Secret456"));
    setenv("PGPASSWORD", "EnvSecret789", 1);
    snprintf(url, sizeof(url), "postgresql://kevo_pw@/kevo?host=%s", hostdir);
    assert_int_equal(kevo_memory_open(&mem, url), KEVO_EIO);
    assert_null(strstr(kevo_error_last(), "EnvSecret789"));
    unsetenv("PGPASSWORD");

    /* a malformed string is refused without being quoted */
    assert_int_equal(kevo_memory_open(&mem, "pg:host=x password=Hidden999 =broken"), KEVO_EINVAL);
    assert_null(strstr(kevo_error_last(), "Hidden999"));
}

/* An unreachable server: KEVO_EIO naming the host and port. */
static void test_store_pg__unreachable_server(void **state)
{
    (void)state;
    kevo_memory *mem = NULL;
    /* port 1 on the loopback: nothing listens there */
    assert_int_equal(
        kevo_memory_open(&mem, "postgresql://someone:pw1@127.0.0.1:1/kevo?connect_timeout=5"),
        KEVO_EIO);
    const char *msg = kevo_error_last();
    assert_non_null(strstr(msg, "127.0.0.1:1/kevo"));
    assert_non_null(strstr(msg, "someone@"));
    assert_null(strstr(msg, "pw1"));
    assert_null(strchr(msg, '\n'));
}

static void test_store_pg__conninfo_redact(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } cases[] = {
        {"postgresql://u:secret@db.example:5433/kevo?sslmode=require",
         "postgresql://u@db.example:5433/kevo?sslmode=require"},
        {"postgres://u:secret@h/db", "postgres://u@h/db"},
        {"postgresql://u:se/cr@et@h:5/db?x=1", "postgresql://u@h:5/db?x=1"},
        {"postgresql://u%40x:p%40ss@h/db", "postgresql://u%40x@h/db"},
        {"postgresql://:secret@h/db", "postgresql://@h/db"},
        {"postgresql://u@h/db?password=secret&sslmode=require&password=again",
         "postgresql://u@h/db?sslmode=require"},
        {"postgresql:///kevo?host=/tmp/x&user=postgres",
         "postgresql:///kevo?host=/tmp/x&user=postgres"},
        {"postgresql://h", "postgresql://h"},
        {"pg:host=h password=secret dbname=kevo", "pg:host=h dbname=kevo"},
        {"pg:password = 'se cr\\'et' host=h", "pg:host=h"},
        {"pg:host=h passfile=/x", "pg:host=h passfile=/x"},
        {"kevo.db", "kevo.db"},
        {"/some/dir/kevo.db", "/some/dir/kevo.db"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        assert_int_equal(kevo_conninfo_redact(&out, cases[i].in), 0);
        if (strcmp(out, cases[i].out))
            fail_msg("redact(%s) = %s, want %s", cases[i].in, out, cases[i].out);
        free(out);
    }
    assert_true(kevo_conninfo_is_pg("postgresql://h/db"));
    assert_true(kevo_conninfo_is_pg("postgres://h/db"));
    assert_true(kevo_conninfo_is_pg("pg:host=h"));
    assert_false(kevo_conninfo_is_pg("kevo.db"));
    assert_false(kevo_conninfo_is_pg("./postgresql://"));
    assert_false(kevo_conninfo_is_pg(NULL));
}

/* What a sandboxed child (candidate, runner, compiler) sees of kevo's
 * environment: only the sandbox's own variables, never the database
 * password or an API key kevo was started with (src/sandbox builds the
 * child's environment from nothing). */
static void test_store_pg__sandbox_env_has_no_secrets(void **state)
{
    (void)state;
    static const char *const secrets[][2] = {
        {"PGPASSWORD", "PgCanary41"},
        {"PGPASSFILE", "/root/PassfileCanary42"},
        {"KEVO_API_KEY", "ApiCanary43"},
        {"OPENAI_API_KEY", "OpenAiCanary44"},
        {"DATABASE_URL", "postgresql://u:UrlCanary45@h/db"},
    };
    size_t n = sizeof(secrets) / sizeof(secrets[0]);
    for (size_t i = 0; i < n; i++)
        setenv(secrets[i][0], secrets[i][1], 1);
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-env-"), 0);
    assert_int_equal(kevo_sandbox_prepare_dir(dir), 0);
    const char *argv[] = {"/usr/bin/env", NULL};
    kevo_sandbox_opts plain = {.workdir = dir, .wall_timeout_s = 10};
    kevo_sandbox_opts hostile = {.workdir = dir, .wall_timeout_s = 10, .untrusted = true};
    const kevo_sandbox_opts *modes[] = {&plain, &hostile};
    int ran = 0;
    for (size_t m = 0; m < 2; m++) {
        kevo_proc_status st;
        char *out = NULL;
        assert_int_equal(kevo_sandbox_run(&st, &out, 65536, argv, modes[m]), 0);
        assert_non_null(out);
        if (st.kind != KEVO_EXIT_NORMAL || st.exit_code != 0) {
            /* seccomp may refuse env's exec in the untrusted mode: then
             * nothing ran that could see anything */
            free(out);
            continue;
        }
        assert_non_null(strstr(out, "PATH="));
        ran++;
        for (size_t i = 0; i < n; i++) {
            if (strstr(out, secrets[i][0]) || strstr(out, secrets[i][1]))
                fail_msg("a sandboxed child saw %s (mode %zu):\n%s", secrets[i][0], m, out);
        }
        free(out);
    }
    print_message("[ INFO     ] env ran sandboxed in %d of 2 modes\n", ran);
    assert_true(ran >= 1);
    for (size_t i = 0; i < n; i++)
        unsetenv(secrets[i][0]);
    kevo_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_store_pg__no_lost_q_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_pg__migrates_forward, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_pg__invalid_utf8_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_pg__word_counts_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_pg__bad_login_names_no_password, setup,
                                        teardown),
        cmocka_unit_test(test_store_pg__unreachable_server),
        cmocka_unit_test(test_store_pg__conninfo_redact),
        cmocka_unit_test(test_store_pg__sandbox_env_has_no_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
