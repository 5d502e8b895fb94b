/*
 * kevo/fault.h - fault injection for tests: make the Nth allocation or the
 * Nth process spawn from now fail, the way SQLite's test_malloc.c and
 * curl's memdebug.c do, so that every error path can be walked in turn.
 *
 * Wiring (src/util/fault.c, docs in tests/unit/test_fault_paths.c):
 *   - allocations: every kevocore source is compiled with
 *     `-include src/util/alloc_hook.h`, which maps malloc, calloc, realloc,
 *     strdup and strndup to kevo_fault_malloc() and friends. `free` is not
 *     hooked (memory from the hooked calls is ordinary heap memory), and
 *     code outside kevocore (SQLite, cJSON, libclang, the tests) is not
 *     affected;
 *   - process spawns: the sandbox's fork/clone (src/sandbox/sandbox.c)
 *     asks kevo_fault_should_fail(KEVO_FAULT_SPAWN) first and, when told to,
 *     fails with errno EAGAIN as a real fork() would.
 *
 * Unarmed, each hooked call costs one relaxed atomic load. Counters are
 * atomics: several threads may allocate while armed (which of them meets
 * the Nth call is then up to the scheduler).
 *
 * Typical loop (one path, every allocation in turn):
 *
 *     for (long n = 1;; n++) {
 *         kevo_fault_arm(KEVO_FAULT_ALLOC, n);
 *         int rc = the_path();
 *         kevo_fault_disarm();
 *         check(rc);                      // 0, or < 0 with a message
 *         if (kevo_fault_hits() == 0)     // the path made fewer than n calls
 *             break;
 *     }
 */
#ifndef KEVO_FAULT_H
#define KEVO_FAULT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kevo_fault_kind {
    KEVO_FAULT_ALLOC = 0, /* malloc, calloc, realloc, strdup, strndup in kevocore */
    KEVO_FAULT_SPAWN = 1, /* the sandbox's process creation (fork/clone) */
    KEVO_FAULT_KIND_COUNT = 2
} kevo_fault_kind;

/* Make the n-th call of `kind` from now fail, once (n >= 1). n <= 0 arms
 * the counter only: calls are counted (kevo_fault_calls) and none fails.
 * Arming resets that kind's call counter and every kind's hit counter
 * (kevo_fault_hits: failures since the last arm); other kinds stay armed
 * or disarmed as they were. */
void kevo_fault_arm(kevo_fault_kind kind, long n);
/* The same, but the n-th call and every later one fail (until disarmed):
 * a process that has run out of memory and stays out. */
void kevo_fault_arm_sticky(kevo_fault_kind kind, long n);
/* Stop failing and counting, every kind. The counters keep their values
 * until the next arm, so a test may read them after disarming. */
void kevo_fault_disarm(void);
/* Failures injected since the last arm (all kinds together). */
long kevo_fault_hits(void);
/* Failures injected of one kind since the last arm / calls of one kind
 * counted since that kind was armed. */
long kevo_fault_hits_of(kevo_fault_kind kind);
long kevo_fault_calls(kevo_fault_kind kind);
/* Whether the hook is armed for `kind` at all. */
bool kevo_fault_armed(kevo_fault_kind kind);

/* Called (on the failing call's thread) each time a failure is injected,
 * with the call stack at the failing call: frames[0] is the return
 * address into the function whose allocation or spawn fails (a kevo_buf
 * function, often: the frames after it say whose buffer), so that a test
 * can name the site (addr2line). NULL: none. Set it before arming; it must
 * not allocate through kevocore. */
#define KEVO_FAULT_MAX_FRAMES 16
typedef void (*kevo_fault_hit_fn)(kevo_fault_kind kind, const void *const *frames, int nframes,
                                  void *arg);
void kevo_fault_set_hit_hook(kevo_fault_hit_fn fn, void *arg);
/* The caller of the last injected failure (NULL when none since arming). */
const void *kevo_fault_last_site(void);

/* The hook itself: true when this call of `kind` must fail (counts it). */
bool kevo_fault_should_fail(kevo_fault_kind kind);

/* What kevocore's allocation calls become (src/util/alloc_hook.h). They
 * fail with NULL and errno ENOMEM when the hook says so, and are the libc
 * functions otherwise. */
void *kevo_fault_malloc(size_t size);
void *kevo_fault_calloc(size_t n, size_t size);
void *kevo_fault_realloc(void *p, size_t size);
char *kevo_fault_strdup(const char *s);
char *kevo_fault_strndup(const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
