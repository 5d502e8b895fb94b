/*
 * kevo/sys/backend.h - the vtable for adding a target (CPU C, OpenCL,
 * CUDA, an NPU toolchain...). A backend owns its toolchain: it turns a
 * candidate (or the reference) into a *runner* program that speaks the
 * pipe protocol of harness/protocol.h. The verifier (src/verify) owns the
 * gates, comparisons and timing; a backend never talks to the store.
 *
 * See docs/backends/adding-a-backend.md.
 */
#ifndef KEVO_SYS_BACKEND_H
#define KEVO_SYS_BACKEND_H

#include "kevo/task.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEVO_BACKEND_VERSION 1

/* Outcome of building a runner. Owned by the caller; free with
 * kevo_build_result_clear(). A build that fails because of the source is a
 * result (ok=false), not an error. */
typedef struct kevo_build_result {
    bool ok;
    bool rejected;      /* the object broke a rule (constructor, forbidden symbol) */
    char *runner_path;  /* when ok */
    char *diagnostics;  /* compiler output, trimmed, or the rejection reason */
    char **cflags_used; /* informative */
    double seconds;
} kevo_build_result;

void kevo_build_result_clear(kevo_build_result *r);

typedef struct kevo_backend {
    unsigned version; /* KEVO_BACKEND_VERSION */
    const char *name; /* "c", "opencl", "cuda" */
    const char *candidate_ext; /* ".c", ".cl", ".cu" */
    const char *code_language; /* fence language an LLM should use */
    /* Build a runner from `source` in the private directory `dir`.
     * is_reference: the task's reference.c (always C, built with the
     * reference flags). Returns negative only for kevo's own failures
     * (toolchain missing...). */
    int (*build)(const struct kevo_backend *be, const kevo_task *task, const char *source,
                 bool is_reference, const char *dir, kevo_build_result *out);
    /* Optional: can runners of this backend execute here? NULL = yes. When
     * not, *why says so ("no CUDA device") and the correctness and latency
     * gates end in infra_error. */
    bool (*can_run)(const struct kevo_backend *be, const char **why);
    /* Optional: prepare the private directory `dir` a runner of this
     * backend is about to run in, and give extra "K=V" environment strings
     * for it (*out: NULL-terminated, the caller's, kevo_strv_free; NULL for
     * none). The OpenCL backend gives each run its own POCL_CACHE_DIR
     * there. Called for candidate runners only (the reference is C). */
    int (*runner_env)(const struct kevo_backend *be, const char *dir, char ***out);
    void *ctx;
    unsigned flags; /* KEVO_BACKEND_* below */
} kevo_backend;

/* flags: runners get no address-space limit (RLIMIT_AS), because the
 * device driver reserves more virtual memory than any sensible limit (the
 * CUDA driver reserves terabytes); the other limits stay. */
#define KEVO_BACKEND_NO_AS_LIMIT 1u

/* Registry: the built-in backends by name. Borrowed, static. */
const kevo_backend *kevo_backend_find(const char *name);
/* NULL-terminated list of registered backend names. */
const char *const *kevo_backend_names(void);

/* Helpers shared by backends. */
/* Parse the optional first-line build hint `// kevo: cflags ...`.
 * Returns KEVO_EINVAL with the offending flag when a flag is not on the
 * allow-list. *out is a NULL-terminated array (free with kevo_strv_free). */
int kevo_cflags_parse(char ***out, const char *source);
bool kevo_cflag_allowed(const char *flag);
void kevo_strv_free(char **v);
/* Directory holding harness/runner.c and protocol.h. */
const char *kevo_harness_dir(void);
/* The C backend's kernel compile, shared by its compile gate and the static
 * gate's preprocessor pass (verify/antihack_c.c) so the two see the same
 * translation unit: argv[0..n) = gcc, the fixed flags, the hint's flags
 * (`hint` from kevo_cflags_parse, borrowed; may be NULL) and the forced
 * include of KEVO_C_PROTO_FILE; the caller appends the rest and the NULL
 * (cap >= 8 + hint count). *openmp: the hint asks for -fopenmp.
 * Returns n. The strings are borrowed. */
#define KEVO_C_KERNEL_FILE "kernel.c"
#define KEVO_C_PROTO_FILE "proto.h"
size_t kevo_c_compile_flags(const char **argv, size_t cap, char *const *hint, bool *openmp);
/* The forced-include header's text (appended to *out) and, in *proto (the
 * caller's), the kernel's prototype. */
struct kevo_buf;
int kevo_c_proto_header(char **proto, struct kevo_buf *out, const kevo_task *task);
/* The generated call stub of a task (C source calling the kernel). */
int kevo_backend_call_stub(char **out, const kevo_task *task);

#ifdef __cplusplus
}
#endif
#endif
