/*
 * test_report_html.c - the HTML report (kevo_report_html) on synthetic
 * stores: a typical run with branches and used items, a run with no
 * correct kernel, one task, a thousand tasks, speedups from 0.01x to
 * 1000x, zero and infinite values, hostile names/sources/feedback, two
 * runs compared; and the SVG/escaping helpers underneath. Every page must
 * be well-formed enough (balanced tags, one script: ours), carry no
 * "nan"/"inf" in SVG coordinates, and show exactly the numbers of
 * kevo_report_metrics().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/report.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "report/svg.h"

#include <ctype.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store_fixture.h"

/* ---- building a synthetic run ----------------------------------------- */

typedef struct att_spec {
    const char *task;
    kevo_stage stage;
    int iteration;
    int64_t parent;
    const char *verdict;
    double speedup; /* of a correct attempt; reference 100 us */
    const char *source;
    const char *feedback;
    int64_t tokens;
} att_spec;

/* A verdict by name; the test's own names are always valid. */
static kevo_verdict verdict_of(const char *name)
{
    kevo_verdict v = KEVO_VERDICT_INFRA_ERROR;
    assert_int_equal(kevo_verdict_parse(&v, name), 0);
    return v;
}

/* A spec with the fields most attempts need; the rest are zero. */
static att_spec at(const char *task, kevo_stage stage, int iteration, int64_t parent,
                   const char *verdict, double speedup)
{
    att_spec s = {.task = task,
                  .stage = stage,
                  .iteration = iteration,
                  .parent = parent,
                  .verdict = verdict,
                  .speedup = speedup};
    return s;
}

static att_spec with_tokens(att_spec s, int64_t tokens)
{
    s.tokens = tokens;
    return s;
}

static int64_t record(fixture *f, int64_t run, att_spec spec, const kevo_used_item *used,
                      size_t nused)
{
    const att_spec *s = &spec;
    bool ok = !strcmp(s->verdict, "correct");
    kevo_attempt a = {
        .run_id = run,
        .task = s->task,
        .backend = "c",
        .generator = "replay",
        .stage = s->stage,
        .iteration = s->iteration,
        .parent_id = s->parent,
        .verdict = verdict_of(s->verdict),
        .feedback = s->feedback ? s->feedback : (ok ? "Correct." : "error: something failed"),
        .source = s->source ? s->source : "void k(void) {}\n",
        .reference_us = 100,
        .candidate_us = ok && s->speedup > 0 ? 100 / s->speedup : 0,
        .speedup = ok ? s->speedup : 0,
        .tokens_prompt = s->tokens,
        .tokens_completion = s->tokens / 4,
    };
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, used, nused, &f->cfg, &id), 0);
    return id;
}

static int64_t begin_run(fixture *f, const char *config)
{
    int64_t run = 0;
    assert_int_equal(
        kevo_memory_run_begin(f->mem, config ? config : "{\"generator\":\"replay\"}", &run), 0);
    return run;
}

static kevo_run_metrics *metrics(fixture *f, int64_t run)
{
    kevo_run_metrics *m = NULL;
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    return m;
}

/* Render runs[0..n); with KEVO_TEST_HTML_DIR set, also keep the page as
 * DIR/<name>.html to look at in a browser. */
static char *render(fixture *f, kevo_run_metrics **runs, size_t n, const char *name)
{
    kevo_buf out = {0};
    int rc = kevo_report_html(&out, f->mem, runs, n);
    if (rc < 0)
        fprintf(stderr, "kevo_report_html: %s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    assert_true(out.len > 0);
    const char *keep = getenv("KEVO_TEST_HTML_DIR");
    if (keep && *keep) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s.html", keep, name);
        assert_int_equal(kevo_file_write(path, out.ptr, out.len), 0);
    }
    return kevo_buf_detach(&out);
}

/* ---- checks on a page ------------------------------------------------- */

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = hay; (p = strstr(p, needle)); p += len)
        n++;
    return n;
}

static size_t count_ci(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = hay; (p = strcasestr(p, needle)); p += len)
        n++;
    return n;
}

static bool coordinate_attr(const char *name, size_t len)
{
    static const char *const names[] = {"x",      "y",      "x1",      "x2",       "y1",
                                        "y2",     "cx",     "cy",      "r",        "width",
                                        "height", "points", "viewBox", "transform"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return true;
    return false;
}

/* Every coordinate attribute inside <svg>..</svg> holds only numbers. */
static void assert_svg_coordinates_finite(const char *html)
{
    const char *p = html;
    size_t nsvg = 0, nattr = 0;
    while ((p = strstr(p, "<svg"))) {
        const char *end = strstr(p, "</svg>");
        assert_non_null(end);
        nsvg++;
        for (const char *q = p; q < end; q++) {
            if (q[0] != '=' || q[1] != '"')
                continue;
            const char *name = q;
            while (name > p && (isalnum((unsigned char)name[-1]) || name[-1] == '-'))
                name--;
            const char *val = q + 2, *close = strchr(val, '"');
            assert_non_null(close);
            if (coordinate_attr(name, (size_t)(q - name))) {
                nattr++;
                for (const char *c = val; c < close; c++) {
                    if (!strchr("0123456789.-, ()", *c) && strncmp(c, "translate", 9) &&
                        strncmp(c, "rotate", 6)) {
                        fprintf(stderr, "bad coordinate: %.*s=\"%.*s\"\n", (int)(q - name), name,
                                (int)(close - val), val);
                        fail();
                    }
                    if (!strncmp(c, "translate", 9))
                        c += 8;
                    else if (!strncmp(c, "rotate", 6))
                        c += 5;
                }
                char *v = strndup(val, (size_t)(close - val));
                assert_null(strcasestr(v, "nan"));
                assert_null(strcasestr(v, "inf"));
                free(v);
            }
            q = close;
        }
        p = end;
    }
    assert_int_equal(nsvg, 4); /* the four figures */
    assert_true(nattr > 20);
}

/* Balanced enough: every element kevo opens is closed, exactly one script
 * (ours), nothing loaded from elsewhere. */
static void assert_well_formed(const char *html)
{
    assert_true(!strncmp(html, "<!DOCTYPE html>", 15));
    assert_non_null(strstr(html, "</html>\n"));
    assert_int_equal(count(html, "<svg"), count(html, "</svg>"));
    assert_int_equal(count(html, "<table"), count(html, "</table>"));
    assert_int_equal(count(html, "<ul"), count(html, "</ul>"));
    assert_int_equal(count(html, "<li>"), count(html, "</li>"));
    assert_int_equal(count(html, "<section"), count(html, "</section>"));
    assert_int_equal(count(html, "<details"), count(html, "</details>"));
    assert_int_equal(count(html, "<pre"), count(html, "</pre>"));
    assert_int_equal(count(html, "<figure"), count(html, "</figure>"));
    assert_int_equal(count(html, "<tr>"), count(html, "</tr>"));
    assert_int_equal(count_ci(html, "<script"), 1);
    assert_int_equal(count_ci(html, "</script"), 1);
    /* the only URLs are the SVG namespace */
    assert_int_equal(count_ci(html, "http://"),
                     count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    assert_null(strcasestr(html, "https://"));
    assert_null(strcasestr(html, "<link"));
    assert_null(strcasestr(html, "<img"));
    assert_null(strcasestr(html, "<iframe"));
    assert_non_null(strstr(html, "Content-Security-Policy"));
    assert_svg_coordinates_finite(html);
}

/* The data-value of data-metric `key` in the cards of run `run`. */
static double page_metric(const char *html, int64_t run, const char *key)
{
    char anchor[64], pat[96];
    snprintf(anchor, sizeof(anchor), "<div class=\"cards\" data-run=\"%lld\">", (long long)run);
    const char *p = strstr(html, anchor);
    assert_non_null(p);
    snprintf(pat, sizeof(pat), "data-metric=\"%s\" data-value=\"", key);
    p = strstr(p, pat);
    if (!p)
        fprintf(stderr, "no data-metric %s for run %lld\n", key, (long long)run);
    assert_non_null(p);
    p += strlen(pat);
    if (*p == '"')
        return NAN;
    char *end = NULL;
    double v = strtod(p, &end);
    assert_true(end > p && *end == '"');
    return v;
}

static void assert_same(double page, double want, const char *key)
{
    if (!(page == want || (isnan(page) && !isfinite(want)))) {
        fprintf(stderr, "%s: page %.17g, metrics %.17g\n", key, page, want);
        fail();
    }
}

static void assert_metrics_shown(const char *html, const kevo_run_metrics *m)
{
    int64_t id = m->run_id;
    assert_same(page_metric(html, id, "tasks"), m->tasks, "tasks");
    assert_same(page_metric(html, id, "attempts"), m->attempts, "attempts");
    assert_same(page_metric(html, id, "compiled_rate"), m->compiled_rate, "compiled_rate");
    assert_same(page_metric(html, id, "correct_rate"), m->correct_rate, "correct_rate");
    assert_same(page_metric(html, id, "fast_1"), m->fast_1, "fast_1");
    assert_same(page_metric(html, id, "fast_2"), m->fast_2, "fast_2");
    assert_same(page_metric(html, id, "geomean_speedup"), m->geomean_speedup, "geomean_speedup");
    assert_same(page_metric(html, id, "median_speedup_vs_first_draft"),
                m->median_speedup_vs_first_draft, "median_speedup_vs_first_draft");
    assert_same(page_metric(html, id, "mean_iterations_to_first_correct"),
                m->mean_iters_to_first_correct, "mean_iterations_to_first_correct");
    assert_same(page_metric(html, id, "tokens_prompt"), (double)m->tokens_prompt, "tokens_prompt");
    assert_same(page_metric(html, id, "tokens_completion"), (double)m->tokens_completion,
                "tokens_completion");
    assert_same(page_metric(html, id, "tokens_total"),
                (double)(m->tokens_prompt + m->tokens_completion), "tokens_total");
    assert_same(page_metric(html, id, "wall_s"), m->wall_s, "wall_s");
}

/* ---- cases ------------------------------------------------------------ */

static void test_report_html__typical_run(void **state)
{
    fixture *f = *state;
    char relu_dir[512];
    snprintf(relu_dir, sizeof(relu_dir), "%s/suites/c/level1/001_relu", KEVO_SOURCE_DIR);
    kevo_memory_task relu = {
        .name = "relu", .level = 1, .category = "activation", .suite_path = relu_dir};
    assert_int_equal(kevo_memory_task_upsert(f->mem, &relu, NULL), 0);
    kevo_item unroll = {.kind = KEVO_ITEM_RECIPE, .title = "unroll", .body = "unroll loops"};
    kevo_item omp = {.kind = KEVO_ITEM_RECIPE, .title = "omp_parallel", .body = "threads"};
    int64_t i1 = 0, i2 = 0;
    assert_int_equal(kevo_memory_item_add(f->mem, &unroll, &i1), 0);
    assert_int_equal(kevo_memory_item_add(f->mem, &omp, &i2), 0);

    int64_t run = begin_run(f, "{\"generator\":\"replay\",\"iterations\":4}");
    /* relu: draft, two branches from it, one refined further */
    int64_t d = record(f, run, at("relu", KEVO_STAGE_DRAFT, 0, 0, "correct", 1.0), NULL, 0);
    kevo_used_item u1[] = {{i1, KEVO_STAGE_REFINE, 1, 10, false}};
    kevo_used_item u2[] = {{i2, KEVO_STAGE_REFINE, 1, 10, false},
                           {i1, KEVO_STAGE_REFINE, 2, 10, false}};
    int64_t b1 = record(f, run, at("relu", KEVO_STAGE_REFINE, 1, d, "correct", 2.5), u1, 1);
    record(f, run, at("relu", KEVO_STAGE_REFINE, 2, d, "compile_error", 0), u2, 2);
    record(f, run, at("relu", KEVO_STAGE_REFINE, 3, b1, "correct", 4.0), u1, 1);
    /* gelu: fails twice, then correct but slower than the reference */
    record(f, run, at("gelu", KEVO_STAGE_DRAFT, 0, 0, "incorrect", 0), NULL, 0);
    record(f, run, at("gelu", KEVO_STAGE_DRAFT, 1, 0, "timeout", 0), NULL, 0);
    record(f, run, at("gelu", KEVO_STAGE_DRAFT, 2, 0, "correct", 0.5), NULL, 0);
    /* conv: never compiles */
    for (int i = 0; i < 4; i++)
        record(f, run, at("conv", KEVO_STAGE_DRAFT, i, 0, "compile_error", 0), NULL, 0);
    assert_int_equal(kevo_memory_run_finish(f->mem, run, "finished"), 0);

    kevo_run_metrics *m = metrics(f, run);
    char *html = render(f, &m, 1, "typical");
    assert_well_formed(html);
    assert_metrics_shown(html, m);
    /* the table links each task to its detail section */
    assert_non_null(strstr(html, "<a href=\"#r1-t0\">relu</a>"));
    assert_non_null(strstr(html, "<section class=\"task\" id=\"r1-t0\">"));
    assert_non_null(strstr(html, "id=\"r1-t2\""));
    /* the tree: the draft holds a nested list with both branches */
    assert_non_null(strstr(html, "compile_error"));
    assert_non_null(strstr(html, "&#9733; best"));
    assert_true(count(html, "<ul>") >= 2);
    /* roofline: relu's task.json is reachable, so GFLOP/s is a number */
    kevo_task *task = NULL;
    double flops = 0, bytes = 0;
    assert_int_equal(kevo_task_load(&task, relu_dir), 0);
    assert_int_equal(kevo_task_work(&flops, &bytes, task), 0);
    kevo_task_free(task);
    char want[64];
    assert_true(m->per_task[0].best_us == 25);
    snprintf(want, sizeof(want), "data-v=\"%.17g\"", flops / (m->per_task[0].best_us * 1e-6) / 1e9);
    assert_non_null(strstr(html, want));
    /* the memory view: both items, with their refine-stage use counts */
    assert_non_null(strstr(html, "Refine stage (Q2)"));
    assert_non_null(strstr(html, "omp_parallel"));
    assert_non_null(strstr(html, "used in run 1"));
    /* failed attempts' feedback */
    assert_non_null(strstr(html, "error: something failed"));
    /* the configuration */
    assert_non_null(strstr(html, "&quot;iterations&quot;:"));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__no_correct_kernel(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    for (int i = 0; i < 3; i++) {
        record(f, run, at("a", KEVO_STAGE_DRAFT, i, 0, "compile_error", 0), NULL, 0);
        record(f, run, with_tokens(at("b", KEVO_STAGE_DRAFT, i, 0, "incorrect", 0), 100), NULL, 0);
    }
    kevo_run_metrics *m = metrics(f, run);
    assert_true(m->correct_rate == 0 && m->geomean_speedup == 0);
    char *html = render(f, &m, 1, "no_correct");
    assert_well_formed(html);
    assert_metrics_shown(html, m);
    assert_non_null(strstr(html, "no task has a correct kernel"));
    assert_non_null(strstr(html, "no correct kernel yet"));
    assert_non_null(strstr(html, "No correct kernel; the last attempt"));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__one_task_one_attempt(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    record(f, run, with_tokens(at("only", KEVO_STAGE_DRAFT, 0, 0, "correct", 1.0), 10), NULL, 0);
    kevo_run_metrics *m = metrics(f, run);
    char *html = render(f, &m, 1, "one_task");
    assert_well_formed(html);
    assert_metrics_shown(html, m);
    assert_non_null(strstr(html, "No item has a learned Q at this stage yet."));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__thousand_tasks_extreme_speedups(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    assert_int_equal(kevo_memory_tx_begin(f->mem), 0);
    for (int k = 0; k < 1000; k++) {
        char name[32];
        snprintf(name, sizeof(name), "op_%04d", k);
        /* log-uniform from 0.01x to 1000x; every 7th task never correct */
        double s = pow(10, -2 + 5.0 * k / 999.0);
        bool solved = k % 7 != 3;
        int64_t d = record(
            f, run,
            with_tokens(at(name, KEVO_STAGE_DRAFT, 0, 0, solved ? "correct" : "crash", s / 2),
                        1000 + k),
            NULL, 0);
        record(f, run,
               with_tokens(at(name, solved ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT, 1,
                              solved ? d : 0, solved ? "correct" : "incorrect", s),
                           500),
               NULL, 0);
    }
    assert_int_equal(kevo_memory_tx_commit(f->mem), 0);
    kevo_run_metrics *m = metrics(f, run);
    assert_int_equal(m->tasks, 1000);
    double t0 = kevo_now_s();
    char *html = render(f, &m, 1, "thousand");
    double took = kevo_now_s() - t0;
    assert_true(took < 30);
    assert_well_formed(html);
    assert_metrics_shown(html, m);
    /* the extremes are on the axis */
    assert_non_null(strstr(html, ">0.01x</text>"));
    assert_non_null(strstr(html, ">1000x</text>"));
    assert_non_null(strstr(html, "hover a bar"));
    assert_non_null(strstr(html, "id=\"r1-t999\""));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__zero_and_infinite_values(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    /* a correct attempt without a latency (speedup 0) */
    record(f, run, at("zero", KEVO_STAGE_DRAFT, 0, 0, "correct", 0), NULL, 0);
    int64_t big = record(f, run, at("inf", KEVO_STAGE_DRAFT, 0, 0, "correct", 2), NULL, 0);
    record(f, run, at("tiny", KEVO_STAGE_DRAFT, 5, 0, "correct", 1e-300), NULL, 0);
    /* the API refuses non-finite numbers; a damaged store may still hold one */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    char sql[160];
    snprintf(sql, sizeof(sql), "UPDATE attempts SET speedup = 9e999 WHERE id = %lld",
             (long long)big);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    kevo_run_metrics *m = metrics(f, run);
    assert_false(isfinite(m->geomean_speedup));
    /* and metrics computed elsewhere may carry NaN */
    m->median_speedup_vs_first_draft = NAN;
    m->per_task[0].best_speedup = NAN;
    m->wall_s = NAN;
    char *html = render(f, &m, 1, "zero_inf");
    assert_well_formed(html);
    assert_same(page_metric(html, run, "geomean_speedup"), m->geomean_speedup, "geomean");
    assert_same(page_metric(html, run, "tasks"), 3, "tasks");
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__hostile_store_content(void **state)
{
    fixture *f = *state;
    const char *evil = "x</script><script>alert(1)</script>";
    int64_t run = begin_run(f, "{\"note\":\"</script><script>alert(2)</script>\"}");
    kevo_item it = {
        .kind = KEVO_ITEM_EXPERIENCE, .title = "<img src=x onerror=alert(3)>", .body = "b"};
    int64_t item = 0;
    assert_int_equal(kevo_memory_item_add(f->mem, &it, &item), 0);
    kevo_used_item u[] = {{item, KEVO_STAGE_DRAFT, 1, 5, false}};
    const char *name = "<b>evil</b>\"'&";
    att_spec s1 = at(name, KEVO_STAGE_DRAFT, 0, 0, "correct", 3.0);
    s1.source = evil;
    record(f, run, s1, u, 1);
    att_spec s2 = at(name, KEVO_STAGE_DRAFT, 1, 0, "incorrect", 0);
    s2.source = evil;
    s2.feedback = "<img src=x onerror=alert(4)>\x01\r\n";
    record(f, run, s2, u, 1);
    kevo_run_metrics *m = metrics(f, run);
    char *html = render(f, &m, 1, "hostile");
    assert_well_formed(html); /* one <script>, no <img> */
    assert_null(strstr(html, "<b>evil"));
    assert_non_null(strstr(html, "&lt;b&gt;evil&lt;/b&gt;&quot;&#39;&amp;"));
    assert_non_null(strstr(html, "x&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(html, "&lt;img src=x onerror=alert(4)&gt;&#xFFFD;\n"));
    assert_non_null(strstr(html, "&lt;/script&gt;&lt;script&gt;alert(2)"));
    assert_non_null(strstr(html, "&lt;img src=x onerror=alert(3)&gt;"));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__compare_two_runs(void **state)
{
    fixture *f = *state;
    int64_t a = begin_run(f, NULL);
    for (int k = 0; k < 5; k++) {
        char name[16];
        snprintf(name, sizeof(name), "t%d", k);
        for (int i = 0; i < 3; i++)
            record(f, a, at(name, KEVO_STAGE_DRAFT, i, 0, "correct", 1 + k + i), NULL, 0);
    }
    int64_t b = begin_run(f, NULL);
    kevo_item it = {.kind = KEVO_ITEM_BEST_PRACTICE, .title = "vectorise", .body = "simd"};
    int64_t item = 0;
    assert_int_equal(kevo_memory_item_add(f->mem, &it, &item), 0);
    kevo_used_item u[] = {{item, KEVO_STAGE_DRAFT, 1, 5, false}};
    for (int k = 2; k < 8; k++) {
        char name[16];
        snprintf(name, sizeof(name), "t%d", k);
        att_spec s = at(name, KEVO_STAGE_DRAFT, 0, 0, k == 7 ? "crash" : "correct", 0.5 * k);
        record(f, b, with_tokens(s, 200), u, 1);
    }
    kevo_run_metrics *runs[2] = {metrics(f, a), metrics(f, b)};
    char *html = render(f, runs, 2, "compare");
    assert_well_formed(html);
    assert_metrics_shown(html, runs[0]);
    assert_metrics_shown(html, runs[1]);
    assert_non_null(strstr(html, "kevo report: run 1 vs run 2"));
    assert_non_null(strstr(html, ">run 1 correct</text>"));
    assert_non_null(strstr(html, ">run 2 correct</text>"));
    assert_non_null(strstr(html, "id=\"r2-t0\""));
    assert_non_null(strstr(html, "used in run 2"));
    /* vectorise was used 6 times in run 2, never in run 1 */
    assert_non_null(strstr(html, "<td>0</td><td>6</td><td class=\"l\">best_practice</td>"));
    free(html);
    kevo_run_metrics_free(runs[0]);
    kevo_run_metrics_free(runs[1]);
}

static void test_report_html__long_refine_chain(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    int64_t parent = record(f, run, at("chain", KEVO_STAGE_DRAFT, 0, 0, "correct", 1), NULL, 0);
    for (int i = 1; i < 60; i++)
        parent = record(
            f, run,
            at("chain", KEVO_STAGE_REFINE, i, parent, i % 5 ? "correct" : "crash", 1 + 0.1 * i),
            NULL, 0);
    kevo_run_metrics *m = metrics(f, run);
    char *html = render(f, &m, 1, "chain");
    assert_well_formed(html);
    assert_metrics_shown(html, m);
    /* a chain of 60 nests at most 24 levels deep, then continues flat */
    const char *tree = strstr(html, "<ul class=\"tree\">");
    assert_non_null(tree);
    int depth = 0, deepest = 0;
    for (const char *p = tree; *p && depth >= 0; p++) {
        if (!strncmp(p, "<ul", 3))
            depth++;
        else if (!strncmp(p, "</ul>", 5) && --depth == 0)
            break;
        if (depth > deepest)
            deepest = depth;
    }
    assert_int_equal(deepest, 25); /* the tree's own list + 24 levels */
    assert_int_equal(count(tree, "<li>") >= 60, 1);
    assert_non_null(strstr(html, "more failed attempts not shown"));
    free(html);
    kevo_run_metrics_free(m);
}

static void test_report_html__bad_arguments(void **state)
{
    fixture *f = *state;
    int64_t run = begin_run(f, NULL);
    record(f, run, at("t", KEVO_STAGE_DRAFT, 0, 0, "correct", 1), NULL, 0);
    kevo_run_metrics *m = metrics(f, run);
    kevo_buf out = {0};
    assert_int_equal(kevo_report_render(&out, &m, 1, KEVO_REPORT_HTML), KEVO_EINVAL);
    assert_int_equal(kevo_report_html(&out, f->mem, &m, 0), KEVO_EINVAL);
    kevo_run_metrics *five[5] = {m, m, m, m, m};
    assert_int_equal(kevo_report_html(&out, f->mem, five, 5), KEVO_EINVAL);
    kevo_buf_free(&out);
    kevo_run_metrics_free(m);
}

static void test_report_html__svg_helpers(void **state)
{
    (void)state;
    kevo_buf b = {0};
    kevo_writer w = {&b, 0};
    kevo_writer_num(&w, NAN);
    kevo_writer_puts(&w, " ");
    kevo_writer_num(&w, INFINITY);
    kevo_writer_puts(&w, " ");
    kevo_writer_num(&w, -0.001);
    kevo_writer_puts(&w, " ");
    kevo_writer_num(&w, 12.5);
    kevo_writer_puts(&w, " ");
    kevo_writer_num(&w, 3.0);
    kevo_writer_puts(&w, " ");
    kevo_writer_num(&w, 1e300);
    assert_string_equal(kevo_buf_cstr(&b), "0 0 0 12.5 3 1000000000");
    kevo_buf_clear(&b);
    kevo_writer_escape(&w, "a<b>&\"'\x02\tz", (size_t)-1);
    assert_string_equal(kevo_buf_cstr(&b), "a&lt;b&gt;&amp;&quot;&#39;&#xFFFD;\tz");
    assert_int_equal(w.error, 0);
    kevo_buf_free(&b);

    /* cutting never splits a UTF-8 sequence */
    bool cut = false;
    assert_int_equal(kevo_text_cut("ab\xc3\xa9z", 3, 10, &cut), 2);
    assert_true(cut);
    assert_int_equal(kevo_text_cut("l1\nl2\nl3", 100, 2, &cut), 5);
    assert_true(cut);
    assert_int_equal(kevo_text_cut("short", 100, 2, &cut), 5);
    assert_false(cut);

    /* log domains cover 1 and the data, ticks stay inside */
    kevo_svg_axis a;
    kevo_svg_log_domain(&a, 0.01, 1000);
    assert_true(a.lo <= 0.01 && a.hi >= 1000 && a.log);
    kevo_svg_tick t[32];
    size_t n = kevo_svg_ticks(t, 32, &a, kevo_svg_label_speedup);
    assert_true(n >= 3);
    assert_string_equal(t[0].label, "0.01x");
    assert_string_equal(t[n - 1].label, "1000x");
    kevo_svg_log_domain(&a, 1.1, 1.2);
    assert_true(a.lo <= 1 && a.hi >= 1.2 && a.hi <= 2);
    n = kevo_svg_ticks(t, 32, &a, kevo_svg_label_speedup);
    assert_true(n >= 3);
    kevo_svg_log_domain(&a, NAN, INFINITY);
    assert_true(a.lo > 0 && a.hi > a.lo && isfinite(a.hi));
    kevo_svg_log_domain(&a, 1e-300, 1e300);
    assert_true(a.lo >= 1e-9 && a.hi <= 1e9);
    n = kevo_svg_ticks(t, 32, &a, kevo_svg_label_speedup);
    assert_true(n >= 2 && n <= 10);
    kevo_svg_plot p = {.width = 100, .height = 100, .x = a, .y = a};
    assert_true(isfinite(kevo_svg_px(&p, NAN)) && isfinite(kevo_svg_py(&p, -1)));
    kevo_svg_zero_domain(&a, 0);
    assert_true(a.lo == 0 && a.hi == 1);
    kevo_svg_zero_domain(&a, 1234);
    assert_true(a.hi >= 1234 && a.hi <= 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_html__typical_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__no_correct_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__one_task_one_attempt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__thousand_tasks_extreme_speedups, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_html__zero_and_infinite_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_report_html__hostile_store_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__compare_two_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__long_refine_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_html__bad_arguments, setup, teardown),
        cmocka_unit_test(test_report_html__svg_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
