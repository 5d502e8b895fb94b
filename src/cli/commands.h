/*
 * cli/commands.h - the `kevo` subcommands. Each takes the arguments after
 * `kevo` (argv[0] is the subcommand name) and returns the process exit
 * status: 0 success, 1 a negative result the user asked about (e.g. a
 * kernel that is not correct), 2 bad usage or bad input, 3 infrastructure
 * failure. CLI code parses flags and prints; the logic lives in modules.
 */
#ifndef KEVO_CLI_COMMANDS_H
#define KEVO_CLI_COMMANDS_H

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

/* `kevo tasks import ...` (cmd_tasks_import.c), dispatched by `kevo tasks`;
 * argv[0] is "tasks", argv[1] "import". */
int kevo_cmd_tasks_import(int argc, char **argv);

#endif
