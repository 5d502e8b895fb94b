/*
 * memory/schema.h - the SQLite schema of the experience graph and its
 * forward migrations. Internal to src/memory/store_sqlite.c.
 *
 * Migration i (1-based) turns a store at schema version i-1 into version i;
 * a fresh file runs them all. Never edit a released migration: append one.
 */
#ifndef KEVO_MEMORY_SCHEMA_H
#define KEVO_MEMORY_SCHEMA_H

/* PRAGMA application_id of kevo stores: "kevo" in ASCII. */
#define KEVO_STORE_APPLICATION_ID 0x6b65766f

static const char *const kevo_schema_migrations[] = {
    /* 1: the graph, Q tables, FTS5 indexes. */
    "CREATE TABLE runs("
    "  id INTEGER PRIMARY KEY,"
    "  uid TEXT NOT NULL UNIQUE,"
    "  config TEXT NOT NULL,"
    "  status TEXT NOT NULL,"
    "  started INTEGER NOT NULL,"
    "  finished INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE tasks("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  level INTEGER NOT NULL DEFAULT 0,"
    "  category TEXT, description TEXT, reference TEXT, suite_path TEXT);"
    "CREATE TABLE attempts("
    "  id INTEGER PRIMARY KEY,"
    "  uid TEXT NOT NULL UNIQUE,"
    "  run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,"
    "  task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
    "  backend TEXT, generator TEXT,"
    "  stage INTEGER NOT NULL CHECK (stage IN (1, 2)),"
    "  iteration INTEGER NOT NULL,"
    "  parent_id INTEGER REFERENCES attempts(id) ON DELETE CASCADE,"
    "  verdict TEXT NOT NULL,"
    "  gates TEXT, feedback TEXT, source TEXT, recipes TEXT,"
    "  candidate_us REAL NOT NULL, reference_us REAL NOT NULL, speedup REAL NOT NULL,"
    "  tokens_prompt INTEGER NOT NULL, tokens_completion INTEGER NOT NULL,"
    "  tokens_estimated INTEGER NOT NULL,"
    "  reward_raw REAL NOT NULL, reward REAL NOT NULL,"
    "  created INTEGER NOT NULL);"
    "CREATE INDEX attempts_task ON attempts(task_id, id);"
    "CREATE INDEX attempts_run ON attempts(run_id, id);"
    "CREATE INDEX attempts_parent ON attempts(parent_id);"
    "CREATE INDEX attempts_best ON attempts(task_id, verdict, speedup);"
    "CREATE TABLE items("
    "  id INTEGER PRIMARY KEY,"
    "  uid TEXT NOT NULL UNIQUE,"
    "  kind TEXT NOT NULL,"
    "  title TEXT NOT NULL, body TEXT NOT NULL,"
    "  category TEXT, task TEXT, backend TEXT, tags TEXT,"
    "  created INTEGER NOT NULL);"
    "CREATE INDEX items_kind_title ON items(kind, title);"
    "CREATE INDEX items_category ON items(category, id);"
    "CREATE INDEX items_kind_category ON items(kind, category, id);"
    "CREATE INDEX items_task ON items(task, id);"
    "CREATE TABLE used("
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,"
    "  stage INTEGER NOT NULL, rank INTEGER NOT NULL, tokens INTEGER NOT NULL,"
    "  PRIMARY KEY (attempt_id, item_id)) WITHOUT ROWID;"
    "CREATE INDEX used_item ON used(item_id, attempt_id);"
    "CREATE TABLE distilled_from("
    "  item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,"
    "  attempt_id INTEGER NOT NULL REFERENCES attempts(id) ON DELETE CASCADE,"
    "  PRIMARY KEY (item_id, attempt_id)) WITHOUT ROWID;"
    "CREATE INDEX distilled_attempt ON distilled_from(attempt_id);"
    "CREATE TABLE q_item("
    "  item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,"
    "  stage INTEGER NOT NULL, q REAL NOT NULL, n INTEGER NOT NULL,"
    "  PRIMARY KEY (item_id, stage)) WITHOUT ROWID;"
    "CREATE TABLE q_start("
    "  attempt_id INTEGER PRIMARY KEY REFERENCES attempts(id) ON DELETE CASCADE,"
    "  q REAL NOT NULL, n INTEGER NOT NULL);"
    "CREATE TABLE reward_stats("
    "  stage INTEGER PRIMARY KEY, n INTEGER NOT NULL, mean REAL NOT NULL, m2 REAL NOT NULL);"
    "CREATE VIRTUAL TABLE item_fts USING fts5("
    "  title, body, tags, category, task, kind, content='items', content_rowid='id');"
    "CREATE VIRTUAL TABLE item_vocab USING fts5vocab(item_fts, 'row');"
    "CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN"
    "  INSERT INTO item_fts(rowid, title, body, tags, category, task, kind)"
    "  VALUES (new.id, new.title, new.body, new.tags, new.category, new.task, new.kind);"
    "END;"
    "CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN"
    "  INSERT INTO item_fts(item_fts, rowid, title, body, tags, category, task, kind)"
    "  VALUES ('delete', old.id, old.title, old.body, old.tags, old.category, old.task, old.kind);"
    "END;"
    "CREATE TRIGGER items_au AFTER UPDATE ON items BEGIN"
    "  INSERT INTO item_fts(item_fts, rowid, title, body, tags, category, task, kind)"
    "  VALUES ('delete', old.id, old.title, old.body, old.tags, old.category, old.task, old.kind);"
    "  INSERT INTO item_fts(rowid, title, body, tags, category, task, kind)"
    "  VALUES (new.id, new.title, new.body, new.tags, new.category, new.task, new.kind);"
    "END;"
    "CREATE VIRTUAL TABLE task_fts USING fts5("
    "  name, category, description, content='tasks', content_rowid='id');"
    "CREATE TRIGGER tasks_ai AFTER INSERT ON tasks BEGIN"
    "  INSERT INTO task_fts(rowid, name, category, description)"
    "  VALUES (new.id, new.name, new.category, new.description);"
    "END;"
    "CREATE TRIGGER tasks_ad AFTER DELETE ON tasks BEGIN"
    "  INSERT INTO task_fts(task_fts, rowid, name, category, description)"
    "  VALUES ('delete', old.id, old.name, old.category, old.description);"
    "END;"
    "CREATE TRIGGER tasks_au AFTER UPDATE ON tasks BEGIN"
    "  INSERT INTO task_fts(task_fts, rowid, name, category, description)"
    "  VALUES ('delete', old.id, old.name, old.category, old.description);"
    "  INSERT INTO task_fts(rowid, name, category, description)"
    "  VALUES (new.id, new.name, new.category, new.description);"
    "END;",
    /* 2: what each speedup is over (PyTorch-defined tasks time PyTorch). */
    "ALTER TABLE attempts ADD COLUMN baseline TEXT;",
    /* 3: machines (which one measured each attempt) and the work queue of
     * shared runs. */
    "ALTER TABLE attempts ADD COLUMN machine TEXT;"
    "CREATE TABLE machines("
    "  id TEXT PRIMARY KEY,"
    "  hostname TEXT, cpu TEXT, gpu TEXT,"
    "  cores INTEGER NOT NULL DEFAULT 0,"
    "  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);"
    "CREATE TABLE work("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  task TEXT NOT NULL, backend TEXT NOT NULL, bundle TEXT NOT NULL,"
    "  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),"
    "  worker TEXT,"
    "  lease_until INTEGER NOT NULL DEFAULT 0,"
    "  claims INTEGER NOT NULL DEFAULT 0,"
    "  error TEXT,"
    "  updated INTEGER NOT NULL,"
    "  UNIQUE (run_id, task));"
    "CREATE INDEX work_claim ON work(state, backend, run_id, id);",
    /* 4: a used edge whose attempt's reward does not update the item's Q
     * (kevo_used_item.no_credit: the built-in generator's retunes), so that
     * a Q replayed from the edges (memory forget, an export read back)
     * matches the Q the run learned. */
    "ALTER TABLE used ADD COLUMN no_credit INTEGER NOT NULL DEFAULT 0;",
};

#define KEVO_SCHEMA_VERSION                                                                        \
    ((int)(sizeof(kevo_schema_migrations) / sizeof(kevo_schema_migrations[0])))

#endif
