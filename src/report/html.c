/*
 * report/html.c - `kevo report --format html`: one self-contained page for
 * one run, or several runs on the same axes (--compare).
 *
 *   summary cards (the kevo_report_metrics() numbers, each in an element
 *   with data-metric="<json key>" and data-value="<exact number>"), the
 *   run's configuration; four SVG figures drawn here (cumulative
 *   correct/compiled rate by iteration, per-task best speedups on a log
 *   axis, best-so-far speedup trajectories, tokens per iteration); a
 *   sortable per-task table (achieved GFLOP/s and GB/s when the task's
 *   task.json is still at its suite_path); the memory's highest and lowest
 *   Q items per stage with their use counts in the run(s); per task the
 *   attempt tree (refines edges), the best kernel's source and the
 *   feedback of failed attempts.
 *
 * Self-contained: inline CSS, inline SVG, a few lines of inline JS that
 * only sort tables, no fonts, images or scripts from anywhere else; a
 * Content-Security-Policy (default-src 'none', script by nonce) makes the
 * browser refuse any fetch, and stops a script that escaping missed.
 * Everything that comes from the store (names, sources, feedback, config,
 * item titles) is escaped. Reads the store; never writes it.
 */
#include "kevo/report.h"
#include "kevo/roofline.h"
#include "kevo/task.h"
#include "report/svg.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HTML_MAX_RUNS 4
/* Iterations beyond this are drawn at this one (a corrupt store must not
 * make the renderer allocate per-iteration arrays of any size). */
#define HTML_MAX_ITERS 10000
#define SOURCE_MAX_BYTES (64 * 1024)
#define SOURCE_MAX_LINES 2000
#define FEEDBACK_MAX_BYTES 1500
#define FEEDBACK_MAX_LINES 25
#define FEEDBACK_PER_TASK 6
#define TREE_MAX_DEPTH 24
#define MEMORY_TOP 10

/* Okabe-Ito colours (safe for colour-blind readers), and the same at 40%
 * over white for the lighter half of stacked bars. */
static const char *const run_colors[HTML_MAX_RUNS] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7"};
static const char *const run_light[HTML_MAX_RUNS] = {"#99c7e0", "#eebf99", "#99d8c7", "#ebc9dc"};

typedef struct task_view {
    const kevo_task_metrics *tm; /* borrowed from the run's metrics */
    size_t *att;                 /* indices into run_view.list, decision order */
    size_t natt, catt;
    int first_compiled, first_correct; /* 1-based iteration; 0 = none */
    size_t best;                       /* index into the list; SIZE_MAX = none */
    double flops, bytes;               /* from task.json; 0 = unknown */
} task_view;

typedef struct run_view {
    const kevo_run_metrics *m;
    kevo_run *run;
    kevo_attempt_list *list;
    task_view *tasks; /* m->ntasks, in the metrics' order */
    size_t *by_name;  /* indices into tasks, sorted by name */
    int iters;        /* iterations seen (largest iteration + 1) */
} run_view;

/* ---- small helpers ---------------------------------------------------- */

static bool good_speedup(double s)
{
    return isfinite(s) && s > 0;
}

static int clamp_iter(int it)
{
    return it < 0 ? 0 : it >= HTML_MAX_ITERS ? HTML_MAX_ITERS - 1 : it;
}

/* A CSS class for a verdict: the verdict names are identifiers. */
static const char *verdict_class(kevo_verdict v)
{
    return (unsigned)v < KEVO_VERDICT_COUNT ? kevo_verdict_name(v) : "other";
}

static void fmt_speedup(char *buf, size_t len, double s)
{
    if (!good_speedup(s))
        snprintf(buf, len, "n/a");
    else if (s >= 100)
        snprintf(buf, len, "%.0fx", s);
    else if (s >= 10)
        snprintf(buf, len, "%.1fx", s);
    else if (s >= 0.01)
        snprintf(buf, len, "%.2fx", s);
    else
        snprintf(buf, len, "%.2gx", s);
}

static void fmt_count(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else if (fabs(v) >= 1e9)
        snprintf(buf, len, "%.2fG", v / 1e9);
    else if (fabs(v) >= 1e6)
        snprintf(buf, len, "%.2fM", v / 1e6);
    else if (fabs(v) >= 1e4)
        snprintf(buf, len, "%.1fk", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

static void fmt_duration(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, len, "n/a");
    else if (s < 60)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void fmt_ms_time(char *buf, size_t len, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tmv;
    if (ms <= 0 || !gmtime_r(&t, &tmv) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tmv))
        snprintf(buf, len, "n/a");
}

/* An exact number for data-value attributes: "" when not finite. */
static void put_exact(kevo_writer *w, double v)
{
    if (isfinite(v))
        kevo_writer_printf(w, "%.17g", v);
}

/* Escaped text, cut to max_bytes / max_lines with a visible note. */
static void put_cut(kevo_writer *w, const char *s, size_t max_bytes, size_t max_lines)
{
    bool cut = false;
    size_t n = kevo_text_cut(s, max_bytes, max_lines, &cut);
    kevo_writer_escape(w, s, n);
    if (cut)
        kevo_writer_printf(w, "\n[... %zu more bytes not shown]", strlen(s) - n);
}

/* "unroll(factor=16) + restrict" from the recipes JSON; the raw text when
 * it is not the expected shape. *out is malloc'd; NULL when none. */
static char *recipes_summary(const char *json)
{
    if (!json || !*json)
        return NULL;
    cJSON *root = cJSON_Parse(json);
    kevo_buf b = {0};
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return kevo_strdup(json);
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, root)
    {
        const cJSON *name = cJSON_GetObjectItem(r, "recipe");
        if (!cJSON_IsString(name))
            continue;
        if (b.len)
            kevo_buf_puts(&b, " + ");
        kevo_buf_puts(&b, name->valuestring);
        const cJSON *params = cJSON_GetObjectItem(r, "params"), *p;
        bool first = true;
        cJSON_ArrayForEach(p, params)
        {
            if (!p->string)
                continue;
            kevo_buf_puts(&b, first ? "(" : ", ");
            first = false;
            if (cJSON_IsNumber(p))
                kevo_buf_printf(&b, "%s=%g", p->string, p->valuedouble);
            else if (cJSON_IsString(p))
                kevo_buf_printf(&b, "%s=%s", p->string, p->valuestring);
            else
                kevo_buf_printf(&b, "%s", p->string);
        }
        if (!first)
            kevo_buf_puts(&b, ")");
    }
    cJSON_Delete(root);
    return kevo_buf_detach(&b);
}

/* ---- loading ---------------------------------------------------------- */

static int cmp_task_index(const void *a, const void *b, void *ctx)
{
    const run_view *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return strcmp(v->tasks[x].tm->task, v->tasks[y].tm->task);
}

/* Index of the task named `name` in v->tasks, or -1. */
static long view_find(const run_view *v, const char *name)
{
    size_t lo = 0, hi = v->m->ntasks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(v->tasks[v->by_name[mid]].tm->task, name);
        if (c == 0)
            return (long)v->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void view_clear(run_view *v)
{
    if (v->tasks)
        for (size_t k = 0; k < v->m->ntasks; k++)
            free(v->tasks[k].att);
    free(v->tasks);
    free(v->by_name);
    kevo_attempt_list_free(v->list);
    kevo_run_free(v->run);
    memset(v, 0, sizeof(*v));
}

static int view_load(run_view *v, kevo_memory *mem, const kevo_run_metrics *m)
{
    int error = 0;
    v->m = m;
    if ((error = kevo_memory_run_get(&v->run, mem, m->run_id)) < 0 ||
        (error = kevo_memory_attempts_of_run(&v->list, mem, m->run_id)) < 0)
        return error;
    v->tasks = calloc(m->ntasks + 1, sizeof(*v->tasks));
    v->by_name = calloc(m->ntasks + 1, sizeof(*v->by_name));
    if (!v->tasks || !v->by_name)
        return kevo_error_set(KEVO_ENOMEM, "out of memory loading run %lld", (long long)m->run_id);
    for (size_t k = 0; k < m->ntasks; k++) {
        v->tasks[k].tm = &m->per_task[k];
        v->tasks[k].best = SIZE_MAX;
        v->by_name[k] = k;
    }
    qsort_r(v->by_name, m->ntasks, sizeof(size_t), cmp_task_index, v);
    for (size_t i = 0; i < v->list->n; i++) {
        const kevo_attempt *a = &v->list->attempts[i];
        long k = view_find(v, a->task);
        if (k < 0)
            continue;
        task_view *t = &v->tasks[k];
        if (t->natt == t->catt) {
            size_t cap = t->catt ? 2 * t->catt : 8;
            size_t *p = realloc(t->att, cap * sizeof(*p));
            if (!p)
                return kevo_error_set(KEVO_ENOMEM, "out of memory loading run %lld",
                                      (long long)m->run_id);
            t->att = p;
            t->catt = cap;
        }
        t->att[t->natt++] = i;
        int it = clamp_iter(a->iteration) + 1;
        if (it > v->iters)
            v->iters = it;
        if (kevo_verdict_compiled(a->verdict) && (!t->first_compiled || it < t->first_compiled))
            t->first_compiled = it;
        if (a->verdict == KEVO_VERDICT_CORRECT) {
            if (!t->first_correct || it < t->first_correct)
                t->first_correct = it;
            /* the metrics' choice: the first attempt with the highest
             * speedup (the first correct one when none has a speedup) */
            if (t->best == SIZE_MAX || a->speedup > v->list->attempts[t->best].speedup)
                t->best = i;
        }
    }
    return 0;
}

typedef struct task_index {
    const kevo_memory_task *t;
} task_index;

static int cmp_mem_task(const void *a, const void *b)
{
    return strcmp(((const task_index *)a)->t->name, ((const task_index *)b)->t->name);
}

/* flops/bytes of every solved task whose task.json is still where the run
 * found it. A task that cannot be loaded is "n/a", not an error. */
static int roofline_load(run_view *views, size_t n, kevo_memory *mem)
{
    kevo_memory_task_array *all = NULL;
    task_index *idx = NULL;
    int error = kevo_memory_task_list(&all, mem);
    if (error < 0)
        return error;
    idx = calloc(all->n + 1, sizeof(*idx));
    if (!idx) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < all->n; i++)
        idx[i].t = &all->tasks[i];
    qsort(idx, all->n, sizeof(*idx), cmp_mem_task);
    for (size_t r = 0; r < n; r++)
        for (size_t k = 0; k < views[r].m->ntasks; k++) {
            task_view *t = &views[r].tasks[k];
            if (!t->tm->correct || !(t->tm->best_us > 0))
                continue;
            kevo_memory_task key = {.name = t->tm->task};
            task_index kidx = {&key};
            const task_index *hit = bsearch(&kidx, idx, all->n, sizeof(*idx), cmp_mem_task);
            if (!hit || !hit->t->suite_path || !*hit->t->suite_path)
                continue;
            kevo_task *task = NULL;
            double flops = 0, bytes = 0;
            if (kevo_task_load(&task, hit->t->suite_path) == 0 &&
                kevo_task_work(&flops, &bytes, task) == 0) {
                t->flops = isfinite(flops) && flops > 0 ? flops : 0;
                t->bytes = isfinite(bytes) && bytes > 0 ? bytes : 0;
            }
            kevo_task_free(task);
            kevo_error_clear();
        }
done:
    free(idx);
    kevo_memory_task_array_free(all);
    return error;
}

/* ---- page frame ------------------------------------------------------- */

static const char page_css[] =
    ":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--card:#f6f8fa;--ok:#1a7f37;"
    "--warn:#9a6700;--bad:#cf222e}\n"
    "*{box-sizing:border-box}\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
    "sans-serif;color:var(--fg);background:#fff;margin:0}\n"
    "main{max-width:1120px;margin:0 auto;padding:12px 24px 48px}\n"
    "h1{font-size:22px;margin:8px 0 2px}\n"
    "h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px;margin:32px 0 8px}\n"
    "h3{font-size:15px;margin:20px 0 6px}h4{font-size:13px;margin:12px 0 4px}\n"
    "a{color:#0969da}nav{margin:6px 0 0;font-size:13px}nav a{margin-right:14px}\n"
    ".muted{color:var(--muted)}.sw{display:inline-block;width:10px;height:10px;"
    "border-radius:2px;margin-right:5px}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:10px;"
    "margin:8px 0 4px}\n"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:6px;"
    "padding:8px 10px}\n"
    ".card .k{font-size:12px;color:var(--muted)}.card .v{font-size:22px;font-weight:600;"
    "font-variant-numeric:tabular-nums}.card .s{font-size:11px;color:var(--muted)}\n"
    ".figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));"
    "gap:8px 28px;align-items:start}\n"
    "figure{margin:10px 0;break-inside:avoid}figure.wide{grid-column:1/-1}"
    "figcaption{font-size:12px;color:var(--muted);margin-top:2px}\n"
    "svg.plot{max-width:100%;height:auto;display:block}svg text{font:11px system-ui,"
    "sans-serif;fill:#333}svg .title{font-weight:600;font-size:12px}"
    "svg .grid{stroke:#eaeef2}svg .axis,svg .tick{stroke:#59636e}"
    "svg .ref{stroke:#59636e;stroke-dasharray:4 3}svg .empty{fill:#8c959f;font-size:13px}\n"
    ".scroll{overflow-x:auto}\n"
    "table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}\n"
    "th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:right;"
    "white-space:nowrap}th.l,td.l{text-align:left}\n"
    "thead th{background:var(--card)}table.sortable th{cursor:pointer;user-select:none}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}"
    "th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "tbody tr:nth-child(even){background:#fafbfc}\n"
    ".st{font-weight:600}.st-correct{color:var(--ok)}.st-compiled{color:var(--warn)}"
    ".st-failed{color:var(--bad)}\n"
    "pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px;"
    "overflow:auto;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "max-height:40em;tab-size:4}pre.fb{white-space:pre-wrap;max-height:20em}\n"
    "ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:18px;"
    "border-left:1px dotted #afb8c1}ul.tree{padding-left:2px;border:0}\n"
    "ul.tree li{margin:2px 0;font-size:13px}\n"
    ".v{display:inline-block;padding:0 6px;border-radius:9px;font-size:12px}"
    ".v-correct{background:#dafbe1;color:#116329}.v-incorrect{background:#fff1e5;"
    "color:#953800}.v-compile_error,.v-rejected,.v-crash,.v-timeout{background:#ffebe9;"
    "color:#a40e26}.v-infra_error,.v-other{background:#eaeef2}\n"
    ".best{font-weight:600}.rec{color:var(--muted);font-size:12px}\n"
    "section.task{border-top:1px solid var(--line);margin-top:18px}\n"
    "details>summary{cursor:pointer;font-size:13px}\n"
    "@media print{nav{display:none}main{max-width:none;padding:0}body{font-size:11px}"
    "a{color:inherit;text-decoration:none}pre{white-space:pre-wrap;max-height:none}"
    "h2,h3,h4{break-after:avoid}.figs{display:block}}\n";

/* Sorting only: click (or Enter on) a header; numbers by data-v, blanks last. */
static const char page_js[] =
    "(function(){\n"
    "function key(td,num){var v=td.getAttribute('data-v');if(v===null)v=td.textContent;"
    "if(!num)return v.toLowerCase();var x=parseFloat(v);return isNaN(x)?null:x;}\n"
    "document.querySelectorAll('table.sortable').forEach(function(t){\n"
    " var hs=t.tHead.rows[0].cells;\n"
    " Array.prototype.forEach.call(hs,function(th,i){\n"
    "  th.tabIndex=0;\n"
    "  function go(){\n"
    "   var num=th.getAttribute('data-type')==='num';\n"
    "   var asc=th.getAttribute('aria-sort')!=='ascending';\n"
    "   Array.prototype.forEach.call(hs,function(h){h.removeAttribute('aria-sort');});\n"
    "   th.setAttribute('aria-sort',asc?'ascending':'descending');\n"
    "   var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\n"
    "   rows.sort(function(r,s){var a=key(r.cells[i],num),c=key(s.cells[i],num);\n"
    "    if(a===null||c===null)return a===null?(c===null?0:1):-1;\n"
    "    var d=a<c?-1:a>c?1:0;return asc?d:-d;});\n"
    "   var f=document.createDocumentFragment();"
    "rows.forEach(function(r){f.appendChild(r);});b.appendChild(f);\n"
    "  }\n"
    "  th.addEventListener('click',go);\n"
    "  th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' ')"
    "{e.preventDefault();go();}});\n"
    " });\n"
    "});\n"
    "})();\n";

static void run_swatch(kevo_writer *w, size_t r)
{
    kevo_writer_printf(w, "<span class=\"sw\" style=\"background:%s\"></span>", run_colors[r]);
}

static void page_head(kevo_writer *w, const run_view *v, size_t n, const char *nonce,
                      const char *store_path)
{
    kevo_buf title = {0};
    kevo_buf_puts(&title, "kevo report: run ");
    for (size_t r = 0; r < n; r++)
        kevo_buf_printf(&title, "%s%lld", r ? " vs run " : "", (long long)v[r].m->run_id);
    kevo_writer_puts(w,
                     "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n");
    kevo_writer_printf(w,
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'; img-src data:; script-src 'nonce-%s'\">\n",
                       nonce);
    kevo_writer_puts(w, "<meta name=\"generator\" content=\"kevo " KEVO_VERSION "\">\n<title>");
    kevo_writer_escape(w, kevo_buf_cstr(&title), (size_t)-1);
    kevo_writer_puts(w, "</title>\n<style>\n");
    kevo_writer_puts(w, page_css);
    kevo_writer_puts(w, "</style>\n</head>\n<body>\n<main>\n<header>\n<h1>");
    kevo_writer_escape(w, kevo_buf_cstr(&title), (size_t)-1);
    kevo_writer_puts(w, "</h1>\n<div class=\"muted\">");
    char now[32];
    kevo_iso_time(now, sizeof(now));
    kevo_writer_puts(w, "store <code>");
    kevo_writer_escape(w, store_path, (size_t)-1);
    kevo_writer_puts(w, "</code> &middot; generated ");
    kevo_writer_escape(w, now, (size_t)-1);
    kevo_writer_puts(w, " by kevo " KEVO_VERSION "</div>\n<nav>"
                        "<a href=\"#summary\">Summary</a><a href=\"#figures\">Figures</a>"
                        "<a href=\"#tasks\">Tasks</a><a href=\"#memory\">Memory</a>"
                        "<a href=\"#details\">Details</a></nav>\n</header>\n");
    kevo_buf_free(&title);
}

static void page_foot(kevo_writer *w, const char *nonce)
{
    kevo_writer_printf(w, "</main>\n<script nonce=\"%s\">\n", nonce);
    kevo_writer_puts(w, page_js);
    kevo_writer_puts(w, "</script>\n</body>\n</html>\n");
}

/* ---- summary ---------------------------------------------------------- */

typedef enum { CARD_COUNT, CARD_RATE, CARD_SPEEDUP, CARD_NUMBER, CARD_SECONDS } card_kind;

static void card(kevo_writer *w, const char *key, const char *label, double v, card_kind kind,
                 const char *sub)
{
    char text[64];
    switch (kind) {
    case CARD_RATE:
        if (isfinite(v))
            snprintf(text, sizeof(text), "%.1f%%", 100 * v);
        else
            snprintf(text, sizeof(text), "n/a");
        break;
    case CARD_SPEEDUP:
        fmt_speedup(text, sizeof(text), v);
        break;
    case CARD_NUMBER:
        if (isfinite(v) && v > 0)
            snprintf(text, sizeof(text), "%.1f", v);
        else
            snprintf(text, sizeof(text), "n/a");
        break;
    case CARD_SECONDS:
        fmt_duration(text, sizeof(text), v);
        break;
    default:
        fmt_count(text, sizeof(text), v);
        break;
    }
    kevo_writer_puts(w, "<div class=\"card\"><div class=\"k\">");
    kevo_writer_escape(w, label, (size_t)-1);
    kevo_writer_printf(w, "</div><div class=\"v\" data-metric=\"%s\" data-value=\"", key);
    put_exact(w, v);
    kevo_writer_puts(w, "\">");
    kevo_writer_escape(w, text, (size_t)-1);
    kevo_writer_puts(w, "</div>");
    if (sub) {
        kevo_writer_puts(w, "<div class=\"s\">");
        kevo_writer_escape(w, sub, (size_t)-1);
        kevo_writer_puts(w, "</div>");
    }
    kevo_writer_puts(w, "</div>\n");
}

static void write_summary(kevo_writer *w, const run_view *views, size_t n)
{
    kevo_writer_puts(w, "<h2 id=\"summary\">Summary</h2>\n");
    for (size_t r = 0; r < n; r++) {
        const kevo_run_metrics *m = views[r].m;
        char sub[160], a[32], b[32], c[32], started[40];
        fmt_ms_time(started, sizeof(started), views[r].run ? views[r].run->started : 0);
        kevo_writer_puts(w, "<h3>");
        if (n > 1)
            run_swatch(w, r);
        kevo_writer_printf(w, "Run %lld</h3>\n<div class=\"muted\">status ", (long long)m->run_id);
        kevo_writer_escape(w, m->status, (size_t)-1);
        kevo_writer_puts(w, " &middot; started ");
        kevo_writer_escape(w, started, (size_t)-1);
        kevo_writer_printf(w, "</div>\n<div class=\"cards\" data-run=\"%lld\">\n",
                           (long long)m->run_id);
        snprintf(sub, sizeof(sub), "%d attempts", m->attempts);
        card(w, "tasks", "tasks", m->tasks, CARD_COUNT, sub);
        card(w, "compiled_rate", "compiled rate (per task)", m->compiled_rate, CARD_RATE, NULL);
        snprintf(sub, sizeof(sub), "%.1f%% of attempts", 100 * m->attempt_correct_rate);
        card(w, "correct_rate", "correct rate (per task)", m->correct_rate, CARD_RATE, sub);
        snprintf(sub, sizeof(sub), "fast_2 (>2x) %.1f%%", 100 * m->fast_2);
        card(w, "fast_1", "fast_1 (correct and faster)", m->fast_1, CARD_RATE, sub);
        card(w, "geomean_speedup", "geomean speedup (correct tasks)", m->geomean_speedup,
             CARD_SPEEDUP, "vs the -O3 reference");
        fmt_speedup(a, sizeof(a), m->iqr_low);
        fmt_speedup(b, sizeof(b), m->iqr_high);
        snprintf(sub, sizeof(sub), "IQR %s - %s", a, b);
        card(w, "median_speedup_vs_first_draft", "median speedup over first draft",
             m->median_speedup_vs_first_draft, CARD_SPEEDUP, sub);
        card(w, "mean_iterations_to_first_correct", "iterations to first correct (mean)",
             m->mean_iters_to_first_correct, CARD_NUMBER, NULL);
        fmt_count(a, sizeof(a), (double)m->tokens_prompt);
        fmt_count(b, sizeof(b), (double)m->tokens_completion);
        fmt_count(c, sizeof(c), m->tokens_per_solved_task);
        snprintf(sub, sizeof(sub), "prompt %s, completion %s; %s per solved task", a, b, c);
        card(w, "tokens_total", "tokens", (double)(m->tokens_prompt + m->tokens_completion),
             CARD_COUNT, sub);
        card(w, "wall_s", "wall time", m->wall_s, CARD_SECONDS, NULL);
        kevo_writer_puts(w, "</div>\n<span hidden>");
        /* the split token counts, for tools that read the page */
        kevo_writer_printf(w,
                           "<span data-metric=\"tokens_prompt\" data-value=\"%lld\"></span>"
                           "<span data-metric=\"tokens_completion\" data-value=\"%lld\"></span>"
                           "<span data-metric=\"fast_2\" data-value=\"",
                           (long long)m->tokens_prompt, (long long)m->tokens_completion);
        put_exact(w, m->fast_2);
        kevo_writer_puts(w, "\"></span><span data-metric=\"attempts\" data-value=\"");
        put_exact(w, m->attempts);
        kevo_writer_puts(w, "\"></span></span>\n");

        /* the configuration, pretty-printed when it parses */
        cJSON *cfg = cJSON_Parse(m->config_json);
        char *pretty = cfg ? cJSON_Print(cfg) : NULL;
        const char *shown = pretty ? pretty : m->config_json;
        kevo_writer_printf(w, "<details%s><summary>configuration (config JSON)</summary><pre>",
                           strlen(shown) < 1500 ? " open" : "");
        put_cut(w, shown, SOURCE_MAX_BYTES, SOURCE_MAX_LINES);
        kevo_writer_puts(w, "</pre></details>\n");
        free(pretty);
        cJSON_Delete(cfg);
    }
}

/* ---- figures ---------------------------------------------------------- */

#define FIG_W 540.0
#define FIG_RIGHT 16.0

/* A plot `area_h` px tall whose top margin holds the legend. */
static kevo_svg_plot plot_frame(double width, double area_h, double left,
                                const kevo_svg_legend_entry *leg, size_t nleg)
{
    kevo_svg_plot p = {.width = width, .left = left, .right = FIG_RIGHT, .bottom = 44};
    size_t rows = kevo_svg_legend_rows(leg, nleg, width - left - FIG_RIGHT);
    p.top = 12 + 16 * (double)rows + 8;
    p.height = p.top + area_h + p.bottom;
    return p;
}

static void plot_legend(kevo_writer *w, const kevo_svg_plot *p, const kevo_svg_legend_entry *leg,
                        size_t nleg)
{
    kevo_svg_legend(w, p->left, 20, p->width - p->left - p->right, leg, nleg);
}

static int max_iters(const run_view *views, size_t n)
{
    int t = 1;
    for (size_t r = 0; r < n; r++)
        if (views[r].iters > t)
            t = views[r].iters;
    return t;
}

static void run_label(char *buf, size_t len, const run_view *v, size_t n, const char *what)
{
    if (n > 1)
        snprintf(buf, len, "run %lld %s", (long long)v->m->run_id, what);
    else
        snprintf(buf, len, "%s", what);
}

static void figure_open(kevo_writer *w, const char *id, bool wide)
{
    kevo_writer_printf(w, "<figure id=\"%s\"%s>\n", id, wide ? " class=\"wide\"" : "");
}

static void figure_close(kevo_writer *w, const char *caption)
{
    kevo_writer_puts(w, "<figcaption>");
    kevo_writer_escape(w, caption, (size_t)-1);
    kevo_writer_puts(w, "</figcaption>\n</figure>\n");
}

static void empty_note(kevo_writer *w, const kevo_svg_plot *p, const char *text)
{
    kevo_svg_text(w, (p->left + p->width - p->right) / 2, (p->top + p->height - p->bottom) / 2,
                  "text-anchor=\"middle\" class=\"empty\"", text);
}

static void ref_line(kevo_writer *w, double x1, double x2, double y1, double y2)
{
    kevo_writer_puts(w, "<line class=\"ref\" x1=\"");
    kevo_writer_num(w, x1);
    kevo_writer_puts(w, "\" x2=\"");
    kevo_writer_num(w, x2);
    kevo_writer_puts(w, "\" y1=\"");
    kevo_writer_num(w, y1);
    kevo_writer_puts(w, "\" y2=\"");
    kevo_writer_num(w, y2);
    kevo_writer_puts(w, "\"/>\n");
}

static int fig_cumulative(kevo_writer *w, const run_view *views, size_t n)
{
    int T = max_iters(views, n);
    kevo_svg_legend_entry leg[2 * HTML_MAX_RUNS];
    char labels[2 * HTML_MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "correct");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "compiled");
        leg[2 * r] = (kevo_svg_legend_entry){labels[2 * r], run_colors[r], NULL, false, 0};
        leg[2 * r + 1] = (kevo_svg_legend_entry){labels[2 * r + 1], run_colors[r], "6 4", false, 2};
    }
    kevo_svg_plot p = plot_frame(FIG_W, 220, 56, leg, 2 * n);
    p.x = (kevo_svg_axis){0.5, T + 0.5, false};
    p.y = (kevo_svg_axis){0, 1, false};
    kevo_svg_tick xt[16], yt[16];
    size_t nx = kevo_svg_ticks_iter(xt, 16, T),
           ny = kevo_svg_ticks(yt, 16, &p.y, kevo_svg_label_percent);
    double *xs = calloc((size_t)T, sizeof(double)), *yc = calloc((size_t)T, sizeof(double)),
           *yp = calloc((size_t)T, sizeof(double));
    if (!xs || !yc || !yp) {
        free(xs);
        free(yc);
        free(yp);
        return kevo_error_set(KEVO_ENOMEM, "out of memory drawing a figure");
    }
    figure_open(w, "fig-rates", false);
    kevo_svg_begin(w, &p, "cumulative correct and compiled rate by iteration");
    kevo_svg_axes(w, &p, xt, nx, yt, ny, "iteration", "share of tasks");
    for (size_t r = 0; r < n; r++) {
        const run_view *v = &views[r];
        for (int i = 0; i < T; i++) {
            size_t cc = 0, cp = 0;
            for (size_t k = 0; k < v->m->ntasks; k++) {
                cc += v->tasks[k].first_correct && v->tasks[k].first_correct <= i + 1;
                cp += v->tasks[k].first_compiled && v->tasks[k].first_compiled <= i + 1;
            }
            xs[i] = i + 1;
            yc[i] = v->m->ntasks ? (double)cc / (double)v->m->ntasks : 0;
            yp[i] = v->m->ntasks ? (double)cp / (double)v->m->ntasks : 0;
        }
        int Tr = v->iters > 0 ? v->iters : 1;
        kevo_svg_line(w, &p, xs, yp, (size_t)Tr, run_colors[r],
                      "stroke-width=\"2\" stroke-dasharray=\"6 4\"", T <= 40);
        kevo_svg_line(w, &p, xs, yc, (size_t)Tr, run_colors[r], "stroke-width=\"2.5\"", T <= 40);
    }
    plot_legend(w, &p, leg, 2 * n);
    kevo_svg_end(w);
    figure_close(w, "Cumulative correct rate (solid) and compiled rate (dashed): the share of "
                    "tasks with a correct / compiled kernel within the first i iterations.");
    free(xs);
    free(yc);
    free(yp);
    return 0;
}

/* Task t's best speedup so far at each of the T iterations into b[0..T);
 * NAN before its first correct kernel. */
static void task_best_so_far(double *b, int T, const run_view *v, const task_view *t)
{
    for (int i = 0; i < T; i++)
        b[i] = 0;
    for (size_t j = 0; j < t->natt; j++) {
        const kevo_attempt *a = &v->list->attempts[t->att[j]];
        int it = clamp_iter(a->iteration);
        if (it < T && a->verdict == KEVO_VERDICT_CORRECT && good_speedup(a->speedup) &&
            a->speedup > b[it])
            b[it] = a->speedup;
    }
    double best = 0;
    for (int i = 0; i < T; i++) {
        best = fmax(best, b[i]);
        b[i] = best > 0 ? best : NAN;
    }
}

static int fig_trajectory(kevo_writer *w, const run_view *views, size_t n)
{
    int T = max_iters(views, n);
    double *xs = calloc((size_t)T, sizeof(double)), *b = calloc((size_t)T, sizeof(double));
    double *ls = calloc((size_t)T, sizeof(double)), *gm = calloc((size_t)T, sizeof(double));
    size_t *cnt = calloc((size_t)T, sizeof(size_t));
    if (!xs || !b || !ls || !gm || !cnt) {
        free(xs);
        free(b);
        free(ls);
        free(gm);
        free(cnt);
        return kevo_error_set(KEVO_ENOMEM, "out of memory drawing a figure");
    }
    /* first pass: the y domain */
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < T; i++)
        xs[i] = i + 1;
    for (size_t r = 0; r < n; r++)
        for (size_t k = 0; k < views[r].m->ntasks; k++) {
            task_best_so_far(b, T, &views[r], &views[r].tasks[k]);
            for (int i = 0; i < T; i++)
                if (good_speedup(b[i])) {
                    lo = fmin(lo, b[i]);
                    hi = fmax(hi, b[i]);
                }
        }
    kevo_svg_legend_entry leg[2 * HTML_MAX_RUNS];
    char labels[2 * HTML_MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "one task");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "geomean");
        leg[2 * r] = (kevo_svg_legend_entry){labels[2 * r], run_colors[r], NULL, false, 1.2};
        leg[2 * r + 1] =
            (kevo_svg_legend_entry){labels[2 * r + 1], run_colors[r], NULL, false, 3.5};
    }
    kevo_svg_plot p = plot_frame(FIG_W, 220, 56, leg, 2 * n);
    p.x = (kevo_svg_axis){0.5, T + 0.5, false};
    bool any = hi > 0;
    kevo_svg_log_domain(&p.y, any ? lo : 0, any ? hi : 0);
    kevo_svg_tick xt[16], yt[32];
    size_t nx = kevo_svg_ticks_iter(xt, 16, T),
           ny = kevo_svg_ticks(yt, 32, &p.y, kevo_svg_label_speedup);
    figure_open(w, "fig-trajectory", false);
    kevo_svg_begin(w, &p, "best-so-far speedup per task over iterations, log scale");
    kevo_svg_axes(w, &p, xt, nx, yt, ny, "iteration", "best speedup so far");
    double y1 = kevo_svg_py(&p, 1.0);
    ref_line(w, p.left, p.width - p.right, y1, y1);
    /* second pass: one thin line per task, then the geometric mean over
     * the tasks correct so far */
    for (size_t r = 0; r < n; r++) {
        const run_view *v = &views[r];
        int Tr = v->iters > 0 ? v->iters : 1;
        char attrs[96];
        snprintf(attrs, sizeof(attrs), "stroke-width=\"1.2\" stroke-opacity=\"%.2f\"",
                 v->m->ntasks > 50 ? 0.25 : 0.55);
        for (int i = 0; i < T; i++) {
            ls[i] = 0;
            cnt[i] = 0;
        }
        for (size_t k = 0; k < v->m->ntasks; k++) {
            task_best_so_far(b, T, v, &v->tasks[k]);
            kevo_svg_line(w, &p, xs, b, (size_t)Tr, run_colors[r], attrs, false);
            for (int i = 0; i < Tr; i++)
                if (good_speedup(b[i])) {
                    ls[i] += log(b[i]);
                    cnt[i]++;
                }
        }
        for (int i = 0; i < Tr; i++)
            gm[i] = cnt[i] ? exp(ls[i] / (double)cnt[i]) : NAN;
        kevo_svg_line(w, &p, xs, gm, (size_t)Tr, run_colors[r], "stroke-width=\"3.5\"", false);
    }
    if (!any)
        empty_note(w, &p, "no correct kernel yet");
    plot_legend(w, &p, leg, 2 * n);
    kevo_svg_end(w);
    figure_close(w, "Speedup trajectory: each thin line is one task's best speedup so far "
                    "(from its first correct kernel on), log scale; the bold line is their "
                    "geometric mean over the tasks correct by that iteration.");
    free(xs);
    free(b);
    free(ls);
    free(gm);
    free(cnt);
    return 0;
}

static int fig_tokens(kevo_writer *w, const run_view *views, size_t n)
{
    int T = max_iters(views, n);
    double *tp = calloc((size_t)T * n, sizeof(double)), *tc = calloc((size_t)T * n, sizeof(double));
    if (!tp || !tc) {
        free(tp);
        free(tc);
        return kevo_error_set(KEVO_ENOMEM, "out of memory drawing a figure");
    }
    double maxv = 0;
    for (size_t r = 0; r < n; r++) {
        const kevo_attempt_list *l = views[r].list;
        for (size_t i = 0; i < l->n; i++) {
            int it = clamp_iter(l->attempts[i].iteration);
            double a = (double)l->attempts[i].tokens_prompt,
                   b = (double)l->attempts[i].tokens_completion;
            tp[r * (size_t)T + (size_t)it] += a > 0 ? a : 0;
            tc[r * (size_t)T + (size_t)it] += b > 0 ? b : 0;
        }
        for (int i = 0; i < T; i++)
            maxv = fmax(maxv, tp[r * (size_t)T + (size_t)i] + tc[r * (size_t)T + (size_t)i]);
    }
    kevo_svg_legend_entry leg[2 * HTML_MAX_RUNS];
    char labels[2 * HTML_MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "prompt");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "completion");
        leg[2 * r] = (kevo_svg_legend_entry){labels[2 * r], run_colors[r], NULL, true, 0};
        leg[2 * r + 1] = (kevo_svg_legend_entry){labels[2 * r + 1], run_light[r], NULL, true, 0};
    }
    kevo_svg_plot p = plot_frame(FIG_W, 220, 56, leg, 2 * n);
    p.x = (kevo_svg_axis){0.5, T + 0.5, false};
    kevo_svg_zero_domain(&p.y, maxv);
    kevo_svg_tick xt[16], yt[16];
    size_t nx = kevo_svg_ticks_iter(xt, 16, T),
           ny = kevo_svg_ticks(yt, 16, &p.y, kevo_svg_label_count);
    figure_open(w, "fig-tokens", false);
    kevo_svg_begin(w, &p, "tokens per iteration");
    kevo_svg_axes(w, &p, xt, nx, yt, ny, "iteration", "tokens (all tasks)");
    double unit = kevo_svg_px(&p, 1.5) - kevo_svg_px(&p, 0.5);
    double bw = unit * 0.8 / (double)n;
    for (size_t r = 0; r < n; r++)
        for (int i = 0; i < T; i++) {
            double a = tp[r * (size_t)T + (size_t)i], b = tc[r * (size_t)T + (size_t)i];
            if (!(a + b > 0))
                continue;
            double x = kevo_svg_px(&p, i + 1) - unit * 0.4 + bw * (double)r;
            double y0 = kevo_svg_py(&p, 0), ya = kevo_svg_py(&p, a), yb = kevo_svg_py(&p, a + b);
            kevo_writer_printf(w, "<g><title>iteration %d: %.0f prompt + %.0f completion tokens",
                               i + 1, a, b);
            if (n > 1)
                kevo_writer_printf(w, " (run %lld)", (long long)views[r].m->run_id);
            kevo_writer_puts(w, "</title><rect x=\"");
            kevo_writer_num(w, x);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, ya);
            kevo_writer_puts(w, "\" width=\"");
            kevo_writer_num(w, bw);
            kevo_writer_puts(w, "\" height=\"");
            kevo_writer_num(w, y0 - ya);
            kevo_writer_printf(w, "\" fill=\"%s\"/><rect x=\"", run_colors[r]);
            kevo_writer_num(w, x);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, yb);
            kevo_writer_puts(w, "\" width=\"");
            kevo_writer_num(w, bw);
            kevo_writer_puts(w, "\" height=\"");
            kevo_writer_num(w, ya - yb);
            kevo_writer_printf(w, "\" fill=\"%s\"/></g>\n", run_light[r]);
        }
    if (!(maxv > 0))
        empty_note(w, &p, "no tokens recorded (the built-in generator spends none)");
    plot_legend(w, &p, leg, 2 * n);
    kevo_svg_end(w);
    figure_close(w, "Tokens per iteration, summed over tasks: prompt (solid) and completion "
                    "(light) stacked.");
    free(tp);
    free(tc);
    return 0;
}

/* One row of the speedup figure: a task and its best speedup in each run
 * (0 = none). */
typedef struct speed_row {
    const char *task;
    double s[HTML_MAX_RUNS];
} speed_row;

static int cmp_speed_row(const void *a, const void *b, void *ctx)
{
    const speed_row *x = a, *y = b;
    size_t nruns = *(const size_t *)ctx;
    for (size_t r = 0; r < nruns; r++) {
        if (x->s[r] != y->s[r])
            return x->s[r] > y->s[r] ? -1 : 1; /* missing (0) last */
    }
    return strcmp(x->task, y->task);
}

static int cmp_name_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int fig_speedups(kevo_writer *w, const run_view *views, size_t n)
{
    size_t cap = 0;
    for (size_t r = 0; r < n; r++)
        cap += views[r].m->ntasks;
    speed_row *rows = calloc(cap + 1, sizeof(*rows));
    const char **names = calloc(cap + 1, sizeof(*names));
    if (!rows || !names) {
        free(rows);
        free(names);
        return kevo_error_set(KEVO_ENOMEM, "out of memory drawing a figure");
    }
    /* the union of task names, each once */
    size_t nnames = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t k = 0; k < views[r].m->ntasks; k++)
            names[nnames++] = views[r].m->per_task[k].task;
    qsort(names, nnames, sizeof(*names), cmp_name_ptr);
    size_t nrows = 0, unsolved = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < nnames; i++) {
        if (i > 0 && !strcmp(names[i], names[i - 1]))
            continue;
        speed_row row = {.task = names[i]};
        bool any = false;
        for (size_t r = 0; r < n; r++) {
            long k = view_find(&views[r], names[i]);
            double s =
                k >= 0 && views[r].tasks[k].tm->correct ? views[r].tasks[k].tm->best_speedup : 0;
            row.s[r] = good_speedup(s) ? s : 0;
            if (row.s[r] > 0) {
                any = true;
                lo = fmin(lo, row.s[r]);
                hi = fmax(hi, row.s[r]);
            }
        }
        if (any)
            rows[nrows++] = row;
        else
            unsolved++;
    }
    qsort_r(rows, nrows, sizeof(*rows), cmp_speed_row, &n);

    /* up to 40 tasks: a named row each; more: the rows share 900 px */
    bool labels = nrows <= 40;
    bool wide = nrows > 16;
    double row_h = labels ? (n > 1 ? 20 : 16) : 900.0 / (double)nrows;
    double area = nrows ? fmin((double)nrows * row_h, 900) : 120;
    if (nrows && area < 48)
        area = 48;
    if (nrows)
        row_h = area / (double)nrows;
    kevo_svg_legend_entry leg[HTML_MAX_RUNS];
    char lab[HTML_MAX_RUNS][48];
    size_t nleg = n;
    if (n > 1) {
        for (size_t r = 0; r < n; r++) {
            snprintf(lab[r], sizeof(lab[r]), "run %lld", (long long)views[r].m->run_id);
            leg[r] = (kevo_svg_legend_entry){lab[r], run_colors[r], NULL, true, 0};
        }
    } else {
        leg[0] = (kevo_svg_legend_entry){"faster than the reference", run_colors[0], NULL, true, 0};
        leg[1] = (kevo_svg_legend_entry){"slower", run_colors[1], NULL, true, 0};
        nleg = 2;
    }
    kevo_svg_plot p = plot_frame(wide ? 2 * FIG_W : FIG_W, area, labels ? 170 : 56, leg, nleg);
    kevo_svg_log_domain(&p.x, nrows ? lo : 0, nrows ? hi : 0);
    p.y = (kevo_svg_axis){0, 1, false};
    kevo_svg_tick xt[32];
    size_t nx = kevo_svg_ticks(xt, 32, &p.x, kevo_svg_label_speedup);
    figure_open(w, "fig-speedups", wide);
    kevo_svg_begin(w, &p, "best speedup per task, log scale");
    kevo_svg_axes(w, &p, xt, nx, NULL, 0, "best speedup over the reference (log scale)", NULL);
    double x1 = kevo_svg_px(&p, 1.0);
    ref_line(w, x1, x1, p.top, p.height - p.bottom);
    /* named rows get a gap between them; unnamed rows touch, so that a
     * thousand sub-pixel bars read as one distribution, without moire */
    double fill = labels ? 0.8 : 1.0;
    double bar_h = row_h * fill / (double)n;
    kevo_writer_puts(w, labels ? "<g>" : "<g shape-rendering=\"crispEdges\">");
    for (size_t i = 0; i < nrows; i++) {
        double y = p.top + row_h * (double)i + row_h * (1 - fill) / 2;
        if (labels) {
            bool cut = false;
            size_t len = kevo_text_cut(rows[i].task, 24, 1, &cut);
            kevo_writer_puts(w, "<text text-anchor=\"end\" x=\"");
            kevo_writer_num(w, p.left - 6);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, y + row_h * 0.4 + 4);
            kevo_writer_puts(w, "\">");
            kevo_writer_escape(w, rows[i].task, len);
            if (cut)
                kevo_writer_puts(w, "&#8230;");
            kevo_writer_puts(w, "</text>");
        }
        for (size_t r = 0; r < n; r++) {
            double s = rows[i].s[r];
            if (!(s > 0))
                continue;
            double xs = kevo_svg_px(&p, s);
            double xa = fmin(xs, x1), width = fmax(fabs(xs - x1), 1.5);
            const char *color = n > 1 ? run_colors[r] : s >= 1 ? run_colors[0] : run_colors[1];
            char sp[32];
            fmt_speedup(sp, sizeof(sp), s);
            kevo_writer_puts(w, "<rect x=\"");
            kevo_writer_num(w, xa);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, y + bar_h * (double)r);
            kevo_writer_puts(w, "\" width=\"");
            kevo_writer_num(w, width);
            kevo_writer_puts(w, "\" height=\"");
            /* unnamed rows overlap a little: no hairline seams between them */
            kevo_writer_num(w, labels ? bar_h : bar_h + 0.5);
            kevo_writer_printf(w, "\" fill=\"%s\"><title>", color);
            kevo_writer_escape(w, rows[i].task, (size_t)-1);
            if (n > 1)
                kevo_writer_printf(w, " (run %lld)", (long long)views[r].m->run_id);
            kevo_writer_printf(w, ": %s</title></rect>", sp);
        }
        kevo_writer_puts(w, "\n");
    }
    kevo_writer_puts(w, "</g>\n");
    if (!nrows)
        empty_note(w, &p, "no task has a correct kernel");
    plot_legend(w, &p, leg, nleg);
    kevo_svg_end(w);
    char cap_text[320];
    snprintf(cap_text, sizeof(cap_text),
             "Best speedup of each task with a correct kernel over the -O3 reference, sorted, on "
             "a log axis (the dashed line is 1x). %zu task%s without a correct kernel %s not "
             "shown.%s",
             unsolved, unsolved == 1 ? "" : "s", unsolved == 1 ? "is" : "are",
             labels ? "" : " Too many tasks to name each row: hover a bar for its task.");
    figure_close(w, cap_text);
    free(rows);
    free(names);
    return 0;
}

/* ---- per-task table --------------------------------------------------- */

static const char *task_status(const task_view *t)
{
    return t->tm->correct ? "correct" : t->tm->compiled ? "compiled" : "failed";
}

static void td_num(kevo_writer *w, double sort, bool have, const char *text)
{
    kevo_writer_puts(w, "<td data-v=\"");
    if (have)
        put_exact(w, sort);
    kevo_writer_puts(w, "\">");
    kevo_writer_escape(w, have ? text : "n/a", (size_t)-1);
    kevo_writer_puts(w, "</td>");
}

static void write_table(kevo_writer *w, const run_view *v, size_t r, size_t n)
{
    kevo_writer_puts(w, "<h3>");
    if (n > 1)
        run_swatch(w, r);
    kevo_writer_printf(w, "Run %lld: %zu tasks</h3>\n", (long long)v->m->run_id, v->m->ntasks);
    kevo_writer_puts(
        w, "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>"
           "<th class=\"l\">task</th><th class=\"l\">status</th>"
           "<th data-type=\"num\">attempts</th>"
           "<th data-type=\"num\" title=\"1-based iteration of the first correct kernel\">"
           "iterations to correct</th>"
           "<th data-type=\"num\">best speedup</th>"
           "<th data-type=\"num\" title=\"best speedup / speedup of the first correct kernel\">"
           "vs first draft</th>"
           "<th data-type=\"num\" title=\"median latency of the fastest correct kernel\">"
           "best latency</th>"
           "<th data-type=\"num\" title=\"achieved at the best latency, from task.json flops; "
           "see % of roof\">GFLOP/s</th>"
           "<th data-type=\"num\" title=\"achieved at the best latency, from task.json bytes\">"
           "GB/s</th><th data-type=\"num\" title=\"achieved / roofline bound at the "
           "kernel's arithmetic intensity, from the peaks `kevo calibrate` measured\">"
           "% of roof</th><th data-type=\"num\">tokens</th></tr></thead>\n<tbody>\n");
    kevo_peaks peaks;
    bool have_peaks = kevo_peaks_load(&peaks) == 0;
    for (size_t k = 0; k < v->m->ntasks; k++) {
        const task_view *t = &v->tasks[k];
        const kevo_task_metrics *tm = t->tm;
        const char *st = task_status(t);
        char text[64];
        kevo_writer_puts(w, "<tr><td class=\"l\" data-v=\"");
        kevo_writer_escape(w, tm->task, (size_t)-1);
        kevo_writer_printf(w, "\"><a href=\"#r%lld-t%zu\">", (long long)v->m->run_id, k);
        kevo_writer_escape(w, tm->task, (size_t)-1);
        kevo_writer_printf(w, "</a></td><td class=\"l st st-%s\" data-v=\"%d\">%s</td>", st,
                           tm->correct    ? 2
                           : tm->compiled ? 1
                                          : 0,
                           st);
        kevo_writer_printf(w, "<td>%d</td>", tm->attempts);
        snprintf(text, sizeof(text), "%d", tm->first_correct_iter);
        td_num(w, tm->first_correct_iter, tm->correct, text);
        bool sp = tm->correct && good_speedup(tm->best_speedup);
        fmt_speedup(text, sizeof(text), tm->best_speedup);
        td_num(w, tm->best_speedup, sp, text);
        bool vf = sp && good_speedup(tm->speedup_vs_first);
        fmt_speedup(text, sizeof(text), tm->speedup_vs_first);
        td_num(w, tm->speedup_vs_first, vf, text);
        bool lat = tm->correct && isfinite(tm->best_us) && tm->best_us > 0;
        snprintf(text, sizeof(text), "%.1f us", tm->best_us);
        td_num(w, tm->best_us, lat, text);
        double gf = lat && t->flops > 0 ? t->flops / (tm->best_us * 1e-6) / 1e9 : 0;
        double gb = lat && t->bytes > 0 ? t->bytes / (tm->best_us * 1e-6) / 1e9 : 0;
        snprintf(text, sizeof(text), "%.2f", gf);
        td_num(w, gf, gf > 0 && isfinite(gf), text);
        snprintf(text, sizeof(text), "%.2f", gb);
        td_num(w, gb, gb > 0 && isfinite(gb), text);
        /* roofline: the bound at this intensity is min(fp32 peak, AI x bandwidth) */
        double roof = 0, frac = 0;
        if (have_peaks && gb > 0 && t->bytes > 0) {
            double ai = t->flops / t->bytes;
            roof = ai * peaks.mem_gbs < peaks.fp32_gflops ? ai * peaks.mem_gbs : peaks.fp32_gflops;
            frac = t->flops > 0 && roof > 0 ? gf / roof : gb / peaks.mem_gbs;
        }
        snprintf(text, sizeof(text), "%.0f%%", 100 * frac);
        td_num(w, frac, frac > 0 && isfinite(frac), text);
        double tok = (double)(tm->tokens_prompt + tm->tokens_completion);
        fmt_count(text, sizeof(text), tok);
        td_num(w, tok, true, text);
        kevo_writer_puts(w, "</tr>\n");
    }
    kevo_writer_puts(w, "</tbody></table></div>\n");
}

/* ---- memory view ------------------------------------------------------ */

typedef struct use_key {
    int64_t item;
    int stage;
    int run;
} use_key;

static int cmp_use(const void *a, const void *b)
{
    const use_key *x = a, *y = b;
    if (x->item != y->item)
        return x->item < y->item ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage - y->stage;
    return x->run - y->run;
}

/* How many used edges (item, stage) has in run r: count of equal keys. */
static size_t use_count(const use_key *keys, size_t n, int64_t item, int stage, int run)
{
    use_key k = {item, stage, run};
    size_t lo = 0, hi = n;
    while (lo < hi) { /* lower bound */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_use(&keys[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t c = 0;
    while (lo + c < n && cmp_use(&keys[lo + c], &k) == 0)
        c++;
    return c;
}

typedef struct q_entry {
    const kevo_item *item;
    double q;
    int64_t updates;
} q_entry;

static int cmp_q_desc(const void *a, const void *b)
{
    const q_entry *x = a, *y = b;
    if (x->q != y->q)
        return x->q > y->q ? -1 : 1;
    if (x->updates != y->updates)
        return x->updates > y->updates ? -1 : 1;
    return x->item->id < y->item->id ? -1 : x->item->id > y->item->id;
}

static void q_rows(kevo_writer *w, const q_entry *e, size_t from, size_t to, const use_key *keys,
                   size_t nkeys, kevo_stage stage, size_t nruns)
{
    for (size_t i = from; i < to; i++) {
        kevo_writer_printf(w, "<tr><td data-v=\"%.17g\">%.3f</td><td>%lld</td>", e[i].q, e[i].q,
                           (long long)e[i].updates);
        for (size_t r = 0; r < nruns; r++)
            kevo_writer_printf(w, "<td>%zu</td>",
                               use_count(keys, nkeys, e[i].item->id, (int)stage, (int)r));
        kevo_writer_printf(w, "<td class=\"l\">%s</td><td class=\"l\">",
                           kevo_item_kind_name(e[i].item->kind));
        bool cut = false;
        size_t len = kevo_text_cut(e[i].item->title, 100, 1, &cut);
        kevo_writer_escape(w, e[i].item->title, len);
        if (cut)
            kevo_writer_puts(w, "&#8230;");
        kevo_writer_puts(w, "</td><td class=\"l\">");
        kevo_writer_escape(w, e[i].item->task ? e[i].item->task : e[i].item->category, (size_t)-1);
        kevo_writer_puts(w, "</td></tr>\n");
    }
}

static int write_memory(kevo_writer *w, kevo_memory *mem, const run_view *views, size_t n)
{
    int error = 0;
    use_key *keys = NULL;
    size_t nkeys = 0, ckeys = 0;
    kevo_item_list *items = NULL;
    q_entry *e = NULL;
    for (size_t r = 0; r < n; r++) {
        const kevo_attempt_list *l = views[r].list;
        for (size_t i = 0; i < l->n; i++) {
            kevo_used_item *used = NULL;
            size_t nused = 0;
            if ((error = kevo_memory_attempt_used(&used, &nused, mem, l->attempts[i].id)) < 0)
                goto done;
            if (nkeys + nused > ckeys) {
                size_t cap = ckeys ? ckeys : 256;
                while (cap < nkeys + nused)
                    cap *= 2;
                use_key *p = realloc(keys, cap * sizeof(*p));
                if (!p) {
                    free(used);
                    error = kevo_error_set(KEVO_ENOMEM, "out of memory");
                    goto done;
                }
                keys = p;
                ckeys = cap;
            }
            for (size_t u = 0; u < nused; u++)
                keys[nkeys++] = (use_key){used[u].item_id, (int)used[u].stage, (int)r};
            free(used);
        }
    }
    if (nkeys)
        qsort(keys, nkeys, sizeof(*keys), cmp_use);
    kevo_item_filter f = {.no_body = 1};
    if ((error = kevo_memory_item_list(&items, mem, &f)) < 0)
        goto done;
    e = calloc(items->n + 1, sizeof(*e));
    if (!e) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_writer_puts(w, "<h2 id=\"memory\">Memory</h2>\n<p class=\"muted\">Q-values are the "
                        "store's, learned over every run that used it; the use counts are "
                        "the <code>used</code> edges of this report's run(s) at that stage.</p>\n");
    static const kevo_stage stages[2] = {KEVO_STAGE_DRAFT, KEVO_STAGE_REFINE};
    for (int s = 0; s < 2; s++) {
        size_t ne = 0;
        for (size_t i = 0; i < items->n; i++) {
            double q = 0;
            int64_t updates = 0;
            if ((error = kevo_memory_q_get(&q, &updates, mem, items->items[i].id, stages[s])) < 0)
                goto done;
            if (updates > 0 && isfinite(q))
                e[ne++] = (q_entry){&items->items[i], q, updates};
        }
        qsort(e, ne, sizeof(*e), cmp_q_desc);
        kevo_writer_printf(w, "<h3>%s stage (Q%d)</h3>\n",
                           stages[s] == KEVO_STAGE_DRAFT ? "Draft" : "Refine", s + 1);
        if (ne == 0) {
            kevo_writer_puts(w, "<p class=\"muted\">No item has a learned Q at this stage "
                                "yet.</p>\n");
            continue;
        }
        kevo_writer_printf(w, "<p class=\"muted\">%zu item%s with a learned Q. ", ne,
                           ne == 1 ? "" : "s");
        if (ne > 2 * MEMORY_TOP)
            kevo_writer_printf(w, "The %d highest, then the %d lowest.", MEMORY_TOP, MEMORY_TOP);
        kevo_writer_puts(w, "</p>\n<div class=\"scroll\"><table class=\"sortable\"><thead><tr>"
                            "<th data-type=\"num\">Q</th><th data-type=\"num\">updates</th>");
        for (size_t r = 0; r < n; r++)
            kevo_writer_printf(w, "<th data-type=\"num\">used in run %lld</th>",
                               (long long)views[r].m->run_id);
        kevo_writer_puts(w, "<th class=\"l\">kind</th><th class=\"l\">title</th>"
                            "<th class=\"l\">task / category</th></tr></thead>\n<tbody>\n");
        if (ne > 2 * MEMORY_TOP) {
            q_rows(w, e, 0, MEMORY_TOP, keys, nkeys, stages[s], n);
            kevo_writer_printf(w,
                               "<tr><td class=\"l muted\" colspan=\"%zu\">&#8942; %zu more"
                               "</td></tr>\n",
                               5 + n, ne - 2 * MEMORY_TOP);
            q_rows(w, e, ne - MEMORY_TOP, ne, keys, nkeys, stages[s], n);
        } else {
            q_rows(w, e, 0, ne, keys, nkeys, stages[s], n);
        }
        kevo_writer_puts(w, "</tbody></table></div>\n");
    }
done:
    free(e);
    kevo_item_list_free(items);
    free(keys);
    return error;
}

/* ---- per-task details ------------------------------------------------- */

/* Local index of attempt `id` among the task's attempts (sorted by id). */
static long local_index(const run_view *v, const task_view *t, int64_t id)
{
    size_t lo = 0, hi = t->natt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = v->list->attempts[t->att[mid]].id;
        if (x == id)
            return (long)mid;
        if (x < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* One node: id, iteration, stage, verdict, speedup, recipes; `flat` when
 * it is drawn at its parent's level (below TREE_MAX_DEPTH), so the
 * parent is named. */
static void tree_node(kevo_writer *w, const run_view *v, const task_view *t, size_t j,
                      long parent_local, bool flat)
{
    size_t idx = t->att[j];
    const kevo_attempt *a = &v->list->attempts[idx];
    if (flat)
        kevo_writer_printf(w, "<span class=\"rec\" title=\"refines #%lld\">&#8627;</span> ",
                           (long long)a->parent_id);
    const char *vc = verdict_class(a->verdict);
    kevo_writer_printf(w, "<span%s>#%lld</span> it %d &middot; %s &middot; <span class=\"v v-%s\">",
                       idx == t->best ? " class=\"best\"" : "", (long long)a->id,
                       clamp_iter(a->iteration) + 1, kevo_stage_name(a->stage), vc);
    kevo_writer_escape(w, kevo_verdict_name(a->verdict), (size_t)-1);
    kevo_writer_puts(w, "</span>");
    if (a->verdict == KEVO_VERDICT_CORRECT && good_speedup(a->speedup)) {
        char sp[32];
        fmt_speedup(sp, sizeof(sp), a->speedup);
        kevo_writer_printf(w, " %s", sp);
    }
    if (idx == t->best)
        kevo_writer_puts(w, " <span class=\"best\">&#9733; best</span>");
    if (a->parent_id > 0 && parent_local < 0)
        kevo_writer_printf(w, " <span class=\"rec\">(refines #%lld, outside this run)</span>",
                           (long long)a->parent_id);
    char *rec = recipes_summary(a->recipes_json);
    if (rec) {
        bool cut = false;
        size_t len = kevo_text_cut(rec, 120, 1, &cut);
        kevo_writer_puts(w, " <span class=\"rec\">");
        kevo_writer_escape(w, rec, len);
        if (cut)
            kevo_writer_puts(w, "&#8230;");
        kevo_writer_puts(w, "</span>");
        free(rec);
    }
}

/* The refines tree as nested lists, in decision order; iterative so that
 * a long chain cannot exhaust the stack, and flattened below
 * TREE_MAX_DEPTH so that it stays on the page. */
static int write_tree(kevo_writer *w, const run_view *v, const task_view *t)
{
    size_t m = t->natt;
    long *parent = calloc(m + 1, sizeof(long));
    size_t *nchild = calloc(m + 2, sizeof(size_t)), *child = calloc(m + 1, sizeof(size_t));
    size_t *fill = calloc(m + 1, sizeof(size_t)), *stack = calloc(m + 1, sizeof(size_t));
    int *depth = calloc(m + 1, sizeof(int));
    int error = 0;
    if (!parent || !nchild || !child || !fill || !stack || !depth) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory drawing an attempt tree");
        goto done;
    }
    /* children of j are child[nchild[j] .. nchild[j+1]) (counting sort) */
    for (size_t j = 0; j < m; j++) {
        const kevo_attempt *a = &v->list->attempts[t->att[j]];
        parent[j] = a->parent_id > 0 ? local_index(v, t, a->parent_id) : -1;
        if (parent[j] >= (long)j) /* parents come first; anything else is a root */
            parent[j] = -1;
        if (parent[j] >= 0)
            nchild[parent[j] + 1]++;
    }
    for (size_t j = 0; j < m; j++)
        nchild[j + 1] += nchild[j];
    for (size_t j = 0; j < m; j++)
        if (parent[j] >= 0) {
            size_t p = (size_t)parent[j];
            child[nchild[p] + fill[p]++] = j;
        }
    size_t sp = 0;
    for (size_t j = m; j-- > 0;)
        if (parent[j] < 0) {
            stack[sp] = j;
            depth[sp++] = 0;
        }
    kevo_writer_puts(w, "<ul class=\"tree\">");
    bool first = true;
    int cur = 0;
    while (sp > 0) {
        size_t j = stack[--sp];
        int td = depth[sp];                                /* in the tree */
        int d = td < TREE_MAX_DEPTH ? td : TREE_MAX_DEPTH; /* as drawn */
        bool flat = td > TREE_MAX_DEPTH;
        if (first)
            first = false;
        else if (d > cur)
            kevo_writer_puts(w, "<ul>");
        else {
            kevo_writer_puts(w, "</li>");
            for (int k = cur; k > d; k--)
                kevo_writer_puts(w, "</ul></li>");
        }
        kevo_writer_puts(w, "\n<li>");
        tree_node(w, v, t, j, parent[j], flat);
        cur = d;
        for (size_t c = nchild[j + 1]; c-- > nchild[j];) {
            stack[sp] = child[c];
            depth[sp++] = td + 1;
        }
    }
    if (!first) {
        kevo_writer_puts(w, "</li>");
        for (int k = cur; k > 0; k--)
            kevo_writer_puts(w, "</ul></li>");
    }
    kevo_writer_puts(w, "</ul>\n");
done:
    free(parent);
    free(nchild);
    free(child);
    free(fill);
    free(stack);
    free(depth);
    return error;
}

static int write_details(kevo_writer *w, const run_view *v, size_t r, size_t n)
{
    int error = 0;
    bool open = v->m->ntasks <= 12;
    kevo_writer_puts(w, "<h3>");
    if (n > 1)
        run_swatch(w, r);
    kevo_writer_printf(w, "Run %lld</h3>\n", (long long)v->m->run_id);
    for (size_t k = 0; k < v->m->ntasks && !error; k++) {
        const task_view *t = &v->tasks[k];
        const kevo_task_metrics *tm = t->tm;
        kevo_writer_printf(w, "<section class=\"task\" id=\"r%lld-t%zu\">\n<h3>",
                           (long long)v->m->run_id, k);
        kevo_writer_escape(w, tm->task, (size_t)-1);
        kevo_writer_printf(w, " <span class=\"st st-%s\">%s</span></h3>\n<p class=\"muted\">",
                           task_status(t), task_status(t));
        kevo_writer_printf(w, "%d attempt%s", tm->attempts, tm->attempts == 1 ? "" : "s");
        if (tm->correct) {
            char a[32], b[32];
            fmt_speedup(a, sizeof(a), tm->best_speedup);
            fmt_speedup(b, sizeof(b), tm->first_correct_speedup);
            kevo_writer_printf(w, " &middot; first correct at iteration %d (%s) &middot; best %s",
                               tm->first_correct_iter, b, a);
        }
        kevo_writer_printf(w, " &middot; <a href=\"#tasks\">back to the table</a></p>\n"
                              "<h4>Attempt tree</h4>\n");
        if ((error = write_tree(w, v, t)) < 0)
            break;
        /* the best kernel, else the last attempt's source */
        size_t src = t->best != SIZE_MAX ? t->best : t->natt ? t->att[t->natt - 1] : SIZE_MAX;
        if (src != SIZE_MAX) {
            const kevo_attempt *a = &v->list->attempts[src];
            const char *s = a->source ? a->source : "";
            size_t lines = 1;
            for (const char *c = s; *c; c++)
                lines += *c == '\n';
            if (t->best != SIZE_MAX) {
                char sp[32];
                fmt_speedup(sp, sizeof(sp), a->speedup);
                kevo_writer_printf(w, "<h4>Best kernel: attempt #%lld, %s</h4>\n", (long long)a->id,
                                   sp);
            } else {
                kevo_writer_printf(w, "<h4>No correct kernel; the last attempt (#%lld)</h4>\n",
                                   (long long)a->id);
            }
            kevo_writer_printf(w, "<details%s><summary>source (%zu lines)</summary><pre><code>",
                               open ? " open" : "", lines);
            put_cut(w, s, SOURCE_MAX_BYTES, SOURCE_MAX_LINES);
            kevo_writer_puts(w, "</code></pre></details>\n");
        }
        /* the feedback of failed attempts, the first few in decision order */
        size_t failed = 0;
        for (size_t j = 0; j < t->natt; j++)
            failed += v->list->attempts[t->att[j]].verdict != KEVO_VERDICT_CORRECT;
        if (failed) {
            kevo_writer_printf(w, "<h4>Failed attempts (%zu)</h4>\n", failed);
            size_t shown = 0;
            for (size_t j = 0; j < t->natt && shown < FEEDBACK_PER_TASK; j++) {
                const kevo_attempt *a = &v->list->attempts[t->att[j]];
                if (a->verdict == KEVO_VERDICT_CORRECT)
                    continue;
                shown++;
                kevo_writer_printf(w,
                                   "<details><summary>#%lld it %d &middot; <span class=\"v "
                                   "v-%s\">",
                                   (long long)a->id, clamp_iter(a->iteration) + 1,
                                   verdict_class(a->verdict));
                kevo_writer_escape(w, kevo_verdict_name(a->verdict), (size_t)-1);
                kevo_writer_puts(w, "</span></summary><pre class=\"fb\">");
                put_cut(w, a->feedback && *a->feedback ? a->feedback : "(no feedback recorded)",
                        FEEDBACK_MAX_BYTES, FEEDBACK_MAX_LINES);
                kevo_writer_puts(w, "</pre></details>\n");
            }
            if (failed > shown)
                kevo_writer_printf(w,
                                   "<p class=\"muted\">%zu more failed attempts not shown "
                                   "(their feedback is in the store).</p>\n",
                                   failed - shown);
        }
        kevo_writer_puts(w, "</section>\n");
    }
    return error;
}

/* ---- entry point ------------------------------------------------------ */

int kevo_report_html(kevo_buf *out, kevo_memory *mem, kevo_run_metrics *const *runs, size_t n)
{
    int error = 0;
    run_view *views = NULL;
    kevo_writer w = {out, 0};
    if (!out || !mem || !runs || n == 0)
        return kevo_error_set(KEVO_EINVAL, "report: no run to render");
    if (n > HTML_MAX_RUNS)
        return kevo_error_set(KEVO_EINVAL,
                              "report: the HTML report compares at most %d runs, "
                              "not %zu",
                              HTML_MAX_RUNS, n);
    views = calloc(n, sizeof(*views));
    if (!views)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t r = 0; r < n; r++)
        if ((error = view_load(&views[r], mem, runs[r])) < 0)
            goto done;
    if ((error = roofline_load(views, n, mem)) < 0)
        goto done;

    /* a fresh nonce per page: the only script allowed to run is ours */
    kevo_rng rng;
    uintptr_t addr = (uintptr_t)out;
    kevo_rng_seed(&rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)getpid() << 32) ^
                            kevo_hash64(&addr, sizeof(addr), 0));
    char nonce[40];
    snprintf(nonce, sizeof(nonce), "%016llx%016llx", (unsigned long long)kevo_rng_next(&rng),
             (unsigned long long)kevo_rng_next(&rng));

    page_head(&w, views, n, nonce, kevo_memory_path(mem));
    write_summary(&w, views, n);
    kevo_writer_puts(&w, "<h2 id=\"figures\">Figures</h2>\n");
    kevo_writer_puts(&w, "<div class=\"figs\">\n");
    if ((error = fig_cumulative(&w, views, n)) < 0 || (error = fig_trajectory(&w, views, n)) < 0 ||
        (error = fig_tokens(&w, views, n)) < 0 || (error = fig_speedups(&w, views, n)) < 0)
        goto done;
    kevo_writer_puts(&w, "</div>\n");
    kevo_writer_puts(&w, "<h2 id=\"tasks\">Tasks</h2>\n<p class=\"muted\">Click a header to "
                         "sort. GFLOP/s and GB/s are achieved at the best latency from the "
                         "task's flops/bytes (n/a when its task.json is not reachable); % of "
                         "roof compares them with the roofline bound at the kernel's "
                         "arithmetic intensity, from the peaks `kevo calibrate` measured "
                         "(n/a before calibration).</p>\n");
    for (size_t r = 0; r < n; r++)
        write_table(&w, &views[r], r, n);
    if ((error = write_memory(&w, mem, views, n)) < 0)
        goto done;
    kevo_writer_puts(&w, "<h2 id=\"details\">Details</h2>\n");
    for (size_t r = 0; r < n; r++)
        if ((error = write_details(&w, &views[r], r, n)) < 0)
            goto done;
    page_foot(&w, nonce);
    error = w.error;
done:
    if (views)
        for (size_t r = 0; r < n; r++)
            view_clear(&views[r]);
    free(views);
    return error;
}
