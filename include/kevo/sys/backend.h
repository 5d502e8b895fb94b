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
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1: name, candidate_ext, code_language, build, can_run, runner_env, ctx,
 *    flags (KEVO_BACKEND_NO_AS_LIMIT).
 * 2 adds, after flags: code_fence_tags (the fence tags kevo_llm_extract_code
 *    accepts for the backend), the capability bits KEVO_BACKEND_CAP_* in
 *    flags, and the optional hooks source_gate (the static gate's analyser)
 *    and draft (the built-in generator's first draft), and api_notes /
 *    napi_notes (what the backend seeds into a fresh memory). A v2 caller
 *    reads those fields only from a backend whose version is >= 2. */
#define KEVO_BACKEND_VERSION 2

/* Outcome of building a runner. Owned by the caller; free with
 * kevo_build_result_clear(). A build that fails because of the source is a
 * result (ok=false), not an error. */
typedef struct kevo_build_result {
    bool ok;
    bool rejected;      /* the object broke a rule (constructor, forbidden symbol) */
    char *runner_path;  /* when ok */
    char *diagnostics;  /* compiler output, trimmed, or the rejection reason */
    char **cflags_used; /* informative */
    bool openmp;        /* the runner links OpenMP: its calls may run threads (C backend) */
    double seconds;
} kevo_build_result;

void kevo_build_result_clear(kevo_build_result *r);

/* One API note a backend seeds into a fresh experience memory (an api_doc
 * item of that backend): plain static data, borrowed. tags "bundle": shown
 * with every context of the backend; other tags: the note is found by exact
 * name when its title (an identifier) appears in retrieved code. */
typedef struct kevo_backend_note {
    const char *category; /* the task category it is for; NULL = any */
    const char *tags;     /* "bundle", or a topic ("avx512", "workitem") */
    const char *title;    /* unique within the backend: part of the item's uid */
    const char *body;
} kevo_backend_note;

struct kevo_buf;

typedef struct kevo_backend {
    unsigned version; /* KEVO_BACKEND_VERSION */
    const char *name; /* "c", "opencl", "cuda" */
    const char *candidate_ext; /* ".c", ".cl", ".cu": a candidate file's extension */
    /* The code fence language an LLM must answer in ("c", "opencl", "cuda"):
     * the prompt asks for a ```code_language block; the first word of
     * code_fence_tags (v2). */
    const char *code_language;
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
    unsigned flags; /* KEVO_BACKEND_NO_AS_LIMIT and KEVO_BACKEND_CAP_* below */
    /* ---- version 2 ---- */
    /* The fence tags a reply's code block may carry, as the `lang` spec of
     * kevo_llm_extract_code(): "FENCE ALIAS...; RELATED...", FENCE being
     * code_language (what the prompt asks for), ALIAS other names of the
     * same language (rank as FENCE), RELATED languages accepted when no
     * block has FENCE or an ALIAS ("opencl cl ocl; c h"). */
    const char *code_fence_tags;
    /* Optional: the static (anti-hack) gate's analyser for this language.
     * Appends one line per violation ("line N: rule: explanation") to
     * findings (the caller's) and sets *violations (0: the source passes).
     * Returns negative only when the analyser itself cannot run (libclang
     * missing): an infra error, never the candidate's fault. NULL: no
     * static gate; the object checks and the sandbox still apply. */
    int (*source_gate)(const struct kevo_backend *be, const kevo_task *task, const char *source,
                       int *violations, struct kevo_buf *findings);
    /* Optional: the built-in generator's first draft, derived from the
     * task's C reference source. *out_source is the caller's (free());
     * *summary (borrowed, static; set whatever the outcome) says what was
     * done ("reference, ported"). A negative return says, in
     * kevo_error_last(), why there is no draft (*out_source stays NULL);
     * the caller records that as the attempt's failure. NULL: no draft, and
     * the backend lacks KEVO_BACKEND_CAP_BUILTIN_GENERATOR. */
    int (*draft)(const struct kevo_backend *be, const kevo_task *task, const char *reference,
                 char **out_source, const char **summary);
    /* The API notes seeded into a fresh memory (kevo_memory_seed_builtin),
     * in order; NULL/0 for none. Borrowed, static. */
    const kevo_backend_note *api_notes;
    size_t napi_notes;
} kevo_backend;

/* flags, in the manner of curl's SSLSUPP_*: generic code asks these bits,
 * never the backend's name. */
/* Runners get no address-space limit (RLIMIT_AS), because the device
 * driver reserves more virtual memory than any sensible limit (the CUDA
 * driver reserves terabytes); the other limits stay. */
#define KEVO_BACKEND_NO_AS_LIMIT (1u << 0)
/* The built-in generator supports the backend: it has a draft hook and
 * recipes registered for its candidates (kevo_recipe_desc.backend). */
#define KEVO_BACKEND_CAP_BUILTIN_GENERATOR (1u << 1)
/* Runners need a device runtime beside the host CPU (an OpenCL platform, a
 * CUDA driver and GPU) that a machine may lack; tests and tools that need
 * one skip, with a reason, where it is missing. */
#define KEVO_BACKEND_CAP_NEEDS_DEVICE (1u << 2)

/* Whether `be` has every bit of `caps` in its flags. NULL be: false. */
bool kevo_backend_has(const kevo_backend *be, unsigned caps);

/* Registry: the built-in backends by name (exact, case-sensitive); NULL
 * for an unknown or NULL name. Borrowed, static. */
const kevo_backend *kevo_backend_find(const char *name);
/* The i-th registered backend in registration order (c first), NULL past
 * the end: `for (size_t i = 0; (be = kevo_backend_at(i)); i++)`. Borrowed. */
const kevo_backend *kevo_backend_at(size_t i);
/* NULL-terminated list of registered backend names, in registration order.
 * Borrowed, static. */
const char *const *kevo_backend_names(void);
/* 0 when every name in the task's "backends" is a registered backend;
 * else KEVO_EINVAL naming task.json, the field and the registered names.
 * (The task module checks only that the names are names: it sits below
 * the backends.) */
int kevo_backend_check_task(const kevo_task *task);
/* The registered names for a message: "c", "opencl" or "cuda". */
void kevo_backend_names_text(struct kevo_buf *out);

/* Helpers shared by backends. */
/* Parse the optional first-line build hint `// kevo: cflags ...`.
 * Returns KEVO_EINVAL with the offending flag when a flag is not on the
 * allow-list. *out is a NULL-terminated array (free with kevo_strv_free). */
int kevo_cflags_parse(char ***out, const char *source);
bool kevo_cflag_allowed(const char *flag);
void kevo_strv_free(char **v);
/* Directory holding harness/runner.c and protocol.h: $KEVO_HARNESS_DIR, else
 * kevo_data_dir()'s harness/. Borrowed, never NULL: when there is no data
 * directory, a path that cannot exist and says so. */
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
int kevo_c_proto_header(char **proto, struct kevo_buf *out, const kevo_task *task);
/* The generated call stub of a task (C source calling the kernel). */
int kevo_backend_call_stub(char **out, const kevo_task *task);

#ifdef __cplusplus
}
#endif
#endif
