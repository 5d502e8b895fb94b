/*
 * kevo/common.h - error codes and the thread-local error message shared by
 * every kevo module.
 *
 * Convention: functions return int, 0 on success and a negative KEVO_E*
 * code on failure; the human-readable message (naming file, field and
 * problem where there is one) is in kevo_error_last(). A candidate kernel
 * that fails to compile or is wrong is NOT an error: it is a verdict in a
 * result struct (see kevo/verify.h).
 */
#ifndef KEVO_COMMON_H
#define KEVO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KEVO_OK = 0,
    KEVO_ERROR = -1,     /* generic failure; see kevo_error_last() */
    KEVO_ENOTFOUND = -3, /* a file, task, record or name does not exist */
    KEVO_EINVAL = -4,    /* bad input: malformed file, bad field, bad flag */
    KEVO_ETIMEOUT = -5,  /* a wall-clock limit passed */
    KEVO_ENOMEM = -6,    /* allocation failed */
    KEVO_EIO = -7,       /* I/O or system call failure */
    KEVO_EINFRA = -8,    /* kevo's own environment is broken (toolchain missing...) */
    KEVO_EINTR = -9,     /* the user asked to stop (SIGINT/SIGTERM) */
    KEVO_EEXISTS = -10   /* the record already exists (a key given twice) */
};

/* The last error message of this thread. Borrowed; valid until the next
 * kevo call on this thread. Never NULL (empty string when none). */
const char *kevo_error_last(void);

/* Set the thread's error message (printf-style) and return `code`, so that
 * callers can write `return kevo_error_set(KEVO_EINVAL, "...")`. */
int kevo_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear the thread's error message. */
void kevo_error_clear(void);

/* Short name of an error code ("EINVAL", ...). Static storage. */
const char *kevo_error_name(int code);

#ifdef __cplusplus
}
#endif
#endif
