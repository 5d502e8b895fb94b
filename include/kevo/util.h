/*
 * kevo/util.h - growable buffers, file helpers, clocks and hashing used by
 * every module. Knows nothing about tasks, kernels or LLMs.
 */
#ifndef KEVO_UTIL_H
#define KEVO_UTIL_H

#include "kevo/common.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A growable, always NUL-terminated byte buffer. Zero-initialise it
 * (`kevo_buf b = {0};`), append, then kevo_buf_free(). `ptr` is NULL until
 * the first append; kevo_buf_cstr() never returns NULL.
 *
 * Failure is sticky (libgit2's git_str_oom): once an append fails (out of
 * memory, a size that overflows, a bad format), the buffer remembers the
 * error; every later append returns that error without writing, and
 * kevo_buf_detach() returns NULL. So a run of appends may be checked once,
 * at the end:
 *
 *     kevo_buf_puts(&b, "a"); kevo_buf_printf(&b, "%d", n); ...
 *     char *s = kevo_buf_detach(&b);
 *     if (!s) return KEVO_ENOMEM;   // kevo_error_last() says why
 *
 * What the buffer held before the failing append stays readable
 * (kevo_buf_cstr) but is incomplete. kevo_buf_clear() keeps the failure;
 * kevo_buf_free() and kevo_buf_detach() reset it. */
typedef struct kevo_buf {
    char *ptr;
    size_t len;
    size_t cap;
    int error; /* 0, or the negative KEVO_E* code of the first failed append */
} kevo_buf;

int kevo_buf_grow(kevo_buf *b, size_t extra);
int kevo_buf_put(kevo_buf *b, const void *data, size_t len);
int kevo_buf_puts(kevo_buf *b, const char *s);
int kevo_buf_printf(kevo_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kevo_buf_vprintf(kevo_buf *b, const char *fmt, va_list ap);
const char *kevo_buf_cstr(const kevo_buf *b);
/* Hand the buffer's memory to the caller (free() it); the buffer is reset.
 * NULL (with the message in kevo_error_last()) when an append had failed
 * (the content is freed) or when there is no memory for an empty string. */
char *kevo_buf_detach(kevo_buf *b);
/* Whether an append to b ran out of memory (b keeps failing until reset). */
bool kevo_buf_oom(const kevo_buf *b);
/* The sticky error of b: 0, or the KEVO_E* code of its first failed append. */
int kevo_buf_error(const kevo_buf *b);
void kevo_buf_clear(kevo_buf *b);
void kevo_buf_free(kevo_buf *b);

/* Read a whole file. *out is the caller's (free()); *out_len may be NULL.
 * KEVO_ENOTFOUND when missing, KEVO_EIO otherwise, message names the path. */
int kevo_file_read(char **out, size_t *out_len, const char *path);
/* Write a whole file atomically (temp file + rename). */
int kevo_file_write(const char *path, const void *data, size_t len);
bool kevo_file_exists(const char *path);
bool kevo_dir_exists(const char *path);
/* Join two path parts into a malloc'd string. */
char *kevo_path_join(const char *a, const char *b);
/* mkdir -p */
int kevo_mkdirs(const char *path, unsigned mode);
/* rm -rf of a directory kevo created (refuses "/" and empty paths). */
int kevo_rmtree(const char *path);
/* Make a fresh private temporary directory under $TMPDIR (or /tmp) whose
 * name starts with `prefix`. *out is the caller's (free()). */
int kevo_mkdtemp(char **out, const char *prefix);

/* kevo's cache folder for one kind of content (e.g. "reference"),
 * created private (0700) on first use; NULL when caching is off
 * (KEVO_CACHE=off) or the folder is not private to this user. Borrowed.
 * Base: $KEVO_CACHE_DIR, else $XDG_CACHE_HOME/kevo, else ~/.cache/kevo. */
const char *kevo_cache_dir(const char *name);

/* kevo's data directory, the folder holding harness/, prompts/ and suites/
 * (docs/install.md): $KEVO_DATA_DIR when set (NULL when that is not a
 * directory: never a quiet fallback), else <the executable's folder>/
 * ../share/kevo when it holds harness/protocol.h (an install), else the
 * source tree, only for an executable inside the build tree it was built
 * in, else the configured prefix's share/kevo when it holds data (programs
 * embedding libkevocore). NULL otherwise, kevo_error_last() saying where it looked and to set
 * KEVO_DATA_DIR. Borrowed, canonical, valid for the life of the process.
 * kevo_data_path: $env_name when set (env_name may be NULL), else
 * "<data dir>/<sub>"; NULL as kevo_data_dir. Borrowed likewise. */
const char *kevo_data_dir(void);
const char *kevo_data_path(const char *env_name, const char *sub);

/* Monotonic time in seconds / nanoseconds. */
double kevo_now_s(void);
int64_t kevo_now_ns(void);
/* Wall-clock Unix time in milliseconds (what the store records; leases
 * compare it across machines). */
int64_t kevo_unix_ms(void);
/* Wall-clock time as an ISO-8601 UTC string into buf (>= 21 bytes). */
void kevo_iso_time(char *buf, size_t len);

/* 64-bit FNV-1a hash (short keys). */
uint64_t kevo_hash64(const void *data, size_t len, uint64_t seed);
/* A 64-bit hash of large buffers at memory speed (checksums, not security). */
uint64_t kevo_hash64_words(const void *data, size_t len, uint64_t seed);

/* Deterministic PRNG (xoshiro256**), seeded through splitmix64. */
typedef struct kevo_rng {
    uint64_t s[4];
} kevo_rng;
void kevo_rng_seed(kevo_rng *r, uint64_t seed);
uint64_t kevo_rng_next(kevo_rng *r);
double kevo_rng_uniform(kevo_rng *r); /* [0, 1) */
double kevo_rng_normal(kevo_rng *r);  /* mean 0, std 1 */

/* Sort v[0..n) ascending (NaNs are not expected). */
void kevo_sort_doubles(double *v, size_t n);

/* strdup that returns NULL on NULL. */
char *kevo_strdup(const char *s);
/* The Python interpreter that imports torch, for PyTorch-defined tasks:
 * $KEVO_TORCH_PYTHON, else /var/cache/kevo/torch-venv/bin/python (made by
 * `scripts/setup.sh --with-torch`), else ~/.cache/kevo/torch-venv/bin/python.
 * *tree (optional): the folder two levels above it (the venv), which a
 * sandboxed runner must be able to read. KEVO_ENOTFOUND with the sentence
 * a user acts on when there is none. Both are the caller's (free()). */
int kevo_torch_python(char **python, char **tree);

/* Number of online CPUs (>= 1). */
int kevo_cpu_count(void);

/* The machine this process runs on, as attempts record it. id: 32 hex
 * digits, stable across reboots: a hash of /etc/machine-id together with
 * the CPU model (a cloned image on other hardware gets another id), or,
 * without a machine-id, of the hostname and CPU model. cpu: /proc/cpuinfo
 * "model name" (ARM: "Hardware", else "CPU implementer"/"CPU part");
 * "unknown" when none. gpu: the first NVIDIA GPU's model from
 * /proc/driver/nvidia/gpus/<bus>/information, "" when none is known (no
 * driver query is made). cores: logical CPUs online. Never fails for
 * want of those files (returns 0 with what it found). */
typedef struct kevo_machine {
    char id[33];
    char hostname[256];
    char cpu[256];
    char gpu[256];
    int cores;
} kevo_machine;
int kevo_machine_get(kevo_machine *out);
/* The same reading /etc and /proc under `root` (tests; NULL = "/"); the
 * hostname and cores are always this process's. */
int kevo_machine_get_from(kevo_machine *out, const char *root);

/* PostgreSQL connection strings (the memory's --db). A store locator is
 * PostgreSQL when it starts with "postgresql://", "postgres://" (libpq
 * URIs) or "pg:" (followed by a libpq key=value string); anything else is
 * a file path. */
bool kevo_conninfo_is_pg(const char *locator);
/* A copy of `locator` fit to print or store: a URI keeps its scheme,
 * user, host, port, database and parameters but loses the password (the
 * ":secret" of user:secret@ and any password= parameter); a key=value
 * string loses its password entry; a file path is copied unchanged. NULL
 * gives "". *out is the caller's (free()); KEVO_ENOMEM. */
int kevo_conninfo_redact(char **out, const char *locator);

#ifdef __cplusplus
}
#endif
#endif
