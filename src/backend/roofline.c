/*
 * backend/roofline.c - machine peaks for the roofline diagnosis: measured
 * by compiling and running harness/peaks.c (kevo's own trusted code, built
 * with the candidates' flags) and cached as JSON; and the diagnosis text.
 */
#include "kevo/roofline.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <cjson/cJSON.h>
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

static int parse_peaks(kevo_peaks *out, const char *text, const char *where)
{
    cJSON *o = cJSON_Parse(text);
    const cJSON *m = o ? cJSON_GetObjectItem(o, "mem_gbs") : NULL;
    const cJSON *f = o ? cJSON_GetObjectItem(o, "fp32_gflops") : NULL;
    const cJSON *t = o ? cJSON_GetObjectItem(o, "threads") : NULL;
    int error = 0;
    if (!cJSON_IsNumber(m) || !cJSON_IsNumber(f) || m->valuedouble <= 0 || f->valuedouble <= 0)
        error = kevo_error_set(KEVO_EINVAL, "%s: not a peaks record (mem_gbs, fp32_gflops)", where);
    else {
        out->mem_gbs = m->valuedouble;
        out->fp32_gflops = f->valuedouble;
        out->threads = cJSON_IsNumber(t) ? t->valueint : 0;
    }
    cJSON_Delete(o);
    return error;
}

int kevo_peaks_load(kevo_peaks *out)
{
    char *text = NULL;
    int error = kevo_file_read(&text, NULL, kevo_peaks_path());
    if (error == KEVO_ENOTFOUND)
        return kevo_error_set(KEVO_ENOTFOUND, "no machine peaks yet (run `kevo calibrate`)");
    if (error < 0)
        return error;
    error = parse_peaks(out, text, kevo_peaks_path());
    free(text);
    return error;
}

int kevo_peaks_measure(kevo_peaks *out)
{
    char *dir = NULL, *src = NULL, *text = NULL, *output = NULL, *cache = NULL;
    int error = 0;
    char *from = kevo_path_join(kevo_harness_dir(), "peaks.c");
    if ((error = kevo_file_read(&text, NULL, from)) < 0)
        goto done;
    if ((error = kevo_mkdtemp(&dir, "kevo-peaks-")) < 0)
        goto done;
    src = kevo_path_join(dir, "peaks.c");
    if ((error = kevo_file_write(src, text, strlen(text))) < 0)
        goto done;
    kevo_sandbox_opts o = {.workdir = dir, .wall_timeout_s = 120, .mem_bytes = 4ULL << 30};
    kevo_proc_status st;
    const char *cc[] = {"/usr/bin/gcc", "-O3", "-march=native", "-fopenmp", "peaks.c", "-o",
                        "peaks", NULL};
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
    if ((error = parse_peaks(out, output, "peak benchmark output")) < 0)
        goto done;
    cache = strdup(kevo_peaks_path());
    char *slash = strrchr(cache, '/');
    if (slash) {
        *slash = '\0';
        kevo_mkdirs(cache, 0755);
        *slash = '/';
    }
    error = kevo_file_write(cache, output, strlen(output));
done:
    if (dir)
        kevo_rmtree(dir);
    free(dir);
    free(src);
    free(from);
    free(text);
    free(output);
    free(cache);
    return error;
}

int kevo_roofline_diagnose(char **out, double flops, double bytes, double latency_us,
                           const kevo_peaks *peaks)
{
    kevo_buf b = {0};
    *out = NULL;
    if (latency_us <= 0 || (flops <= 0 && bytes <= 0))
        return kevo_error_set(KEVO_EINVAL, "no latency or work to diagnose");
    double s = latency_us * 1e-6;
    double gbs = bytes / s / 1e9, gfl = flops / s / 1e9;
    kevo_buf_printf(&b, "achieved %.2f GB/s and %.2f GFLOP/s (arithmetic intensity %.2f "
                        "flop/byte)", gbs, gfl, bytes > 0 ? flops / bytes : 0);
    if (peaks && peaks->mem_gbs > 0 && peaks->fp32_gflops > 0) {
        double fm = gbs / peaks->mem_gbs, ff = gfl / peaks->fp32_gflops;
        double ridge = peaks->fp32_gflops / peaks->mem_gbs;
        bool memory_bound = bytes > 0 && flops / bytes < ridge;
        kevo_buf_printf(&b, "; %.0f%% of the measured %.1f GB/s memory peak, %.0f%% of the "
                            "%.1f GFLOP/s fp32 peak; ", 100 * fm, peaks->mem_gbs, 100 * ff,
                        peaks->fp32_gflops);
        if (memory_bound)
            kevo_buf_puts(&b, fm > 0.7 ? "memory-bound and near the bandwidth roof: only less "
                                         "traffic (fusion, reuse, smaller types) helps"
                                       : "memory-bound, below the bandwidth roof: vectorize "
                                         "the streaming loops and use all cores");
        else
            kevo_buf_puts(&b, ff > 0.5 ? "compute-bound and near the compute roof"
                                       : "compute-bound, far from the compute roof: improve "
                                         "data reuse (tiling, register blocking), vectorize, "
                                         "parallelize");
    }
    *out = kevo_buf_detach(&b);
    return 0;
}
