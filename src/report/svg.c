/*
 * report/svg.c - the writer, HTML escaping and SVG plotting kit behind the
 * HTML report (see svg.h). Pure formatting: no store, no I/O.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- writer ----------------------------------------------------------- */

void kevo_writer_puts(kevo_writer *w, const char *s)
{
    if (w->error == 0 && s)
        w->error = kevo_buf_puts(w->buf, s);
}

void kevo_writer_printf(kevo_writer *w, const char *fmt, ...)
{
    if (w->error)
        return;
    va_list ap;
    va_start(ap, fmt);
    w->error = kevo_buf_vprintf(w->buf, fmt, ap);
    va_end(ap);
}

void kevo_writer_escape(kevo_writer *w, const char *s, size_t len)
{
    if (w->error || !s)
        return;
    if (len == (size_t)-1)
        len = strlen(s);
    size_t start = 0;
    for (size_t i = 0; i < len && w->error == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        switch (c) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        case '\r':
            rep = "";
            break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                rep = "&#xFFFD;";
            break;
        }
        if (!rep)
            continue;
        if (i > start)
            w->error = kevo_buf_put(w->buf, s + start, i - start);
        if (w->error == 0)
            w->error = kevo_buf_puts(w->buf, rep);
        start = i + 1;
    }
    if (w->error == 0 && len > start)
        w->error = kevo_buf_put(w->buf, s + start, len - start);
}

void kevo_writer_num(kevo_writer *w, double v)
{
    if (!isfinite(v))
        v = 0;
    else if (fabs(v) > 1e9)
        v = v > 0 ? 1e9 : -1e9;
    char tmp[48];
    snprintf(tmp, sizeof(tmp), "%.2f", v);
    char *dot = strchr(tmp, '.');
    if (dot) {
        char *end = tmp + strlen(tmp) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
    kevo_writer_puts(w, strcmp(tmp, "-0") ? tmp : "0");
}

size_t kevo_text_cut(const char *s, size_t max_bytes, size_t max_lines, bool *out_cut)
{
    size_t n = 0, lines = 1;
    bool cut = false;
    if (!s) {
        if (out_cut)
            *out_cut = false;
        return 0;
    }
    for (; s[n]; n++) {
        if (n >= max_bytes) {
            cut = true;
            break;
        }
        if (s[n] == '\n' && ++lines > max_lines) {
            cut = s[n + 1] != '\0';
            break;
        }
    }
    /* never end inside a multi-byte UTF-8 sequence */
    if (cut)
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    if (out_cut)
        *out_cut = cut;
    return n;
}

/* ---- scales ----------------------------------------------------------- */

bool kevo_svg_placeable(const kevo_svg_axis *a, double v)
{
    return isfinite(v) && (!a->log || v > 0);
}

/* Position of v along the axis in [0, 1]. */
static double axis_frac(const kevo_svg_axis *a, double v)
{
    if (!kevo_svg_placeable(a, v))
        return 0;
    double t;
    if (a->log) {
        double l0 = log10(a->lo), l1 = log10(a->hi);
        t = l1 > l0 ? (log10(v) - l0) / (l1 - l0) : 0.5;
    } else {
        t = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.5;
    }
    if (!isfinite(t))
        return 0;
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

double kevo_svg_px(const kevo_svg_plot *p, double v)
{
    return p->left + axis_frac(&p->x, v) * (p->width - p->left - p->right);
}

double kevo_svg_py(const kevo_svg_plot *p, double v)
{
    return p->height - p->bottom - axis_frac(&p->y, v) * (p->height - p->top - p->bottom);
}

/* The smallest 1/2/5 x 10^k at least x (x > 0). */
static double nice_step(double x)
{
    double e = pow(10, floor(log10(x)));
    double f = x / e;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
}

/* The largest 1/2/5 x 10^k at most x (x > 0). */
static double nice_floor(double x)
{
    double e = pow(10, floor(log10(x) + 1e-9));
    double f = x / e;
    return (f >= 5 - 1e-9 ? 5 : f >= 2 - 1e-9 ? 2 : 1) * e;
}

void kevo_svg_log_domain(kevo_svg_axis *a, double min, double max)
{
    a->log = true;
    bool have = isfinite(min) && isfinite(max) && min > 0 && max > 0;
    double lo = have ? fmin(min, 1.0) : 0.1, hi = have ? fmax(max, 1.0) : 10.0;
    lo = fmax(lo, 1e-9);
    hi = fmin(hi, 1e9);
    lo = nice_floor(lo);
    hi = nice_step(hi * (1 - 1e-9));
    if (hi <= lo * (1 + 1e-9)) {
        lo = nice_floor(lo * 0.99);
        hi = nice_step(hi * 1.01);
    }
    a->lo = lo;
    a->hi = hi;
}

void kevo_svg_zero_domain(kevo_svg_axis *a, double max)
{
    a->log = false;
    a->lo = 0;
    if (!isfinite(max) || max <= 0) {
        a->hi = 1;
        return;
    }
    double step = nice_step(max / 5);
    a->hi = ceil(max / step - 1e-9) * step;
    if (a->hi <= 0)
        a->hi = 1;
}

/* ---- ticks ------------------------------------------------------------ */

void kevo_svg_label_speedup(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%gx", v);
}

void kevo_svg_label_percent(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%g%%", round(v * 1000) / 10);
}

void kevo_svg_label_count(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (a >= 1e9)
        snprintf(buf, len, "%gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%gM", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%gk", v / 1e3);
    else
        snprintf(buf, len, "%g", v);
}

void kevo_svg_label_int(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.0f", v);
}

static size_t add_tick(kevo_svg_tick *out, size_t n, size_t max, double v, kevo_svg_label_fn label)
{
    if (n >= max)
        return n;
    out[n].v = v;
    label(out[n].label, sizeof(out[n].label), v);
    return n + 1;
}

size_t kevo_svg_ticks(kevo_svg_tick *out, size_t max, const kevo_svg_axis *a,
                      kevo_svg_label_fn label)
{
    size_t n = 0;
    if (max == 0 || !isfinite(a->lo) || !isfinite(a->hi) || a->hi <= a->lo)
        return 0;
    if (a->log) {
        if (a->lo <= 0)
            return 0;
        double eps = 1e-9;
        int d0 = (int)lround(floor(log10(a->lo) + eps)), d1 = (int)lround(ceil(log10(a->hi) - eps));
        int span = d1 - d0, step = span > 8 ? (span + 7) / 8 : 1;
        for (int d = d0; d <= d1; d++) {
            static const double mult[3] = {1, 2, 5};
            for (int k = 0; k < (span <= 2 ? 3 : 1); k++) {
                double v = mult[k] * pow(10, d);
                if ((d - d0) % step || v < a->lo * (1 - eps) || v > a->hi * (1 + eps))
                    continue;
                n = add_tick(out, n, max, v, label);
            }
        }
        if (n < 3) {
            /* a narrow domain such as [1, 2]: linear steps inside it */
            double ls = nice_step((a->hi - a->lo) / 4);
            n = 0;
            double first = ceil(a->lo / ls - eps) * ls;
            for (int i = 0; i < 16 && first + i * ls <= a->hi * (1 + eps); i++)
                n = add_tick(out, n, max, first + i * ls, label);
        }
        return n;
    }
    double step = nice_step((a->hi - a->lo) / 5);
    double first = ceil(a->lo / step - 1e-9) * step;
    for (int i = 0; i < 64; i++) {
        double v = first + i * step;
        if (v > a->hi + step * 1e-9)
            break;
        if (fabs(v) < step * 1e-9)
            v = 0;
        n = add_tick(out, n, max, v, label);
    }
    return n;
}

size_t kevo_svg_ticks_iter(kevo_svg_tick *out, size_t max, int n_iter)
{
    size_t n = 0;
    if (n_iter < 1)
        n_iter = 1;
    int step = n_iter <= 10 ? 1 : (int)nice_step(n_iter / 8.0);
    if (step < 1)
        step = 1;
    n = add_tick(out, n, max, 1, kevo_svg_label_int);
    for (int i = step; i <= n_iter; i += step)
        if (i != 1)
            n = add_tick(out, n, max, i, kevo_svg_label_int);
    return n;
}

/* ---- drawing ---------------------------------------------------------- */

void kevo_svg_begin(kevo_writer *w, const kevo_svg_plot *p, const char *label)
{
    kevo_writer_puts(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 ");
    kevo_writer_num(w, p->width);
    kevo_writer_puts(w, " ");
    kevo_writer_num(w, p->height);
    kevo_writer_puts(w, "\" width=\"");
    kevo_writer_num(w, p->width);
    kevo_writer_puts(w, "\" height=\"");
    kevo_writer_num(w, p->height);
    kevo_writer_puts(w, "\" role=\"img\" aria-label=\"");
    kevo_writer_escape(w, label, (size_t)-1);
    kevo_writer_puts(w, "\">\n");
}

void kevo_svg_end(kevo_writer *w)
{
    kevo_writer_puts(w, "</svg>\n");
}

static void svg_hline(kevo_writer *w, double x1, double x2, double y, const char *cls)
{
    kevo_writer_puts(w, "<line class=\"");
    kevo_writer_puts(w, cls);
    kevo_writer_puts(w, "\" x1=\"");
    kevo_writer_num(w, x1);
    kevo_writer_puts(w, "\" x2=\"");
    kevo_writer_num(w, x2);
    kevo_writer_puts(w, "\" y1=\"");
    kevo_writer_num(w, y);
    kevo_writer_puts(w, "\" y2=\"");
    kevo_writer_num(w, y);
    kevo_writer_puts(w, "\"/>");
}

static void svg_vline(kevo_writer *w, double x, double y1, double y2, const char *cls)
{
    kevo_writer_puts(w, "<line class=\"");
    kevo_writer_puts(w, cls);
    kevo_writer_puts(w, "\" x1=\"");
    kevo_writer_num(w, x);
    kevo_writer_puts(w, "\" x2=\"");
    kevo_writer_num(w, x);
    kevo_writer_puts(w, "\" y1=\"");
    kevo_writer_num(w, y1);
    kevo_writer_puts(w, "\" y2=\"");
    kevo_writer_num(w, y2);
    kevo_writer_puts(w, "\"/>");
}

void kevo_svg_text(kevo_writer *w, double x, double y, const char *attrs, const char *text)
{
    kevo_writer_puts(w, "<text x=\"");
    kevo_writer_num(w, x);
    kevo_writer_puts(w, "\" y=\"");
    kevo_writer_num(w, y);
    kevo_writer_puts(w, "\"");
    if (attrs && *attrs) {
        kevo_writer_puts(w, " ");
        kevo_writer_puts(w, attrs);
    }
    kevo_writer_puts(w, ">");
    kevo_writer_escape(w, text, (size_t)-1);
    kevo_writer_puts(w, "</text>");
}

void kevo_svg_axes(kevo_writer *w, const kevo_svg_plot *p, const kevo_svg_tick *xt, size_t nx,
                   const kevo_svg_tick *yt, size_t ny, const char *xtitle, const char *ytitle)
{
    double x0 = p->left, x1 = p->width - p->right;
    double y0 = p->height - p->bottom, y1 = p->top;
    kevo_writer_puts(w, "<g class=\"axes\">");
    for (size_t i = 0; i < ny; i++) {
        double y = kevo_svg_py(p, yt[i].v);
        svg_hline(w, x0, x1, y, "grid");
        kevo_svg_text(w, x0 - 6, y + 4, "text-anchor=\"end\"", yt[i].label);
    }
    for (size_t i = 0; i < nx; i++) {
        double x = kevo_svg_px(p, xt[i].v);
        svg_vline(w, x, y0, y0 + 5, "tick");
        kevo_svg_text(w, x, y0 + 18, "text-anchor=\"middle\"", xt[i].label);
    }
    svg_hline(w, x0, x1, y0, "axis");
    svg_vline(w, x0, y1, y0, "axis");
    if (xtitle)
        kevo_svg_text(w, (x0 + x1) / 2, p->height - 6, "text-anchor=\"middle\" class=\"title\"",
                      xtitle);
    if (ytitle) {
        kevo_writer_puts(w,
                         "<text class=\"title\" text-anchor=\"middle\" transform=\"translate(14 ");
        kevo_writer_num(w, (y0 + y1) / 2);
        kevo_writer_puts(w, ") rotate(-90)\">");
        kevo_writer_escape(w, ytitle, (size_t)-1);
        kevo_writer_puts(w, "</text>");
    }
    kevo_writer_puts(w, "</g>\n");
}

static void svg_dot(kevo_writer *w, double x, double y, double r, const char *color)
{
    kevo_writer_puts(w, "<circle cx=\"");
    kevo_writer_num(w, x);
    kevo_writer_puts(w, "\" cy=\"");
    kevo_writer_num(w, y);
    kevo_writer_puts(w, "\" r=\"");
    kevo_writer_num(w, r);
    kevo_writer_puts(w, "\" fill=\"");
    kevo_writer_puts(w, color);
    kevo_writer_puts(w, "\"/>");
}

void kevo_svg_line(kevo_writer *w, const kevo_svg_plot *p, const double *xs, const double *ys,
                   size_t n, const char *color, const char *attrs, bool dots)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && !(kevo_svg_placeable(&p->x, xs[i]) && kevo_svg_placeable(&p->y, ys[i])))
            i++;
        size_t start = i;
        while (i < n && kevo_svg_placeable(&p->x, xs[i]) && kevo_svg_placeable(&p->y, ys[i]))
            i++;
        if (i == start)
            break;
        if (i - start == 1) {
            svg_dot(w, kevo_svg_px(p, xs[start]), kevo_svg_py(p, ys[start]), 2.5, color);
            continue;
        }
        kevo_writer_puts(w, "<polyline fill=\"none\" stroke=\"");
        kevo_writer_puts(w, color);
        kevo_writer_puts(w, "\" ");
        kevo_writer_puts(w, attrs ? attrs : "");
        kevo_writer_puts(w, " points=\"");
        for (size_t k = start; k < i; k++) {
            if (k > start)
                kevo_writer_puts(w, " ");
            kevo_writer_num(w, kevo_svg_px(p, xs[k]));
            kevo_writer_puts(w, ",");
            kevo_writer_num(w, kevo_svg_py(p, ys[k]));
        }
        kevo_writer_puts(w, "\"/>");
        if (dots)
            for (size_t k = start; k < i; k++)
                svg_dot(w, kevo_svg_px(p, xs[k]), kevo_svg_py(p, ys[k]), 2.5, color);
    }
    kevo_writer_puts(w, "\n");
}

/* Width of one legend entry: marker, gap, about 6.5 px per character at
 * the legend's font size, and a gap before the next one. */
static double legend_entry_width(const kevo_svg_legend_entry *e)
{
    return 22 + 6.5 * (double)strlen(e->label ? e->label : "") + 16;
}

size_t kevo_svg_legend_rows(const kevo_svg_legend_entry *e, size_t n, double width)
{
    size_t rows = n ? 1 : 0;
    double used = 0;
    for (size_t i = 0; i < n; i++) {
        double ew = legend_entry_width(&e[i]);
        if (used > 0 && used + ew > width) {
            rows++;
            used = 0;
        }
        used += ew;
    }
    return rows;
}

void kevo_svg_legend(kevo_writer *w, double x, double y, double width,
                     const kevo_svg_legend_entry *e, size_t n)
{
    double x0 = x;
    kevo_writer_puts(w, "<g class=\"legend\">");
    for (size_t i = 0; i < n; i++) {
        double ew = legend_entry_width(&e[i]);
        if (x > x0 && x - x0 + ew > width) {
            x = x0;
            y += 16;
        }
        if (e[i].box) {
            kevo_writer_puts(w, "<rect x=\"");
            kevo_writer_num(w, x);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, y - 9);
            kevo_writer_printf(w, "\" width=\"14\" height=\"10\" fill=\"%s\"/>", e[i].color);
        } else {
            kevo_writer_puts(w, "<line x1=\"");
            kevo_writer_num(w, x);
            kevo_writer_puts(w, "\" x2=\"");
            kevo_writer_num(w, x + 18);
            kevo_writer_puts(w, "\" y1=\"");
            kevo_writer_num(w, y - 4);
            kevo_writer_puts(w, "\" y2=\"");
            kevo_writer_num(w, y - 4);
            kevo_writer_printf(w, "\" stroke=\"%s\" stroke-width=\"", e[i].color);
            kevo_writer_num(w, e[i].width > 0 ? e[i].width : 2.5);
            kevo_writer_puts(w, "\"");
            if (e[i].dash)
                kevo_writer_printf(w, " stroke-dasharray=\"%s\"", e[i].dash);
            kevo_writer_puts(w, "/>");
        }
        kevo_svg_text(w, x + 22, y, NULL, e[i].label);
        x += ew;
    }
    kevo_writer_puts(w, "</g>\n");
}
