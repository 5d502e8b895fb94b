/*
 * cli/cmd_best.c - `kevo best --db PATH [--run ID] --out DIR
 * [--min-speedup X]`: per task of a run, its best correct kernel as a file
 * ready to compile, DIR/<task>.<ext>, with a comment block saying what it
 * is (task, prototype, backend, build line, speedup over which baseline,
 * run and attempt, verdict), and DIR/summary.csv. The kernel's text stays
 * byte for byte as kevo judged it; the block goes after its leading
 * `// kevo:` directive lines, which must stay first (docs/report.md "Take
 * the best kernels home").
 *
 * The choice of the best kernel is the report's
 * (kevo_report_best_kernels); this file only writes files. It never
 * writes the store.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/report.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct best_options {
    const char *db, *out;
    int64_t run_id;     /* 0 = the latest */
    double min_speedup; /* 0 = keep every correct kernel */
} best_options;

static void usage(FILE *f)
{
    fprintf(f, "usage: kevo best --out DIR [--db PATH] [--run ID] [--min-speedup X]\n"
               "\n"
               "Write each task's best correct kernel of a run as DIR/<task>.<ext> (c, cl, cu),\n"
               "ready to compile: a comment block names the task, its prototype, the build\n"
               "line, the speedup and its baseline, the run and the attempt; the kernel\n"
               "follows byte for byte. DIR/summary.csv lists what was written.\n"
               "\n"
               "  --out DIR          where the kernels go (created when missing)\n"
               "  --db PATH          the store (default kevo.db); only read\n"
               "  --run ID           the run (default: the latest)\n"
               "  --min-speedup X    skip kernels below X times the baseline\n"
               "\n"
               "exit status: 0 at least one kernel written, 1 none, 2 bad usage,\n"
               "3 the store cannot be opened or a file cannot be written\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kevo best: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see `kevo best --help`)\n");
    va_end(ap);
    return KEVO_EXIT_USAGE;
}

/* -1: go on; else the exit status. */
static int options_parse(best_options *o, int argc, char **argv)
{
    *o = (best_options){.db = "kevo.db"};
    enum { OPT_DB = 256, OPT_OUT, OPT_RUN, OPT_MIN_SPEEDUP };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"db", required_argument, NULL, OPT_DB},
        {"out", required_argument, NULL, OPT_OUT},
        {"run", required_argument, NULL, OPT_RUN},
        {"min-speedup", required_argument, NULL, OPT_MIN_SPEEDUP},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    kevo_opts_init(&op, "kevo best", argc, argv, table, "h");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        if (c == 'h') {
            usage(stdout);
            return KEVO_EXIT_OK;
        }
        if (!*op.arg)
            return usage_error("%s needs a value", op.flag);
        if (c == OPT_DB) {
            o->db = op.arg;
        } else if (c == OPT_OUT) {
            o->out = op.arg;
        } else if (c == OPT_RUN) {
            if (kevo_opts_int64(&op, &o->run_id, 1, INT64_MAX) < 0)
                return KEVO_EXIT_USAGE;
        } else if (kevo_opts_double(&op, &o->min_speedup, 0, HUGE_VAL) < 0) {
            return KEVO_EXIT_USAGE;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops > 0)
        return usage_error("unexpected argument '%s'", ops[0]);
    if (!o->out)
        return usage_error("--out DIR is required");
    return -1;
}

/* ---- the file ----------------------------------------------------------- */

/* A file name for task `name`: [A-Za-z0-9._-] kept, anything else '_', no
 * leading dot (a name from the store must not reach outside DIR). */
static void file_stem(char *out, size_t cap, const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < cap; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || (c == '.' && n > 0);
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, cap, "task");
}

/* Append s to a `//` comment line: control characters become spaces and
 * backslashes '/' (a trailing one would continue the comment onto the
 * kernel's next line). */
static void comment_text(kevo_buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char c = (char)*p;
        if (*p < 0x20 || *p == 0x7f)
            c = ' ';
        else if (c == '\\')
            c = '/';
        kevo_buf_printf(b, "%c", c);
    }
}

/* Whether line [s, end) is a directive kevo reads from the top of a
 * candidate: `//`, blanks, `kevo:` (the C/CUDA build hint, the OpenCL
 * launch/scratch/options lines). */
static bool directive_line(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (end - s < 2 || s[0] != '/' || s[1] != '/')
        return false;
    s += 2;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return end - s >= 5 && !strncmp(s, "kevo:", 5);
}

/* Length of the source's leading directive lines (with the blank lines
 * among them): they must stay first, so the header goes after them. */
static size_t directives_len(const char *source)
{
    size_t keep = 0;
    const char *p = source;
    while (*p) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *s = p;
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        if (s < end && !directive_line(p, end))
            break;
        if (s < end)
            keep = (size_t)(end - source) + (eol ? 1 : 0);
        p = eol ? eol + 1 : end;
    }
    return keep;
}

/* The build lines: the C backend's compile exactly as kevo runs it (its
 * one compile line, kevo_c_compile_flags, with the candidate's hint); for
 * another backend, the directives it reads from the top of the file. */
static void build_lines(kevo_buf *b, const kevo_backend *be, const char *source, const char *file)
{
    if (be == kevo_backend_find("c")) {
        char **hint = NULL;
        const char *argv[48];
        bool openmp = false;
        bool hint_ok = kevo_cflags_parse(&hint, source) == 0;
        size_t n = kevo_c_compile_flags(argv, 40, hint, &openmp);
        kevo_buf_puts(b, "// build:     ");
        for (size_t i = 0; i < n; i++)
            kevo_buf_printf(b, "%s%s", i ? " " : "", argv[i]);
        kevo_buf_puts(b, " -c ");
        comment_text(b, file);
        kevo_buf_printf(b,
                        "\n//             (proto.h: #include <stdint.h> and the prototype above;"
                        " link with %s)\n",
                        openmp ? "-fopenmp -lm" : "-lm");
        if (!hint_ok)
            kevo_buf_puts(b, "//             (the first-line build hint could not be read)\n");
        kevo_strv_free(hint);
        return;
    }
    kevo_buf_printf(b,
                    "// build:     as kevo's %s backend builds it (docs/backends/%s.md), "
                    "from these directives at the top of the file:\n",
                    be->name, be->name);
    size_t len = directives_len(source);
    const char *p = source, *stop = source + len;
    while (p < stop) {
        const char *eol = memchr(p, '\n', (size_t)(stop - p));
        const char *end = eol ? eol : stop;
        const char *k = strstr(p, "kevo:");
        if (k && k < end) {
            kevo_buf_puts(b, "//             ");
            const char *w = k + 5;
            while (w < end && (*w == ' ' || *w == '\t'))
                w++;
            char *line = strndup(w, (size_t)(end - w));
            comment_text(b, line ? line : "");
            free(line);
            kevo_buf_puts(b, "\n");
        }
        p = eol ? eol + 1 : stop;
    }
}

/* "void relu(...)" from the task's folder, or why there is none. */
static void prototype_line(kevo_buf *b, const char *suite_path, bool c_backend)
{
    kevo_task *task = NULL;
    char *proto = NULL;
    kevo_buf_puts(b, "// prototype: ");
    if (suite_path && kevo_task_load(&task, suite_path) == 0 &&
        kevo_task_prototype(&proto, task) == 0) {
        comment_text(b, proto);
        if (!c_backend)
            kevo_buf_puts(b, " (the task's C prototype: the kernel takes these parameters)");
    } else {
        kevo_buf_puts(b, "(the task's folder ");
        comment_text(b, suite_path ? suite_path : "is not recorded");
        if (suite_path)
            kevo_buf_puts(b, *suite_path == '/' ? " is not found)"
                                                : " is not found from here: the path is "
                                                  "relative to where the run started)");
        else
            kevo_buf_puts(b, ")");
    }
    kevo_buf_puts(b, "\n");
    free(proto);
    kevo_task_free(task);
    kevo_error_clear();
}

/* "quick" or "full": how the run timed (its configuration's quick_timing). */
static const char *timing_of(const kevo_run *run)
{
    cJSON *cfg = cJSON_Parse(run->config_json ? run->config_json : "");
    const cJSON *q = cJSON_GetObjectItem(cfg, "quick_timing");
    const char *t = !cJSON_IsBool(q)  ? "not recorded"
                    : cJSON_IsTrue(q) ? "quick (`kevo run --quick`: 0.3 s, 5 calls per side)"
                                      : "full (1 s per side)";
    cJSON_Delete(cfg);
    return t;
}

static const char *baseline_of(const kevo_attempt *a)
{
    return a->baseline && *a->baseline ? a->baseline : "c-reference";
}

static void header_write(kevo_buf *b, const kevo_best_kernels *bk, const kevo_best_kernel *t,
                         const kevo_backend *be, const char *file)
{
    const kevo_attempt *a = t->attempt;
    char when[40] = "?";
    time_t secs = (time_t)(a->created / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    kevo_buf_puts(b, "// ---- kevo best: the best correct kernel of task ");
    comment_text(b, t->task);
    kevo_buf_printf(b, " in run %lld ----\n// task:      ", (long long)bk->run_id);
    comment_text(b, t->task);
    kevo_buf_puts(b, "\n");
    prototype_line(b, t->suite_path, be == kevo_backend_find("c"));
    kevo_buf_printf(b, "// backend:   %s\n", be->name);
    build_lines(b, be, a->source, file);
    kevo_buf_printf(b, "// speedup:   %.3fx over ", a->speedup);
    comment_text(b, baseline_of(a));
    kevo_buf_printf(b, " (medians: candidate %.3f us, reference %.3f us)\n", a->candidate_us,
                    a->reference_us);
    kevo_buf_printf(b, "// timing:    %s\n", timing_of(bk->run));
    kevo_buf_puts(b, "// machine:   the machine of the run (not recorded)\n");
    kevo_buf_printf(b, "// run:       %lld (uid ", (long long)bk->run_id);
    comment_text(b, bk->run->uid);
    kevo_buf_printf(b, ")\n// attempt:   %lld (uid ", (long long)a->id);
    comment_text(b, a->uid);
    kevo_buf_printf(b, ", iteration %d, %s stage, generator ", a->iteration + 1,
                    kevo_stage_name(a->stage));
    comment_text(b, a->generator);
    kevo_buf_printf(b, ")\n// verdict:   %s (kevo's check of attempt %lld, %s)\n",
                    kevo_verdict_name(a->verdict), (long long)a->id, when);
    kevo_buf_puts(b, "// check:     kevo eval ");
    comment_text(b, t->suite_path ? t->suite_path : "TASK_DIR");
    kevo_buf_printf(b, " %s --backend %s\n", file, be->name);
    kevo_buf_puts(b, "// ---- the kernel follows, byte for byte as kevo judged it ----\n");
}

/* The exported file's text: directives, header, the rest of the source. */
static int kernel_text(kevo_buf *b, const kevo_best_kernels *bk, const kevo_best_kernel *t,
                       const kevo_backend *be, const char *file)
{
    const char *src = t->attempt->source;
    size_t keep = directives_len(src);
    kevo_buf_printf(b, "%.*s", (int)keep, src);
    if (keep && src[keep - 1] != '\n')
        kevo_buf_puts(b, "\n");
    header_write(b, bk, t, be, file);
    kevo_buf_puts(b, src + keep);
    return kevo_buf_error(b);
}

/* ---- summary.csv ---------------------------------------------------------- */

static void csv_field(kevo_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        kevo_buf_puts(b, s);
        return;
    }
    kevo_buf_puts(b, "\"");
    for (const char *p = s; *p; p++)
        kevo_buf_puts(b, *p == '"' ? "\"\"" : (char[2]){*p, 0});
    kevo_buf_puts(b, "\"");
}

static void csv_row(kevo_buf *csv, const kevo_best_kernels *bk, const kevo_best_kernel *t,
                    const kevo_backend *be, const char *file)
{
    const kevo_attempt *a = t->attempt;
    csv_field(csv, t->task);
    kevo_buf_printf(csv, ",%s,", be->name);
    csv_field(csv, file);
    kevo_buf_printf(csv, ",%.6g,", a->speedup);
    csv_field(csv, baseline_of(a));
    kevo_buf_printf(csv, ",%.6g,%.6g,%lld,%lld\n", a->candidate_us, a->reference_us,
                    (long long)a->id, (long long)bk->run_id);
}

/* ---- the command ---------------------------------------------------------- */

typedef struct export_state {
    const best_options *o;
    const kevo_best_kernels *bk;
    kevo_buf csv;
    char **names; /* file names written, to keep two tasks apart */
    size_t written;
} export_state;

static bool name_taken(const export_state *s, const char *name)
{
    for (size_t i = 0; i < s->written; i++)
        if (!strcmp(s->names[i], name))
            return true;
    return false;
}

/* One task: write its kernel, or say why not. Returns 0 or KEVO_EIO/ENOMEM. */
static int export_task(export_state *s, const kevo_best_kernel *t)
{
    const kevo_attempt *a = t->attempt;
    const kevo_backend *be = a ? kevo_backend_find(a->backend ? a->backend : "c") : NULL;
    char stem[200], file[240];
    int error = 0;
    if (!a || !a->source) {
        printf("%s: no correct kernel in run %lld, nothing written\n", t->task,
               (long long)s->bk->run_id);
        return 0;
    }
    if (!be) {
        printf("%s: backend '%s' of attempt %lld is not known here, nothing written\n", t->task,
               a->backend, (long long)a->id);
        return 0;
    }
    if (a->speedup < s->o->min_speedup) {
        printf("%s: best kernel %.3fx over %s is below --min-speedup %g, skipped\n", t->task,
               a->speedup, baseline_of(a), s->o->min_speedup);
        return 0;
    }
    file_stem(stem, sizeof(stem), t->task);
    snprintf(file, sizeof(file), "%s%s", stem, be->candidate_ext);
    if (name_taken(s, file))
        snprintf(file, sizeof(file), "%s-%lld%s", stem, (long long)a->id, be->candidate_ext);
    kevo_buf text = {0};
    char *path = kevo_path_join(s->o->out, file);
    char *name = kevo_strdup(file);
    if (!path || !name || (error = kernel_text(&text, s->bk, t, be, file)) < 0 ||
        (error = kevo_mkdirs(s->o->out, 0755)) < 0 ||
        (error = kevo_file_write(path, text.ptr, text.len)) < 0) {
        error = error < 0 ? error : kevo_error_set(KEVO_ENOMEM, "out of memory");
        free(name);
        goto done;
    }
    s->names[s->written++] = name;
    csv_row(&s->csv, s->bk, t, be, file);
    printf("%s: wrote %s (%.3fx over %s, attempt %lld)\n", t->task, path, a->speedup,
           baseline_of(a), (long long)a->id);
done:
    free(path);
    kevo_buf_free(&text);
    return error;
}

static int export_all(export_state *s)
{
    int error = 0;
    kevo_buf_puts(&s->csv, "task,backend,file,speedup,baseline,candidate_us,reference_us,"
                           "attempt_id,run_id\n");
    if (!(s->names = calloc(s->bk->ntasks + 1, sizeof(char *))))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t k = 0; k < s->bk->ntasks; k++)
        if ((error = export_task(s, &s->bk->per_task[k])) < 0)
            return error;
    if (s->written == 0)
        return 0;
    char *path = kevo_path_join(s->o->out, "summary.csv");
    if ((error = kevo_buf_error(&s->csv)) == 0)
        error = path ? kevo_file_write(path, s->csv.ptr, s->csv.len)
                     : kevo_error_set(KEVO_ENOMEM, "out of memory");
    free(path);
    return error;
}

/* The run's best kernels, or the exit status saying why not (with its line). */
static int best_load(kevo_best_kernels **out, const best_options *o)
{
    kevo_memory *mem = NULL;
    int error = kevo_memory_open_ex(&mem, o->db, KEVO_MEMORY_MUST_EXIST);
    if (error < 0) {
        fprintf(stderr, "kevo best: cannot open the store: %s\n", kevo_error_last());
        return KEVO_EXIT_INFRA;
    }
    error = kevo_report_best_kernels(out, mem, o->run_id);
    kevo_memory_free(mem);
    if (error == 0)
        return KEVO_EXIT_OK;
    fprintf(stderr, "kevo best: %s\n", kevo_error_last());
    if (error != KEVO_ENOTFOUND)
        return KEVO_EXIT_INFRA;
    /* an unknown --run is bad input; an empty store just has nothing */
    return o->run_id ? KEVO_EXIT_USAGE : KEVO_EXIT_NEGATIVE;
}

int kevo_cmd_best(int argc, char **argv)
{
    best_options o;
    int rc = options_parse(&o, argc, argv);
    if (rc >= 0)
        return rc;
    kevo_best_kernels *bk = NULL;
    if ((rc = best_load(&bk, &o)) != KEVO_EXIT_OK)
        return rc;
    export_state s = {.o = &o, .bk = bk};
    if (export_all(&s) < 0) {
        fprintf(stderr, "kevo best: %s\n", kevo_error_last());
        rc = KEVO_EXIT_INFRA;
    } else if (s.written == 0) {
        fprintf(stderr, "kevo best: no kernel written (run %lld)\n", (long long)bk->run_id);
        rc = KEVO_EXIT_NEGATIVE;
    } else {
        fprintf(stderr, "kevo best: wrote %zu of %zu tasks' kernels and %s/summary.csv\n",
                s.written, bk->ntasks, o.out);
    }
    for (size_t i = 0; i < s.written; i++)
        free(s.names[i]);
    free(s.names);
    kevo_buf_free(&s.csv);
    kevo_best_kernels_free(bk);
    return rc;
}
