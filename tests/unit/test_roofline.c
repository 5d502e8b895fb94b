/*
 * test_roofline.c - the roofline (kevo/roofline.h, src/backend/roofline.c)
 * and its report fields: the bandwidth curve's lookup by working set, a
 * kernel's bound, fraction and bottleneck from hand-built peaks and known
 * flops/bytes/latency, the peaks cache's round trip and its refusal of the
 * old one-bandwidth format, and `kevo report`'s roof_fraction per task and
 * median per run on a store built by hand. Every expected value is worked
 * out here by hand from the numbers given; nothing is timed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/memory.h"
#include "kevo/report.h"
#include "kevo/roofline.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fixture.h"

#define KiB 1024.0
#define MiB (1024.0 * 1024)
#define GiB (1024.0 * 1024 * 1024)

static void assert_close(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= 1e-9 * (1 + fabs(want))))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* L1 200 GB/s up to 32 KiB, L2 100 up to 1 MiB, L3 25 up to 256 MiB,
 * DRAM 10 at 1 GiB; 100 GFLOP/s fp32. */
static kevo_peaks sample_peaks(void)
{
    kevo_peaks p = {.mem_gbs = 10, .fp32_gflops = 100, .threads = 2, .npoints = 4,
                    .curve = {{32 * KiB, 200}, {1 * MiB, 100}, {256 * MiB, 25}, {1 * GiB, 10}}};
    snprintf(p.machine, sizeof(p.machine), "%s", "0123456789abcdef0123456789abcdef");
    snprintf(p.measured, sizeof(p.measured), "%s", "2026-12-03T16:28:05Z");
    return p;
}

static void test_roofline__curve_lookup(void **state)
{
    (void)state;
    kevo_peaks p = sample_peaks();
    assert_close(kevo_peaks_bandwidth(&p, 100), 200, "below the first point: the first's");
    assert_close(kevo_peaks_bandwidth(&p, 32 * KiB), 200, "exactly a point: that point's");
    assert_close(kevo_peaks_bandwidth(&p, 32 * KiB + 1), 100, "just above: the next point's");
    assert_close(kevo_peaks_bandwidth(&p, 128 * MiB), 25, "an L3-sized set");
    assert_close(kevo_peaks_bandwidth(&p, 300 * MiB), 10, "between L3 and the last point");
    assert_close(kevo_peaks_bandwidth(&p, 8 * GiB), 10, "beyond the last: the last's");
    kevo_peaks one = {.mem_gbs = 7, .fp32_gflops = 50};
    assert_close(kevo_peaks_bandwidth(&one, 1 * MiB), 7, "no curve: mem_gbs");
    assert_close(kevo_peaks_bandwidth(NULL, 1 * MiB), 0, "no peaks: 0");
}

static void test_roofline__fraction_and_bottleneck(void **state)
{
    (void)state;
    kevo_peaks p = sample_peaks();
    kevo_roofline r;
    /* memory-bound: 1e6 flops over 8e6 bytes (8 MB: the 25 GB/s level);
     * intensity 0.125, bound 0.125 x 25 = 3.125 GFLOP/s; at 1000 us it
     * achieves 1 GFLOP/s and 8 GB/s: 0.32 of the bound */
    assert_int_equal(kevo_roofline_compute(&r, 1e6, 8e6, 1000, &p), 0);
    assert_true(r.have_bound);
    assert_true(r.memory_bound);
    assert_string_equal(kevo_roofline_bottleneck(&r), "memory");
    assert_close(r.gbs, 8, "gbs");
    assert_close(r.gflops, 1, "gflops");
    assert_close(r.intensity, 0.125, "intensity");
    assert_close(r.bw_gbs, 25, "bandwidth at 8 MB");
    assert_close(r.bound_gflops, 3.125, "bound_gflops");
    assert_close(r.bound_gbs, 25, "bound_gbs");
    assert_close(r.fraction, 0.32, "fraction");
    /* the case: 128 MiB streamed at 20 GB/s; against DRAM's 10 it
     * would read 2.0, against the L3 level's 25 it is 0.8 */
    double bytes = 128 * MiB, flops = bytes / 8, us = bytes / 20e9 * 1e6;
    assert_int_equal(kevo_roofline_compute(&r, flops, bytes, us, &p), 0);
    assert_close(r.fraction, 0.8, "relu in L3");
    /* compute-bound: 1e9 flops over 1e6 bytes (L2: 100 GB/s); the memory
     * roof 1000 x 100 is above the 100 GFLOP/s peak; 50 GFLOP/s = 0.5 */
    assert_int_equal(kevo_roofline_compute(&r, 1e9, 1e6, 20000, &p), 0);
    assert_false(r.memory_bound);
    assert_string_equal(kevo_roofline_bottleneck(&r), "compute");
    assert_close(r.bound_gflops, 100, "compute bound");
    assert_close(r.bound_gbs, 0.1, "the compute roof in bytes");
    assert_close(r.fraction, 0.5, "compute fraction");
    /* flops unknown ("0"): achieved rates, no bound */
    assert_int_equal(kevo_roofline_compute(&r, 0, 8e6, 1000, &p), 0);
    assert_false(r.have_bound);
    assert_close(r.gbs, 8, "gbs without flops");
    /* no peaks: achieved rates, no bound */
    assert_int_equal(kevo_roofline_compute(&r, 1e6, 8e6, 1000, NULL), 0);
    assert_false(r.have_bound);
    assert_close(r.gflops, 1, "gflops without peaks");
    /* nothing to compute */
    assert_int_equal(kevo_roofline_compute(&r, 1e6, 8e6, 0, &p), KEVO_EINVAL);
    assert_int_equal(kevo_roofline_compute(&r, 1e6, 0, 1000, &p), KEVO_EINVAL);
    /* the diagnosis names the fraction and the working set's bandwidth */
    char *text = NULL;
    assert_int_equal(kevo_roofline_diagnose(&text, 1e6, 8e6, 1000, &p), 0);
    assert_non_null(strstr(text, "32% of the roofline bound"));
    assert_non_null(strstr(text, "25.0 GB/s measured for its 7.6 MiB working set"));
    assert_non_null(strstr(text, "memory-bound"));
    free(text);
}

/* KEVO_PEAKS at a file in a fresh folder; returns the folder. */
static char *peaks_dir(void)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-peaks-"), 0);
    char *path = kevo_path_join(dir, "sub/peaks.json");
    setenv("KEVO_PEAKS", path, 1);
    free(path);
    return dir;
}

static void test_roofline__cache_round_trip(void **state)
{
    (void)state;
    char *dir = peaks_dir();
    kevo_peaks p = sample_peaks(), q;
    assert_int_equal(kevo_peaks_load(&q), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "kevo calibrate"));
    assert_int_equal(kevo_peaks_save(&p), 0);
    assert_int_equal(kevo_peaks_load(&q), 0);
    assert_close(q.mem_gbs, p.mem_gbs, "mem_gbs");
    assert_close(q.fp32_gflops, p.fp32_gflops, "fp32_gflops");
    assert_int_equal(q.threads, 2);
    assert_string_equal(q.machine, p.machine);
    assert_string_equal(q.measured, "2026-12-03T16:28:05Z");
    assert_int_equal(q.npoints, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_close(q.curve[i].bytes, p.curve[i].bytes, "point bytes");
        assert_close(q.curve[i].gbs, p.curve[i].gbs, "point gbs");
    }
    kevo_rmtree(dir);
    free(dir);
    unsetenv("KEVO_PEAKS");
}

static void write_peaks(const char *json)
{
    const char *path = kevo_peaks_path();
    char *folder = strdup(path);
    *strrchr(folder, '/') = '\0';
    kevo_mkdirs(folder, 0755);
    free(folder);
    assert_int_equal(kevo_file_write(path, json, strlen(json)), 0);
}

static void test_roofline__old_and_bad_caches(void **state)
{
    (void)state;
    char *dir = peaks_dir();
    kevo_peaks q;
    /* what kevo calibrate wrote before the curve: refused, naming the fix */
    write_peaks("{\"mem_gbs\": 10.6, \"fp32_gflops\": 129.6, \"threads\": 2, \"a0\": 0.5}\n");
    assert_int_equal(kevo_peaks_load(&q), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "older kevo"));
    assert_non_null(strstr(kevo_error_last(), "kevo calibrate"));
    assert_close(q.mem_gbs, 0, "nothing half-read");
    write_peaks("{\"version\": 3, \"mem_gbs\": 1, \"fp32_gflops\": 1, \"bandwidth\": "
                "[{\"bytes\": 1, \"gbs\": 1}]}");
    assert_int_equal(kevo_peaks_load(&q), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "version"));
    write_peaks("{\"version\": 2, \"mem_gbs\": 1, \"fp32_gflops\": 1, \"bandwidth\": "
                "[{\"bytes\": 2048, \"gbs\": 1}, {\"bytes\": 1024, \"gbs\": 2}]}");
    assert_int_equal(kevo_peaks_load(&q), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "point 1"));
    write_peaks("{\"version\": 2, \"mem_gbs\": 1, \"fp32_gflops\": 1, \"bandwidth\": []}");
    assert_int_equal(kevo_peaks_load(&q), KEVO_EINVAL);
    /* a file of before "measured" still reads (the time unknown); a
     * "measured" that is no time string is refused, naming the field */
    write_peaks("{\"version\": 2, \"mem_gbs\": 1, \"fp32_gflops\": 1, \"bandwidth\": "
                "[{\"bytes\": 1024, \"gbs\": 1}]}");
    assert_int_equal(kevo_peaks_load(&q), 0);
    assert_string_equal(q.measured, "");
    write_peaks("{\"version\": 2, \"mem_gbs\": 1, \"fp32_gflops\": 1, \"measured\": "
                "\"x\\\" injected\", \"bandwidth\": [{\"bytes\": 1024, \"gbs\": 1}]}");
    assert_int_equal(kevo_peaks_load(&q), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "\"measured\""));
    write_peaks("not json");
    assert_int_equal(kevo_peaks_load(&q), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), kevo_peaks_path()));
    kevo_rmtree(dir);
    free(dir);
    unsetenv("KEVO_PEAKS");
}

/* ---- the report ---------------------------------------------------------- */

/* A task folder under dir: y = 2 * x over N floats, flops "2*N", bytes "8*N". */
static char *task_folder(const char *dir, const char *name, long n, const char *flops)
{
    char *folder = kevo_path_join(dir, name);
    assert_int_equal(kevo_mkdirs(folder, 0755), 0);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"name\": \"%s\", \"level\": 1, \"category\": \"activation\",\n"
             " \"description\": \"y = 2x\",\n"
             " \"params\": [{\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": "
             "[\"N\"]},\n  {\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": "
             "[\"N\"]},\n  {\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}],\n"
             " \"sizes\": {\"N\": %ld}, \"flops\": \"%s\", \"bytes\": \"8*N\"}\n",
             name, n, flops);
    char *p = kevo_path_join(folder, "task.json");
    assert_int_equal(kevo_file_write(p, json, strlen(json)), 0);
    free(p);
    char ref[256];
    snprintf(ref, sizeof(ref), "#include <stdint.h>\nvoid %s(const float *x, float *y, int64_t N)"
             "\n{\n    for (int64_t i = 0; i < N; i++)\n        y[i] = 2 * x[i];\n}\n", name);
    p = kevo_path_join(folder, "reference.c");
    assert_int_equal(kevo_file_write(p, ref, strlen(ref)), 0);
    free(p);
    return folder;
}

static void add_attempt(fixture *f, int64_t run, const char *task, int iter, double us,
                        const char *machine)
{
    kevo_attempt a = {.run_id = run, .task = task, .backend = "c", .generator = "replay",
                      .stage = KEVO_STAGE_DRAFT, .iteration = iter,
                      .verdict = KEVO_VERDICT_CORRECT, .feedback = "Correct.",
                      .source = "void k(void) {}\n", .reference_us = 10000, .candidate_us = us,
                      .speedup = 10000 / us, .machine = machine};
    int64_t id = 0;
    assert_int_equal(kevo_memory_attempt_record(f->mem, &a, NULL, 0, &f->cfg, &id), 0);
}

static const cJSON *task_json(const cJSON *root, const char *name)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(root, "per_task"))
    {
        if (!strcmp(cJSON_GetObjectItemCaseSensitive(t, "task")->valuestring, name))
            return t;
    }
    fail_msg("no task %s in the report", name);
    return NULL;
}

static cJSON *report_json(kevo_run_metrics *m)
{
    kevo_buf out = {0};
    kevo_run_metrics *runs[1] = {m};
    assert_int_equal(kevo_report_render(&out, runs, 1, KEVO_REPORT_JSON), 0);
    cJSON *j = cJSON_Parse(kevo_buf_cstr(&out));
    assert_non_null(j);
    kevo_buf_free(&out);
    return j;
}

/* Tasks (N = 1 Mi floats: 8 MiB, the 25 GB/s level):
 *   a: best 1000 us (of 1000 and 4000): 8.39 GB/s, 2.10 GFLOP/s against a
 *      bound of 0.25 x 25 = 6.25: fraction 8 MiB / 1000 us / 25 GB/s
 *   b: best 500 us: twice a's fraction
 *   c: flops "0": null
 *   d: no folder recorded: null
 *   e: its best measured on another machine than the peaks: null
 * median over a and b: their mean. */
static void test_roofline__report_fields(void **state)
{
    fixture *f = *state;
    char *pdir = peaks_dir();
    kevo_peaks p = sample_peaks();
    assert_int_equal(kevo_peaks_save(&p), 0);
    long n = 1 << 20;
    char *fa = task_folder(f->dir, "ta", n, "2*N"), *fb = task_folder(f->dir, "tb", n, "2*N");
    char *fc = task_folder(f->dir, "tc", n, "0"), *fe = task_folder(f->dir, "te", n, "2*N");
    struct { const char *name, *folder; } tasks[] = {
        {"ta", fa}, {"tb", fb}, {"tc", fc}, {"td", NULL}, {"te", fe}};
    for (size_t i = 0; i < 5; i++) {
        kevo_memory_task mt = {.name = tasks[i].name, .level = 1, .category = "activation",
                               .suite_path = tasks[i].folder};
        assert_int_equal(kevo_memory_task_upsert(f->mem, &mt, NULL), 0);
    }
    int64_t run = 0;
    assert_int_equal(kevo_memory_run_begin(f->mem, "{\"iterations\":2}", &run), 0);
    add_attempt(f, run, "ta", 0, 4000, p.machine);
    add_attempt(f, run, "ta", 1, 1000, p.machine);
    add_attempt(f, run, "tb", 0, 500, "");
    add_attempt(f, run, "tc", 0, 500, p.machine);
    add_attempt(f, run, "td", 0, 500, p.machine);
    add_attempt(f, run, "te", 0, 500, "ffffffffffffffffffffffffffffffff");
    kevo_run_metrics *m = NULL;
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    double bytes = 8.0 * (double)n;
    double fa_want = bytes / 1000e-6 / 1e9 / 25, fb_want = bytes / 500e-6 / 1e9 / 25;
    cJSON *j = report_json(m);
    const cJSON *ta = task_json(j, "ta"), *tb = task_json(j, "tb");
    assert_close(cJSON_GetObjectItemCaseSensitive(ta, "roof_fraction")->valuedouble, fa_want,
                 "ta's roof_fraction");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ta, "roof_bottleneck")->valuestring,
                        "memory");
    assert_close(cJSON_GetObjectItemCaseSensitive(tb, "roof_fraction")->valuedouble, fb_want,
                 "tb's roof_fraction (machine unknown: counted)");
    const char *nulls[] = {"tc", "td", "te"};
    for (size_t i = 0; i < 3; i++)
        assert_true(cJSON_IsNull(
            cJSON_GetObjectItemCaseSensitive(task_json(j, nulls[i]), "roof_fraction")));
    assert_close(cJSON_GetObjectItemCaseSensitive(j, "median_roof_fraction")->valuedouble,
                 (fa_want + fb_want) / 2, "median_roof_fraction");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "roof_tasks")->valueint, 2);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "roof_note")));
    /* which calibration, and of when, the fractions are against */
    const cJSON *pk = cJSON_GetObjectItemCaseSensitive(j, "roof_peaks");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(pk, "measured")->valuestring,
                        "2026-12-03T16:28:05Z");
    assert_close(cJSON_GetObjectItemCaseSensitive(pk, "fp32_gflops")->valuedouble, 100,
                 "roof_peaks.fp32_gflops");
    assert_close(cJSON_GetObjectItemCaseSensitive(pk, "dram_gbs")->valuedouble, 10,
                 "roof_peaks.dram_gbs");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(pk, "machine")->valuestring, p.machine);
    cJSON_Delete(j);
    kevo_buf text = {0};
    kevo_run_metrics *runs[1] = {m};
    assert_int_equal(kevo_report_render(&text, runs, 1, KEVO_REPORT_TEXT), 0);
    char want[32];
    snprintf(want, sizeof(want), "%.0f%%m", 100 * fa_want);
    assert_non_null(strstr(kevo_buf_cstr(&text), want));
    assert_non_null(strstr(kevo_buf_cstr(&text), "median roof fraction"));
    assert_non_null(strstr(kevo_buf_cstr(&text), "measured 2026-12-03T16:28:05Z"));
    kevo_buf_free(&text);
    kevo_run_metrics_free(m);

    /* a calibration 25x below what the run reached: the fractions read
     * above 1, and the note says so instead of leaving them unexplained */
    kevo_peaks low = sample_peaks();
    low.mem_gbs /= 25;
    for (size_t i = 0; i < low.npoints; i++)
        low.curve[i].gbs /= 25;
    assert_int_equal(kevo_peaks_save(&low), 0);
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    j = report_json(m);
    assert_close(cJSON_GetObjectItemCaseSensitive(task_json(j, "ta"), "roof_fraction")
                     ->valuedouble,
                 25 * fa_want, "ta's roof_fraction against the low calibration");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(j, "roof_note");
    assert_true(cJSON_IsString(note));
    assert_non_null(strstr(note->valuestring, "2 task(s) above their bound"));
    assert_non_null(strstr(note->valuestring, "2026-12-03T16:28:05Z"));
    cJSON_Delete(j);
    kevo_run_metrics_free(m);
    assert_int_equal(kevo_peaks_save(&p), 0);

    /* no calibration: every fraction null, the note names kevo calibrate */
    unsetenv("KEVO_PEAKS");
    char *missing = kevo_path_join(pdir, "none.json");
    setenv("KEVO_PEAKS", missing, 1);
    free(missing);
    assert_int_equal(kevo_report_metrics(&m, f->mem, run), 0);
    j = report_json(m);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(task_json(j, "ta"),
                                                              "roof_fraction")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "median_roof_fraction")));
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(j, "roof_note")->valuestring,
                           "kevo calibrate"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "roof_peaks")));
    cJSON_Delete(j);
    runs[0] = m;
    assert_int_equal(kevo_report_render(&text, runs, 1, KEVO_REPORT_TEXT), 0);
    assert_non_null(strstr(kevo_buf_cstr(&text), "roof: no machine peaks yet (run `kevo "
                                                 "calibrate`)"));
    kevo_buf_free(&text);
    kevo_run_metrics_free(m);
    unsetenv("KEVO_PEAKS");
    kevo_rmtree(pdir);
    free(pdir);
    free(fa);
    free(fb);
    free(fc);
    free(fe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roofline__curve_lookup),
        cmocka_unit_test(test_roofline__fraction_and_bottleneck),
        cmocka_unit_test(test_roofline__cache_round_trip),
        cmocka_unit_test(test_roofline__old_and_bad_caches),
        cmocka_unit_test_setup_teardown(test_roofline__report_fields, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
