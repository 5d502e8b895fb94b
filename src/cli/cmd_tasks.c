/*
 * cli/cmd_tasks.c - `kevo tasks list DIR...` and `kevo tasks check DIR...`:
 * list a suite and validate every task in it (task.json valid, reference
 * builds and runs within its limits on every size set and seed, outputs
 * not near-constant, no NaN/Inf in true outputs). `kevo tasks import` is
 * cmd_tasks_import.c, `kevo tasks new` cmd_tasks_new.c.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "kevo/verify.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int collect(char ***dirs, size_t *n, char **paths, int npaths)
{
    *dirs = NULL;
    *n = 0;
    for (int i = 0; i < npaths; i++) {
        char **found = NULL;
        size_t k = 0;
        if (kevo_task_find(&found, &k, paths[i]) < 0) {
            fprintf(stderr, "kevo tasks: %s\n", kevo_error_last());
            kevo_task_dirs_free(*dirs, *n);
            return -1;
        }
        if (k == 0)
            fprintf(stderr, "kevo tasks: %s: no task.json found under it\n", paths[i]);
        char **merged = realloc(*dirs, (*n + k + 1) * sizeof(char *));
        if (!merged)
            return -1;
        *dirs = merged;
        memcpy(*dirs + *n, found, k * sizeof(char *));
        *n += k;
        free(found);
    }
    return 0;
}

static int list(int argc, char **argv)
{
    static const struct option table[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    kevo_opts o;
    kevo_opts_init(&o, "kevo tasks list", argc - 1, argv + 1, table, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        kevo_cli_tasks_usage(stdout);
        return KEVO_EXIT_OK;
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (nops == 0)
        return kevo_opts_usage(&o, "which suites or task folders? e.g. suites/c/level1");
    char **dirs;
    size_t n;
    if (collect(&dirs, &n, ops, nops) < 0)
        return KEVO_EXIT_USAGE;
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        kevo_task *t = NULL;
        if (kevo_task_load(&t, dirs[i]) < 0 || kevo_backend_check_task(t) < 0) {
            printf("%-36s INVALID: %s\n", dirs[i], kevo_error_last());
            kevo_task_free(t);
            bad++;
            continue;
        }
        printf("%-36s L%d %-11s %s\n", t->name, t->level, t->category, t->description);
        kevo_task_free(t);
    }
    printf("%zu tasks%s\n", n, bad ? " (some invalid)" : "");
    kevo_task_dirs_free(dirs, n);
    return bad ? KEVO_EXIT_NEGATIVE : KEVO_EXIT_OK;
}

typedef struct {
    char **dirs;
    size_t n;
    bool timing;
    pthread_mutex_t lock;
    size_t next, done;
    int failed;
} check_shared;

static void check_one(check_shared *cs, size_t i)
{
    kevo_task *t = NULL;
    kevo_evaluator *ev = NULL;
    kevo_reference_report rep = {0};
    bool ok = true;
    kevo_buf why = {0};
    kevo_eval_options o;
    kevo_eval_options_default(&o);
    if (kevo_task_load(&t, cs->dirs[i]) < 0) {
        ok = false;
        kevo_buf_puts(&why, kevo_error_last());
    } else if (kevo_evaluator_new(&ev, t, &o) < 0) {
        ok = false;
        kevo_buf_puts(&why, kevo_error_last());
    } else {
        kevo_evaluator_reference_report(&rep, ev);
        if (rep.problems.len) {
            ok = false;
            kevo_buf_puts(&why, rep.problems.ptr);
        }
        if (cs->timing && (rep.timed_ms < 5 || rep.timed_ms > 200)) {
            ok = false;
            kevo_buf_printf(&why, "timed reference call takes %.1f ms, outside 5..200 ms",
                            rep.timed_ms);
        }
    }
    while (why.len && why.ptr[why.len - 1] == '\n')
        why.ptr[--why.len] = '\0';
    pthread_mutex_lock(&cs->lock);
    cs->done++;
    printf("[%3zu/%zu] %-4s %-40s", cs->done, cs->n, ok ? "ok" : "FAIL", cs->dirs[i]);
    if (ev)
        printf(" ref %7.1f ms", rep.timed_ms);
    if (!ok)
        printf("\n          %s", why.ptr);
    printf("\n");
    fflush(stdout);
    cs->failed += !ok;
    pthread_mutex_unlock(&cs->lock);
    kevo_buf_free(&why);
    kevo_buf_free(&rep.problems);
    kevo_evaluator_free(ev);
    kevo_task_free(t);
}

static void *check_worker(void *arg)
{
    check_shared *cs = arg;
    for (;;) {
        pthread_mutex_lock(&cs->lock);
        size_t i = cs->next++;
        pthread_mutex_unlock(&cs->lock);
        if (i >= cs->n)
            return NULL;
        check_one(cs, i);
    }
}

static int check(int argc, char **argv)
{
    bool timing = false;
    int jobs = 1;
    enum { OPT_TIMING = 256, OPT_JOBS };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"timing", no_argument, NULL, OPT_TIMING},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {NULL, 0, NULL, 0},
    };
    kevo_opts o;
    kevo_opts_init(&o, "kevo tasks check", argc - 1, argv + 1, table, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        if (c == 'h') {
            kevo_cli_tasks_usage(stdout);
            return KEVO_EXIT_OK;
        }
        if (c == OPT_TIMING)
            timing = true;
        else if (c == OPT_JOBS) {
            char *end;
            long j = strtol(o.arg, &end, 10);
            if (end == o.arg || *end || j < 1 || j > 64)
                return kevo_opts_usage(&o, "--jobs takes 1..64, got '%s'", o.arg);
            jobs = (int)j;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    if (nops == 0)
        return kevo_opts_usage(&o, "which suites or task folders? e.g. suites/c/level1");
    check_shared cs = {.timing = timing};
    if (collect(&cs.dirs, &cs.n, ops, nops) < 0)
        return KEVO_EXIT_USAGE;
    if (cs.n == 0) {
        kevo_task_dirs_free(cs.dirs, cs.n);
        return KEVO_EXIT_USAGE;
    }
    int scratch_error = kevo_sandbox_private_scratch();
    if (scratch_error < 0) {
        fprintf(stderr, "kevo tasks check: %s\n", kevo_error_last());
        kevo_task_dirs_free(cs.dirs, cs.n);
        return scratch_error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
    }
    double start = kevo_now_s();
    pthread_mutex_init(&cs.lock, NULL);
    pthread_t th[64];
    for (int j = 1; j < jobs; j++)
        pthread_create(&th[j], NULL, check_worker, &cs);
    check_worker(&cs);
    for (int j = 1; j < jobs; j++)
        pthread_join(th[j], NULL);
    pthread_mutex_destroy(&cs.lock);
    printf("tasks check: %zu passed, %d failed (%.0f s)\n", cs.n - (size_t)cs.failed, cs.failed,
           kevo_now_s() - start);
    kevo_task_dirs_free(cs.dirs, cs.n);
    return cs.failed ? KEVO_EXIT_NEGATIVE : KEVO_EXIT_OK;
}

int kevo_cmd_tasks(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        kevo_cli_tasks_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? KEVO_EXIT_USAGE : KEVO_EXIT_OK;
    }
    if (!strcmp(argv[1], "list"))
        return list(argc, argv);
    if (!strcmp(argv[1], "check"))
        return check(argc, argv);
    if (!strcmp(argv[1], "import"))
        return kevo_cmd_tasks_import(argc, argv);
    if (!strcmp(argv[1], "link"))
        return kevo_cmd_tasks_link(argc, argv);
    if (!strcmp(argv[1], "adapt"))
        return kevo_cmd_tasks_adapt(argc, argv);
    if (!strcmp(argv[1], "new"))
        return kevo_cmd_tasks_new(argc, argv);
    static const char *const subs[] = {"list", "check", "import", "link", "adapt", "new",
                                       NULL};
    const char *near = kevo_opts_closest(argv[1], subs);
    if (near)
        fprintf(stderr, "kevo tasks: unknown subcommand '%s'; did you mean %s? (see `kevo tasks "
                        "--help`)\n", argv[1], near);
    else
        fprintf(stderr, "kevo tasks: unknown subcommand '%s' (list, check, import, link, adapt, "
                        "new; see `kevo tasks --help`)\n", argv[1]);
    return KEVO_EXIT_USAGE;
}
