/*
 * cli/cmd_submit.c - `kevo submit SUITE_OR_TASK... --db URL [run options]`:
 * a run whose tasks wait in the shared store for `kevo worker`s. Parses
 * flags and prints; the queueing lives in src/agent/shared.c.
 */
#include "commands.h"
#include "kevo/agent.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo submit SUITE_OR_TASK_DIR... --db URL [run options]\n"
            "\n"
            "Create a run and queue its tasks (each with its folder's files) in the store\n"
            "for `kevo worker` processes on any machine that reaches it; prints the run id.\n"
            "Takes the options of `kevo run` (generator, backend, iterations, the method's\n"
            "values...), stored with the run; every worker runs the tasks with them.\n"
            "`kevo status --db URL --run ID` follows it; `kevo report` reports it.\n"
            "\n"
            "options:\n"
            "  --db URL           the shared store: postgresql://user@host/db (or a SQLite\n"
            "                     file for workers on this machine); the password comes\n"
            "                     from ~/.pgpass or PGPASSWORD, never the command line\n"
            "  --backend NAME     the backend every task is run on (workers claim only\n"
            "                     the backends they can run)\n"
            "  --iterations T     attempts per task (default 30)\n"
            "  --quiet            print only the run id\n"
            "  (every other `kevo run` option: kevo run --help)\n");
}

int kevo_cmd_submit(int argc, char **argv)
{
    kevo_run_config cfg;
    kevo_run_config_init(&cfg);
    char *label = NULL;
    const char **paths = calloc((size_t)argc + 1, sizeof(char *));
    if (!paths)
        return KEVO_EXIT_INFRA;
    int rc = kevo_cli_run_options(&cfg, paths, argc, argv, "kevo submit", usage);
    cfg.paths = paths;
    if (rc != KEVO_EXIT_OK) {
        rc = rc < 0 ? KEVO_EXIT_OK : rc;
        goto done;
    }
    if (cfg.resume_run) {
        fprintf(stderr, "kevo submit: --resume is not for submit: a worker continues a task "
                        "from its last recorded attempt by itself (see `kevo submit --help`)\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (cfg.npaths == 0) {
        fprintf(stderr, "kevo submit: which suites or task folders? e.g. suites/c/level1 (see "
                        "`kevo submit --help`)\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    int64_t run_id = 0;
    size_t n = 0;
    int error = kevo_agent_submit(&run_id, &n, &cfg);
    if (error < 0) {
        fprintf(stderr, "kevo submit: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL || error == KEVO_ENOTFOUND || error == KEVO_EEXISTS
                 ? KEVO_EXIT_USAGE
                 : KEVO_EXIT_INFRA;
        goto done;
    }
    if (kevo_conninfo_redact(&label, cfg.db_path) < 0) {
        fprintf(stderr, "kevo submit: %s\n", kevo_error_last());
        rc = KEVO_EXIT_INFRA;
        goto done;
    }
    if (cfg.quiet) {
        printf("%lld\n", (long long)run_id);
    } else {
        printf("run %lld: %zu tasks queued (backend %s, %d iterations each) in %s\n",
               (long long)run_id, n, cfg.backend, cfg.iterations, label);
        printf("  start workers: kevo worker --db '%s'\n"
               "  follow it:     kevo status --db '%s' --run %lld\n",
               label, label, (long long)run_id);
    }
done:
    free(label);
    free(paths);
    return rc;
}
