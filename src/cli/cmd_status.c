/*
 * cli/cmd_status.c - `kevo status --db URL [--run ID] [--format text|json]`:
 * the shared work of a store: per run, tasks queued / running / done /
 * failed, which worker holds which task and for how much longer, and the
 * rate attempts are recorded at. Reads the store; writes nothing.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/memory.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo status --db URL [--run ID] [--format text|json]\n"
            "\n"
            "Per run submitted to the store: its tasks queued, running, done and failed;\n"
            "which worker holds each running task and how long its lease has left; the\n"
            "attempts recorded and how many per minute over the last 10 minutes.\n"
            "\n"
            "options:\n"
            "  --db URL           the shared store (default kevo.db)\n"
            "  --run ID           only this run (default: every run with queued work)\n"
            "  --format FMT       text (default) or json\n");
}

typedef struct run_status {
    int64_t run_id;
    const char *backend;
    size_t n[5]; /* by kevo_work_state */
    int64_t attempts, recent;
    double recent_min; /* the window the recent attempts fell in */
} run_status;

/* The run's attempts: how many, and per minute over the last 10 minutes
 * (or since its first attempt when that is later). */
static int attempt_rate(run_status *rs, kevo_memory *mem, int64_t now)
{
    kevo_attempt_filter f = {.run_id = rs->run_id, .no_source = 1};
    kevo_attempt_list *list = NULL;
    int error = kevo_memory_attempt_list(&list, mem, &f);
    if (error < 0)
        return error;
    int64_t window = 10 * 60 * 1000, first = now;
    rs->attempts = (int64_t)list->n;
    for (size_t i = 0; i < list->n; i++) {
        int64_t t = list->attempts[i].created;
        if (t < first)
            first = t;
        rs->recent += t >= now - window;
    }
    int64_t span = now - first < window ? now - first : window;
    rs->recent_min = span > 0 ? (double)span / 60000.0 : 0;
    kevo_attempt_list_free(list);
    return 0;
}

int kevo_cmd_status(int argc, char **argv)
{
    const char *db = "kevo.db", *format = "text";
    int64_t only = 0;
    enum { OPT_DB = 256, OPT_RUN, OPT_FORMAT };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"db", required_argument, NULL, OPT_DB},
        {"run", required_argument, NULL, OPT_RUN},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    kevo_opts o;
    kevo_opts_init(&o, "kevo status", argc, argv, table, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return KEVO_EXIT_OK;
        case OPT_DB: db = o.arg; break;
        case OPT_FORMAT: format = o.arg; break;
        case OPT_RUN:
            if (kevo_opts_int64(&o, &only, 1, INT64_MAX) < 0)
                return KEVO_EXIT_USAGE;
            break;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (nops)
        return kevo_opts_usage(&o, "unexpected argument '%s'", ops[0]);
    bool json = !strcmp(format, "json");
    if (!json && strcmp(format, "text"))
        return kevo_opts_usage(&o, "--format must be text or json, not '%s'", format);
    kevo_memory *mem = NULL;
    kevo_work_list *work = NULL;
    run_status *runs = NULL;
    size_t nruns = 0;
    int rc = KEVO_EXIT_OK;
    cJSON *root = NULL;
    int error = kevo_memory_open_ex(&mem, db, KEVO_MEMORY_MUST_EXIST);
    if (error == 0)
        error = kevo_memory_work_list(&work, mem, only, 0);
    if (error < 0) {
        fprintf(stderr, "kevo status: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL || error == KEVO_ENOTFOUND ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    if (only && work->n == 0) {
        char *shown = NULL;
        kevo_conninfo_redact(&shown, db);
        fprintf(stderr, "kevo status: run %lld has no shared work in %s (runs of `kevo run` "
                        "are not queued: kevo report --run %lld)\n",
                (long long)only, shown ? shown : "the store", (long long)only);
        free(shown);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    runs = calloc(work->n + 1, sizeof(*runs));
    if (!runs) {
        rc = KEVO_EXIT_INFRA;
        goto done;
    }
    for (size_t i = 0; i < work->n; i++) {
        const kevo_work *w = &work->work[i];
        if (nruns == 0 || runs[nruns - 1].run_id != w->run_id)
            runs[nruns++] = (run_status){.run_id = w->run_id, .backend = w->backend};
        if (w->state >= 1 && w->state <= 4)
            runs[nruns - 1].n[w->state]++;
    }
    int64_t now = kevo_unix_ms();
    for (size_t r = 0; r < nruns; r++)
        if ((error = attempt_rate(&runs[r], mem, now)) < 0) {
            fprintf(stderr, "kevo status: %s\n", kevo_error_last());
            rc = KEVO_EXIT_INFRA;
            goto done;
        }
    if (json && !(root = cJSON_CreateArray())) {
        rc = KEVO_EXIT_INFRA;
        goto done;
    }
    if (!json && nruns == 0)
        printf("no shared work in this store (kevo submit queues some)\n");
    for (size_t r = 0; r < nruns; r++) {
        run_status *rs = &runs[r];
        size_t total = rs->n[1] + rs->n[2] + rs->n[3] + rs->n[4];
        double rate = rs->recent_min > 0 ? (double)rs->recent / rs->recent_min : 0;
        cJSON *jr = NULL, *jt = NULL;
        if (json) {
            jr = cJSON_CreateObject();
            cJSON_AddItemToArray(root, jr);
            cJSON_AddNumberToObject(jr, "run", (double)rs->run_id);
            cJSON_AddStringToObject(jr, "backend", rs->backend);
            cJSON_AddNumberToObject(jr, "tasks", (double)total);
            for (int s = 1; s <= 4; s++)
                cJSON_AddNumberToObject(jr, kevo_work_state_name((kevo_work_state)s),
                                        (double)rs->n[s]);
            cJSON_AddNumberToObject(jr, "attempts", (double)rs->attempts);
            cJSON_AddNumberToObject(jr, "attempts_per_minute", rate);
            jt = cJSON_AddArrayToObject(jr, "work");
        } else {
            printf("run %lld (backend %s): %zu tasks: %zu queued, %zu running, %zu done, %zu "
                   "failed; %lld attempts, %.1f per minute over the last %.1f min\n",
                   (long long)rs->run_id, rs->backend, total, rs->n[1], rs->n[2], rs->n[3],
                   rs->n[4], (long long)rs->attempts, rate, rs->recent_min);
        }
        for (size_t i = 0; i < work->n; i++) {
            const kevo_work *w = &work->work[i];
            if (w->run_id != rs->run_id)
                continue;
            double left = (double)(w->lease_until - now) / 1000.0;
            if (json) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddItemToArray(jt, e);
                cJSON_AddStringToObject(e, "task", w->task);
                cJSON_AddStringToObject(e, "state", kevo_work_state_name(w->state));
                if (w->worker)
                    cJSON_AddStringToObject(e, "worker", w->worker);
                if (w->state == KEVO_WORK_RUNNING)
                    cJSON_AddNumberToObject(e, "lease_left_s", left);
                cJSON_AddNumberToObject(e, "claims", (double)w->claims);
                if (w->error)
                    cJSON_AddStringToObject(e, "error", w->error);
            } else if (w->state == KEVO_WORK_RUNNING) {
                printf("  running  %-28s %s, lease %s%.0f s%s (claim %lld)\n", w->task,
                       w->worker ? w->worker : "?", left < 0 ? "expired " : "",
                       left < 0 ? -left : left, left < 0 ? " ago: the next claim takes it" : " left",
                       (long long)w->claims);
            } else if (w->state == KEVO_WORK_FAILED) {
                printf("  failed   %-28s %s\n", w->task, w->error ? w->error : "");
            }
        }
    }
    if (json) {
        char *text = cJSON_Print(root);
        if (!text) {
            rc = KEVO_EXIT_INFRA;
            goto done;
        }
        printf("%s\n", text);
        free(text);
    }
done:
    cJSON_Delete(root);
    free(runs);
    kevo_work_list_free(work);
    kevo_memory_free(mem);
    return rc;
}
