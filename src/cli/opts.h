/*
 * cli/opts.h - how every `kevo` command reads its flags: getopt_long
 * underneath (`--flag value` and `--flag=value`, options and operands in
 * any order, `--` ends the options), one message format for bad usage
 * ("kevo run: unknown option '--iteratons'; did you mean --iterations?
 * (see `kevo run --help`)"), and number parsers that refuse what atof/atoi
 * would silently read as 0 or 1.
 *
 * Each command declares a `struct option` table (getopt.h) whose `val` is
 * what kevo_opts_next() returns for it; the table is also where the
 * closest-flag suggestion looks. It must not print help or know any
 * command's flags: the commands own those.
 */
#ifndef KEVO_CLI_OPTS_H
#define KEVO_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct kevo_opts {
    const char *cmd; /* "kevo run": the prefix of every message */
    int argc;
    char **argv; /* argv[0] is the command's name; getopt permutes the rest */
    const struct option *table;
    const char *shortopts; /* e.g. "ho:"; "" when there are none */
    const char *arg;       /* the current option's value (NULL for a switch) */
    const char *flag;      /* the current option as written, without "=value" */
} kevo_opts;

/* Start reading argv[1..argc) with `table` (ended by a zero entry).
 * Resets getopt's state: one kevo_opts at a time. */
void kevo_opts_init(kevo_opts *o, const char *cmd, int argc, char **argv,
                    const struct option *table, const char *shortopts);

/* The next option's `val` (o->arg its value), -1 when the options are
 * over (operands are then kevo_opts_operands()), or '?' after printing the
 * problem (unknown option with the closest known one, a value missing, a
 * value given to a switch) and the --help pointer to stderr: the caller
 * exits with KEVO_EXIT_USAGE. */
int kevo_opts_next(kevo_opts *o);

/* After kevo_opts_next() returned -1: the operands (non-option arguments)
 * in order, borrowed from argv. */
char **kevo_opts_operands(const kevo_opts *o, int *out_n);

/* Print "CMD: <message>\n(see `CMD --help`)" style bad usage to stderr;
 * returns KEVO_EXIT_USAGE so callers can `return kevo_opts_usage(...)`. */
int kevo_opts_usage(const kevo_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Numbers: the whole of o->arg must be one, within [min, max]; otherwise
 * the problem ("--jobs needs an integer from 1 to 64, got '2x'") is
 * printed and -1 returned. */
int kevo_opts_int(const kevo_opts *o, int *out, long min, long max);
int kevo_opts_int64(const kevo_opts *o, int64_t *out, int64_t min, int64_t max);
int kevo_opts_double(const kevo_opts *o, double *out, double min, double max);

/* The closest name in `names` (NULL-terminated) to `given` by edit
 * distance, or NULL when none is close enough to be a likely typo.
 * Exposed for subcommand names ("kevo tasks chek"). */
const char *kevo_opts_closest(const char *given, const char *const *names);

#endif
