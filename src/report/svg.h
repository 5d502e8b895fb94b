/*
 * report/svg.h - internal to src/report: a sticky-error writer over a
 * kevo_buf, HTML escaping, and the small SVG plotting kit the HTML report
 * draws its figures with (axes with linear or log scales, ticks, lines,
 * bars, legends).
 *
 * Every coordinate goes through kevo_writer_num(), which never prints
 * "nan" or "inf": a non-finite coordinate is written as 0, so a bad value
 * in the store can distort one mark but never break the picture. Text
 * always goes through kevo_writer_escape(). Nothing here reads the store.
 */
#ifndef KEVO_REPORT_SVG_H
#define KEVO_REPORT_SVG_H

#include "kevo/util.h"

#include <stdbool.h>
#include <stddef.h>

/* Output with a sticky error: the first failed append is kept in `error`
 * and later appends do nothing, so renderers check once at the end. */
typedef struct kevo_writer {
    kevo_buf *buf; /* borrowed */
    int error;     /* 0 or the first KEVO_E* code */
} kevo_writer;

void kevo_writer_puts(kevo_writer *w, const char *s);
void kevo_writer_printf(kevo_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s[0..len) escaped for HTML text and attribute values (& < > " '),
 * C0 control characters other than tab and newline as U+FFFD, CR dropped.
 * len (size_t)-1 = strlen(s). NULL is the empty string. */
void kevo_writer_escape(kevo_writer *w, const char *s, size_t len);
/* A coordinate: finite values with at most two decimals (trailing zeros
 * trimmed), anything else as 0. */
void kevo_writer_num(kevo_writer *w, double v);

/* How many bytes of s to keep so that the result has at most max_bytes
 * bytes and max_lines lines and does not end inside a UTF-8 sequence.
 * *out_cut (may be NULL) says whether anything was left out. */
size_t kevo_text_cut(const char *s, size_t max_bytes, size_t max_lines, bool *out_cut);

/* ---- plots ------------------------------------------------------------ */

typedef struct kevo_svg_axis {
    double lo, hi; /* domain; for log both > 0 */
    bool log;
} kevo_svg_axis;

/* A plot: the picture's size, the margins around the plotting area, and
 * the two axes. */
typedef struct kevo_svg_plot {
    double width, height;
    double left, right, top, bottom;
    kevo_svg_axis x, y;
} kevo_svg_plot;

/* Pixel of a data value, clamped to the plotting area; a value that
 * cannot be placed (non-finite, or <= 0 on a log axis) maps to the low
 * edge. */
double kevo_svg_px(const kevo_svg_plot *p, double v);
double kevo_svg_py(const kevo_svg_plot *p, double v);
/* 1 when v can be placed on the axis (finite; > 0 for log). */
bool kevo_svg_placeable(const kevo_svg_axis *a, double v);

/* A log domain covering [min, max] and 1, widened to whole decades and
 * kept within [1e-9, 1e9]. min/max <= 0 or non-finite = no data. */
void kevo_svg_log_domain(kevo_svg_axis *a, double min, double max);
/* A linear domain [0, nice ceiling of max]; max <= 0 gives [0, 1]. */
void kevo_svg_zero_domain(kevo_svg_axis *a, double max);

typedef struct kevo_svg_tick {
    double v;
    char label[32];
} kevo_svg_tick;

typedef void (*kevo_svg_label_fn)(char *buf, size_t len, double v);
void kevo_svg_label_speedup(char *buf, size_t len, double v); /* "0.01x", "10x" */
void kevo_svg_label_percent(char *buf, size_t len, double v); /* 0.25 -> "25%" */
void kevo_svg_label_count(char *buf, size_t len, double v);   /* 1500 -> "1.5k" */
void kevo_svg_label_int(char *buf, size_t len, double v);

/* Ticks of an axis (at most max, at least the two ends for linear axes):
 * linear axes at 1/2/5 x 10^k steps; log axes at decades (and 2, 5 within
 * them when the domain spans at most two decades). Returns the count. */
size_t kevo_svg_ticks(kevo_svg_tick *out, size_t max, const kevo_svg_axis *a,
                      kevo_svg_label_fn label);
/* Integer ticks 1..n for iteration axes (about 10 at most). */
size_t kevo_svg_ticks_iter(kevo_svg_tick *out, size_t max, int n);

/* <svg ...> with a viewBox, role="img" and an aria-label (escaped); and
 * the closing tag. */
void kevo_svg_begin(kevo_writer *w, const kevo_svg_plot *p, const char *label);
void kevo_svg_end(kevo_writer *w);
/* Grid lines, tick marks and labels of both axes and the axis titles. */
void kevo_svg_axes(kevo_writer *w, const kevo_svg_plot *p, const kevo_svg_tick *xt, size_t nx,
                   const kevo_svg_tick *yt, size_t ny, const char *xtitle, const char *ytitle);
/* A line through (xs[i], ys[i]); points that cannot be placed split it.
 * `attrs` is trusted markup (stroke, width, dash); a lone point becomes a
 * dot of the line's colour (`color`). Optional dots at every point. */
void kevo_svg_line(kevo_writer *w, const kevo_svg_plot *p, const double *xs, const double *ys,
                   size_t n, const char *color, const char *attrs, bool dots);
/* A text element; `attrs` is trusted markup, `text` is escaped. */
void kevo_svg_text(kevo_writer *w, double x, double y, const char *attrs, const char *text);

typedef struct kevo_svg_legend_entry {
    const char *label; /* escaped */
    const char *color;
    const char *dash; /* stroke-dasharray, NULL = solid */
    bool box;         /* a filled box instead of a line */
    double width;     /* line width; 0 = 2.5 */
} kevo_svg_legend_entry;
/* Rows of 16 px a legend needs when wrapped within `width` px. */
size_t kevo_svg_legend_rows(const kevo_svg_legend_entry *e, size_t n, double width);
/* The legend, from (x, y) (the first row's baseline), wrapped within
 * `width` px. */
void kevo_svg_legend(kevo_writer *w, double x, double y, double width,
                     const kevo_svg_legend_entry *e, size_t n);

#endif
