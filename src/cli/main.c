/*
 * cli/main.c - the `kevo` entry point: finds the subcommand and runs it.
 * To add a subcommand: write cmd_<name>.c with `int kevo_cmd_<name>(int,
 * char **)`, declare it below and add one line to `commands`.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/util.h"

#include <stdio.h>
#include <string.h>

int kevo_cmd_eval(int argc, char **argv);
int kevo_cmd_tasks(int argc, char **argv);
int kevo_cmd_run(int argc, char **argv);
int kevo_cmd_report(int argc, char **argv);
int kevo_cmd_memory(int argc, char **argv);
int kevo_cmd_calibrate(int argc, char **argv);
int kevo_cmd_best(int argc, char **argv);
int kevo_cmd_submit(int argc, char **argv);
int kevo_cmd_worker(int argc, char **argv);
int kevo_cmd_status(int argc, char **argv);

static const kevo_command commands[] = {
    {"eval", "judge one candidate kernel against a task (four gates)", kevo_cmd_eval},
    {"tasks", "list and check the tasks of a suite", kevo_cmd_tasks},
    {"run", "optimise a suite: draft, refine, verify, remember", kevo_cmd_run},
    {"report", "what a run achieved (text, JSON, CSV)", kevo_cmd_report},
    {"best", "write each task's best kernel of a run, ready to compile", kevo_cmd_best},
    {"submit", "queue a run's tasks in a shared store for workers", kevo_cmd_submit},
    {"worker", "claim and work queued tasks (many processes, many machines)", kevo_cmd_worker},
    {"status", "the shared work: queued, running, done, who holds what", kevo_cmd_status},
    {"memory", "inspect, export, import and filter the experience memory", kevo_cmd_memory},
    {"calibrate", "measure this machine's bandwidth and FMA peaks (roofline)", kevo_cmd_calibrate},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: kevo <command> [options]\n\ncommands:\n");
    for (const kevo_command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\n`kevo <command> --help` explains each command.\n");
    fprintf(f, "\noptions:\n"
               "  --version          print kevo's version\n"
               "  --data-dir         print the data directory in use (harness/, prompts/,\n"
               "                     suites/): $KEVO_DATA_DIR, else PREFIX/share/kevo next to\n"
               "                     the installed kevo (docs/install.md)\n");
}

/* Every command but those that only read or write the store builds or reads
 * tasks and needs the data directory: it stops at once, with the sentence
 * saying where kevo looked, when there is none (its --help still works). */
static int data_dir_check(int argc, char **argv)
{
    static const char *const store_only[] = {"report", "best", "memory", "status", NULL};
    bool needed = true;
    for (size_t i = 0; store_only[i]; i++)
        needed = needed && strcmp(argv[1], store_only[i]) != 0;
    for (int i = 2; needed && i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            needed = false;
    if (!needed || kevo_data_dir())
        return KEVO_EXIT_OK;
    fprintf(stderr, "kevo %s: %s\n", argv[1], kevo_error_last());
    return KEVO_EXIT_INFRA;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? KEVO_EXIT_USAGE : KEVO_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("kevo %s\n", KEVO_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--data-dir")) {
        const char *dir = kevo_data_dir();
        if (!dir) {
            fprintf(stderr, "kevo: %s\n", kevo_error_last());
            return KEVO_EXIT_INFRA;
        }
        printf("%s\n", dir);
        return KEVO_EXIT_OK;
    }
    for (const kevo_command *c = commands; c->name; c++)
        if (!strcmp(c->name, argv[1])) {
            int status = data_dir_check(argc, argv);
            return status ? status : c->run(argc - 1, argv + 1);
        }
    const char *names[16];
    size_t n = 0;
    for (const kevo_command *c = commands; c->name && n + 1 < 16; c++)
        names[n++] = c->name;
    names[n] = NULL;
    const char *near = kevo_opts_closest(argv[1], names);
    if (near)
        fprintf(stderr, "kevo: unknown command '%s'; did you mean %s? (see `kevo --help`)\n",
                argv[1], near);
    else
        fprintf(stderr, "kevo: unknown command '%s' (see `kevo --help`)\n", argv[1]);
    return KEVO_EXIT_USAGE;
}
