/*
 * backend/cuda_backend.c - the CUDA backend (nvcc from /usr/local/cuda).
 * Candidate: a .cu file with __global__ kernels and an `extern "C"`
 * launcher that has the task's prototype and takes device pointers
 * (docs/backends/cuda.md). The reference stays the task's C reference.
 *
 * Build (the compile gate): nvcc -O3 -arch=$KEVO_CUDA_ARCH (default sm_90)
 * with the prototype pre-included, so a wrong signature is a compile
 * error; the object must define the launcher and may import only the CUDA
 * runtime, C++ runtime support and the maths/memory functions C
 * candidates may use; every global symbol but the launcher is made local.
 * The runner is harness/runner.c + harness/runner_cuda.cu + a generated
 * call stub + the candidate, linked by nvcc (static cudart).
 *
 * can_run: a CUDA driver and at least one device (libcuda.so.1, loaded in
 * kevo's process only to ask). Where there is none (this build machine),
 * the anti-hack and compile gates run and the evaluation ends in
 * infra_error "no CUDA device": never `correct`.
 * Runners have no address-space limit (the CUDA driver reserves terabytes
 * of virtual memory) and CUDA_MODULE_LOADING=EAGER so kernels are loaded
 * before the runner locks itself down. It never talks to the store.
 */
#include "elf_inspect.h"
#include "toolchain.h"
#include "kevo/sys/backend.h"
#include "source_gate.h"
#include "kevo/util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVCC "/usr/local/cuda/bin/nvcc"

static const char *const allowed_nvcc_flags[] = {"-use_fast_math", "--use_fast_math",
                                                 "-Xptxas=-O3",    "--extra-device-vectorization",
                                                 "-lineinfo",      NULL};

/* `// kevo: nvcc FLAG...` on the first line; flags from the allow-list
 * above or -maxrregcount=N. */
static int parse_hint(char ***out, kevo_buf *problem, const char *source)
{
    *out = calloc(1, sizeof(char *));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    const char *p = source;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (strncmp(p, "// kevo:", 8))
        return 0;
    p += 8;
    const char *eol = strchr(p, '\n');
    char *line = strndup(p, eol ? (size_t)(eol - p) : strlen(p));
    char *save = NULL, *tok = strtok_r(line, " \t\r", &save);
    size_t n = 0;
    if (!tok || strcmp(tok, "nvcc")) {
        kevo_buf_printf(problem, "build hint must read `// kevo: nvcc FLAG...`");
        goto done;
    }
    while ((tok = strtok_r(NULL, " \t\r", &save)) != NULL) {
        bool ok = !strncmp(tok, "-maxrregcount=", 14) &&
                  strspn(tok + 14, "0123456789") == strlen(tok + 14) && tok[14];
        for (const char *const *a = allowed_nvcc_flags; *a && !ok; a++)
            ok = !strcmp(*a, tok);
        if (!ok) {
            kevo_buf_printf(problem,
                            "nvcc flag '%s' is not on the allow-list (-use_fast_math "
                            "-Xptxas=-O3 --extra-device-vectorization -lineinfo "
                            "-maxrregcount=N)",
                            tok);
            goto done;
        }
        char **v = realloc(*out, (n + 2) * sizeof(char *));
        if (!v)
            break;
        *out = v;
        v[n++] = strdup(tok);
        v[n] = NULL;
    }
done:
    free(line);
    return 0;
}

/* What an nvcc-compiled object may import besides maths and memory: the
 * CUDA runtime, C++ runtime support, and `exit`, which nvcc's host stubs of
 * __device__ functions call (a candidate calling it is rejected by the
 * anti-hack gate). */
static bool cuda_symbol_allowed(const char *name)
{
    static const char *const names[] = {"exit",
                                        "_Unwind_Resume",
                                        "__cxa_guard_acquire",
                                        "__cxa_guard_release",
                                        "__cxa_guard_abort",
                                        "__gxx_personality_v0",
                                        "atexit",
                                        "__cxa_atexit",
                                        "__dso_handle",
                                        "_Znwm",
                                        "_Znam",
                                        "_ZdlPv",
                                        "_ZdlPvm",
                                        "_ZdaPv",
                                        "__cxa_pure_virtual",
                                        "__cxa_begin_catch",
                                        "__cxa_end_catch",
                                        "__cxa_rethrow",
                                        "_ZSt9terminatev",
                                        NULL};
    if (!strncmp(name, "cuda", 4) || !strncmp(name, "__cuda", 6))
        return strcmp(name, "cudaLaunchHostFunc") && strcmp(name, "cudaStreamAddCallback") &&
               strcmp(name, "cudaDeviceReset") && strcmp(name, "cudaSetDevice");
    for (const char *const *n = names; *n; n++)
        if (!strcmp(*n, name))
            return true;
    return false;
}

static const char *cuda_arch(void)
{
    const char *a = getenv("KEVO_CUDA_ARCH");
    /* only sm_NN / compute_NN forms reach nvcc */
    if (a && (!strncmp(a, "sm_", 3) || !strncmp(a, "compute_", 8)) &&
        strspn(a + (a[0] == 's' ? 3 : 8), "0123456789af") == strlen(a + (a[0] == 's' ? 3 : 8)) &&
        strlen(a) < 16 && strlen(a) > 3)
        return a;
    return "sm_90";
}

/* The steps of cuda_build return 0 to go on, STOP when the candidate's
 * result (diagnostics, rejected) is in *out, negative for kevo's own
 * failures. */
#define STOP 1

/* The C call stub with the launcher called as kevo_cuda_call (runner_cuda.cu
 * owns kevo_harness_call) and the params' roles. *out is the caller's. */
static int cuda_call_stub(char **out, const kevo_task *task)
{
    char *stub = NULL;
    kevo_buf b = {0};
    int error = kevo_backend_call_stub(&stub, task);
    if (error < 0)
        goto done;
    char *at = strstr(stub, "void kevo_harness_call(");
    if (!at) {
        error = kevo_error_set(KEVO_EINFRA, "unexpected call stub");
        goto done;
    }
    kevo_buf_put(&b, stub, (size_t)(at - stub));
    kevo_buf_puts(&b, "void kevo_cuda_call(");
    kevo_buf_puts(&b, at + strlen("void kevo_harness_call("));
    kevo_buf_printf(&b,
                    "const unsigned kevo_cuda_nparams = %zu;\n"
                    "const unsigned char kevo_cuda_roles[] = {",
                    task->nparams);
    for (size_t i = 0; i < task->nparams; i++)
        kevo_buf_printf(&b, "%s%d", i ? ", " : "", (int)task->params[i].role);
    kevo_buf_puts(&b, "};\n");
    *out = kevo_buf_detach(&b);
done:
    kevo_buf_free(&b);
    free(stub);
    return error;
}

/* 1. kernel.cu, proto.h (pre-included: the launcher's extern "C"
 * prototype, *proto the caller's) and call.c in dir; the harness is there. */
static int cuda_step_sources(char **proto, const kevo_task *task, const char *source,
                             const char *dir)
{
    kevo_buf protoh = {0};
    char *stub = NULL;
    char *runner_src = kevo_path_join(kevo_harness_dir(), "runner.c");
    char *cuda_src = kevo_path_join(kevo_harness_dir(), "runner_cuda.cu");
    int error = kevo_task_prototype(proto, task);
    if (error < 0)
        goto done;
    kevo_buf_printf(&protoh, "#include <stdint.h>\nextern \"C\" %s;\n", *proto);
    if ((error = cuda_call_stub(&stub, task)) < 0)
        goto done;
    if ((error = kevo_tool_write(dir, "kernel.cu", source)) < 0 ||
        (error = kevo_tool_write(dir, "proto.h", kevo_buf_cstr(&protoh))) < 0 ||
        (error = kevo_tool_write(dir, "call.c", stub)) < 0)
        goto done;
    if (!kevo_file_exists(runner_src) || !kevo_file_exists(cuda_src))
        error = kevo_error_set(KEVO_EINFRA, "%s: CUDA harness missing (set KEVO_HARNESS_DIR)",
                               kevo_harness_dir());
done:
    kevo_buf_free(&protoh);
    free(stub);
    free(runner_src);
    free(cuda_src);
    return error;
}

/* 2. nvcc compiles kernel.cu to kernel.o with the hint's flags; its errors
 * are the candidate's. */
static int cuda_step_kernel(kevo_build_result *out, char *const *hint, const char *arch,
                            const char *dir)
{
    const char *cc[32];
    size_t n = 0;
    char *diag = NULL;
    bool ok = false;
    cc[n++] = NVCC;
    cc[n++] = "-O3";
    cc[n++] = arch;
    cc[n++] = "-std=c++17";
    for (char *const *h = hint; h && *h && n < 24; h++)
        cc[n++] = *h;
    cc[n++] = "--pre-include";
    cc[n++] = "proto.h";
    cc[n++] = "-c";
    cc[n++] = "kernel.cu";
    cc[n++] = "-o";
    cc[n++] = "kernel.o";
    cc[n] = NULL;
    int error = kevo_tool_run(&ok, &diag, dir, cc, NULL);
    if (error >= 0 && !ok) {
        out->diagnostics = diag;
        diag = NULL;
        error = STOP;
    }
    free(diag);
    return error;
}

/* 3. Every global symbol of kernel.o but the launcher made local; what the
 * object imports is allowed, and it defines the launcher. */
static int cuda_step_object(kevo_build_result *out, const kevo_task *task, const char *proto,
                            const char *dir)
{
    kevo_buf keep = {0};
    kevo_elf_report elf = {0};
    char *diag = NULL, *obj = NULL;
    bool ok = false;
    int error = 0;
    kevo_buf_printf(&keep, "--keep-global-symbol=%s", task->name);
    const char *oc[] = {"/usr/bin/objcopy", keep.ptr, "kernel.o", NULL};
    if ((error = kevo_tool_run(&ok, &diag, dir, oc, NULL)) < 0)
        goto done;
    if (!ok) {
        error = kevo_error_set(KEVO_EINFRA, "objcopy failed: %s", diag);
        goto done;
    }
    obj = kevo_path_join(dir, "kernel.o");
    if ((error = kevo_elf_inspect_with(&elf, obj, task->name, cuda_symbol_allowed, true)) < 0)
        goto done;
    /* nvcc registers the fat binary from a constructor: constructors are
     * judged in the source (anti-hack), not here */
    if (elf.forbidden_symbols) {
        out->rejected = true;
        out->diagnostics = strdup(elf.problems);
        error = STOP;
    } else if (!elf.defines_kernel) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "the candidate does not define the launcher: extern \"C\" %s", proto);
        out->diagnostics = kevo_buf_detach(&b);
        error = STOP;
    }
done:
    kevo_buf_free(&keep);
    kevo_elf_report_clear(&elf);
    free(diag);
    free(obj);
    return error;
}

/* 4. The runner: harness/runner.c + runner_cuda.cu + call.c + kernel.o. */
static int cuda_step_runner(kevo_build_result *out, const char *arch, const char *dir)
{
    kevo_buf inc = {0}, d = {0};
    char *diag = NULL;
    char *runner_src = kevo_path_join(kevo_harness_dir(), "runner.c");
    char *cuda_src = kevo_path_join(kevo_harness_dir(), "runner_cuda.cu");
    bool ok = false;
    int error = 0;
    kevo_buf_printf(&inc, "-I%s", kevo_harness_dir());
    const char *c1[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", inc.ptr, "-c",
                        runner_src,     "-o",  "runner.o",   NULL};
    const char *c2[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", "-c", "call.c", "-o", "call.o", NULL};
    const char *c3[] = {NVCC, "-O2", arch, inc.ptr, "-c", cuda_src, "-o", "runner_cuda.o", NULL};
    const char *ld[] = {NVCC,     arch,       "-o", "runner", "runner.o", "runner_cuda.o",
                        "call.o", "kernel.o", NULL};
    const char *const *steps[] = {c1, c2, c3, ld};
    for (int i = 0; i < 4; i++) {
        if ((error = kevo_tool_run(&ok, &diag, dir, steps[i], NULL)) < 0)
            goto done;
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "cannot build the CUDA runner: %s", diag);
            goto done;
        }
    }
    out->ok = true;
    out->runner_path = kevo_path_join(dir, "runner");
    chmod(out->runner_path, 0755);
    chmod(dir, 0755);
    kevo_buf_printf(&d, "built for %s", cuda_arch());
    out->diagnostics = kevo_buf_detach(&d);
done:
    kevo_buf_free(&inc);
    free(diag);
    free(runner_src);
    free(cuda_src);
    return error;
}

static int cuda_build(const kevo_backend *be, const kevo_task *task, const char *source,
                      bool is_reference, const char *dir, kevo_build_result *out)
{
    int error = 0;
    double start = kevo_now_s();
    char *proto = NULL;
    char **hint = NULL;
    kevo_buf problem = {0}, arch = {0};
    (void)be;
    memset(out, 0, sizeof(*out));
    if (is_reference) {
        error = kevo_error_set(KEVO_EINVAL, "the reference is C: build it with the C backend");
        goto done;
    }
    if ((error = parse_hint(&hint, &problem, source)) < 0)
        goto done;
    if (problem.len) {
        out->rejected = true;
        out->diagnostics = kevo_buf_detach(&problem);
        goto done;
    }
    if (access(NVCC, X_OK) != 0) {
        error =
            kevo_error_set(KEVO_EINFRA, "%s not found: the CUDA toolkit is not installed", NVCC);
        goto done;
    }
    kevo_buf_printf(&arch, "-arch=%s", cuda_arch());
    if ((error = cuda_step_sources(&proto, task, source, dir)) != 0 ||
        (error = cuda_step_kernel(out, hint, arch.ptr, dir)) != 0 ||
        (error = cuda_step_object(out, task, proto, dir)) != 0 ||
        (error = cuda_step_runner(out, arch.ptr, dir)) != 0)
        goto done;
done:
    if (error == STOP)
        error = 0;
    out->seconds = kevo_now_s() - start;
    out->cflags_used = hint;
    free(proto);
    kevo_buf_free(&problem);
    kevo_buf_free(&arch);
    return error;
}

/* Ask the driver, once, whether a device exists. */
static bool cuda_can_run(const kevo_backend *be, const char **why)
{
    static int state = -1; /* -1 unknown, 0 no, 1 yes */
    static const char *reason = "no CUDA device";
    if (state < 0) {
        state = 0;
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            reason = "no CUDA device (no CUDA driver: libcuda.so.1 not found)";
        } else {
            int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
            int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
            int n = 0;
            if (init && count && init(0) == 0 && count(&n) == 0 && n > 0)
                state = 1;
            else
                reason = "no CUDA device (the CUDA driver found none)";
        }
    }
    if (!state && why)
        *why = reason;
    return state == 1;
}

static int cuda_runner_env(const kevo_backend *be, const char *dir, char ***out)
{
    char **env = calloc(4, sizeof(char *));
    if (!env)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t n = 0;
    env[n++] = strdup("CUDA_MODULE_LOADING=EAGER");
    env[n++] = strdup("CUDA_CACHE_DISABLE=1");
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && strlen(vis) < 64 && strspn(vis, "0123456789,GPUMI-abcdef") == strlen(vis)) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "CUDA_VISIBLE_DEVICES=%s", vis);
        env[n++] = kevo_buf_detach(&b);
    }
    *out = env;
    return 0;
}


static int cuda_source_gate(const kevo_backend *be, const kevo_task *task, const char *source,
                            int *violations, kevo_buf *findings)
{
    (void)be;
    return kevo_backend__gate_cuda(violations, findings, task, source);
}

/* The API notes this backend seeds into a fresh memory (memory/seed.c):
 * "bundle" notes go with every context of the backend, the others are
 * found by exact name. Keep titles stable: they are part of the uid. */
static const kevo_backend_note cuda_notes[] = {
    {NULL, "bundle", "kevo cuda candidate",
     "A .cu file with a __global__ kernel and the task's host entry point launching it; "
     "threadIdx/blockIdx/blockDim index the data; check bounds when the grid is rounded up."},
    {NULL, "bundle", "__syncthreads",
     "__syncthreads(): block-wide barrier; needed between writing and reading __shared__ "
     "memory; never under divergent control flow."},
    {NULL, "warp", "__shfl_down_sync",
     "T __shfl_down_sync(unsigned mask, T v, unsigned delta): read v from lane+delta; a warp "
     "sum is 5 steps of v += __shfl_down_sync(0xffffffff, v, off) for off = 16..1."},
    {NULL, "memory", "__ldg",
     "T __ldg(const T *p): load through the read-only cache; helps reused, read-only inputs."},
    {NULL, "atomic", "atomicAdd",
     "T atomicAdd(T *addr, T v): atomic add; fine for one update per block, slow when every "
     "thread hits the same address."},
};

const kevo_backend kevo_backend_cuda = {
    .version = KEVO_BACKEND_VERSION,
    .name = "cuda",
    .candidate_ext = ".cu",
    .code_language = "cuda",
    .build = cuda_build,
    .can_run = cuda_can_run,
    .runner_env = cuda_runner_env,
    .flags = KEVO_BACKEND_NO_AS_LIMIT | KEVO_BACKEND_CAP_NEEDS_DEVICE,
    .code_fence_tags = "cuda cu cuh; cpp c++ cxx cc hpp c h",
    .source_gate = cuda_source_gate,
    .api_notes = cuda_notes,
    .napi_notes = sizeof(cuda_notes) / sizeof(cuda_notes[0]),
};
