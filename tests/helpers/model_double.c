/*
 * tests/helpers/model_double.c - a deterministic, context-sensitive model
 * double: an OpenAI-compatible chat server (HTTP/1.1 on 127.0.0.1, one
 * connection at a time) that READS the prompt kevo sends and answers like a
 * model whose success depends on what the context gives it. A test and
 * bench fixture only; the product never uses it. It simulates the
 * mechanism (what retrieval puts in front of a model), not model quality.
 *
 *   model_double [--port N] [--log FILE] [--log-prompts 1] [--suites DIR]
 *                [--lifetime SECONDS]
 *   model_double --emit TASK bug0|bug1|l0|l1|l2 [--suites DIR]
 *
 * Prints its port on the first line of stdout. --suites (default suites/c)
 * is where it reads a task's reference when the prompt's copy is missing or
 * cut by the token budget. --log appends one JSON line per request: the
 * task, the stage, every trap and what avoided it, and what was written.
 *
 * How it decides (all a pure function of the prompt text):
 *
 * Each known task (the table below: 7 Level 1 and 3 Level 2 tasks) has
 * "traps", each one construct the model must get right. A trap is avoided
 * when the prompt carries
 *   - its construct: the text of a seeded memory item (a best practice
 *     from src/memory/seed.c or an API note from src/backend/c_backend.c),
 *     matched by a phrase of its body;
 *   - a worked example: a `trace` item of a task the table lists for the
 *     trap (e.g. a correct sigmoid kernel avoids a fused kernel's sigmoid
 *     trap);
 *   - evidence of its own earlier failure: this task's verifier feedback in
 *     "Latest feedback", or a distilled lesson (an `experience` item titled
 *     "TASK draft #k: incorrect", whose "Why:" quotes the verifier) whose
 *     feedback shows this trap's symptom ("never written"/NaN for an
 *     unwritten tail, a wrong value otherwise).
 * Drafting, the reply is the task's reference (read from the prompt) with
 * the bug of the FIRST trap not avoided (a real, compilable, wrong kernel:
 * an off-by-one bound, a sign slip, an exclusive scan, a wrong divisor), or
 * the correct kernel when every trap is avoided. A model shown only the
 * latest feedback therefore fixes what that feedback names and nothing
 * else: on a two-trap task it oscillates until a lesson of the other
 * failure (memory) or the construct is in its context.
 * Refining, the reply is the correct kernel one speed level above the
 * start point's (level 1: `#pragma omp parallel for` on the outer loop with
 * `// kevo: cflags -O3 -fopenmp`; level 2: every top-level loop, plus
 * -march=native -funroll-loops; a task whose loop adds into one scalar, as
 * mse_loss's, gets its reduction clause) only when a relevant best practice (the
 * task's list) or a trace of a same-category task that uses OpenMP threads
 * is in the prompt; otherwise it restates the start point (same speed).
 * The bundled API note "#pragma omp parallel for" that every context with
 * memory carries does not count: it says how, not that it pays here.
 * Unknown tasks get their reference back, unchanged. Audit requests get
 * {"valid": true}; reflection requests get a one-line lesson.
 * Usage: prompt_tokens = prompt bytes / 4, completion_tokens = reply / 4.
 */
#include <cjson/cJSON.h>

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (64 * 1024 * 1024)

/* ---- the tasks ---------------------------------------------------------- */

enum { SIG_ANY, SIG_VALUE, SIG_UNWRITTEN };

typedef struct trap {
    const char *name;
    const char *phrases[3]; /* construct: any of these texts in the prompt */
    const char *worked[3];  /* tasks whose trace is a worked example */
    const char *find, *repl; /* the bug, as an edit of the reference */
    int sig;                 /* the failure symptom that teaches it */
} trap;

typedef struct task {
    const char *name, *category, *path; /* path under --suites */
    trap traps[2];
    const char *speed[3]; /* best practices (phrases) that say how to go faster */
    const char *omp;      /* clause the parallel loops need (a reduction), or NULL */
} task;

/* Phrases of the seeded items (src/memory/seed.c, src/backend/c_backend.c). */
#define P_EXPF "the libm exponential"          /* API note expf */
#define P_NUMERIC "accumulate in double"         /* best practice Numerical accuracy */
#define P_REDUCE "serial dependency chain"       /* best practice Reductions */
#define P_MATMUL "Block for cache"               /* best practice Matrix multiplication */
#define P_MEMBOUND "touch each byte once"        /* best practice Memory-bound kernels */
#define P_COMPUTE "keep 4-8 independent"         /* best practice Compute-bound kernels */
#define P_OMPRED "gives each thread a private sum" /* API note omp reduction */

static const task tasks[] = {
    /* control: no trap */
    {"relu", "activation", "level1/001_relu", {{0}}, {P_MEMBOUND}, NULL},
    {"sigmoid",
     "activation",
     "level1/003_sigmoid",
     {{"exp sign", {P_EXPF}, {NULL}, "expf(-v)", "expf(v)", SIG_ANY}},
     {P_MEMBOUND}, NULL},
    {"softmax_rows",
     "activation",
     "level1/013_softmax_rows",
     {{"normalise every column",
       {P_NUMERIC},
       {NULL},
       "for (int64_t c = 0; c < C; c++)\n            yr[c] *= inv;",
       "for (int64_t c = 0; c + 1 < C; c++)\n            yr[c] *= inv;",
       SIG_ANY}},
     {P_MEMBOUND}, NULL},
    {"matvec",
     "matmul",
     "level1/019_matvec",
     {{"full dot product",
       {P_MATMUL},
       {NULL},
       "for (int64_t k = 0; k < K; k++)",
       "for (int64_t k = 0; k + 1 < K; k++)",
       SIG_ANY}},
     {P_MATMUL, P_MEMBOUND}, NULL},
    {"l2norm_rows",
     "norm",
     "level1/029_l2norm_rows",
     {{"write every column",
       {P_NUMERIC},
       {NULL},
       "for (int64_t c = 0; c < C; c++)\n            yr[c]",
       "for (int64_t c = 0; c + 1 < C; c++)\n            yr[c]",
       SIG_ANY}},
     {P_MEMBOUND}, NULL},
    {"reduce_sum_dim",
     "reduction",
     "level1/037_reduce_sum_dim",
     {{"every slice", {P_REDUCE, P_OMPRED}, {NULL}, "d = 1; d < D;", "d = 1; d + 1 < D;", SIG_ANY}},
     {P_REDUCE, P_MEMBOUND}, NULL},
    {"cumsum_rows",
     "scan",
     "level1/045_cumsum_rows",
     {{"inclusive scan",
       {P_REDUCE},
       {NULL},
       "acc += x[r * C + c];\n            y[r * C + c] = acc;",
       "y[r * C + c] = acc;\n            acc += x[r * C + c];",
       SIG_ANY}},
     {P_MEMBOUND}, NULL},
    {"mse_loss",
     "loss",
     "level1/057_mse_loss",
     {{"mean divisor",
       {P_NUMERIC},
       {NULL},
       "s / (float)D;",
       "s / (float)(D > 1 ? D - 1 : 1);",
       SIG_ANY}},
     {P_MEMBOUND, P_REDUCE},
     " reduction(+ : tot)"}, /* the row means add up into one scalar */
    /* Level 2: two traps each, the constructs and worked examples of L1 */
    {"fused_gemm_sigmoid_sum",
     "fused",
     "level2/002_gemm_sigmoid_sum",
     {{"sigmoid", {P_EXPF}, {"sigmoid"}, "expf(-z[i])", "expf(z[i])", SIG_VALUE},
      {"row sum written",
       {P_REDUCE, P_OMPRED},
       {"reduce_sum_dim", "mse_loss"},
       "for (int64_t m = 0; m < M; m++) {\n        double s",
       "for (int64_t m = 0; m + 1 < M; m++) {\n        double s",
       SIG_UNWRITTEN}},
     {P_MATMUL, P_COMPUTE, P_MEMBOUND}, NULL},
    {"fused_gemm_swish_scale",
     "fused",
     "level2/011_gemm_swish_scale",
     {{"gemm rows",
       {P_MATMUL},
       {"matvec"},
       "for (int64_t m = 0; m < M; m++)\n        for (int64_t n",
       "for (int64_t m = 0; m + 1 < M; m++)\n        for (int64_t n",
       SIG_UNWRITTEN},
      {"swish", {P_EXPF}, {"sigmoid"}, "expf(-y[i])", "expf(y[i])", SIG_VALUE}},
     {P_MATMUL, P_COMPUTE, P_MEMBOUND}, NULL},
    {"fused_matmul_bias_softmax",
     "fused",
     "level2/007_matmul_bias_softmax",
     {{"gemm rows",
       {P_MATMUL},
       {"matvec"},
       "for (int64_t m = 0; m < M; m++)\n        for (int64_t n",
       "for (int64_t m = 0; m + 1 < M; m++)\n        for (int64_t n",
       SIG_UNWRITTEN},
      {"normalise every column",
       {P_NUMERIC},
       {"softmax_rows"},
       "for (int64_t n = 0; n < N; n++)\n            row[n] = (float)(row[n] / s);",
       "for (int64_t n = 0; n + 1 < N; n++)\n            row[n] = (float)(row[n] / s);",
       SIG_VALUE}},
     {P_MATMUL, P_COMPUTE, P_MEMBOUND}, NULL},
};
#define NTASKS (sizeof(tasks) / sizeof(tasks[0]))

static const task *task_named(const char *name, size_t len)
{
    for (size_t i = 0; i < NTASKS; i++)
        if (strlen(tasks[i].name) == len && !strncmp(tasks[i].name, name, len))
            return &tasks[i];
    return NULL;
}

/* ---- small string helpers ---------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sbuf b = {0};
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        sb_put(&b, tmp, n);
    fclose(f);
    return b.p;
}

/* strndup of [s, e) */
static char *dup_range(const char *s, const char *e) { return strndup(s, (size_t)(e - s)); }

/* The text of section "## TITLE" (to the next "\n## " or the end), or NULL. */
static char *section(const char *prompt, const char *title)
{
    char head[96];
    snprintf(head, sizeof(head), "## %s\n", title);
    const char *s = strstr(prompt, head);
    if (!s)
        return NULL;
    s += strlen(head);
    const char *e = strstr(s, "\n## ");
    return e ? dup_range(s, e) : strdup(s);
}

/* Replace the first `find` in `src` by `repl`; NULL when it is not there. */
static char *replace_once(const char *src, const char *find, const char *repl)
{
    const char *at = strstr(src, find);
    if (!at)
        return NULL;
    sbuf b = {0};
    sb_put(&b, src, (size_t)(at - src));
    sb_puts(&b, repl);
    sb_puts(&b, at + strlen(find));
    return b.p;
}

/* ---- reading the prompt ------------------------------------------------ */

/* Symptom of one failure's feedback text. */
static int symptom(const char *text, size_t len)
{
    char *t = strndup(text, len);
    int s = 0;
    if (strstr(t, "never written") || strstr(t, "got nan") || strstr(t, "got -nan"))
        s = SIG_UNWRITTEN;
    else if (strstr(t, "mismatch") || strstr(t, "Wrong results"))
        s = SIG_VALUE;
    free(t);
    return s;
}

/* The end of the item block starting at p ("### ..."). */
static const char *block_end(const char *p)
{
    const char *a = strstr(p + 4, "\n### "), *b = strstr(p + 4, "\n## ");
    if (!a || (b && b < a))
        a = b;
    return a ? a : p + strlen(p);
}

typedef struct evidence {
    bool feedback[3]; /* by symptom, from "Latest feedback" */
    bool lesson[3];   /* by symptom, from this task's distilled failures */
} evidence;

static void gather_evidence(evidence *ev, const char *prompt, const char *name)
{
    memset(ev, 0, sizeof(*ev));
    char *fb = section(prompt, "Latest feedback");
    if (fb) {
        int s = symptom(fb, strlen(fb));
        if (s)
            ev->feedback[s] = true;
        free(fb);
    }
    char head[256];
    snprintf(head, sizeof(head), "### experience: %s draft #", name);
    for (const char *p = strstr(prompt, head); p; p = strstr(p + 1, head)) {
        const char *e = block_end(p), *nl = strchr(p, '\n');
        if (!nl || nl > e)
            continue;
        char *title = dup_range(p, nl);
        bool failed = strstr(title, ": incorrect") != NULL;
        free(title);
        if (!failed)
            continue;
        int s = symptom(nl, (size_t)(e - nl));
        if (s)
            ev->lesson[s] = true;
    }
}

/* A trace block in the prompt for task `name`; its body when `body`. */
static const char *trace_of(const char *prompt, const char *name)
{
    char head[256];
    snprintf(head, sizeof(head), "### trace: %s: ", name);
    return strstr(prompt, head);
}

/* Why a trap is avoided, or NULL when it is not. */
static const char *avoided(const trap *t, const char *prompt, const evidence *ev, char *why,
                           size_t cap)
{
    for (int i = 0; i < 3 && t->phrases[i]; i++)
        if (strstr(prompt, t->phrases[i])) {
            snprintf(why, cap, "construct \"%s\"", t->phrases[i]);
            return why;
        }
    for (int i = 0; i < 3 && t->worked[i]; i++)
        if (trace_of(prompt, t->worked[i])) {
            snprintf(why, cap, "trace of %s", t->worked[i]);
            return why;
        }
    for (int s = SIG_VALUE; s <= SIG_UNWRITTEN; s++) {
        if (t->sig != SIG_ANY && t->sig != s)
            continue;
        if (ev->lesson[s]) {
            snprintf(why, cap, "lesson of its failure");
            return why;
        }
        if (ev->feedback[s]) {
            snprintf(why, cap, "latest feedback");
            return why;
        }
    }
    return NULL;
}

/* The reference from the prompt's Task section, else from --suites. */
static char *reference_of(const char *prompt, const task *tk, const char *suites)
{
    const char *s = strstr(prompt, "Reference implementation:\n```c\n");
    if (s) {
        s += strlen("Reference implementation:\n```c\n");
        const char *e = strstr(s, "\n```");
        const char *cut = strstr(s, "[... cut:");
        if (e && (!cut || cut > e))
            return dup_range(s, e);
    }
    if (!tk)
        return NULL;
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s/reference.c", suites, tk->path);
    return read_file(path);
}

/* Speed level of the start point's source: 0 serial, 1 one parallel loop,
 * 2 every loop and native flags. */
static int start_level(const char *prompt)
{
    char *sp = section(prompt, "Start point");
    int level = 0;
    if (sp) {
        if (strstr(sp, "-march=native"))
            level = 2;
        else if (strstr(sp, "omp parallel"))
            level = 1;
        free(sp);
    }
    return level;
}

/* The kernel at speed level `level` (0: the source as is); `clause` (may
 * be NULL) ends every pragma, e.g. the reduction a scalar output needs. */
static char *at_level(const char *src, int level, const char *clause)
{
    if (level <= 0)
        return strdup(src);
    sbuf b = {0};
    sb_puts(&b, level == 1 ? "// kevo: cflags -O3 -fopenmp\n"
                           : "// kevo: cflags -O3 -march=native -funroll-loops -fopenmp\n");
    int done = 0;
    for (const char *p = src; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        /* a top-level loop of the function body: four spaces, then for */
        if (!strncmp(p, "    for (", 9) && (level == 2 || !done)) {
            sb_puts(&b, level == 1 ? "#pragma omp parallel for"
                                   : "#pragma omp parallel for schedule(static)");
            sb_puts(&b, clause ? clause : "");
            sb_puts(&b, "\n");
            done = 1;
        }
        sb_put(&b, p, len);
        p += len;
    }
    return b.p;
}

/* A relevant speed hint in the prompt: one of the task's best practices,
 * or a trace of a same-category task that uses OpenMP threads. */
static const char *speed_hint(const task *tk, const char *prompt, char *why, size_t cap)
{
    for (int i = 0; i < 3 && tk->speed[i]; i++)
        if (strstr(prompt, tk->speed[i])) {
            snprintf(why, cap, "best practice \"%s\"", tk->speed[i]);
            return why;
        }
    for (size_t i = 0; i < NTASKS; i++) {
        if (strcmp(tasks[i].category, tk->category))
            continue;
        const char *t = trace_of(prompt, tasks[i].name);
        if (!t)
            continue;
        const char *e = block_end(t);
        char *blk = dup_range(t, e);
        bool omp = strstr(blk, "omp parallel") != NULL;
        free(blk);
        if (omp) {
            snprintf(why, cap, "trace of %s with OpenMP threads", tasks[i].name);
            return why;
        }
    }
    return NULL;
}

/* The name between the first pair of backquotes after `marker`. */
static const task *task_of(const char *prompt, const char *marker, char *name, size_t cap)
{
    const char *m = strstr(prompt, marker);
    if (!m)
        return NULL;
    const char *s = strchr(m, '`');
    const char *e = s ? strchr(s + 1, '`') : NULL;
    if (!e)
        return NULL;
    snprintf(name, cap, "%.*s", (int)(e - s - 1), s + 1);
    return task_named(s + 1, (size_t)(e - s - 1));
}

/* The reply to one prompt, and a JSON note of the decision. */
static char *decide(const char *prompt, const char *suites, cJSON *note)
{
    char name[128] = "";
    sbuf out = {0};
    if (strstr(prompt, "You audit C kernels")) {
        cJSON_AddStringToObject(note, "kind", "audit");
        return strdup("{\"valid\": true, \"reason\": \"it computes the operator for every "
                      "output\"}");
    }
    if (strstr(prompt, "Write one lesson")) {
        cJSON_AddStringToObject(note, "kind", "reflect");
        return strdup("Lesson: check every loop bound against the reference and write every "
                      "output element; the verifier's first mismatch shows which loop.");
    }
    bool refine = false;
    const task *tk = task_of(prompt, "Write a correct, reasonably fast C implementation of",
                             name, sizeof(name));
    if (!tk && !*name) {
        tk = task_of(prompt, "Write a FASTER correct version of", name, sizeof(name));
        refine = true;
    }
    cJSON_AddStringToObject(note, "task", name);
    cJSON_AddStringToObject(note, "stage", refine ? "refine" : "draft");
    char *ref = reference_of(prompt, tk, suites);
    if (!ref) {
        cJSON_AddStringToObject(note, "wrote", "nothing (no reference)");
        return strdup("I cannot see the reference implementation.");
    }
    char *kernel = NULL;
    char why[256];
    if (!tk) {
        cJSON_AddStringToObject(note, "wrote", "the reference (unknown task)");
        kernel = strdup(ref);
    } else if (!refine) {
        evidence ev;
        gather_evidence(&ev, prompt, tk->name);
        cJSON *traps = cJSON_AddArrayToObject(note, "traps");
        const trap *hit = NULL;
        for (int i = 0; i < 2 && tk->traps[i].name; i++) {
            const char *by = avoided(&tk->traps[i], prompt, &ev, why, sizeof(why));
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "trap", tk->traps[i].name);
            cJSON_AddStringToObject(o, "avoided_by", by ? by : "-");
            cJSON_AddItemToArray(traps, o);
            if (!by && !hit)
                hit = &tk->traps[i];
        }
        if (hit)
            kernel = replace_once(ref, hit->find, hit->repl);
        if (hit && !kernel)
            fprintf(stderr, "model_double: %s: the bug of trap '%s' does not apply\n", name,
                    hit->name);
        if (!kernel)
            kernel = strdup(ref);
        cJSON_AddStringToObject(note, "wrote", hit ? hit->name : "correct");
    } else {
        int level = start_level(prompt);
        const char *by = speed_hint(tk, prompt, why, sizeof(why));
        int next = by ? (level < 2 ? level + 1 : 2) : level;
        kernel = at_level(ref, next, tk->omp);
        cJSON_AddNumberToObject(note, "start_level", level);
        cJSON_AddNumberToObject(note, "level", next);
        cJSON_AddStringToObject(note, "hint", by ? by : "-");
        if (!by) { /* restate the start point: a comment is all it changes */
            sbuf b = {0};
            sb_puts(&b, kernel);
            sb_puts(&b, "/* no further idea: same loops as the start point */\n");
            free(kernel);
            kernel = b.p;
        }
    }
    sb_puts(&out, "```c\n");
    sb_puts(&out, kernel);
    sb_puts(&out, "\n```\n");
    free(kernel);
    free(ref);
    return out.p;
}

/* ---- HTTP --------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;
static int log_prompts; /* --log-prompts 1: the whole prompt in each log line */
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, int status, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
                     "%zu\r\nConnection: close\r\n\r\n",
                     status, status == 200 ? "OK" : "Error", strlen(body));
    send_all(fd, head, (size_t)n);
    send_all(fd, body, strlen(body));
}

/* Read one request; returns its body (malloc) or NULL. */
static char *read_request(int fd, char *path, size_t path_cap)
{
    sbuf b = {0};
    double deadline = now_s() + 10;
    size_t need = 0, head_len = 0;
    for (;;) {
        if (head_len && b.n >= head_len + need)
            break;
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0 || stop_requested)
            goto fail;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, ms > 200 ? 200 : ms);
        if (r <= 0)
            continue;
        char tmp[65536];
        ssize_t got = recv(fd, tmp, sizeof(tmp), 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            goto fail;
        sb_put(&b, tmp, (size_t)got);
        if (!head_len) {
            char *end = strstr(b.p, "\r\n\r\n");
            if (!end)
                continue;
            head_len = (size_t)(end - b.p) + 4;
            char *cl = strcasestr(b.p, "\r\nContent-Length:");
            if (cl && cl < end)
                need = strtoul(cl + 17, NULL, 10);
            if (need > MAX_BODY)
                goto fail;
            sscanf(b.p, "%*s %255s", path);
            (void)path_cap;
        }
    }
    char *body = strndup(b.p + head_len, need);
    free(b.p);
    return body;
fail:
    free(b.p);
    return NULL;
}

static void serve(int fd, const char *suites, FILE *log, long n)
{
    char path[256] = "";
    char *body = read_request(fd, path, sizeof(path));
    if (!body)
        return;
    cJSON *req = cJSON_Parse(body);
    free(body);
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(req, "messages");
    if (!strstr(path, "chat/completions") || !cJSON_IsArray(msgs)) {
        respond(fd, 400, "{\"error\": {\"message\": \"model_double: POST a chat request\"}}");
        cJSON_Delete(req);
        return;
    }
    sbuf prompt = {0};
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs)
    {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (cJSON_IsString(c)) {
            sb_puts(&prompt, c->valuestring);
            sb_puts(&prompt, "\n");
        }
    }
    cJSON *note = cJSON_CreateObject();
    cJSON_AddNumberToObject(note, "n", (double)n);
    char *reply = decide(prompt.p ? prompt.p : "", suites, note);
    cJSON_AddNumberToObject(note, "prompt_bytes", (double)prompt.n);
    if (log_prompts)
        cJSON_AddStringToObject(note, "prompt", prompt.p ? prompt.p : "");

    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "id", "double");
    cJSON_AddStringToObject(root, "object", "chat.completion");
    cJSON_AddStringToObject(root, "model", "model-double");
    cJSON *choices = cJSON_AddArrayToObject(root, "choices");
    cJSON *choice = cJSON_CreateObject();
    cJSON_AddItemToArray(choices, choice);
    cJSON_AddNumberToObject(choice, "index", 0);
    cJSON *msg = cJSON_AddObjectToObject(choice, "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    cJSON_AddStringToObject(msg, "content", reply);
    cJSON_AddStringToObject(choice, "finish_reason", "stop");
    cJSON *usage = cJSON_AddObjectToObject(root, "usage");
    double pt = (double)((prompt.n + 3) / 4), ct = (double)((strlen(reply) + 3) / 4);
    cJSON_AddNumberToObject(usage, "prompt_tokens", pt);
    cJSON_AddNumberToObject(usage, "completion_tokens", ct);
    cJSON_AddNumberToObject(usage, "total_tokens", pt + ct);
    char *out = cJSON_PrintUnformatted(root);
    respond(fd, 200, out ? out : "{}");
    if (log) {
        char *line = cJSON_PrintUnformatted(note);
        if (line)
            fprintf(log, "%s\n", line);
        fflush(log);
        cJSON_free(line);
    }
    cJSON_free(out);
    cJSON_Delete(root);
    cJSON_Delete(note);
    cJSON_Delete(req);
    free(reply);
    free(prompt.p);
}

/* --emit TASK WHAT: print one of its kernels (WHAT: bug0, bug1, l0, l1, l2)
 * and exit, so a test can check each with `kevo eval`. */
static int emit(const char *name, const char *what, const char *suites)
{
    const task *tk = task_named(name, strlen(name));
    char *ref = tk ? reference_of("", tk, suites) : NULL, *k = NULL;
    if (!ref)
        return 2;
    if (!strncmp(what, "bug", 3)) {
        int i = atoi(what + 3);
        if (i < 0 || i > 1 || !tk->traps[i].name)
            return 2;
        k = replace_once(ref, tk->traps[i].find, tk->traps[i].repl);
    } else if (what[0] == 'l') {
        k = at_level(ref, atoi(what + 1), tk->omp);
    }
    if (!k)
        return 1;
    fputs(k, stdout);
    free(k);
    free(ref);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--emit"))
        return emit(argv[2], argv[3], argc >= 6 && !strcmp(argv[4], "--suites") ? argv[5]
                                                                                : "suites/c");
    long port = 0;
    double lifetime = 1800;
    const char *log_path = NULL, *suites = "suites/c";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--port"))
            port = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--log"))
            log_path = argv[i + 1];
        else if (!strcmp(argv[i], "--suites"))
            suites = argv[i + 1];
        else if (!strcmp(argv[i], "--log-prompts"))
            log_prompts = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--lifetime"))
            lifetime = strtod(argv[i + 1], NULL);
        else {
            fprintf(stderr, "usage: model_double [--port N] [--log FILE] [--log-prompts 1] "
                            "[--suites DIR] [--lifetime SECONDS]\n");
            return 2;
        }
    }
    if (argc % 2 == 0) {
        fprintf(stderr, "model_double: every option takes a value\n");
        return 2;
    }
    FILE *log = log_path ? fopen(log_path, "a") : NULL;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 16) < 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
        fprintf(stderr, "model_double: cannot listen: %s\n", strerror(errno));
        return 2;
    }
    printf("%d\n", ntohs(addr.sin_port));
    fflush(stdout);
    double end = now_s() + lifetime;
    long n = 0;
    while (!stop_requested && now_s() < end) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0)
            continue;
        serve(cfd, suites, log, ++n);
        shutdown(cfd, SHUT_WR);
        close(cfd);
    }
    close(lfd);
    if (log)
        fclose(log);
    return 0;
}
