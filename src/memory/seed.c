/*
 * memory/seed.c - the built-in knowledge a fresh memory starts from: the
 * API notes of every registered backend (kevo_backend.api_notes, kept in
 * the backend's own file; the items tagged "bundle" are shown with every
 * context of that backend, the others are found by exact name when their
 * identifier appears in retrieved code) and best practices matched to
 * bottlenecks. Each has a fixed uid, so seeding twice adds nothing. It
 * knows no backend by name.
 */
#include "internal.h"

#include "kevo/sys/backend.h"

#include <stdio.h>
#include <string.h>

typedef struct seed {
    kevo_item_kind kind;
    const char *backend;
    const char *category;
    const char *tags;
    const char *title;
    const char *body;
} seed;

/* Best practices matched to bottlenecks (any backend unless stated). The
 * API notes are the backends' own (kevo_backend.api_notes). */
static const seed practices[] = {
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "memory bandwidth bound streaming elementwise",
     "Memory-bound kernels",
     "When the roofline says memory-bound (low flops per byte): touch each byte once (fuse "
     "passes, no temporaries), use wide vector loads/stores, split the array across all cores, "
     "and stop optimising arithmetic: it is already free."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "compute bound fma latency throughput",
     "Compute-bound kernels",
     "When compute-bound: vectorise the innermost loop, use FMA, and keep 4-8 independent "
     "accumulators so the FMA latency is hidden; unroll by the vector width times the "
     "accumulator count."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, "reduction", "reduction sum max latency dependency",
     "Reductions",
     "A single running sum is a serial dependency chain: use several partial sums (vector "
     "lanes x accumulators), combine them at the end, and parallelise across threads with a "
     "reduction clause or per-thread partials."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, "matmul", "matmul cache blocking tiling register",
     "Matrix multiplication",
     "Block for cache (tiles of B that fit L2, panels of A in L1), keep a register tile of C "
     "(e.g. 6x32 floats with AVX-512) in the micro-kernel, pack B contiguously, and parallelise "
     "over blocks of rows of C."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "overhead small size threads launch", "Small problems",
     "For small sizes thread start-up or kernel launch dominates: use a size threshold (e.g. "
     "`#pragma omp parallel for if(n > 1 << 16)`) and keep the scalar path simple."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "numerics accuracy tolerance mismatch nan overflow",
     "Numerical accuracy",
     "Mismatches after an optimisation usually come from reordered sums (accumulate in double "
     "or use pairwise sums), exp overflow (subtract the row max first), or uninitialised tails "
     "(handle n % width). Check the indices of the worst mismatch in the feedback."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "branch divergence select mask",
     "Branches in inner loops",
     "Replace data-dependent branches in inner loops with selects (fmaxf, ?:, masks) so the "
     "loop vectorises; on GPUs this also avoids warp divergence."},
    {KEVO_ITEM_BEST_PRACTICE, NULL, NULL, "cache locality stride transpose access pattern",
     "Access patterns",
     "Walk memory contiguously in the innermost loop; transpose or tile when a stride is "
     "large; on GPUs make consecutive threads read consecutive addresses (coalescing)."},
};

/* Insert one item under its fixed uid unless it is there already. */
static int seed_one(kevo_store *s, const seed *sd)
{
    char uid[160];
    int64_t id = 0;
    snprintf(uid, sizeof(uid), "builtin:%s:%s:%s", kevo_item_kind_name(sd->kind),
             sd->backend ? sd->backend : "any", sd->title);
    int error = s->find_uid(s, KEVO_STORE_ITEMS, uid, &id);
    if (error != KEVO_ENOTFOUND)
        return error; /* 0: seeded before */
    kevo_item it = {.kind = sd->kind,
                    .title = sd->title,
                    .body = sd->body,
                    .category = sd->category,
                    .backend = sd->backend,
                    .tags = sd->tags,
                    .created = kevo_memory_now_ms(),
                    .uid = uid};
    return s->item_insert(s, &it, NULL);
}

/* Every registered backend's API notes, in registration order. */
static int seed_backend_notes(kevo_store *s)
{
    int error = 0;
    const kevo_backend *be;
    for (size_t b = 0; error == 0 && (be = kevo_backend_at(b)) != NULL; b++) {
        if (be->version < 2)
            continue;
        for (size_t i = 0; error == 0 && i < be->napi_notes; i++) {
            const kevo_backend_note *n = &be->api_notes[i];
            seed sd = {KEVO_ITEM_API_DOC, be->name, n->category, n->tags, n->title, n->body};
            error = seed_one(s, &sd);
        }
    }
    return error;
}

int kevo_memory_seed_builtin(kevo_memory *mem)
{
    kevo_store *s = mem->store;
    int error = s->tx_begin(s);
    if (error < 0)
        return error;
    error = seed_backend_notes(s);
    for (size_t i = 0; i < sizeof(practices) / sizeof(practices[0]) && error == 0; i++)
        error = seed_one(s, &practices[i]);
    return kevo_memory_tx_end(mem, error);
}
