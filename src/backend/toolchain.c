/*
 * backend/toolchain.c - running a backend's toolchain (compilers, linkers,
 * the OpenCL build helper) with limits, and trimming what it prints into
 * diagnostics a person or an LLM can act on. Never runs candidate code
 * with the untrusted policy: that is the evaluator's runner.
 */
#include "toolchain.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file a diagnostic line is about ("path:12:" or "In file included
 * from path:3"), or NULL for a continuation line (source excerpt, caret). */
static bool diag_file(const char *line, size_t len, const char **file, size_t *flen)
{
    const char *p = line, *end = line + len;
    static const char inc[] = "In file included from ";
    static const char from[] = "                 from ";
    if (len > sizeof(inc) - 1 && !strncmp(p, inc, sizeof(inc) - 1))
        p += sizeof(inc) - 1;
    else if (len > sizeof(from) - 1 && !strncmp(p, from, sizeof(from) - 1))
        p += sizeof(from) - 1;
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)))
        return false;
    bool numbered = colon + 1 < end && colon[1] >= '0' && colon[1] <= '9';
    bool in_function = end - colon > 4 && !strncmp(colon, ": In ", 5);
    if (!numbered && !in_function)
        return false;
    *file = p;
    *flen = (size_t)(colon - p);
    return true;
}

/* Drop every diagnostic about a file outside the build directory (and its
 * quoted source lines): a candidate that includes /etc/passwd or a root-only
 * file must not get its text back through the compiler's errors. */
static char *keep_own_files(const char *raw, const char *dir)
{
    kevo_buf out = {0};
    size_t dirlen = strlen(dir);
    bool keep = true, dropped = false;
    for (const char *p = raw; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *file;
        size_t flen;
        if (diag_file(p, len, &file, &flen))
            keep = file[0] != '/' || (flen > dirlen && !strncmp(file, dir, dirlen) &&
                                      file[dirlen] == '/');
        if (keep)
            kevo_buf_printf(&out, "%.*s\n", (int)len, p);
        else
            dropped = true;
        p += len + (eol ? 1 : 0);
    }
    if (dropped)
        kevo_buf_puts(&out, "(diagnostics about files outside the candidate's own sources "
                            "are not shown)\n");
    return kevo_buf_detach(&out);
}

char *kevo_tool_trim(const char *raw_in, const char *dir)
{
    kevo_buf errors = {0}, rest = {0}, out = {0};
    char *own = keep_own_files(raw_in ? raw_in : "", dir);
    const char *raw = own ? own : "";
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
    if (out.len > KEVO_DIAG_CAP) {
        out.len = KEVO_DIAG_CAP;
        out.ptr[out.len] = '\0';
        kevo_buf_puts(&out, "\n[... compiler output cut at 4000 characters]");
    }
    kevo_buf_free(&errors);
    kevo_buf_free(&rest);
    free(own);
    return kevo_buf_detach(&out);
}

static int run(kevo_proc_status *st, char **output, const char *dir, const char *const argv[],
               const char *const *env, double timeout_s)
{
    /* A backend that handed its build directory to the unprivileged user
     * (kevo_sandbox_prepare_dir) gets its tools run as that user, so a
     * candidate cannot make the compiler read root-only files. */
    struct stat sb;
    bool unprivileged_dir = stat(dir, &sb) == 0 && sb.st_uid != 0 && geteuid() == 0;
    kevo_sandbox_opts o = {.workdir = dir,
                           .wall_timeout_s = timeout_s,
                           .mem_bytes = KEVO_TOOL_MEM,
                           .cpu_s = timeout_s,
                           .drop_privileges = unprivileged_dir,
                           .extra_env = env,
                           /* kevo's harness sources, read in place by the device backends */
                           .ro_paths = (const char *const[]){kevo_harness_dir(), NULL}};
    *output = NULL;
    return kevo_sandbox_run(st, output, 1 << 20, argv, &o);
}

int kevo_tool_run_output(kevo_proc_status *st, char **output, const char *dir,
                         const char *const argv[], const char *const *env, double timeout_s)
{
    int error = run(st, output, dir, argv, env, timeout_s);
    if (error < 0)
        return error;
    if (st->kind != KEVO_EXIT_NORMAL) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "%s: %s\n%s", argv[0], kevo_proc_status_describe(st),
                        *output ? *output : "");
        free(*output);
        *output = kevo_buf_detach(&b);
    }
    return 0;
}

int kevo_tool_run(bool *ok, char **diag, const char *dir, const char *const argv[],
                  const char *const *env)
{
    kevo_proc_status st;
    char *output = NULL;
    int error = run(&st, &output, dir, argv, env, KEVO_TOOL_TIMEOUT_S);
    if (error < 0)
        return error;
    *ok = st.kind == KEVO_EXIT_NORMAL && st.exit_code == 0;
    if (!*ok) {
        char *t = kevo_tool_trim(output ? output : "", dir);
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

int kevo_tool_write(const char *dir, const char *name, const char *text)
{
    char *path = kevo_path_join(dir, name);
    int error = kevo_file_write(path, text, strlen(text));
    free(path);
    return error;
}
