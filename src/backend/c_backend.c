/*
 * backend/c_backend.c - the C/CPU backend: gcc builds a runner from the
 * harness, a generated call stub and the kernel. The reference is built
 * with -O3 -march=native, single-threaded; a candidate with the same flags
 * plus its allow-listed build hint (e.g. -fopenmp). Candidate objects are
 * checked at the symbol level (elf_inspect.c) and have every global symbol
 * but the kernel made local, so they cannot interpose on the harness
 * (clock_gettime, memcpy...). Compilers run with time and memory limits.
 */
#include "elf_inspect.h"
#include "toolchain.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "source_gate.h"
#include "kevo/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the harness objects, compiled once per process ----
 * runner.o is the same for every task, call.o the same for every candidate
 * of a task: both are built the first time they are needed (in a folder
 * of their own, by the sandboxed compiler), read into kevo's memory, and
 * written into each build folder from there. Nothing a candidate's build
 * or runner can reach is ever read back as harness code. They are also
 * kept in kevo's private cache (kevo_cache_dir("harness")), keyed by their
 * source and compile command, so the next kevo process links them
 * without compiling. */
#define CALL_CACHE 64
static pthread_mutex_t harness_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *runner_o;
    size_t runner_len;
    struct {
        uint64_t key;
        char *obj;
        size_t len;
    } call[CALL_CACHE];
    size_t ncall, next_evict;
} harness;

/* Compile with argv in a fresh folder (holding `src` as `src_name` when
 * src is not NULL); *out, *len: the bytes of its h.o. */
static int compile_harness(char **out, size_t *len, const char *src_name, const char *src,
                           const char *const argv[])
{
    char *dir = NULL, *obj = NULL, *diag = NULL;
    bool ok = true;
    int error = kevo_mkdtemp(&dir, "kevo-harness-");
    if (error < 0)
        return error;
    if (src)
        error = kevo_tool_write(dir, src_name, src);
    if (error == 0 && (error = kevo_sandbox_prepare_dir(dir)) == 0 &&
        (error = kevo_tool_run(&ok, &diag, dir, argv, NULL)) == 0) {
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "cannot build the harness: %s", diag);
        } else {
            obj = kevo_path_join(dir, "h.o");
            error = kevo_file_read(out, len, obj);
        }
    }
    free(diag);
    free(obj);
    kevo_rmtree(dir);
    free(dir);
    return error;
}

/* compile_harness through the disk cache: the key is the command and the
 * source (src, or the file the command names). */
static int cached_harness(char **out, size_t *len, const char *src_name, const char *src,
                          const char *src_path, const char *const argv[])
{
    const char *cache = kevo_cache_dir("harness");
    char *path = NULL;
    if (cache) {
        kevo_buf key = {0};
        for (size_t i = 0; argv[i]; i++)
            kevo_buf_printf(&key, "%s\n", argv[i]);
        char *text = NULL;
        if (src)
            kevo_buf_puts(&key, src);
        else if (kevo_file_read(&text, NULL, src_path) == 0)
            kevo_buf_puts(&key, text);
        else
            cache = NULL;
        /* the harness's headers are part of its source */
        char *proto = kevo_path_join(kevo_harness_dir(), "protocol.h"), *ptext = NULL;
        if (cache && proto && kevo_file_read(&ptext, NULL, proto) == 0)
            kevo_buf_puts(&key, ptext);
        struct stat st;
        if (stat(argv[0], &st) == 0)
            kevo_buf_printf(&key, "compiler %lld %lld\n", (long long)st.st_size,
                            (long long)st.st_mtime);
        char name[64];
        snprintf(name, sizeof(name), "%016llx%016llx.o",
                 (unsigned long long)kevo_hash64_words(key.ptr, key.len, 1),
                 (unsigned long long)kevo_hash64_words(key.ptr, key.len, 2));
        if (cache && key.ptr)
            path = kevo_path_join(cache, name);
        free(text);
        free(proto);
        free(ptext);
        kevo_buf_free(&key);
    }
    if (path && kevo_file_read(out, len, path) == 0 && *len > 0) {
        free(path);
        return 0;
    }
    int error = compile_harness(out, len, src_name, src, argv);
    if (error == 0 && path)
        (void)kevo_file_write(path, *out, *len); /* best effort */
    free(path);
    return error;
}

static int harness_objects(const char *dir, const char *stub)
{
    uint64_t key = kevo_hash64(stub, strlen(stub), 0x63616c6cULL);
    char *runner = NULL, *call = NULL;
    size_t runner_len = 0, call_len = 0;
    int error = 0;
    pthread_mutex_lock(&harness_lock);
    if (!harness.runner_o) {
        /* read in place: toolchains see kevo's harness folder (read-only) */
        char *src = kevo_path_join(kevo_harness_dir(), "runner.c");
        kevo_buf inc = {0};
        kevo_buf_printf(&inc, "-I%s", kevo_harness_dir());
        const char *argv[] = {"/usr/bin/gcc", "-O3", "-std=gnu11", kevo_buf_cstr(&inc), "-c",
                              src, "-o", "h.o", NULL};
        error = cached_harness(&harness.runner_o, &harness.runner_len, NULL, NULL, src, argv);
        free(src);
        kevo_buf_free(&inc);
    }
    size_t i = 0;
    while (error == 0 && i < harness.ncall && harness.call[i].key != key)
        i++;
    if (error == 0 && i == harness.ncall) {
        const char *argv[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", "-c", "call.c", "-o", "h.o",
                              NULL};
        char *obj = NULL;
        size_t len = 0;
        if ((error = cached_harness(&obj, &len, "call.c", stub, NULL, argv)) == 0) {
            if (harness.ncall < CALL_CACHE) {
                i = harness.ncall++;
            } else { /* many tasks in one process: replace the oldest */
                i = harness.next_evict++ % CALL_CACHE;
                free(harness.call[i].obj);
            }
            harness.call[i].key = key;
            harness.call[i].obj = obj;
            harness.call[i].len = len;
        }
    }
    if (error == 0) {
        runner = malloc(harness.runner_len);
        call = malloc(harness.call[i].len);
        if (!runner || !call) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        } else {
            memcpy(runner, harness.runner_o, harness.runner_len);
            runner_len = harness.runner_len;
            memcpy(call, harness.call[i].obj, harness.call[i].len);
            call_len = harness.call[i].len;
        }
    }
    pthread_mutex_unlock(&harness_lock);
    char *rp = kevo_path_join(dir, "runner.o"), *cp = kevo_path_join(dir, "call.o");
    if (error == 0 && (error = kevo_file_write(rp, runner, runner_len)) == 0)
        error = kevo_file_write(cp, call, call_len);
    free(rp);
    free(cp);
    free(runner);
    free(call);
    return error;
}

static int c_build(const kevo_backend *be, const kevo_task *task, const char *source,
                   bool is_reference, const char *dir, kevo_build_result *out)
{
    int error = 0;
    char *proto = NULL, *stub = NULL;
    char **hint = NULL;
    kevo_elf_report elf = {0};
    kevo_buf protoh = {0};
    double start = kevo_now_s();
    memset(out, 0, sizeof(*out));

    if (is_reference) {
        hint = calloc(1, sizeof(char *));
    } else if (kevo_cflags_parse(&hint, source) < 0) {
        out->rejected = true;
        out->diagnostics = strdup(kevo_error_last());
        goto done;
    }
    kevo_c_proto_header(&proto, &protoh, task);
    /* The kernel compiles first, with only kernel.c and proto.h in `dir`:
     * exactly what the static gate preprocesses (antihack_c.c), so no
     * `__has_include` can tell the two apart. The harness comes after. */
    if ((error = kevo_tool_write(dir, KEVO_C_KERNEL_FILE, source)) < 0 ||
        (error = kevo_tool_write(dir, KEVO_C_PROTO_FILE, kevo_buf_cstr(&protoh))) < 0 ||
        (error = kevo_sandbox_prepare_dir(dir)) < 0)
        goto done;
    bool ok = true;
    char *diag = NULL;
    const char *cc[40];
    bool openmp = false;
    size_t n = kevo_c_compile_flags(cc, 32, hint, &openmp);
    cc[n++] = "-c";
    cc[n++] = KEVO_C_KERNEL_FILE;
    cc[n++] = "-o";
    cc[n++] = "kernel.o";
    cc[n] = NULL;
    if ((error = kevo_tool_run(&ok, &diag, dir, cc, NULL)) < 0)
        goto done;
    if (!ok) {
        out->diagnostics = diag;
        goto done;
    }
    kevo_backend_call_stub(&stub, task);
    if ((error = harness_objects(dir, stub)) < 0)
        goto done;
    if (!is_reference) {
        kevo_buf keep = {0};
        kevo_buf_printf(&keep, "--keep-global-symbol=%s", task->name);
        const char *oc[] = {"/usr/bin/objcopy", keep.ptr, "kernel.o", NULL};
        error = kevo_tool_run(&ok, &diag, dir, oc, NULL);
        kevo_buf_free(&keep);
        if (error < 0)
            goto done;
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "objcopy failed: %s", diag);
            free(diag);
            goto done;
        }
        char *obj = kevo_path_join(dir, "kernel.o");
        error = kevo_elf_inspect(&elf, obj, task->name);
        free(obj);
        if (error < 0)
            goto done;
        if (elf.has_constructor || elf.forbidden_symbols) {
            out->rejected = true;
            out->diagnostics = strdup(elf.problems);
            goto done;
        }
        if (!elf.defines_kernel) {
            kevo_buf b = {0};
            kevo_buf_printf(&b, "the candidate does not define the kernel function: %s", proto);
            out->diagnostics = kevo_buf_detach(&b);
            goto done;
        }
    }
    const char *ld[] = {"/usr/bin/gcc", "-o", "runner", "runner.o", "call.o", "kernel.o",
                        openmp ? "-fopenmp" : "-lm", "-lm", NULL};
    if ((error = kevo_tool_run(&ok, &diag, dir, ld, NULL)) < 0)
        goto done;
    if (!ok) {
        out->diagnostics = diag;
        goto done;
    }
    out->ok = true;
    out->openmp = openmp;
    out->runner_path = kevo_path_join(dir, "runner");
    chmod(out->runner_path, 0755);
    chmod(dir, 0755);
done:
    out->seconds = kevo_now_s() - start;
    out->cflags_used = hint;
    free(proto);
    free(stub);
    kevo_buf_free(&protoh);
    kevo_elf_report_clear(&elf);
    return error;
}


static int c_source_gate(const kevo_backend *be, const kevo_task *task, const char *source,
                         int *violations, kevo_buf *findings)
{
    (void)be;
    return kevo_backend__gate_c(violations, findings, task, source);
}

/* The built-in generator's first C draft: the reference itself. */
static int c_draft(const kevo_backend *be, const kevo_task *task, const char *reference,
                   char **out_source, const char **summary)
{
    (void)be;
    (void)task;
    *summary = "draft from the reference";
    *out_source = strdup(reference ? reference : "");
    return *out_source ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}

/* The API notes this backend seeds into a fresh memory (memory/seed.c):
 * "bundle" notes go with every context of the backend, the others are
 * found by exact name. Keep titles stable: they are part of the uid. */
static const kevo_backend_note c_notes[] = {
    /* ---- c: bundle ---- */
    {NULL, "bundle", "kevo c candidate",
     "One C file defining the kernel with the task's exact prototype (const T * for inputs, T * "
     "for outputs, scalars by value). It may use OpenMP and <immintrin.h>; no other headers that "
     "do the work, no files, processes or sockets. Optional first line: // kevo: cflags -O3 "
     "-march=native -fopenmp (allow-listed flags only)."},
    {NULL, "bundle", "#pragma omp parallel for",
     "#pragma omp parallel for [schedule(static)] [reduction(+:acc)] before a for loop splits "
     "its iterations across all cores (needs -fopenmp). Parallelise the outermost loop with "
     "enough work; for small N the thread start-up (~5-20 us) costs more than it saves."},
    {NULL, "bundle", "#pragma omp simd",
     "#pragma omp simd [reduction(+:acc)] asks the compiler to vectorise the next loop; combine "
     "as `#pragma omp parallel for simd`. Works with -fopenmp or -fopenmp-simd."},
    {NULL, "bundle", "restrict",
     "`float *restrict y` promises the compiler that y does not alias other pointers, which "
     "lets it vectorise loops it otherwise would not."},
    /* ---- c: exact-name lookups ---- */
    {NULL, "avx512", "_mm512_loadu_ps",
     "__m512 _mm512_loadu_ps(void const *p): load 16 floats from p (no alignment needed)."},
    {NULL, "avx512", "_mm512_storeu_ps",
     "void _mm512_storeu_ps(void *p, __m512 a): store 16 floats to p (no alignment needed)."},
    {NULL, "avx512", "_mm512_fmadd_ps",
     "__m512 _mm512_fmadd_ps(__m512 a, __m512 b, __m512 c): a*b+c in one rounding; 2 per cycle "
     "on cores with two FMA units. Use several independent accumulators to hide its 4-cycle "
     "latency."},
    {NULL, "avx512", "_mm512_max_ps",
     "__m512 _mm512_max_ps(__m512 a, __m512 b): lane-wise maximum (ReLU: max with "
     "_mm512_setzero_ps())."},
    {NULL, "avx512", "_mm512_set1_ps",
     "__m512 _mm512_set1_ps(float a): broadcast a to all 16 lanes."},
    {NULL, "avx512", "_mm512_setzero_ps", "__m512 _mm512_setzero_ps(void): all lanes 0.0f."},
    {NULL, "avx512", "_mm512_reduce_add_ps",
     "float _mm512_reduce_add_ps(__m512 a): horizontal sum of 16 lanes (a sequence, not one "
     "instruction: keep it out of inner loops)."},
    {NULL, "avx512", "_mm512_reduce_max_ps",
     "float _mm512_reduce_max_ps(__m512 a): horizontal maximum of 16 lanes."},
    {NULL, "avx512", "_mm512_mask_loadu_ps",
     "__m512 _mm512_mask_loadu_ps(__m512 src, __mmask16 k, void const *p): load the lanes set "
     "in k, keep src elsewhere; handles loop tails without reading past the end. Build k as "
     "(__mmask16)((1u << rem) - 1)."},
    {NULL, "avx512", "_mm512_mask_storeu_ps",
     "void _mm512_mask_storeu_ps(void *p, __mmask16 k, __m512 a): store only the lanes set in k "
     "(loop tails)."},
    {NULL, "avx2", "_mm256_fmadd_ps",
     "__m256 _mm256_fmadd_ps(__m256 a, __m256 b, __m256 c): a*b+c on 8 floats (AVX2+FMA)."},
    {NULL, "prefetch", "__builtin_prefetch",
     "__builtin_prefetch(const void *p, int rw, int locality): hint to fetch p into cache; "
     "rarely helps streaming loops (the hardware prefetcher already does), can help gathers."},
    {NULL, "alignment", "__builtin_assume_aligned",
     "p = __builtin_assume_aligned(p, 64): promise 64-byte alignment so the compiler may use "
     "aligned vector loads. Only when it is true."},
    {"activation", "math", "expf",
     "float expf(float): the libm exponential. Vectorised only with -ffast-math style flags or "
     "a hand-written polynomial; with tolerance 1e-2 a 5th-order polynomial on a range-reduced "
     "argument is accurate enough."},
    {"reduction", "openmp", "omp reduction",
     "#pragma omp parallel for reduction(+:sum) gives each thread a private sum and adds them "
     "at the end; for max use reduction(max:m). Floating-point results change order: fine "
     "within tolerance."},
};

const kevo_backend kevo_backend_c = {
    .version = KEVO_BACKEND_VERSION,
    .name = "c",
    .candidate_ext = ".c",
    .code_language = "c",
    .build = c_build,
    .flags = KEVO_BACKEND_CAP_BUILTIN_GENERATOR,
    .code_fence_tags = "c h; cpp c++ cxx cc hpp",
    .source_gate = c_source_gate,
    .draft = c_draft,
    .api_notes = c_notes,
    .napi_notes = sizeof(c_notes) / sizeof(c_notes[0]),
};
