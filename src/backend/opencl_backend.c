/*
 * backend/opencl_backend.c - the OpenCL backend (PoCL on this machine, any
 * OpenCL 1.2 device elsewhere). Candidate: OpenCL C 1.2 source whose
 * leading `// kevo:` lines say what the host launches (opencl_spec.c;
 * docs/backends/opencl.md). The reference stays the task's C reference,
 * built by the C backend.
 *
 * Build (the compile gate), in the candidate's private directory:
 *   1. parse the directives and evaluate every launch and scratch size on
 *      every size set of the task, so a bad launch is explained before
 *      anything runs;
 *   2. run harness/ocl_build.c as a toolchain step (limits, scrubbed
 *      environment, its own POCL_CACHE_DIR): clBuildProgram, checks of the
 *      kernels against the launches, the program binary. PoCL's compiler
 *      may start a linker here; a runner never may;
 *   3. inspect the kernel libraries PoCL produced (undefined symbols,
 *      constructors): what the kernels can reach on the host;
 *   4. link the runner: harness/runner.c + harness/runner_opencl.c + the
 *      generated spec.c + blob.S embedding the binary, with -lOpenCL.
 * The runner loads the binary before it locks itself down (no exec, no
 * open) and runs with its own POCL_CACHE_DIR (runner_env) and
 * POCL_WORK_GROUP_SPECIALIZATION=0, so PoCL never compiles after start-up.
 * It never talks to the store.
 */
#include "elf_inspect.h"
#include "opencl_spec.h"
#include "toolchain.h"
#include "opencl_draft.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "source_gate.h"
#include "kevo/util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOBODY_ID 65534
#define BUILD_CACHE "pocl-build"
#define RUN_CACHE "pocl-run"

/* Evaluate every launch and scratch size on every size set; problems are
 * the candidate's. Also writes the plan's `local` lines. */
static void check_geometry(kevo_buf *problems, kevo_buf *plan, const kevo_task *task,
                           const kevo_ocl_spec *spec)
{
    size_t nsets = kevo_task_nsets(task);
    for (size_t s = 0; s < nsets; s++) {
        const kevo_sizes *sz = kevo_task_set(task, s);
        kevo_buf where = {0};
        kevo_buf_puts(&where, "sizes ");
        for (size_t i = 0; i < sz->n; i++)
            kevo_buf_printf(&where, "%s%s=%lld", i ? "," : "", sz->names[i],
                            (long long)sz->values[i]);
        for (size_t j = 0; j < spec->nscratch; j++) {
            int64_t count;
            const kevo_ocl_scratch *sc = &spec->scratch[j];
            if (kevo_ocl_expr_eval(&count, sc->count, task, sz) < 0)
                kevo_buf_printf(problems, "line %u: scratch %s on %s: %s\n", sc->line, sc->name,
                                where.ptr, kevo_error_last());
            else if (count < 0 || (double)count * (double)kevo_dtype_size(sc->type) > 4294967296.0)
                kevo_buf_printf(problems,
                                "line %u: scratch %s on %s: %lld elements (must be "
                                "0 to 4 GiB)\n",
                                sc->line, sc->name, where.ptr, (long long)count);
        }
        for (size_t i = 0; i < spec->nlaunches; i++) {
            const kevo_ocl_launch *L = &spec->launches[i];
            int64_t g[3] = {1, 1, 1}, l[3] = {0, 0, 0};
            bool bad = false;
            for (unsigned d = 0; d < L->dims && !bad; d++) {
                if (kevo_ocl_expr_eval(&g[d], L->global[d], task, sz) < 0 ||
                    (L->has_local && kevo_ocl_expr_eval(&l[d], L->local[d], task, sz) < 0)) {
                    kevo_buf_printf(problems, "line %u: launch %s on %s: %s\n", L->line, L->kernel,
                                    where.ptr, kevo_error_last());
                    bad = true;
                } else if (g[d] < 1 || (L->has_local && l[d] < 1)) {
                    kevo_buf_printf(problems,
                                    "line %u: launch %s on %s: global size %lld%s%lld "
                                    "in dimension %u; both must be >= 1\n",
                                    L->line, L->kernel, where.ptr, (long long)g[d],
                                    L->has_local ? ", local size " : "", (long long)l[d], d);
                    bad = true;
                } else if (g[d] > ((int64_t)1 << 40)) {
                    kevo_buf_printf(problems,
                                    "line %u: launch %s on %s: global size %lld is "
                                    "too large\n",
                                    L->line, L->kernel, where.ptr, (long long)g[d]);
                    bad = true;
                } else if (L->has_local && g[d] % l[d]) {
                    kevo_buf ge = {0};
                    kevo_ocl_expr_print(&ge, L->global[d], task);
                    kevo_buf_printf(problems,
                                    "line %u: launch %s on %s: global size %s = %lld "
                                    "is not a multiple of local size %lld in dimension %u "
                                    "(OpenCL 1.2 requires it: write global=ROUND_UP(..., "
                                    "%lld) and skip work-items past the end in the kernel)\n",
                                    L->line, L->kernel, where.ptr, ge.ptr, (long long)g[d],
                                    (long long)l[d], d, (long long)l[d]);
                    kevo_buf_free(&ge);
                    bad = true;
                }
            }
            if (!bad && L->has_local)
                kevo_buf_printf(plan, "local %zu %lld %lld %lld %s\n", i, (long long)l[0],
                                (long long)(L->dims > 1 ? l[1] : 1),
                                (long long)(L->dims > 2 ? l[2] : 1), where.ptr);
            else if (!bad)
                kevo_buf_printf(plan, "local %zu 0 0 0 %s\n", i, where.ptr);
        }
        kevo_buf_free(&where);
    }
}

static void write_plan_launches(kevo_buf *plan, const kevo_task *task, const kevo_ocl_spec *spec)
{
    kevo_buf_puts(plan, "options");
    for (char **o = spec->options; o && *o; o++)
        kevo_buf_printf(plan, " %s", *o);
    kevo_buf_puts(plan, "\n");
    for (size_t i = 0; i < spec->nlaunches; i++) {
        const kevo_ocl_launch *L = &spec->launches[i];
        kevo_buf_printf(plan, "launch %zu %s %zu\n", i, L->kernel, L->nargs);
        for (size_t a = 0; a < L->nargs; a++) {
            const kevo_ocl_arg *A = &L->args[a];
            if (A->scratch) {
                const kevo_ocl_scratch *sc = &spec->scratch[A->index];
                kevo_buf_printf(plan, "arg buffer %s %s\n", kevo_ocl_type_name(sc->type), sc->name);
            } else {
                const kevo_param *p = &task->params[A->index];
                kevo_buf_printf(plan, "arg %s %s %s\n",
                                p->role == KEVO_ROLE_SCALAR ? "scalar" : "buffer",
                                kevo_ocl_type_name(p->type), p->name);
            }
        }
    }
}

/* spec.c: the launches and size expressions as C for the runner. Every
 * name and number in it comes from the parser, never raw candidate text. */
static void write_spec_c(kevo_buf *b, const kevo_task *task, const kevo_ocl_spec *spec,
                         unsigned platform, unsigned device)
{
    kevo_buf_printf(b,
                    "/* generated by kevo: the launches of an OpenCL candidate for task %s */\n"
                    "#include \"runner_opencl.h\"\n#include <stddef.h>\n"
                    "#define S(i) ((int64_t)s[i])\n",
                    task->name);
    kevo_buf_printf(b, "const unsigned kevo_ocl_nparams = %zu;\n", task->nparams);
    kevo_buf_puts(b, "const unsigned char kevo_ocl_roles[] = {");
    for (size_t i = 0; i < task->nparams; i++)
        kevo_buf_printf(b, "%s%d", i ? ", " : "", (int)task->params[i].role);
    kevo_buf_puts(b, "};\nconst unsigned char kevo_ocl_types[] = {");
    for (size_t i = 0; i < task->nparams; i++)
        kevo_buf_printf(b, "%s%d", i ? ", " : "", (int)task->params[i].type);
    kevo_buf_puts(b, "};\nconst char *const kevo_ocl_param_names[] = {");
    for (size_t i = 0; i < task->nparams; i++)
        kevo_buf_printf(b, "%s\"%s\"", i ? ", " : "", task->params[i].name);
    kevo_buf_printf(b, "};\nconst unsigned kevo_ocl_nscratch = %zu;\n", spec->nscratch);
    /* a last dummy entry keeps the arrays non-empty */
    kevo_buf_puts(b, "const unsigned char kevo_ocl_scratch_types[] = {");
    for (size_t j = 0; j < spec->nscratch; j++)
        kevo_buf_printf(b, "%d, ", (int)spec->scratch[j].type);
    kevo_buf_puts(b, "0};\nconst char *const kevo_ocl_scratch_names[] = {");
    for (size_t j = 0; j < spec->nscratch; j++)
        kevo_buf_printf(b, "\"%s\", ", spec->scratch[j].name);
    kevo_buf_puts(b, "\"\"};\n");
    for (size_t i = 0; i < spec->nlaunches; i++) {
        const kevo_ocl_launch *L = &spec->launches[i];
        kevo_buf_printf(b, "static const int args%zu[] = {", i);
        for (size_t a = 0; a < L->nargs; a++)
            kevo_buf_printf(b, "%s%d", a ? ", " : "",
                            L->args[a].scratch ? -(int)L->args[a].index - 1
                                               : (int)L->args[a].index);
        kevo_buf_printf(b, "%s};\n", L->nargs ? "" : "0");
    }
    kevo_buf_printf(b, "const unsigned kevo_ocl_nlaunches = %zu;\n", spec->nlaunches);
    kevo_buf_puts(b, "const kevo_ocl_launch_desc kevo_ocl_launches[] = {\n");
    for (size_t i = 0; i < spec->nlaunches; i++) {
        const kevo_ocl_launch *L = &spec->launches[i];
        kevo_buf_printf(b, "    {\"%s\", %u, %d, %zu, args%zu},\n", L->kernel, L->dims,
                        L->has_local ? 1 : 0, L->nargs, i);
    }
    kevo_buf_printf(b,
                    "};\nconst unsigned kevo_ocl_platform_index = %u, kevo_ocl_device_index = "
                    "%u;\n",
                    platform, device);
    kevo_buf_puts(b, "int kevo_ocl_scratch_count(unsigned j, const double *s, int64_t *out)\n{\n"
                     "    (void)s;\n    kevo_ocl_expr_error = 0;\n    switch (j) {\n");
    for (size_t j = 0; j < spec->nscratch; j++) {
        kevo_buf_printf(b, "    case %zu: *out = ", j);
        kevo_ocl_expr_emit_c(b, spec->scratch[j].count);
        kevo_buf_puts(b, "; break;\n");
    }
    kevo_buf_puts(b,
                  "    default: return -1;\n    }\n    return kevo_ocl_expr_error ? -1 : 0;\n}\n");
    kevo_buf_puts(b,
                  "int kevo_ocl_geometry(unsigned i, const double *s, int64_t g[3], int64_t "
                  "l[3])\n{\n    (void)s;\n    kevo_ocl_expr_error = 0;\n"
                  "    g[0] = g[1] = g[2] = 1;\n    l[0] = l[1] = l[2] = 1;\n    switch (i) {\n");
    for (size_t i = 0; i < spec->nlaunches; i++) {
        const kevo_ocl_launch *L = &spec->launches[i];
        kevo_buf_printf(b, "    case %zu:\n", i);
        for (unsigned d = 0; d < L->dims; d++) {
            kevo_buf_printf(b, "        g[%u] = ", d);
            kevo_ocl_expr_emit_c(b, L->global[d]);
            kevo_buf_puts(b, ";\n");
            if (L->has_local) {
                kevo_buf_printf(b, "        l[%u] = ", d);
                kevo_ocl_expr_emit_c(b, L->local[d]);
                kevo_buf_puts(b, ";\n");
            }
        }
        kevo_buf_puts(b, "        break;\n");
    }
    kevo_buf_puts(b,
                  "    default: return -1;\n    }\n    return kevo_ocl_expr_error ? -1 : 0;\n}\n");
}

static const char blob_s[] = "    .section .rodata\n"
                             "    .balign 64\n"
                             "    .globl kevo_ocl_binary\n"
                             "kevo_ocl_binary:\n"
                             "    .incbin \"program.bin\"\n"
                             "    .globl kevo_ocl_binary_end\n"
                             "kevo_ocl_binary_end:\n"
                             "    .byte 0\n"
                             "    .section .note.GNU-stack,\"\",@progbits\n";

/* Inspect every kernel library under dir (PoCL's cache); depth-limited. */
static int inspect_libraries(kevo_buf *problems, int *found, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int error = 0;
    while (!error && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *path = kevo_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0) {
            size_t n = strlen(e->d_name);
            if (S_ISDIR(st.st_mode) && depth < 8) {
                error = inspect_libraries(problems, found, path, depth + 1);
            } else if (S_ISREG(st.st_mode) && n > 3 && !strcmp(e->d_name + n - 3, ".so")) {
                kevo_elf_report r;
                (*found)++;
                if ((error = kevo_elf_inspect_shared(&r, path)) == 0 &&
                    (r.has_constructor || r.forbidden_symbols) &&
                    !strstr(kevo_buf_cstr(problems), r.problems))
                    kevo_buf_printf(problems, "%s\n", r.problems);
                kevo_elf_report_clear(&r);
            }
        }
        free(path);
    }
    closedir(d);
    return error;
}

static int read_device(unsigned *p, unsigned *d, char **desc, const char *dir)
{
    char *path = kevo_path_join(dir, "device.txt"), *text = NULL;
    int error = kevo_file_read(&text, NULL, path);
    free(path);
    if (error < 0)
        return kevo_error_set(KEVO_EINFRA, "the OpenCL build helper wrote no device.txt");
    if (sscanf(text, "%u %u", p, d) != 2) {
        free(text);
        return kevo_error_set(KEVO_EINFRA, "device.txt is malformed");
    }
    const char *nl = strchr(text, '\n');
    *desc = strdup(nl ? nl + 1 : "");
    (*desc)[strcspn(*desc, "\n")] = '\0';
    free(text);
    return 0;
}

/* The steps of ocl_build return 0 to go on, STOP when the candidate's
 * result (diagnostics, rejected) is in *out, negative for kevo's own
 * failures. */
#define STOP 1

/* 1. The directives, every launch and scratch size on every size set;
 * kernel.cl and plan.txt written to dir. *spec is the caller's. */
static int ocl_step_directives(kevo_ocl_spec **spec, kevo_build_result *out, const kevo_task *task,
                               const char *source, const char *dir)
{
    kevo_buf problems = {0}, plan = {0}, head = {0};
    bool rejected = false;
    int error = kevo_ocl_spec_parse(spec, &problems, &rejected, task, source);
    if (error < 0)
        goto done;
    if (!problems.len)
        check_geometry(&problems, &plan, task, *spec);
    if (problems.len) {
        out->rejected = rejected;
        kevo_buf_puts(&problems, "(docs/backends/opencl.md: `// kevo: launch KERNEL "
                                 "global=EXPR[,EXPR] local=EXPR[,EXPR]` lines at the top)");
        out->diagnostics = kevo_buf_detach(&problems);
        error = STOP;
        goto done;
    }
    write_plan_launches(&head, task, *spec);
    kevo_buf_puts(&head, kevo_buf_cstr(&plan));
    if ((error = kevo_tool_write(dir, "kernel.cl", source)) < 0 ||
        (error = kevo_tool_write(dir, "plan.txt", kevo_buf_cstr(&head))) < 0)
        goto done;
done:
    kevo_buf_free(&problems);
    kevo_buf_free(&plan);
    kevo_buf_free(&head);
    return error;
}

/* 2. The harness is there, and its build helper compiles (./ocl_build). */
static int ocl_step_helper(const char *dir)
{
    int error = 0;
    char *diag = NULL;
    bool ok = false;
    char *helper_src = kevo_path_join(kevo_harness_dir(), "ocl_build.c");
    char *runner_src = kevo_path_join(kevo_harness_dir(), "runner.c");
    char *ocl_src = kevo_path_join(kevo_harness_dir(), "runner_opencl.c");
    if (!kevo_file_exists(helper_src) || !kevo_file_exists(runner_src) ||
        !kevo_file_exists(ocl_src)) {
        error = kevo_error_set(KEVO_EINFRA, "%s: OpenCL harness missing (set KEVO_HARNESS_DIR)",
                               kevo_harness_dir());
        goto done;
    }
    const char *cc[] = {"/usr/bin/gcc", "-O1",       "-std=gnu11", helper_src,
                        "-o",           "ocl_build", "-lOpenCL",   NULL};
    if ((error = kevo_tool_run(&ok, &diag, dir, cc, NULL)) < 0)
        goto done;
    if (!ok)
        error = kevo_error_set(KEVO_EINFRA,
                               "cannot build the OpenCL build helper (are "
                               "ocl-icd-opencl-dev and opencl-headers installed?): %s",
                               diag);
done:
    free(diag);
    free(helper_src);
    free(runner_src);
    free(ocl_src);
    return error;
}

/* 2b. clBuildProgram in the helper, with its own PoCL cache under dir
 * (BUILD_CACHE), into program.bin, which must stay under 1 MiB. */
static int ocl_step_program(kevo_build_result *out, const char *dir, const char *build_cache)
{
    kevo_buf env1 = {0}, env2 = {0};
    char *output = NULL, *bin = NULL;
    int error = kevo_mkdirs(build_cache, 0700);
    if (error < 0)
        goto done;
    kevo_buf_printf(&env1, "POCL_CACHE_DIR=%s", build_cache);
    const char *want = getenv("KEVO_OPENCL_DEVICE");
    if (want && *want)
        kevo_buf_printf(&env2, "KEVO_OPENCL_DEVICE=%s", want);
    const char *env[] = {env1.ptr, env2.len ? env2.ptr : NULL, NULL};
    const char *argv[] = {"./ocl_build", "kernel.cl", "plan.txt", "program.bin", NULL};
    kevo_proc_status ps;
    if ((error = kevo_tool_run_output(&ps, &output, dir, argv, env, KEVO_TOOL_TIMEOUT_S)) < 0)
        goto done;
    /* status 2: no usable platform or another failure of the machine, never the
     * candidate's; a crash or a timeout of the compiler is the source's */
    if (ps.kind == KEVO_EXIT_NORMAL && ps.exit_code == 2) {
        error = kevo_error_set(KEVO_EINFRA, "OpenCL: %s", output ? output : "");
        goto done;
    }
    if (ps.kind != KEVO_EXIT_NORMAL || ps.exit_code != 0) {
        out->diagnostics = kevo_tool_trim(output ? output : "", dir);
        error = STOP;
        goto done;
    }
    /* The runner unpacks the binary into files under the sandbox's file-size
     * limit (1 MiB); a binary below it cannot produce a larger file. */
    bin = kevo_path_join(dir, "program.bin");
    struct stat st;
    if (stat(bin, &st) == 0 && st.st_size > (1 << 20)) {
        kevo_buf b = {0};
        kevo_buf_printf(&b,
                        "the compiled program is %lld bytes; the limit is 1 MiB (less "
                        "unrolling or fewer kernels)",
                        (long long)st.st_size);
        out->diagnostics = kevo_buf_detach(&b);
        error = STOP;
    }
done:
    kevo_buf_free(&env1);
    kevo_buf_free(&env2);
    free(output);
    free(bin);
    return error;
}

/* 3. What the compiled kernels reach on the host: a rejection when they
 * reach beyond the allowed. */
static int ocl_step_libraries(kevo_build_result *out, const char *build_cache)
{
    int found = 0;
    kevo_buf libs = {0};
    int error = inspect_libraries(&libs, &found, build_cache, 0);
    if (error >= 0 && libs.len) {
        out->rejected = true;
        out->diagnostics = kevo_buf_detach(&libs);
        error = STOP;
    }
    kevo_buf_free(&libs);
    return error;
}

/* 4. The runner: harness/runner.c + runner_opencl.c + the generated spec.c
 * + blob.S embedding program.bin, linked with -lOpenCL. */
static int ocl_step_runner(kevo_build_result *out, const kevo_task *task, const kevo_ocl_spec *spec,
                           const char *dir)
{
    kevo_buf specc = {0}, inc = {0}, d = {0};
    char *desc = NULL, *diag = NULL;
    char *runner_src = kevo_path_join(kevo_harness_dir(), "runner.c");
    char *ocl_src = kevo_path_join(kevo_harness_dir(), "runner_opencl.c");
    unsigned platform = 0, device = 0;
    bool ok = false;
    int error = read_device(&platform, &device, &desc, dir);
    if (error < 0)
        goto done;
    write_spec_c(&specc, task, spec, platform, device);
    if ((error = kevo_tool_write(dir, "spec.c", kevo_buf_cstr(&specc))) < 0 ||
        (error = kevo_tool_write(dir, "blob.S", blob_s)) < 0)
        goto done;
    kevo_buf_printf(&inc, "-I%s", kevo_harness_dir());
    const char *c1[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", inc.ptr, "-c",
                        runner_src,     "-o",  "runner.o",   NULL};
    const char *c2[] = {"/usr/bin/gcc", "-O2", "-std=gnu11",      inc.ptr, "-c",
                        ocl_src,        "-o",  "runner_opencl.o", NULL};
    const char *c3[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", inc.ptr, "-c",
                        "spec.c",       "-o",  "spec.o",     NULL};
    const char *c4[] = {"/usr/bin/gcc", "-c", "blob.S", "-o", "blob.o", NULL};
    const char *ld[] = {"/usr/bin/gcc", "-o",     "runner",   "runner.o", "runner_opencl.o",
                        "spec.o",       "blob.o", "-lOpenCL", "-ldl",     NULL};
    const char *const *steps[] = {c1, c2, c3, c4, ld};
    for (int i = 0; i < 5; i++) {
        if ((error = kevo_tool_run(&ok, &diag, dir, steps[i], NULL)) < 0)
            goto done;
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "cannot build the OpenCL runner: %s", diag);
            goto done;
        }
    }
    out->ok = true;
    out->runner_path = kevo_path_join(dir, "runner");
    chmod(out->runner_path, 0755);
    chmod(dir, 0755);
    kevo_buf_printf(&d, "built for %s", desc);
    out->diagnostics = kevo_buf_detach(&d);
done:
    kevo_buf_free(&specc);
    kevo_buf_free(&inc);
    free(desc);
    free(diag);
    free(runner_src);
    free(ocl_src);
    return error;
}

/* The build options the candidate asked for (`// kevo: options`), for
 * out->cflags_used; an empty list without a spec. */
static void ocl_options_used(kevo_build_result *out, const kevo_ocl_spec *spec)
{
    out->cflags_used = calloc(1, sizeof(char *));
    if (!spec || !out->cflags_used)
        return;
    size_t n = 0;
    for (char **o = spec->options; o && *o; o++) {
        char **v = realloc(out->cflags_used, (n + 2) * sizeof(char *));
        if (!v)
            break;
        out->cflags_used = v;
        v[n++] = strdup(*o);
        v[n] = NULL;
    }
}

static int ocl_build(const kevo_backend *be, const kevo_task *task, const char *source,
                     bool is_reference, const char *dir, kevo_build_result *out)
{
    int error = 0;
    double start = kevo_now_s();
    kevo_ocl_spec *spec = NULL;
    char *build_cache = NULL;
    (void)be;
    memset(out, 0, sizeof(*out));
    if (is_reference) {
        error = kevo_error_set(KEVO_EINVAL, "the reference is C: build it with the C backend");
        goto done;
    }
    build_cache = kevo_path_join(dir, BUILD_CACHE);
    if ((error = ocl_step_directives(&spec, out, task, source, dir)) != 0 ||
        (error = ocl_step_helper(dir)) != 0 ||
        (error = ocl_step_program(out, dir, build_cache)) != 0 ||
        (error = ocl_step_libraries(out, build_cache)) != 0 ||
        (error = ocl_step_runner(out, task, spec, dir)) != 0)
        goto done;
done:
    if (error == STOP)
        error = 0;
    out->seconds = kevo_now_s() - start;
    ocl_options_used(out, spec);
    kevo_ocl_spec_free(spec);
    free(build_cache);
    return error;
}

/* Each run gets its own PoCL cache, owned by the uid the runner runs as. */
static int ocl_runner_env(const kevo_backend *be, const char *dir, char ***out)
{
    *out = NULL;
    char *cache = kevo_path_join(dir, RUN_CACHE);
    int error = kevo_mkdirs(cache, 0700);
    if (error == 0 && geteuid() == 0 && chown(cache, NOBODY_ID, NOBODY_ID) < 0)
        error = kevo_error_set(KEVO_EIO, "%s: cannot give it to the runner's uid", cache);
    if (error < 0) {
        free(cache);
        return error;
    }
    char **env = calloc(3, sizeof(char *));
    kevo_buf b = {0};
    kevo_buf_printf(&b, "POCL_CACHE_DIR=%s", cache);
    env[0] = kevo_buf_detach(&b);
    env[1] = strdup("POCL_WORK_GROUP_SPECIALIZATION=0");
    free(cache);
    *out = env;
    return 0;
}


static int ocl_source_gate(const kevo_backend *be, const kevo_task *task, const char *source,
                           int *violations, kevo_buf *findings)
{
    (void)be;
    return kevo_backend__gate_opencl(violations, findings, task, source);
}

/* The built-in generator's first OpenCL draft: the C reference carried over
 * as one work-item (opencl_draft.c). */
static int ocl_draft(const kevo_backend *be, const kevo_task *task, const char *reference,
                     char **out_source, const char **summary)
{
    (void)be;
    *summary = "reference, ported";
    *out_source = NULL;
    return kevo_backend__opencl_port(out_source, reference, task->name);
}

/* The API notes this backend seeds into a fresh memory (memory/seed.c):
 * "bundle" notes go with every context of the backend, the others are
 * found by exact name. Keep titles stable: they are part of the uid. */
static const kevo_backend_note opencl_notes[] = {
    /* ---- opencl: bundle (docs/backends/opencl-api.md in brief) ---- */
    {NULL, "bundle", "kevo opencl candidate",
     "One OpenCL C 1.2 file, kernels only, no #include. Its first lines say what the host "
     "launches, in order: `// kevo: launch KERNEL global=ROUND_UP(N,256) local=256` (1-3 "
     "dimensions; sizes are integer expressions of the task's integer params with ROUND_UP, "
     "CEIL_DIV, MIN, MAX), optional `// kevo: scratch NAME f32 COUNT` device buffers and "
     "`// kevo: options -cl-fast-relaxed-math` (allow-listed). Every launched kernel takes the "
     "task's params in order (buffers as __global T *, i64 as long), then the scratch buffers. "
     "Launches run one after another; only the launches are timed."},
    {NULL, "bundle", "OpenCL execution model",
     "global work-items in work-groups of local; each global size must be a multiple of its "
     "local size, so round up and guard `if (i < N)`. Work-items of a group share __local "
     "memory and meet at barrier(); groups cannot synchronise within a launch (use a second "
     "launch). get_global_id/get_local_id/get_group_id(d) return size_t; dimension 0 should "
     "index neighbouring addresses."},
    {NULL, "bundle", "OpenCL address spaces",
     "__global: buffers; __local: per work-group, declared at kernel scope with constant size "
     "(`__local float t[16][17];`); __constant: read-only; __private: the default for locals. "
     "A pointer variable into a buffer must say __global (`__global const float *row = x + "
     "r * C;`); pointers to different address spaces do not convert."},
    {NULL, "bundle", "OpenCL types and maths",
     "long is 64-bit (kevo's i64), int 32; double needs `#pragma OPENCL EXTENSION cl_khr_fp64 : "
     "enable`. Maths functions are overloaded generics: exp, log, sqrt, fabs, fmax, tanh, erf "
     "(not expf, fabsf). Vectors float2/4/8/16 with vloadN/vstoreN; no malloc, printf, "
     "recursion or C library."},
    {NULL, "bundle", "barrier",
     "barrier(CLK_LOCAL_MEM_FENCE): every work-item of the group waits here; required between "
     "writing and reading __local memory. Never inside control flow that differs between "
     "work-items of a group."},
    /* ---- opencl: exact-name lookups ---- */
    {NULL, "workitem", "get_global_id",
     "size_t get_global_id(uint dim): this work-item's index in the NDRange; guard with "
     "`if (i < n)` when the global size is rounded up."},
    {NULL, "workitem", "get_local_id",
     "size_t get_local_id(uint dim): index within the work-group, 0 .. local size - 1."},
    {NULL, "workitem", "get_group_id",
     "size_t get_group_id(uint dim): the work-group's index; with `global=R*128 local=128` one "
     "group per row r = get_group_id(0)."},
    {NULL, "vector", "vload4",
     "float4 vload4(size_t offset, const __global float *p): load p[4*offset .. 4*offset+3]; "
     "vstore4(v, offset, p) writes back. Wider loads cut instruction count on memory-bound "
     "kernels."},
    {NULL, "math", "native_exp",
     "float native_exp(float x): fast, lower-precision exp (also native_log, native_sqrt, "
     "native_recip, native_divide); check the task's tolerance."},
    {NULL, "math", "mad",
     "mad(a, b, c): a*b+c, possibly less precise and faster; fma(a, b, c) is exact."},
    {NULL, "memory", "async_work_group_copy",
     "event_t async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t e): "
     "the whole group copies n elements; then wait_group_events(1, &ev) before reading dst."},
    {NULL, "atomic", "atomic_add",
     "int atomic_add(volatile __global int *p, int v) (also __local, uint; atomic_min/max/xchg/"
     "cmpxchg). No float atomic add in OpenCL 1.2: reduce in __local memory, or loop on "
     "atomic_cmpxchg with as_uint/as_float."},
    {NULL, "attribute", "reqd_work_group_size",
     "__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void k(...): the launch must use "
     "exactly local=16,16; lets the compiler size __local arrays and unroll."},
};

const kevo_backend kevo_backend_opencl = {
    .version = KEVO_BACKEND_VERSION,
    .name = "opencl",
    .candidate_ext = ".cl",
    .code_language = "opencl",
    .build = ocl_build,
    .runner_env = ocl_runner_env,
    .flags = KEVO_BACKEND_CAP_BUILTIN_GENERATOR | KEVO_BACKEND_CAP_NEEDS_DEVICE,
    .code_fence_tags = "opencl cl ocl; c h",
    .source_gate = ocl_source_gate,
    .draft = ocl_draft,
    .api_notes = opencl_notes,
    .napi_notes = sizeof(opencl_notes) / sizeof(opencl_notes[0]),
};
