/*
 * kevo/sys/store.h - the vtable behind kevo_memory, for people who add a
 * storage backend (SQLite is the one implementation, src/memory/
 * store_sqlite.c; PostgreSQL is meant to follow). Callers never touch it:
 * they use kevo/memory.h, which keeps all the logic (rewards, Q updates,
 * distillation, export/import, filtering) above this line, so a store only
 * stores, finds and deletes records.
 *
 * Adding a store (docs/memory.md, "Adding a store"):
 *   1. write `int my_store_open(kevo_store **out, ...)` that calloc()s a
 *      kevo_store, sets version = KEVO_STORE_VERSION, name, ctx and every
 *      required method;
 *   2. hand it to kevo_memory_open_store().
 *
 * Rules every implementation keeps:
 *   - methods return 0 or a negative KEVO_E* code with kevo_error_set();
 *   - ids are positive int64; insert methods honour a non-zero requested
 *     id when it is free and otherwise pick a fresh one (import relies on
 *     it), and report the id used through *out_id;
 *   - every write happens inside tx_begin/tx_commit issued by kevo_memory
 *     (never implicitly outside one); transactions nest (savepoints); a
 *     process killed at any moment leaves the last committed state;
 *   - *_each methods call `cb` once per row with records whose strings are
 *     borrowed for the duration of that call only; `cb` returns 0 to go on,
 *     > 0 to stop early (the method then returns 0) or < 0 to fail (the
 *     method returns that code). Callbacks never call back into the store;
 *   - deleting a task, attempt or item deletes its edges and Q rows; an
 *     attempt's deletion deletes the attempts that refine it; a run's
 *     deletion deletes its work rows (version 2).
 *
 * Versioning: methods are only ever appended; each bump of
 * KEVO_STORE_VERSION says which fields exist; kevo reads a field only when
 * s->version is at least the version that introduced it.
 */
#ifndef KEVO_SYS_STORE_H
#define KEVO_SYS_STORE_H

#include "kevo/memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1: the experience graph. 2: the work queue (work_*), machines
 * (machine_*) and kevo_attempt.machine, which attempt_insert/attempt_each
 * of a version-1 store ignore. 3: q_get_many (optional). */
#define KEVO_STORE_VERSION 3

typedef struct kevo_store kevo_store;

/* Tables that carry a uid. */
typedef enum kevo_store_table {
    KEVO_STORE_RUNS = 1,
    KEVO_STORE_ITEMS = 2,
    KEVO_STORE_ATTEMPTS = 3,
} kevo_store_table;

/* What a Q row belongs to. */
typedef enum kevo_q_target {
    KEVO_Q_ITEM = 1,  /* (item, stage) */
    KEVO_Q_START = 2, /* (start-point attempt), stage is always refine */
} kevo_q_target;

typedef struct kevo_q_row {
    kevo_q_target target;
    int64_t id;
    kevo_stage stage;
    double q;
    int64_t n; /* number of updates; 0 deletes the row in q_set */
} kevo_q_row;

/* A `used` edge. */
typedef struct kevo_used_edge {
    int64_t attempt_id;
    kevo_used_item used;
} kevo_used_edge;

/* A distilled_from edge. */
typedef struct kevo_distilled_edge {
    int64_t item_id;
    int64_t attempt_id;
} kevo_distilled_edge;

/* Welford running statistics of one stage's raw rewards. */
typedef struct kevo_reward_stats {
    kevo_stage stage;
    int64_t n;
    double mean;
    double m2;
} kevo_reward_stats;

typedef int (*kevo_store_run_cb)(void *arg, const kevo_run *run);
typedef int (*kevo_store_task_cb)(void *arg, const kevo_memory_task *task, double score);
typedef int (*kevo_store_attempt_cb)(void *arg, const kevo_attempt *a);
typedef int (*kevo_store_item_cb)(void *arg, const kevo_item *item, double score);
typedef int (*kevo_store_used_cb)(void *arg, const kevo_used_edge *e);
typedef int (*kevo_store_distilled_cb)(void *arg, const kevo_distilled_edge *e);
typedef int (*kevo_store_q_cb)(void *arg, const kevo_q_row *row);
typedef int (*kevo_store_start_cb)(void *arg, const kevo_start_point *sp);
typedef int (*kevo_store_work_cb)(void *arg, const kevo_work *w);
typedef int (*kevo_store_machine_cb)(void *arg, const kevo_memory_machine *m);

struct kevo_store {
    /* KEVO_STORE_VERSION the store was written against (>= 1). */
    unsigned version;
    /* e.g. "sqlite". Static storage. */
    const char *name;
    /* The store's own state; kevo never looks inside. */
    void *ctx;

    /* Optional. Release ctx (not the struct: kevo free()s it after). */
    void (*free)(kevo_store *s);

    /* Transactions nest. tx_begin opens a write transaction (taking the
     * write lock at once); tx_begin_read a read-only snapshot, ended by
     * tx_commit or tx_rollback like any other, inside which no write may
     * happen. */
    int (*tx_begin)(kevo_store *s);
    int (*tx_begin_read)(kevo_store *s);
    int (*tx_commit)(kevo_store *s);
    int (*tx_rollback)(kevo_store *s);

    /* Runs. run_each: id 0 = all runs by id, else that one run. */
    int (*run_insert)(kevo_store *s, const kevo_run *run, int64_t *out_id);
    int (*run_update)(kevo_store *s, int64_t id, const char *status, int64_t finished,
                      const char *config_json /* NULL = keep */);
    int (*run_each)(kevo_store *s, int64_t id, kevo_store_run_cb cb, void *arg);
    int (*run_delete)(kevo_store *s, int64_t id);

    /* Tasks, keyed by name (see kevo_memory_task_upsert for NULL fields).
     * task_each: name NULL = all tasks by name. task_search: BM25 over
     * name, category and description; score higher = better. */
    int (*task_upsert)(kevo_store *s, const kevo_memory_task *task, int64_t *out_id);
    int (*task_each)(kevo_store *s, const char *name, kevo_store_task_cb cb, void *arg);
    int (*task_search)(kevo_store *s, const char *query, size_t limit, kevo_store_task_cb cb,
                       void *arg);
    int (*task_delete)(kevo_store *s, const char *name);

    /* Attempts. attempt_insert stores every field of `a` including uid,
     * reward_raw and reward, and creates the task row if missing.
     * attempt_each: id != 0 = that one attempt, else those matching
     * `filter` (which may be NULL = all). */
    int (*attempt_insert)(kevo_store *s, const kevo_attempt *a, int64_t *out_id);
    int (*attempt_each)(kevo_store *s, int64_t id, const kevo_attempt_filter *filter,
                        kevo_store_attempt_cb cb, void *arg);
    int (*attempt_delete)(kevo_store *s, int64_t id);
    /* Replace the reward an attempt's Q updates used (relearning). */
    int (*attempt_set_reward)(kevo_store *s, int64_t id, double reward);

    /* Items. item_each: id != 0 = that one item, else those matching `f`
     * (NULL = all, by id). item_search: full-text, best first, score higher
     * = better, at most f->limit (20 when 0). item_lookup: items of `kind`
     * whose title is exactly `title`, those of `backend` first, then those
     * without a backend. */
    int (*item_insert)(kevo_store *s, const kevo_item *item, int64_t *out_id);
    int (*item_each)(kevo_store *s, int64_t id, const kevo_item_filter *f, kevo_store_item_cb cb,
                     void *arg);
    int (*item_search)(kevo_store *s, const char *query, const kevo_item_filter *f,
                       kevo_store_item_cb cb, void *arg);
    int (*item_lookup)(kevo_store *s, kevo_item_kind kind, const char *title, const char *backend,
                       kevo_store_item_cb cb, void *arg);
    int (*item_delete)(kevo_store *s, int64_t id);

    /* KEVO_ENOTFOUND (no message needed) when no row has that uid. */
    int (*find_uid)(kevo_store *s, kevo_store_table table, const char *uid, int64_t *out_id);

    /* Edges. Inserting an existing edge is a no-op. *_each: 0 = any for
     * either end; ordered by attempt id then rank (used), item id then
     * attempt id (distilled). */
    int (*used_insert)(kevo_store *s, int64_t attempt_id, const kevo_used_item *used);
    int (*used_each)(kevo_store *s, int64_t attempt_id, int64_t item_id, kevo_store_used_cb cb,
                     void *arg);
    int (*distilled_insert)(kevo_store *s, int64_t item_id, int64_t attempt_id);
    int (*distilled_each)(kevo_store *s, int64_t item_id, int64_t attempt_id,
                          kevo_store_distilled_cb cb, void *arg);

    /* Q rows. q_get gives n = 0, q = 0 when there is no row. q_each: all
     * rows of a target ordered by id then stage. */
    int (*q_get)(kevo_store *s, kevo_q_target target, int64_t id, kevo_stage stage, double *out_q,
                 int64_t *out_n);
    int (*q_set)(kevo_store *s, const kevo_q_row *row);
    int (*q_each)(kevo_store *s, kevo_q_target target, kevo_store_q_cb cb, void *arg);
    /* The correct attempts of a task (backend NULL = any) with their Q2
     * (n = 0 when never updated), by id. */
    int (*start_each)(kevo_store *s, const char *task, const char *backend, kevo_store_start_cb cb,
                      void *arg);

    /* Reward statistics per stage; get gives n = 0 when none. */
    int (*reward_stats_get)(kevo_store *s, kevo_stage stage, kevo_reward_stats *out);
    int (*reward_stats_set)(kevo_store *s, const kevo_reward_stats *st);

    /* Counts and size on disk. */
    int (*stats)(kevo_store *s, kevo_memory_stats *out);

    /* Optional (NULL = nothing to do). Outside any transaction: drop
     * deleted content from disk (index merge, vacuum, WAL truncation). */
    int (*compact)(kevo_store *s);

    /* Version 1 ends here. Append new methods below, bump
     * KEVO_STORE_VERSION, and guard their use on s->version. */

    /* ---- version 2 ---- */

    /* Work queue: rows keyed by (run_id, task), see kevo_memory_work_* in
     * kevo/memory.h for their meaning. Times are Unix ms given by kevo
     * (never the store's own clock). Each method runs inside a write
     * transaction kevo_memory opened (tx_begin; work_each: any).
     *
     * work_add: insert w as queued (claims 0, worker/error NULL, lease 0,
     * updated = w->updated); KEVO_EEXISTS when (run_id, task) exists,
     * KEVO_ENOTFOUND when the run does not. */
    int (*work_add)(kevo_store *s, const kevo_work *w);
    /* Take ONE row whose backend is in backends[0..n_backends), whose run
     * has finished == 0, and that is queued or running with lease_until <
     * now_ms, first by run id then insertion order; set it running under
     * `worker`, lease_until = now_ms + lease_ms, claims + 1, updated =
     * now_ms; pass the row as it now is (bundle included) to cb once.
     * KEVO_ENOTFOUND (no message needed) when none. Must never give one row
     * to two callers of any two handles or machines (SQLite: the
     * BEGIN IMMEDIATE of tx_begin serialises; PostgreSQL: e.g. UPDATE ...
     * WHERE ctid = (SELECT ... FOR UPDATE SKIP LOCKED)). */
    int (*work_claim)(kevo_store *s, const char *const *backends, size_t n_backends,
                      const char *worker, int64_t now_ms, int64_t lease_ms, kevo_store_work_cb cb,
                      void *arg);
    /* When the row is running with worker == `worker`: lease_until =
     * now_ms + lease_ms, updated = now_ms. Else KEVO_ENOTFOUND. */
    int (*work_renew)(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                      int64_t now_ms, int64_t lease_ms);
    /* When the row is running with worker == `worker`: state = `state`
     * (done or failed), error = `error` (NULL allowed), lease_until = 0,
     * updated = now_ms; worker is kept. Else KEVO_ENOTFOUND. */
    int (*work_finish)(kevo_store *s, int64_t run_id, const char *task, const char *worker,
                       kevo_work_state state, const char *error, int64_t now_ms);
    /* Rows of run_id (0 = all), by run id then insertion order; bundle is
     * NULL unless with_bundle. */
    int (*work_each)(kevo_store *s, int64_t run_id, int with_bundle, kevo_store_work_cb cb,
                     void *arg);

    /* Machines keyed by id. machine_upsert: insert, or update the non-NULL
     * fields (cores when != 0) and set last_seen = max(stored, given),
     * keeping first_seen; a new row takes first_seen as given (0: its
     * last_seen). machine_each: all, by id. */
    int (*machine_upsert)(kevo_store *s, const kevo_memory_machine *m);
    int (*machine_each)(kevo_store *s, kevo_store_machine_cb cb, void *arg);

    /* Version 3. Optional (NULL: kevo calls q_get per id). The Q rows of
     * ids[0..n) at `stage` (KEVO_Q_START: refine) in one round trip:
     * out_q[i], out_n[i] as q_get gives them for ids[i] (0, 0 when there is
     * no row; an id may repeat). For stores across a network, where one
     * query per pool item is what a context build waits on. */
    int (*q_get_many)(kevo_store *s, kevo_q_target target, const int64_t *ids, size_t n,
                      kevo_stage stage, double *out_q, int64_t *out_n);
};

/* The SQLite store (WAL, foreign keys, FTS5). flags: KEVO_MEMORY_*. */
int kevo_store_sqlite_open(kevo_store **out, const char *path, unsigned flags);

/* The PostgreSQL store (libpq; docs/memory.md "PostgreSQL"). `conninfo`
 * is anything libpq accepts: a URI (postgresql://user@host:port/db?...) or
 * key=value pairs, with PG* environment variables and ~/.pgpass applying.
 * Its tables live in the first schema of the connection's search_path.
 * flags: KEVO_MEMORY_MUST_EXIST (KEVO_ENOTFOUND when that schema has no
 * kevo tables). KEVO_EIO naming user@host:port/db and libpq's reason when
 * the server cannot be reached or refuses the login; messages never hold
 * the password. */
int kevo_store_pg_open(kevo_store **out, const char *conninfo, unsigned flags);

/* Wrap a store in a kevo_memory; takes ownership of `store` (also on
 * failure). */
int kevo_memory_open_store(kevo_memory **out, kevo_store *store, const char *path);

/* Release a store: calls its free method, then free()s the struct. */
void kevo_store_free(kevo_store *store);

#ifdef __cplusplus
}
#endif
#endif
