/*
 * tests/unit/store_select.h - which store the memory-level tests run
 * against. KEVO_TEST_STORE unset or "sqlite": a kevo.db file in the test's
 * folder. KEVO_TEST_STORE=postgresql: a fresh schema on the PostgreSQL test
 * server (pg_helpers.h), dropped again by store_select_release; with no
 * server the test skips, printing why. tests/CMakeLists.txt registers each
 * such test twice (<name> and <name>_pg).
 *
 * Use in a cmocka setup: loc = store_select_locator(dir, "kevo.db", &why);
 * then kevo_memory_open(&mem, loc); in teardown store_select_release(dir);
 * each test starts with STORE_SELECT_READY(why) (skips when why is set).
 * Include after <cmocka.h>.
 */
#ifndef KEVO_TEST_STORE_SELECT_H
#define KEVO_TEST_STORE_SELECT_H

#include "contract_helpers.h"
#include "kevo/util.h"
#include "pg_helpers.h"

#include <stdlib.h>
#include <string.h>

static inline int store_select_is_pg(void)
{
    const char *v = getenv("KEVO_TEST_STORE");
    return v && !strcmp(v, "postgresql");
}

/* The locator for kevo_memory_open (the caller's, free()): dir/file, or a
 * fresh PostgreSQL schema's URL (its name kept in dir/pg-schema). NULL
 * with *why set when PostgreSQL is asked for and there is no server (the
 * tests then skip: STORE_SELECT_READY), NULL with *why NULL when the
 * schema cannot be made (fail). cmocka cannot skip from a setup. */
static inline char *store_select_locator(const char *dir, const char *file, const char **why)
{
    *why = NULL;
    if (!store_select_is_pg())
        return kevo_path_join(dir, file);
    const char *server = pg_test_url(why);
    if (!server)
        return NULL;
    char schema[128], url[1400];
    if (pg_test_schema_new(schema, url, sizeof(url), server) < 0)
        return NULL;
    char *sfile = kevo_path_join(dir, "pg-schema");
    int error = kevo_file_write(sfile, schema, strlen(schema));
    free(sfile);
    return error < 0 ? NULL : strdup(url);
}

/* Skip the running test when the store is not available. */
#define STORE_SELECT_READY(why)                                                                    \
    do {                                                                                           \
        if (why)                                                                                   \
            CONTRACT_SKIP("store postgresql: %s", (why));                                          \
    } while (0)

/* Drop the schema store_select_locator made for `dir` (if any). */
static inline void store_select_release(const char *dir)
{
    if (!store_select_is_pg() || !dir)
        return;
    const char *why = NULL, *server = pg_test_url(&why);
    char *sfile = kevo_path_join(dir, "pg-schema");
    char *schema = NULL;
    if (server && kevo_file_read(&schema, NULL, sfile) == 0)
        pg_test_schema_drop(server, schema);
    free(schema);
    free(sfile);
}

/* Run one SQL command on the schema of `dir` (PostgreSQL only): what a
 * test does with sqlite3 on a file. 0 or -1. */
static inline int store_select_sql(const char *dir, const char *sql)
{
    const char *why = NULL, *server = pg_test_url(&why);
    char *sfile = kevo_path_join(dir, "pg-schema");
    char *schema = NULL;
    int rc = -1;
    if (server && kevo_file_read(&schema, NULL, sfile) == 0) {
        char buf[4096];
        snprintf(buf, sizeof(buf), "SET search_path = %s; %s", schema, sql);
        rc = pg_test_admin(server, buf);
    }
    free(schema);
    free(sfile);
    return rc;
}

#endif
