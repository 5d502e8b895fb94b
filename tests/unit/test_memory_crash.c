/*
 * test_memory_crash.c - a process killed with SIGKILL in the middle of
 * writing leaves a store that opens, passes PRAGMA integrity_check and the
 * FTS5 integrity check, and holds only whole attempts (every attempt has
 * its experience item, every used edge its Q update).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/util.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The child: write attempts forever; signal the parent after the first
 * commits. batch > 1 groups records in an outer transaction. */
static void writer(const char *path, int ready_fd, int batch, uint64_t seed)
{
    kevo_memory *mem = NULL;
    if (kevo_memory_open(&mem, path) < 0)
        _exit(3);
    kevo_rng rng;
    kevo_rng_seed(&rng, seed);
    int64_t items[8];
    for (int i = 0; i < 8; i++) {
        char title[32];
        snprintf(title, sizeof(title), "crash note %d", i);
        kevo_item it = {.kind = KEVO_ITEM_RECIPE, .title = title, .body = "unroll the loop"};
        if (kevo_memory_item_add(mem, &it, &items[i]) < 0)
            _exit(4);
    }
    char src[4096];
    for (size_t i = 0; i < sizeof(src) - 1; i++)
        src[i] = (char)('a' + i % 26);
    src[sizeof(src) - 1] = '\0';
    int64_t last_correct = 0;
    int signalled = 0;
    for (long n = 0;; n++) {
        if (batch > 1 && n % batch == 0 && kevo_memory_tx_begin(mem) < 0)
            _exit(5);
        int ok = kevo_rng_uniform(&rng) < 0.6;
        int refine = last_correct && (n % 2);
        kevo_attempt a = {.task = n % 3 ? "crash_a" : "crash_b",
                          .backend = "c",
                          .generator = "test",
                          .stage = refine ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                          .parent_id = refine && (n % 3) ? last_correct : 0,
                          .iteration = (int)n,
                          .verdict = ok ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                          .feedback = "max abs error 0.25 at index 17",
                          .source = src,
                          .candidate_us = ok ? 10 + kevo_rng_uniform(&rng) * 10 : 0,
                          .reference_us = 40,
                          .speedup = ok ? 2 : 0};
        if (a.parent_id == 0)
            a.stage = KEVO_STAGE_DRAFT;
        kevo_used_item used[3];
        for (int u = 0; u < 3; u++)
            used[u] = (kevo_used_item){items[(n + u) % 8], a.stage, u + 1, 20, false};
        int64_t id = 0;
        if (kevo_memory_attempt_record(mem, &a, used, 3, NULL, &id) < 0)
            _exit(6);
        if (ok && !strcmp(a.task, "crash_a"))
            last_correct = id;
        if (batch > 1 && n % batch == batch - 1 && kevo_memory_tx_commit(mem) < 0)
            _exit(7);
        /* ready once at least 21 attempts are committed */
        if (!signalled && n >= 20 && (batch <= 1 || n % batch == batch - 1)) {
            char c = 'r';
            if (write(ready_fd, &c, 1) != 1)
                _exit(8);
            signalled = 1;
        }
    }
}

static int64_t count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void check_store(const char *path, int used_per_attempt)
{
    /* it opens (and would migrate) through kevo */
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, path), 0);
    kevo_memory_stats st;
    assert_int_equal(kevo_memory_stats_get(&st, mem), 0);
    assert_true(st.attempts >= 21);
    kevo_memory_free(mem);

    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(s, 0), "ok");
    sqlite3_finalize(s);
    assert_int_equal(count(db, "PRAGMA foreign_key_check"), -1); /* no rows */
    assert_int_equal(sqlite3_exec(db, "INSERT INTO item_fts(item_fts) VALUES ('integrity-check')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* whole attempts only */
    assert_int_equal(count(db, "SELECT count(*) FROM attempts a WHERE NOT EXISTS"
                               " (SELECT 1 FROM distilled_from d WHERE d.attempt_id = a.id)"),
                     0);
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM attempts a WHERE"
             " (SELECT count(*) FROM used u WHERE u.attempt_id = a.id) <> %d",
             used_per_attempt);
    assert_int_equal(count(db, sql), 0);
    assert_int_equal(count(db, "SELECT sum(n) FROM q_item"),
                     count(db, "SELECT count(*) FROM used"));
    assert_int_equal(count(db, "SELECT coalesce(sum(n), 0) FROM q_start"),
                     count(db, "SELECT count(*) FROM attempts WHERE parent_id IS NOT NULL"));
    sqlite3_close(db);
}

static void crash_once(int batch, int round)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-crash-"), 0);
    char *path = kevo_path_join(dir, "kevo.db");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        writer(path, fds[1], batch, (uint64_t)round * 7919 + (uint64_t)batch);
        _exit(0);
    }
    close(fds[1]);
    char c = 0;
    ssize_t r = read(fds[0], &c, 1);
    close(fds[0]);
    if (r != 1) {
        int status = 0;
        waitpid(pid, &status, 0);
        fail_msg("writer died before writing (status %d)", status);
    }
    /* let it run into the middle of some later write */
    struct timespec ts = {0, (long)(5 + (round * 37) % 120) * 1000000L};
    nanosleep(&ts, NULL);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    check_store(path, 3);
    /* and it keeps working after the crash */
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, path), 0);
    kevo_attempt a = {.task = "after", .stage = KEVO_STAGE_DRAFT, .verdict = KEVO_VERDICT_CORRECT};
    assert_int_equal(kevo_memory_attempt_record(mem, &a, NULL, 0, NULL, NULL), 0);
    kevo_memory_free(mem);
    kevo_rmtree(dir);
    free(path);
    free(dir);
}

static void test_memory__sigkill_single_writes(void **state)
{
    for (int round = 0; round < 4; round++)
        crash_once(1, round);
}

static void test_memory__sigkill_batched_writes(void **state)
{
    for (int round = 0; round < 4; round++)
        crash_once(25, round);
}

/* Several processes recording into one store at once: no busy errors, no
 * lost attempts. */
static void test_memory__concurrent_writers(void **state)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-conc-"), 0);
    char *path = kevo_path_join(dir, "kevo.db");
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, path), 0); /* create before the race */
    kevo_memory_free(mem);
    enum { WRITERS = 3, EACH = 60 };
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            kevo_memory *m = NULL;
            if (kevo_memory_open(&m, path) < 0)
                _exit(3);
            char task[16];
            snprintf(task, sizeof(task), "conc_%d", w);
            for (int i = 0; i < EACH; i++) {
                kevo_attempt a = {.task = task,
                                  .stage = KEVO_STAGE_DRAFT,
                                  .verdict = i % 2 ? KEVO_VERDICT_CORRECT : KEVO_VERDICT_INCORRECT,
                                  .source = "void k(void) {}",
                                  .candidate_us = i % 2 ? 5 : 0,
                                  .reference_us = 10,
                                  .speedup = i % 2 ? 2 : 0};
                if (kevo_memory_attempt_record(m, &a, NULL, 0, NULL, NULL) < 0) {
                    fprintf(stderr, "writer %d: %s\n", w, kevo_error_last());
                    _exit(4);
                }
                /* readers in between, as agents building contexts do */
                kevo_attempt *best = NULL;
                if (i % 2 && kevo_memory_attempt_best(&best, m, task, 0, NULL) < 0)
                    _exit(5);
                kevo_attempt_free(best);
            }
            kevo_memory_free(m);
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(kevo_memory_open(&mem, path), 0);
    kevo_memory_stats st;
    assert_int_equal(kevo_memory_stats_get(&st, mem), 0);
    assert_int_equal(st.attempts, WRITERS * EACH);
    assert_int_equal(st.tasks, WRITERS);
    kevo_memory_free(mem);
    check_store(path, 0);
    kevo_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory__sigkill_single_writes),
        cmocka_unit_test(test_memory__sigkill_batched_writes),
        cmocka_unit_test(test_memory__concurrent_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
