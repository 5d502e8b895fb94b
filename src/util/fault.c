/*
 * util/fault.c - the fault hooks behind kevo/fault.h: a countdown per kind
 * (allocation, process spawn), armed by tests, checked by the hooked
 * calls. Unarmed, a check is one relaxed atomic load.
 */
#include "kevo/fault.h"

#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* This file is the hook: its own calls must be libc's (alloc_hook.h was
 * forced in ahead of it). */
#undef malloc
#undef calloc
#undef realloc
#undef strdup
#undef strndup

static atomic_uint armed_mask;                      /* bit per kind */
static atomic_bool sticky[KEVO_FAULT_KIND_COUNT];   /* fail from the n-th on */
static atomic_long countdown[KEVO_FAULT_KIND_COUNT]; /* calls until the failing one */
static atomic_long calls[KEVO_FAULT_KIND_COUNT];
static atomic_long hits[KEVO_FAULT_KIND_COUNT];
static _Atomic(const void *) last_site;
static _Atomic(kevo_fault_hit_fn) hit_fn;
static _Atomic(void *) hit_arg;

static bool valid(kevo_fault_kind kind)
{
    return (unsigned)kind < KEVO_FAULT_KIND_COUNT;
}

static void arm(kevo_fault_kind kind, long n, bool stick)
{
    if (!valid(kind))
        return;
    /* disarm the kind while its counters are reset, then arm */
    atomic_fetch_and(&armed_mask, ~(1u << kind));
    atomic_store(&calls[kind], 0);
    for (int k = 0; k < KEVO_FAULT_KIND_COUNT; k++) /* kevo_fault_hits(): since this arm */
        atomic_store(&hits[k], 0);
    atomic_store(&last_site, NULL);
    atomic_store(&countdown[kind], n > 0 ? n : 0);
    atomic_store(&sticky[kind], n > 0 && stick);
    atomic_fetch_or(&armed_mask, 1u << kind);
}

void kevo_fault_arm(kevo_fault_kind kind, long n)
{
    arm(kind, n, false);
}

void kevo_fault_arm_sticky(kevo_fault_kind kind, long n)
{
    arm(kind, n, true);
}

void kevo_fault_disarm(void)
{
    atomic_store(&armed_mask, 0);
}

long kevo_fault_hits(void)
{
    long n = 0;
    for (int k = 0; k < KEVO_FAULT_KIND_COUNT; k++)
        n += atomic_load(&hits[k]);
    return n;
}

long kevo_fault_hits_of(kevo_fault_kind kind)
{
    return valid(kind) ? atomic_load(&hits[kind]) : 0;
}

long kevo_fault_calls(kevo_fault_kind kind)
{
    return valid(kind) ? atomic_load(&calls[kind]) : 0;
}

bool kevo_fault_armed(kevo_fault_kind kind)
{
    return valid(kind) && (atomic_load(&armed_mask) & (1u << kind));
}

void kevo_fault_set_hit_hook(kevo_fault_hit_fn fn, void *arg)
{
    if (fn) { /* the first backtrace() loads the unwinder (and allocates): now, not at a hit */
        void *warm[2];
        backtrace(warm, 2);
    }
    atomic_store(&hit_arg, arg);
    atomic_store(&hit_fn, fn);
}

const void *kevo_fault_last_site(void)
{
    return atomic_load(&last_site);
}

/* `caller`: where the failing call was made (for the hit hook). */
static bool should_fail_at(kevo_fault_kind kind, const void *caller)
{
    if (__builtin_expect(!(atomic_load_explicit(&armed_mask, memory_order_relaxed) &
                           (1u << (unsigned)kind)), 1))
        return false;
    if (!valid(kind))
        return false;
    atomic_fetch_add_explicit(&calls[kind], 1, memory_order_relaxed);
    /* the value before this call's decrement: 1 for the n-th call */
    long left = atomic_fetch_sub_explicit(&countdown[kind], 1, memory_order_relaxed);
    bool fail = left == 1 || (left < 1 && atomic_load_explicit(&sticky[kind],
                                                               memory_order_relaxed));
    if (!fail) {
        if (left < -(1L << 40)) /* counting only, for a very long time: no wrap */
            atomic_store_explicit(&countdown[kind], 0, memory_order_relaxed);
        return false;
    }
    atomic_fetch_add_explicit(&hits[kind], 1, memory_order_relaxed);
    atomic_store(&last_site, caller);
    kevo_fault_hit_fn fn = atomic_load(&hit_fn);
    if (fn) {
        void *stack[KEVO_FAULT_MAX_FRAMES + 4];
        int n = backtrace(stack, KEVO_FAULT_MAX_FRAMES + 4);
        int from = 0; /* from the caller on: drop this file's own frames */
        while (from < n && stack[from] != caller &&
               (const char *)stack[from] != (const char *)caller)
            from++;
        if (from == n) { /* caller not found (tail call): keep the stack as it is */
            stack[0] = (void *)caller;
            from = 0;
            n = n > 0 ? n : 1;
        }
        int count = n - from < KEVO_FAULT_MAX_FRAMES ? n - from : KEVO_FAULT_MAX_FRAMES;
        fn(kind, (const void *const *)(stack + from), count, atomic_load(&hit_arg));
    }
    return true;
}

__attribute__((noinline)) bool kevo_fault_should_fail(kevo_fault_kind kind)
{
    return should_fail_at(kind, __builtin_return_address(0));
}

/* The wrappers are not inlined (each is called from another file anyway),
 * so __builtin_return_address(0) is the allocating function. */
static inline bool alloc_fails(const void *caller)
{
    if (!should_fail_at(KEVO_FAULT_ALLOC, caller))
        return false;
    errno = ENOMEM;
    return true;
}

__attribute__((noinline)) void *kevo_fault_malloc(size_t size)
{
    return alloc_fails(__builtin_return_address(0)) ? NULL : malloc(size);
}

__attribute__((noinline)) void *kevo_fault_calloc(size_t n, size_t size)
{
    return alloc_fails(__builtin_return_address(0)) ? NULL : calloc(n, size);
}

__attribute__((noinline)) void *kevo_fault_realloc(void *p, size_t size)
{
    /* a failing realloc leaves p as it was, as libc's does */
    return alloc_fails(__builtin_return_address(0)) ? NULL : realloc(p, size);
}

__attribute__((noinline)) char *kevo_fault_strdup(const char *s)
{
    return alloc_fails(__builtin_return_address(0)) ? NULL : strdup(s);
}

__attribute__((noinline)) char *kevo_fault_strndup(const char *s, size_t n)
{
    return alloc_fails(__builtin_return_address(0)) ? NULL : strndup(s, n);
}
