/*
 * backend/toolchain.h - what the backends share to run their toolchains
 * (gcc, objcopy, nvcc, the OpenCL build helper): a limited, scrubbed
 * sandbox run in the build directory and compiler output trimmed for an
 * LLM. Internal to src/backend.
 */
#ifndef KEVO_BACKEND_TOOLCHAIN_H
#define KEVO_BACKEND_TOOLCHAIN_H

#include <stdbool.h>

/* Limits of every toolchain command. */
#define KEVO_TOOL_TIMEOUT_S 120.0
#define KEVO_TOOL_MEM (4ULL << 30)
#define KEVO_DIAG_CAP 4000

/* Run argv in dir (not `untrusted`: a compiler, with time, CPU and memory
 * limits and a scrubbed environment plus `env`, "K=V" strings, may be
 * NULL). *ok is false when it failed; then *diag (the caller's) holds its
 * trimmed output. Returns negative only when it could not be started. */
int kevo_tool_run(bool *ok, char **diag, const char *dir, const char *const argv[],
                  const char *const *env);
/* Like kevo_tool_run, but *output (the caller's) receives the raw output
 * whatever the status (after a line saying how it ended when it was
 * killed), and *status how it ended. */
struct kevo_proc_status;
int kevo_tool_run_output(struct kevo_proc_status *status, char **output, const char *dir,
                         const char *const argv[], const char *const *env, double timeout_s);
/* Keep the most useful compiler output first: error lines (with the two
 * lines after each), then the rest, with `dir/` removed from paths, cut at
 * KEVO_DIAG_CAP characters. The result is the caller's. */
char *kevo_tool_trim(const char *raw, const char *dir);
/* Write text to dir/name. */
int kevo_tool_write(const char *dir, const char *name, const char *text);

#endif
