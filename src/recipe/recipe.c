/*
 * recipe/recipe.c - the recipe registry and the public entry points:
 * parameter resolution and validation, check, apply, chains, default and
 * mutated parameters. Each recipe's rewrite lives in recipe_*.c; this file
 * parses a source once (a kevo_recipe_input keeps the model for every
 * recipe run on that source), runs the recipe, applies its edits inside
 * the kernel, updates the cflags line and, when the result is handed out,
 * re-parses it as a guard against recipe bugs.
 *
 * Must not: run a compiler or judge a candidate.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHOICES(...) {__VA_ARGS__}, sizeof((long[]){__VA_ARGS__}) / sizeof(long)

static const kevo_recipe_param_desc flags_params[] = {
    {"set",
     "flag set: 0 '-O3 -march=native', 1 '-funroll-loops', 2 '-ffast-math', 3 "
     "'-fno-math-errno', 4 '-ffp-contract=fast', 5 '-mprefer-vector-width=512', 6 '-O3 "
     "-march=native -ffast-math -funroll-loops', 7 '-mtune=native'",
     0, 0, 7, CHOICES(0, 1, 2, 3, 4, 5, 6, 7)},
};
static const kevo_recipe_param_desc omp_parallel_params[] = {
    {"collapse", "loops of the perfect nest to collapse (clamped to what is valid)", 2, 1, 8,
     CHOICES(1, 2, 3)},
    {"all_nests", "0: the first top-level nest only, 1: every top-level nest", 0, 0, 1,
     CHOICES(0, 1)},
};
static const kevo_recipe_param_desc interchange_params[] = {
    {"loop",
     "outer loop of the pair, numbered from 0 in source order; -1: the parent of the first "
     "innermost loop",
     -1, -1, 1000, CHOICES(-1)},
};
static const kevo_recipe_param_desc tile_params[] = {
    {"loop", "root of the nest, numbered from 0 in source order; -1: the first nest that qualifies",
     -1, -1, 1000, CHOICES(-1)},
    {"depth", "how many loops of the perfect nest to tile (clamped to the nest)", 2, 2, 3,
     CHOICES(2, 3)},
    {"size0", "tile size of the outermost tiled loop", 32, 2, 4096, CHOICES(8, 16, 32, 64, 128)},
    {"size1", "tile size of the second tiled loop", 32, 2, 4096, CHOICES(8, 16, 32, 64, 128)},
    {"size2", "tile size of the third tiled loop", 32, 2, 4096, CHOICES(8, 16, 32, 64, 128)},
};
static const kevo_recipe_param_desc unroll_params[] = {
    {"factor", "unroll factor; 1 keeps the loop rolled, also under -funroll-loops", 4, 1, 64,
     CHOICES(2, 4, 8, 16)},
    {"loop", "the innermost loop to mark, numbered from 0 in source order; -1: every one", -1, -1,
     1000, CHOICES(-1)},
};
static const kevo_recipe_param_desc unroll_jam_params[] = {
    {"loop",
     "the loop to unroll and jam, numbered from 0 in source order; -1: the first loop that "
     "qualifies and has an inner loop or more than one statement",
     -1, -1, 1000, CHOICES(-1)},
    {"factor", "copies of the body per iteration of the unrolled loop", 4, 2, 16,
     CHOICES(2, 4, 8, 16)},
    {"tail",
     "1: the iterations a whole block leaves run as one more jammed block over the last "
     "`factor`, where the body only stores what it does not read (else, and with 0, the "
     "loop as written)",
     0, 0, 1, CHOICES(0, 1)},
};
static const kevo_recipe_param_desc fuse_params[] = {
    {"pair", "the first loop of the pair to fuse, numbered from 0 in source order; -1: the "
             "first pair that qualifies",
     -1, -1, 1000, CHOICES(-1)},
};
static const kevo_recipe_param_desc vectorize_params[] = {
    {"loop",
     "the loop to vectorise, numbered from 0 in source order; -1: the first loop that qualifies "
     "and holds other loops (the register-blocking case), else the deepest",
     -1, -1, 1000, CHOICES(-1)},
    {"width",
     "floats per vector: 0 the machine's widest (__BIGGEST_ALIGNMENT__ under -march=native: 16 "
     "with AVX-512, 8 with AVX2, 4 with SSE or NEON), or 4, 8, 16",
     0, 0, 16, CHOICES(0, 4, 8, 16)},
};
static const kevo_recipe_param_desc register_block_params[] = {
    {"rows", "copies of the loop around the vectorised one (accumulators per lane)", 6, 1, 8,
     CHOICES(2, 4, 6, 8)},
    {"width", "floats per vector: 0 the machine's widest, or 4, 8, 16", 0, 0, 16,
     CHOICES(0, 4, 8, 16)},
    {"pack",
     "1: one copy: the operand read strided in the column loop transposed first (`pack` "
     "layout 1: x W^T, A B^T) where that applies, else the vector loads put in panels "
     "(`pack` layout 0, skipped where it does not apply); 2: the transposed copy, then "
     "panels of it (two copies), declining where layout 1 does not apply; 3: panels only, "
     "never transposed (a dot-product form keeps its reduction in lanes); 0: registers only",
     1, 0, 3, CHOICES(1, 2, 3)},
    {"cols",
     "vectors per row: the blocked vector loop unrolled and jammed by `cols` (rows x cols "
     "accumulators, the reduction loop kept rolled), skipped where that does not apply",
     2, 1, 4, CHOICES(1, 2)},
    {"tail",
     "1: the rows a whole block of `rows` leaves run as one more block over the last `rows` "
     "(unroll_jam's `tail`), where the body only stores what it does not read; 0: one row "
     "at a time",
     1, 0, 1, CHOICES(0, 1)},
};
static const kevo_recipe_param_desc pack_params[] = {
    {"layout",
     "-1: panels of a vector load, else a read strided in j transposed; 0: panels only; 1: "
     "transposed only",
     -1, -1, 1, CHOICES(-1)},
};
static const kevo_recipe_param_desc kblock_params[] = {
    {"kc",
     "values of the reduction variable per pass (the packed operand's rows one pass "
     "reads: kc x N floats, to stay in L2)",
     256, 1, 4096, CHOICES(128, 256, 512)},
};
static const kevo_recipe_param_desc permute_params[] = {
    {"loop",
     "the loop to run innermost, numbered from 0 in source order; -1: the loop of the last "
     "term of the accumulated index that runs more than a few iterations, the deepest of "
     "several; -2: the outermost loop of that kind among those the unscaled last terms name "
     "(`iw` in a scatter's `... * OW + iw + kw` whose kernel width is given at run time, where "
     "-1 takes the tap `kw`), else as -1",
     -2, -2, 1000, CHOICES(-2, -1)},
    {"scatter",
     "1: with it, the other positions of a scatter (the loops sharing an index term with a "
     "kernel tap, as ih in oh = ih + kh) go below the taps too, in the index's order; 0: the "
     "innermost loop alone",
     1, 0, 1, CHOICES(0, 1)},
    {"outer",
     "1: the loops that select the accumulated element (its address tells their iterations "
     "apart, not only through a division) and are not kernel taps run outermost, above the "
     "loops that only add into it (a convolution's input channels), so that omp_parallel can "
     "run them in threads; 0: the other loops keep their order",
     1, 0, 1, CHOICES(0, 1)},
    {"threads",
     "1: the permuted kernel goes through omp_parallel (every nest, collapse 2) in the same "
     "step, where that applies; 0: permuted only",
     1, 0, 1, CHOICES(0, 1)},
    {"reduce",
     "0: the loop along the accumulated element innermost; 1: the loops that only add into "
     "the element (a convolution's input channels) run innermost, under the loop along it, "
     "summing into a scalar added once, the guards on the element's positions as their "
     "bounds; 2: that, then acc_row (the sums of a row of the element's positions kept in a "
     "row, the input channels outside it: for strided outputs); 4, 8, 16: that, then "
     "register_block (rows 4, that vector width) in the same step",
     0, 0, 16, CHOICES(0, 2, 8, 16)},
};
static const kevo_recipe_param_desc stream_params[] = {
    {"loop", "the innermost loop to stream, numbered from 0 in source order; -1: every one that "
             "qualifies", -1, -1, 1000, CHOICES(-1)},
    {"threads",
     "1: a streamed loop outside any other loop runs its lines in OpenMP threads (and "
     "-fopenmp); 0: as the loop ran",
     1, 0, 1, CHOICES(0, 1)},
};
static const kevo_recipe_param_desc scan_params[] = {
    {"loop", "the innermost loop to scan, numbered from 0 in source order; -1: every one that "
             "qualifies", -1, -1, 1000, CHOICES(-1)},
};
static const kevo_recipe_param_desc acc_row_params[] = {
    {"loop", "the loop along the row, numbered from 0 in source order; -1: every one that "
             "qualifies (the innermost first)", -1, -1, 1000, CHOICES(-1)},
    {"chunk", "iterations per row of accumulators (floats on the stack)", 256, 16, 1024,
     CHOICES(64, 256, 1024)},
    {"nest", "1: the row goes inside the inner loop's perfect nest, below every loop of it "
             "whose header does not change along the row (a convolution's taps outside it, the "
             "row innermost); 0: inside the inner loop only",
     1, 0, 1, CHOICES(0, 1)},
};
static const kevo_recipe_param_desc split_params[] = {
    {"loop", "the loop to split, numbered from 0 in source order; -1: every outermost one that "
             "qualifies", -1, -1, 1000, CHOICES(-1)},
    {"then",
     "what follows in the same step, each where it applies: 0 nothing, 1 omp_parallel "
     "(collapse 2, every nest), 2 register_block (its defaults) then omp_parallel",
     2, 0, 2, CHOICES(0, 1, 2)},
};
static const kevo_recipe_param_desc ocl_ndrange_params[] = {
    {"dims", "work-item dimensions per nest: 1 (outer loop) or 2 (outer perfect pair)", 1, 1, 2,
     CHOICES(1, 2)},
};
static const kevo_recipe_param_desc ocl_work_group_params[] = {
    {"size0", "work-group size in dimension 0", 128, 1, 1024, CHOICES(16, 32, 64, 128, 256)},
    {"size1", "work-group size in dimension 1 (2-D launches)", 4, 1, 64, CHOICES(1, 2, 4, 8, 16)},
};
static const kevo_recipe_param_desc ocl_local_tile_params[] = {
    {"tile", "tile edge T: TxT work-groups, TxT tiles of each operand in local memory", 16, 2, 32,
     CHOICES(4, 8, 16, 32)},
};
static const kevo_recipe_param_desc ocl_coarsen_params[] = {
    {"items", "indices per work-item", 4, 2, 64, CHOICES(2, 4, 8, 16)},
    {"strided", "0: consecutive indices, 1: indices a grid apart (coalesced on GPUs)", 0, 0, 1,
     CHOICES(0, 1)},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const kevo_recipe_desc descs[] = {
    {"flags", "add allow-listed build flags to the `// kevo: cflags` line",
     "the flags are not all on the cflags line already", flags_params, N_OF(flags_params), "c"},
    {"restrict", "qualify the kernel's pointer parameters with restrict",
     "some pointer parameter, declared as `T *name`, is not restrict yet", NULL, 0, "c"},
    {"omp_parallel",
     "#pragma omp parallel for [collapse(n)] [private(...)] [reduction(...)] on the outermost "
     "loop of the first (or every) top-level nest, and -fopenmp",
     "the nest's outer loop is `for (T i = a; i < b; i++)`, scalars written in it are "
     "reductions or private, and every store is indexed by the parallel loop variables",
     omp_parallel_params, N_OF(omp_parallel_params), "c"},
    {"omp_simd", "#pragma omp simd [reduction(op:acc)] on innermost loops, and -fopenmp-simd",
     "some innermost loop is in OpenMP canonical form, its scalars are reductions or private, "
     "its stores are indexed by its variable, and it carries no other pragma",
     NULL, 0, "c"},
    {"interchange", "swap a loop with the loop that is its whole body",
     "the two loops are perfectly nested, canonical, carry no pragma, and neither header uses "
     "the other's variable",
     interchange_params, N_OF(interchange_params), "c"},
    {"tile",
     "tile a perfect nest of 2-3 loops: tile loops stepping by the sizes, point loops bounded "
     "by min(tile end, bound)",
     "a perfect nest of at least 2 loops `for (T i = a; i < b; i++)` with rectangular, "
     "loop-invariant bounds and no pragmas",
     tile_params, N_OF(tile_params), "c"},
    {"unroll", "#pragma GCC unroll F on innermost loops",
     "some innermost loop carries no OpenMP pragma and is not already unrolled by F", unroll_params,
     N_OF(unroll_params), "c"},
    {"unroll_jam",
     "register blocking: unroll a loop by F and jam the copies into its inner loops, each copy's "
     "scalars renamed (F accumulators in registers), with a remainder loop",
     "a simple loop whose iterations are independent (stores indexed by its variable, scalars "
     "private or reductions) and whose inner loops' headers do not use its variable",
     unroll_jam_params, N_OF(unroll_jam_params), "c"},
    {"fuse",
     "fuse a loop nest with the loop nest after it that consumes what it produced: an "
     "elementwise epilogue moves into the loop that writes its input, or two loops with the "
     "same header become one",
     "a loop nest followed, in the same block, by a loop nest that touches what the first "
     "writes only at the element the first wrote in the same iteration (an elementwise loop "
     "over the same index range, or a loop with the same header)",
     fuse_params, N_OF(fuse_params), "c"},
    {"vectorize",
     "explicit SIMD with GCC vector extensions: run W iterations of a loop in the lanes of one "
     "vector (float locals and contiguous accesses become vectors, reductions vector "
     "accumulators summed after the loop), with a scalar remainder loop",
     "a simple loop with independent iterations (or float sum reductions) whose body is float "
     "arithmetic (+ - * /) on locals and on accesses contiguous in its variable, and whose "
     "inner loops' headers do not depend on it",
     vectorize_params, N_OF(vectorize_params), "c"},
    {"register_block",
     "register blocking in one step: interchange when needed so that a loop holds the "
     "reduction loop, unroll_jam of the loop around it by `rows`, vectorize of it (rows x width "
     "accumulators in vector registers across the reduction), with `pack` the vector loads "
     "packed into panels after, and with `cols` the vector loop jammed (rows x cols vectors)",
     "vectorize applies to a loop that holds other loops, in the source or after interchange",
     register_block_params, N_OF(register_block_params), "c"},
    {"pack",
     "pack the operand a vectorised loop reads along its reduction loop into contiguous "
     "panels ([j panel][k][lanes]) once, before the outermost loop that reads the same lanes "
     "again (the rows of a register-blocked matmul), in a 64-byte aligned buffer; the loop as "
     "it was when the buffer cannot be had",
     "a vector load `*(const vf *)&x[e + j]` in a loop `k` directly inside a loop `j += W`, "
     "whose address moves with k and j and is the same for every iteration of a loop around "
     "them, from a parameter the kernel never writes (panels); or a read strided in a loop `j` "
     "inside a reduction loop `k` (transposed to [k][j], so that `vectorize` can run j in lanes)",
     pack_params, N_OF(pack_params), "c"},
    {"kblock",
     "cache blocking of the reduction loop of a register-blocked nest: the loop around it runs "
     "once per block of `kc` values of k, the partial sums carried through memory (each sum "
     "still adds its terms in order)",
     "a loop around a vector loop `j += W` holding `for (T k = a; k < b; k++)`, whose "
     "accumulators are stored after the reduction and start from a constant or from what they "
     "store, whose other stores come before or after every reduction, and which reads what it "
     "writes only there",
     kblock_params, N_OF(kblock_params), "c"},
    {"permute",
     "reorder a loop nest whose only effect is one accumulation `p[i] += e`: the loop along "
     "the accumulated element's contiguous index runs innermost (each declaration and guard "
     "moved to the innermost loop it depends on), and the guards on it `if (e < lo || e >= hi) "
     "continue;`, e affine in it, become its bounds (a transposed convolution's scatter runs "
     "along output rows)",
     "a chain of simple rectangular loops whose statements are declarations, `if (cond) "
     "continue;` guards and, last in the innermost loop, the nest's only write: `p[i] += e;` "
     "(or -=, or a maximum or minimum kept in p[i]) into a parameter the nest reads nowhere "
     "else; or a loop keeping a float sum or extreme in a scalar stored once as its element "
     "(`p[.. + i] = f(s);`: a pool's window), split so that the element is accumulated, where "
     "the window's guards then become bounds",
     permute_params, N_OF(permute_params), "c"},
    {"stream",
     "non-temporal stores for a loop that maps inputs to one float output: blocks of 16 "
     "iterations (one 64-byte line) computed into an aligned buffer and written past the "
     "caches (no read of the line first), the unaligned ends as written, then a store fence",
     "an innermost simple loop whose only write outside its body is one statement `y[e + i] = "
     "...;` at the top level of its body, e not reading memory, y a float array the loop reads "
     "nowhere else, and no break, continue or return",
     stream_params, N_OF(stream_params), "c"},
    {"scan",
     "a running sum or product (cumsum, cumprod: `acc += e; y[i] = acc;`) a vector of floats "
     "at a time: the block's prefix in log2(W) shifted adds in registers, then the running "
     "value added to every lane, the last lane carried on (sums reassociated, as -ffast-math "
     "would); the loop's last iterations as written",
     "an innermost loop `for (T i = a; i < b; i++)` (or running down) whose body is the update "
     "of a float declared outside it (`acc += e;` or `*=`) and the store `y[e + i] = acc;` "
     "(before or after), e assigning and calling nothing and reading neither acc nor y",
     scan_params, N_OF(scan_params), "c"},
    {"acc_row",
     "a loop whose iterations each sum into a scalar over an inner loop (`float acc = 0; for "
     "(c ...) acc += e; y[..] += acc;`) keeps the sums of a chunk of its iterations in a row "
     "instead, with the inner loop outside it: the innermost loop runs along the row (an input "
     "row read contiguously, GCC vectorises it) and the strided or scattered write happens once "
     "per element; every element adds its terms in the same order (the same result, bit for "
     "bit)",
     "a loop `for (T i = a; i < b; i++)` whose body declares a float `acc` (declarations and "
     "`if (..) continue;` guards before it that write and call nothing), then a loop whose "
     "header does not change with i and whose body writes only its own variables and `acc += "
     "e`, then statements that write nothing the sums read",
     acc_row_params, N_OF(acc_row_params), "c"},
    {"split",
     "split a loop in three at the bounds its guards imply: the iterations before and after "
     "as written, and between them the interior, where the guards' tests on the loop's "
     "variable cannot pass and are left out (a padded convolution's or pool's border tests "
     "off its interior, where vectorize and register_block then apply); inner loops the same "
     "way inside the interior, whose index declarations are written into their uses; the "
     "same operations in the same order (the same result, bit for bit)",
     "a loop `for (T v = a; v < b; v++)` (signed T, no pragma, no break, integer bounds that "
     "keep their values) holding a guard `if (E < X || ...) continue;` whose test, through "
     "the integer declarations it names, is S * v plus terms c * u of inner loops and terms "
     "that keep their values through the loop",
     split_params, N_OF(split_params), "c"},
    {"ocl_ndrange",
     "OpenCL: one work-item per iteration of each top-level loop nest (1-D, or 2-D over a "
     "perfect pair), one kernel and launch per nest",
     "a kernel run by one work-item whose body is declarations and loop nests `for (T i = a; i "
     "< b; i++)` with integer-parameter bounds, no reductions, stores indexed by the loop "
     "variables",
     ocl_ndrange_params, N_OF(ocl_ndrange_params), "opencl"},
    {"ocl_work_group",
     "OpenCL: change the work-group size of launches `global=ROUND_UP(E,L) local=L`",
     "a launch of that form whose kernel uses no work-group functions, local memory or barriers",
     ocl_work_group_params, N_OF(ocl_work_group_params), "opencl"},
    {"ocl_coarsen",
     "OpenCL: each work-item handles W indices of a 1-D launch (consecutive or a grid apart), "
     "a W-times smaller grid",
     "a 1-D launch `global=ROUND_UP(E,L)` of a kernel whose only work-item index is `const T i = "
     "(a) + (T)get_global_id(0);` opening a block",
     ocl_coarsen_params, N_OF(ocl_coarsen_params), "opencl"},
    {"ocl_local_tile",
     "OpenCL: local-memory tiling of a 2-D matrix-product kernel: each TxT work-group stages a "
     "TxT tile of both operands in __local memory per step along k, between barriers",
     "a 2-D kernel from ocl_ndrange whose body is declarations, one loop `for (T k = a; k < b; "
     "k++)` reading one operand indexed by (i, k) and one by (k, j), then the stores",
     ocl_local_tile_params, N_OF(ocl_local_tile_params), "opencl"},
};

static const kevo_recipe_apply_fn impls[] = {
    kevo_recipe_flags_apply,          kevo_recipe_restrict_apply,
    kevo_recipe_omp_parallel_apply,   kevo_recipe_omp_simd_apply,
    kevo_recipe_interchange_apply,    kevo_recipe_tile_apply,
    kevo_recipe_unroll_apply,         kevo_recipe_unroll_jam_apply,
    kevo_recipe_fuse_apply,           kevo_recipe_vectorize_apply,
    kevo_recipe_register_block_apply, kevo_recipe_pack_apply,
    kevo_recipe_kblock_apply,         kevo_recipe_permute_apply,
    kevo_recipe_stream_apply,         kevo_recipe_scan_apply,
    kevo_recipe_acc_row_apply,        kevo_recipe_split_apply,
    kevo_recipe_ocl_ndrange_apply,
    kevo_recipe_ocl_work_group_apply, kevo_recipe_ocl_coarsen_apply,
    kevo_recipe_ocl_local_tile_apply,
};

_Static_assert(N_OF(descs) == N_OF(impls), "one implementation per recipe");

const kevo_recipe_desc *kevo_recipe_list(size_t *out_n)
{
    if (out_n)
        *out_n = N_OF(descs);
    return descs;
}

const kevo_recipe_desc *kevo_recipe_find(const char *name)
{
    for (size_t i = 0; name && i < N_OF(descs); i++)
        if (strcmp(descs[i].name, name) == 0)
            return &descs[i];
    return NULL;
}

static int find_or_fail(const kevo_recipe_desc **out, const char *name)
{
    *out = kevo_recipe_find(name);
    if (*out)
        return 0;
    kevo_buf known = {0};
    for (size_t i = 0; i < N_OF(descs); i++)
        kevo_buf_printf(&known, "%s%s", i ? ", " : "", descs[i].name);
    int error = kevo_error_set(KEVO_ENOTFOUND, "unknown recipe '%s' (known: %s)",
                               name ? name : "(null)", kevo_buf_cstr(&known));
    kevo_buf_free(&known);
    return error;
}

/* Defaults filled in, given values range-checked. */
static int resolve_params(long *out, const kevo_recipe_desc *d, const long *params, size_t n)
{
    if (n > d->n_params)
        return kevo_error_set(KEVO_EINVAL, "%s: takes %zu parameters, %zu given", d->name,
                              d->n_params, n);
    for (size_t i = 0; i < d->n_params; i++) {
        out[i] = i < n && params ? params[i] : d->params[i].def;
        if (out[i] < d->params[i].min || out[i] > d->params[i].max)
            return kevo_error_set(KEVO_EINVAL, "%s: parameter %s = %ld is out of range [%ld, %ld]",
                                  d->name, d->params[i].name, out[i], d->params[i].min,
                                  d->params[i].max);
    }
    return 0;
}

/* Prefix the current error message with the recipe name. */
static int prefixed(int code, const char *recipe)
{
    char msg[2048];
    snprintf(msg, sizeof(msg), "%s", kevo_error_last());
    return kevo_error_set(code, "%s: %s", recipe, msg);
}

/* One recipe run on an input: recipe index and resolved parameters, and
 * what it gave: the rewritten source, or why it declined (KEVO_EINVAL). */
typedef struct run_memo {
    size_t recipe;
    long p[KEVO_RECIPE_MAX_PARAMS];
    char *text;   /* NULL when declined */
    char *reason; /* the decline's message */
} run_memo;

#define MEMO_MAX 512 /* runs kept per input; later ones run each time */

/* A candidate and, once a recipe has needed it, its model or why it has
 * none; and the outcome of every recipe run on it so far (the generator's
 * check, the mutation's probes and the rewrite run the same recipe with the
 * same parameters: a recipe is a function of its input). */
struct kevo_recipe_input {
    const char *source; /* borrowed */
    char *kernel_name;
    kevo_recipe_model *model;
    bool parsed;
    bool borrowed;      /* model is the caller's (kevo_recipe__rewrite_parsed): one
                           run, nothing kept */
    int parse_error;    /* the parse's error code when model is NULL */
    char *parse_message;
    run_memo *memo;
    size_t n_memo, cap_memo;
    /* The source with the kernel's unroll hints dropped, made when a
     * structural recipe declines on the source: NULL until then, or when
     * the kernel carries no hint. */
    bool hintless_made;
    char *hintless_text;
    kevo_recipe_input *hintless;
};

int kevo_recipe_input_new(kevo_recipe_input **out, const char *source, const char *kernel_name)
{
    kevo_recipe_input *in = NULL;
    *out = NULL;
    if (!(in = calloc(1, sizeof(*in))) ||
        (kernel_name && !(in->kernel_name = strdup(kernel_name)))) {
        free(in);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    in->source = source;
    *out = in;
    return 0;
}

void kevo_recipe_input_free(kevo_recipe_input *in)
{
    if (!in)
        return;
    if (!in->borrowed)
        kevo_recipe_model_free(in->model);
    for (size_t i = 0; i < in->n_memo; i++) {
        free(in->memo[i].text);
        free(in->memo[i].reason);
    }
    free(in->memo);
    free(in->kernel_name);
    free(in->parse_message);
    kevo_recipe_input_free(in->hintless);
    free(in->hintless_text);
    free(in);
}

/* The model of the input, parsed on first need: *out borrowed; on failure
 * the parse's error, with its message set again on every call. */
static int input_model(const kevo_recipe_model **out, kevo_recipe_input *in)
{
    *out = NULL;
    if (!in->parsed) {
        in->parsed = true;
        in->parse_error = kevo_recipe_model_parse(&in->model, in->source, in->kernel_name);
        if (in->parse_error < 0 && !(in->parse_message = strdup(kevo_error_last())))
            in->parse_error = KEVO_ENOMEM;
    }
    if (in->model) {
        *out = in->model;
        return 0;
    }
    return kevo_error_set(in->parse_error, "%s",
                          in->parse_message ? in->parse_message : "out of memory");
}

int kevo_recipe_input_traits(char **out, kevo_recipe_input *in)
{
    const kevo_recipe_model *m;
    int error;
    *out = NULL;
    if ((error = input_model(&m, in)) < 0)
        return error;
    return kevo_recipe__traits(out, m);
}

/* Guard against recipe bugs: the rewritten source must still parse. */
static int guard_parses(const char *final, const char *kernel_name)
{
    kevo_recipe_model *check = NULL;
    int error = kevo_recipe_model_parse(&check, final, kernel_name);
    if (error == KEVO_EINVAL) {
        char msg[2048];
        snprintf(msg, sizeof(msg), "%s", kevo_error_last());
        error = kevo_error_set(KEVO_ERROR, "recipe bug: the rewritten source fails: %s", msg);
    }
    kevo_recipe_model_free(check);
    return error;
}

/* Run recipe d with parameters p on the input into *out_source: its edits
 * (or whole file), then its flags. The output is not re-parsed here. */
static int run_uncached(char **out_source, const kevo_recipe_desc *d, const long *p,
                        kevo_recipe_input *in, bool *out_needs_model)
{
    int error = 0;
    const kevo_recipe_model *m = NULL;
    kevo_recipe_out ro = {0};
    char *text = NULL;
    const char *source = in->source;

    *out_source = NULL;
    size_t idx = (size_t)(d - descs);
    bool needs_model = impls[idx] != kevo_recipe_flags_apply;
    *out_needs_model = needs_model;
    if ((needs_model && (error = input_model(&m, in)) < 0) ||
        (error = impls[idx](&ro, m, source, p)) < 0)
        goto done;
    if (ro.whole) {
        text = ro.whole;
        ro.whole = NULL;
    } else if ((error = kevo_recipe_edits_apply(&text, &ro.edits, source, strlen(source),
                                                m ? m->fn_start : 0, m ? m->fn_end : 0)) < 0) {
        goto done;
    }
    if (ro.cflags) {
        error = kevo_recipe_cflags_add(out_source, NULL, text, ro.cflags);
    } else {
        *out_source = text;
        text = NULL;
    }
done:
    kevo_cparse_edits_free(&ro.edits);
    free(ro.whole);
    free(text);
    return error;
}

/* Whether recipe idx may run on the source without its unroll hints when
 * it declines on the source as written. A `#pragma GCC unroll` is a hint to
 * the compiler, not part of what the kernel computes: a loop transform that
 * declines on loops carrying pragmas (vectorize, register_block, interchange,
 * tile, unroll_jam, pack, fuse, the OpenMP ones) would otherwise never apply
 * again after an `unroll` kept early in a search. Not for `unroll` itself
 * (dropping its own hint would "apply" it again as a no-op), nor for recipes
 * that never look at loops. */
static bool drops_unroll_hints(size_t idx)
{
    kevo_recipe_apply_fn f = impls[idx];
    return strcmp(descs[idx].backend, "c") == 0 && f != kevo_recipe_flags_apply &&
           f != kevo_recipe_restrict_apply && f != kevo_recipe_unroll_apply;
}

/* in->hintless: the input's source with every unroll hint of its kernel
 * removed (the directive and the blanks before it; the newline stays, so
 * line numbers in a decline's message still name the source as written).
 * NULL when the kernel carries none or does not parse. */
static int hintless_input(kevo_recipe_input **out, kevo_recipe_input *in)
{
    *out = NULL;
    if (!in->hintless_made) {
        in->hintless_made = true;
        const kevo_recipe_model *m = NULL;
        if (input_model(&m, in) < 0) {
            kevo_error_clear();
            return 0;
        }
        size_t n = strlen(in->source), w = 0, from = 0;
        bool any = false;
        char *text = malloc(n + 1);
        if (!text)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        for (size_t d = 0; d < m->n_dir; d++) { /* in source order */
            const kevo_rdirective *D = &m->dir[d];
            if (!(D->flags & KEVO_PRAGMA_UNROLL) || D->start < from || D->end > n)
                continue;
            size_t cut = D->start;
            while (cut > from && (in->source[cut - 1] == ' ' || in->source[cut - 1] == '\t'))
                cut--;
            memcpy(text + w, in->source + from, cut - from);
            w += cut - from;
            from = D->end;
            any = true;
        }
        memcpy(text + w, in->source + from, n - from);
        text[w + n - from] = '\0';
        if (!any) {
            free(text);
            return 0;
        }
        int error = kevo_recipe_input_new(&in->hintless, text, in->kernel_name);
        if (error < 0) {
            free(text);
            return error;
        }
        in->hintless_text = text;
    }
    *out = in->hintless;
    return 0;
}

/* run_uncached, or what the same run on this input gave before: an
 * applicable run's source (a copy) or a decline (KEVO_EINVAL, its message
 * set again). Other errors are not kept. */
static int run_recipe(char **out_source, const kevo_recipe_desc *d, const long *p,
                      kevo_recipe_input *in, bool *out_needs_model)
{
    size_t idx = (size_t)(d - descs);
    *out_source = NULL;
    *out_needs_model = impls[idx] != kevo_recipe_flags_apply;
    for (size_t i = 0; i < in->n_memo; i++) {
        run_memo *r = &in->memo[i];
        if (r->recipe != idx || memcmp(r->p, p, d->n_params * sizeof(long)) != 0)
            continue;
        if (!r->text)
            return kevo_error_set(KEVO_EINVAL, "%s", r->reason);
        if (!(*out_source = strdup(r->text)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        return 0;
    }
    int error = run_uncached(out_source, d, p, in, out_needs_model);
    kevo_recipe_input *hintless = NULL;
    if (error == KEVO_EINVAL && drops_unroll_hints(idx)) {
        char why[2048];
        snprintf(why, sizeof(why), "%s", kevo_error_last());
        int herr = hintless_input(&hintless, in);
        if (herr < 0)
            return herr;
        if (hintless)
            error = run_recipe(out_source, d, p, hintless, out_needs_model);
        else
            kevo_error_set(KEVO_EINVAL, "%s", why);
    }
    if ((error != 0 && error != KEVO_EINVAL) || in->borrowed || in->n_memo == MEMO_MAX)
        return error;
    if (in->n_memo == in->cap_memo) {
        size_t cap = in->cap_memo ? in->cap_memo * 2 : 16;
        run_memo *grown = realloc(in->memo, cap * sizeof(*grown));
        if (!grown)
            return error; /* not kept: the run stands */
        in->memo = grown;
        in->cap_memo = cap;
    }
    run_memo *r = &in->memo[in->n_memo];
    memset(r, 0, sizeof(*r));
    r->recipe = idx;
    memcpy(r->p, p, d->n_params * sizeof(long));
    if (error == 0 ? !!(r->text = strdup(*out_source))
                   : !!(r->reason = strdup(kevo_error_last())))
        in->n_memo++;
    return error;
}

/* Look the recipe up and resolve its parameters for the input's backend. */
static int prepare(const kevo_recipe_desc **out, long *p, const char *recipe, const long *params,
                   size_t n_params, const kevo_recipe_input *in)
{
    int error;
    const kevo_recipe_desc *d;
    if ((error = find_or_fail(&d, recipe)) < 0)
        return error;
    *out = d;
    if (!in || !in->source || !in->kernel_name)
        return kevo_error_set(KEVO_EINVAL, "%s: no source or kernel name given", d->name);
    if ((error = resolve_params(p, d, params, n_params)) < 0)
        return error;
    bool ocl = kevo_recipe_is_opencl(in->source);
    if (strcmp(d->backend, ocl ? "opencl" : "c") != 0)
        return prefixed(kevo_error_set(KEVO_EINVAL, "rewrites %s candidates, this is %s",
                                       d->backend, ocl ? "OpenCL" : "C"),
                        d->name);
    return 0;
}

int kevo_recipe_input_apply(char **out_source, const char *recipe, const long *params,
                            size_t n_params, kevo_recipe_input *in)
{
    int error = 0;
    const kevo_recipe_desc *d = NULL;
    long p[KEVO_RECIPE_MAX_PARAMS] = {0};
    char *final = NULL;
    bool needs_model = false;

    *out_source = NULL;
    if ((error = prepare(&d, p, recipe, params, n_params, in)) < 0)
        return error;
    if ((error = run_recipe(&final, d, p, in, &needs_model)) < 0 ||
        (needs_model && (error = guard_parses(final, in->kernel_name)) < 0))
        goto done;
    *out_source = final;
    final = NULL;
done:
    if (error < 0)
        error = prefixed(error, d->name);
    free(final);
    return error;
}

int kevo_recipe_apply(char **out_source, const char *recipe, const long *params, size_t n_params,
                      const char *source, const char *kernel_name)
{
    kevo_recipe_input *in = NULL;
    int error;
    *out_source = NULL;
    if (!source || !kernel_name) {
        const kevo_recipe_desc *d;
        if ((error = find_or_fail(&d, recipe)) < 0)
            return error;
        return kevo_error_set(KEVO_EINVAL, "%s: no source or kernel name given", d->name);
    }
    if ((error = kevo_recipe_input_new(&in, source, kernel_name)) < 0)
        return error;
    error = kevo_recipe_input_apply(out_source, recipe, params, n_params, in);
    kevo_recipe_input_free(in);
    return error;
}

/* An applicability outcome: 0 with *out_applicable, the reason of an
 * EINVAL in *out_reason, or another error. */
static int check_outcome(bool *out_applicable, char **out_reason, int error)
{
    if (error == 0) {
        *out_applicable = true;
        return 0;
    }
    if (error != KEVO_EINVAL)
        return error;
    if (out_reason) {
        *out_reason = strdup(kevo_error_last());
        if (!*out_reason)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    kevo_error_clear();
    return 0;
}

int kevo_recipe_input_check(bool *out_applicable, char **out_reason, const char *recipe,
                            const long *params, size_t n_params, kevo_recipe_input *in)
{
    int error = 0;
    const kevo_recipe_desc *d = NULL;
    long p[KEVO_RECIPE_MAX_PARAMS] = {0};
    char *result = NULL;
    bool needs_model = false;

    *out_applicable = false;
    if (out_reason)
        *out_reason = NULL;
    if ((error = prepare(&d, p, recipe, params, n_params, in)) == 0 &&
        (error = run_recipe(&result, d, p, in, &needs_model)) < 0)
        error = prefixed(error, d->name);
    free(result);
    return check_outcome(out_applicable, out_reason, error);
}

int kevo_recipe__input_rewrite(char **out_source, const char *recipe, const long *params,
                               size_t n_params, kevo_recipe_input *in)
{
    int error = 0;
    const kevo_recipe_desc *d = NULL;
    long p[KEVO_RECIPE_MAX_PARAMS] = {0};
    bool needs_model = false;

    *out_source = NULL;
    if ((error = prepare(&d, p, recipe, params, n_params, in)) == 0 &&
        (error = run_recipe(out_source, d, p, in, &needs_model)) < 0)
        error = prefixed(error, d->name);
    return error;
}

int kevo_recipe__rewrite_parsed(char **out_source, const char *recipe, const long *params,
                                size_t n_params, const kevo_recipe_model *m, const char *source,
                                const char *kernel_name)
{
    /* an input that borrows m: never freed with kevo_recipe_input_free */
    kevo_recipe_input in = {.source = source,
                            .kernel_name = (char *)kernel_name,
                            .model = (kevo_recipe_model *)m,
                            .parsed = true,
                            .borrowed = true};
    *out_source = NULL;
    int error = kevo_recipe__input_rewrite(out_source, recipe, params, n_params, &in);
    kevo_recipe_input_free(in.hintless);
    free(in.hintless_text);
    return error;
}

size_t kevo_recipe__input_loops(kevo_recipe_input *in)
{
    const kevo_recipe_model *m = NULL;
    if (input_model(&m, in) < 0) {
        kevo_error_clear();
        return 0;
    }
    return m->n_loop;
}

int kevo_recipe_check(bool *out_applicable, char **out_reason, const char *recipe,
                      const char *source, const char *kernel_name)
{
    char *result = NULL;
    *out_applicable = false;
    if (out_reason)
        *out_reason = NULL;
    int error = kevo_recipe_apply(&result, recipe, NULL, 0, source, kernel_name);
    free(result);
    return check_outcome(out_applicable, out_reason, error);
}

int kevo_recipe_apply_chain(char **out_source, const kevo_recipe_step *steps, size_t n,
                            const char *source, const char *kernel_name)
{
    int error = 0;
    char *cur = NULL;

    *out_source = NULL;
    if (!source)
        return kevo_error_set(KEVO_EINVAL, "chain: no source given");
    if (!(cur = strdup(source)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char *next = NULL;
        if ((error = kevo_recipe_apply(&next, steps[i].recipe, steps[i].params, steps[i].n_params,
                                       cur, kernel_name)) < 0) {
            char msg[2048];
            snprintf(msg, sizeof(msg), "%s", kevo_error_last());
            error = kevo_error_set(error, "step %zu (%s): %s", i + 1,
                                   steps[i].recipe ? steps[i].recipe : "?", msg);
            goto done;
        }
        free(cur);
        cur = next;
    }
    *out_source = cur;
    cur = NULL;
done:
    free(cur);
    return error;
}

int kevo_recipe_params_default(long *out_params, size_t *out_n, const char *recipe)
{
    const kevo_recipe_desc *d;
    int error;
    *out_n = 0;
    if ((error = find_or_fail(&d, recipe)) < 0)
        return error;
    for (size_t i = 0; i < d->n_params; i++)
        out_params[i] = d->params[i].def;
    *out_n = d->n_params;
    return 0;
}

/* Sensible values for parameter i, narrowed by the kernel's nests when a
 * model is given. Returns the count written to out (<= cap). */
static size_t param_choices(long *out, size_t cap, const kevo_recipe_desc *d, size_t i,
                            const kevo_recipe_model *m)
{
    const kevo_recipe_param_desc *p = &d->params[i];
    size_t n = 0;
    if (m && strcmp(p->name, "loop") == 0) {
        out[n++] = -1;
        for (size_t l = 0; l < m->n_loop && n < cap; l++) {
            bool ok = strcmp(d->name, "tile") == 0
                          ? kevo_recipe_band(m, (int)l, 3, false, NULL, 0) >= 2
                          : m->loop[l].sole_child >= 0;
            if (ok)
                out[n++] = (long)l;
        }
        return n;
    }
    if (m && (strcmp(p->name, "collapse") == 0 || strcmp(p->name, "depth") == 0)) {
        int deepest = 1;
        for (size_t l = 0; l < m->n_loop; l++) {
            if (strcmp(p->name, "collapse") == 0 && m->loop[l].parent >= 0)
                continue;
            int b =
                kevo_recipe_band(m, (int)l, (int)p->max, strcmp(p->name, "collapse") == 0, NULL, 0);
            if (b > deepest)
                deepest = b;
        }
        for (long v = p->min; v <= deepest && v <= p->max && n < cap; v++)
            out[n++] = v;
        if (n == 0)
            out[n++] = p->def;
        return n;
    }
    for (size_t k = 0; k < p->n_choices && n < cap; k++)
        out[n++] = p->choices[k];
    return n;
}

/* Whether recipe d applies to the input with parameters p: 1 yes, 0 no,
 * or an error other than "does not apply". */
static int applies_with(const kevo_recipe_desc *d, const long *p, kevo_recipe_input *in)
{
    char *result = NULL;
    bool needs_model = false;
    if (strcmp(d->backend, kevo_recipe_is_opencl(in->source) ? "opencl" : "c") != 0)
        return 0;
    int error = run_recipe(&result, d, p, in, &needs_model);
    free(result);
    if (error == KEVO_EINVAL) {
        kevo_error_clear();
        return 0;
    }
    return error < 0 ? error : 1;
}

/* Change one parameter of d among the choices the model (may be NULL)
 * allows. With an input (in, may be NULL), only to values with which the
 * recipe applies to it: the generator declares a recipe applicable with
 * its defaults and then rewrites with mutated parameters, so a value that
 * makes the recipe decline (unroll by the factor the loop already has, a
 * flag set already on the cflags line, a loop index that roots no nest)
 * would be a failed attempt for nothing. When no single change applies,
 * params stay as they are (*out_changed false). */
static int mutate_with(bool *out_changed, long *params, kevo_rng *rng, const kevo_recipe_desc *d,
                       const kevo_recipe_model *m, kevo_recipe_input *in)
{
    /* Per parameter, the alternatives to its current value. */
    size_t candidates[KEVO_RECIPE_MAX_PARAMS], nc = 0;
    long alt[KEVO_RECIPE_MAX_PARAMS][64];
    size_t nalt[KEVO_RECIPE_MAX_PARAMS];
    for (size_t i = 0; i < d->n_params; i++) {
        long choices[64];
        size_t nch = param_choices(choices, 64, d, i, m);
        nalt[i] = 0;
        for (size_t k = 0; k < nch; k++) {
            if (choices[k] == params[i])
                continue;
            if (in) {
                long probe[KEVO_RECIPE_MAX_PARAMS];
                memcpy(probe, params, d->n_params * sizeof(long));
                probe[i] = choices[k];
                int ok = applies_with(d, probe, in);
                if (ok < 0)
                    return ok;
                if (!ok)
                    continue;
            }
            alt[i][nalt[i]++] = choices[k];
        }
        if (nalt[i] > 0)
            candidates[nc++] = i;
    }
    if (nc == 0)
        return 0;
    size_t i = candidates[kevo_rng_next(rng) % nc];
    params[i] = alt[i][kevo_rng_next(rng) % nalt[i]];
    *out_changed = true;
    return 0;
}

/* The model for narrowing parameter choices: NULL (the static choices)
 * when the source does not parse; KEVO_ENOMEM when parsing ran out of
 * memory. */
static int mutate_model(const kevo_recipe_model **out, kevo_recipe_input *in)
{
    *out = NULL;
    if (!in || !in->source || !in->kernel_name || input_model(out, in) == 0)
        return 0;
    if (kevo_error_last()[0] && strstr(kevo_error_last(), "out of memory"))
        return KEVO_ENOMEM;
    kevo_error_clear();
    return 0;
}

int kevo_recipe_input_params_mutate(bool *out_changed, long *params, kevo_rng *rng,
                                    const char *recipe, kevo_recipe_input *in)
{
    int error = 0;
    const kevo_recipe_desc *d;
    const kevo_recipe_model *m = NULL;

    *out_changed = false;
    if ((error = find_or_fail(&d, recipe)) < 0)
        return error;
    if (d->n_params == 0)
        return 0;
    if ((error = mutate_model(&m, in)) < 0)
        return error;
    return mutate_with(out_changed, params, rng, d, m,
                       in && in->source && in->kernel_name ? in : NULL);
}

int kevo_recipe_params_mutate(bool *out_changed, long *params, kevo_rng *rng, const char *recipe,
                              const char *source, const char *kernel_name)
{
    kevo_recipe_input *in = NULL;
    int error;
    *out_changed = false;
    if (!source || !kernel_name)
        return kevo_recipe_input_params_mutate(out_changed, params, rng, recipe, NULL);
    if ((error = kevo_recipe_input_new(&in, source, kernel_name)) < 0)
        return error;
    error = kevo_recipe_input_params_mutate(out_changed, params, rng, recipe, in);
    kevo_recipe_input_free(in);
    return error;
}
