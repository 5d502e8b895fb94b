/*
 * util/alloc_hook.h - forced into every kevocore source (CMakeLists.txt:
 * `-include src/util/alloc_hook.h`, kevocore only), so that kevocore's own
 * allocation calls go through the fault hook (kevo/fault.h).
 *
 * <stdlib.h> and <string.h> come first, before the macros exist: the
 * system's declarations of malloc() and strdup() stay as they are, and
 * their include guards keep them from being read again under the macros.
 * The macros are function-like, so `malloc` named without a call (a
 * function pointer handed to a library) is still libc's. `free` is never
 * hooked: what the hooked calls return is ordinary heap memory, and
 * SQLite's, cJSON's and libclang's allocations (compiled elsewhere) are
 * not counted and never fail on purpose.
 */
#ifndef KEVO_UTIL_ALLOC_HOOK_H
#define KEVO_UTIL_ALLOC_HOOK_H

#include <stdlib.h>
#include <string.h>

#include "kevo/fault.h"

#ifndef KEVO_NO_ALLOC_HOOK
#undef malloc
#undef calloc
#undef realloc
#undef strdup
#undef strndup
#define malloc(size) kevo_fault_malloc(size)
#define calloc(n, size) kevo_fault_calloc((n), (size))
#define realloc(p, size) kevo_fault_realloc((p), (size))
#define strdup(s) kevo_fault_strdup(s)
#define strndup(s, n) kevo_fault_strndup((s), (n))
#endif

#endif
