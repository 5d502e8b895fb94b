/*
 * backend/roofline.c - machine peaks for the roofline: measured by
 * compiling and running harness/peaks.c (kevo's own trusted code, built
 * with the candidates' flags) and cached as versioned JSON; the bandwidth
 * curve's lookup by working set; a timed kernel's bound, fraction and
 * bottleneck; the diagnosis text. Must not: time candidates or talk to
 * the store.
 */
#include "kevo/roofline.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kevo_peaks_path(void)
{
    static char path[1024];
    const char *p = getenv("KEVO_PEAKS");
    if (p && *p)
        return p;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path, sizeof(path), "%s/kevo/peaks.json", xdg);
    else
        snprintf(path, sizeof(path), "%s/.cache/kevo/peaks.json", home && *home ? home : "/tmp");
    return path;
}

static bool positive(const cJSON *n)
{
    return cJSON_IsNumber(n) && isfinite(n->valuedouble) && n->valuedouble > 0;
}

/* The curve: ascending, positive points, at most KEVO_PEAKS_MAX_POINTS. */
static int parse_curve(kevo_peaks *out, const cJSON *arr, const char *where)
{
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
        return kevo_error_set(KEVO_EINVAL, "%s: \"bandwidth\" is not a non-empty array", where);
    if (cJSON_GetArraySize(arr) > KEVO_PEAKS_MAX_POINTS)
        return kevo_error_set(KEVO_EINVAL, "%s: \"bandwidth\" has more than %d points", where,
                              KEVO_PEAKS_MAX_POINTS);
    const cJSON *pt;
    out->npoints = 0;
    cJSON_ArrayForEach(pt, arr)
    {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(pt, "bytes");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(pt, "gbs");
        size_t i = out->npoints;
        if (!positive(b) || !positive(g))
            return kevo_error_set(KEVO_EINVAL, "%s: bandwidth point %zu needs positive "
                                  "\"bytes\" and \"gbs\"", where, i);
        if (i && b->valuedouble <= out->curve[i - 1].bytes)
            return kevo_error_set(KEVO_EINVAL, "%s: bandwidth point %zu: \"bytes\" not above "
                                  "the point before", where, i);
        out->curve[i].bytes = b->valuedouble;
        out->curve[i].gbs = g->valuedouble;
        out->npoints++;
    }
    return 0;
}

int kevo_peaks_parse(kevo_peaks *out, const char *text, const char *where)
{
    memset(out, 0, sizeof(*out));
    cJSON *o = cJSON_Parse(text);
    int error = 0;
    if (!cJSON_IsObject(o)) {
        error = kevo_error_set(KEVO_EINVAL, "%s: not a JSON object", where);
        goto done;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "version");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "mem_gbs");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "fp32_gflops");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "threads");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "machine");
    if (!v && positive(m)) { /* format 1: one bandwidth for every working set */
        error = kevo_error_set(KEVO_ENOTFOUND, "%s: machine peaks of an older kevo (one "
                               "bandwidth, no curve over working sets): run `kevo calibrate`",
                               where);
        goto done;
    }
    if (!cJSON_IsNumber(v) || v->valueint != KEVO_PEAKS_VERSION) {
        error = kevo_error_set(KEVO_EINVAL, "%s: not a peaks record of version %d (\"version\")",
                               where, KEVO_PEAKS_VERSION);
        goto done;
    }
    if (!positive(m) || !positive(f)) {
        error = kevo_error_set(KEVO_EINVAL, "%s: not a peaks record (positive mem_gbs, "
                               "fp32_gflops)", where);
        goto done;
    }
    out->mem_gbs = m->valuedouble;
    out->fp32_gflops = f->valuedouble;
    out->threads = cJSON_IsNumber(t) ? t->valueint : 0;
    if (cJSON_IsString(id))
        snprintf(out->machine, sizeof(out->machine), "%s", id->valuestring);
    const cJSON *when = cJSON_GetObjectItemCaseSensitive(o, "measured");
    if (when && !(cJSON_IsString(when) && strlen(when->valuestring) < sizeof(out->measured) &&
                  strspn(when->valuestring, "0123456789-:TZ") == strlen(when->valuestring))) {
        error =
            kevo_error_set(KEVO_EINVAL, "%s: \"measured\" is not an ISO-8601 time string", where);
        goto done;
    }
    if (when)
        snprintf(out->measured, sizeof(out->measured), "%s", when->valuestring);
    error = parse_curve(out, cJSON_GetObjectItemCaseSensitive(o, "bandwidth"), where);
done:
    cJSON_Delete(o);
    if (error < 0)
        memset(out, 0, sizeof(*out));
    return error;
}

int kevo_peaks_to_json(char **out, const kevo_peaks *p)
{
    kevo_buf b = {0};
    *out = NULL;
    kevo_buf_printf(&b,
                    "{\n  \"version\": %d,\n  \"mem_gbs\": %.2f,\n  \"fp32_gflops\": %.2f,\n"
                    "  \"threads\": %d,\n  \"machine\": \"%s\",\n",
                    KEVO_PEAKS_VERSION, p->mem_gbs, p->fp32_gflops, p->threads, p->machine);
    if (p->measured[0])
        kevo_buf_printf(&b, "  \"measured\": \"%s\",\n", p->measured);
    kevo_buf_puts(&b, "  \"bandwidth\": [");
    for (size_t i = 0; i < p->npoints; i++)
        kevo_buf_printf(&b, "%s\n    {\"bytes\": %.0f, \"gbs\": %.2f}", i ? "," : "",
                        p->curve[i].bytes, p->curve[i].gbs);
    kevo_buf_puts(&b, "\n  ]\n}\n");
    if (kevo_buf_error(&b) < 0)
        return kevo_buf_error(&b);
    *out = kevo_buf_detach(&b);
    return 0;
}

int kevo_peaks_load(kevo_peaks *out)
{
    char *text = NULL;
    memset(out, 0, sizeof(*out));
    int error = kevo_file_read(&text, NULL, kevo_peaks_path());
    if (error == KEVO_ENOTFOUND)
        return kevo_error_set(KEVO_ENOTFOUND, "no machine peaks yet (run `kevo calibrate`)");
    if (error < 0)
        return error;
    error = kevo_peaks_parse(out, text, kevo_peaks_path());
    free(text);
    return error;
}

int kevo_peaks_save(const kevo_peaks *p)
{
    char *json = NULL, *dir = NULL;
    int error = 0;
    if ((error = kevo_peaks_to_json(&json, p)) < 0)
        goto done;
    if (!(dir = strdup(kevo_peaks_path()))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        kevo_mkdirs(dir, 0755);
    }
    error = kevo_file_write(kevo_peaks_path(), json, strlen(json));
done:
    free(json);
    free(dir);
    return error;
}

int kevo_peaks_measure(kevo_peaks *out)
{
    char *dir = NULL, *src = NULL, *text = NULL, *output = NULL;
    int error = 0;
    char *from = kevo_path_join(kevo_harness_dir(), "peaks.c");
    if ((error = kevo_file_read(&text, NULL, from)) < 0)
        goto done;
    if ((error = kevo_mkdtemp(&dir, "kevo-peaks-")) < 0)
        goto done;
    src = kevo_path_join(dir, "peaks.c");
    if ((error = kevo_file_write(src, text, strlen(text))) < 0)
        goto done;
    kevo_sandbox_opts o = {.workdir = dir, .wall_timeout_s = 180, .mem_bytes = 4ULL << 30};
    kevo_proc_status st;
    const char *cc[] = {"/usr/bin/gcc", "-O3", "-march=native", "-fopenmp", "peaks.c", "-o",
                        "peaks", "-lm", NULL};
    if ((error = kevo_sandbox_run(&st, &output, 1 << 16, cc, &o)) < 0)
        goto done;
    if (st.kind != KEVO_EXIT_NORMAL || st.exit_code != 0) {
        error = kevo_error_set(KEVO_EINFRA, "cannot build the peak benchmark: %s", output);
        goto done;
    }
    free(output);
    output = NULL;
    char threads[32];
    snprintf(threads, sizeof(threads), "OMP_NUM_THREADS=%d", kevo_cpu_count());
    const char *env[] = {threads, NULL};
    o.extra_env = env;
    const char *run[] = {"./peaks", NULL};
    if ((error = kevo_sandbox_run(&st, &output, 1 << 16, run, &o)) < 0)
        goto done;
    if (st.kind != KEVO_EXIT_NORMAL || st.exit_code != 0) {
        error = kevo_error_set(KEVO_EINFRA, "the peak benchmark failed: %s",
                               kevo_proc_status_describe(&st));
        goto done;
    }
    if ((error = kevo_peaks_parse(out, output, "peak benchmark output")) < 0)
        goto done;
    kevo_machine mach;
    if (kevo_machine_get(&mach) == 0)
        snprintf(out->machine, sizeof(out->machine), "%s", mach.id);
    kevo_iso_time(out->measured, sizeof(out->measured));
    error = kevo_peaks_save(out);
done:
    if (dir)
        kevo_rmtree(dir);
    free(dir);
    free(src);
    free(from);
    free(text);
    free(output);
    return error;
}

double kevo_peaks_bandwidth(const kevo_peaks *p, double bytes)
{
    if (!p)
        return 0;
    if (p->npoints == 0)
        return p->mem_gbs > 0 ? p->mem_gbs : 0;
    for (size_t i = 0; i < p->npoints; i++)
        if (p->curve[i].bytes >= bytes)
            return p->curve[i].gbs;
    return p->curve[p->npoints - 1].gbs;
}

int kevo_roofline_compute(kevo_roofline *out, double flops, double bytes, double latency_us,
                          const kevo_peaks *peaks)
{
    memset(out, 0, sizeof(*out));
    if (!(latency_us > 0) || !isfinite(latency_us) || !(bytes > 0) || !isfinite(bytes))
        return kevo_error_set(KEVO_EINVAL, "roofline: needs a positive latency and bytes");
    if (!isfinite(flops) || flops < 0)
        flops = 0;
    double s = latency_us * 1e-6;
    out->gbs = bytes / s / 1e9;
    out->gflops = flops / s / 1e9;
    out->intensity = flops / bytes;
    out->bw_gbs = kevo_peaks_bandwidth(peaks, bytes);
    if (!peaks || !(out->bw_gbs > 0) || !(peaks->fp32_gflops > 0) || !(flops > 0))
        return 0;
    double mem_roof = out->intensity * out->bw_gbs;
    out->have_bound = true;
    out->memory_bound = mem_roof < peaks->fp32_gflops;
    out->bound_gflops = out->memory_bound ? mem_roof : peaks->fp32_gflops;
    out->bound_gbs = out->bound_gflops / out->intensity;
    out->fraction = out->gflops / out->bound_gflops;
    return 0;
}

const char *kevo_roofline_bottleneck(const kevo_roofline *r)
{
    return r->memory_bound ? "memory" : "compute";
}

/* "64 MiB", "1.5 GiB", "48 KiB": a working set in words. */
static void size_words(char *out, size_t cap, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4)
        bytes /= 1024, u++;
    snprintf(out, cap, bytes < 10 && u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

int kevo_roofline_diagnose(char **out, double flops, double bytes, double latency_us,
                           const kevo_peaks *peaks)
{
    kevo_buf b = {0};
    kevo_roofline r;
    *out = NULL;
    if (latency_us <= 0 || (flops <= 0 && bytes <= 0))
        return kevo_error_set(KEVO_EINVAL, "no latency or work to diagnose");
    if (bytes <= 0) { /* compute only: no memory roof to speak of */
        double gfl = flops / (latency_us * 1e-6) / 1e9;
        kevo_buf_printf(&b, "achieved %.2f GFLOP/s", gfl);
        if (peaks && peaks->fp32_gflops > 0)
            kevo_buf_printf(&b, " (%.0f%% of the %.1f GFLOP/s fp32 peak)",
                            100 * gfl / peaks->fp32_gflops, peaks->fp32_gflops);
        *out = kevo_buf_detach(&b);
        return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    kevo_roofline_compute(&r, flops, bytes, latency_us, peaks);
    kevo_buf_printf(&b, "achieved %.2f GB/s and %.2f GFLOP/s (arithmetic intensity %.2f "
                        "flop/byte)", r.gbs, r.gflops, r.intensity);
    if (r.have_bound) {
        char ws[32];
        size_words(ws, sizeof(ws), bytes);
        kevo_buf_printf(&b, "; %.0f%% of the roofline bound (%.1f GB/s measured for its %s "
                            "working set, %.1f GFLOP/s fp32 peak): ", 100 * r.fraction, r.bw_gbs,
                        ws, peaks->fp32_gflops);
        if (r.memory_bound)
            kevo_buf_puts(&b, r.fraction > 0.7 ? "memory-bound and near the bandwidth roof: "
                                                 "only less traffic (fusion, reuse, smaller "
                                                 "types) helps"
                                               : "memory-bound, below the bandwidth roof: "
                                                 "vectorize the streaming loops and use all "
                                                 "cores");
        else
            kevo_buf_puts(&b, r.fraction > 0.5 ? "compute-bound and near the compute roof"
                                               : "compute-bound, far from the compute roof: "
                                                 "improve data reuse (tiling, register "
                                                 "blocking), vectorize, parallelize");
    } else if (peaks && r.bw_gbs > 0) {
        kevo_buf_printf(&b, "; %.0f%% of the %.1f GB/s measured for its working set (flops "
                            "unknown: no compute roof)", 100 * r.gbs / r.bw_gbs, r.bw_gbs);
    }
    *out = kevo_buf_detach(&b);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}
