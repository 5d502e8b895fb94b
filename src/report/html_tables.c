/*
 * report/html_tables.c - the two table sections of the HTML page: Tasks
 * (one sortable table per run: status, attempts, iteration of the first
 * correct kernel, best speedup and over the first draft, best latency,
 * achieved GFLOP/s and GB/s, % of the roofline bound, tokens) and Memory
 * (per stage the items with the highest and lowest learned Q, their
 * updates and how often each run used them).
 *
 * Renders from the loaded model only: no store (no kevo_memory_* call),
 * no file (the peaks and flops/bytes were loaded with the model).
 */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "no_store.h"

#define MEMORY_TOP 10

static void td_num(kevo_writer *w, double sort, bool have, const char *text)
{
    kevo_writer_puts(w, "<td data-v=\"");
    if (have)
        kevo_report__put_exact(w, sort);
    kevo_writer_puts(w, "\">");
    kevo_writer_escape(w, have ? text : "n/a", (size_t)-1);
    kevo_writer_puts(w, "</td>");
}

static void write_table(kevo_writer *w, const kevo_report__model *model, size_t r)
{
    const kevo_report__run *v = &model->runs[r];
    size_t n = model->nruns;
    kevo_writer_puts(w, "<h3>");
    if (n > 1)
        kevo_report__run_swatch(w, r);
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
           "kernel's arithmetic intensity and the bandwidth measured for its working set, from "
           "the peaks `kevo calibrate` measured\">"
           "% of roof</th><th data-type=\"num\">tokens</th></tr></thead>\n<tbody>\n");
    for (size_t k = 0; k < v->m->ntasks; k++) {
        const kevo_report__task *t = &v->tasks[k];
        const kevo_task_metrics *tm = t->tm;
        const char *st = kevo_report__task_status(t);
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
        bool sp = tm->correct && kevo_report__good_speedup(tm->best_speedup);
        kevo_report__fmt_speedup(text, sizeof(text), tm->best_speedup);
        td_num(w, tm->best_speedup, sp, text);
        bool vf = sp && kevo_report__good_speedup(tm->speedup_vs_first);
        kevo_report__fmt_speedup(text, sizeof(text), tm->speedup_vs_first);
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
        /* roofline: the metrics' fraction (kevo_task_metrics.roof_*), the
         * bound min(fp32 peak, AI x the bandwidth at its working set) */
        double frac = tm->roof_known ? tm->roof_fraction : 0;
        snprintf(text, sizeof(text), "%.0f%%", 100 * frac);
        td_num(w, frac, frac > 0 && isfinite(frac), text);
        double tok = (double)(tm->tokens_prompt + tm->tokens_completion);
        kevo_report__fmt_count(text, sizeof(text), tok);
        td_num(w, tok, true, text);
        kevo_writer_puts(w, "</tr>\n");
    }
    kevo_writer_puts(w, "</tbody></table></div>\n");
    if (v->m->roof_note[0]) { /* no peaks, or fractions above 1: said beside the table */
        kevo_writer_puts(w, "<p class=\"muted\">% of roof: ");
        kevo_writer_escape(w, v->m->roof_note, (size_t)-1);
        kevo_writer_puts(w, "</p>\n");
    }
}

void kevo_report__html_tasks(kevo_writer *w, const kevo_report__model *model)
{
    kevo_writer_puts(w, "<h2 id=\"tasks\">Tasks</h2>\n<p class=\"muted\">Click a header to "
                        "sort. GFLOP/s and GB/s are achieved at the best latency from the "
                        "task's flops/bytes (n/a when its task.json is not reachable); % of "
                        "roof compares them with the roofline bound at the kernel's "
                        "arithmetic intensity, from the peaks `kevo calibrate` measured "
                        "(n/a before calibration).</p>\n");
    for (size_t r = 0; r < model->nruns; r++)
        write_table(w, model, r);
}

/* ---- memory ----------------------------------------------------------- */

static void q_rows(kevo_writer *w, const kevo_report__model *model, const kevo_report__q_stage *qs,
                   size_t from, size_t to)
{
    const kevo_report__q_entry *e = qs->e;
    for (size_t i = from; i < to; i++) {
        kevo_writer_printf(w, "<tr><td data-v=\"%.17g\">%.3f</td><td>%lld</td>", e[i].q, e[i].q,
                           (long long)e[i].updates);
        for (size_t r = 0; r < model->nruns; r++)
            kevo_writer_printf(w, "<td>%zu</td>",
                               kevo_report__use_count(model, e[i].item->id, qs->stage, r));
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

/* One stage's table: all items when few, else the highest and the lowest. */
static void q_stage_table(kevo_writer *w, const kevo_report__model *model, int s)
{
    const kevo_report__q_stage *qs = &model->q[s];
    size_t ne = qs->n, n = model->nruns;
    kevo_writer_printf(w, "<h3>%s stage (Q%d)</h3>\n",
                       qs->stage == KEVO_STAGE_DRAFT ? "Draft" : "Refine", s + 1);
    if (ne == 0) {
        kevo_writer_puts(w, "<p class=\"muted\">No item has a learned Q at this stage "
                            "yet.</p>\n");
        return;
    }
    kevo_writer_printf(w, "<p class=\"muted\">%zu item%s with a learned Q. ", ne,
                       ne == 1 ? "" : "s");
    if (ne > 2 * MEMORY_TOP)
        kevo_writer_printf(w, "The %d highest, then the %d lowest.", MEMORY_TOP, MEMORY_TOP);
    kevo_writer_puts(w, "</p>\n<div class=\"scroll\"><table class=\"sortable\"><thead><tr>"
                        "<th data-type=\"num\">Q</th><th data-type=\"num\">updates</th>");
    for (size_t r = 0; r < n; r++)
        kevo_writer_printf(w, "<th data-type=\"num\">used in run %lld</th>",
                           (long long)model->runs[r].m->run_id);
    kevo_writer_puts(w, "<th class=\"l\">kind</th><th class=\"l\">title</th>"
                        "<th class=\"l\">task / category</th></tr></thead>\n<tbody>\n");
    if (ne > 2 * MEMORY_TOP) {
        q_rows(w, model, qs, 0, MEMORY_TOP);
        kevo_writer_printf(w,
                           "<tr><td class=\"l muted\" colspan=\"%zu\">&#8942; %zu more"
                           "</td></tr>\n",
                           5 + n, ne - 2 * MEMORY_TOP);
        q_rows(w, model, qs, ne - MEMORY_TOP, ne);
    } else {
        q_rows(w, model, qs, 0, ne);
    }
    kevo_writer_puts(w, "</tbody></table></div>\n");
}

void kevo_report__html_memory(kevo_writer *w, const kevo_report__model *model)
{
    kevo_writer_puts(w, "<h2 id=\"memory\">Memory</h2>\n<p class=\"muted\">Q-values are the "
                        "store's, learned over every run that used it; the use counts are "
                        "the <code>used</code> edges of this report's run(s) at that stage.</p>\n");
    for (int s = 0; s < 2; s++)
        q_stage_table(w, model, s);
}
