/*
 * cli/cmd_memory.c - `kevo memory`: inspect, export, import and filter the
 * experience memory, and print a task's attempt tree. Parses flags and
 * prints; everything else is kevo/memory.h.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/memory.h"
#include "kevo/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int kevo_cmd_memory(int argc, char **argv);

#define DEFAULT_DB "kevo.db"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo memory [--db PATH] <command> [options]\n"
            "\n"
            "commands:\n"
            "  stats [--json]                 counts, Q rows and size on disk\n"
            "  list [items|attempts|runs|tasks] [--kind KIND] [--task NAME] [--run ID]\n"
            "       [--limit N]               newest first (default 50; 0 = all)\n"
            "  show ID                        an item; attempt:ID, run:ID or task:NAME for others\n"
            "  export FILE                    the whole memory as JSON lines (- = stdout)\n"
            "  import FILE                    merge an export into this memory (- = stdin)\n"
            "  filter --exclude-tasks A,B     remove everything derived from those tasks\n"
            "  graph --task NAME [--run ID] [--dot]\n"
            "                                 the task's attempt tree (DOT with --dot)\n"
            "  seed                           add the built-in API notes and best practices\n"
            "\n"
            "--db PATH: the memory store (default ./" DEFAULT_DB ").\n");
}

/* Map a KEVO_E* code to the exit status and print the message. */
static int fail(const char *what, int error)
{
    fprintf(stderr, "kevo memory %s: %s\n", what, kevo_error_last());
    return error == KEVO_EINVAL || error == KEVO_ENOTFOUND ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
}

__attribute__((format(printf, 1, 2))) static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kevo memory: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see `kevo memory --help`)\n");
    va_end(ap);
    return KEVO_EXIT_USAGE;
}

typedef struct opts {
    const char *db;
    const char *pos[4];
    int n_pos;
    const char *kind, *task, *exclude;
    int64_t run;
    long limit;
    int json, dot, has_limit;
} opts;

static int parse_int(const char *s, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* Flags may come before or after the command. Returns 0, -1 after --help,
 * or an exit status. */
static int parse(opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof(*o));
    o->db = DEFAULT_DB;
    o->limit = 50;
    enum { OPT_JSON = 256, OPT_DOT, OPT_DB, OPT_KIND, OPT_TASK, OPT_EXCLUDE, OPT_RUN, OPT_LIMIT };
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, OPT_JSON},
        {"dot", no_argument, NULL, OPT_DOT},
        {"db", required_argument, NULL, OPT_DB},
        {"kind", required_argument, NULL, OPT_KIND},
        {"task", required_argument, NULL, OPT_TASK},
        {"exclude-tasks", required_argument, NULL, OPT_EXCLUDE},
        {"run", required_argument, NULL, OPT_RUN},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    kevo_opts_init(&op, "kevo memory", argc, argv, table, "h");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        const char **dst = NULL;
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': usage(stdout); return -1;
        case OPT_JSON: o->json = 1; continue;
        case OPT_DOT: o->dot = 1; continue;
        case OPT_RUN:
            if (kevo_opts_int64(&op, &o->run, 0, INT64_MAX) < 0)
                return KEVO_EXIT_USAGE;
            continue;
        case OPT_LIMIT: {
            int64_t v = 0;
            if (kevo_opts_int64(&op, &v, 0, 1000000000) < 0)
                return KEVO_EXIT_USAGE;
            o->limit = (long)v;
            o->has_limit = 1;
            continue;
        }
        case OPT_DB: dst = &o->db; break;
        case OPT_KIND: dst = &o->kind; break;
        case OPT_TASK: dst = &o->task; break;
        default: dst = &o->exclude; break;
        }
        *dst = op.arg;
        if (!**dst)
            return bad_usage("%s needs a non-empty value", op.flag);
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops > 4)
        return bad_usage("too many arguments at '%s'", ops[4]);
    for (int k = 0; k < nops; k++)
        o->pos[o->n_pos++] = ops[k];
    return 0;
}

static int open_mem(kevo_memory **out, const opts *o, int create)
{
    int error = kevo_memory_open_ex(out, o->db, create ? 0 : KEVO_MEMORY_MUST_EXIST);
    return error < 0 ? fail("open", error) : 0;
}

static void print_time(char *buf, size_t len, int64_t ms)
{
    if (!ms) {
        snprintf(buf, len, "-");
        return;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- stats ------------------------------------------------------------ */

static int cmd_stats(kevo_memory *mem, const opts *o)
{
    kevo_memory_stats st;
    int error = kevo_memory_stats_get(&st, mem);
    if (error < 0)
        return fail("stats", error);
    if (o->json) {
        printf("{\"path\":\"%s\",\"schema_version\":%d,\"bytes\":%lld,\"runs\":%lld,"
               "\"tasks\":%lld,\"attempts\":%lld,\"attempts_correct\":%lld,\"items\":%lld,"
               "\"items_by_kind\":{",
               kevo_memory_path(mem), st.schema_version, (long long)st.bytes, (long long)st.runs,
               (long long)st.tasks, (long long)st.attempts, (long long)st.attempts_correct,
               (long long)st.items);
        for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++)
            printf("%s\"%s\":%lld", k > 1 ? "," : "", kevo_item_kind_name((kevo_item_kind)k),
                   (long long)st.items_by_kind[k]);
        printf("},\"edges_used\":%lld,\"edges_distilled\":%lld,\"q_items\":%lld,"
               "\"q_starts\":%lld}\n",
               (long long)st.edges_used, (long long)st.edges_distilled, (long long)st.q_items,
               (long long)st.q_starts);
        return 0;
    }
    /* the path as opened: a PostgreSQL URL without its password */
    printf("memory      %s (schema %d, %.1f MiB on disk)\n", kevo_memory_path(mem),
           st.schema_version,
           (double)st.bytes / (1024.0 * 1024.0));
    printf("runs        %lld\n", (long long)st.runs);
    printf("tasks       %lld\n", (long long)st.tasks);
    printf("attempts    %lld (%lld correct)\n", (long long)st.attempts,
           (long long)st.attempts_correct);
    printf("items       %lld:", (long long)st.items);
    for (int k = 1; k <= KEVO_ITEM_KIND_MAX; k++)
        printf(" %s %lld", kevo_item_kind_name((kevo_item_kind)k), (long long)st.items_by_kind[k]);
    printf("\nedges       used %lld, distilled_from %lld\n", (long long)st.edges_used,
           (long long)st.edges_distilled);
    printf("Q rows      items %lld, start points %lld\n", (long long)st.q_items,
           (long long)st.q_starts);
    return 0;
}

/* ---- list / show ------------------------------------------------------ */

static void one_line(char *dst, size_t len, const char *s)
{
    size_t n = 0;
    for (; s && *s && n + 1 < len; s++)
        dst[n++] = (*s == '\n' || *s == '\t') ? ' ' : *s;
    dst[n] = '\0';
}

static int list_items(kevo_memory *mem, const opts *o)
{
    kevo_item_filter f = {
        .task = o->task, .newest_first = 1, .no_body = 1, .limit = (size_t)o->limit};
    if (o->kind) {
        kevo_item_kind k;
        if (kevo_item_kind_parse(&k, o->kind) < 0)
            return fail("list", KEVO_EINVAL);
        f.kinds = KEVO_ITEM_BIT(k);
    }
    kevo_item_list *l = NULL;
    int error = kevo_memory_item_list(&l, mem, &f);
    if (error < 0)
        return fail("list", error);
    printf("id\tkind\ttask\tQ1\tQ2\ttitle\n");
    for (size_t i = 0; i < l->n; i++) {
        const kevo_item *it = &l->items[i];
        double q1 = 0, q2 = 0;
        int64_t n1 = 0, n2 = 0;
        kevo_memory_q_get(&q1, &n1, mem, it->id, KEVO_STAGE_DRAFT);
        kevo_memory_q_get(&q2, &n2, mem, it->id, KEVO_STAGE_REFINE);
        char title[120];
        one_line(title, sizeof(title), it->title);
        char a[24] = "-", b[24] = "-";
        if (n1)
            snprintf(a, sizeof(a), "%.3f", q1);
        if (n2)
            snprintf(b, sizeof(b), "%.3f", q2);
        printf("%lld\t%s\t%s\t%s\t%s\t%s\n", (long long)it->id, kevo_item_kind_name(it->kind),
               it->task ? it->task : "-", a, b, title);
    }
    kevo_item_list_free(l);
    return 0;
}

static int list_attempts(kevo_memory *mem, const opts *o)
{
    kevo_attempt_filter f = {.task = o->task,
                             .run_id = o->run,
                             .newest_first = 1,
                             .no_source = 1,
                             .limit = (size_t)o->limit};
    kevo_attempt_list *l = NULL;
    int error = kevo_memory_attempt_list(&l, mem, &f);
    if (error < 0)
        return fail("list", error);
    printf("id\trun\ttask\tstage\tit\tparent\tverdict\tspeedup\tlatency_us\treward\n");
    for (size_t i = 0; i < l->n; i++) {
        const kevo_attempt *a = &l->attempts[i];
        printf("%lld\t%lld\t%s\t%s\t%d\t%lld\t%s\t%.3f\t%.2f\t%.3f\n", (long long)a->id,
               (long long)a->run_id, a->task, kevo_stage_name(a->stage), a->iteration,
               (long long)a->parent_id, kevo_verdict_name(a->verdict), a->speedup, a->candidate_us, a->reward);
    }
    kevo_attempt_list_free(l);
    return 0;
}

static int list_runs(kevo_memory *mem)
{
    kevo_run_list *l = NULL;
    int error = kevo_memory_run_list(&l, mem);
    if (error < 0)
        return fail("list", error);
    printf("id\tstatus\tstarted\tfinished\tconfig\n");
    for (size_t i = 0; i < l->n; i++) {
        char s[32], f[32], cfg[160];
        print_time(s, sizeof(s), l->runs[i].started);
        print_time(f, sizeof(f), l->runs[i].finished);
        one_line(cfg, sizeof(cfg), l->runs[i].config_json);
        printf("%lld\t%s\t%s\t%s\t%s\n", (long long)l->runs[i].id, l->runs[i].status, s, f, cfg);
    }
    kevo_run_list_free(l);
    return 0;
}

static int list_tasks(kevo_memory *mem)
{
    kevo_memory_task_array *l = NULL;
    int error = kevo_memory_task_list(&l, mem);
    if (error < 0)
        return fail("list", error);
    printf("name\tlevel\tcategory\tdescription\n");
    for (size_t i = 0; i < l->n; i++) {
        char d[120];
        one_line(d, sizeof(d), l->tasks[i].description);
        printf("%s\t%d\t%s\t%s\n", l->tasks[i].name, l->tasks[i].level,
               l->tasks[i].category ? l->tasks[i].category : "-", d);
    }
    kevo_memory_task_array_free(l);
    return 0;
}

static int cmd_list(kevo_memory *mem, const opts *o)
{
    const char *what = o->n_pos > 1 ? o->pos[1] : "items";
    if (o->n_pos > 2)
        return bad_usage("list takes one kind of record, not '%s'", o->pos[2]);
    if (!strcmp(what, "items"))
        return list_items(mem, o);
    if (!strcmp(what, "attempts"))
        return list_attempts(mem, o);
    if (!strcmp(what, "runs"))
        return list_runs(mem);
    if (!strcmp(what, "tasks"))
        return list_tasks(mem);
    return bad_usage("list: unknown record kind '%s' (items, attempts, runs, tasks)", what);
}

static int show_item(kevo_memory *mem, int64_t id)
{
    kevo_item *it = NULL;
    int error = kevo_memory_item_get(&it, mem, id);
    if (error < 0)
        return fail("show", error);
    char created[32];
    print_time(created, sizeof(created), it->created);
    printf("item %lld (%s)\ntitle     %s\ncategory  %s\ntask      %s\nbackend   %s\n"
           "tags      %s\ncreated   %s\nuid       %s\n",
           (long long)it->id, kevo_item_kind_name(it->kind), it->title,
           it->category ? it->category : "-", it->task ? it->task : "-",
           it->backend ? it->backend : "-", it->tags ? it->tags : "-", created, it->uid);
    for (int st = KEVO_STAGE_DRAFT; st <= KEVO_STAGE_REFINE; st++) {
        double q = 0;
        int64_t n = 0;
        kevo_memory_q_get(&q, &n, mem, id, (kevo_stage)st);
        if (n)
            printf("Q %-7s %.4f after %lld updates\n", kevo_stage_name((kevo_stage)st), q,
                   (long long)n);
        else
            printf("Q %-7s - (never used)\n", kevo_stage_name((kevo_stage)st));
    }
    int64_t *src = NULL;
    size_t n_src = 0;
    if ((error = kevo_memory_item_sources(&src, &n_src, mem, id)) == 0 && n_src) {
        printf("distilled from attempt");
        for (size_t i = 0; i < n_src; i++)
            printf(" #%lld", (long long)src[i]);
        printf("\n");
    }
    free(src);
    printf("\n%s\n", it->body);
    kevo_item_free(it);
    return error < 0 ? fail("show", error) : 0;
}

static int show_attempt(kevo_memory *mem, int64_t id)
{
    kevo_attempt *a = NULL;
    kevo_attempt_list *kids = NULL;
    kevo_used_item *used = NULL;
    size_t n_used = 0;
    int error = kevo_memory_attempt_get(&a, mem, id);
    if (error < 0)
        return fail("show", error);
    char created[32];
    print_time(created, sizeof(created), a->created);
    printf("attempt %lld of task %s (run %lld)\nstage     %s, iteration %d, start point %lld\n"
           "backend   %s, generator %s\nverdict   %s\nlatency   %.2f us (reference %.2f us), "
           "speedup %.3fx\ntokens    %lld prompt, %lld completion%s\nreward    %.4f (raw %.4f)\n"
           "created   %s\n",
           (long long)a->id, a->task, (long long)a->run_id, kevo_stage_name(a->stage), a->iteration,
           (long long)a->parent_id, a->backend ? a->backend : "-",
           a->generator ? a->generator : "-", kevo_verdict_name(a->verdict), a->candidate_us, a->reference_us,
           a->speedup, (long long)a->tokens_prompt, (long long)a->tokens_completion,
           a->tokens_estimated ? " (estimated)" : "", a->reward, a->reward_raw, created);
    if (a->stage == KEVO_STAGE_REFINE || a->parent_id == 0) {
        double q = 0;
        int64_t n = 0;
        if (kevo_memory_q_start_get(&q, &n, mem, id) == 0 && n)
            printf("Q2        %.4f as a start point, after %lld refinements\n", q, (long long)n);
    }
    if ((error = kevo_memory_attempt_used(&used, &n_used, mem, id)) < 0)
        goto done;
    printf("context   %zu items:", n_used);
    for (size_t i = 0; i < n_used; i++)
        printf(" #%lld(%d tok)", (long long)used[i].item_id, used[i].tokens);
    printf("\n");
    if ((error = kevo_memory_attempt_children(&kids, mem, id)) < 0)
        goto done;
    if (kids->n) {
        printf("refined by");
        for (size_t i = 0; i < kids->n; i++)
            printf(" #%lld(%s)", (long long)kids->attempts[i].id, kevo_verdict_name(kids->attempts[i].verdict));
        printf("\n");
    }
    if (a->recipes_json)
        printf("recipes   %s\n", a->recipes_json);
    if (a->gates_json)
        printf("gates     %s\n", a->gates_json);
    printf("\n--- feedback\n%s\n--- source\n%s\n", a->feedback ? a->feedback : "",
           a->source ? a->source : "");
done:
    free(used);
    kevo_attempt_list_free(kids);
    kevo_attempt_free(a);
    return error < 0 ? fail("show", error) : 0;
}

static int show_run(kevo_memory *mem, int64_t id)
{
    kevo_run *r = NULL;
    kevo_attempt_list *l = NULL;
    int error = kevo_memory_run_get(&r, mem, id);
    if (error < 0)
        return fail("show", error);
    char s[32], f[32];
    print_time(s, sizeof(s), r->started);
    print_time(f, sizeof(f), r->finished);
    if ((error = kevo_memory_attempts_of_run(&l, mem, id)) == 0) {
        size_t correct = 0;
        for (size_t i = 0; i < l->n; i++)
            correct += l->attempts[i].verdict == KEVO_VERDICT_CORRECT;
        printf("run %lld: %s\nstarted   %s\nfinished  %s\nattempts  %zu (%zu correct)\n"
               "config    %s\n",
               (long long)r->id, r->status, s, f, l->n, correct, r->config_json);
    }
    kevo_attempt_list_free(l);
    kevo_run_free(r);
    return error < 0 ? fail("show", error) : 0;
}

static int show_task(kevo_memory *mem, const char *name)
{
    kevo_memory_task *t = NULL;
    int error = kevo_memory_task_get(&t, mem, name);
    if (error < 0)
        return fail("show", error);
    printf("task %s (level %d, %s)\nsuite     %s\n%s\n\n%s\n", t->name, t->level,
           t->category ? t->category : "-", t->suite_path ? t->suite_path : "-",
           t->description ? t->description : "", t->reference ? t->reference : "");
    kevo_memory_task_free(t);
    return 0;
}

static int cmd_show(kevo_memory *mem, const opts *o)
{
    if (o->n_pos != 2)
        return bad_usage("show needs one ID");
    const char *arg = o->pos[1];
    const char *colon = strchr(arg, ':');
    const char *kind = "item";
    char prefix[16] = "";
    if (colon) {
        size_t len = (size_t)(colon - arg);
        if (len >= sizeof(prefix))
            return bad_usage("show: unknown record kind in '%s'", arg);
        memcpy(prefix, arg, len);
        prefix[len] = '\0';
        kind = prefix;
        arg = colon + 1;
    }
    if (!strcmp(kind, "task"))
        return show_task(mem, arg);
    long id = 0;
    if (parse_int(arg, &id) < 0 || id == 0)
        return bad_usage("show: '%s' is not a record id", o->pos[1]);
    if (!strcmp(kind, "item"))
        return show_item(mem, id);
    if (!strcmp(kind, "attempt"))
        return show_attempt(mem, id);
    if (!strcmp(kind, "run"))
        return show_run(mem, id);
    return bad_usage("show: unknown record kind '%s' (item, attempt, run, task)", kind);
}

/* ---- graph ------------------------------------------------------------ */

typedef struct tree {
    kevo_attempt_list *l;
    size_t *first_child, *next_sibling; /* indexes; l->n = none */
} tree;

static void print_node(const kevo_attempt *a)
{
    printf("#%lld %s it%d %s", (long long)a->id, kevo_stage_name(a->stage), a->iteration,
           kevo_verdict_name(a->verdict));
    if (a->verdict == KEVO_VERDICT_CORRECT)
        printf(" %.2fx %.1fus", a->speedup, a->candidate_us);
    printf(" [%s]\n", a->generator ? a->generator : "-");
}

static void print_tree(const tree *t, size_t i, kevo_buf *prefix)
{
    for (size_t c = t->first_child[i]; c != t->l->n; c = t->next_sibling[c]) {
        int last = t->next_sibling[c] == t->l->n;
        size_t keep = prefix->len;
        printf("%s%s", kevo_buf_cstr(prefix), last ? "└── " : "├── ");
        print_node(&t->l->attempts[c]);
        if (kevo_buf_puts(prefix, last ? "    " : "│   ") == 0)
            print_tree(t, c, prefix);
        prefix->len = keep;
        if (prefix->ptr)
            prefix->ptr[keep] = '\0';
    }
}

static void dot_label(const kevo_attempt *a)
{
    printf("\"#%lld %s it%d\\n%s", (long long)a->id, kevo_stage_name(a->stage), a->iteration,
           kevo_verdict_name(a->verdict));
    if (a->verdict == KEVO_VERDICT_CORRECT)
        printf(" %.2fx", a->speedup);
    printf("\"");
}

static int cmd_graph(kevo_memory *mem, const opts *o)
{
    if (!o->task)
        return bad_usage("graph needs --task NAME");
    kevo_memory_task *task = NULL;
    int error = kevo_memory_task_get(&task, mem, o->task);
    if (error < 0)
        return fail("graph", error);
    kevo_memory_task_free(task);
    tree t = {0};
    if ((error = kevo_memory_attempts_of_task(&t.l, mem, o->task, o->run)) < 0)
        return fail("graph", error);
    size_t n = t.l->n;
    t.first_child = malloc((n + 1) * sizeof(size_t));
    t.next_sibling = malloc((n + 1) * sizeof(size_t));
    size_t *last_child = malloc((n + 1) * sizeof(size_t));
    if (!t.first_child || !t.next_sibling || !last_child) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    /* attempts are in id order and a parent precedes its children */
    for (size_t i = 0; i <= n; i++)
        t.first_child[i] = t.next_sibling[i] = last_child[i] = n;
    size_t roots_first = n, roots_last = n, correct = 0, best = n;
    for (size_t i = 0; i < n; i++) {
        const kevo_attempt *a = &t.l->attempts[i];
        if (a->verdict == KEVO_VERDICT_CORRECT) {
            correct++;
            if (best == n || a->speedup > t.l->attempts[best].speedup)
                best = i;
        }
        size_t p = n;
        for (size_t j = i; a->parent_id && j-- > 0;)
            if (t.l->attempts[j].id == a->parent_id) {
                p = j;
                break;
            }
        size_t *first = p == n ? &roots_first : &t.first_child[p];
        size_t *lastp = p == n ? &roots_last : &last_child[p];
        if (*first == n)
            *first = i;
        else
            t.next_sibling[*lastp] = i;
        *lastp = i;
    }
    if (o->dot) {
        printf("digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
               o->task);
        for (size_t i = 0; i < n; i++) {
            const kevo_attempt *a = &t.l->attempts[i];
            const char *color = a->verdict == KEVO_VERDICT_CORRECT     ? "palegreen"
                                : a->verdict == KEVO_VERDICT_INCORRECT ? "lightpink"
                                                                   : "lightgray";
            printf("  a%lld [label=", (long long)a->id);
            dot_label(a);
            printf(", style=filled, fillcolor=%s%s];\n", color, i == best ? ", penwidth=3" : "");
        }
        printf("  // edges point from a start point to the attempts that refined it\n");
        for (size_t i = 0; i < n; i++) {
            const kevo_attempt *a = &t.l->attempts[i];
            for (size_t c = t.first_child[i]; c != n; c = t.next_sibling[c])
                printf("  a%lld -> a%lld;\n", (long long)a->id, (long long)t.l->attempts[c].id);
        }
        printf("}\n");
    } else {
        printf("task %s: %zu attempts, %zu correct", o->task, n, correct);
        if (best != n)
            printf(", best #%lld %.2fx", (long long)t.l->attempts[best].id,
                   t.l->attempts[best].speedup);
        printf("\n");
        kevo_buf prefix = {0};
        for (size_t r = roots_first; r != n; r = t.next_sibling[r]) {
            print_node(&t.l->attempts[r]);
            print_tree(&t, r, &prefix);
        }
        kevo_buf_free(&prefix);
    }
done:
    free(t.first_child);
    free(t.next_sibling);
    free(last_child);
    kevo_attempt_list_free(t.l);
    return error < 0 ? fail("graph", error) : 0;
}

/* ---- export / import / filter ----------------------------------------- */

static int cmd_export(kevo_memory *mem, const opts *o)
{
    if (o->n_pos != 2)
        return bad_usage("export needs one FILE");
    int error = kevo_memory_export(mem, o->pos[1]);
    if (error < 0)
        return fail("export", error);
    if (strcmp(o->pos[1], "-"))
        fprintf(stderr, "kevo memory: exported %s to %s\n", kevo_memory_path(mem), o->pos[1]);
    return 0;
}

static int cmd_import(kevo_memory *mem, const opts *o)
{
    if (o->n_pos != 2)
        return bad_usage("import needs one FILE");
    kevo_import_stats st;
    int error = kevo_memory_import(mem, o->pos[1], &st);
    if (error < 0)
        return fail("import", error);
    fprintf(stderr,
            "kevo memory: imported %zu runs, %zu tasks, %zu items, %zu attempts, %zu edges, "
            "%zu Q rows (%zu already present)\n",
            st.runs, st.tasks, st.items, st.attempts, st.edges, st.q_rows, st.skipped);
    return 0;
}

static int cmd_filter(kevo_memory *mem, const opts *o)
{
    if (!o->exclude)
        return bad_usage("filter needs --exclude-tasks A,B,...");
    if (o->n_pos != 1)
        return bad_usage("filter takes no argument '%s'", o->pos[1]);
    char *copy = strdup(o->exclude);
    const char **names = calloc(strlen(o->exclude) + 1, sizeof(*names));
    size_t n = 0;
    int rc = 0;
    if (!copy || !names) {
        rc = fail("filter", kevo_error_set(KEVO_ENOMEM, "out of memory"));
        goto done;
    }
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ')
            tok[--len] = '\0';
        if (len)
            names[n++] = tok;
    }
    if (n == 0) {
        rc = bad_usage("--exclude-tasks '%s' names no task", o->exclude);
        goto done;
    }
    kevo_filter_stats fs;
    kevo_learn_config lc; /* relearn as the runs learnt */
    int error = kevo_memory_learn_config_of_runs(&lc, mem);
    if (error == 0)
        error = kevo_memory_filter_tasks(mem, names, n, &lc, &fs);
    if (error < 0) {
        rc = fail("filter", error);
        goto done;
    }
    fprintf(stderr,
            "kevo memory: removed %zu tasks, %zu attempts, %zu items, %zu runs; "
            "relearnt %zu Q-values\n",
            fs.tasks, fs.attempts, fs.items, fs.runs, fs.q_recomputed);
done:
    free(copy);
    free(names);
    return rc;
}

static int cmd_seed(kevo_memory *mem)
{
    int error = kevo_memory_seed_builtin(mem);
    return error < 0 ? fail("seed", error) : 0;
}

int kevo_cmd_memory(int argc, char **argv)
{
    opts o;
    int rc = parse(&o, argc, argv);
    if (rc)
        return rc < 0 ? KEVO_EXIT_OK : rc;
    if (o.n_pos == 0) {
        usage(stderr);
        return KEVO_EXIT_USAGE;
    }
    const char *cmd = o.pos[0];
    static const char *const known[] = {"stats",  "list",   "show",  "export",
                                        "import", "filter", "graph", "seed"};
    int ok = 0;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        ok |= !strcmp(cmd, known[i]);
    if (!ok) {
        static const char *const names[] = {"stats",  "list",   "show",  "export", "import",
                                            "filter", "graph", "seed",  NULL};
        const char *near = kevo_opts_closest(cmd, names);
        if (near)
            return bad_usage("unknown command '%s'; did you mean %s?", cmd, near);
        return bad_usage("unknown command '%s'", cmd);
    }
    if (strcmp(cmd, "list") && o.has_limit)
        return bad_usage("--limit applies to list, not %s", cmd);
    kevo_memory *mem = NULL;
    int create = !strcmp(cmd, "import") || !strcmp(cmd, "seed");
    if ((rc = open_mem(&mem, &o, create)) != 0)
        return rc;
    if (!strcmp(cmd, "stats"))
        rc = cmd_stats(mem, &o);
    else if (!strcmp(cmd, "list"))
        rc = cmd_list(mem, &o);
    else if (!strcmp(cmd, "show"))
        rc = cmd_show(mem, &o);
    else if (!strcmp(cmd, "export"))
        rc = cmd_export(mem, &o);
    else if (!strcmp(cmd, "import"))
        rc = cmd_import(mem, &o);
    else if (!strcmp(cmd, "filter"))
        rc = cmd_filter(mem, &o);
    else if (!strcmp(cmd, "graph"))
        rc = cmd_graph(mem, &o);
    else
        rc = cmd_seed(mem);
    kevo_memory_free(mem);
    return rc;
}
