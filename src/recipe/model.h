/*
 * recipe/model.h - internal to src/recipe: the parsed view of one kernel
 * function that every recipe works from, and the small analyses on it.
 *
 * kevo_recipe_model_parse() runs libclang (through kevo/cparse.h) over the
 * candidate (an unsaved in-memory file) and keeps, for the kernel function
 * only: its tokens (with
 * preprocessor lines taken out and recorded as directives), the variables
 * those tokens name, its parameters, and its `for` loops with their nesting,
 * header parts, induction variable, bounds and the pragma lines directly above
 * them. Offsets are byte offsets into the source the model was built from;
 * token ranges are half-open [t0, t1) index ranges into model->tok.
 *
 * Must not: edit text (recipes do that through a kevo_cparse_edits list),
 * or run anything.
 */
#ifndef KEVO_RECIPE_MODEL_H
#define KEVO_RECIPE_MODEL_H

#include "kevo/cparse.h"
#include "kevo/recipe.h"

#include <stdbool.h>
#include <stddef.h>

/* One token of the kernel function. */
typedef struct kevo_rtok {
    unsigned start, end; /* byte offsets into the source */
    unsigned char kind;  /* KEVO_CTOK_* (kevo/cparse.h): punct, keyword, identifier, literal */
    bool is_decl;        /* the declaring occurrence of `var` */
    int var;             /* index into model->var, or -1 */
} kevo_rtok;

enum {
    KEVO_VTYPE_OTHER = 0,
    KEVO_VTYPE_INT,
    KEVO_VTYPE_FLOAT,
    KEVO_VTYPE_POINTER,
    KEVO_VTYPE_ARRAY
};

/* A variable (VarDecl or ParmDecl) named by some token of the kernel. */
typedef struct kevo_rvar {
    char *name;        /* owned */
    unsigned decl_off; /* offset of its declaring name in the source; UINT_MAX if elsewhere */
    int vtype;         /* KEVO_VTYPE_* of its canonical type */
    bool is_param;     /* a parameter of the kernel */
    bool is_restrict;  /* restrict-qualified pointer */
    bool points_to_function;
    bool is_f32;     /* its canonical type is float */
    bool elem_f32;   /* a pointer to, or array of, float (one level) */
    bool elem_const; /* ... whose elements are const-qualified */
    int int_rank;    /* a signed integer type: 1 int, 2 long, 3 long long; 0 otherwise */
} kevo_rvar;

enum {
    KEVO_PRAGMA_OMP_PARALLEL = 1 << 0,
    KEVO_PRAGMA_OMP_FOR = 1 << 1,
    KEVO_PRAGMA_OMP_SIMD = 1 << 2,
    KEVO_PRAGMA_OMP_OTHER = 1 << 3, /* any other omp directive */
    KEVO_PRAGMA_UNROLL = 1 << 4,    /* #pragma GCC unroll N / #pragma unroll */
    KEVO_PRAGMA_OTHER = 1 << 5
};
#define KEVO_PRAGMA_OMP_ANY                                                                        \
    (KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR | KEVO_PRAGMA_OMP_SIMD | KEVO_PRAGMA_OMP_OTHER)

/* A preprocessor line inside the kernel function. */
typedef struct kevo_rdirective {
    unsigned start, end; /* from '#' to the end of the line (newline excluded) */
    unsigned flags;      /* KEVO_PRAGMA_* for a #pragma, 0 for other directives */
    bool attached;       /* directly above some loop */
} kevo_rdirective;

#define KEVO_RLOOP_MAX_PRAGMAS 4

enum { KEVO_COND_LT, KEVO_COND_LE, KEVO_COND_GT, KEVO_COND_GE, KEVO_COND_NE };

/* One `for` statement of the kernel. */
typedef struct kevo_rloop {
    int parent;       /* innermost enclosing loop, -1 at top level */
    int level;        /* 0 for top-level loops */
    int n_children;   /* loops whose parent is this one */
    int sole_child;   /* the loop that is the whole body (a perfect nest), else -1 */
    unsigned t_other; /* when sole_child < 0 and n_children > 0: first token of a
                         statement beside the child loop (for messages) */
    unsigned t_for, t_lparen, t_semi1, t_semi2, t_rparen, t_body, t_end;
    bool body_compound;
    bool early_exit; /* the body can leave the loop: break (of this loop), return, goto */
    unsigned line;   /* 1-based line of `for` */
    bool at_line_start;
    int pragmas[KEVO_RLOOP_MAX_PRAGMAS]; /* attached directives, top to bottom */
    int n_pragmas;
    unsigned pragma_flags; /* union of the attached directives' flags */

    /* OpenMP canonical form: init `T i = a` or `i = a`, test `i relop b`,
     * increment `i++`, `i += c`, ...; body does not assign i. */
    bool canonical;
    bool declared;             /* i declared in the init */
    bool simple;               /* canonical, declared, test < or <=, step +1 */
    bool strided;              /* like simple but with any positive literal step */
    int var;                   /* induction variable, -1 when not canonical */
    unsigned t_type0, t_type1; /* type tokens when declared */
    unsigned t_lb0, t_lb1;     /* lower bound expression */
    int cond_op;               /* KEVO_COND_*, normalised to `i op bound` */
    unsigned t_ub0, t_ub1;     /* bound expression of the test */
    long step;                 /* +1, -1, a literal step, or 0 when not a literal */
    /* `i += S`, S a constant of sizeof quotients and literals (what vectorize
     * writes: `(int64_t)(sizeof(vf) / sizeof(float))`): declared, test < or
     * <=; unroll_jam takes it as a step of S */
    bool sized_step;
    unsigned t_step0, t_step1; /* S's tokens when sized_step */
    char why[200];             /* when not simple: why, naming the line */
} kevo_rloop;

typedef struct kevo_recipe_model {
    const char *src; /* borrowed: the source the model was built from */
    size_t len;
    unsigned fn_start, fn_end; /* the kernel definition's extent */
    unsigned t_fbody;          /* token index of the function body's `{` */
    kevo_rtok *tok;
    size_t n_tok;
    kevo_rvar *var;
    size_t n_var;
    int *param; /* var index of each parameter (-1 when unnamed) */
    size_t n_param;
    kevo_rloop *loop; /* in source order (pre-order of the nesting tree) */
    size_t n_loop;
    kevo_rdirective *dir;
    size_t n_dir;
    unsigned *line_start; /* offset of each line's first byte; index 0 = line 1 */
    size_t n_lines;
} kevo_recipe_model;

/* Parse `source` and build the model of `kernel_name`. *out is the caller's,
 * freed with kevo_recipe_model_free(); it borrows `source`, which must
 * outlive it. KEVO_EINVAL when the source does not parse or lacks the
 * kernel's definition; KEVO_EINFRA when libclang fails. */
int kevo_recipe_model_parse(kevo_recipe_model **out, const char *source, const char *kernel_name);
void kevo_recipe_model_free(kevo_recipe_model *m);
/* OpenCL sources (kevo_recipe_is_opencl) are parsed as C with a prelude that
 * erases the OpenCL qualifiers and declares the work-item functions. */

/* One line of a source's leading comment block: the blank and `//` lines
 * before its first other line (where `// kevo:` directives live). */
typedef struct kevo_header_line {
    const char *raw;  /* the line's first byte */
    size_t raw_len;   /* with its newline, if any */
    const char *text; /* after leading blanks */
    size_t text_len;  /* from text to the end of the line, newline excluded */
} kevo_header_line;

/* Iterate over the leading comment block: start with *cursor = source; each
 * call fills *out and advances *cursor past the line, or returns false
 * (leaving *cursor at the first line after the block, or at the end). */
bool kevo_recipe_header_next(const char **cursor, kevo_header_line *out);

/* Token helpers. */
bool kevo_rtok_is(const kevo_recipe_model *m, size_t t, const char *text);
/* Whether token t is one of texts[] (NULL-ended). */
bool kevo_rtok_is_any(const kevo_recipe_model *m, size_t t, const char *const *texts);
const char *kevo_rtok_text(const kevo_recipe_model *m, size_t t, size_t *len);
/* Whether token t is an assignment operator (`=`, `+=`, ... `>>=`); with
 * incdec, also `++` or `--`: an operator that writes its operand. */
bool kevo_rtok_assigns(const kevo_recipe_model *m, size_t t, bool incdec);
/* Whether the + or - at t, in an expression starting at t0, is binary (it
 * follows an operand). */
bool kevo_rtok_binary_sign(const kevo_recipe_model *m, unsigned t, unsigned t0);
/* A sum [e0,e1) term by term: the term starting at a (e0, or the binary +
 * or - before it) is [*t0, *t1) after its signs, negated when *minus; the
 * next starts at *t1. False when only signs remain. */
bool kevo_rtok_sum_term(const kevo_recipe_model *m, unsigned e0, unsigned e1, unsigned a,
                        unsigned *t0, unsigned *t1, bool *minus);
/* Whether tokens [a0,a1) and [b0,b1) spell the same sequence. */
bool kevo_rtok_same(const kevo_recipe_model *m, unsigned a0, unsigned a1, unsigned b0, unsigned b1);
/* Index of the bracket matching the one at t ( ( [ { forward, ) ] } back), or
 * (unsigned)-1. */
unsigned kevo_rtok_match(const kevo_recipe_model *m, unsigned t);
/* Whether token t is a comment; the first token from t on (before t1) that
 * is not one. */
bool kevo_rtok_comment(const kevo_recipe_model *m, unsigned t);
unsigned kevo_rtok_skip_comments(const kevo_recipe_model *m, unsigned t, unsigned t1);
/* The `;` ending the statement starting at t (at its depth), or t1 (also
 * when a bracket closes first). */
unsigned kevo_rtok_stmt_semi(const kevo_recipe_model *m, unsigned t, unsigned t1);
/* The first token of [t0,t1) outside any bracket pair that is `text`, or t1. */
unsigned kevo_rtok_find_top(const kevo_recipe_model *m, unsigned t0, unsigned t1, const char *text);
/* Narrow [*a0,*a1) past comments at both ends and parentheses around it all. */
void kevo_rtok_strip_parens(const kevo_recipe_model *m, unsigned *a0, unsigned *a1);
/* Append the source bytes of tokens [a,e) as written (comments and spacing
 * between them included) to b; 0 or an error. */
int kevo_rtok_put(kevo_buf *b, const kevo_recipe_model *m, unsigned a, unsigned e);
/* 1-based line of a byte offset. */
unsigned kevo_recipe_line(const kevo_recipe_model *m, unsigned offset);
/* Leading whitespace of the line holding `offset`: *len bytes at the
 * returned pointer. */
const char *kevo_recipe_indent(const kevo_recipe_model *m, unsigned offset, size_t *len);
/* Offset of the first byte of the line holding `offset`. */
unsigned kevo_recipe_line_begin(const kevo_recipe_model *m, unsigned offset);

/* --- accesses (access.c) -------------------------------------------------- */

enum {
    KEVO_WRITE_SCALAR,  /* the variable itself: v = ..., v += ..., v++ */
    KEVO_WRITE_ELEMENT, /* v[...] = ..., v.f = ... */
    KEVO_WRITE_DEREF,   /* *expr = ..., p->f = ... */
    KEVO_WRITE_UNKNOWN  /* an lvalue kevo cannot read */
};

typedef struct kevo_rwrite {
    int kind; /* KEVO_WRITE_* */
    int var;  /* root variable, -1 when unknown */
    unsigned t_lhs0, t_lhs1;
    unsigned t_op;           /* the assignment or ++/-- token */
    unsigned t_idx0, t_idx1; /* ELEMENT: tokens from the first '[' to the last ']' */
} kevo_rwrite;

/* All writes in tokens [t0,t1). Declarations with an initialiser are not
 * writes. *out is malloc'd (free()). */
int kevo_recipe_writes(kevo_rwrite **out, size_t *out_n, const kevo_recipe_model *m, unsigned t0,
                       unsigned t1);

/* Token t's value when it is an integer literal, or a variable declared
 * `v = LITERAL` (an integer) that the kernel never writes. */
bool kevo_recipe_int_constant(const kevo_recipe_model *m, unsigned t, long *value);

/* Whether the kernel writes the scalar variable v anywhere (true also when
 * its writes cannot be read). */
bool kevo_recipe_var_written(const kevo_recipe_model *m, int v);

/* The variable declared in tokens [t0,t1) (one statement) when it declares
 * exactly one name (*tok its declaring token); -1 when it declares none, -2
 * otherwise (several, or one kevo cannot name). */
int kevo_recipe_sole_decl(const kevo_recipe_model *m, unsigned t0, unsigned t1, unsigned *tok);

/* Whether some token in [t0,t1) names variable `var`. */
bool kevo_recipe_uses_var(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var);

/* Whether variable `var` is declared inside tokens [t0,t1). */
bool kevo_recipe_declared_in(const kevo_recipe_model *m, int var, unsigned t0, unsigned t1);

/* The token declaring variable v (its declaring occurrence), or
 * (unsigned)-1 when the kernel has none. */
unsigned kevo_recipe_decl_token(const kevo_recipe_model *m, int v);

/* The innermost loop whose body holds token t, or -1. */
int kevo_recipe_loop_of(const kevo_recipe_model *m, unsigned t);

/* How the scalars declared outside a loop region are used inside it. */
typedef struct kevo_rscalars {
    int priv[16]; /* written before read each iteration, dead after: private */
    size_t n_priv;
    int red_var[16]; /* reductions and their operators ("+", "*", "max", ...) */
    const char *red_op[16];
    size_t n_red;
} kevo_rscalars;

/* Classify the writes in region [t0,t1) (a loop body) to variables declared
 * outside it: reductions, privates (assigned first, or an inner loop's
 * induction variable, and not used after the region's loop which ends at
 * t_after), or conflicts. Element writes are not looked at here.
 * Returns 0 when every such write is a reduction or private; KEVO_EINVAL
 * with the reason (naming the variable and line) otherwise. */
int kevo_recipe_scalars(kevo_rscalars *out, const kevo_recipe_model *m, unsigned t0, unsigned t1,
                        unsigned t_after);

/* A scratch buffer private to each iteration of a loop (private.c): the
 * variable, the token declaring it, its initialiser [t_init0, t_init1)
 * (the `malloc(...)`/`calloc(...)` call, with its cast). */
typedef struct kevo_rprivate {
    int var;
    unsigned t_decl, t_init0, t_init1;
} kevo_rprivate;

/* The buffers private to the iterations of loop r (private.c says which),
 * at most max into out[0..*n). why[0..why_size) gets why the first buffer
 * that was a candidate is not private ("" when none was refused). Returns
 * 0 or an error. */
int kevo_recipe_private_buffers(kevo_rprivate *out, size_t max, size_t *n,
                                const kevo_recipe_model *m, int r, char *why, size_t why_size);

/* As kevo_recipe_stores_indexed() and kevo_recipe_same_index(), leaving
 * out the stores to, and reads of, the variables skip[0..nskip) (private
 * buffers: each thread has its own). */
int kevo_recipe_stores_indexed_except(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                                      const int *vars, size_t n, const int *skip, size_t nskip);
int kevo_recipe_same_index_except(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                                  const int *skip, size_t nskip);

/* Check that every store in region [t0,t1) to memory declared outside it is
 * an element store whose index uses each of vars[0..n) (so that iterations of
 * those loops touch different elements). A variable counts as used when the
 * index uses the variable of an inner loop whose lower and upper bounds both
 * use it (a point loop of a tile). KEVO_EINVAL with the reason. */
int kevo_recipe_stores_indexed(const kevo_recipe_model *m, unsigned t0, unsigned t1,
                               const int *vars, size_t n);

/* Check that each array written in [t0,t1) (declared outside it) is read
 * there only at an index it is written at (textually), a cheap stand-in for
 * dependence analysis: `y[i] = y[i-1] + x` is refused. Writes at several
 * indices (y[2*i], y[2*i+1]) are assumed not to overlap across iterations.
 * KEVO_EINVAL with the reason. */
int kevo_recipe_same_index(const kevo_recipe_model *m, unsigned t0, unsigned t1);

/* End (exclusive) of the expression starting at token a: the `;` at depth
 * 0, or `,`, or a closing bracket of depth -1; t1 when none comes first. */
unsigned kevo_recipe_expr_end(const kevo_recipe_model *m, unsigned a, unsigned t1);

/* The parameter a pointer variable derives from: itself for a parameter,
 * the first pointer parameter of a local's initialiser; -1 unknown. */
int kevo_recipe_root_param(const kevo_recipe_model *m, int v);

/* --- edits (edit.c) ------------------------------------------------------- */

/* Recipes record their edits in a kevo_cparse_edits list (kevo/cparse.h:
 * kevo_cparse_edits_add, kevo_cparse_edits_free). Apply them to
 * src[0..len) into a malloc'd *out. Every edit must lie in [lo,hi] (the
 * kernel function) and none may overlap another: KEVO_ERROR ("recipe bug")
 * otherwise, a recipe bug, not a property of the candidate. */
int kevo_recipe_edits_apply(char **out, const kevo_cparse_edits *e, const char *src, size_t len,
                            unsigned lo, unsigned hi);
/* As kevo_recipe_edits_apply() on the kernel of model m (src, NUL-ended),
 * with `prelude` (helpers a recipe's rewrite calls) put at the start of the
 * line the kernel begins on, unless src holds it already. */
int kevo_recipe_edits_apply_with(char **out, const kevo_cparse_edits *e, const char *src,
                                 const kevo_recipe_model *m, const char *prelude);

/* --- recipes (recipe_*.c) ------------------------------------------------- */

/* What a recipe produces: text edits inside the kernel and flags to add. */
typedef struct kevo_recipe_out {
    kevo_cparse_edits edits;
    const char *cflags; /* static string or NULL */
    char *whole;        /* malloc'd: the whole new file, instead of edits (OpenCL
                           recipes, which add kernels and change launch lines) */
} kevo_recipe_out;

/* One recipe's implementation: fill `out` or decline with
 * kevo_error_set(KEVO_EINVAL, reason). m is NULL for recipes that do not
 * need the model (flags). params holds desc->n_params values. */
typedef int (*kevo_recipe_apply_fn)(kevo_recipe_out *out, const kevo_recipe_model *m,
                                    const char *source, const long *params);

int kevo_recipe_flags_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                            const long *params);
int kevo_recipe_restrict_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                               const long *params);
int kevo_recipe_omp_parallel_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                   const char *source, const long *params);
int kevo_recipe_omp_simd_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                               const long *params);
int kevo_recipe_unroll_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                             const long *params);
int kevo_recipe_interchange_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params);
int kevo_recipe_tile_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params);

int kevo_recipe_unroll_jam_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                 const char *source, const long *params);
int kevo_recipe_vectorize_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                const char *source, const long *params);
int kevo_recipe_register_block_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params);
/* The loop `vectorize` picks with loop=-1 (holding_loops: only among loops
 * that hold other loops, the register-blocking case), or -1. */
int kevo_recipe__vectorize_pick(const kevo_recipe_model *m, bool holding_loops);
/* The same among the loops lying in tokens [t0, t1). */
int kevo_recipe__vectorize_pick_within(const kevo_recipe_model *m, bool holding_loops,
                                       unsigned t0, unsigned t1);
/* Whether loop l is the scalar remainder `vectorize` leaves after a vector
 * loop (it starts at the `*_vend` bound vectorize names). */
bool kevo_recipe_vector_tail(const kevo_recipe_model *m, int l);
/* Whether loop l is a vector loop `vectorize` wrote: `j < *_vend`, stepping
 * by the lanes (a literal width, or sizeof(vf) / sizeof(float)). */
bool kevo_recipe_vector_loop(const kevo_recipe_model *m, int l);
int kevo_recipe_pack_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params);
/* Whether variable v is the buffer of a `pack` (by the names pack gives
 * them): 1 panels (`*_pack`), 2 transposed (`*_packt`), 0 neither. */
int kevo_recipe_pack_buffer(const kevo_recipe_model *m, int v);
int kevo_recipe_kblock_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                             const long *params);
int kevo_recipe_permute_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                              const char *source, const long *params);
/* expand.c: the first loop from index *loop on that keeps a sum or an
 * extreme in a float scalar and stores it once (`float s = 0; for (...) s
 * += e; y[.. + i] = f(s);`), split in three loops over the same range that
 * set, accumulate and finish the element itself. *out (malloc'd) is m's
 * source with that loop replaced; *root_off the byte offset in it of the
 * accumulation copy's `for`; *loop that loop's index in m. KEVO_EINVAL
 * with the reason of the loop that came closest when none (*loop then
 * m->n_loop). */
int kevo_recipe__expand_scalar(char **out, unsigned *root_off, size_t *loop,
                               const kevo_recipe_model *m);
int kevo_recipe_stream_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                             const char *source, const long *params);
int kevo_recipe_scan_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params);
/* Shared by stream and scan (recipe_stream.c). Whether tokens [a,b) may
 * read memory or call: `[`, `->`, `.`, `&`, a pointer or array variable
 * (its dereference or arithmetic), or an identifier that names no variable
 * followed by `(` (a call; casts pass). */
bool kevo_recipe__reads_memory(const kevo_recipe_model *m, unsigned a, unsigned b);
/* Whether the store subscript in [a,b) is a sum whose one term `v` (the
 * loop variable) stands alone at depth 0 with a plus sign, every other
 * token reading no memory and not naming v (the store at line `line`);
 * else false with the reason in why. */
bool kevo_recipe__unit_stride(const kevo_recipe_model *m, unsigned a, unsigned b, int v,
                              char *why, size_t wl, unsigned line);
int kevo_recipe_acc_row_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                              const char *source, const long *params);
int kevo_recipe_split_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                            const char *source, const long *params);
int kevo_recipe_fuse_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                           const long *params);

int kevo_recipe_ocl_ndrange_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params);
int kevo_recipe_ocl_work_group_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params);
int kevo_recipe_ocl_coarsen_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                  const char *source, const long *params);
int kevo_recipe_ocl_local_tile_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params);

/* The flag sets of the `flags` recipe, indexed by its `set` parameter. */
extern const char *const kevo_recipe_flag_sets[];
extern const size_t kevo_recipe_n_flag_sets;

/* As kevo_recipe_input_apply() without the guard: the rewritten source is
 * not parsed again (the recipe safety sweep, tests/helpers/recipe_sweep.c,
 * parses each distinct result once itself). *out_source is the caller's. */
int kevo_recipe__input_rewrite(char **out_source, const char *recipe, const long *params,
                               size_t n_params, kevo_recipe_input *in);

/* Recipe `recipe` on `source`, whose model m (borrowed) is already parsed,
 * without the guard: for recipes built of others (register_block), so that
 * each intermediate source is parsed once. *out_source is the caller's. */
int kevo_recipe__rewrite_parsed(char **out_source, const char *recipe, const long *params,
                                size_t n_params, const kevo_recipe_model *m, const char *source,
                                const char *kernel_name);

/* The number of `for` loops of the input's kernel (its model, parsed on
 * first need); 0 when it does not parse. */
size_t kevo_recipe__input_loops(kevo_recipe_input *in);

/* The traits of the kernel of model m (kevo_recipe_traits). */
int kevo_recipe__traits(char **out, const kevo_recipe_model *m);

/* Shared helpers for recipes (loops.c). */

/* Depth of the perfect nest rooted at loop l: 1 + that of its sole child
 * when the child carries no pragma. */
int kevo_recipe_perfect_depth(const kevo_recipe_model *m, int l);
/* The band of loop l: how many loops from l down the perfect nest are simple
 * and rectangular (bounds use no induction variable of the loops above them
 * in the band and are not written in the nest), capped at `max`; with
 * strided_ok, loops stepping by a positive constant count too. *why gets
 * the reason the band stops (static buffer of the caller, may be NULL). */
int kevo_recipe_band(const kevo_recipe_model *m, int l, int max, bool strided_ok, char *why,
                     size_t why_len);
/* The reason a recipe declines loop L, which can leave early: "the loop at
 * line N can leave early (break, return or goto)", written into buf. */
const char *kevo_recipe_early_exit_why(char *buf, size_t len, const kevo_rloop *L);
/* Why loop l's body is not exactly one loop (for messages). */
void kevo_recipe_not_perfect_why(char *why, size_t len, const kevo_recipe_model *m, int l);
/* A recipe's loop parameter `index` (-1: its own choice): KEVO_EINVAL when
 * the kernel has no for loop, or index names none ("loop index N is out of
 * range"); 0 otherwise. */
int kevo_recipe_loop_index_check(const kevo_recipe_model *m, long index);
/* The k-th loop of the perfect nest below l (k = 0 is l). */
int kevo_recipe_nest_loop(const kevo_recipe_model *m, int l, int k);
/* A name based on `base` that appears nowhere in the source as a word and is
 * not in taken[0..n_taken). Writes into buf. */
void kevo_recipe_fresh_name(char *buf, size_t size, const kevo_recipe_model *m, const char *base,
                            const char *suffix, char taken[][64], size_t n_taken);
/* The kernel's name (the identifier before the first `(` of its
 * definition), into name[0..size). */
void kevo_recipe_kernel_name(char *name, size_t size, const kevo_recipe_model *m);
/* Insert `pragma_text` (without newline) as its own line directly above loop
 * l, keeping indentation. */
int kevo_recipe_insert_pragma(kevo_cparse_edits *e, const kevo_recipe_model *m, int l,
                              const char *pragma_text);

/* Decline because loop l carries a pragma: "the loop at line N carries
 * '#pragma ...': apply WHAT before pragma recipes". */
int kevo_recipe_pragma_decline(const kevo_recipe_model *m, const char *what, int l);
/* The collapse(n) of directive d (1 when absent). */
int kevo_recipe_pragma_collapse(const kevo_recipe_model *m, int d);
/* The enclosing loop whose OpenMP loop directive collapses loop l into it,
 * or -1. */
int kevo_recipe_collapsed_into(const kevo_recipe_model *m, int l);
/* Text of the first directive attached to loop l with one of `flags`
 * (KEVO_PRAGMA_*): *len bytes at the returned pointer ("" when none). */
const char *kevo_recipe_pragma_text(const kevo_recipe_model *m, int l, unsigned flags, int *len);

#endif
