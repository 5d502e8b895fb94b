/*
 * memory/seed.c - the built-in knowledge a fresh memory starts from: API
 * notes per backend (the items tagged "bundle" are shown with every
 * context of that backend; the others are found by exact name when their
 * identifier appears in retrieved code) and best practices matched to
 * bottlenecks. Each has a fixed uid, so seeding twice adds nothing.
 */
#include "memory/internal.h"

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

static const seed seeds[] = {
    /* ---- c: bundle ---- */
    {KEVO_ITEM_API_DOC, "c", NULL, "bundle", "kevo c candidate",
     "One C file defining the kernel with the task's exact prototype (const T * for inputs, T * "
     "for outputs, scalars by value). It may use OpenMP and <immintrin.h>; no other headers that "
     "do the work, no files, processes or sockets. Optional first line: // kevo: cflags -O3 "
     "-march=native -fopenmp (allow-listed flags only)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "bundle", "#pragma omp parallel for",
     "#pragma omp parallel for [schedule(static)] [reduction(+:acc)] before a for loop splits "
     "its iterations across all cores (needs -fopenmp). Parallelise the outermost loop with "
     "enough work; for small N the thread start-up (~5-20 us) costs more than it saves."},
    {KEVO_ITEM_API_DOC, "c", NULL, "bundle", "#pragma omp simd",
     "#pragma omp simd [reduction(+:acc)] asks the compiler to vectorise the next loop; combine "
     "as `#pragma omp parallel for simd`. Works with -fopenmp or -fopenmp-simd."},
    {KEVO_ITEM_API_DOC, "c", NULL, "bundle", "restrict",
     "`float *restrict y` promises the compiler that y does not alias other pointers, which "
     "lets it vectorise loops it otherwise would not."},
    /* ---- c: exact-name lookups ---- */
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_loadu_ps",
     "__m512 _mm512_loadu_ps(void const *p): load 16 floats from p (no alignment needed)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_storeu_ps",
     "void _mm512_storeu_ps(void *p, __m512 a): store 16 floats to p (no alignment needed)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_fmadd_ps",
     "__m512 _mm512_fmadd_ps(__m512 a, __m512 b, __m512 c): a*b+c in one rounding; 2 per cycle "
     "on cores with two FMA units. Use several independent accumulators to hide its 4-cycle "
     "latency."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_max_ps",
     "__m512 _mm512_max_ps(__m512 a, __m512 b): lane-wise maximum (ReLU: max with "
     "_mm512_setzero_ps())."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_set1_ps",
     "__m512 _mm512_set1_ps(float a): broadcast a to all 16 lanes."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_setzero_ps",
     "__m512 _mm512_setzero_ps(void): all lanes 0.0f."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_reduce_add_ps",
     "float _mm512_reduce_add_ps(__m512 a): horizontal sum of 16 lanes (a sequence, not one "
     "instruction: keep it out of inner loops)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_reduce_max_ps",
     "float _mm512_reduce_max_ps(__m512 a): horizontal maximum of 16 lanes."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_mask_loadu_ps",
     "__m512 _mm512_mask_loadu_ps(__m512 src, __mmask16 k, void const *p): load the lanes set "
     "in k, keep src elsewhere; handles loop tails without reading past the end. Build k as "
     "(__mmask16)((1u << rem) - 1)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx512", "_mm512_mask_storeu_ps",
     "void _mm512_mask_storeu_ps(void *p, __mmask16 k, __m512 a): store only the lanes set in k "
     "(loop tails)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "avx2", "_mm256_fmadd_ps",
     "__m256 _mm256_fmadd_ps(__m256 a, __m256 b, __m256 c): a*b+c on 8 floats (AVX2+FMA)."},
    {KEVO_ITEM_API_DOC, "c", NULL, "prefetch", "__builtin_prefetch",
     "__builtin_prefetch(const void *p, int rw, int locality): hint to fetch p into cache; "
     "rarely helps streaming loops (the hardware prefetcher already does), can help gathers."},
    {KEVO_ITEM_API_DOC, "c", NULL, "alignment", "__builtin_assume_aligned",
     "p = __builtin_assume_aligned(p, 64): promise 64-byte alignment so the compiler may use "
     "aligned vector loads. Only when it is true."},
    {KEVO_ITEM_API_DOC, "c", "activation", "math", "expf",
     "float expf(float): the libm exponential. Vectorised only with -ffast-math style flags or "
     "a hand-written polynomial; with tolerance 1e-2 a 5th-order polynomial on a range-reduced "
     "argument is accurate enough."},
    {KEVO_ITEM_API_DOC, "c", "reduction", "openmp", "omp reduction",
     "#pragma omp parallel for reduction(+:sum) gives each thread a private sum and adds them "
     "at the end; for max use reduction(max:m). Floating-point results change order: fine "
     "within tolerance."},
    /* ---- opencl ---- */
    /* ---- opencl: bundle (docs/backends/opencl-api.md in brief) ---- */
    {KEVO_ITEM_API_DOC, "opencl", NULL, "bundle", "kevo opencl candidate",
     "One OpenCL C 1.2 file, kernels only, no #include. Its first lines say what the host "
     "launches, in order: `// kevo: launch KERNEL global=ROUND_UP(N,256) local=256` (1-3 "
     "dimensions; sizes are integer expressions of the task's integer params with ROUND_UP, "
     "CEIL_DIV, MIN, MAX), optional `// kevo: scratch NAME f32 COUNT` device buffers and "
     "`// kevo: options -cl-fast-relaxed-math` (allow-listed). Every launched kernel takes the "
     "task's params in order (buffers as __global T *, i64 as long), then the scratch buffers. "
     "Launches run one after another; only the launches are timed."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "bundle", "OpenCL execution model",
     "global work-items in work-groups of local; each global size must be a multiple of its "
     "local size, so round up and guard `if (i < N)`. Work-items of a group share __local "
     "memory and meet at barrier(); groups cannot synchronise within a launch (use a second "
     "launch). get_global_id/get_local_id/get_group_id(d) return size_t; dimension 0 should "
     "index neighbouring addresses."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "bundle", "OpenCL address spaces",
     "__global: buffers; __local: per work-group, declared at kernel scope with constant size "
     "(`__local float t[16][17];`); __constant: read-only; __private: the default for locals. "
     "A pointer variable into a buffer must say __global (`__global const float *row = x + "
     "r * C;`); pointers to different address spaces do not convert."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "bundle", "OpenCL types and maths",
     "long is 64-bit (kevo's i64), int 32; double needs `#pragma OPENCL EXTENSION cl_khr_fp64 : "
     "enable`. Maths functions are overloaded generics: exp, log, sqrt, fabs, fmax, tanh, erf "
     "(not expf, fabsf). Vectors float2/4/8/16 with vloadN/vstoreN; no malloc, printf, "
     "recursion or C library."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "bundle", "barrier",
     "barrier(CLK_LOCAL_MEM_FENCE): every work-item of the group waits here; required between "
     "writing and reading __local memory. Never inside control flow that differs between "
     "work-items of a group."},
    /* ---- opencl: exact-name lookups ---- */
    {KEVO_ITEM_API_DOC, "opencl", NULL, "workitem", "get_global_id",
     "size_t get_global_id(uint dim): this work-item's index in the NDRange; guard with "
     "`if (i < n)` when the global size is rounded up."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "workitem", "get_local_id",
     "size_t get_local_id(uint dim): index within the work-group, 0 .. local size - 1."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "workitem", "get_group_id",
     "size_t get_group_id(uint dim): the work-group's index; with `global=R*128 local=128` one "
     "group per row r = get_group_id(0)."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "vector", "vload4",
     "float4 vload4(size_t offset, const __global float *p): load p[4*offset .. 4*offset+3]; "
     "vstore4(v, offset, p) writes back. Wider loads cut instruction count on memory-bound "
     "kernels."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "math", "native_exp",
     "float native_exp(float x): fast, lower-precision exp (also native_log, native_sqrt, "
     "native_recip, native_divide); check the task's tolerance."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "math", "mad",
     "mad(a, b, c): a*b+c, possibly less precise and faster; fma(a, b, c) is exact."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "memory", "async_work_group_copy",
     "event_t async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t e): "
     "the whole group copies n elements; then wait_group_events(1, &ev) before reading dst."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "atomic", "atomic_add",
     "int atomic_add(volatile __global int *p, int v) (also __local, uint; atomic_min/max/xchg/"
     "cmpxchg). No float atomic add in OpenCL 1.2: reduce in __local memory, or loop on "
     "atomic_cmpxchg with as_uint/as_float."},
    {KEVO_ITEM_API_DOC, "opencl", NULL, "attribute", "reqd_work_group_size",
     "__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void k(...): the launch must use "
     "exactly local=16,16; lets the compiler size __local arrays and unroll."},
    /* ---- cuda ---- */
    {KEVO_ITEM_API_DOC, "cuda", NULL, "bundle", "kevo cuda candidate",
     "A .cu file with a __global__ kernel and the task's host entry point launching it; "
     "threadIdx/blockIdx/blockDim index the data; check bounds when the grid is rounded up."},
    {KEVO_ITEM_API_DOC, "cuda", NULL, "bundle", "__syncthreads",
     "__syncthreads(): block-wide barrier; needed between writing and reading __shared__ "
     "memory; never under divergent control flow."},
    {KEVO_ITEM_API_DOC, "cuda", NULL, "warp", "__shfl_down_sync",
     "T __shfl_down_sync(unsigned mask, T v, unsigned delta): read v from lane+delta; a warp "
     "sum is 5 steps of v += __shfl_down_sync(0xffffffff, v, off) for off = 16..1."},
    {KEVO_ITEM_API_DOC, "cuda", NULL, "memory", "__ldg",
     "T __ldg(const T *p): load through the read-only cache; helps reused, read-only inputs."},
    {KEVO_ITEM_API_DOC, "cuda", NULL, "atomic", "atomicAdd",
     "T atomicAdd(T *addr, T v): atomic add; fine for one update per block, slow when every "
     "thread hits the same address."},
    /* ---- best practices (any backend unless stated) ---- */
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

int kevo_memory_seed_builtin(kevo_memory *mem)
{
    kevo_store *s = mem->store;
    int error = s->tx_begin(s);
    if (error < 0)
        return error;
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]) && error == 0; i++) {
        const seed *sd = &seeds[i];
        char uid[160];
        int64_t id = 0;
        snprintf(uid, sizeof(uid), "builtin:%s:%s:%s", kevo_item_kind_name(sd->kind),
                 sd->backend ? sd->backend : "any", sd->title);
        error = s->find_uid(s, KEVO_STORE_ITEMS, uid, &id);
        if (error == 0)
            continue;
        if (error != KEVO_ENOTFOUND)
            break;
        kevo_item it = {.kind = sd->kind,
                        .title = sd->title,
                        .body = sd->body,
                        .category = sd->category,
                        .backend = sd->backend,
                        .tags = sd->tags,
                        .created = kevo_memory_now_ms(),
                        .uid = uid};
        error = s->item_insert(s, &it, NULL);
    }
    return kevo_memory_tx_end(mem, error);
}
