/*
 * cli/commands.h - the `kevo` subcommands. Each takes the arguments after
 * `kevo` (argv[0] is the subcommand name) and returns the process exit
 * status: 0 success, 1 a negative result the user asked about (e.g. a
 * kernel that is not correct), 2 bad usage or bad input, 3 infrastructure
 * failure. CLI code parses flags and prints; the logic lives in modules.
 */
#ifndef KEVO_CLI_COMMANDS_H
#define KEVO_CLI_COMMANDS_H

#include <stddef.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>

typedef struct kevo_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} kevo_command;

/* One per subcommand file (cmd_<name>.c). */
#define KEVO_EXIT_OK 0
#define KEVO_EXIT_NEGATIVE 1
#define KEVO_EXIT_USAGE 2
#define KEVO_EXIT_INFRA 3

/* kevo run's options into cfg (cmd_run.c), also for `kevo submit`: cmd
 * names the command in messages, help prints its --help. KEVO_EXIT_OK,
 * -1 after --help, else the exit status. Operands go to paths[]
 * (cfg->npaths counts them; paths has room for argc). */
struct kevo_run_config;
int kevo_cli_run_options(struct kevo_run_config *cfg, const char **paths, int argc, char **argv,
                         const char *cmd, void (*help)(FILE *f));
/* kevo run's help text (the run options section is what submit takes). */
void kevo_cli_run_options_help(FILE *f);

/* SIGINT and SIGTERM (stop.c): the first sets the returned flag (give it
 * to the agent as its stop), a second exits at once with 130. */
volatile sig_atomic_t *kevo_cli_stop_install(void);
/* Whether a status line is on the terminal (a second signal erases it). */
void kevo_cli_stop_status_line(bool shown);

/* The help of `kevo tasks` and its subcommands (cmd_tasks.c). */
void kevo_cli_tasks_usage(FILE *f);

/* `kevo tasks import ...` (cmd_tasks_import.c), dispatched by `kevo tasks`;
 * argv[0] is "tasks", argv[1] "import". */
int kevo_cmd_tasks_import(int argc, char **argv);
/* `kevo tasks link ...` (cmd_tasks_link.c), dispatched the same way. */
int kevo_cmd_tasks_link(int argc, char **argv);
int kevo_cmd_tasks_adapt(int argc, char **argv);
/* `kevo tasks new NAME --from FILE.c --function F ...` (cmd_tasks_new.c). */
int kevo_cmd_tasks_new(int argc, char **argv);
/* One torch task's C draft from the C task under c_root that translates
 * the same KernelBench problem, kept only when verified correct. 1 linked,
 * 0 not (line says why), negative when kevo could not tell (line says why). */
int kevo_cli_link_draft(const char *task_dir, const char *c_root, char *line, size_t cap);
/* Where link looks for C tasks by default: $KEVO_SUITES_DIR, else kevo's suites/c. */
const char *kevo_cli_default_suites(void);

#endif
