/*
 * tests/unit/pg_helpers.h - what the tests that run against PostgreSQL
 * share: finding the test server and giving each test a fresh schema.
 *
 * The server: $KEVO_TEST_PG_URL when set, else the first line of the file
 * $KEVO_TEST_PG_URL_FILE, written by the ctest fixture (tests/helpers/
 * pg_server.sh fixture-start): a URL, or "skip: <reason>" when no server
 * can run here. No server: the reason comes back and the tests skip,
 * printing it; they never pass silently.
 *
 * A fresh store: a schema of its own (CREATE SCHEMA through libpq), named
 * in the URL's options (-c search_path=...), dropped with everything in it
 * by pg_test_schema_drop. Include after <cmocka.h>.
 */
#ifndef KEVO_TEST_PG_HELPERS_H
#define KEVO_TEST_PG_HELPERS_H

#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The server's URL (static storage), or NULL with *why set. */
static inline const char *pg_test_url(const char **why)
{
    static char url[1024];
    static char reason[1100];
    const char *env = getenv("KEVO_TEST_PG_URL");
    if (env && *env)
        return env;
    const char *file = getenv("KEVO_TEST_PG_URL_FILE");
    if (!file || !*file) {
        *why = "no PostgreSQL test server: neither KEVO_TEST_PG_URL nor KEVO_TEST_PG_URL_FILE "
               "is set (ctest starts one: tests/helpers/pg_server.sh)";
        return NULL;
    }
    FILE *f = fopen(file, "r");
    if (!f || !fgets(url, sizeof(url), f)) {
        if (f)
            fclose(f);
        snprintf(reason, sizeof(reason),
                 "no PostgreSQL test server: %s is missing or empty (did the pg_server_start "
                 "fixture run?)",
                 file);
        *why = reason;
        return NULL;
    }
    fclose(f);
    url[strcspn(url, "\r\n")] = '\0';
    if (!strncmp(url, "skip:", 5)) {
        snprintf(reason, sizeof(reason), "no PostgreSQL test server:%s", url + 5);
        *why = reason;
        return NULL;
    }
    return url;
}

/* Run one SQL command as the server's superuser; 0 or -1 (printed). */
static inline int pg_test_admin(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    int rc = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PQclear(PQexec(c, "SET client_min_messages = warning"));
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
            rc = 0;
        else
            fprintf(stderr, "pg_test_admin: %s: %s", sql, PQerrorMessage(c));
        PQclear(r);
    } else {
        fprintf(stderr, "pg_test_admin: cannot connect: %s", PQerrorMessage(c));
    }
    PQfinish(c);
    return rc;
}

/* A fresh schema: its name into schema[cap], and into url_out[cap] the
 * server URL whose connections use it. 0 or -1. */
static inline int pg_test_schema_new(char *schema, char *url_out, size_t cap, const char *url)
{
    static int serial;
    char sql[512];
    snprintf(schema, cap, "kevo_test_%d_%d", (int)getpid(), ++serial);
    snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema,
             schema);
    if (pg_test_admin(url, sql) < 0)
        return -1;
    snprintf(url_out, cap, "%s%coptions=-csearch_path%%3D%s", url, strchr(url, '?') ? '&' : '?',
             schema);
    return 0;
}

static inline void pg_test_schema_drop(const char *url, const char *schema)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", schema);
    pg_test_admin(url, sql);
}

#endif
