/*
 * memory/store_sqlite.c - the SQLite implementation of kevo_store: one
 * file, WAL journal, foreign keys with cascading deletes, FTS5 (BM25) over
 * items and tasks, forward schema migrations (schema.h).
 *
 * It stores, finds and deletes; it holds no learning logic (memory.c and
 * record.c do). Statements are prepared once and cached by SQL text.
 * Crash safety comes from SQLite: every write runs inside a transaction
 * opened by kevo_memory (BEGIN IMMEDIATE, savepoints when nested), and
 * synchronous=NORMAL in WAL mode keeps the file consistent when the process
 * is killed (a power cut may lose the last commits, never consistency).
 */
#include "kevo/sys/store.h"
#include "kevo/util.h"
#include "map.h"
#include "schema.h"
#include "terms.h"

#include <sqlite3.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STMT_CACHE 96
/* Search: how many query words to consider, how many to use, and how many
 * postings they may touch together (bounds BM25 scoring cost). */
#define SEARCH_WORDS_MAX 64
#define SEARCH_TERMS_MAX 12
#define SEARCH_POSTINGS_MAX 3000
/* The document-frequency cache is dropped when it holds this many words
 * (a bound on memory, not on staleness: it is kept exact, see df_*). */
#define DF_CACHE_MAX 65536

typedef struct stmt_slot {
    char *sql;
    sqlite3_stmt *st;
    int busy;
} stmt_slot;

typedef struct sqlite_store {
    sqlite3 *db;
    char *path;
    int depth; /* transaction nesting */
    stmt_slot cache[STMT_CACHE];
    size_t n_cache;
    /* Search words' document frequencies in item_fts and the item count,
     * kept exact: this connection's item inserts update them, its item
     * deletes and rollbacks drop them, and a commit by another connection
     * (PRAGMA data_version moved) drops them before the next search. */
    kevo_map df_cache;       /* df_key(term) -> document frequency */
    int64_t df_docs;         /* number of items; -1 unknown */
    int64_t df_data_version; /* PRAGMA data_version the cache is valid for; -1 unknown */
} sqlite_store;

/* A prepared statement on loan from the cache (slot >= 0) or private. */
typedef struct stmt {
    sqlite3_stmt *st;
    int slot;
} stmt;

/* ---- errors and statements ------------------------------------------- */

static int db_error(sqlite_store *ss, int rc, const char *what)
{
    int code = KEVO_EIO;
    switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_ERROR:
        code = KEVO_EINVAL;
        break;
    case SQLITE_NOMEM:
        code = KEVO_ENOMEM;
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        code = KEVO_ETIMEOUT;
        break;
    case SQLITE_INTERRUPT:
        code = KEVO_EINTR;
        break;
    default:
        break;
    }
    return kevo_error_set(code, "%s: %s: %s", ss->path, what,
                          ss->db ? sqlite3_errmsg(ss->db) : sqlite3_errstr(rc));
}

static int prep(sqlite_store *ss, const char *sql, stmt *out)
{
    out->st = NULL;
    out->slot = -1;
    for (size_t i = 0; i < ss->n_cache; i++) {
        if (!ss->cache[i].busy && !strcmp(ss->cache[i].sql, sql)) {
            ss->cache[i].busy = 1;
            out->st = ss->cache[i].st;
            out->slot = (int)i;
            return 0;
        }
    }
    int rc = sqlite3_prepare_v3(ss->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &out->st, NULL);
    if (rc != SQLITE_OK)
        return db_error(ss, rc, "cannot prepare a statement");
    if (ss->n_cache < STMT_CACHE) {
        char *copy = strdup(sql);
        if (copy) {
            stmt_slot *s = &ss->cache[ss->n_cache];
            s->sql = copy;
            s->st = out->st;
            s->busy = 1;
            out->slot = (int)ss->n_cache++;
        }
    }
    return 0;
}

static void done_stmt(sqlite_store *ss, stmt *s)
{
    if (!s->st)
        return;
    if (s->slot >= 0) {
        sqlite3_reset(s->st);
        sqlite3_clear_bindings(s->st);
        ss->cache[s->slot].busy = 0;
    } else {
        sqlite3_finalize(s->st);
    }
    s->st = NULL;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, int64_t v)
{
    if (v)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Run a statement that returns no rows (or ignores them). */
static int step_done(sqlite_store *ss, stmt *s, const char *what)
{
    int rc;
    while ((rc = sqlite3_step(s->st)) == SQLITE_ROW)
        ;
    int error = rc == SQLITE_DONE ? 0 : db_error(ss, rc, what);
    done_stmt(ss, s);
    return error;
}

static int exec(sqlite_store *ss, const char *sql, const char *what)
{
    char *msg = NULL;
    int rc = sqlite3_exec(ss->db, sql, NULL, NULL, &msg);
    int error = 0;
    if (rc != SQLITE_OK)
        error = kevo_error_set(rc == SQLITE_BUSY ? KEVO_ETIMEOUT : KEVO_EIO, "%s: %s: %s", ss->path,
                               what, msg ? msg : sqlite3_errstr(rc));
    sqlite3_free(msg);
    return error;
}

static int query_int64(sqlite_store *ss, const char *sql, int64_t *out)
{
    stmt s;
    int error = prep(ss, sql, &s);
    if (error < 0)
        return error;
    int rc = sqlite3_step(s.st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(s.st, 0);
    else if (rc == SQLITE_DONE)
        *out = 0;
    else
        error = db_error(ss, rc, "query failed");
    done_stmt(ss, &s);
    return error;
}

/* Is `id` in use in `table`? (table is one of ours, never user input) */
static int id_taken(sqlite_store *ss, const char *table, int64_t id, int *out)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT 1 FROM %s WHERE id = ?", table);
    stmt s;
    int error = prep(ss, sql, &s);
    if (error < 0)
        return error;
    sqlite3_bind_int64(s.st, 1, id);
    int rc = sqlite3_step(s.st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        *out = rc == SQLITE_ROW;
    else
        error = db_error(ss, rc, "query failed");
    done_stmt(ss, &s);
    return error;
}

static sqlite_store *ctx_of(kevo_store *s)
{
    return s->ctx;
}

/* ---- the document-frequency cache ------------------------------------ */

static int64_t df_key(const char *term, size_t len)
{
    return (int64_t)kevo_hash64(term, len, 0x6b65766f);
}

static void df_drop(sqlite_store *ss)
{
    kevo_map_clear(&ss->df_cache);
    ss->df_docs = -1;
}

/* Drop the cache when another connection committed since it was filled. */
static int df_check_others(sqlite_store *ss)
{
    int64_t v = 0;
    int error = query_int64(ss, "PRAGMA data_version", &v);
    if (error == 0 && v != ss->df_data_version) {
        df_drop(ss);
        ss->df_data_version = v;
    }
    return error;
}

typedef struct df_note {
    sqlite_store *ss;
    kevo_map seen; /* cached words this item already counted */
} df_note;

static int df_note_word_cb(void *arg, const char *word, size_t len)
{
    df_note *dn = arg;
    int64_t key = df_key(word, len), df = 0;
    if (!kevo_map_get(&dn->ss->df_cache, key, &df) || kevo_map_get(&dn->seen, key, NULL))
        return 0;
    int error = kevo_map_put(&dn->seen, key, 1);
    if (error == 0)
        error = kevo_map_put(&dn->ss->df_cache, key, df + 1);
    return error;
}

static int has_non_ascii(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; p && *p; p++)
        if (*p >= 0x80)
            return 1;
    return 0;
}

/* Count a newly inserted item into the cache: +1 document for every cached
 * word it has in an indexed column. For ASCII text kevo_terms__scan splits
 * and folds exactly as FTS5's unicode61 does; other text (diacritics,
 * Unicode separators) drops the cache instead of guessing, and so does
 * running out of memory half way (the insert itself stands). */
static void df_note_insert(sqlite_store *ss, const kevo_item *it)
{
    const char *cols[] = {it->title, it->body,    it->tags, it->category,
                          it->task,  kevo_item_kind_name(it->kind)};
    size_t n_cols = sizeof(cols) / sizeof(cols[0]);
    df_note dn = {ss, {0}};
    int error = 0;
    if (ss->df_cache.n == 0)
        goto done;
    for (size_t i = 0; i < n_cols; i++) {
        if (has_non_ascii(cols[i])) {
            df_drop(ss);
            goto done;
        }
    }
    for (size_t i = 0; i < n_cols && error == 0; i++)
        error = kevo_terms__scan(cols[i], df_note_word_cb, &dn);
done:
    if (error < 0)
        df_drop(ss);
    else if (ss->df_docs >= 0)
        ss->df_docs++;
    kevo_map_free(&dn.seen);
}

/* ---- transactions ---------------------------------------------------- */

static int tx_begin(kevo_store *s, int write)
{
    sqlite_store *ss = ctx_of(s);
    char sql[48];
    if (ss->depth == 0)
        snprintf(sql, sizeof(sql), write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    else
        snprintf(sql, sizeof(sql), "SAVEPOINT kevo_sp%d", ss->depth);
    int error = exec(ss, sql, "cannot begin a transaction");
    if (error == 0)
        ss->depth++;
    return error;
}

static int sq_tx_begin(kevo_store *s)
{
    return tx_begin(s, 1);
}

static int sq_tx_begin_read(kevo_store *s)
{
    return tx_begin(s, 0);
}

static int sq_tx_commit(kevo_store *s)
{
    sqlite_store *ss = ctx_of(s);
    if (ss->depth <= 0)
        return kevo_error_set(KEVO_EINVAL, "%s: commit without a transaction", ss->path);
    char sql[48];
    if (ss->depth == 1)
        snprintf(sql, sizeof(sql), "COMMIT");
    else
        snprintf(sql, sizeof(sql), "RELEASE kevo_sp%d", ss->depth - 1);
    int error = exec(ss, sql, "cannot commit");
    if (error == 0) {
        ss->depth--;
    } else if (ss->depth == 1) {
        /* never leave a failed transaction open behind the caller */
        sqlite3_exec(ss->db, "ROLLBACK", NULL, NULL, NULL);
        ss->depth = 0;
        df_drop(ss);
    }
    return error;
}

static int sq_tx_rollback(kevo_store *s)
{
    sqlite_store *ss = ctx_of(s);
    if (ss->depth <= 0)
        return kevo_error_set(KEVO_EINVAL, "%s: rollback without a transaction", ss->path);
    char sql[96];
    if (ss->depth == 1)
        snprintf(sql, sizeof(sql), "ROLLBACK");
    else
        snprintf(sql, sizeof(sql), "ROLLBACK TO kevo_sp%d; RELEASE kevo_sp%d", ss->depth - 1,
                 ss->depth - 1);
    ss->depth--;
    /* item inserts undone here were counted into the search cache */
    df_drop(ss);
    /* A failed ROLLBACK leaves SQLite to roll back on its own (it does when
     * the statement that failed already ended the transaction). */
    if (ss->depth == 0 && sqlite3_get_autocommit(ss->db))
        return 0;
    return exec(ss, sql, "cannot roll back");
}

/* ---- runs ------------------------------------------------------------ */

static int sq_run_insert(kevo_store *s, const kevo_run *r, int64_t *out_id)
{
    sqlite_store *ss = ctx_of(s);
    int taken = 1, error = 0;
    if (r->id > 0 && (error = id_taken(ss, "runs", r->id, &taken)) < 0)
        return error;
    stmt st;
    if ((error = prep(ss,
                      "INSERT INTO runs(id, uid, config, status, started, finished)"
                      " VALUES (?, ?, ?, ?, ?, ?)",
                      &st)) < 0)
        return error;
    bind_id(st.st, 1, taken ? 0 : r->id);
    bind_text(st.st, 2, r->uid);
    bind_text(st.st, 3, r->config_json);
    bind_text(st.st, 4, r->status);
    sqlite3_bind_int64(st.st, 5, r->started);
    sqlite3_bind_int64(st.st, 6, r->finished);
    if ((error = step_done(ss, &st, "cannot insert a run")) < 0)
        return error;
    if (out_id)
        *out_id = sqlite3_last_insert_rowid(ss->db);
    return 0;
}

static int sq_run_update(kevo_store *s, int64_t id, const char *status, int64_t finished,
                         const char *config_json)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "UPDATE runs SET status = coalesce(?, status), finished = ?,"
                     " config = coalesce(?, config) WHERE id = ?",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, status);
    sqlite3_bind_int64(st.st, 2, finished);
    bind_text(st.st, 3, config_json);
    sqlite3_bind_int64(st.st, 4, id);
    if ((error = step_done(ss, &st, "cannot update a run")) < 0)
        return error;
    if (sqlite3_changes(ss->db) == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no run %lld", ss->path, (long long)id);
    return 0;
}

static int sq_run_each(kevo_store *s, int64_t id, kevo_store_run_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     id ? "SELECT id, uid, config, status, started, finished FROM runs WHERE id = ?"
                        : "SELECT id, uid, config, status, started, finished FROM runs ORDER BY id",
                     &st);
    if (error < 0)
        return error;
    if (id)
        sqlite3_bind_int64(st.st, 1, id);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_run r = {
            .id = sqlite3_column_int64(st.st, 0),
            .uid = col_text(st.st, 1),
            .config_json = col_text(st.st, 2),
            .status = col_text(st.st, 3),
            .started = sqlite3_column_int64(st.st, 4),
            .finished = sqlite3_column_int64(st.st, 5),
        };
        if ((error = cb(arg, &r)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read runs");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

static int sq_run_delete(kevo_store *s, int64_t id)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "DELETE FROM runs WHERE id = ?", &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, id);
    return step_done(ss, &st, "cannot delete a run");
}

/* ---- full-text queries ----------------------------------------------- */

/* Document frequency of `term` in item_fts, cached. */
static int term_df(sqlite_store *ss, const char *term, int64_t *out)
{
    int64_t key = df_key(term, strlen(term));
    if (kevo_map_get(&ss->df_cache, key, out))
        return 0;
    if (ss->df_cache.n >= DF_CACHE_MAX)
        kevo_map_clear(&ss->df_cache);
    stmt st;
    int error = prep(ss, "SELECT doc FROM item_vocab WHERE term = ?", &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, term);
    int rc = sqlite3_step(st.st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st.st, 0);
    else if (rc == SQLITE_DONE)
        *out = 0;
    else
        error = db_error(ss, rc, "cannot read the search vocabulary");
    done_stmt(ss, &st);
    if (error == 0)
        error = kevo_map_put(&ss->df_cache, key, *out);
    return error;
}

typedef struct weighted_term {
    const char *term;
    int64_t df;
} weighted_term;

static int by_df(const void *a, const void *b)
{
    const weighted_term *x = a, *y = b;
    return x->df < y->df ? -1 : x->df > y->df;
}

/* Build an FTS5 OR-query from free text: the most selective words (lowest
 * document frequency), at most SEARCH_TERMS_MAX of them and about
 * SEARCH_POSTINGS_MAX postings together. Words in more than half of the
 * documents are dropped (BM25 gives them no weight: idf <= 0) unless no
 * other word is left. Empty when no word is indexed. use_df 0 keeps the
 * first words instead (tasks: few documents). *out_postings (may be NULL):
 * the chosen words' document frequencies summed, a bound on the matches. */
static int build_match(sqlite_store *ss, const char *text, int use_df, kevo_buf *out,
                       int64_t *out_postings)
{
    kevo_terms terms = {0};
    weighted_term *w = NULL;
    int error = kevo_terms_extract(&terms, text, SEARCH_WORDS_MAX);
    if (error < 0)
        return error;
    size_t nw = 0;
    if (terms.n && !(w = calloc(terms.n, sizeof(*w)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory building a search");
        goto done;
    }
    if (use_df && (error = df_check_others(ss)) < 0)
        goto done;
    for (size_t i = 0; i < terms.n; i++) {
        int64_t df = 1;
        if (use_df && (error = term_df(ss, terms.v[i], &df)) < 0)
            goto done;
        if (df > 0)
            w[nw++] = (weighted_term){terms.v[i], df};
    }
    int64_t docs = 0;
    if (use_df) {
        if (nw > 1)
            qsort(w, nw, sizeof(*w), by_df);
        if (ss->df_docs < 0 &&
            (error = query_int64(ss, "SELECT count(*) FROM items", &ss->df_docs)) < 0)
            goto done;
        docs = ss->df_docs;
    }
    int64_t postings = 0;
    size_t used = 0;
    for (size_t i = 0; i < nw && used < SEARCH_TERMS_MAX; i++) {
        if (used > 0 && postings + w[i].df > SEARCH_POSTINGS_MAX)
            break;
        if (used > 0 && use_df && w[i].df * 2 > docs)
            break;
        postings += w[i].df;
        if ((error = kevo_buf_printf(out, "%s\"%s\"", used ? " OR " : "", w[i].term)) < 0)
            goto done;
        used++;
    }
    if (out_postings)
        *out_postings = postings;
done:
    free(w);
    kevo_terms_free(&terms);
    return error;
}

/* ---- tasks ----------------------------------------------------------- */

#define TASK_COLS "t.id, t.name, t.level, t.category, t.description, t.reference, t.suite_path"

static void task_from_row(kevo_memory_task *t, sqlite3_stmt *st)
{
    t->id = sqlite3_column_int64(st, 0);
    t->name = col_text(st, 1);
    t->level = sqlite3_column_int(st, 2);
    t->category = col_text(st, 3);
    t->description = col_text(st, 4);
    t->reference = col_text(st, 5);
    t->suite_path = col_text(st, 6);
}

static int task_id_of(sqlite_store *ss, const char *name, int64_t *out)
{
    stmt st;
    int error = prep(ss, "SELECT id FROM tasks WHERE name = ?", &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, name);
    int rc = sqlite3_step(st.st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st.st, 0);
    else if (rc == SQLITE_DONE)
        error = kevo_error_set(KEVO_ENOTFOUND, "%s: no task '%s'", ss->path, name);
    else
        error = db_error(ss, rc, "cannot read tasks");
    done_stmt(ss, &st);
    return error;
}

static int sq_task_upsert(kevo_store *s, const kevo_memory_task *t, int64_t *out_id)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "INSERT INTO tasks(name, level, category, description, reference, suite_path)"
                     " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET"
                     " level = CASE WHEN excluded.level <> 0 THEN excluded.level ELSE level END,"
                     " category = coalesce(excluded.category, category),"
                     " description = coalesce(excluded.description, description),"
                     " reference = coalesce(excluded.reference, reference),"
                     " suite_path = coalesce(excluded.suite_path, suite_path)",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, t->name);
    sqlite3_bind_int(st.st, 2, t->level);
    bind_text(st.st, 3, t->category);
    bind_text(st.st, 4, t->description);
    bind_text(st.st, 5, t->reference);
    bind_text(st.st, 6, t->suite_path);
    if ((error = step_done(ss, &st, "cannot store a task")) < 0)
        return error;
    int64_t id = 0;
    if ((error = task_id_of(ss, t->name, &id)) < 0)
        return error;
    if (out_id)
        *out_id = id;
    return 0;
}

static int sq_task_each(kevo_store *s, const char *name, kevo_store_task_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     name ? "SELECT " TASK_COLS " FROM tasks t WHERE t.name = ?"
                          : "SELECT " TASK_COLS " FROM tasks t ORDER BY t.name",
                     &st);
    if (error < 0)
        return error;
    if (name)
        bind_text(st.st, 1, name);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_memory_task t;
        task_from_row(&t, st.st);
        if ((error = cb(arg, &t, 0.0)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read tasks");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

static int sq_task_search(kevo_store *s, const char *query, size_t limit, kevo_store_task_cb cb,
                          void *arg)
{
    sqlite_store *ss = ctx_of(s);
    kevo_buf match = {0};
    stmt st = {0};
    int error = build_match(ss, query, 0, &match, NULL);
    if (error < 0 || match.len == 0)
        goto done;
    if ((error = prep(ss,
                      "SELECT " TASK_COLS ", -bm25(task_fts, 2.0, 1.0, 1.0) FROM task_fts"
                      " JOIN tasks t ON t.id = task_fts.rowid WHERE task_fts MATCH ?"
                      " ORDER BY bm25(task_fts, 2.0, 1.0, 1.0) LIMIT ?",
                      &st)) < 0)
        goto done;
    bind_text(st.st, 1, match.ptr);
    sqlite3_bind_int64(st.st, 2, limit ? (int64_t)limit : 10);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_memory_task t;
        task_from_row(&t, st.st);
        if ((error = cb(arg, &t, sqlite3_column_double(st.st, 7))) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot search tasks");
done:
    done_stmt(ss, &st);
    kevo_buf_free(&match);
    return error < 0 ? error : 0;
}

static int sq_task_delete(kevo_store *s, const char *name)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "DELETE FROM tasks WHERE name = ?", &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, name);
    return step_done(ss, &st, "cannot delete a task");
}

/* ---- attempts -------------------------------------------------------- */

#define ATTEMPT_COLS                                                                               \
    "a.id, a.uid, a.run_id, t.name, a.backend, a.generator, a.stage, a.iteration, a.parent_id,"    \
    " a.verdict, a.gates, a.feedback, %s, a.recipes, a.candidate_us, a.reference_us,"              \
    " a.speedup, a.tokens_prompt, a.tokens_completion, a.tokens_estimated, a.reward_raw,"          \
    " a.reward, a.created, a.baseline, a.machine"

/* A row whose verdict is not a verdict name was not written by kevo: an
 * error naming the attempt, never a guessed verdict. */
static int attempt_from_row(kevo_attempt *a, sqlite3_stmt *st)
{
    a->id = sqlite3_column_int64(st, 0);
    a->uid = col_text(st, 1);
    a->run_id = sqlite3_column_int64(st, 2);
    a->task = col_text(st, 3);
    a->backend = col_text(st, 4);
    a->generator = col_text(st, 5);
    a->stage = (kevo_stage)sqlite3_column_int(st, 6);
    a->iteration = sqlite3_column_int(st, 7);
    a->parent_id = sqlite3_column_int64(st, 8);
    a->gates_json = col_text(st, 10);
    a->feedback = col_text(st, 11);
    a->source = col_text(st, 12);
    a->recipes_json = col_text(st, 13);
    a->candidate_us = sqlite3_column_double(st, 14);
    a->reference_us = sqlite3_column_double(st, 15);
    a->speedup = sqlite3_column_double(st, 16);
    a->tokens_prompt = sqlite3_column_int64(st, 17);
    a->tokens_completion = sqlite3_column_int64(st, 18);
    a->tokens_estimated = sqlite3_column_int(st, 19);
    a->reward_raw = sqlite3_column_double(st, 20);
    a->reward = sqlite3_column_double(st, 21);
    a->created = sqlite3_column_int64(st, 22);
    a->baseline = col_text(st, 23);
    a->machine = col_text(st, 24);
    if (kevo_verdict_parse(&a->verdict, col_text(st, 9)) < 0)
        return kevo_error_set(KEVO_EINVAL, "attempt %lld: the store holds the verdict '%s', "
                              "which is not a kevo verdict (was the file edited by hand?)",
                              (long long)a->id, col_text(st, 9) ? col_text(st, 9) : "(null)");
    return 0;
}

static int sq_attempt_insert(kevo_store *s, const kevo_attempt *a, int64_t *out_id)
{
    sqlite_store *ss = ctx_of(s);
    int64_t task_id = 0;
    int taken = 1, error = 0;
    stmt st;
    /* kevo_verdict_name() would store "unknown", a row no read accepts */
    if ((unsigned)a->verdict >= KEVO_VERDICT_COUNT)
        return kevo_error_set(KEVO_EINVAL,
                              "%s: attempt (task %s): field 'verdict' is %d, not a kevo_verdict",
                              ss->path, a->task ? a->task : "(null)", (int)a->verdict);
    if ((error = prep(ss, "INSERT OR IGNORE INTO tasks(name) VALUES (?)", &st)) < 0)
        return error;
    bind_text(st.st, 1, a->task);
    if ((error = step_done(ss, &st, "cannot store a task")) < 0)
        return error;
    if ((error = task_id_of(ss, a->task, &task_id)) < 0)
        return error;
    if (a->id > 0 && (error = id_taken(ss, "attempts", a->id, &taken)) < 0)
        return error;
    if ((error = prep(ss,
                      "INSERT INTO attempts(id, uid, run_id, task_id, backend, generator, stage,"
                      " iteration, parent_id, verdict, gates, feedback, source, recipes,"
                      " candidate_us, reference_us, speedup, tokens_prompt, tokens_completion,"
                      " tokens_estimated, reward_raw, reward, created, baseline, machine)"
                      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      &st)) < 0)
        return error;
    bind_id(st.st, 1, taken ? 0 : a->id);
    bind_text(st.st, 2, a->uid);
    bind_id(st.st, 3, a->run_id);
    sqlite3_bind_int64(st.st, 4, task_id);
    bind_text(st.st, 5, a->backend);
    bind_text(st.st, 6, a->generator);
    sqlite3_bind_int(st.st, 7, (int)a->stage);
    sqlite3_bind_int(st.st, 8, a->iteration);
    bind_id(st.st, 9, a->parent_id);
    bind_text(st.st, 10, kevo_verdict_name(a->verdict));
    bind_text(st.st, 11, a->gates_json);
    bind_text(st.st, 12, a->feedback);
    bind_text(st.st, 13, a->source);
    bind_text(st.st, 14, a->recipes_json);
    sqlite3_bind_double(st.st, 15, a->candidate_us);
    sqlite3_bind_double(st.st, 16, a->reference_us);
    sqlite3_bind_double(st.st, 17, a->speedup);
    sqlite3_bind_int64(st.st, 18, a->tokens_prompt);
    sqlite3_bind_int64(st.st, 19, a->tokens_completion);
    sqlite3_bind_int(st.st, 20, a->tokens_estimated ? 1 : 0);
    sqlite3_bind_double(st.st, 21, a->reward_raw);
    sqlite3_bind_double(st.st, 22, a->reward);
    sqlite3_bind_int64(st.st, 23, a->created);
    bind_text(st.st, 24, a->baseline);
    bind_text(st.st, 25, a->machine);
    if ((error = step_done(ss, &st, "cannot insert an attempt")) < 0)
        return error;
    if (out_id)
        *out_id = sqlite3_last_insert_rowid(ss->db);
    return 0;
}

static int sq_attempt_each(kevo_store *s, int64_t id, const kevo_attempt_filter *f,
                           kevo_store_attempt_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    kevo_buf sql = {0};
    stmt st = {0};
    kevo_attempt_filter none = {0};
    if (!f)
        f = &none;
    int error = kevo_buf_printf(
        &sql, "SELECT " ATTEMPT_COLS " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE 1",
        f->no_source && !id ? "NULL" : "a.source");
    if (error < 0)
        goto done;
    if (id)
        error = kevo_buf_puts(&sql, " AND a.id = ?1");
    else {
        if (f->run_id)
            error = kevo_buf_puts(&sql, " AND a.run_id = ?2");
        if (!error && f->task)
            error = kevo_buf_puts(&sql, " AND a.task_id = (SELECT id FROM tasks WHERE name = ?3)");
        if (!error && f->backend)
            error = kevo_buf_puts(&sql, " AND a.backend = ?4");
        if (!error && f->parent_id)
            error = kevo_buf_puts(&sql, " AND a.parent_id = ?5");
        if (!error && f->used_item)
            error = kevo_buf_puts(
                &sql, " AND a.id IN (SELECT attempt_id FROM used WHERE item_id = ?8)");
        if (!error && f->stage)
            error = kevo_buf_puts(&sql, " AND a.stage = ?6");
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
            error = kevo_buf_puts(&sql, " LIMIT ?7");
    }
    if (error < 0 || (error = prep(ss, sql.ptr, &st)) < 0)
        goto done;
    if (id)
        sqlite3_bind_int64(st.st, 1, id);
    else {
        if (f->run_id)
            sqlite3_bind_int64(st.st, 2, f->run_id);
        if (f->task)
            bind_text(st.st, 3, f->task);
        if (f->backend)
            bind_text(st.st, 4, f->backend);
        if (f->parent_id)
            sqlite3_bind_int64(st.st, 5, f->parent_id);
        if (f->stage)
            sqlite3_bind_int(st.st, 6, (int)f->stage);
        if (f->limit)
            sqlite3_bind_int64(st.st, 7, (int64_t)f->limit);
        if (f->used_item)
            sqlite3_bind_int64(st.st, 8, f->used_item);
    }
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_attempt a;
        if ((error = attempt_from_row(&a, st.st)) < 0 || (error = cb(arg, &a)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read attempts");
done:
    done_stmt(ss, &st);
    kevo_buf_free(&sql);
    return error < 0 ? error : 0;
}

static int sq_attempt_delete(kevo_store *s, int64_t id)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "DELETE FROM attempts WHERE id = ?", &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, id);
    return step_done(ss, &st, "cannot delete an attempt");
}

static int sq_attempt_set_reward(kevo_store *s, int64_t id, double reward)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "UPDATE attempts SET reward = ? WHERE id = ?", &st);
    if (error < 0)
        return error;
    sqlite3_bind_double(st.st, 1, reward);
    sqlite3_bind_int64(st.st, 2, id);
    return step_done(ss, &st, "cannot update an attempt's reward");
}

/* ---- items ----------------------------------------------------------- */

#define ITEM_COLS                                                                                  \
    "i.id, i.uid, i.kind, i.title, %s, i.category, i.task, i.backend, i.tags, i.created"

static void item_from_row(kevo_item *it, sqlite3_stmt *st)
{
    kevo_item_kind kind = 0;
    if (kevo_item_kind_parse(&kind, col_text(st, 2)) < 0)
        kind = 0;
    it->id = sqlite3_column_int64(st, 0);
    it->uid = col_text(st, 1);
    it->kind = kind;
    it->title = col_text(st, 3);
    it->body = col_text(st, 4);
    it->category = col_text(st, 5);
    it->task = col_text(st, 6);
    it->backend = col_text(st, 7);
    it->tags = col_text(st, 8);
    it->created = sqlite3_column_int64(st, 9);
}

static int sq_item_insert(kevo_store *s, const kevo_item *it, int64_t *out_id)
{
    sqlite_store *ss = ctx_of(s);
    int taken = 1, error = 0;
    if (it->id > 0 && (error = id_taken(ss, "items", it->id, &taken)) < 0)
        return error;
    stmt st;
    if ((error = prep(ss,
                      "INSERT INTO items(id, uid, kind, title, body, category, task, backend, tags,"
                      " created) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      &st)) < 0)
        return error;
    bind_id(st.st, 1, taken ? 0 : it->id);
    bind_text(st.st, 2, it->uid);
    bind_text(st.st, 3, kevo_item_kind_name(it->kind));
    bind_text(st.st, 4, it->title);
    bind_text(st.st, 5, it->body);
    bind_text(st.st, 6, it->category);
    bind_text(st.st, 7, it->task);
    bind_text(st.st, 8, it->backend);
    bind_text(st.st, 9, it->tags);
    sqlite3_bind_int64(st.st, 10, it->created);
    if ((error = step_done(ss, &st, "cannot insert an item")) < 0)
        return error;
    if (out_id)
        *out_id = sqlite3_last_insert_rowid(ss->db);
    df_note_insert(ss, it);
    return 0;
}

/* WHERE terms for an item filter; binds ?11.. (see bind_item_filter). */
static int item_filter_sql(kevo_buf *sql, const kevo_item_filter *f)
{
    int error = 0;
    if (f->kinds) {
        if ((error = kevo_buf_puts(sql, " AND i.kind IN (")) < 0)
            return error;
        int first = 1;
        for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++) {
            if (!(f->kinds & KEVO_ITEM_BIT(k)))
                continue;
            if ((error = kevo_buf_printf(sql, "%s'%s'", first ? "" : ", ",
                                         kevo_item_kind_name((kevo_item_kind)k))) < 0)
                return error;
            first = 0;
        }
        if ((error = kevo_buf_puts(sql, first ? "NULL)" : ")")) < 0)
            return error;
    }
    if (f->category && (error = kevo_buf_puts(sql, " AND i.category = ?11")) < 0)
        return error;
    if (f->task && (error = kevo_buf_puts(sql, " AND i.task = ?12")) < 0)
        return error;
    if (f->backend &&
        (error = kevo_buf_puts(sql, " AND (i.backend = ?13 OR i.backend IS NULL)")) < 0)
        return error;
    /* tags are space-separated words; the tag is one of them, compared
     * byte for byte (instr, not LIKE: '_' and '%' are plain characters) */
    if (f->tag && (error = kevo_buf_puts(sql, " AND instr(' ' || coalesce(i.tags, '') || ' ',"
                                              " ' ' || ?14 || ' ') > 0")) < 0)
        return error;
    return 0;
}

static void bind_item_filter(sqlite3_stmt *st, const kevo_item_filter *f)
{
    if (f->category)
        bind_text(st, 11, f->category);
    if (f->task)
        bind_text(st, 12, f->task);
    if (f->backend)
        bind_text(st, 13, f->backend);
    if (f->tag)
        bind_text(st, 14, f->tag);
}

static int run_item_stmt(sqlite_store *ss, stmt *st, int score_col, kevo_store_item_cb cb,
                         void *arg)
{
    int rc, error = 0;
    while ((rc = sqlite3_step(st->st)) == SQLITE_ROW) {
        kevo_item it;
        item_from_row(&it, st->st);
        double score = score_col >= 0 ? sqlite3_column_double(st->st, score_col) : 0.0;
        if ((error = cb(arg, &it, score)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read items");
    return error < 0 ? error : 0;
}

static int sq_item_each(kevo_store *s, int64_t id, const kevo_item_filter *f, kevo_store_item_cb cb,
                        void *arg)
{
    sqlite_store *ss = ctx_of(s);
    kevo_buf sql = {0};
    stmt st = {0};
    kevo_item_filter none = {0};
    if (!f)
        f = &none;
    int error = kevo_buf_printf(&sql, "SELECT " ITEM_COLS " FROM items i WHERE 1",
                                f->no_body ? "NULL" : "i.body");
    if (error < 0)
        goto done;
    if (id)
        error = kevo_buf_puts(&sql, " AND i.id = ?1");
    else if ((error = item_filter_sql(&sql, f)) == 0) {
        error = kevo_buf_puts(&sql, f->newest_first ? " ORDER BY i.id DESC" : " ORDER BY i.id");
        if (!error && (f->limit || f->offset))
            error = kevo_buf_puts(&sql, " LIMIT ?2 OFFSET ?3");
    }
    if (error < 0 || (error = prep(ss, sql.ptr, &st)) < 0)
        goto done;
    if (id)
        sqlite3_bind_int64(st.st, 1, id);
    else {
        bind_item_filter(st.st, f);
        if (f->limit || f->offset) {
            sqlite3_bind_int64(st.st, 2, f->limit ? (int64_t)f->limit : -1);
            sqlite3_bind_int64(st.st, 3, (int64_t)f->offset);
        }
    }
    error = run_item_stmt(ss, &st, -1, cb, arg);
done:
    done_stmt(ss, &st);
    kevo_buf_free(&sql);
    return error;
}

/* First word of each kind in the FTS `kind` column. */
static const char *kind_token(int kind)
{
    switch (kind) {
    case KEVO_ITEM_API_DOC:
        return "api";
    case KEVO_ITEM_EXPERIENCE:
        return "experience";
    case KEVO_ITEM_TRACE:
        return "trace";
    case KEVO_ITEM_BEST_PRACTICE:
        return "practice";
    case KEVO_ITEM_RECIPE:
        return "recipe";
    default:
        return "none";
    }
}

/* Append the kind restriction as FTS5 syntax: a positive list when it is
 * short, otherwise NOT the excluded kinds. */
static int kind_match(kevo_buf *m, unsigned kinds)
{
    unsigned all = 0;
    for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++)
        all |= KEVO_ITEM_BIT(k);
    kinds &= all;
    if (!kinds || kinds == all)
        return 0;
    int n_in = __builtin_popcount(kinds);
    int positive = n_in <= 2;
    int error = kevo_buf_puts(m, positive ? " AND kind : (" : " NOT kind : (");
    int first = 1;
    for (int k = 1; k <= KEVO_ITEM_KIND_MAX && error == 0; k++) {
        int in = (kinds & KEVO_ITEM_BIT(k)) != 0;
        if (in != positive)
            continue;
        error = kevo_buf_printf(m, "%s%s", first ? "" : " OR ", kind_token(k));
        first = 0;
    }
    if (error == 0)
        error = kevo_buf_puts(m, ")");
    return error;
}

/* One pass of an item search: counts what reached `cb` and whether `cb`
 * asked to stop. */
typedef struct search_pass {
    kevo_store_item_cb cb;
    void *arg;
    size_t n;
    int stopped;
} search_pass;

static int search_pass_cb(void *arg, const kevo_item *it, double score)
{
    search_pass *sp = arg;
    sp->n++;
    int rc = sp->cb(sp->arg, it, score);
    if (rc > 0)
        sp->stopped = 1;
    return rc;
}

/* Rank the `top` best matches inside the index (ids only; -1 = all), keep
 * those that pass the filters, give the best `limit` of them after the
 * first `skip`. (score, id) is a total order, so a pass with a larger
 * `top` starts with the rows of a smaller one. */
static int item_search_pass(sqlite_store *ss, const char *sql, const char *match, int64_t top,
                            const kevo_item_filter *rest, int64_t limit, size_t skip,
                            search_pass *sp)
{
    stmt st = {0};
    int error = prep(ss, sql, &st);
    if (error < 0)
        goto done;
    bind_text(st.st, 1, match);
    sqlite3_bind_int64(st.st, 2, limit);
    sqlite3_bind_int64(st.st, 15, top);
    sqlite3_bind_int64(st.st, 16, (int64_t)skip);
    bind_item_filter(st.st, rest);
    error = run_item_stmt(ss, &st, 10, search_pass_cb, sp);
done:
    done_stmt(ss, &st);
    return error;
}

static int sq_item_search(kevo_store *s, const char *query, const kevo_item_filter *f,
                          kevo_store_item_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    kevo_buf terms = {0}, match = {0}, sql = {0};
    kevo_item_filter none = {0};
    if (!f)
        f = &none;
    int64_t postings = 0;
    int error = build_match(ss, query, 1, &terms, &postings);
    if (error < 0 || terms.len == 0)
        goto done;
    if ((error = kevo_buf_printf(&match, "{title body tags category task} : (%s)", terms.ptr)) <
            0 ||
        (error = kind_match(&match, f->kinds)) < 0)
        goto done;
    kevo_item_filter rest = *f;
    rest.kinds = 0; /* enforced inside MATCH */
    int filtered = rest.category || rest.task || rest.backend || rest.tag;
    if ((error = kevo_buf_printf(&sql,
                                 "SELECT " ITEM_COLS ", -m.score FROM"
                                 " (SELECT rowid AS id,"
                                 " bm25(item_fts, 2.0, 1.0, 1.0, 1.0, 1.0, 0.0) AS score"
                                 " FROM item_fts WHERE item_fts MATCH ?1"
                                 " ORDER BY score, rowid LIMIT ?15) m"
                                 " JOIN items i ON i.id = m.id WHERE 1",
                                 f->no_body ? "NULL" : "i.body")) < 0 ||
        (error = item_filter_sql(&sql, &rest)) < 0 ||
        (error = kevo_buf_puts(&sql, " ORDER BY m.score, m.id LIMIT ?2 OFFSET ?16")) < 0)
        goto done;
    /* Most searches are settled by the best few matches of the index:
     * rank those, filter, and only when the filters left fewer than
     * `limit` of them while more matches exist, widen the ranked prefix
     * (by 8, then all of it) and go on after the rows already given. The
     * filters never apply after a LIMIT that could hide a match. */
    int64_t limit = f->limit ? (int64_t)f->limit : 20, top = limit * 4 + 8;
    search_pass sp = {cb, arg, 0, 0};
    for (;;) {
        if (top >= postings)
            top = -1;
        if ((error = item_search_pass(ss, sql.ptr, match.ptr, top, &rest, limit - (int64_t)sp.n,
                                      sp.n, &sp)) < 0)
            goto done;
        if (sp.stopped || (int64_t)sp.n >= limit || !filtered || top < 0)
            break;
        top *= 8;
    }
done:
    kevo_buf_free(&terms);
    kevo_buf_free(&match);
    kevo_buf_free(&sql);
    return error;
}

static int sq_item_lookup(kevo_store *s, kevo_item_kind kind, const char *title,
                          const char *backend, kevo_store_item_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "SELECT i.id, i.uid, i.kind, i.title, i.body, i.category, i.task, i.backend,"
                     " i.tags, i.created FROM items i WHERE i.kind = ?1 AND i.title = ?2"
                     " AND (i.backend = ?3 OR i.backend IS NULL)"
                     " ORDER BY i.backend IS NULL, i.id",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, kevo_item_kind_name(kind));
    bind_text(st.st, 2, title);
    bind_text(st.st, 3, backend);
    error = run_item_stmt(ss, &st, -1, cb, arg);
    done_stmt(ss, &st);
    return error;
}

static int sq_item_delete(kevo_store *s, int64_t id)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "DELETE FROM items WHERE id = ?", &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, id);
    /* deletes are rare: drop the search cache rather than read the item
     * back to uncount it */
    df_drop(ss);
    return step_done(ss, &st, "cannot delete an item");
}

static int sq_find_uid(kevo_store *s, kevo_store_table table, const char *uid, int64_t *out_id)
{
    sqlite_store *ss = ctx_of(s);
    const char *sql = table == KEVO_STORE_RUNS    ? "SELECT id FROM runs WHERE uid = ?"
                      : table == KEVO_STORE_ITEMS ? "SELECT id FROM items WHERE uid = ?"
                                                  : "SELECT id FROM attempts WHERE uid = ?";
    stmt st;
    int error = prep(ss, sql, &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, uid);
    int rc = sqlite3_step(st.st);
    if (rc == SQLITE_ROW)
        *out_id = sqlite3_column_int64(st.st, 0);
    else if (rc == SQLITE_DONE)
        error = KEVO_ENOTFOUND;
    else
        error = db_error(ss, rc, "cannot look up a uid");
    done_stmt(ss, &st);
    return error;
}

/* ---- edges ----------------------------------------------------------- */

static int sq_used_insert(kevo_store *s, int64_t attempt_id, const kevo_used_item *u)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error =
        prep(ss,
             "INSERT OR IGNORE INTO used(attempt_id, item_id, stage, rank, tokens, no_credit)"
             " VALUES (?, ?, ?, ?, ?, ?)",
             &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, attempt_id);
    sqlite3_bind_int64(st.st, 2, u->item_id);
    sqlite3_bind_int(st.st, 3, (int)u->stage);
    sqlite3_bind_int(st.st, 4, u->rank);
    sqlite3_bind_int(st.st, 5, u->tokens);
    sqlite3_bind_int(st.st, 6, u->no_credit ? 1 : 0);
    return step_done(ss, &st, "cannot insert a used edge");
}

static int sq_used_each(kevo_store *s, int64_t attempt_id, int64_t item_id, kevo_store_used_cb cb,
                        void *arg)
{
    sqlite_store *ss = ctx_of(s);
    const char *sql =
        attempt_id && item_id ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM "
                                "used WHERE attempt_id = ?1"
                                " AND item_id = ?2"
        : attempt_id ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used"
                       " WHERE attempt_id = ?1 ORDER BY rank, item_id"
        : item_id    ? "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used WHERE "
                       "item_id = ?2"
                       " ORDER BY attempt_id"
                     : "SELECT attempt_id, item_id, stage, rank, tokens, no_credit FROM used"
                       " ORDER BY attempt_id, rank, item_id";
    stmt st;
    int error = prep(ss, sql, &st);
    if (error < 0)
        return error;
    if (attempt_id)
        sqlite3_bind_int64(st.st, 1, attempt_id);
    if (item_id)
        sqlite3_bind_int64(st.st, 2, item_id);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_used_edge e = {
            .attempt_id = sqlite3_column_int64(st.st, 0),
            .used = {.item_id = sqlite3_column_int64(st.st, 1),
                     .stage = (kevo_stage)sqlite3_column_int(st.st, 2),
                     .rank = sqlite3_column_int(st.st, 3),
                     .tokens = sqlite3_column_int(st.st, 4),
                     .no_credit = sqlite3_column_int(st.st, 5) != 0},
        };
        if ((error = cb(arg, &e)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read used edges");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

static int sq_distilled_insert(kevo_store *s, int64_t item_id, int64_t attempt_id)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error =
        prep(ss, "INSERT OR IGNORE INTO distilled_from(item_id, attempt_id) VALUES (?, ?)", &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, item_id);
    sqlite3_bind_int64(st.st, 2, attempt_id);
    return step_done(ss, &st, "cannot insert a distilled_from edge");
}

static int sq_distilled_each(kevo_store *s, int64_t item_id, int64_t attempt_id,
                             kevo_store_distilled_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    const char *sql =
        item_id && attempt_id ? "SELECT item_id, attempt_id FROM distilled_from WHERE item_id = ?1 "
                                "AND attempt_id = ?2"
        : item_id             ? "SELECT item_id, attempt_id FROM distilled_from WHERE item_id = ?1"
                                " ORDER BY attempt_id"
        : attempt_id
            ? "SELECT item_id, attempt_id FROM distilled_from WHERE attempt_id = ?2"
              " ORDER BY item_id"
            : "SELECT item_id, attempt_id FROM distilled_from ORDER BY item_id, attempt_id";
    stmt st;
    int error = prep(ss, sql, &st);
    if (error < 0)
        return error;
    if (item_id)
        sqlite3_bind_int64(st.st, 1, item_id);
    if (attempt_id)
        sqlite3_bind_int64(st.st, 2, attempt_id);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_distilled_edge e = {sqlite3_column_int64(st.st, 0), sqlite3_column_int64(st.st, 1)};
        if ((error = cb(arg, &e)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read distilled_from edges");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

/* ---- Q-values and reward statistics ---------------------------------- */

static int sq_q_get(kevo_store *s, kevo_q_target target, int64_t id, kevo_stage stage,
                    double *out_q, int64_t *out_n)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error =
        prep(ss,
             target == KEVO_Q_ITEM ? "SELECT q, n FROM q_item WHERE item_id = ?1 AND stage = ?2"
                                   : "SELECT q, n FROM q_start WHERE attempt_id = ?1",
             &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, id);
    if (target == KEVO_Q_ITEM)
        sqlite3_bind_int(st.st, 2, (int)stage);
    int rc = sqlite3_step(st.st);
    *out_q = 0.0;
    *out_n = 0;
    if (rc == SQLITE_ROW) {
        *out_q = sqlite3_column_double(st.st, 0);
        *out_n = sqlite3_column_int64(st.st, 1);
    } else if (rc != SQLITE_DONE) {
        error = db_error(ss, rc, "cannot read a Q-value");
    }
    done_stmt(ss, &st);
    return error;
}

static int sq_q_set(kevo_store *s, const kevo_q_row *row)
{
    sqlite_store *ss = ctx_of(s);
    const char *sql;
    if (row->target == KEVO_Q_ITEM)
        sql = row->n ? "INSERT INTO q_item(item_id, stage, q, n) VALUES (?1, ?2, ?3, ?4)"
                       " ON CONFLICT(item_id, stage) DO UPDATE SET q = excluded.q, n = excluded.n"
                     : "DELETE FROM q_item WHERE item_id = ?1 AND stage = ?2";
    else
        sql = row->n ? "INSERT INTO q_start(attempt_id, q, n) VALUES (?1, ?3, ?4)"
                       " ON CONFLICT(attempt_id) DO UPDATE SET q = excluded.q, n = excluded.n"
                     : "DELETE FROM q_start WHERE attempt_id = ?1";
    stmt st;
    int error = prep(ss, sql, &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, row->id);
    if (row->target == KEVO_Q_ITEM)
        sqlite3_bind_int(st.st, 2, (int)row->stage);
    if (row->n) {
        sqlite3_bind_double(st.st, 3, row->q);
        sqlite3_bind_int64(st.st, 4, row->n);
    }
    return step_done(ss, &st, "cannot store a Q-value");
}

static int sq_q_each(kevo_store *s, kevo_q_target target, kevo_store_q_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     target == KEVO_Q_ITEM
                         ? "SELECT item_id, stage, q, n FROM q_item ORDER BY item_id, stage"
                         : "SELECT attempt_id, 2, q, n FROM q_start ORDER BY attempt_id",
                     &st);
    if (error < 0)
        return error;
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_q_row row = {target, sqlite3_column_int64(st.st, 0),
                          (kevo_stage)sqlite3_column_int(st.st, 1), sqlite3_column_double(st.st, 2),
                          sqlite3_column_int64(st.st, 3)};
        if ((error = cb(arg, &row)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read Q-values");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

static int sq_start_each(kevo_store *s, const char *task, const char *backend,
                         kevo_store_start_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "SELECT a.id, a.candidate_us, a.speedup, coalesce(q.q, 0), coalesce(q.n, 0)"
                     " FROM attempts a LEFT JOIN q_start q ON q.attempt_id = a.id"
                     " WHERE a.task_id = (SELECT id FROM tasks WHERE name = ?1)"
                     " AND a.verdict = 'correct' AND (?2 IS NULL OR a.backend = ?2)"
                     " ORDER BY a.id",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, task);
    bind_text(st.st, 2, backend);
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_start_point sp = {sqlite3_column_int64(st.st, 0), sqlite3_column_double(st.st, 1),
                               sqlite3_column_double(st.st, 2), sqlite3_column_double(st.st, 3),
                               sqlite3_column_int64(st.st, 4)};
        if ((error = cb(arg, &sp)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read start points");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

static int sq_reward_stats_get(kevo_store *s, kevo_stage stage, kevo_reward_stats *out)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss, "SELECT n, mean, m2 FROM reward_stats WHERE stage = ?", &st);
    if (error < 0)
        return error;
    sqlite3_bind_int(st.st, 1, (int)stage);
    memset(out, 0, sizeof(*out));
    out->stage = stage;
    int rc = sqlite3_step(st.st);
    if (rc == SQLITE_ROW) {
        out->n = sqlite3_column_int64(st.st, 0);
        out->mean = sqlite3_column_double(st.st, 1);
        out->m2 = sqlite3_column_double(st.st, 2);
    } else if (rc != SQLITE_DONE) {
        error = db_error(ss, rc, "cannot read reward statistics");
    }
    done_stmt(ss, &st);
    return error;
}

static int sq_reward_stats_set(kevo_store *s, const kevo_reward_stats *rs)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     rs->n ? "INSERT INTO reward_stats(stage, n, mean, m2) VALUES (?1, ?2, ?3, ?4)"
                             " ON CONFLICT(stage) DO UPDATE SET n = excluded.n,"
                             " mean = excluded.mean, m2 = excluded.m2"
                           : "DELETE FROM reward_stats WHERE stage = ?1",
                     &st);
    if (error < 0)
        return error;
    sqlite3_bind_int(st.st, 1, (int)rs->stage);
    if (rs->n) {
        sqlite3_bind_int64(st.st, 2, rs->n);
        sqlite3_bind_double(st.st, 3, rs->mean);
        sqlite3_bind_double(st.st, 4, rs->m2);
    }
    return step_done(ss, &st, "cannot store reward statistics");
}

/* ---- maintenance ----------------------------------------------------- */

static int sq_stats(kevo_store *s, kevo_memory_stats *out)
{
    sqlite_store *ss = ctx_of(s);
    memset(out, 0, sizeof(*out));
    struct {
        const char *sql;
        int64_t *dst;
    } counts[] = {
        {"SELECT count(*) FROM runs", &out->runs},
        {"SELECT count(*) FROM tasks", &out->tasks},
        {"SELECT count(*) FROM attempts", &out->attempts},
        {"SELECT count(*) FROM attempts WHERE verdict = 'correct'", &out->attempts_correct},
        {"SELECT count(*) FROM items", &out->items},
        {"SELECT count(*) FROM used", &out->edges_used},
        {"SELECT count(*) FROM distilled_from", &out->edges_distilled},
        {"SELECT count(*) FROM q_item", &out->q_items},
        {"SELECT count(*) FROM q_start", &out->q_starts},
    };
    int error = 0;
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
        if ((error = query_int64(ss, counts[i].sql, counts[i].dst)) < 0)
            return error;
    for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++) {
        stmt st;
        if ((error = prep(ss, "SELECT count(*) FROM items WHERE kind = ?", &st)) < 0)
            return error;
        bind_text(st.st, 1, kevo_item_kind_name((kevo_item_kind)k));
        if (sqlite3_step(st.st) == SQLITE_ROW)
            out->items_by_kind[k] = sqlite3_column_int64(st.st, 0);
        done_stmt(ss, &st);
    }
    int64_t v = 0, pages = 0, page_size = 0;
    if ((error = query_int64(ss, "PRAGMA user_version", &v)) < 0 ||
        (error = query_int64(ss, "PRAGMA page_count", &pages)) < 0 ||
        (error = query_int64(ss, "PRAGMA page_size", &page_size)) < 0)
        return error;
    out->schema_version = (int)v;
    out->bytes = pages * page_size;
    struct stat sb;
    if (stat(ss->path, &sb) == 0 && sb.st_size > out->bytes)
        out->bytes = sb.st_size;
    kevo_buf wal = {0};
    if (kevo_buf_printf(&wal, "%s-wal", ss->path) == 0 && stat(wal.ptr, &sb) == 0)
        out->bytes += sb.st_size;
    kevo_buf_free(&wal);
    return 0;
}

static int sq_compact(kevo_store *s)
{
    sqlite_store *ss = ctx_of(s);
    if (ss->depth)
        return kevo_error_set(KEVO_EINVAL, "%s: cannot compact inside a transaction", ss->path);
    int error;
    if ((error = exec(ss,
                      "INSERT INTO item_fts(item_fts) VALUES ('optimize');"
                      "INSERT INTO task_fts(task_fts) VALUES ('optimize');",
                      "cannot merge the search index")) < 0)
        return error;
    /* VACUUM cannot run while statements are active: finalize the cache. */
    for (size_t i = 0; i < ss->n_cache; i++) {
        sqlite3_finalize(ss->cache[i].st);
        free(ss->cache[i].sql);
    }
    ss->n_cache = 0;
    if ((error = exec(ss, "VACUUM", "cannot compact")) < 0)
        return error;
    df_drop(ss);
    return exec(ss, "PRAGMA wal_checkpoint(TRUNCATE)", "cannot checkpoint the journal");
}

/* ---- work queue (version 2) ------------------------------------------- */

#define WORK_COLS "run_id, task, backend, %s, state, worker, lease_until, claims, error, updated"

static int work_from_row(kevo_work *w, sqlite3_stmt *st)
{
    w->run_id = sqlite3_column_int64(st, 0);
    w->task = col_text(st, 1);
    w->backend = col_text(st, 2);
    w->bundle = col_text(st, 3);
    w->worker = col_text(st, 5);
    w->lease_until = sqlite3_column_int64(st, 6);
    w->claims = sqlite3_column_int64(st, 7);
    w->error = col_text(st, 8);
    w->updated = sqlite3_column_int64(st, 9);
    if (kevo_work_state_parse(&w->state, col_text(st, 4)) < 0)
        return kevo_error_set(KEVO_EINVAL, "work row (run %lld, task %s): the store holds the "
                              "state '%s', which is not a work state",
                              (long long)w->run_id, w->task ? w->task : "(null)",
                              col_text(st, 4) ? col_text(st, 4) : "(null)");
    return 0;
}

static int sq_work_add(kevo_store *s, const kevo_work *w)
{
    sqlite_store *ss = ctx_of(s);
    int taken = 0;
    int error = id_taken(ss, "runs", w->run_id, &taken);
    if (error < 0)
        return error;
    if (!taken)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no run %lld to add work to", ss->path,
                              (long long)w->run_id);
    stmt st;
    if ((error = prep(ss,
                      "INSERT INTO work(run_id, task, backend, bundle, state, updated)"
                      " VALUES (?, ?, ?, ?, 'queued', ?) ON CONFLICT(run_id, task) DO NOTHING",
                      &st)) < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, w->run_id);
    bind_text(st.st, 2, w->task);
    bind_text(st.st, 3, w->backend);
    bind_text(st.st, 4, w->bundle);
    sqlite3_bind_int64(st.st, 5, w->updated);
    if ((error = step_done(ss, &st, "cannot add work")) < 0)
        return error;
    if (sqlite3_changes(ss->db) == 0)
        return kevo_error_set(KEVO_EEXISTS, "%s: run %lld already has task %s", ss->path,
                              (long long)w->run_id, w->task);
    return 0;
}

/* One row through `cb` from a statement selecting WORK_COLS. */
static int work_rows(sqlite_store *ss, stmt *st, kevo_store_work_cb cb, void *arg, size_t *out_n)
{
    int rc, error = 0;
    size_t n = 0;
    while ((rc = sqlite3_step(st->st)) == SQLITE_ROW) {
        kevo_work w;
        if ((error = work_from_row(&w, st->st)) < 0 || (error = cb(arg, &w)) != 0)
            break;
        n++;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read work");
    done_stmt(ss, st);
    if (out_n)
        *out_n = n;
    return error < 0 ? error : 0;
}

static int sq_work_claim(kevo_store *s, const char *const *backends, size_t n_backends,
                         const char *worker, int64_t now_ms, int64_t lease_ms,
                         kevo_store_work_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    kevo_buf sql = {0};
    stmt st = {0};
    int64_t id = 0;
    int error = 0, rc;
    if (n_backends == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "no backend to claim work for");
    /* The write transaction kevo_memory opened (BEGIN IMMEDIATE) holds the
     * write lock: the select and the update below see and change one state
     * no other connection can change in between. */
    kevo_buf_puts(&sql, "SELECT w.id FROM work w JOIN runs r ON r.id = w.run_id"
                        " WHERE r.finished = 0 AND (w.state = 'queued' OR"
                        " (w.state = 'running' AND w.lease_until < ?)) AND w.backend IN (");
    for (size_t i = 0; i < n_backends; i++)
        kevo_buf_puts(&sql, i ? ", ?" : "?");
    kevo_buf_puts(&sql, ") ORDER BY w.run_id, w.id LIMIT 1");
    if ((error = kevo_buf_error(&sql)) < 0 || (error = prep(ss, sql.ptr, &st)) < 0)
        goto done;
    sqlite3_bind_int64(st.st, 1, now_ms);
    for (size_t i = 0; i < n_backends; i++)
        bind_text(st.st, (int)i + 2, backends[i]);
    rc = sqlite3_step(st.st);
    if (rc == SQLITE_ROW)
        id = sqlite3_column_int64(st.st, 0);
    else if (rc == SQLITE_DONE)
        error = KEVO_ENOTFOUND;
    else
        error = db_error(ss, rc, "cannot look for work");
    done_stmt(ss, &st);
    if (error < 0)
        goto done;
    if ((error = prep(ss,
                      "UPDATE work SET state = 'running', worker = ?, lease_until = ?,"
                      " claims = claims + 1, error = NULL, updated = ? WHERE id = ?",
                      &st)) < 0)
        goto done;
    bind_text(st.st, 1, worker);
    sqlite3_bind_int64(st.st, 2, now_ms + lease_ms);
    sqlite3_bind_int64(st.st, 3, now_ms);
    sqlite3_bind_int64(st.st, 4, id);
    if ((error = step_done(ss, &st, "cannot claim work")) < 0)
        goto done;
    if ((error = prep(ss, "SELECT " "run_id, task, backend, bundle, state, worker, lease_until,"
                          " claims, error, updated FROM work WHERE id = ?",
                      &st)) < 0)
        goto done;
    sqlite3_bind_int64(st.st, 1, id);
    error = work_rows(ss, &st, cb, arg, NULL);
done:
    done_stmt(ss, &st);
    kevo_buf_free(&sql);
    return error;
}

static int sq_work_renew(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                         int64_t now_ms, int64_t lease_ms)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "UPDATE work SET lease_until = ?, updated = ? WHERE run_id = ? AND task = ?"
                     " AND state = 'running' AND worker = ?",
                     &st);
    if (error < 0)
        return error;
    sqlite3_bind_int64(st.st, 1, now_ms + lease_ms);
    sqlite3_bind_int64(st.st, 2, now_ms);
    sqlite3_bind_int64(st.st, 3, run_id);
    bind_text(st.st, 4, task);
    bind_text(st.st, 5, worker);
    if ((error = step_done(ss, &st, "cannot renew a lease")) < 0)
        return error;
    if (sqlite3_changes(ss->db) == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: run %lld task %s is not held by worker %s "
                              "(the lease was lost or the task finished)",
                              ss->path, (long long)run_id, task, worker);
    return 0;
}

static int sq_work_finish(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                          kevo_work_state state, const char *why, int64_t now_ms)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "UPDATE work SET state = ?, error = ?, lease_until = 0, updated = ?"
                     " WHERE run_id = ? AND task = ? AND state = 'running' AND worker = ?",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, kevo_work_state_name(state));
    bind_text(st.st, 2, why);
    sqlite3_bind_int64(st.st, 3, now_ms);
    sqlite3_bind_int64(st.st, 4, run_id);
    bind_text(st.st, 5, task);
    bind_text(st.st, 6, worker);
    if ((error = step_done(ss, &st, "cannot finish work")) < 0)
        return error;
    if (sqlite3_changes(ss->db) == 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: run %lld task %s is not held by worker %s "
                              "(the lease was lost or the task finished)",
                              ss->path, (long long)run_id, task, worker);
    return 0;
}

static int sq_work_each(kevo_store *s, int64_t run_id, int with_bundle, kevo_store_work_cb cb,
                        void *arg)
{
    sqlite_store *ss = ctx_of(s);
    char sql[256];
    snprintf(sql, sizeof(sql), "SELECT " WORK_COLS " FROM work%s ORDER BY run_id, id",
             with_bundle ? "bundle" : "NULL", run_id ? " WHERE run_id = ?" : "");
    stmt st;
    int error = prep(ss, sql, &st);
    if (error < 0)
        return error;
    if (run_id)
        sqlite3_bind_int64(st.st, 1, run_id);
    return work_rows(ss, &st, cb, arg, NULL);
}

/* ---- machines (version 2) --------------------------------------------- */

static int sq_machine_upsert(kevo_store *s, const kevo_memory_machine *m)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "INSERT INTO machines(id, hostname, cpu, gpu, cores, first_seen, last_seen)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET"
                     " hostname = coalesce(excluded.hostname, hostname),"
                     " cpu = coalesce(excluded.cpu, cpu),"
                     " gpu = coalesce(excluded.gpu, gpu),"
                     " cores = CASE WHEN excluded.cores <> 0 THEN excluded.cores ELSE cores END,"
                     " last_seen = max(last_seen, excluded.last_seen)",
                     &st);
    if (error < 0)
        return error;
    bind_text(st.st, 1, m->id);
    bind_text(st.st, 2, m->hostname);
    bind_text(st.st, 3, m->cpu);
    bind_text(st.st, 4, m->gpu);
    sqlite3_bind_int(st.st, 5, m->cores);
    sqlite3_bind_int64(st.st, 6, m->first_seen ? m->first_seen : m->last_seen);
    sqlite3_bind_int64(st.st, 7, m->last_seen);
    return step_done(ss, &st, "cannot store a machine");
}

static int sq_machine_each(kevo_store *s, kevo_store_machine_cb cb, void *arg)
{
    sqlite_store *ss = ctx_of(s);
    stmt st;
    int error = prep(ss,
                     "SELECT id, hostname, cpu, gpu, cores, first_seen, last_seen FROM machines"
                     " ORDER BY id",
                     &st);
    if (error < 0)
        return error;
    int rc;
    while ((rc = sqlite3_step(st.st)) == SQLITE_ROW) {
        kevo_memory_machine m = {
            .id = col_text(st.st, 0),
            .hostname = col_text(st.st, 1),
            .cpu = col_text(st.st, 2),
            .gpu = col_text(st.st, 3),
            .cores = sqlite3_column_int(st.st, 4),
            .first_seen = sqlite3_column_int64(st.st, 5),
            .last_seen = sqlite3_column_int64(st.st, 6),
        };
        if ((error = cb(arg, &m)) != 0)
            break;
    }
    if (error == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
        error = db_error(ss, rc, "cannot read machines");
    done_stmt(ss, &st);
    return error < 0 ? error : 0;
}

/* ---- open / migrate / close ------------------------------------------ */

static int migrate(sqlite_store *ss)
{
    int64_t version = 0, app = 0, objects = 0;
    int error = 0;
    if ((error = query_int64(ss, "PRAGMA application_id", &app)) < 0)
        return error;
    if ((error = query_int64(ss, "PRAGMA user_version", &version)) < 0)
        return error;
    if (app != 0 && app != KEVO_STORE_APPLICATION_ID)
        return kevo_error_set(KEVO_EINVAL, "%s: not a kevo memory store (application_id %lld)",
                              ss->path, (long long)app);
    if (version > KEVO_SCHEMA_VERSION)
        return kevo_error_set(KEVO_EINVAL,
                              "%s: written by a newer kevo (schema version %lld, this kevo "
                              "knows up to %d)",
                              ss->path, (long long)version, KEVO_SCHEMA_VERSION);
    if (version == KEVO_SCHEMA_VERSION)
        return 0;
    if ((error = exec(ss, "BEGIN IMMEDIATE", "cannot begin the schema migration")) < 0)
        return error;
    /* Another process may have migrated while we waited for the lock. */
    if ((error = query_int64(ss, "PRAGMA user_version", &version)) < 0)
        goto done;
    if (version == 0 && app == 0) {
        if ((error = query_int64(ss, "SELECT count(*) FROM sqlite_master", &objects)) < 0)
            goto done;
        if (objects > 0) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "%s: not a kevo memory store (an unrelated SQLite database)",
                                   ss->path);
            goto done;
        }
    }
    for (int v = (int)version; v < KEVO_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof(what), "schema migration %d failed", v + 1);
        if ((error = exec(ss, kevo_schema_migrations[v], what)) < 0)
            goto done;
    }
    char sql[96];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA application_id = %d",
             KEVO_SCHEMA_VERSION, KEVO_STORE_APPLICATION_ID);
    if ((error = exec(ss, sql, "cannot record the schema version")) < 0)
        goto done;
    error = exec(ss, "COMMIT", "cannot commit the schema migration");
done:
    if (error < 0)
        sqlite3_exec(ss->db, "ROLLBACK", NULL, NULL, NULL);
    return error;
}

static void sq_free(kevo_store *s)
{
    sqlite_store *ss = ctx_of(s);
    if (!ss)
        return;
    for (size_t i = 0; i < ss->n_cache; i++) {
        sqlite3_finalize(ss->cache[i].st);
        free(ss->cache[i].sql);
    }
    if (ss->db) {
        if (ss->depth)
            sqlite3_exec(ss->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(ss->db);
    }
    kevo_map_free(&ss->df_cache);
    free(ss->path);
    free(ss);
    s->ctx = NULL;
}

int kevo_store_sqlite_open(kevo_store **out, const char *path, unsigned flags)
{
    kevo_store *s = NULL;
    sqlite_store *ss = NULL;
    int error = 0;
    *out = NULL;
    if (!path || !*path)
        return kevo_error_set(KEVO_EINVAL, "memory store: empty path");
    if ((flags & KEVO_MEMORY_MUST_EXIST) && strcmp(path, ":memory:") && access(path, F_OK) != 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: no such memory store", path);
    if (!(s = calloc(1, sizeof(*s))) || !(ss = calloc(1, sizeof(*ss)))) {
        free(s);
        free(ss);
        return kevo_error_set(KEVO_ENOMEM, "out of memory opening %s", path);
    }
    s->ctx = ss;
    ss->df_docs = -1;
    ss->df_data_version = -1;
    if (!(ss->path = strdup(path))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory opening %s", path);
        goto done;
    }
    int rc = sqlite3_open_v2(
        path, &ss->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        error = kevo_error_set(KEVO_EIO, "%s: cannot open: %s", path,
                               ss->db ? sqlite3_errmsg(ss->db) : sqlite3_errstr(rc));
        goto done;
    }
    sqlite3_extended_result_codes(ss->db, 1);
    sqlite3_busy_timeout(ss->db, 30000);
    char *msg = NULL;
    rc = sqlite3_exec(ss->db,
                      "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                      " PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
                      " PRAGMA cache_size = -65536; PRAGMA mmap_size = 1073741824;",
                      NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        error = kevo_error_set((rc & 0xff) == SQLITE_NOTADB ? KEVO_EINVAL : KEVO_EIO,
                               "%s: cannot open as a memory store: %s", path,
                               msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        goto done;
    }
    if ((error = migrate(ss)) < 0)
        goto done;

    s->version = KEVO_STORE_VERSION;
    s->name = "sqlite";
    s->free = sq_free;
    s->tx_begin = sq_tx_begin;
    s->tx_begin_read = sq_tx_begin_read;
    s->tx_commit = sq_tx_commit;
    s->tx_rollback = sq_tx_rollback;
    s->run_insert = sq_run_insert;
    s->run_update = sq_run_update;
    s->run_each = sq_run_each;
    s->run_delete = sq_run_delete;
    s->task_upsert = sq_task_upsert;
    s->task_each = sq_task_each;
    s->task_search = sq_task_search;
    s->task_delete = sq_task_delete;
    s->attempt_insert = sq_attempt_insert;
    s->attempt_each = sq_attempt_each;
    s->attempt_delete = sq_attempt_delete;
    s->attempt_set_reward = sq_attempt_set_reward;
    s->item_insert = sq_item_insert;
    s->item_each = sq_item_each;
    s->item_search = sq_item_search;
    s->item_lookup = sq_item_lookup;
    s->item_delete = sq_item_delete;
    s->find_uid = sq_find_uid;
    s->used_insert = sq_used_insert;
    s->used_each = sq_used_each;
    s->distilled_insert = sq_distilled_insert;
    s->distilled_each = sq_distilled_each;
    s->q_get = sq_q_get;
    s->q_set = sq_q_set;
    s->q_each = sq_q_each;
    s->start_each = sq_start_each;
    s->reward_stats_get = sq_reward_stats_get;
    s->reward_stats_set = sq_reward_stats_set;
    s->stats = sq_stats;
    s->compact = sq_compact;
    s->work_add = sq_work_add;
    s->work_claim = sq_work_claim;
    s->work_renew = sq_work_renew;
    s->work_finish = sq_work_finish;
    s->work_each = sq_work_each;
    s->machine_upsert = sq_machine_upsert;
    s->machine_each = sq_machine_each;
    *out = s;
done:
    if (error < 0) {
        sq_free(s);
        free(s);
    }
    return error;
}
