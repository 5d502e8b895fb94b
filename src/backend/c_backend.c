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
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COMPILE_TIMEOUT_S 120.0
#define COMPILE_MEM (4ULL << 30)
#define DIAG_CAP 4000

/* Keep the most useful compiler output first: error lines (with the two
 * lines after each), then warnings, cut at DIAG_CAP characters. */
static char *trim_diagnostics(const char *raw, const char *dir)
{
    kevo_buf errors = {0}, rest = {0}, out = {0};
    const char *p = raw;
    int context = 0;
    size_t dirlen = strlen(dir);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        kevo_buf line = {0};
        /* strip our private directory from paths */
        for (size_t i = 0; i < len;) {
            if (i + dirlen + 1 <= len && !strncmp(p + i, dir, dirlen) && p[i + dirlen] == '/') {
                i += dirlen + 1;
                continue;
            }
            kevo_buf_put(&line, p + i, 1);
            i++;
        }
        const char *l = kevo_buf_cstr(&line);
        bool is_error = strstr(l, "error") != NULL;
        if (is_error)
            context = 3;
        kevo_buf *dst = context > 0 ? &errors : &rest;
        if (context > 0)
            context--;
        if (strncmp(l, "In file included", 16) && strncmp(l, "compilation terminated", 22)) {
            kevo_buf_puts(dst, l);
            kevo_buf_puts(dst, "\n");
        }
        kevo_buf_free(&line);
        p += len + (eol ? 1 : 0);
    }
    kevo_buf_puts(&out, kevo_buf_cstr(&errors));
    kevo_buf_puts(&out, kevo_buf_cstr(&rest));
    if (out.len > DIAG_CAP) {
        out.len = DIAG_CAP;
        out.ptr[out.len] = '\0';
        kevo_buf_puts(&out, "\n[... compiler output cut at 4000 characters]");
    }
    kevo_buf_free(&errors);
    kevo_buf_free(&rest);
    return kevo_buf_detach(&out);
}

/* Run a toolchain command in dir. *ok is false when it failed; then
 * *diag holds its trimmed output. */
static int tool(bool *ok, char **diag, const char *dir, const char *const argv[])
{
    kevo_sandbox_opts o = {.workdir = dir, .wall_timeout_s = COMPILE_TIMEOUT_S,
                           .mem_bytes = COMPILE_MEM, .cpu_s = COMPILE_TIMEOUT_S,
                           .drop_privileges = true};
    kevo_proc_status st;
    char *output = NULL;
    int error = kevo_sandbox_run(&st, &output, 1 << 20, argv, &o);
    if (error < 0)
        return error;
    *ok = st.kind == KEVO_EXIT_NORMAL && st.exit_code == 0;
    if (!*ok) {
        char *t = trim_diagnostics(output ? output : "", dir);
        kevo_buf b = {0};
        if (st.kind != KEVO_EXIT_NORMAL)
            kevo_buf_printf(&b, "%s: %s\n", argv[0], kevo_proc_status_describe(&st));
        kevo_buf_puts(&b, t);
        free(t);
        *diag = kevo_buf_detach(&b);
    }
    free(output);
    return 0;
}

static int write_in(const char *dir, const char *name, const char *text)
{
    char *path = kevo_path_join(dir, name);
    int error = kevo_file_write(path, text, strlen(text));
    free(path);
    return error;
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
    kevo_task_prototype(&proto, task);
    kevo_buf_printf(&protoh, "#include <stdint.h>\n%s;\n", proto);
    kevo_backend_call_stub(&stub, task);
    if ((error = write_in(dir, "kernel.c", source)) < 0 ||
        (error = write_in(dir, "proto.h", kevo_buf_cstr(&protoh))) < 0 ||
        (error = write_in(dir, "call.c", stub)) < 0)
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
        error = write_in(dir, name, text);
        free(text);
        if (error < 0)
            goto done;
    }
    if ((error = kevo_sandbox_prepare_dir(dir)) < 0)
        goto done;
    runner_src = strdup("runner.c");
    hdr = strdup("-I.");
    bool ok = true;
    char *diag = NULL;
    {
        const char *argv[] = {"/usr/bin/gcc", "-O3", "-std=gnu11", hdr, "-c", runner_src,
                              "-o", "runner.o", NULL};
        const char *argv2[] = {"/usr/bin/gcc", "-O2", "-std=gnu11", "-c", "call.c", "-o",
                               "call.o", NULL};
        if ((error = tool(&ok, &diag, dir, argv)) < 0 || (ok && (error = tool(&ok, &diag, dir,
                                                                              argv2)) < 0))
            goto done;
        if (!ok) {
            error = kevo_error_set(KEVO_EINFRA, "cannot build the harness: %s", diag);
            free(diag);
            goto done;
        }
    }
    const char *cc[32];
    size_t n = 0;
    bool openmp = false;
    cc[n++] = "/usr/bin/gcc";
    cc[n++] = "-std=gnu11";
    cc[n++] = "-O3";
    cc[n++] = "-march=native";
    for (char **h = hint; h && *h && n < 24; h++) {
        cc[n++] = *h;
        openmp |= !strcmp(*h, "-fopenmp");
    }
    cc[n++] = "-include";
    cc[n++] = "proto.h";
    cc[n++] = "-c";
    cc[n++] = "kernel.c";
    cc[n++] = "-o";
    cc[n++] = "kernel.o";
    cc[n] = NULL;
    if ((error = tool(&ok, &diag, dir, cc)) < 0)
        goto done;
    if (!ok) {
        out->diagnostics = diag;
        goto done;
    }
    if (!is_reference) {
        kevo_buf keep = {0};
        kevo_buf_printf(&keep, "--keep-global-symbol=%s", task->name);
        const char *oc[] = {"/usr/bin/objcopy", keep.ptr, "kernel.o", NULL};
        error = tool(&ok, &diag, dir, oc);
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
    if ((error = tool(&ok, &diag, dir, ld)) < 0)
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
