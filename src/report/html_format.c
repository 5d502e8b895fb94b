/*
 * report/html_format.c - the formatters the HTML page's sections share:
 * speedups, counts, exact numbers for data-value, cut and escaped text,
 * run colours and swatches, a task's status word.
 *
 * Formats values it is handed: no store (no kevo_memory_* call), no
 * section of the page.
 */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "no_store.h"

const char *const kevo_report__run_colors[KEVO_REPORT__MAX_RUNS] = {"#0072b2", "#d55e00", "#009e73",
                                                                    "#cc79a7"};
const char *const kevo_report__run_light[KEVO_REPORT__MAX_RUNS] = {"#99c7e0", "#eebf99", "#99d8c7",
                                                                   "#ebc9dc"};

bool kevo_report__good_speedup(double s)
{
    return isfinite(s) && s > 0;
}

void kevo_report__fmt_speedup(char *buf, size_t len, double s)
{
    if (!kevo_report__good_speedup(s))
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

void kevo_report__fmt_count(char *buf, size_t len, double v)
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

void kevo_report__put_exact(kevo_writer *w, double v)
{
    if (isfinite(v))
        kevo_writer_printf(w, "%.17g", v);
}

void kevo_report__put_cut(kevo_writer *w, const char *s, size_t max_bytes, size_t max_lines)
{
    bool cut = false;
    size_t n = kevo_text_cut(s, max_bytes, max_lines, &cut);
    kevo_writer_escape(w, s, n);
    if (cut)
        kevo_writer_printf(w, "\n[... %zu more bytes not shown]", strlen(s) - n);
}

void kevo_report__run_swatch(kevo_writer *w, size_t r)
{
    kevo_writer_printf(w, "<span class=\"sw\" style=\"background:%s\"></span>",
                       kevo_report__run_colors[r]);
}

const char *kevo_report__task_status(const kevo_report__task *t)
{
    return t->tm->correct ? "correct" : t->tm->compiled ? "compiled" : "failed";
}
