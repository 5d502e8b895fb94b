/*
 * report/html_figures.c - the Figures section of the HTML page, as inline
 * SVG drawn with report/svg.h: cumulative correct / compiled rate by
 * iteration, each task's best-so-far speedup by iteration (log axis) with
 * the geometric mean in bold, tokens per iteration (prompt and completion
 * stacked), each task's best speedup as sorted bars from 1x (log axis).
 * Several runs share the axes, one colour each. Values that cannot be
 * drawn (no correct kernel, 0, NaN, infinity) are left out.
 *
 * Draws from the loaded model only: no store (no kevo_memory_* call), no
 * file, no other section of the page.
 */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "no_store.h"

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

static int max_iters(const kevo_report__run *views, size_t n)
{
    int t = 1;
    for (size_t r = 0; r < n; r++)
        if (views[r].iters > t)
            t = views[r].iters;
    return t;
}

static void run_label(char *buf, size_t len, const kevo_report__run *v, size_t n, const char *what)
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

static int fig_cumulative(kevo_writer *w, const kevo_report__run *views, size_t n)
{
    int T = max_iters(views, n);
    kevo_svg_legend_entry leg[2 * KEVO_REPORT__MAX_RUNS];
    char labels[2 * KEVO_REPORT__MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "correct");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "compiled");
        leg[2 * r] =
            (kevo_svg_legend_entry){labels[2 * r], kevo_report__run_colors[r], NULL, false, 0};
        leg[2 * r + 1] =
            (kevo_svg_legend_entry){labels[2 * r + 1], kevo_report__run_colors[r], "6 4", false, 2};
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
        const kevo_report__run *v = &views[r];
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
        kevo_svg_line(w, &p, xs, yp, (size_t)Tr, kevo_report__run_colors[r],
                      "stroke-width=\"2\" stroke-dasharray=\"6 4\"", T <= 40);
        kevo_svg_line(w, &p, xs, yc, (size_t)Tr, kevo_report__run_colors[r], "stroke-width=\"2.5\"",
                      T <= 40);
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
static void task_best_so_far(double *b, int T, const kevo_report__run *v,
                             const kevo_report__task *t)
{
    for (int i = 0; i < T; i++)
        b[i] = 0;
    for (size_t j = 0; j < t->natt; j++) {
        const kevo_attempt *a = &v->list->attempts[t->att[j]];
        int it = kevo_report__clamp_iter(a->iteration);
        if (it < T && a->verdict == KEVO_VERDICT_CORRECT && kevo_report__good_speedup(a->speedup) &&
            a->speedup > b[it])
            b[it] = a->speedup;
    }
    double best = 0;
    for (int i = 0; i < T; i++) {
        best = fmax(best, b[i]);
        b[i] = best > 0 ? best : NAN;
    }
}

static int fig_trajectory(kevo_writer *w, const kevo_report__run *views, size_t n)
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
                if (kevo_report__good_speedup(b[i])) {
                    lo = fmin(lo, b[i]);
                    hi = fmax(hi, b[i]);
                }
        }
    kevo_svg_legend_entry leg[2 * KEVO_REPORT__MAX_RUNS];
    char labels[2 * KEVO_REPORT__MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "one task");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "geomean");
        leg[2 * r] =
            (kevo_svg_legend_entry){labels[2 * r], kevo_report__run_colors[r], NULL, false, 1.2};
        leg[2 * r + 1] = (kevo_svg_legend_entry){labels[2 * r + 1], kevo_report__run_colors[r],
                                                 NULL, false, 3.5};
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
        const kevo_report__run *v = &views[r];
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
            kevo_svg_line(w, &p, xs, b, (size_t)Tr, kevo_report__run_colors[r], attrs, false);
            for (int i = 0; i < Tr; i++)
                if (kevo_report__good_speedup(b[i])) {
                    ls[i] += log(b[i]);
                    cnt[i]++;
                }
        }
        for (int i = 0; i < Tr; i++)
            gm[i] = cnt[i] ? exp(ls[i] / (double)cnt[i]) : NAN;
        kevo_svg_line(w, &p, xs, gm, (size_t)Tr, kevo_report__run_colors[r], "stroke-width=\"3.5\"",
                      false);
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

static int fig_tokens(kevo_writer *w, const kevo_report__run *views, size_t n)
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
            int it = kevo_report__clamp_iter(l->attempts[i].iteration);
            double a = (double)l->attempts[i].tokens_prompt,
                   b = (double)l->attempts[i].tokens_completion;
            tp[r * (size_t)T + (size_t)it] += a > 0 ? a : 0;
            tc[r * (size_t)T + (size_t)it] += b > 0 ? b : 0;
        }
        for (int i = 0; i < T; i++)
            maxv = fmax(maxv, tp[r * (size_t)T + (size_t)i] + tc[r * (size_t)T + (size_t)i]);
    }
    kevo_svg_legend_entry leg[2 * KEVO_REPORT__MAX_RUNS];
    char labels[2 * KEVO_REPORT__MAX_RUNS][48];
    for (size_t r = 0; r < n; r++) {
        run_label(labels[2 * r], sizeof(labels[0]), &views[r], n, "prompt");
        run_label(labels[2 * r + 1], sizeof(labels[0]), &views[r], n, "completion");
        leg[2 * r] =
            (kevo_svg_legend_entry){labels[2 * r], kevo_report__run_colors[r], NULL, true, 0};
        leg[2 * r + 1] =
            (kevo_svg_legend_entry){labels[2 * r + 1], kevo_report__run_light[r], NULL, true, 0};
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
            kevo_writer_printf(w, "\" fill=\"%s\"/><rect x=\"", kevo_report__run_colors[r]);
            kevo_writer_num(w, x);
            kevo_writer_puts(w, "\" y=\"");
            kevo_writer_num(w, yb);
            kevo_writer_puts(w, "\" width=\"");
            kevo_writer_num(w, bw);
            kevo_writer_puts(w, "\" height=\"");
            kevo_writer_num(w, ya - yb);
            kevo_writer_printf(w, "\" fill=\"%s\"/></g>\n", kevo_report__run_light[r]);
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
    double s[KEVO_REPORT__MAX_RUNS];
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

/* The rows of the speedup figure: the union of the runs' task names, each
 * once, that have a correct kernel in some run, sorted (best first). */
typedef struct speed_rows {
    speed_row *rows; /* n of them */
    size_t n, unsolved;
    double lo, hi; /* the speedups' range */
} speed_rows;

static int speed_rows_collect(speed_rows *out, const kevo_report__run *views, size_t n)
{
    int error = 0;
    size_t cap = 0;
    for (size_t r = 0; r < n; r++)
        cap += views[r].m->ntasks;
    speed_row *rows = calloc(cap + 1, sizeof(*rows));
    const char **names = calloc(cap + 1, sizeof(*names));
    *out = (speed_rows){.rows = rows, .lo = INFINITY, .hi = 0};
    if (!rows || !names) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory drawing a figure");
        goto done;
    }
    /* the union of task names, each once */
    size_t nnames = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t k = 0; k < views[r].m->ntasks; k++)
            names[nnames++] = views[r].m->per_task[k].task;
    qsort(names, nnames, sizeof(*names), cmp_name_ptr);
    for (size_t i = 0; i < nnames; i++) {
        if (i > 0 && !strcmp(names[i], names[i - 1]))
            continue;
        speed_row row = {.task = names[i]};
        bool any = false;
        for (size_t r = 0; r < n; r++) {
            long k = kevo_report__task_find(&views[r], names[i]);
            double s =
                k >= 0 && views[r].tasks[k].tm->correct ? views[r].tasks[k].tm->best_speedup : 0;
            row.s[r] = kevo_report__good_speedup(s) ? s : 0;
            if (row.s[r] > 0) {
                any = true;
                out->lo = fmin(out->lo, row.s[r]);
                out->hi = fmax(out->hi, row.s[r]);
            }
        }
        if (any)
            rows[out->n++] = row;
        else
            out->unsolved++;
    }
    qsort_r(rows, out->n, sizeof(*rows), cmp_speed_row, &n);
done:
    free(names);
    return error;
}

/* How the rows are laid out: named rows up to 40 tasks, else rows that
 * share 900 px. */
typedef struct speed_layout {
    bool labels, wide;
    double row_h, area, fill, bar_h;
} speed_layout;

/* One row: its task's name (when named) and one bar per run from 1x. */
static void speed_row_draw(kevo_writer *w, const kevo_svg_plot *p, const speed_layout *lay,
                           const speed_row *row, double y, double x1, const kevo_report__run *views,
                           size_t n)
{
    if (lay->labels) {
        bool cut = false;
        size_t len = kevo_text_cut(row->task, 24, 1, &cut);
        kevo_writer_puts(w, "<text text-anchor=\"end\" x=\"");
        kevo_writer_num(w, p->left - 6);
        kevo_writer_puts(w, "\" y=\"");
        kevo_writer_num(w, y + lay->row_h * 0.4 + 4);
        kevo_writer_puts(w, "\">");
        kevo_writer_escape(w, row->task, len);
        if (cut)
            kevo_writer_puts(w, "&#8230;");
        kevo_writer_puts(w, "</text>");
    }
    for (size_t r = 0; r < n; r++) {
        double s = row->s[r];
        if (!(s > 0))
            continue;
        double xs = kevo_svg_px(p, s);
        double xa = fmin(xs, x1), width = fmax(fabs(xs - x1), 1.5);
        const char *color = n > 1    ? kevo_report__run_colors[r]
                            : s >= 1 ? kevo_report__run_colors[0]
                                     : kevo_report__run_colors[1];
        char sp[32];
        kevo_report__fmt_speedup(sp, sizeof(sp), s);
        kevo_writer_puts(w, "<rect x=\"");
        kevo_writer_num(w, xa);
        kevo_writer_puts(w, "\" y=\"");
        kevo_writer_num(w, y + lay->bar_h * (double)r);
        kevo_writer_puts(w, "\" width=\"");
        kevo_writer_num(w, width);
        kevo_writer_puts(w, "\" height=\"");
        /* unnamed rows overlap a little: no hairline seams between them */
        kevo_writer_num(w, lay->labels ? lay->bar_h : lay->bar_h + 0.5);
        kevo_writer_printf(w, "\" fill=\"%s\"><title>", color);
        kevo_writer_escape(w, row->task, (size_t)-1);
        if (n > 1)
            kevo_writer_printf(w, " (run %lld)", (long long)views[r].m->run_id);
        kevo_writer_printf(w, ": %s</title></rect>", sp);
    }
    kevo_writer_puts(w, "\n");
}

static int fig_speedups(kevo_writer *w, const kevo_report__run *views, size_t n)
{
    speed_rows sr;
    int error = speed_rows_collect(&sr, views, n);
    if (error < 0)
        goto done;
    size_t nrows = sr.n;

    /* up to 40 tasks: a named row each; more: the rows share 900 px */
    speed_layout lay = {.labels = nrows <= 40, .wide = nrows > 16};
    lay.row_h = lay.labels ? (n > 1 ? 20 : 16) : 900.0 / (double)nrows;
    lay.area = nrows ? fmin((double)nrows * lay.row_h, 900) : 120;
    if (nrows && lay.area < 48)
        lay.area = 48;
    if (nrows)
        lay.row_h = lay.area / (double)nrows;
    kevo_svg_legend_entry leg[KEVO_REPORT__MAX_RUNS];
    char lab[KEVO_REPORT__MAX_RUNS][48];
    size_t nleg = n;
    if (n > 1) {
        for (size_t r = 0; r < n; r++) {
            snprintf(lab[r], sizeof(lab[r]), "run %lld", (long long)views[r].m->run_id);
            leg[r] = (kevo_svg_legend_entry){lab[r], kevo_report__run_colors[r], NULL, true, 0};
        }
    } else {
        leg[0] = (kevo_svg_legend_entry){"faster than the reference", kevo_report__run_colors[0],
                                         NULL, true, 0};
        leg[1] = (kevo_svg_legend_entry){"slower", kevo_report__run_colors[1], NULL, true, 0};
        nleg = 2;
    }
    kevo_svg_plot p =
        plot_frame(lay.wide ? 2 * FIG_W : FIG_W, lay.area, lay.labels ? 170 : 56, leg, nleg);
    kevo_svg_log_domain(&p.x, nrows ? sr.lo : 0, nrows ? sr.hi : 0);
    p.y = (kevo_svg_axis){0, 1, false};
    kevo_svg_tick xt[32];
    size_t nx = kevo_svg_ticks(xt, 32, &p.x, kevo_svg_label_speedup);
    figure_open(w, "fig-speedups", lay.wide);
    kevo_svg_begin(w, &p, "best speedup per task, log scale");
    kevo_svg_axes(w, &p, xt, nx, NULL, 0, "best speedup over the reference (log scale)", NULL);
    double x1 = kevo_svg_px(&p, 1.0);
    ref_line(w, x1, x1, p.top, p.height - p.bottom);
    /* named rows get a gap between them; unnamed rows touch, so that a
     * thousand sub-pixel bars read as one distribution, without moire */
    lay.fill = lay.labels ? 0.8 : 1.0;
    lay.bar_h = lay.row_h * lay.fill / (double)n;
    kevo_writer_puts(w, lay.labels ? "<g>" : "<g shape-rendering=\"crispEdges\">");
    for (size_t i = 0; i < nrows; i++)
        speed_row_draw(w, &p, &lay, &sr.rows[i],
                       p.top + lay.row_h * (double)i + lay.row_h * (1 - lay.fill) / 2, x1, views,
                       n);
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
             sr.unsolved, sr.unsolved == 1 ? "" : "s", sr.unsolved == 1 ? "is" : "are",
             lay.labels ? "" : " Too many tasks to name each row: hover a bar for its task.");
    figure_close(w, cap_text);
done:
    free(sr.rows);
    return error;
}

int kevo_report__html_figures(kevo_writer *w, const kevo_report__model *model)
{
    const kevo_report__run *views = model->runs;
    size_t n = model->nruns;
    int error = 0;
    kevo_writer_puts(w, "<h2 id=\"figures\">Figures</h2>\n");
    kevo_writer_puts(w, "<div class=\"figs\">\n");
    if ((error = fig_cumulative(w, views, n)) < 0 || (error = fig_trajectory(w, views, n)) < 0 ||
        (error = fig_tokens(w, views, n)) < 0 || (error = fig_speedups(w, views, n)) < 0)
        goto done;
    kevo_writer_puts(w, "</div>\n");
done:
    return error;
}
