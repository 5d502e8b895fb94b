/*
 * backend/c_compile.c - the C backend's kernel compile line and the
 * prototype header forced into every kernel: shared by the compile gate
 * (c_backend.c), the static gate's preprocessor pass (source_gate_c.c) and
 * the reference cache's key (kevo/sys/backend.h), so all three see the same
 * translation unit. Must not: run anything.
 */
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <string.h>

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
