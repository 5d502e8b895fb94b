/*
 * memory/store_pg.c - the PostgreSQL implementation of kevo_store (libpq):
 * the experience graph of many worker processes on many machines in one
 * database. Same tables as the SQLite store (pg_schema.h), foreign keys
 * with cascading deletes, full-text search over generated tsvector columns
 * (GIN), forward schema migrations recorded in kevo_meta.
 *
 * It stores, finds and deletes; it holds no learning logic (memory.c and
 * record.c do). Every value travels as a query parameter (prepared
 * statements, PQexecPrepared): no SQL text is ever built from a value.
 * Text is UTF-8 on the wire; bytes that are not valid UTF-8 (a candidate's
 * output in feedback, say) are stored as U+FFFD, which PostgreSQL requires
 * and SQLite does not.
 *
 * Transactions: tx_begin is BEGIN plus pg_advisory_xact_lock (KEVO_PG_LOCK),
 * held to the end of the transaction, so kevo writers on one store take
 * turns exactly as SQLite's BEGIN IMMEDIATE makes them: a read-modify-write
 * inside one transaction (q_get then q_set in record.c) reads what the
 * previous writer committed (READ COMMITTED takes a fresh snapshot per
 * statement, and a transaction's advisory lock is released only after its
 * commit is visible), so no update is ever lost. tx_begin_read is a
 * REPEATABLE READ READ ONLY snapshot and takes no lock. Nested begins are
 * savepoints. A statement that fails aborts the whole open transaction
 * (PostgreSQL's rule, stricter than SQLite's): kevo_memory rolls back on
 * any error, and a COMMIT of an aborted transaction reports an error.
 *
 * Messages name the database as user@host:port/db and never the password.
 * It must not print anything itself (notices are dropped), and must not
 * keep the conninfo string (it may hold a password).
 */
#include "kevo/sys/store.h"
#include "kevo/util.h"
#include "pg_schema.h"
#include "terms.h"

#include <libpq-fe.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock of kevo writers on one store: the key pair ("kevo" in
 * ASCII, the OID of the store's schema), so that stores in other schemas
 * of the same database never wait for each other. Computed by the server:
 * no value enters the SQL text. */
#define KEVO_PG_LOCK                                                                               \
    "SELECT pg_advisory_xact_lock(1801812591, coalesce((SELECT oid::int FROM pg_namespace"         \
    " WHERE nspname = current_schema()), 0))"
#define PARAMS_MAX 32
/* Search: how many query words to consider, how many to use, and how many
 * postings they may touch together (the SQLite store's limits). */
#define SEARCH_WORDS_MAX 64
#define SEARCH_TERMS_MAX 12
#define SEARCH_POSTINGS_MAX 3000

/* Statements are prepared once per connection and named by their place
 * in this cache (keyed by SQL text, as the SQLite store's cache is). */
#define STMT_CACHE 128

typedef struct pg_store {
    PGconn *conn;
    char *label; /* user@host:port/db: what messages name */
    int depth;   /* transaction nesting */
    int pending; /* kevo_dfdelta may hold rows of the open transaction */
    char *stmt_sql[STMT_CACHE];
    size_t n_stmt;
} pg_store;

/* Query parameters, all in text form; numbers are formatted into num[]. */
typedef struct params {
    const char *v[PARAMS_MAX];
    char num[PARAMS_MAX][32];
    int n;
    int overflow;
} params;

static int p_text(params *p, const char *s)
{
    if (p->n >= PARAMS_MAX) {
        p->overflow = 1;
        return PARAMS_MAX;
    }
    p->v[p->n++] = s;
    return p->n;
}

static int p_int(params *p, int64_t v)
{
    if (p->n >= PARAMS_MAX) {
        p->overflow = 1;
        return PARAMS_MAX;
    }
    snprintf(p->num[p->n], sizeof(p->num[0]), "%" PRId64, v);
    p->v[p->n] = p->num[p->n];
    return ++p->n;
}

/* An id: 0 is NULL. */
static int p_id(params *p, int64_t v)
{
    return v ? p_int(p, v) : p_text(p, NULL);
}

static int p_dbl(params *p, double v)
{
    if (p->n >= PARAMS_MAX) {
        p->overflow = 1;
        return PARAMS_MAX;
    }
    snprintf(p->num[p->n], sizeof(p->num[0]), "%.17g", v);
    p->v[p->n] = p->num[p->n];
    return ++p->n;
}

/* ---- UTF-8 ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p (PostgreSQL's rules: no
 * overlong forms, no surrogates, at most U+10FFFF), 0 when invalid. */
static size_t utf8_seq(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

/* NULL when `s` is valid UTF-8; else a malloc'd copy with each invalid
 * byte replaced by U+FFFD (*oom set when that copy cannot be made). Text
 * columns of PostgreSQL hold only valid UTF-8, and kevo stores text that
 * generated code printed (feedback, sources): refusing it would lose the
 * attempt, so the store keeps the readable part. */
static char *utf8_fixed(const char *s, int *oom)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t bad = 0, n = 0;
    while (p[n]) {
        size_t k = utf8_seq(p + n);
        if (k == 0) {
            bad++;
            k = 1;
        }
        n += k;
    }
    if (bad == 0)
        return NULL;
    char *out = malloc(n + bad * 2 + 1), *o = out;
    if (!out) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; p[i];) {
        size_t k = utf8_seq(p + i);
        if (k == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        } else {
            memcpy(o, p + i, k);
            o += k;
            i += k;
        }
    }
    *o = '\0';
    return out;
}

/* The values to send: p's, with invalid UTF-8 replaced (owned[] holds the
 * copies, released by values_free). */
typedef struct values {
    const char *v[PARAMS_MAX];
    char *owned[PARAMS_MAX];
} values;

static int values_of(values *out, const params *p, const char *label)
{
    memset(out, 0, sizeof(*out));
    int oom = 0;
    for (int i = 0; p && i < p->n; i++) {
        out->v[i] = p->v[i];
        if (p->v[i] && (out->owned[i] = utf8_fixed(p->v[i], &oom)) != NULL)
            out->v[i] = out->owned[i];
    }
    if (oom)
        return kevo_error_set(KEVO_ENOMEM, "%s: out of memory re-encoding text", label);
    return 0;
}

static void values_free(values *vals)
{
    for (int i = 0; i < PARAMS_MAX; i++)
        free(vals->owned[i]);
}

static pg_store *ctx_of(kevo_store *s)
{
    return s->ctx;
}

/* ---- errors and statements ------------------------------------------- */

/* libpq's text as one line: newlines and tabs become spaces, runs of
 * spaces one, no trailing space. */
static void one_line(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    int space = 0;
    for (const char *p = src ? src : ""; *p && n + 1 < cap; p++) {
        char ch = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
        if (ch == ' ') {
            if (space || n == 0)
                continue;
            space = 1;
        } else {
            space = 0;
        }
        dst[n++] = ch;
    }
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

static int code_of_sqlstate(const char *state)
{
    if (!state || strlen(state) != 5)
        return KEVO_EIO;
    if (!strncmp(state, "23", 2) || !strncmp(state, "22", 2) || !strncmp(state, "42", 2) ||
        !strcmp(state, "25P02") || !strcmp(state, "25006"))
        return KEVO_EINVAL;
    if (!strcmp(state, "55P03") || !strcmp(state, "40P01") || !strcmp(state, "40001") ||
        !strcmp(state, "57014"))
        return KEVO_ETIMEOUT;
    if (!strncmp(state, "53", 2))
        return KEVO_ENOMEM;
    return KEVO_EIO;
}

static int result_error(pg_store *ps, const PGresult *r, const char *what)
{
    char msg[512];
    const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    one_line(msg, sizeof(msg), primary ? primary : PQerrorMessage(ps->conn));
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    int code = PQstatus(ps->conn) == CONNECTION_BAD ? KEVO_EIO : code_of_sqlstate(state);
    if (state && !strcmp(state, "25P02"))
        return kevo_error_set(code, "%s: %s: an earlier statement of this transaction failed",
                              ps->label, what);
    return kevo_error_set(code, "%s: %s: %s", ps->label, what, msg[0] ? msg : "unknown error");
}

/* Every connection: exact doubles both ways; writers wait at most a
 * minute for the lock (SQLite's stores wait 30 s), then fail with
 * KEVO_ETIMEOUT; random pages priced as cached ones (the default 4.0 made
 * searches scan every item instead of the GIN index's matches: 57 vs
 * 27 ms at 10k items); the word-count deltas of the open transaction (see
 * flush_words), emptied by every commit. */
#define SESSION_SETUP                                                                              \
    "SET extra_float_digits = 3; SET lock_timeout = '60s'; SET random_page_cost = 1.1;"            \
    " CREATE TEMP TABLE IF NOT EXISTS kevo_dfdelta(word text NOT NULL, d integer NOT NULL)"        \
    " ON COMMIT DELETE ROWS;"                                                                      \
    " CREATE INDEX IF NOT EXISTS kevo_dfdelta_word ON pg_temp.kevo_dfdelta(word)"

static void stmt_cache_clear(pg_store *ps)
{
    for (size_t i = 0; i < ps->n_stmt; i++)
        free(ps->stmt_sql[i]);
    ps->n_stmt = 0;
}

/* A connection lost between transactions comes back once (prepared
 * statements went with it). */
static void reconnect_if_lost(pg_store *ps)
{
    if (PQstatus(ps->conn) == CONNECTION_BAD && ps->depth == 0) {
        stmt_cache_clear(ps);
        PQreset(ps->conn);
        if (PQstatus(ps->conn) == CONNECTION_OK) {
            PGresult *r = PQexec(ps->conn, SESSION_SETUP);
            PQclear(r);
        }
    }
}

/* The name of `sql`'s prepared statement (into name[32]), preparing it
 * on first use; 0 with name "" when the cache is full (run unprepared). */
static int stmt_name(pg_store *ps, const char *sql, int n_params, char name[32], const char *what);

/* Run one statement; *out (may be NULL) gets the result on success. */
static int pg_run(pg_store *ps, const char *sql, const params *p, PGresult **out, const char *what)
{
    if (out)
        *out = NULL;
    if (p && p->overflow)
        return kevo_error_set(KEVO_EINVAL, "%s: %s: too many query parameters", ps->label, what);
    reconnect_if_lost(ps);
    char name[32];
    values vals;
    int error = stmt_name(ps, sql, p ? p->n : 0, name, what);
    if (error < 0)
        return error;
    if ((error = values_of(&vals, p, ps->label)) < 0) {
        values_free(&vals);
        return error;
    }
    PGresult *r = name[0] ? PQexecPrepared(ps->conn, name, p ? p->n : 0, vals.v, NULL, NULL, 0)
                          : PQexecParams(ps->conn, sql, p ? p->n : 0, NULL, vals.v, NULL, NULL, 0);
    values_free(&vals);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        error = result_error(ps, r, what);
        PQclear(r);
        return error;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

/* A statement without parameters that may hold several commands. */
static int pg_exec(pg_store *ps, const char *sql, PGresult **out, const char *what)
{
    if (out)
        *out = NULL;
    PGresult *r = PQexec(ps->conn, sql);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int error = result_error(ps, r, what);
        PQclear(r);
        return error;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

static int stmt_name(pg_store *ps, const char *sql, int n_params, char name[32], const char *what)
{
    name[0] = '\0';
    for (size_t i = 0; i < ps->n_stmt; i++) {
        if (!strcmp(ps->stmt_sql[i], sql)) {
            snprintf(name, 32, "kevo_s%zu", i);
            return 0;
        }
    }
    if (ps->n_stmt >= STMT_CACHE)
        return 0;
    char *copy = strdup(sql);
    if (!copy)
        return 0;
    snprintf(name, 32, "kevo_s%zu", ps->n_stmt);
    PGresult *r = PQprepare(ps->conn, name, sql, n_params, NULL);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) {
        int error = result_error(ps, r, what);
        PQclear(r);
        free(copy);
        name[0] = '\0';
        return error;
    }
    PQclear(r);
    ps->stmt_sql[ps->n_stmt++] = copy;
    return 0;
}

static const char *col_text(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int64_t col_int(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static double col_dbl(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0.0 : strtod(PQgetvalue(r, row, col), NULL);
}

/* One int64 from the first row (0 when no row). */
static int query_int64(pg_store *ps, const char *sql, const params *p, int64_t *out,
                       const char *what)
{
    PGresult *r = NULL;
    int error = pg_run(ps, sql, p, &r, what);
    if (error < 0)
        return error;
    *out = PQntuples(r) > 0 ? col_int(r, 0, 0) : 0;
    PQclear(r);
    return 0;
}

/* Each row of a query in turn (single-row mode: a large result is never
 * held whole). fn returns 0 to go on, > 0 to stop (0 is returned), < 0 to
 * fail with that code. The rest of a stopped result is drained, so the
 * connection is ready for the next statement. */
typedef int (*row_fn)(void *arg, const PGresult *r);

static int pg_each(pg_store *ps, const char *sql, const params *p, row_fn fn, void *arg,
                   const char *what)
{
    if (p && p->overflow)
        return kevo_error_set(KEVO_EINVAL, "%s: %s: too many query parameters", ps->label, what);
    reconnect_if_lost(ps);
    char name[32];
    values vals;
    int error = stmt_name(ps, sql, p ? p->n : 0, name, what);
    if (error < 0)
        return error;
    if ((error = values_of(&vals, p, ps->label)) < 0) {
        values_free(&vals);
        return error;
    }
    int sent = name[0]
                   ? PQsendQueryPrepared(ps->conn, name, p ? p->n : 0, vals.v, NULL, NULL, 0)
                   : PQsendQueryParams(ps->conn, sql, p ? p->n : 0, NULL, vals.v, NULL, NULL, 0);
    values_free(&vals);
    if (!sent)
        return result_error(ps, NULL, what);
    PQsetSingleRowMode(ps->conn);
    int stopped = 0;
    PGresult *r;
    while ((r = PQgetResult(ps->conn)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE) {
            if (!stopped && error == 0) {
                int rc = fn(arg, r);
                if (rc < 0)
                    error = rc;
                else if (rc > 0)
                    stopped = 1;
            }
        } else if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK && error == 0) {
            error = result_error(ps, r, what);
        }
        PQclear(r);
    }
    return error;
}

/* A text[] literal of words (each quoted, '"' and '\' escaped). */
static int array_literal(kevo_buf *out, const char *const *words, size_t n)
{
    int error = kevo_buf_puts(out, "{");
    for (size_t i = 0; i < n && error == 0; i++) {
        error = kevo_buf_puts(out, i ? ",\"" : "\"");
        for (const char *c = words[i]; *c && error == 0; c++) {
            if (*c == '"' || *c == '\\')
                error = kevo_buf_puts(out, "\\");
            if (error == 0)
                error = kevo_buf_put(out, c, 1);
        }
        if (error == 0)
            error = kevo_buf_puts(out, "\"");
    }
    if (error == 0)
        error = kevo_buf_puts(out, "}");
    return error;
}

/* ---- transactions ---------------------------------------------------- */

static int tx_begin(kevo_store *s, int write)
{
    pg_store *ps = ctx_of(s);
    char sql[96];
    int error;
    if (ps->depth == 0) {
        reconnect_if_lost(ps);
        error = pg_exec(
            ps, write ? "BEGIN; " KEVO_PG_LOCK : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            NULL, "cannot begin a transaction");
        if (error < 0 && PQtransactionStatus(ps->conn) != PQTRANS_IDLE) {
            PGresult *r = PQexec(ps->conn, "ROLLBACK");
            PQclear(r);
        }
    } else {
        snprintf(sql, sizeof(sql), "SAVEPOINT kevo_sp%d", ps->depth);
        error = pg_exec(ps, sql, NULL, "cannot begin a transaction");
    }
    if (error == 0)
        ps->depth++;
    return error;
}

static int pg_tx_begin(kevo_store *s)
{
    return tx_begin(s, 1);
}

static int pg_tx_begin_read(kevo_store *s)
{
    return tx_begin(s, 0);
}

/* Add the word-count deltas of the committing transaction to item_words:
 * one upsert per distinct word, under the writers' lock. */
static int flush_words(pg_store *ps)
{
    if (!ps->pending)
        return 0;
    return pg_exec(ps,
                   "INSERT INTO item_words(word, df) SELECT word, sum(d) FROM pg_temp.kevo_dfdelta"
                   " GROUP BY word HAVING sum(d) <> 0"
                   " ON CONFLICT (word) DO UPDATE SET df = item_words.df + excluded.df",
                   NULL, "cannot update the search word counts");
}

static int pg_tx_commit(kevo_store *s)
{
    pg_store *ps = ctx_of(s);
    if (ps->depth <= 0)
        return kevo_error_set(KEVO_EINVAL, "%s: commit without a transaction", ps->label);
    char sql[128];
    PGresult *r = NULL;
    int error = 0;
    if (ps->depth == 1) {
        error = flush_words(ps);
        ps->pending = 0;
        if (error == 0)
            error = pg_exec(ps, "COMMIT", &r, "cannot commit");
        /* COMMIT of an aborted transaction succeeds as a ROLLBACK */
        if (error == 0 && !strcmp(PQcmdStatus(r), "ROLLBACK"))
            error = kevo_error_set(KEVO_EINVAL,
                                   "%s: cannot commit: the transaction was rolled back (an "
                                   "earlier statement in it failed)",
                                   ps->label);
        PQclear(r);
        if (PQtransactionStatus(ps->conn) != PQTRANS_IDLE) {
            r = PQexec(ps->conn, "ROLLBACK");
            PQclear(r);
        }
        ps->depth = 0;
        return error;
    }
    snprintf(sql, sizeof(sql), "RELEASE SAVEPOINT kevo_sp%d", ps->depth - 1);
    error = pg_exec(ps, sql, NULL, "cannot commit");
    if (error < 0) {
        /* leave the nesting as it was before this level's begin */
        snprintf(sql, sizeof(sql), "ROLLBACK TO SAVEPOINT kevo_sp%d; RELEASE SAVEPOINT kevo_sp%d",
                 ps->depth - 1, ps->depth - 1);
        r = PQexec(ps->conn, sql);
        PQclear(r);
    }
    ps->depth--;
    return error;
}

static int pg_tx_rollback(kevo_store *s)
{
    pg_store *ps = ctx_of(s);
    if (ps->depth <= 0)
        return kevo_error_set(KEVO_EINVAL, "%s: rollback without a transaction", ps->label);
    char sql[128];
    if (ps->depth == 1)
        snprintf(sql, sizeof(sql), "ROLLBACK");
    else
        snprintf(sql, sizeof(sql), "ROLLBACK TO SAVEPOINT kevo_sp%d; RELEASE SAVEPOINT kevo_sp%d",
                 ps->depth - 1, ps->depth - 1);
    ps->depth--;
    if (ps->depth == 0)
        ps->pending = 0;
    /* a lost connection has rolled back already */
    if (ps->depth == 0 && PQtransactionStatus(ps->conn) == PQTRANS_IDLE)
        return 0;
    return pg_exec(ps, sql, NULL, "cannot roll back");
}

/* ---- requested ids --------------------------------------------------- */

/* Is `id` in use in `table`? (table is one of ours, never user input) */
static int id_taken(pg_store *ps, const char *table, int64_t id, int *out)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE id = $1", table);
    params p = {0};
    p_int(&p, id);
    int64_t n = 0;
    int error = query_int64(ps, sql, &p, &n, "cannot look up an id");
    if (error == 0)
        *out = n > 0;
    return error;
}

/* After a row was inserted with a requested id, move the table's identity
 * past it so that fresh ids never collide with it. Writers hold the
 * advisory lock, so max(id) is every committed row's. */
static int id_bump(pg_store *ps, const char *table)
{
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SELECT setval(pg_get_serial_sequence('%s', 'id'), (SELECT max(id) FROM %s))", table,
             table);
    return pg_run(ps, sql, NULL, NULL, "cannot advance an id sequence");
}

/* Insert with a requested id when it is free, else a fresh one: `sql_id`
 * takes the id as its first parameter, `sql_fresh` the same parameters
 * without it; both end in RETURNING id. */
static int insert_row(pg_store *ps, const char *table, int64_t want, const char *sql_id,
                      const char *sql_fresh, params *p, int64_t *out_id, const char *what)
{
    int taken = 1, error = 0;
    if (want > 0 && (error = id_taken(ps, table, want, &taken)) < 0)
        return error;
    params q = {0};
    if (!taken) {
        p_int(&q, want);
        for (int i = 0; i < p->n; i++)
            p_text(&q, p->v[i]);
        q.overflow |= p->overflow;
    }
    int64_t id = 0;
    if ((error = query_int64(ps, taken ? sql_fresh : sql_id, taken ? p : &q, &id, what)) < 0)
        return error;
    if (!taken && (error = id_bump(ps, table)) < 0)
        return error;
    if (out_id)
        *out_id = id;
    return 0;
}

/* ---- runs ------------------------------------------------------------ */

static int pg_run_insert(kevo_store *s, const kevo_run *r, int64_t *out_id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, r->uid);
    p_text(&p, r->config_json);
    p_text(&p, r->status);
    p_int(&p, r->started);
    p_int(&p, r->finished);
    return insert_row(ps, "runs", r->id,
                      "INSERT INTO runs(id, uid, config, status, started, finished)"
                      " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                      "INSERT INTO runs(uid, config, status, started, finished)"
                      " VALUES ($1, $2, $3, $4, $5) RETURNING id",
                      &p, out_id, "cannot insert a run");
}

static int pg_run_update(kevo_store *s, int64_t id, const char *status, int64_t finished,
                         const char *config_json)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, status);
    p_int(&p, finished);
    p_text(&p, config_json);
    p_int(&p, id);
    PGresult *r = NULL;
    int error = pg_run(ps,
                       "UPDATE runs SET status = coalesce($1, status), finished = $2,"
                       " config = coalesce($3, config) WHERE id = $4",
                       &p, &r, "cannot update a run");
    if (error < 0)
        return error;
    int changed = atoi(PQcmdTuples(r));
    PQclear(r);
    if (changed == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no run %lld", ps->label, (long long)id);
    return 0;
}

typedef struct each_ctx {
    void *cb;
    void *arg;
    int opt; /* method-specific */
} each_ctx;

static int run_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_run run = {
        .id = col_int(r, 0, 0),
        .uid = col_text(r, 0, 1),
        .config_json = col_text(r, 0, 2),
        .status = col_text(r, 0, 3),
        .started = col_int(r, 0, 4),
        .finished = col_int(r, 0, 5),
    };
    return ((kevo_store_run_cb)e->cb)(e->arg, &run);
}

static int pg_run_each(kevo_store *s, int64_t id, kevo_store_run_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    if (id)
        p_int(&p, id);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps,
                   id ? "SELECT id, uid, config, status, started, finished FROM runs WHERE id = $1"
                      : "SELECT id, uid, config, status, started, finished FROM runs ORDER BY id",
                   &p, run_row, &e, "cannot read runs");
}

static int pg_run_delete(kevo_store *s, int64_t id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, id);
    return pg_run(ps, "DELETE FROM runs WHERE id = $1", &p, NULL, "cannot delete a run");
}

/* ---- full-text queries ----------------------------------------------- */

/* The words of a search and their weights, chosen as the SQLite store
 * chooses them (build_match there): the query's words (terms.c), and for
 * items the most selective ones (lowest document frequency), at most
 * SEARCH_TERMS_MAX of them and about SEARCH_POSTINGS_MAX postings
 * together, dropping words in more than half of the documents unless no
 * other word is left. Each word's weight is its BM25 inverse document
 * frequency, ln(1 + (N - df + 0.5) / (df + 0.5)). */
typedef struct search_terms {
    kevo_buf words; /* text[] literal */
    kevo_buf idfs;  /* float8[] literal */
    kevo_buf any;   /* "w1 or w2 ..." for websearch_to_tsquery */
    size_t n;
} search_terms;

static void search_terms_free(search_terms *st)
{
    kevo_buf_free(&st->words);
    kevo_buf_free(&st->idfs);
    kevo_buf_free(&st->any);
}

typedef struct weighted_term {
    const char *term;
    int64_t df;
    size_t order;
} weighted_term;

static int by_df(const void *a, const void *b)
{
    const weighted_term *x = a, *y = b;
    if (x->df != y->df)
        return x->df < y->df ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int build_terms(pg_store *ps, const char *table, const char *text, int select,
                       search_terms *out)
{
    kevo_terms terms = {0};
    weighted_term *w = NULL;
    kevo_buf lit = {0}, sql = {0};
    PGresult *r = NULL;
    int error = kevo_terms_extract(&terms, text, SEARCH_WORDS_MAX);
    if (error < 0 || terms.n == 0)
        goto done;
    if (!(w = calloc(terms.n, sizeof(*w)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory building a search");
        goto done;
    }
    /* items: the frequencies item_words keeps (pg_schema.h); tasks are
     * few, so their matches are counted */
    if ((error = array_literal(&lit, (const char *const *)terms.v, terms.n)) < 0 ||
        (error = kevo_buf_puts(
             &sql, !strcmp(table, "items")
                       ? "SELECT coalesce((SELECT df FROM item_words WHERE word = ''), 0)"
                         " + coalesce((SELECT sum(d) FROM pg_temp.kevo_dfdelta WHERE word = ''),"
                         " 0), u.o, coalesce(w.df, 0) + coalesce((SELECT sum(x.d)"
                         " FROM pg_temp.kevo_dfdelta x WHERE x.word = lower(u.t)), 0)"
                         " FROM unnest($1::text[]) WITH ORDINALITY AS u(t, o)"
                         " LEFT JOIN item_words w ON w.word = lower(u.t) ORDER BY u.o"
                       : "SELECT (SELECT count(*) FROM tasks), u.o,"
                         " (SELECT count(*) FROM tasks x"
                         " WHERE x.fts @@ plainto_tsquery('simple', u.t))"
                         " FROM unnest($1::text[]) WITH ORDINALITY AS u(t, o) ORDER BY u.o")) < 0)
        goto done;
    params p = {0};
    p_text(&p, lit.ptr);
    if ((error = pg_run(ps, sql.ptr, &p, &r, "cannot count search words")) < 0)
        goto done;
    int64_t docs = PQntuples(r) > 0 ? col_int(r, 0, 0) : 0;
    size_t nw = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t o = col_int(r, i, 1), df = col_int(r, i, 2);
        if (o < 1 || (size_t)o > terms.n || df <= 0)
            continue;
        w[nw++] = (weighted_term){terms.v[o - 1], df, (size_t)o};
    }
    if (select && nw > 1)
        qsort(w, nw, sizeof(*w), by_df);
    int64_t postings = 0;
    const char *chosen[SEARCH_TERMS_MAX];
    char idf[SEARCH_TERMS_MAX][32];
    size_t used = 0;
    for (size_t i = 0; i < nw && used < SEARCH_TERMS_MAX; i++) {
        if (select && used > 0 && postings + w[i].df > SEARCH_POSTINGS_MAX)
            break;
        if (select && used > 0 && w[i].df * 2 > docs)
            break;
        postings += w[i].df;
        double x = (double)docs - (double)w[i].df + 0.5;
        if (x < 0)
            x = 0;
        snprintf(idf[used], sizeof(idf[0]), "%.17g", log(1.0 + x / ((double)w[i].df + 0.5)));
        chosen[used++] = w[i].term;
    }
    if (used == 0)
        goto done;
    if ((error = array_literal(&out->words, chosen, used)) < 0 ||
        (error = kevo_buf_puts(&out->idfs, "{")) < 0)
        goto done;
    for (size_t i = 0; i < used && error == 0; i++)
        error = kevo_buf_printf(&out->idfs, "%s%s", i ? "," : "", idf[i]);
    for (size_t i = 0; i < used && error == 0; i++)
        error = kevo_buf_printf(&out->any, "%s%s", i ? " or " : "", chosen[i]);
    if (error == 0)
        error = kevo_buf_puts(&out->idfs, "}");
    if (error == 0)
        out->n = used;
done:
    PQclear(r);
    free(w);
    kevo_buf_free(&lit);
    kevo_buf_free(&sql);
    kevo_terms_free(&terms);
    return error;
}

/* The score of row x of a search: sum over the chosen words of
 * idf(word) * ts_rank(x.fts, word) with the column weights of pg_schema.h
 * (A = 1.0, B = 0.5: BM25's 2:1) and ts_rank's length normalisation 1
 * (divide by 1 + log(length)): BM25's inverse document frequency, a
 * saturating term frequency and a preference for short documents. Takes
 * the words as $1 and the weights as $2. */
#define SEARCH_SCORE "(SELECT sum(w.idf * ts_rank('{0, 0, 0.5, 1}', x.fts, w.q, 1)) FROM words w)"
/* The CTE SEARCH_SCORE reads: each word's query made once. */
#define SEARCH_WORDS                                                                               \
    "WITH words AS MATERIALIZED (SELECT plainto_tsquery('simple', u.t) AS q, u.idf"                \
    " FROM unnest($1::text[], $2::float8[]) AS u(t, idf)) "

/* ---- tasks ----------------------------------------------------------- */

#define TASK_COLS "x.id, x.name, x.level, x.category, x.description, x.reference, x.suite_path"

static int task_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_memory_task t = {
        .id = col_int(r, 0, 0),
        .name = col_text(r, 0, 1),
        .level = (int)col_int(r, 0, 2),
        .category = col_text(r, 0, 3),
        .description = col_text(r, 0, 4),
        .reference = col_text(r, 0, 5),
        .suite_path = col_text(r, 0, 6),
    };
    double score = e->opt ? col_dbl(r, 0, 7) : 0.0;
    return ((kevo_store_task_cb)e->cb)(e->arg, &t, score);
}

static int pg_task_upsert(kevo_store *s, const kevo_memory_task *t, int64_t *out_id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, t->name);
    p_int(&p, t->level);
    p_text(&p, t->category);
    p_text(&p, t->description);
    p_text(&p, t->reference);
    p_text(&p, t->suite_path);
    int64_t id = 0;
    int error = query_int64(
        ps,
        "INSERT INTO tasks(name, level, category, description, reference, suite_path)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE SET"
        " level = CASE WHEN excluded.level <> 0 THEN excluded.level ELSE tasks.level END,"
        " category = coalesce(excluded.category, tasks.category),"
        " description = coalesce(excluded.description, tasks.description),"
        " reference = coalesce(excluded.reference, tasks.reference),"
        " suite_path = coalesce(excluded.suite_path, tasks.suite_path) RETURNING id",
        &p, &id, "cannot store a task");
    if (error == 0 && out_id)
        *out_id = id;
    return error;
}

static int pg_task_each(kevo_store *s, const char *name, kevo_store_task_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    if (name)
        p_text(&p, name);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps,
                   name ? "SELECT " TASK_COLS " FROM tasks x WHERE x.name = $1"
                        : "SELECT " TASK_COLS " FROM tasks x ORDER BY x.name COLLATE \"C\"",
                   &p, task_row, &e, "cannot read tasks");
}

static int pg_task_search(kevo_store *s, const char *query, size_t limit, kevo_store_task_cb cb,
                          void *arg)
{
    pg_store *ps = ctx_of(s);
    search_terms st = {0};
    int error = build_terms(ps, "tasks", query, 0, &st);
    if (error < 0 || st.n == 0)
        goto done;
    params p = {0};
    p_text(&p, st.words.ptr);
    p_text(&p, st.idfs.ptr);
    p_text(&p, st.any.ptr);
    p_int(&p, limit ? (int64_t)limit : 10);
    each_ctx e = {(void *)cb, arg, 1};
    error = pg_each(ps,
                    SEARCH_WORDS "SELECT " TASK_COLS ", " SEARCH_SCORE " AS score FROM tasks x"
                                 " WHERE x.fts @@ websearch_to_tsquery('simple', $3)"
                                 " ORDER BY score DESC, x.id LIMIT $4",
                    &p, task_row, &e, "cannot search tasks");
done:
    search_terms_free(&st);
    return error;
}

static int pg_task_delete(kevo_store *s, const char *name)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, name);
    return pg_run(ps, "DELETE FROM tasks WHERE name = $1", &p, NULL, "cannot delete a task");
}

/* ---- attempts -------------------------------------------------------- */

#define ATTEMPT_COLS                                                                               \
    "a.id, a.uid, a.run_id, t.name, a.backend, a.generator, a.stage, a.iteration, a.parent_id,"    \
    " a.verdict, a.gates, a.feedback, %s, a.recipes, a.candidate_us, a.reference_us,"              \
    " a.speedup, a.tokens_prompt, a.tokens_completion, a.tokens_estimated, a.reward_raw,"          \
    " a.reward, a.created, a.baseline, a.machine"

static int attempt_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_attempt a = {
        .id = col_int(r, 0, 0),
        .uid = col_text(r, 0, 1),
        .run_id = col_int(r, 0, 2),
        .task = col_text(r, 0, 3),
        .backend = col_text(r, 0, 4),
        .generator = col_text(r, 0, 5),
        .stage = (kevo_stage)col_int(r, 0, 6),
        .iteration = (int)col_int(r, 0, 7),
        .parent_id = col_int(r, 0, 8),
        .gates_json = col_text(r, 0, 10),
        .feedback = col_text(r, 0, 11),
        .source = col_text(r, 0, 12),
        .recipes_json = col_text(r, 0, 13),
        .candidate_us = col_dbl(r, 0, 14),
        .reference_us = col_dbl(r, 0, 15),
        .speedup = col_dbl(r, 0, 16),
        .tokens_prompt = col_int(r, 0, 17),
        .tokens_completion = col_int(r, 0, 18),
        .tokens_estimated = (int)col_int(r, 0, 19),
        .reward_raw = col_dbl(r, 0, 20),
        .reward = col_dbl(r, 0, 21),
        .created = col_int(r, 0, 22),
        .baseline = col_text(r, 0, 23),
        .machine = col_text(r, 0, 24),
    };
    const char *verdict = col_text(r, 0, 9);
    if (kevo_verdict_parse(&a.verdict, verdict) < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "attempt %lld: the store holds the verdict '%s', "
                              "which is not a kevo verdict (was the database edited by hand?)",
                              (long long)a.id, verdict ? verdict : "(null)");
    return ((kevo_store_attempt_cb)e->cb)(e->arg, &a);
}

static int pg_attempt_insert(kevo_store *s, const kevo_attempt *a, int64_t *out_id)
{
    pg_store *ps = ctx_of(s);
    int error = 0;
    if ((unsigned)a->verdict >= KEVO_VERDICT_COUNT)
        return kevo_error_set(KEVO_EINVAL,
                              "%s: attempt (task %s): field 'verdict' is %d, not a kevo_verdict",
                              ps->label, a->task ? a->task : "(null)", (int)a->verdict);
    if (!a->task)
        return kevo_error_set(KEVO_EINVAL, "%s: attempt: field 'task' is missing", ps->label);
    params t = {0};
    p_text(&t, a->task);
    if ((error = pg_run(ps, "INSERT INTO tasks(name) VALUES ($1) ON CONFLICT (name) DO NOTHING", &t,
                        NULL, "cannot store a task")) < 0)
        return error;
    params p = {0};
    p_text(&p, a->uid);
    p_id(&p, a->run_id);
    p_text(&p, a->task);
    p_text(&p, a->backend);
    p_text(&p, a->generator);
    p_int(&p, (int)a->stage);
    p_int(&p, a->iteration);
    p_id(&p, a->parent_id);
    p_text(&p, kevo_verdict_name(a->verdict));
    p_text(&p, a->gates_json);
    p_text(&p, a->feedback);
    p_text(&p, a->source);
    p_text(&p, a->recipes_json);
    p_dbl(&p, a->candidate_us);
    p_dbl(&p, a->reference_us);
    p_dbl(&p, a->speedup);
    p_int(&p, a->tokens_prompt);
    p_int(&p, a->tokens_completion);
    p_int(&p, a->tokens_estimated ? 1 : 0);
    p_dbl(&p, a->reward_raw);
    p_dbl(&p, a->reward);
    p_int(&p, a->created);
    p_text(&p, a->baseline);
    p_text(&p, a->machine);
#define ATTEMPT_INSERT_COLS                                                                        \
    "uid, run_id, task_id, backend, generator, stage, iteration, parent_id, verdict, gates,"       \
    " feedback, source, recipes, candidate_us, reference_us, speedup, tokens_prompt,"              \
    " tokens_completion, tokens_estimated, reward_raw, reward, created, baseline, machine"
    return insert_row(
        ps, "attempts", a->id,
        "INSERT INTO attempts(id, " ATTEMPT_INSERT_COLS ") VALUES ($1, $2, $3,"
        " (SELECT id FROM tasks WHERE name = $4), $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,"
        " $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25) RETURNING id",
        "INSERT INTO attempts(" ATTEMPT_INSERT_COLS ") VALUES ($1, $2,"
        " (SELECT id FROM tasks WHERE name = $3), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
        " $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24) RETURNING id",
        &p, out_id, "cannot insert an attempt");
#undef ATTEMPT_INSERT_COLS
}

static int pg_attempt_each(kevo_store *s, int64_t id, const kevo_attempt_filter *f,
                           kevo_store_attempt_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    kevo_buf sql = {0};
    kevo_attempt_filter none = {0};
    params p = {0};
    if (!f)
        f = &none;
    int error = kevo_buf_printf(
        &sql, "SELECT " ATTEMPT_COLS " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE true",
        f->no_source && !id ? "NULL" : "a.source");
    if (id) {
        error = error ? error : kevo_buf_printf(&sql, " AND a.id = $%d", p_int(&p, id));
    } else {
        if (!error && f->run_id)
            error = kevo_buf_printf(&sql, " AND a.run_id = $%d", p_int(&p, f->run_id));
        if (!error && f->task)
            error =
                kevo_buf_printf(&sql, " AND a.task_id = (SELECT id FROM tasks WHERE name = $%d)",
                                p_text(&p, f->task));
        if (!error && f->backend)
            error = kevo_buf_printf(&sql, " AND a.backend = $%d", p_text(&p, f->backend));
        if (!error && f->parent_id)
            error = kevo_buf_printf(&sql, " AND a.parent_id = $%d", p_int(&p, f->parent_id));
        if (!error && f->used_item)
            error = kevo_buf_printf(
                &sql, " AND a.id IN (SELECT attempt_id FROM used WHERE item_id = $%d)",
                p_int(&p, f->used_item));
        if (!error && f->stage)
            error = kevo_buf_printf(&sql, " AND a.stage = $%d", p_int(&p, (int)f->stage));
        if (!error && f->correct_only)
            error = kevo_buf_puts(&sql, " AND a.verdict = 'correct'");
        if (!error)
            error = kevo_buf_puts(&sql, f->best_first
                                            ? " ORDER BY a.speedup DESC,"
                                              " CASE WHEN a.candidate_us > 0 THEN a.candidate_us"
                                              " ELSE 1e300 END, a.id"
                                        : f->newest_first ? " ORDER BY a.id DESC"
                                                          : " ORDER BY a.id");
        if (!error && f->limit)
            error = kevo_buf_printf(&sql, " LIMIT $%d", p_int(&p, (int64_t)f->limit));
    }
    if (error < 0)
        goto done;
    each_ctx e = {(void *)cb, arg, 0};
    error = pg_each(ps, sql.ptr, &p, attempt_row, &e, "cannot read attempts");
done:
    kevo_buf_free(&sql);
    return error;
}

static int pg_attempt_delete(kevo_store *s, int64_t id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, id);
    return pg_run(ps, "DELETE FROM attempts WHERE id = $1", &p, NULL, "cannot delete an attempt");
}

static int pg_attempt_set_reward(kevo_store *s, int64_t id, double reward)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_dbl(&p, reward);
    p_int(&p, id);
    return pg_run(ps, "UPDATE attempts SET reward = $1 WHERE id = $2", &p, NULL,
                  "cannot update an attempt's reward");
}

/* ---- items ----------------------------------------------------------- */

#define ITEM_COLS                                                                                  \
    "x.id, x.uid, x.kind, x.title, %s, x.category, x.task, x.backend, x.tags, x.created"

static int item_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_item_kind kind = 0;
    if (kevo_item_kind_parse(&kind, col_text(r, 0, 2)) < 0)
        kind = 0;
    kevo_item it = {
        .id = col_int(r, 0, 0),
        .uid = col_text(r, 0, 1),
        .kind = kind,
        .title = col_text(r, 0, 3),
        .body = col_text(r, 0, 4),
        .category = col_text(r, 0, 5),
        .task = col_text(r, 0, 6),
        .backend = col_text(r, 0, 7),
        .tags = col_text(r, 0, 8),
        .created = col_int(r, 0, 9),
    };
    double score = e->opt ? col_dbl(r, 0, 10) : 0.0;
    return ((kevo_store_item_cb)e->cb)(e->arg, &it, score);
}

static int pg_item_insert(kevo_store *s, const kevo_item *it, int64_t *out_id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, it->uid);
    p_text(&p, kevo_item_kind_name(it->kind));
    p_text(&p, it->title);
    p_text(&p, it->body);
    p_text(&p, it->category);
    p_text(&p, it->task);
    p_text(&p, it->backend);
    p_text(&p, it->tags);
    p_int(&p, it->created);
    /* its words go to the transaction's word-count deltas (flush_words) */
#define ITEM_WORDS_PLUS                                                                            \
    " RETURNING id, fts), d AS (INSERT INTO pg_temp.kevo_dfdelta(word, d)"                         \
    " SELECT t.word, 1 FROM ins, unnest(tsvector_to_array(ins.fts)) AS t(word)"                    \
    " UNION ALL SELECT '', 1) SELECT id FROM ins"
    int error = insert_row(ps, "items", it->id,
                           "WITH ins AS (INSERT INTO items(id, uid, kind, title, body, category,"
                           " task, backend, tags, created)"
                           " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)" ITEM_WORDS_PLUS,
                           "WITH ins AS (INSERT INTO items(uid, kind, title, body, category, task,"
                           " backend, tags, created)"
                           " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)" ITEM_WORDS_PLUS,
                           &p, out_id, "cannot insert an item");
#undef ITEM_WORDS_PLUS
    if (error == 0)
        ps->pending = 1;
    return error;
}

/* WHERE terms for an item filter, its values appended to `p`. `kinds`
 * (kevo_item_kind_name of each kind in the mask) is a text[] literal the
 * caller keeps alive. */
static int item_filter_sql(kevo_buf *sql, params *p, const kevo_item_filter *f, kevo_buf *kinds)
{
    int error = 0;
    if (f->kinds) {
        const char *names[KEVO_ITEM_KIND_MAX];
        size_t n = 0;
        for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++)
            if (f->kinds & KEVO_ITEM_BIT(k))
                names[n++] = kevo_item_kind_name((kevo_item_kind)k);
        if ((error = array_literal(kinds, names, n)) < 0 ||
            (error = kevo_buf_printf(sql, " AND x.kind = ANY($%d::text[])",
                                     p_text(p, kevo_buf_cstr(kinds)))) < 0)
            return error;
    }
    if (f->category &&
        (error = kevo_buf_printf(sql, " AND x.category = $%d", p_text(p, f->category))) < 0)
        return error;
    if (f->task && (error = kevo_buf_printf(sql, " AND x.task = $%d", p_text(p, f->task))) < 0)
        return error;
    if (f->backend) {
        int i = p_text(p, f->backend);
        if ((error = kevo_buf_printf(sql, " AND (x.backend = $%d OR x.backend IS NULL)", i)) < 0)
            return error;
    }
    /* tags are space-separated words; the tag is one of them, compared
     * byte for byte (strpos, not LIKE: '_' and '%' are plain characters) */
    if (f->tag && (error = kevo_buf_printf(sql,
                                           " AND strpos(' ' || coalesce(x.tags, '') || ' ',"
                                           " ' ' || $%d || ' ') > 0",
                                           p_text(p, f->tag))) < 0)
        return error;
    return 0;
}

static int pg_item_each(kevo_store *s, int64_t id, const kevo_item_filter *f, kevo_store_item_cb cb,
                        void *arg)
{
    pg_store *ps = ctx_of(s);
    kevo_buf sql = {0}, kinds = {0};
    kevo_item_filter none = {0};
    params p = {0};
    if (!f)
        f = &none;
    int error = kevo_buf_printf(&sql, "SELECT " ITEM_COLS " FROM items x WHERE true",
                                f->no_body ? "NULL" : "x.body");
    if (error < 0)
        goto done;
    if (id)
        error = kevo_buf_printf(&sql, " AND x.id = $%d", p_int(&p, id));
    else if ((error = item_filter_sql(&sql, &p, f, &kinds)) == 0) {
        error = kevo_buf_puts(&sql, f->newest_first ? " ORDER BY x.id DESC" : " ORDER BY x.id");
        if (!error && (f->limit || f->offset)) {
            int li = p_id(&p, (int64_t)f->limit); /* NULL: no limit */
            int oi = p_int(&p, (int64_t)f->offset);
            error = kevo_buf_printf(&sql, " LIMIT $%d OFFSET $%d", li, oi);
        }
    }
    if (error < 0)
        goto done;
    each_ctx e = {(void *)cb, arg, 0};
    error = pg_each(ps, sql.ptr, &p, item_row, &e, "cannot read items");
done:
    kevo_buf_free(&sql);
    kevo_buf_free(&kinds);
    return error;
}

static int pg_item_search(kevo_store *s, const char *query, const kevo_item_filter *f,
                          kevo_store_item_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    search_terms st = {0};
    kevo_buf sql = {0}, kinds = {0};
    kevo_item_filter none = {0};
    if (!f)
        f = &none;
    int error = build_terms(ps, "items", query, 1, &st);
    if (error < 0 || st.n == 0)
        goto done;
    params p = {0};
    p_text(&p, st.words.ptr);
    p_text(&p, st.idfs.ptr);
    if ((error = kevo_buf_printf(&sql,
                                 SEARCH_WORDS "SELECT " ITEM_COLS ", " SEARCH_SCORE
                                              " AS score FROM items x"
                                              " WHERE x.fts @@ websearch_to_tsquery('simple', $%d)",
                                 f->no_body ? "NULL" : "x.body", p_text(&p, st.any.ptr))) < 0 ||
        (error = item_filter_sql(&sql, &p, f, &kinds)) < 0 ||
        (error = kevo_buf_printf(&sql, " ORDER BY score DESC, x.id LIMIT $%d",
                                 p_int(&p, f->limit ? (int64_t)f->limit : 20))) < 0)
        goto done;
    each_ctx e = {(void *)cb, arg, 1};
    error = pg_each(ps, sql.ptr, &p, item_row, &e, "cannot search items");
done:
    search_terms_free(&st);
    kevo_buf_free(&sql);
    kevo_buf_free(&kinds);
    return error;
}

static int pg_item_lookup(kevo_store *s, kevo_item_kind kind, const char *title,
                          const char *backend, kevo_store_item_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, kevo_item_kind_name(kind));
    p_text(&p, title);
    p_text(&p, backend);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps,
                   "SELECT x.id, x.uid, x.kind, x.title, x.body, x.category, x.task, x.backend,"
                   " x.tags, x.created FROM items x WHERE x.kind = $1 AND x.title = $2"
                   " AND (x.backend = $3 OR x.backend IS NULL)"
                   " ORDER BY x.backend IS NULL, x.id",
                   &p, item_row, &e, "cannot read items");
}

static int pg_item_delete(kevo_store *s, int64_t id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, id);
    /* the row's words leave the counts (read before the row goes) */
    int error =
        pg_run(ps,
               "WITH d AS (INSERT INTO pg_temp.kevo_dfdelta(word, d)"
               " SELECT t.word, -1 FROM items i, unnest(tsvector_to_array(i.fts)) AS t(word)"
               " WHERE i.id = $1 UNION ALL SELECT '', -1 FROM items WHERE id = $1)"
               " DELETE FROM items WHERE id = $1",
               &p, NULL, "cannot delete an item");
    if (error == 0)
        ps->pending = 1;
    return error;
}

static int pg_find_uid(kevo_store *s, kevo_store_table table, const char *uid, int64_t *out_id)
{
    pg_store *ps = ctx_of(s);
    const char *sql = table == KEVO_STORE_RUNS    ? "SELECT id FROM runs WHERE uid = $1"
                      : table == KEVO_STORE_ITEMS ? "SELECT id FROM items WHERE uid = $1"
                                                  : "SELECT id FROM attempts WHERE uid = $1";
    params p = {0};
    p_text(&p, uid);
    PGresult *r = NULL;
    int error = pg_run(ps, sql, &p, &r, "cannot look up a uid");
    if (error < 0)
        return error;
    if (PQntuples(r) > 0)
        *out_id = col_int(r, 0, 0);
    else
        error = KEVO_ENOTFOUND;
    PQclear(r);
    return error;
}

/* ---- edges ----------------------------------------------------------- */

static int pg_used_insert(kevo_store *s, int64_t attempt_id, const kevo_used_item *u)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, attempt_id);
    p_int(&p, u->item_id);
    p_int(&p, (int)u->stage);
    p_int(&p, u->rank);
    p_int(&p, u->tokens);
    p_int(&p, u->no_credit ? 1 : 0);
    return pg_run(ps,
                  "INSERT INTO used(attempt_id, item_id, stage, rank, tokens, no_credit)"
                  " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (attempt_id, item_id) DO NOTHING",
                  &p, NULL, "cannot insert a used edge");
}

static int used_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_used_edge edge = {
        .attempt_id = col_int(r, 0, 0),
        .used = {.item_id = col_int(r, 0, 1),
                 .stage = (kevo_stage)col_int(r, 0, 2),
                 .rank = (int)col_int(r, 0, 3),
                 .tokens = (int)col_int(r, 0, 4),
                 .no_credit = col_int(r, 0, 5) != 0},
    };
    return ((kevo_store_used_cb)e->cb)(e->arg, &edge);
}

static int pg_used_each(kevo_store *s, int64_t attempt_id, int64_t item_id, kevo_store_used_cb cb,
                        void *arg)
{
    pg_store *ps = ctx_of(s);
    const char *sql =
        attempt_id && item_id ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM "
                                "used WHERE attempt_id = $1"
                                " AND item_id = $2"
        : attempt_id ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used"
                       " WHERE attempt_id = $1 ORDER BY rank, item_id"
        : item_id    ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used WHERE "
                       "item_id = $1"
                       " ORDER BY attempt_id"
                     : "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used"
                       " ORDER BY attempt_id, rank, item_id";
    params p = {0};
    if (attempt_id)
        p_int(&p, attempt_id);
    if (item_id)
        p_int(&p, item_id);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps, sql, &p, used_row, &e, "cannot read used edges");
}

static int pg_distilled_insert(kevo_store *s, int64_t item_id, int64_t attempt_id)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, item_id);
    p_int(&p, attempt_id);
    return pg_run(ps,
                  "INSERT INTO distilled_from(item_id, attempt_id) VALUES ($1, $2)"
                  " ON CONFLICT (item_id, attempt_id) DO NOTHING",
                  &p, NULL, "cannot insert a distilled_from edge");
}

static int distilled_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_distilled_edge edge = {col_int(r, 0, 0), col_int(r, 0, 1)};
    return ((kevo_store_distilled_cb)e->cb)(e->arg, &edge);
}

static int pg_distilled_each(kevo_store *s, int64_t item_id, int64_t attempt_id,
                             kevo_store_distilled_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    const char *sql =
        item_id && attempt_id ? "SELECT item_id, attempt_id FROM distilled_from WHERE item_id = $1"
                                " AND attempt_id = $2"
        : item_id             ? "SELECT item_id, attempt_id FROM distilled_from WHERE item_id = $1"
                                " ORDER BY attempt_id"
        : attempt_id
            ? "SELECT item_id, attempt_id FROM distilled_from WHERE attempt_id = $1"
              " ORDER BY item_id"
            : "SELECT item_id, attempt_id FROM distilled_from ORDER BY item_id, attempt_id";
    params p = {0};
    if (item_id)
        p_int(&p, item_id);
    if (attempt_id)
        p_int(&p, attempt_id);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps, sql, &p, distilled_row, &e, "cannot read distilled_from edges");
}

/* ---- Q-values and reward statistics ---------------------------------- */

static int pg_q_get(kevo_store *s, kevo_q_target target, int64_t id, kevo_stage stage,
                    double *out_q, int64_t *out_n)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, id);
    if (target == KEVO_Q_ITEM)
        p_int(&p, (int)stage);
    PGresult *r = NULL;
    *out_q = 0.0;
    *out_n = 0;
    int error =
        pg_run(ps,
               target == KEVO_Q_ITEM ? "SELECT q, n FROM q_item WHERE item_id = $1 AND stage = $2"
                                     : "SELECT q, n FROM q_start WHERE attempt_id = $1",
               &p, &r, "cannot read a Q-value");
    if (error < 0)
        return error;
    if (PQntuples(r) > 0) {
        *out_q = col_dbl(r, 0, 0);
        *out_n = col_int(r, 0, 1);
    }
    PQclear(r);
    return 0;
}

static int pg_q_get_many(kevo_store *s, kevo_q_target target, const int64_t *ids, size_t n,
                         kevo_stage stage, double *out_q, int64_t *out_n)
{
    pg_store *ps = ctx_of(s);
    kevo_buf arr = {0};
    kevo_buf_puts(&arr, "{");
    for (size_t i = 0; i < n; i++) {
        kevo_buf_printf(&arr, "%s%" PRId64, i ? "," : "", ids[i]);
        out_q[i] = 0.0;
        out_n[i] = 0;
    }
    kevo_buf_puts(&arr, "}");
    int error = kevo_buf_error(&arr);
    if (error < 0) {
        kevo_buf_free(&arr);
        return error;
    }
    params p = {0};
    p_text(&p, arr.ptr);
    if (target == KEVO_Q_ITEM)
        p_int(&p, (int)stage);
    PGresult *r = NULL;
    error = pg_run(ps,
                   target == KEVO_Q_ITEM
                       ? "SELECT item_id, q, n FROM q_item WHERE item_id = ANY($1::bigint[])"
                         " AND stage = $2"
                       : "SELECT attempt_id, q, n FROM q_start WHERE attempt_id = ANY($1::bigint[])",
                   &p, &r, "cannot read Q-values");
    kevo_buf_free(&arr);
    if (error < 0)
        return error;
    for (int row = 0; row < PQntuples(r); row++) {
        int64_t id = col_int(r, row, 0);
        for (size_t i = 0; i < n; i++)
            if (ids[i] == id) {
                out_q[i] = col_dbl(r, row, 1);
                out_n[i] = col_int(r, row, 2);
            }
    }
    PQclear(r);
    return 0;
}

static int pg_q_set(kevo_store *s, const kevo_q_row *row)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    const char *sql;
    p_int(&p, row->id);
    if (row->target == KEVO_Q_ITEM) {
        p_int(&p, (int)row->stage);
        sql = row->n ? "INSERT INTO q_item(item_id, stage, q, n) VALUES ($1, $2, $3, $4)"
                       " ON CONFLICT (item_id, stage) DO UPDATE SET q = excluded.q, n = excluded.n"
                     : "DELETE FROM q_item WHERE item_id = $1 AND stage = $2";
    } else {
        sql = row->n ? "INSERT INTO q_start(attempt_id, q, n) VALUES ($1, $2, $3)"
                       " ON CONFLICT (attempt_id) DO UPDATE SET q = excluded.q, n = excluded.n"
                     : "DELETE FROM q_start WHERE attempt_id = $1";
    }
    if (row->n) {
        p_dbl(&p, row->q);
        p_int(&p, row->n);
    }
    return pg_run(ps, sql, &p, NULL, "cannot store a Q-value");
}

static int q_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_q_row row = {(kevo_q_target)e->opt, col_int(r, 0, 0), (kevo_stage)col_int(r, 0, 1),
                      col_dbl(r, 0, 2), col_int(r, 0, 3)};
    return ((kevo_store_q_cb)e->cb)(e->arg, &row);
}

static int pg_q_each(kevo_store *s, kevo_q_target target, kevo_store_q_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    each_ctx e = {(void *)cb, arg, (int)target};
    return pg_each(ps,
                   target == KEVO_Q_ITEM
                       ? "SELECT item_id, stage, q, n FROM q_item ORDER BY item_id, stage"
                       : "SELECT attempt_id, 2, q, n FROM q_start ORDER BY attempt_id",
                   NULL, q_row, &e, "cannot read Q-values");
}

static int start_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_start_point sp = {col_int(r, 0, 0), col_dbl(r, 0, 1), col_dbl(r, 0, 2), col_dbl(r, 0, 3),
                           col_int(r, 0, 4)};
    return ((kevo_store_start_cb)e->cb)(e->arg, &sp);
}

static int pg_start_each(kevo_store *s, const char *task, const char *backend,
                         kevo_store_start_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, task);
    p_text(&p, backend);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps,
                   "SELECT a.id, a.candidate_us, a.speedup, coalesce(q.q, 0), coalesce(q.n, 0)"
                   " FROM attempts a LEFT JOIN q_start q ON q.attempt_id = a.id"
                   " WHERE a.task_id = (SELECT id FROM tasks WHERE name = $1)"
                   " AND a.verdict = 'correct' AND ($2::text IS NULL OR a.backend = $2)"
                   " ORDER BY a.id",
                   &p, start_row, &e, "cannot read start points");
}

static int pg_reward_stats_get(kevo_store *s, kevo_stage stage, kevo_reward_stats *out)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, (int)stage);
    memset(out, 0, sizeof(*out));
    out->stage = stage;
    PGresult *r = NULL;
    int error = pg_run(ps, "SELECT n, mean, m2 FROM reward_stats WHERE stage = $1", &p, &r,
                       "cannot read reward statistics");
    if (error < 0)
        return error;
    if (PQntuples(r) > 0) {
        out->n = col_int(r, 0, 0);
        out->mean = col_dbl(r, 0, 1);
        out->m2 = col_dbl(r, 0, 2);
    }
    PQclear(r);
    return 0;
}

static int pg_reward_stats_set(kevo_store *s, const kevo_reward_stats *rs)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, (int)rs->stage);
    if (rs->n) {
        p_int(&p, rs->n);
        p_dbl(&p, rs->mean);
        p_dbl(&p, rs->m2);
    }
    return pg_run(ps,
                  rs->n ? "INSERT INTO reward_stats(stage, n, mean, m2) VALUES ($1, $2, $3, $4)"
                          " ON CONFLICT (stage) DO UPDATE SET n = excluded.n,"
                          " mean = excluded.mean, m2 = excluded.m2"
                        : "DELETE FROM reward_stats WHERE stage = $1",
                  &p, NULL, "cannot store reward statistics");
}

/* ---- work queue (version 2) ------------------------------------------- */

#define WORK_COLS "run_id, task, backend, %s, state, worker, lease_until, claims, error, updated"

static int work_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_work w = {
        .run_id = col_int(r, 0, 0),
        .task = col_text(r, 0, 1),
        .backend = col_text(r, 0, 2),
        .bundle = col_text(r, 0, 3),
        .worker = col_text(r, 0, 5),
        .lease_until = col_int(r, 0, 6),
        .claims = col_int(r, 0, 7),
        .error = col_text(r, 0, 8),
        .updated = col_int(r, 0, 9),
    };
    const char *state = col_text(r, 0, 4);
    if (kevo_work_state_parse(&w.state, state) < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "work row (run %lld, task %s): the store holds the "
                              "state '%s', which is not a work state",
                              (long long)w.run_id, w.task ? w.task : "(null)",
                              state ? state : "(null)");
    e->opt++;
    return ((kevo_store_work_cb)e->cb)(e->arg, &w);
}

static int pg_work_add(kevo_store *s, const kevo_work *w)
{
    pg_store *ps = ctx_of(s);
    int taken = 0;
    int error = id_taken(ps, "runs", w->run_id, &taken);
    if (error < 0)
        return error;
    if (!taken)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no run %lld to add work to", ps->label,
                              (long long)w->run_id);
    params p = {0};
    p_int(&p, w->run_id);
    p_text(&p, w->task);
    p_text(&p, w->backend);
    p_text(&p, w->bundle);
    p_int(&p, w->updated);
    PGresult *r = NULL;
    if ((error = pg_run(ps,
                        "INSERT INTO work(run_id, task, backend, bundle, state, updated)"
                        " VALUES ($1, $2, $3, $4, 'queued', $5)"
                        " ON CONFLICT (run_id, task) DO NOTHING",
                        &p, &r, "cannot add work")) < 0)
        return error;
    int added = atoi(PQcmdTuples(r));
    PQclear(r);
    if (added == 0)
        return kevo_error_set(KEVO_EEXISTS, "%s: run %lld already has task %s", ps->label,
                              (long long)w->run_id, w->task);
    return 0;
}

/* One UPDATE takes the row: the subquery locks the first claimable row and
 * skips rows another transaction holds (FOR UPDATE SKIP LOCKED), so two
 * claimers never get one row even without kevo's advisory lock (which
 * tx_begin holds as well). */
static int pg_work_claim(kevo_store *s, const char *const *backends, size_t n_backends,
                         const char *worker, int64_t now_ms, int64_t lease_ms,
                         kevo_store_work_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    kevo_buf lit = {0};
    if (n_backends == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "no backend to claim work for");
    int error = array_literal(&lit, backends, n_backends);
    if (error < 0)
        goto done;
    params p = {0};
    p_text(&p, worker);
    p_int(&p, now_ms + lease_ms);
    p_int(&p, now_ms);
    p_text(&p, lit.ptr);
    each_ctx e = {(void *)cb, arg, 0};
    error = pg_each(ps,
                    "UPDATE work SET state = 'running', worker = $1, lease_until = $2,"
                    " claims = claims + 1, error = NULL, updated = $3"
                    " WHERE (run_id, task) = (SELECT w.run_id, w.task FROM work w"
                    " JOIN runs r ON r.id = w.run_id WHERE r.finished = 0"
                    " AND (w.state = 'queued' OR (w.state = 'running' AND w.lease_until < $3))"
                    " AND w.backend = ANY($4::text[]) ORDER BY w.run_id, w.id LIMIT 1"
                    " FOR UPDATE OF w SKIP LOCKED)"
                    " RETURNING run_id, task, backend, bundle, state, worker, lease_until,"
                    " claims, error, updated",
                    &p, work_row, &e, "cannot claim work");
    if (error == 0 && e.opt == 0)
        error = KEVO_ENOTFOUND;
done:
    kevo_buf_free(&lit);
    return error;
}

static int work_update(pg_store *ps, const char *sql, params *p, int64_t run_id, const char *task,
                       const char *worker, const char *what)
{
    PGresult *r = NULL;
    int error = pg_run(ps, sql, p, &r, what);
    if (error < 0)
        return error;
    int changed = atoi(PQcmdTuples(r));
    PQclear(r);
    if (changed == 0)
        return kevo_error_set(KEVO_ENOTFOUND,
                              "%s: run %lld task %s is not held by worker %s "
                              "(the lease was lost or the task finished)",
                              ps->label, (long long)run_id, task, worker);
    return 0;
}

static int pg_work_renew(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                         int64_t now_ms, int64_t lease_ms)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_int(&p, now_ms + lease_ms);
    p_int(&p, now_ms);
    p_int(&p, run_id);
    p_text(&p, task);
    p_text(&p, worker);
    return work_update(ps,
                       "UPDATE work SET lease_until = $1, updated = $2 WHERE run_id = $3"
                       " AND task = $4 AND state = 'running' AND worker = $5",
                       &p, run_id, task, worker, "cannot renew a lease");
}

static int pg_work_finish(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                          kevo_work_state state, const char *why, int64_t now_ms)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, kevo_work_state_name(state));
    p_text(&p, why);
    p_int(&p, now_ms);
    p_int(&p, run_id);
    p_text(&p, task);
    p_text(&p, worker);
    return work_update(ps,
                       "UPDATE work SET state = $1, error = $2, lease_until = 0, updated = $3"
                       " WHERE run_id = $4 AND task = $5 AND state = 'running' AND worker = $6",
                       &p, run_id, task, worker, "cannot finish work");
}

static int pg_work_each(kevo_store *s, int64_t run_id, int with_bundle, kevo_store_work_cb cb,
                        void *arg)
{
    pg_store *ps = ctx_of(s);
    char sql[256];
    snprintf(sql, sizeof(sql), "SELECT " WORK_COLS " FROM work%s ORDER BY run_id, id",
             with_bundle ? "bundle" : "NULL", run_id ? " WHERE run_id = $1" : "");
    params p = {0};
    if (run_id)
        p_int(&p, run_id);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps, sql, &p, work_row, &e, "cannot read work");
}

/* ---- machines (version 2) --------------------------------------------- */

static int pg_machine_upsert(kevo_store *s, const kevo_memory_machine *m)
{
    pg_store *ps = ctx_of(s);
    params p = {0};
    p_text(&p, m->id);
    p_text(&p, m->hostname);
    p_text(&p, m->cpu);
    p_text(&p, m->gpu);
    p_int(&p, m->cores);
    p_int(&p, m->first_seen ? m->first_seen : m->last_seen);
    p_int(&p, m->last_seen);
    return pg_run(ps,
                  "INSERT INTO machines(id, hostname, cpu, gpu, cores, first_seen, last_seen)"
                  " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET"
                  " hostname = coalesce(excluded.hostname, machines.hostname),"
                  " cpu = coalesce(excluded.cpu, machines.cpu),"
                  " gpu = coalesce(excluded.gpu, machines.gpu),"
                  " cores = CASE WHEN excluded.cores <> 0 THEN excluded.cores"
                  " ELSE machines.cores END,"
                  " last_seen = greatest(machines.last_seen, excluded.last_seen)",
                  &p, NULL, "cannot store a machine");
}

static int machine_row(void *arg, const PGresult *r)
{
    each_ctx *e = arg;
    kevo_memory_machine m = {
        .id = col_text(r, 0, 0),
        .hostname = col_text(r, 0, 1),
        .cpu = col_text(r, 0, 2),
        .gpu = col_text(r, 0, 3),
        .cores = (int)col_int(r, 0, 4),
        .first_seen = col_int(r, 0, 5),
        .last_seen = col_int(r, 0, 6),
    };
    return ((kevo_store_machine_cb)e->cb)(e->arg, &m);
}

static int pg_machine_each(kevo_store *s, kevo_store_machine_cb cb, void *arg)
{
    pg_store *ps = ctx_of(s);
    each_ctx e = {(void *)cb, arg, 0};
    return pg_each(ps,
                   "SELECT id, hostname, cpu, gpu, cores, first_seen, last_seen FROM machines"
                   " ORDER BY id COLLATE \"C\"",
                   NULL, machine_row, &e, "cannot read machines");
}

/* ---- maintenance ----------------------------------------------------- */

/* bytes: the sum of the on-disk sizes of kevo's tables in this schema,
 * their indexes and TOAST included (pg_total_relation_size), not the size
 * of the whole database (which may hold other things). */
static int pg_stats(kevo_store *s, kevo_memory_stats *out)
{
    pg_store *ps = ctx_of(s);
    memset(out, 0, sizeof(*out));
    PGresult *r = NULL;
    int error = pg_run(ps,
                       "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM tasks),"
                       " (SELECT count(*) FROM attempts),"
                       " (SELECT count(*) FROM attempts WHERE verdict = 'correct'),"
                       " (SELECT count(*) FROM items), (SELECT count(*) FROM used),"
                       " (SELECT count(*) FROM distilled_from), (SELECT count(*) FROM q_item),"
                       " (SELECT count(*) FROM q_start),"
                       " (SELECT value::int FROM kevo_meta WHERE key = 'schema_version'),"
                       " (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                       "  WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = "
                       "current_schema()) AND c.relkind = 'r'"
                       "  AND c.relname IN (" KEVO_PG_TABLES "))",
                       NULL, &r, "cannot count the store");
    if (error < 0)
        return error;
    int64_t *dst[] = {
        &out->runs,    &out->tasks,      &out->attempts,        &out->attempts_correct,
        &out->items,   &out->edges_used, &out->edges_distilled, &out->q_items,
        &out->q_starts};
    for (int i = 0; i < 9; i++)
        *dst[i] = col_int(r, 0, i);
    out->schema_version = (int)col_int(r, 0, 9);
    out->bytes = col_int(r, 0, 10);
    PQclear(r);
    if ((error = pg_run(ps, "SELECT kind, count(*) FROM items GROUP BY kind", NULL, &r,
                        "cannot count items")) < 0)
        return error;
    for (int i = 0; i < PQntuples(r); i++) {
        kevo_item_kind k = 0;
        if (kevo_item_kind_parse(&k, col_text(r, i, 0)) == 0 && k >= 1 && k <= KEVO_ITEM_KIND_MAX)
            out->items_by_kind[k] = col_int(r, i, 1);
    }
    PQclear(r);
    return 0;
}

/* VACUUM FULL rewrites kevo's tables: deleted rows (their text) leave the
 * files. It takes each table's exclusive lock in turn, so other workers
 * wait while it runs; it is a maintenance command. */
static int pg_compact(kevo_store *s)
{
    pg_store *ps = ctx_of(s);
    if (ps->depth)
        return kevo_error_set(KEVO_EINVAL, "%s: cannot compact inside a transaction", ps->label);
    /* the word counts recounted from the items (a hand edit of the items
     * table would have left them behind) */
    int error = pg_exec(ps,
                        "BEGIN; " KEVO_PG_LOCK "; DELETE FROM item_words;"
                        " INSERT INTO item_words(word, df) SELECT t.word, count(*)"
                        " FROM items, unnest(tsvector_to_array(items.fts)) AS t(word)"
                        " GROUP BY t.word;"
                        " INSERT INTO item_words(word, df) SELECT '', count(*) FROM items; COMMIT",
                        NULL, "cannot recount the search words");
    if (error < 0) {
        PGresult *r = PQexec(ps->conn, "ROLLBACK");
        PQclear(r);
        return error;
    }
    return pg_exec(ps,
                   "VACUUM (FULL, ANALYZE) kevo_meta, runs, tasks, attempts, items, used,"
                   " distilled_from, q_item, q_start, reward_stats, machines, work, item_words",
                   NULL, "cannot compact");
}

/* ---- open / migrate / close ------------------------------------------ */

static int meta_version(pg_store *ps, int64_t *out, int *out_exists)
{
    PGresult *r = NULL;
    int error = pg_run(ps,
                       "SELECT to_regclass('kevo_meta') IS NOT NULL,"
                       " to_regclass('attempts') IS NOT NULL",
                       NULL, &r, "cannot read the schema");
    if (error < 0)
        return error;
    int meta = !strcmp(PQgetvalue(r, 0, 0), "t"), attempts = !strcmp(PQgetvalue(r, 0, 1), "t");
    PQclear(r);
    *out = 0;
    *out_exists = meta;
    if (!meta) {
        if (attempts)
            return kevo_error_set(KEVO_EINVAL,
                                  "%s: not a kevo memory store (a table 'attempts' exists but "
                                  "no kevo_meta)",
                                  ps->label);
        return 0;
    }
    return query_int64(ps, "SELECT value::bigint FROM kevo_meta WHERE key = 'schema_version'", NULL,
                       out, "cannot read the schema version");
}

static int check_version(pg_store *ps, int64_t version)
{
    if (version > KEVO_PG_SCHEMA_VERSION)
        return kevo_error_set(KEVO_EINVAL,
                              "%s: written by a newer kevo (schema version %lld, this kevo "
                              "knows up to %d)",
                              ps->label, (long long)version, KEVO_PG_SCHEMA_VERSION);
    return 0;
}

static int migrate(pg_store *ps, unsigned flags)
{
    int64_t version = 0;
    int exists = 0;
    int error = meta_version(ps, &version, &exists);
    if (error < 0 || (error = check_version(ps, version)) < 0)
        return error;
    if (version == KEVO_PG_SCHEMA_VERSION)
        return 0;
    if (!exists && (flags & KEVO_MEMORY_MUST_EXIST))
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no such memory store (no kevo tables there)",
                              ps->label);
    /* the writers' lock: two processes opening a fresh database at once
     * migrate one after the other */
    if ((error = pg_exec(ps, "BEGIN; " KEVO_PG_LOCK, NULL, "cannot begin the schema migration")) <
        0)
        goto done;
    if ((error = meta_version(ps, &version, &exists)) < 0 ||
        (error = check_version(ps, version)) < 0)
        goto done;
    if (!exists &&
        (error = pg_exec(ps, "CREATE TABLE kevo_meta(key text PRIMARY KEY, value text NOT NULL)",
                         NULL, "cannot create the schema")) < 0)
        goto done;
    for (int v = (int)version; v < KEVO_PG_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof(what), "schema migration %d failed", v + 1);
        if ((error = pg_exec(ps, kevo_pg_migrations[v], NULL, what)) < 0)
            goto done;
    }
    params p = {0};
    p_int(&p, KEVO_PG_SCHEMA_VERSION);
    if ((error = pg_run(ps,
                        "INSERT INTO kevo_meta(key, value) VALUES ('schema_version', $1)"
                        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        &p, NULL, "cannot record the schema version")) < 0)
        goto done;
    error = pg_exec(ps, "COMMIT", NULL, "cannot commit the schema migration");
done:
    if (error < 0 && PQtransactionStatus(ps->conn) != PQTRANS_IDLE) {
        PGresult *r = PQexec(ps->conn, "ROLLBACK");
        PQclear(r);
    }
    return error;
}

static void quiet_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* user@host:port/db of a connection (attempted or made), from libpq's
 * effective options: never the password. */
static char *label_of(PGconn *conn)
{
    const char *user = NULL, *host = NULL, *hostaddr = NULL, *port = NULL, *db = NULL;
    PQconninfoOption *opts = conn ? PQconninfo(conn) : NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        const char *v = o->val && *o->val ? o->val : NULL;
        if (!strcmp(o->keyword, "user"))
            user = v;
        else if (!strcmp(o->keyword, "host"))
            host = v;
        else if (!strcmp(o->keyword, "hostaddr"))
            hostaddr = v;
        else if (!strcmp(o->keyword, "port"))
            port = v;
        else if (!strcmp(o->keyword, "dbname"))
            db = v;
    }
    kevo_buf b = {0};
    kevo_buf_printf(&b, "postgresql://%s%s%s%s%s/%s", user ? user : "", user ? "@" : "",
                    host       ? host
                    : hostaddr ? hostaddr
                               : "localhost",
                    port ? ":" : "", port ? port : "", db ? db : "");
    PQconninfoFree(opts);
    return kevo_buf_detach(&b);
}

/* The schema that holds the store: named in messages when it is not
 * "public" (one database may hold several stores); none at all (no schema
 * of search_path exists) is an error saying so. */
static int name_schema(pg_store *ps)
{
    PGresult *r = NULL;
    int error = pg_run(ps, "SELECT current_schema()", NULL, &r, "cannot read the schema");
    if (error < 0)
        return error;
    const char *schema = PQntuples(r) > 0 ? col_text(r, 0, 0) : NULL;
    if (!schema) {
        PQclear(r);
        return kevo_error_set(KEVO_EINVAL,
                              "%s: no schema of the connection's search_path exists to hold the "
                              "store (create it, or name one with options=-csearch_path%%3D...)",
                              ps->label);
    }
    if (strcmp(schema, "public")) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "%s (schema %s)", ps->label, schema);
        char *label = kevo_buf_detach(&b);
        if (label) {
            free(ps->label);
            ps->label = label;
        }
    }
    PQclear(r);
    return 0;
}

static void pg_free(kevo_store *s)
{
    pg_store *ps = ctx_of(s);
    if (!ps)
        return;
    if (ps->conn)
        PQfinish(ps->conn); /* the server rolls back what was open */
    stmt_cache_clear(ps);
    free(ps->label);
    free(ps);
    s->ctx = NULL;
}

int kevo_store_pg_open(kevo_store **out, const char *conninfo, unsigned flags)
{
    kevo_store *s = NULL;
    pg_store *ps = NULL;
    char *err = NULL;
    int error = 0;
    *out = NULL;
    if (!conninfo || !*conninfo)
        return kevo_error_set(KEVO_EINVAL, "memory store: empty PostgreSQL connection string");
    /* parse first: a malformed string gets a message that quotes nothing
     * of it (libpq's would quote the part it choked on, maybe a password) */
    PQconninfoOption *parsed = PQconninfoParse(conninfo, &err);
    if (!parsed) {
        PQfreemem(err);
        return kevo_error_set(KEVO_EINVAL,
                              "memory store: the PostgreSQL connection string is not valid "
                              "(a libpq URI postgresql://user@host:port/db?... or key=value "
                              "pairs; it is not shown: it may hold a password)");
    }
    PQconninfoFree(parsed);
    if (!(s = calloc(1, sizeof(*s))) || !(ps = calloc(1, sizeof(*ps)))) {
        free(s);
        free(ps);
        return kevo_error_set(KEVO_ENOMEM, "out of memory opening a PostgreSQL store");
    }
    s->ctx = ps;
    /* a default connect timeout (libpq waits forever for an unreachable
     * host); the string's own connect_timeout, later, wins */
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *vals[] = {getenv("PGCONNECT_TIMEOUT") ? getenv("PGCONNECT_TIMEOUT") : "10", "kevo",
                          conninfo, NULL};
    ps->conn = PQconnectdbParams(keys, vals, 1);
    ps->label = label_of(ps->conn);
    if (!ps->label) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory opening a PostgreSQL store");
        goto done;
    }
    if (!ps->conn || PQstatus(ps->conn) != CONNECTION_OK) {
        char msg[512];
        one_line(msg, sizeof(msg), ps->conn ? PQerrorMessage(ps->conn) : "out of memory");
        error = kevo_error_set(KEVO_EIO, "memory store %s: cannot connect: %s", ps->label, msg);
        goto done;
    }
    PQsetNoticeProcessor(ps->conn, quiet_notices, NULL);
    if (PQsetClientEncoding(ps->conn, "UTF8") != 0) {
        error = kevo_error_set(KEVO_EIO, "%s: cannot use UTF-8 on this connection", ps->label);
        goto done;
    }
    if ((error = pg_exec(ps, SESSION_SETUP, NULL, "cannot configure the session")) < 0 ||
        (error = name_schema(ps)) < 0)
        goto done;
    if ((error = migrate(ps, flags)) < 0)
        goto done;

    s->version = 3;
    s->name = "postgresql";
    s->free = pg_free;
    s->tx_begin = pg_tx_begin;
    s->tx_begin_read = pg_tx_begin_read;
    s->tx_commit = pg_tx_commit;
    s->tx_rollback = pg_tx_rollback;
    s->run_insert = pg_run_insert;
    s->run_update = pg_run_update;
    s->run_each = pg_run_each;
    s->run_delete = pg_run_delete;
    s->task_upsert = pg_task_upsert;
    s->task_each = pg_task_each;
    s->task_search = pg_task_search;
    s->task_delete = pg_task_delete;
    s->attempt_insert = pg_attempt_insert;
    s->attempt_each = pg_attempt_each;
    s->attempt_delete = pg_attempt_delete;
    s->attempt_set_reward = pg_attempt_set_reward;
    s->item_insert = pg_item_insert;
    s->item_each = pg_item_each;
    s->item_search = pg_item_search;
    s->item_lookup = pg_item_lookup;
    s->item_delete = pg_item_delete;
    s->find_uid = pg_find_uid;
    s->used_insert = pg_used_insert;
    s->used_each = pg_used_each;
    s->distilled_insert = pg_distilled_insert;
    s->distilled_each = pg_distilled_each;
    s->q_get = pg_q_get;
    s->q_set = pg_q_set;
    s->q_get_many = pg_q_get_many;
    s->q_each = pg_q_each;
    s->start_each = pg_start_each;
    s->reward_stats_get = pg_reward_stats_get;
    s->reward_stats_set = pg_reward_stats_set;
    s->stats = pg_stats;
    s->compact = pg_compact;
    s->work_add = pg_work_add;
    s->work_claim = pg_work_claim;
    s->work_renew = pg_work_renew;
    s->work_finish = pg_work_finish;
    s->work_each = pg_work_each;
    s->machine_upsert = pg_machine_upsert;
    s->machine_each = pg_machine_each;
    *out = s;
done:
    if (error < 0) {
        pg_free(s);
        free(s);
    }
    return error;
}
