/*
 * cli/opts.c - flag reading for every command (see opts.h): getopt_long
 * with its own messages, the closest-flag suggestion, strict numbers.
 * It knows no command's flags and prints no help.
 */
#include "opts.h"

#include "commands.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kevo_opts_init(kevo_opts *o, const char *cmd, int argc, char **argv,
                    const struct option *table, const char *shortopts)
{
    memset(o, 0, sizeof(*o));
    o->cmd = cmd;
    o->argc = argc;
    o->argv = argv;
    o->table = table;
    o->shortopts = shortopts ? shortopts : "";
    optind = 0; /* GNU: 0 re-initialises getopt completely */
    opterr = 0;
}

int kevo_opts_usage(const kevo_opts *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", o->cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see `%s --help`)\n", o->cmd);
    return KEVO_EXIT_USAGE;
}

/* Edit distance with adjacent transpositions (optimal string alignment:
 * "rnu" is one edit from "run"); names are short. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *kevo_opts_closest(const char *given, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t k = 0; names[k]; k++) {
        size_t d = distance(given, names[k]);
        if (d < best_d) {
            best_d = d;
            best = names[k];
        }
    }
    /* a typo: a third of the word at most (and at least one edit allowed) */
    size_t len = strlen(given);
    size_t allowed = len / 3 > 1 ? len / 3 : 1;
    return best && best_d <= allowed ? best : NULL;
}

static const char *closest_option(const kevo_opts *o, const char *name)
{
    const char *names[128];
    size_t n = 0;
    for (const struct option *t = o->table; t->name && n + 1 < 128; t++)
        names[n++] = t->name;
    names[n] = NULL;
    return kevo_opts_closest(name, names);
}

static const struct option *find_exact(const kevo_opts *o, const char *name, size_t len)
{
    for (const struct option *t = o->table; t->name; t++)
        if (strlen(t->name) == len && !strncmp(t->name, name, len))
            return t;
    return NULL;
}

/* The flag just read, as the user wrote it (without "=value"). */
static void note_flag(kevo_opts *o, int c, int longindex)
{
    static char buf[80];
    if (longindex >= 0)
        snprintf(buf, sizeof(buf), "--%s", o->table[longindex].name);
    else
        snprintf(buf, sizeof(buf), "-%c", c);
    o->flag = buf;
}

static int problem(kevo_opts *o, int c)
{
    const char *bad = optind - 1 < o->argc && optind > 0 ? o->argv[optind - 1] : "";
    if (c == ':') {
        if (!strncmp(bad, "--", 2))
            return kevo_opts_usage(o, "%s needs a value", bad), '?';
        return kevo_opts_usage(o, "-%c needs a value", optopt), '?';
    }
    if (strncmp(bad, "--", 2)) { /* a short option */
        return kevo_opts_usage(o, "unknown option '-%c'", optopt ? optopt : '?'), '?';
    }
    const char *name = bad + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct option *exact = find_exact(o, name, len);
    if (exact && eq && exact->has_arg == no_argument)
        return kevo_opts_usage(o, "--%s takes no value (got '%s')", exact->name, eq + 1), '?';
    char word[80];
    snprintf(word, sizeof(word), "%.*s", (int)(len < 70 ? len : 70), name);
    size_t prefixed = 0;
    for (const struct option *t = o->table; t->name; t++)
        prefixed += !strncmp(t->name, word, strlen(word));
    if (prefixed > 1 && *word)
        return kevo_opts_usage(o, "option '--%s' is ambiguous (it begins %zu options)", word,
                               prefixed),
               '?';
    const char *near = closest_option(o, word);
    if (near)
        return kevo_opts_usage(o, "unknown option '--%s'; did you mean --%s?", word, near), '?';
    return kevo_opts_usage(o, "unknown option '--%s'", word), '?';
}

int kevo_opts_next(kevo_opts *o)
{
    /* ':' first: a missing value is told apart from an unknown option */
    char shortopts[64];
    snprintf(shortopts, sizeof(shortopts), ":%s", o->shortopts);
    int longindex = -1;
    int c = getopt_long(o->argc, o->argv, shortopts, o->table, &longindex);
    o->arg = optarg;
    if (c == -1)
        return -1;
    if (c == '?' || c == ':')
        return problem(o, c);
    note_flag(o, c, longindex);
    return c;
}

char **kevo_opts_operands(const kevo_opts *o, int *out_n)
{
    int first = optind > 0 ? optind : 1;
    *out_n = first < o->argc ? o->argc - first : 0;
    return o->argv + first;
}

int kevo_opts_int64(const kevo_opts *o, int64_t *out, int64_t min, int64_t max)
{
    const char *v = o->arg ? o->arg : "";
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno == ERANGE || x < min || x > max) {
        fprintf(stderr, "%s: %s needs an integer from %lld to %lld, got '%s' (see `%s --help`)\n",
                o->cmd, o->flag ? o->flag : "the option", (long long)min, (long long)max, v,
                o->cmd);
        return -1;
    }
    *out = (int64_t)x;
    return 0;
}

int kevo_opts_int(const kevo_opts *o, int *out, long min, long max)
{
    int64_t x = 0;
    if (kevo_opts_int64(o, &x, min, max) < 0)
        return -1;
    *out = (int)x;
    return 0;
}

int kevo_opts_double(const kevo_opts *o, double *out, double min, double max)
{
    const char *v = o->arg ? o->arg : "";
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno == ERANGE || !isfinite(x) || x < min || x > max) {
        char range[96] = "";
        if (min > -1e300 || max < 1e300)
            snprintf(range, sizeof(range), " from %g to %g", min, max);
        fprintf(stderr, "%s: %s needs a number%s, got '%s' (see `%s --help`)\n", o->cmd,
                o->flag ? o->flag : "the option", range, v, o->cmd);
        return -1;
    }
    *out = x;
    return 0;
}
