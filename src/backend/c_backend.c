/*
 * backend/c_backend.c - the C/CPU backend: gcc builds a runner from the
 * harness, a generated call stub and the kernel. The reference is built
 * with -O3 -march=native, single-threaded; a candidate with the same flags
 * plus its allow-listed build hint (e.g. -fopenmp). Candidate objects are
 * checked at the symbol level (elf_inspect.c) and have every global symbol
 * but the kernel made local, so they cannot interpose on the harness
 * (clock_gettime, memcpy...). Compilers run with time and memory limits.
 */
#include "backend/elf_inspect.h"
#include "backend/toolchain.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

size_t kevo_c_compile_flags(const char **argv, size_t cap, char *const *hint, bool *openmp)
{
    size_t n = 0;
    *openmp = false;
    argv[n++] = "/usr/bin/gcc";
    argv[n++] = "-std=gnu11";
    argv[n++] = "-O3";
    argv[n++] = "-march=native";
    for (char *const *h = hint; h && *h && n + 2 < cap; h++) {
        argv[n++] = *h;
        *openmp |= !strcmp(*h, "-fopenmp");
    }
    argv[n++] = "-include";
    argv[n++] = KEVO_C_PROTO_FILE;
    return n;
}

int kevo_c_proto_header(char **proto, kevo_buf *out, const kevo_task *task)
{
    int error = kevo_task_prototype(proto, task);
    if (error < 0)
        return error;
    kevo_buf_printf(out, "#include <stdint.h>\n%s;\n", *proto);
    return 0;
}

static int c_build(const kevo_backend *be, const kevo_task *task, const char *source,
                   bool is_reference, const char *dir, kevo_build_result *out)
{
    int error = 0;
    char *proto = NULL, *stub = NULL, *runner_src = NULL, *hdr = NULL;
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
    if ((error = kevo_tool_write(dir, "call.c", stub)) < 0)
        goto done;
    /* The compiler runs as nobody in `dir`: give it the harness there. */
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "runner.c" : "protocol.h";
        char *from = kevo_path_join(kevo_harness_dir(), name), *text = NULL;
        error = kevo_file_read(&text, NULL, from);
        free(from);
        if (error < 0) {
            error = kevo_error_set(KEVO_EINFRA, "harness missing (set KEVO_HARNESS_DIR): %s",
                                   kevo_error_last());
            goto done;
        }
        error = kevo_tool_write(dir, name, text);
        free(text);
        if (error < 0)
            goto done;
    }
    if ((error = kevo_sandbox_prepare_dir(dir)) < 0)
        goto done;
    runner_src = strdup("runner.c");
    hdr = strdup("-I.");
    {
        const char *argv[] = {"/usr/bin/gcc", "-O3", "-std=gnu11", hdr, "-c", runner_src,
                              "-o", "runner.o", NULL};
        const char *argv2[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", "-c", "call.c", "-o",
                               "call.o", NULL};
        if ((error = kevo_tool_run(&ok, &diag, dir, argv, NULL)) < 0 ||
            (ok && (error = kevo_tool_run(&ok, &diag, dir, argv2, NULL)) < 0))
            goto done;
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "cannot build the harness: %s", diag);
            free(diag);
            goto done;
        }
    }
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
    out->runner_path = kevo_path_join(dir, "runner");
    chmod(out->runner_path, 0755);
    chmod(dir, 0755);
done:
    out->seconds = kevo_now_s() - start;
    out->cflags_used = hint;
    free(proto);
    free(stub);
    free(runner_src);
    free(hdr);
    kevo_buf_free(&protoh);
    kevo_elf_report_clear(&elf);
    return error;
}

const kevo_backend kevo_backend_c = {
    .version = KEVO_BACKEND_VERSION,
    .name = "c",
    .candidate_ext = ".c",
    .code_language = "c",
    .build = c_build,
};
