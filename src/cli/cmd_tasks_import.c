/*
 * cli/cmd_tasks_import.c - `kevo tasks import kernelbench|torch PATH...
 * --out DIR`: PyTorch problem files (KernelBench's form) become torch
 * tasks (docs/torch-tasks.md, "Import").
 *
 * kevo copies the problem files and the importer (harness/torch_import.py,
 * harness/torch_problem.py) into a fresh work folder and runs the importer
 * once, sandboxed as an untrusted child (its own uid, no network, only the
 * work folder and the torch venv readable), reading one JSON line per
 * problem from its fd 4 as it goes. A crash or a hang in one problem
 * costs that problem only: the importer is started again on the rest.
 * Each task.json is then read (a plain file, never through a link), put
 * next to kevo's own copy of the problem file (reference.py), validated
 * with the task parser, and copied to DIR/levelN/<task>/; an existing
 * folder is never overwritten.
 *
 * Must not: trust anything the importer writes beyond one bounded
 * task.json per problem, or interpret torch itself.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_LINE_TIMEOUT_S 420.0 /* one problem's result (the importer's own limit is 210 s) */
#define IMPORT_MEM (20ULL << 30)     /* torch maps ~3 GB; real tensors are capped at 2 GB */
#define TASK_JSON_MAX (1 << 20)

typedef struct {
    char *path;  /* the problem file as given */
    char *label; /* "level1/19_ReLU.py" (kernelbench) or "model.py" (torch) */
    char *copy;  /* its copy in the work folder, relative to it */
    int level;
    bool done;
} problem;

typedef struct {
    bool kernelbench;
    const char *out_dir;
    const char *scale;
    double tolerance;
    bool tolerance_given;
    int level;
    problem *p;
    size_t n;
    size_t imported, skipped, done;
    kevo_buf taken; /* task names so far, comma-separated */
    char **dests;   /* the task folders imported, for linking drafts */
    size_t ndests;
    bool no_link;
    const char *link_from;
} import_state;

static void usage_hint(const char *msg)
{
    fprintf(stderr, "kevo tasks import: %s (kevo tasks --help)\n", msg);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The N of a folder named levelN, else 0. */
static int level_of_folder(const char *folder)
{
    if (strncmp(folder, "level", 5) || !isdigit((unsigned char)folder[5]))
        return 0;
    char *end;
    long v = strtol(folder + 5, &end, 10);
    return *end || v < 1 || v > 3 ? 0 : (int)v;
}

/* The name of the folder holding path ("" when none). */
static void parent_name(char *out, size_t cap, const char *path)
{
    char *real = realpath(path, NULL);
    const char *p = real ? real : path;
    const char *slash = strrchr(p, '/');
    out[0] = '\0';
    if (slash && slash > p) {
        const char *start = slash - 1;
        while (start > p && *start != '/')
            start--;
        if (*start == '/')
            start++;
        snprintf(out, cap, "%.*s", (int)(slash - start), start);
    }
    free(real);
}

static int add_problem(import_state *st, const char *path, const char *folder)
{
    problem *grown = realloc(st->p, (st->n + 1) * sizeof(problem));
    if (!grown)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    st->p = grown;
    problem *p = &st->p[st->n];
    memset(p, 0, sizeof(*p));
    int level = st->kernelbench ? level_of_folder(folder) : 0;
    p->level = level ? level : st->level;
    kevo_buf label = {0}, copy = {0};
    if (st->kernelbench)
        kevo_buf_printf(&label, "level%d/%s", p->level, base_name(path));
    else
        kevo_buf_puts(&label, base_name(path));
    kevo_buf_printf(&copy, "in/%03zu_%s", st->n, base_name(path));
    p->path = strdup(path);
    p->label = kevo_buf_detach(&label);
    p->copy = kevo_buf_detach(&copy);
    st->n++;
    if (!p->path || !p->label || !p->copy)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    return 0;
}

/* A PATH: a .py file, or a folder whose *.py files (sorted) are taken. */
static int collect_path(import_state *st, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) < 0)
        return kevo_error_set(KEVO_ENOTFOUND, "%s: %s", path, strerror(errno));
    char folder[256];
    if (!S_ISDIR(sb.st_mode)) {
        parent_name(folder, sizeof(folder), path);
        return add_problem(st, path, folder);
    }
    char *real = realpath(path, NULL);
    snprintf(folder, sizeof(folder), "%s", base_name(real ? real : path));
    free(real);
    DIR *d = opendir(path);
    if (!d)
        return kevo_error_set(KEVO_EIO, "%s: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int error = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") || e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof(char *));
        if (!grown) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            break;
        }
        names = grown;
        names[n++] = kevo_path_join(path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (error == 0)
            error = add_problem(st, names[i], folder);
        free(names[i]);
    }
    free(names);
    if (error == 0 && n == 0)
        error = kevo_error_set(KEVO_ENOTFOUND, "%s: no .py files in it", path);
    return error;
}

static int copy_file(const char *from, const char *to)
{
    char *text = NULL;
    size_t len = 0;
    int error = kevo_file_read(&text, &len, from);
    if (error == 0)
        error = kevo_file_write(to, text, len);
    free(text);
    return error;
}

/* Read dir_fd/name only when it is a plain file (never a link) of at most
 * max bytes: the importer's folder is written by an untrusted process. */
static int read_plain(char **out, int dir_fd, const char *name, size_t max)
{
    *out = NULL;
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return kevo_error_set(KEVO_ENOTFOUND, "the importer wrote no %s", name);
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size > max) {
        close(fd);
        return kevo_error_set(KEVO_EINVAL, "the importer's %s is not a plain file under %zu bytes",
                              name, max);
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        close(fd);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    ssize_t got = read(fd, buf, (size_t)sb.st_size);
    close(fd);
    if (got != sb.st_size) {
        free(buf);
        return kevo_error_set(KEVO_EIO, "cannot read the importer's %s", name);
    }
    buf[got] = '\0';
    *out = buf;
    return 0;
}

static bool is_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

/* One good result: stage work/stage/<task>/ (task.json as written, the
 * problem file as reference.py), validate it, copy it to the output.
 * Returns 0 when imported; otherwise the reason is in *why. */
static int keep_task(import_state *st, const problem *p, const char *work, const char *task,
                     kevo_buf *why, char **dest_out)
{
    char *json = NULL, *ref = NULL, *stage = NULL, *stage_json = NULL, *stage_ref = NULL;
    char *level_dir = NULL, *dest = NULL, *dest_json = NULL, *dest_ref = NULL;
    kevo_task *t = NULL;
    int error = 0, out_fd = -1, task_fd = -1;
    kevo_buf buf = {0};
    if (!is_identifier(task)) {
        kevo_buf_puts(why, "the importer gave a task name that is not a C identifier");
        error = KEVO_EINVAL;
        goto done;
    }
    kevo_buf_printf(&buf, "%s/out", work);
    out_fd = open(kevo_buf_cstr(&buf), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    task_fd = out_fd < 0 ? -1 : openat(out_fd, task, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (task_fd < 0) {
        kevo_buf_printf(why, "the importer wrote no folder %s", task);
        error = KEVO_ENOTFOUND;
        goto done;
    }
    if ((error = read_plain(&json, task_fd, "task.json", TASK_JSON_MAX)) < 0 ||
        (error = kevo_file_read(&ref, NULL, p->path)) < 0) {
        kevo_buf_puts(why, kevo_error_last());
        goto done;
    }
    kevo_buf_clear(&buf);
    kevo_buf_printf(&buf, "%s/stage/%s", work, task);
    stage = kevo_buf_detach(&buf);
    stage_json = kevo_path_join(stage, "task.json");
    stage_ref = kevo_path_join(stage, "reference.py");
    if ((error = kevo_mkdirs(stage, 0755)) < 0 ||
        (error = kevo_file_write(stage_json, json, strlen(json))) < 0 ||
        (error = kevo_file_write(stage_ref, ref, strlen(ref))) < 0) {
        kevo_buf_puts(why, kevo_error_last());
        goto done;
    }
    if ((error = kevo_task_load(&t, stage)) < 0) {
        /* the message names the staging path; the field and problem are what matter */
        const char *msg = kevo_error_last();
        const char *colon = strstr(msg, "task.json: ");
        kevo_buf_printf(why, "kevo's task parser refuses the task: %s",
                        colon ? colon + strlen("task.json: ") : msg);
        goto done;
    }
    if (strcmp(t->name, task) || !t->torch) {
        kevo_buf_puts(why, "the importer's task.json names another task");
        error = KEVO_EINVAL;
        goto done;
    }
    kevo_buf_printf(&buf, "%s/level%d", st->out_dir, p->level);
    level_dir = kevo_buf_detach(&buf);
    dest = kevo_path_join(level_dir, task);
    if ((error = kevo_mkdirs(level_dir, 0755)) < 0) {
        kevo_buf_puts(why, kevo_error_last());
        goto done;
    }
    if (mkdir(dest, 0755) < 0) {
        if (errno == EEXIST)
            kevo_buf_printf(why, "%s exists (not overwritten)", dest);
        else
            kevo_buf_printf(why, "%s: %s", dest, strerror(errno));
        error = KEVO_EIO;
        goto done;
    }
    dest_json = kevo_path_join(dest, "task.json");
    dest_ref = kevo_path_join(dest, "reference.py");
    if ((error = copy_file(stage_json, dest_json)) < 0 ||
        (error = copy_file(stage_ref, dest_ref)) < 0) {
        kevo_buf_puts(why, kevo_error_last());
        goto done;
    }
    *dest_out = dest;
    dest = NULL;
done:
    if (task_fd >= 0)
        close(task_fd);
    if (out_fd >= 0)
        close(out_fd);
    kevo_task_free(t);
    kevo_buf_free(&buf);
    free(json);
    free(ref);
    free(stage);
    free(stage_json);
    free(stage_ref);
    free(level_dir);
    free(dest);
    free(dest_json);
    free(dest_ref);
    return error;
}

static void print_one_line(const char *s)
{
    for (; *s; s++)
        putchar(*s == '\n' || *s == '\r' ? ' ' : (unsigned char)*s < 32 ? '?' : *s);
}

static void report(import_state *st, problem *p, const char *dest, const char *reason,
                   const char *note)
{
    p->done = true;
    st->done++;
    printf("[%3zu/%zu] ", st->done, st->n);
    if (dest) {
        st->imported++;
        char **d = realloc(st->dests, (st->ndests + 1) * sizeof(char *));
        if (d && (d[st->ndests] = strdup(dest)))
            st->ndests++;
        if (d)
            st->dests = d;
        printf("imported %s -> %s", p->label, dest);
        if (note && *note) {
            printf(" (");
            print_one_line(note);
            printf(")");
        }
    } else {
        st->skipped++;
        printf("skipped %s: ", p->label);
        print_one_line(reason && *reason ? reason : "no reason given");
    }
    printf("\n");
    fflush(stdout);
}

/* One result line of the importer, for problem p. */
static void handle_line(import_state *st, problem *p, const char *work, const char *line)
{
    cJSON *j = cJSON_Parse(line);
    const cJSON *ok = j ? cJSON_GetObjectItemCaseSensitive(j, "ok") : NULL;
    const cJSON *file = j ? cJSON_GetObjectItemCaseSensitive(j, "file") : NULL;
    const cJSON *task = j ? cJSON_GetObjectItemCaseSensitive(j, "task") : NULL;
    const cJSON *reason = j ? cJSON_GetObjectItemCaseSensitive(j, "reason") : NULL;
    const cJSON *note = j ? cJSON_GetObjectItemCaseSensitive(j, "note") : NULL;
    if (!cJSON_IsBool(ok) || !cJSON_IsString(file) || strcmp(file->valuestring, p->label)) {
        report(st, p, NULL, "the importer's answer is malformed", NULL);
    } else if (!cJSON_IsTrue(ok)) {
        report(st, p, NULL, cJSON_IsString(reason) ? reason->valuestring : NULL, NULL);
    } else {
        kevo_buf why = {0};
        char *dest = NULL;
        const char *name = cJSON_IsString(task) ? task->valuestring : "";
        if (keep_task(st, p, work, name, &why, &dest) == 0) {
            report(st, p, dest, NULL, cJSON_IsString(note) ? note->valuestring : NULL);
            kevo_buf_printf(&st->taken, "%s%s", st->taken.len ? "," : "", name);
        } else {
            report(st, p, NULL, kevo_buf_cstr(&why), NULL);
        }
        free(dest);
        kevo_buf_free(&why);
    }
    cJSON_Delete(j);
}

/* Read one line from the child into *line (without '\n'); `pending` keeps
 * what came after it. 0, KEVO_ETIMEOUT, or KEVO_EIO at end of output. */
static int read_line(kevo_child *c, kevo_buf *pending, kevo_buf *line, double timeout_s)
{
    double deadline = kevo_now_s() + timeout_s;
    for (;;) {
        char *nl = pending->len ? memchr(pending->ptr, '\n', pending->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - pending->ptr);
            kevo_buf_clear(line);
            kevo_buf_put(line, pending->ptr, n);
            memmove(pending->ptr, nl + 1, pending->len - n - 1);
            pending->len -= n + 1;
            pending->ptr[pending->len] = '\0';
            return 0;
        }
        if (pending->len > (1 << 20))
            return kevo_error_set(KEVO_EIO, "the importer wrote a line over 1 MiB");
        double left = deadline - kevo_now_s();
        if (left <= 0)
            return kevo_error_set(KEVO_ETIMEOUT, "no answer within %.0f s", timeout_s);
        struct pollfd pfd = {c->from_child, POLLIN, 0};
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return kevo_error_set(KEVO_EIO, "poll: %s", strerror(errno));
        if (r <= 0)
            continue;
        char chunk[4096];
        ssize_t got = read(c->from_child, chunk, sizeof(chunk));
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            return kevo_error_set(KEVO_EIO, "the importer ended");
        kevo_buf_put(pending, chunk, (size_t)got);
    }
}

/* The last line of the child's log, printable, at most 200 characters. */
static void log_reason(kevo_buf *out, kevo_child *c)
{
    char tail[2048];
    size_t len = kevo_child_log_tail(c, tail, sizeof(tail));
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
        tail[--len] = 0;
    const char *line = strrchr(tail, '\n');
    line = line ? line + 1 : tail;
    if (*line)
        kevo_buf_printf(out, ": %.200s", line);
}

/* Run the importer on every problem not yet done; a crash or hang skips
 * the problem it was in and starts it again on the rest. */
static int run_importer(import_state *st, const char *work, const char *python, const char *tree)
{
    char threads[32], tol[32];
    snprintf(threads, sizeof(threads), "OMP_NUM_THREADS=%d", kevo_cpu_count());
    snprintf(tol, sizeof(tol), "%g", st->tolerance);
    const char *env[] = {threads, NULL};
    const char *ro[] = {tree, NULL};
    kevo_sandbox_opts o = {.workdir = work, .mem_bytes = IMPORT_MEM, .cpu_s = 4 * 3600,
                           .untrusted = true, .extra_env = env, .ro_paths = ro};
    for (;;) {
        size_t first = 0;
        while (first < st->n && st->p[first].done)
            first++;
        if (first == st->n)
            return 0;
        size_t nargs = 24 + st->n; /* the fixed head (17) and one per problem */
        const char **argv = calloc(nargs, sizeof(char *));
        char **specs = calloc(st->n, sizeof(char *));
        if (!argv || !specs) {
            free(argv);
            free(specs);
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        }
        size_t k = 0;
        const char *taken = kevo_buf_cstr(&st->taken);
        const char *head[] = {python, "-E", "-s", "-B", "torch_import.py", "--mode",
                              st->kernelbench ? "kernelbench" : "torch", "--scale", st->scale,
                              "--out", "out", "--fd", "4", "--taken", taken,
                              /* only when given: else the importer may go below 1e-2 */
                              st->tolerance_given ? "--tolerance" : NULL, tol};
        for (size_t i = 0; i < sizeof(head) / sizeof(head[0]) && head[i]; i++)
            argv[k++] = head[i];
        size_t nspecs = 0;
        for (size_t i = first; i < st->n; i++) {
            kevo_buf b = {0};
            kevo_buf_printf(&b, "%d:%s:%s", st->p[i].level, st->p[i].label, st->p[i].copy);
            specs[nspecs] = kevo_buf_detach(&b);
            argv[k++] = specs[nspecs++];
        }
        argv[k] = NULL;
        kevo_child *c = NULL;
        int error = kevo_sandbox_spawn(&c, argv, &o);
        free(argv);
        for (size_t i = 0; i < nspecs; i++)
            free(specs[i]);
        free(specs);
        if (error < 0)
            return error;
        fcntl(c->from_child, F_SETFL, O_NONBLOCK);
        kevo_buf pending = {0}, line = {0};
        size_t next = first;
        while (next < st->n) {
            error = read_line(c, &pending, &line, IMPORT_LINE_TIMEOUT_S);
            if (error < 0)
                break;
            handle_line(st, &st->p[next], work, kevo_buf_cstr(&line));
            next++;
        }
        kevo_buf why = {0};
        if (next < st->n) {
            if (error == KEVO_ETIMEOUT) {
                kevo_child_kill(c);
                kevo_buf_printf(&why, "the importer gave no answer within %.0f s (killed)",
                                IMPORT_LINE_TIMEOUT_S);
            } else {
                kevo_child_wait(c, 10);
                kevo_buf_printf(&why, "the importer died (%s)",
                                kevo_proc_status_describe(&c->status));
                log_reason(&why, c);
            }
            report(st, &st->p[next], NULL, kevo_buf_cstr(&why), NULL);
        } else {
            kevo_child_wait(c, 30);
        }
        kevo_buf_free(&why);
        kevo_buf_free(&pending);
        kevo_buf_free(&line);
        kevo_child_free(c);
    }
}

/* The work folder: the problem files, the importer, out/ for the child. */
static int prepare_work(char **out, import_state *st)
{
    char *work = NULL;
    int error = kevo_mkdtemp(&work, "kevo-import-");
    if (error < 0)
        return error;
    chmod(work, 0755);
    char *in = kevo_path_join(work, "in"), *outd = kevo_path_join(work, "out");
    char *stage = kevo_path_join(work, "stage"), *cache = kevo_path_join(work, "cache");
    /* out/ and cache/ (torch's inductor cache) are the child's; stage/ is kevo's */
    if ((error = kevo_mkdirs(in, 0755)) == 0 && (error = kevo_mkdirs(outd, 0755)) == 0 &&
        (error = kevo_mkdirs(cache, 0755)) == 0 && (error = kevo_mkdirs(stage, 0700)) == 0 &&
        (error = kevo_sandbox_prepare_dir(outd)) == 0)
        error = kevo_sandbox_prepare_dir(cache);
    static const char *const scripts[] = {"torch_import.py", "torch_problem.py"};
    for (size_t i = 0; i < 2 && error == 0; i++) {
        char *from = kevo_path_join(kevo_harness_dir(), scripts[i]);
        char *to = kevo_path_join(work, scripts[i]);
        error = copy_file(from, to);
        free(from);
        free(to);
    }
    for (size_t i = 0; i < st->n && error == 0; i++) {
        char *to = kevo_path_join(work, st->p[i].copy);
        error = copy_file(st->p[i].path, to);
        free(to);
    }
    free(in);
    free(outd);
    free(stage);
    free(cache);
    if (error < 0) {
        kevo_rmtree(work);
        free(work);
        return error;
    }
    *out = work;
    return 0;
}

/* Each imported task gets a C draft where a kevo C task translates the same
 * problem and is correct against it (cmd_tasks_link.c). */
static void link_drafts(import_state *st)
{
    const char *from = st->link_from ? st->link_from : kevo_cli_default_suites();
    size_t linked = 0;
    double start = kevo_now_s();
    printf("linking C drafts from %s (each checked against its PyTorch reference; "
           "--no-link skips this)\n", from);
    for (size_t i = 0; i < st->ndests; i++) {
        char line[600];
        int rc = kevo_cli_link_draft(st->dests[i], from, line, sizeof(line));
        linked += rc == 1;
        printf("[%3zu/%zu] %s %s: ", i + 1, st->ndests,
               rc == 1 ? "linked" : rc < 0 ? "error" : "no draft", st->dests[i]);
        print_one_line(line);
        printf("\n");
        fflush(stdout);
        if (rc < 0)
            kevo_error_clear();
    }
    double s = kevo_now_s() - start;
    printf("linked %zu of %zu; the others have no C draft (the built-in generator skips them, "
           "an LLM drafts from the PyTorch source) (%.0f min %.0f s)\n", linked, st->ndests,
           (double)(int)(s / 60), s - 60 * (int)(s / 60));
}

static void free_state(import_state *st)
{
    for (size_t i = 0; i < st->ndests; i++)
        free(st->dests[i]);
    free(st->dests);
    for (size_t i = 0; i < st->n; i++) {
        free(st->p[i].path);
        free(st->p[i].label);
        free(st->p[i].copy);
    }
    free(st->p);
    kevo_buf_free(&st->taken);
}

int kevo_cmd_tasks_import(int argc, char **argv)
{
    /* argv: "tasks" "import" MODE PATH... */
    import_state st = {.scale = "1", .tolerance = 1e-2, .level = 1};
    if (argc < 3) {
        usage_hint("needs a mode (kernelbench or torch), PATH... and --out DIR");
        return KEVO_EXIT_USAGE;
    }
    if (!strcmp(argv[2], "kernelbench"))
        st.kernelbench = true;
    else if (strcmp(argv[2], "torch")) {
        char msg[160];
        snprintf(msg, sizeof(msg), "unknown mode '%.60s' (kernelbench or torch)", argv[2]);
        usage_hint(msg);
        return KEVO_EXIT_USAGE;
    }
    const char **paths = calloc((size_t)argc, sizeof(char *));
    size_t npaths = 0;
    int rc = KEVO_EXIT_USAGE;
    char *python = NULL, *tree = NULL, *work = NULL;
    if (!paths)
        return KEVO_EXIT_INFRA;
    enum { OPT_OUT = 256, OPT_SCALE, OPT_TOLERANCE, OPT_NO_LINK, OPT_LINK_FROM, OPT_LEVEL };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"out", required_argument, NULL, OPT_OUT},
        {"scale", required_argument, NULL, OPT_SCALE},
        {"tolerance", required_argument, NULL, OPT_TOLERANCE},
        {"no-link", no_argument, NULL, OPT_NO_LINK},
        {"link-from", required_argument, NULL, OPT_LINK_FROM},
        {"level", required_argument, NULL, OPT_LEVEL},
        {NULL, 0, NULL, 0},
    };
    kevo_opts o;
    /* argv + 2: the mode is the options' argv[0] */
    kevo_opts_init(&o, "kevo tasks import", argc - 2, argv + 2, table, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        char *end;
        switch (c) {
        case '?': goto done;
        case 'h': rc = KEVO_EXIT_OK; kevo_cli_tasks_usage(stdout); goto done;
        case OPT_OUT: st.out_dir = o.arg; break;
        case OPT_SCALE: {
            st.scale = o.arg;
            double s = strtod(st.scale, &end);
            if (strcmp(st.scale, "auto") && (end == st.scale || *end || !(s > 0 && s <= 1))) {
                usage_hint("--scale takes a number in (0, 1] or auto");
                goto done;
            }
            break;
        }
        case OPT_TOLERANCE:
            st.tolerance = strtod(o.arg, &end);
            st.tolerance_given = true;
            if (end == o.arg || *end || !(st.tolerance > 0 && st.tolerance < 1)) {
                usage_hint("--tolerance takes a number in (0, 1)");
                goto done;
            }
            break;
        case OPT_NO_LINK: st.no_link = true; break;
        case OPT_LINK_FROM: st.link_from = o.arg; break;
        case OPT_LEVEL: {
            long lv = strtol(o.arg, &end, 10);
            st.level = (end == o.arg || *end) ? 0 : (int)(lv < 1 || lv > 3 ? 0 : lv);
            if (st.level < 1 || st.level > 3) {
                usage_hint("--level takes 1, 2 or 3");
                goto done;
            }
            break;
        }
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&o, &nops);
    for (int k = 0; k < nops; k++)
        paths[npaths++] = ops[k];
    if (!st.out_dir) {
        usage_hint("missing --out DIR");
        goto done;
    }
    if (npaths == 0) {
        usage_hint("no problem file or folder given");
        goto done;
    }
    for (size_t i = 0; i < npaths; i++)
        if (collect_path(&st, paths[i]) < 0) {
            fprintf(stderr, "kevo tasks import: %s\n", kevo_error_last());
            goto done;
        }
    rc = KEVO_EXIT_INFRA;
    if (kevo_torch_python(&python, &tree) < 0) {
        fprintf(stderr, "kevo tasks import: %s\n", kevo_error_last());
        goto done;
    }
    if (kevo_sandbox_private_scratch() < 0 || prepare_work(&work, &st) < 0 ||
        kevo_mkdirs(st.out_dir, 0755) < 0) {
        fprintf(stderr, "kevo tasks import: %s\n", kevo_error_last());
        goto done;
    }
    double start = kevo_now_s();
    printf("importing %zu problem%s (scale %s; this takes a few seconds each)\n", st.n,
           st.n == 1 ? "" : "s", st.scale);
    fflush(stdout);
    if (run_importer(&st, work, python, tree) < 0) {
        fprintf(stderr, "kevo tasks import: cannot run the importer: %s\n", kevo_error_last());
        goto done;
    }
    double s = kevo_now_s() - start;
    printf("imported %zu of %zu; %zu skipped (%.0f min %.0f s)\n", st.imported, st.n, st.skipped,
           (double)(int)(s / 60), s - 60 * (int)(s / 60));
    rc = st.skipped ? KEVO_EXIT_NEGATIVE : KEVO_EXIT_OK;
    if (st.kernelbench && !st.no_link)
        link_drafts(&st);
done:
    if (work) {
        kevo_rmtree(work);
        free(work);
    }
    free(python);
    free(tree);
    free(paths);
    free_state(&st);
    return rc;
}
