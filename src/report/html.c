/*
 * report/html.c - `kevo report --format html`: one self-contained page for
 * one run, or several runs on the same axes (--compare), rendered from a
 * loaded model (report/model.h). This file holds the page's frame (head,
 * inline CSS and JS, foot) and its Summary section (cards with the
 * kevo_report_metrics() numbers, each in an element with
 * data-metric="<json key>" and data-value="<exact number>", and the run's
 * configuration), and calls the other sections in order: Figures
 * (html_figures.c), Tasks and Memory (html_tables.c), Details
 * (html_details.c); their shared formatters are in html_format.c.
 *
 * Self-contained: inline CSS, inline SVG, a few lines of inline JS that
 * only sort tables, no fonts, images or scripts from anywhere else; a
 * Content-Security-Policy (default-src 'none', script by nonce) makes the
 * browser refuse any fetch, and stops a script that escaping missed.
 * Everything that comes from the store (names, sources, feedback, config,
 * item titles) is escaped.
 *
 * Renders only: it never reaches the store (no kevo_memory_* call; the
 * model was loaded by load.c) and reads no file; the only things it takes
 * from outside the model are the generation time and the page's nonce.
 */
#include "html.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "no_store.h"

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

static void page_head(kevo_writer *w, const kevo_report__run *v, size_t n, const char *nonce,
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
        kevo_report__fmt_speedup(text, sizeof(text), v);
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
        kevo_report__fmt_count(text, sizeof(text), v);
        break;
    }
    kevo_writer_puts(w, "<div class=\"card\"><div class=\"k\">");
    kevo_writer_escape(w, label, (size_t)-1);
    kevo_writer_printf(w, "</div><div class=\"v\" data-metric=\"%s\" data-value=\"", key);
    kevo_report__put_exact(w, v);
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

static void write_summary(kevo_writer *w, const kevo_report__run *views, size_t n)
{
    kevo_writer_puts(w, "<h2 id=\"summary\">Summary</h2>\n");
    for (size_t r = 0; r < n; r++) {
        const kevo_run_metrics *m = views[r].m;
        char sub[160], a[32], b[32], c[32], started[40];
        fmt_ms_time(started, sizeof(started), views[r].run ? views[r].run->started : 0);
        kevo_writer_puts(w, "<h3>");
        if (n > 1)
            kevo_report__run_swatch(w, r);
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
        kevo_report__fmt_speedup(a, sizeof(a), m->iqr_low);
        kevo_report__fmt_speedup(b, sizeof(b), m->iqr_high);
        snprintf(sub, sizeof(sub), "IQR %s - %s", a, b);
        card(w, "median_speedup_vs_first_draft", "median speedup over first draft",
             m->median_speedup_vs_first_draft, CARD_SPEEDUP, sub);
        card(w, "mean_iterations_to_first_correct", "iterations to first correct (mean)",
             m->mean_iters_to_first_correct, CARD_NUMBER, NULL);
        kevo_report__fmt_count(a, sizeof(a), (double)m->tokens_prompt);
        kevo_report__fmt_count(b, sizeof(b), (double)m->tokens_completion);
        kevo_report__fmt_count(c, sizeof(c), m->tokens_per_solved_task);
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
        kevo_report__put_exact(w, m->fast_2);
        kevo_writer_puts(w, "\"></span><span data-metric=\"attempts\" data-value=\"");
        kevo_report__put_exact(w, m->attempts);
        kevo_writer_puts(w, "\"></span></span>\n");

        /* the configuration, pretty-printed when it parses */
        cJSON *cfg = cJSON_Parse(m->config_json);
        char *pretty = cfg ? cJSON_Print(cfg) : NULL;
        const char *shown = pretty ? pretty : m->config_json;
        kevo_writer_printf(w, "<details%s><summary>configuration (config JSON)</summary><pre>",
                           strlen(shown) < 1500 ? " open" : "");
        kevo_report__put_cut(w, shown, KEVO_REPORT__SOURCE_MAX_BYTES,
                             KEVO_REPORT__SOURCE_MAX_LINES);
        kevo_writer_puts(w, "</pre></details>\n");
        free(pretty);
        cJSON_Delete(cfg);
    }
}

/* ---- the page -------------------------------------------------------- */

int kevo_report__html_render(kevo_buf *out, const kevo_report__model *model)
{
    int error = 0;
    kevo_writer w = {out, 0};
    const kevo_report__run *views = model->runs;
    size_t n = model->nruns;

    /* a fresh nonce per page: the only script allowed to run is ours */
    kevo_rng rng;
    uintptr_t addr = (uintptr_t)out;
    kevo_rng_seed(&rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)getpid() << 32) ^
                            kevo_hash64(&addr, sizeof(addr), 0));
    char nonce[40];
    snprintf(nonce, sizeof(nonce), "%016llx%016llx", (unsigned long long)kevo_rng_next(&rng),
             (unsigned long long)kevo_rng_next(&rng));

    page_head(&w, views, n, nonce, model->store_path);
    write_summary(&w, views, n);
    if ((error = kevo_report__html_figures(&w, model)) < 0)
        goto done;
    kevo_report__html_tasks(&w, model);
    kevo_report__html_memory(&w, model);
    if ((error = kevo_report__html_details(&w, model)) < 0)
        goto done;
    page_foot(&w, nonce);
    error = w.error;
done:
    return error;
}
