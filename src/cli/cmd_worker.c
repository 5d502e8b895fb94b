/*
 * cli/cmd_worker.c - `kevo worker --db URL [--backend B]... [--jobs N]
 * [--until-idle] [--lease S]`: claim the shared store's queued tasks and
 * work them. Parses flags, installs the Ctrl-C handler, shows progress;
 * the claiming and leasing live in src/agent/shared.c.
 */
#include "commands.h"
#include "opts.h"
#include "progress.h"
#include "kevo/agent.h"
#include "kevo/sandbox.h"
#include "kevo/util.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo worker --db URL [--backend NAME]... [--jobs N] [--until-idle]\n"
            "                   [--lease S] [--quiet]\n"
            "\n"
            "Claim tasks that `kevo submit` queued in the shared store and work them: the\n"
            "run's draft -> refine loop with the shared memory, every attempt recorded.\n"
            "A task is held under a lease renewed while working; a worker that dies loses\n"
            "at most its attempt in flight: when the lease runs out another worker claims\n"
            "the task and continues after its last recorded attempt. Latency measurements\n"
            "of all kevo processes on a machine take turns (one timing slot per machine).\n"
            "\n"
            "options:\n"
            "  --db URL           the shared store (postgresql://user@host/db, or a SQLite\n"
            "                     file shared by workers on this machine)\n"
            "  --backend NAME     claim only tasks of this backend (repeatable; default\n"
            "                     every backend this machine can run)\n"
            "  --jobs N           tasks worked at once (default 1; timing still takes turns)\n"
            "  --until-idle       exit once no task of its backends is queued or running\n"
            "                     (default: wait for new work until stopped)\n"
            "  --lease S          lease length in seconds (default 60, renewed every S/4);\n"
            "                     a dead worker's task waits at most this long\n"
            "  --poll S           seconds between claims when there is nothing (default 2)\n"
            "  --quiet            no progress lines\n"
            "Ctrl-C stops after the attempts in flight and hands their tasks back.\n");
}

static void line_out(void *ctx, const char *line)
{
    kevo_progress *p = ctx;
    if (p)
        kevo_progress_line(p, false, line);
}

int kevo_cmd_worker(int argc, char **argv)
{
    kevo_worker_config wc;
    kevo_worker_config_init(&wc);
    enum { OPT_DB = 256, OPT_BACKEND, OPT_JOBS, OPT_UNTIL_IDLE, OPT_LEASE, OPT_POLL, OPT_QUIET };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"db", required_argument, NULL, OPT_DB},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"until-idle", no_argument, NULL, OPT_UNTIL_IDLE},
        {"lease", required_argument, NULL, OPT_LEASE},
        {"poll", required_argument, NULL, OPT_POLL},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {NULL, 0, NULL, 0},
    };
    const char *backends[16];
    size_t nb = 0;
    kevo_opts o;
    kevo_opts_init(&o, "kevo worker", argc, argv, table, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return KEVO_EXIT_OK;
        case OPT_DB: wc.db_path = o.arg; break;
        case OPT_BACKEND:
            if (nb == 16)
                return kevo_opts_usage(&o, "at most 16 --backend flags");
            backends[nb++] = o.arg;
            break;
        case OPT_JOBS:
            if (kevo_opts_int(&o, &wc.jobs, 1, 64) < 0)
                return KEVO_EXIT_USAGE;
            break;
        case OPT_UNTIL_IDLE: wc.until_idle = true; break;
        case OPT_LEASE:
            if (kevo_opts_double(&o, &wc.lease_s, 1, 86400) < 0)
                return KEVO_EXIT_USAGE;
            break;
        case OPT_POLL:
            if (kevo_opts_double(&o, &wc.poll_s, 0.1, 3600) < 0)
                return KEVO_EXIT_USAGE;
            break;
        case OPT_QUIET: wc.quiet = true; break;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (nops)
        return kevo_opts_usage(&o, "unexpected argument '%s' (tasks come from the store: "
                                   "kevo submit queues them)", ops[0]);
    wc.backends = nb ? backends : NULL;
    wc.nbackends = nb;
    char *label = NULL;
    if (kevo_conninfo_redact(&label, wc.db_path) < 0) {
        fprintf(stderr, "kevo worker: %s\n", kevo_error_last());
        return KEVO_EXIT_INFRA;
    }
    wc.db_label = label;
    volatile sig_atomic_t *stop_requested = kevo_cli_stop_install();
    wc.stop = stop_requested;
    int rc = KEVO_EXIT_OK;
    int scratch_error = kevo_sandbox_private_scratch();
    if (scratch_error < 0) {
        fprintf(stderr, "kevo worker: %s\n", kevo_error_last());
        free(label);
        return scratch_error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
    }
    kevo_progress *progress = NULL;
    kevo_progress_options po = {.label = "kevo worker", .quiet = wc.quiet, .stop = stop_requested};
    if (kevo_progress_new(&progress, &po) == 0) {
        kevo_cli_stop_status_line(kevo_progress_mode_of(progress) == KEVO_PROGRESS_LIVE);
        wc.observer = kevo_progress_observer(progress);
        wc.on_line = wc.quiet ? NULL : line_out;
        wc.ctx = progress;
    }
    kevo_worker_stats stats;
    int error = kevo_agent_worker(&stats, &wc);
    kevo_progress_free(progress);
    if (error == KEVO_EINTR) {
        fprintf(stderr, "kevo worker: stopped; its tasks were handed back\n");
        rc = 130;
    } else if (error < 0) {
        fprintf(stderr, "kevo worker: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL || error == KEVO_ENOTFOUND ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
    } else if (!wc.quiet) {
        printf("worker finished: %lld tasks done, %lld failed, %lld leases lost; no work left "
               "in %s\n", (long long)stats.tasks_done, (long long)stats.tasks_failed,
               (long long)stats.leases_lost, label);
    }
    free(label);
    return rc;
}
