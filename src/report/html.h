/*
 * report/html.h - internal to the HTML renderer (html*.c): the page's
 * sections, the run colours, and the small number and text formatters
 * they share.
 *
 * Everything declared here renders from a loaded kevo_report__model
 * (report/model.h) and never reaches the store: the files that include
 * this header include report/no_store.h last.
 */
#ifndef KEVO_REPORT_HTML_H
#define KEVO_REPORT_HTML_H

#include "model.h"
#include "svg.h"

#include <stdbool.h>
#include <stddef.h>

/* A configuration or a kernel source is cut at this size on the page. */
#define KEVO_REPORT__SOURCE_MAX_BYTES (64 * 1024)
#define KEVO_REPORT__SOURCE_MAX_LINES 2000

/* Okabe-Ito colours (safe for colour-blind readers), one per run, and the
 * same at 40% over white for the lighter half of stacked bars. */
extern const char *const kevo_report__run_colors[KEVO_REPORT__MAX_RUNS];
extern const char *const kevo_report__run_light[KEVO_REPORT__MAX_RUNS];

/* ---- formatters (html_format.c) --------------------------------------- */

/* A speedup that can be drawn and printed: finite and > 0. */
bool kevo_report__good_speedup(double s);
/* "1.23x", "45.6x", "789x"; "n/a" when not a good speedup. */
void kevo_report__fmt_speedup(char *buf, size_t len, double s);
/* "123", "12.3k", "1.23M", "1.23G"; "n/a" when not finite. */
void kevo_report__fmt_count(char *buf, size_t len, double v);
/* An exact number for data-value attributes: "" when not finite. */
void kevo_report__put_exact(kevo_writer *w, double v);
/* Escaped text, cut to max_bytes / max_lines with a visible note. */
void kevo_report__put_cut(kevo_writer *w, const char *s, size_t max_bytes, size_t max_lines);
/* The colour swatch of runs[r], before a run's heading when several. */
void kevo_report__run_swatch(kevo_writer *w, size_t r);
/* "correct", "compiled" or "failed": also a CSS class suffix. */
const char *kevo_report__task_status(const kevo_report__task *t);

/* ---- the page's sections, each with its heading ----------------------- */

/* Figures (html_figures.c): cumulative rates, trajectories, tokens, best
 * speedups, every run on the same axes. Returns 0 or KEVO_ENOMEM. */
int kevo_report__html_figures(kevo_writer *w, const kevo_report__model *model);
/* Tasks (html_tables.c): one sortable table per run. */
void kevo_report__html_tasks(kevo_writer *w, const kevo_report__model *model);
/* Memory (html_tables.c): the highest / lowest Q items per stage. */
void kevo_report__html_memory(kevo_writer *w, const kevo_report__model *model);
/* Details (html_details.c): per task the attempt tree, the best source,
 * the failure feedback. Returns 0 or KEVO_ENOMEM. */
int kevo_report__html_details(kevo_writer *w, const kevo_report__model *model);

#endif
