/*
 * kevo/recipe.h - source-rewrite recipes: the transformations kevo's offline
 * generator applies to a start point (a C11 file defining one kernel
 * function) to produce new candidates.
 *
 * A recipe is a named, parameterised rewrite ("tile", "omp_parallel", ...)
 * implemented on libclang: it parses the candidate, finds the kernel
 * function, its parameters and its `for` loops, checks the recipe's
 * precondition and edits the text by source offsets. A recipe never changes
 * text outside the kernel function, except the optional first line
 * `// kevo: cflags ...` that carries build flags (see kevo_recipe_cflags_*).
 *
 * A candidate is a start point plus an ordered list of steps (recipe name +
 * parameters); kevo_recipe_chain_to_json() records exactly what was tried so
 * that it can be replayed with kevo_recipe_apply_chain().
 *
 * Recipes check structure, not full legality: they decline on the cases they
 * can recognise as wrong (imperfect nests, loop-carried scalars, stores that
 * would race), but a rewritten candidate is trusted only after kevo's
 * correctness gate. docs/recipes.md lists each recipe's precondition.
 *
 * Errors: 0 on success; KEVO_EINVAL when a recipe does not apply (the reason,
 * in words a person and an LLM can act on, is in kevo_error_last()), when the
 * source does not parse, the kernel is missing, or a parameter is out of
 * range; KEVO_ENOTFOUND for an unknown recipe name; KEVO_ENOMEM; KEVO_EINFRA
 * when libclang itself fails; KEVO_ERROR ("recipe bug") when a recipe produced
 * a source that no longer parses or edited outside the kernel - never handed
 * out as a candidate.
 */
#ifndef KEVO_RECIPE_H
#define KEVO_RECIPE_H

#include "kevo/common.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most parameters any recipe takes. */
#define KEVO_RECIPE_MAX_PARAMS 5

/* One parameter of a recipe, as documented in the registry. Parameters are
 * positional (the order of kevo_recipe_desc.params); a missing trailing
 * parameter takes its default. */
typedef struct kevo_recipe_param_desc {
    const char *name;        /* e.g. "collapse" */
    const char *description; /* one line */
    long def;                /* default value */
    long min, max;           /* accepted range, inclusive */
    long choices[8];         /* sensible values kevo_recipe_params_mutate() picks from */
    size_t n_choices;
} kevo_recipe_param_desc;

/* One recipe in the static registry. All strings are static. */
typedef struct kevo_recipe_desc {
    const char *name;         /* "tile" */
    const char *description;  /* what it does */
    const char *precondition; /* when it applies, in one sentence */
    const kevo_recipe_param_desc *params;
    size_t n_params;
    const char *backend; /* the candidates it rewrites: "c" or "opencl" */
} kevo_recipe_desc;

/* The registry, in a fixed order. Borrowed, static; *out_n gets the count. */
const kevo_recipe_desc *kevo_recipe_list(size_t *out_n);

/* Look a recipe up by name. Borrowed, static; NULL when unknown. */
const kevo_recipe_desc *kevo_recipe_find(const char *name);

/* Check whether `recipe`, with its default parameters, applies to the kernel
 * `kernel_name` defined in `source`.
 * out_applicable: true when it applies.
 * out_reason: may be NULL; otherwise set to a malloc'd explanation when it
 *   does not apply (caller frees), NULL when it does.
 * Returns 0 whether or not the recipe applies; KEVO_ENOTFOUND for an unknown
 * recipe, KEVO_ENOMEM, KEVO_EINFRA, KEVO_ERROR. A source that does not parse or lacks
 * the kernel is reported as "not applicable" with the reason. */
int kevo_recipe_check(bool *out_applicable, char **out_reason, const char *recipe,
                      const char *source, const char *kernel_name);

/* Apply `recipe` with `params` (n_params values in the order of the
 * registry's params; NULL/0 means all defaults) to `source`.
 * out_source: on success a malloc'd rewritten source (caller frees); NULL on
 *   error.
 * Returns 0, or KEVO_EINVAL with the reason when the recipe does not apply or
 * a parameter is out of range, KEVO_ENOTFOUND for an unknown recipe. */
int kevo_recipe_apply(char **out_source, const char *recipe, const long *params, size_t n_params,
                      const char *source, const char *kernel_name);

/* One step of a candidate: a recipe and its parameters. `recipe` points at a
 * registry name (static) or at a string the caller owns. */
typedef struct kevo_recipe_step {
    const char *recipe;
    long params[KEVO_RECIPE_MAX_PARAMS];
    size_t n_params; /* how many of params[] are given; the rest take defaults */
} kevo_recipe_step;

/* Apply steps[0..n) in order, each to the previous result. On failure the
 * message names the step ("step 2 (tile): ..."). out_source as for
 * kevo_recipe_apply(). n == 0 returns a copy of source. */
int kevo_recipe_apply_chain(char **out_source, const kevo_recipe_step *steps, size_t n,
                            const char *source, const char *kernel_name);

/* Serialise a chain as a JSON array, every parameter by name with defaults
 * filled in, e.g. [{"recipe":"tile","params":{"loop":-1,"depth":2,...}}].
 * The "flags" step also carries a readable "flags" string. *out_json is
 * malloc'd (caller frees). KEVO_ENOTFOUND for an unknown recipe. */
int kevo_recipe_chain_to_json(char **out_json, const kevo_recipe_step *steps, size_t n);

/* Parse a chain written by kevo_recipe_chain_to_json() (params may also be
 * a positional array, or omitted for defaults). *out_steps is a malloc'd
 * array of *out_n steps whose `recipe` fields point at registry names; free
 * it with kevo_recipe_chain_free(). KEVO_EINVAL names the bad element. */
int kevo_recipe_chain_from_json(kevo_recipe_step **out_steps, size_t *out_n, const char *json);

/* Free a chain from kevo_recipe_chain_from_json(). Accepts NULL. */
void kevo_recipe_chain_free(kevo_recipe_step *steps);

/* The default parameters of `recipe`: out_params (room for
 * KEVO_RECIPE_MAX_PARAMS) gets desc->n_params values, *out_n their count.
 * KEVO_ENOTFOUND for an unknown recipe. */
int kevo_recipe_params_default(long *out_params, size_t *out_n, const char *recipe);

/* Change one parameter of `recipe` (params holds desc->n_params values) to a
 * different sensible value drawn with `rng`: tile sizes among 16/32/64/128,
 * unroll factors among 2/4/8/16, collapse among 1..depth, and so on. When
 * `source` and `kernel_name` are given (both may be NULL) the choices are
 * narrowed to what the kernel's loop nests allow (collapse and tile depth up
 * to the deepest perfect nest, loop indices that root a nest) and to values
 * with which the recipe applies to it (never the unroll factor the loops
 * already have, nor a flag set already on the cflags line).
 * out_changed: false when the recipe has no parameter with an alternative
 *   (with a source: none whose change still applies; params are then left
 *   as they are).
 * Returns 0, KEVO_ENOTFOUND for an unknown recipe, KEVO_ENOMEM. */
int kevo_recipe_params_mutate(bool *out_changed, long *params, kevo_rng *rng, const char *recipe,
                              const char *source, const char *kernel_name);

/* The structural traits of the kernel `kernel_name` in the C `source`, as
 * a malloc'd space-separated list (possibly empty) of: "deep-nest" (loops
 * nested three deep), "fp-reduction" (a loop accumulates into a
 * floating-point scalar), "libm-call" (calls expf, tanhf, sqrtf, ...).
 * The built-in generator learns recipe values per trait, so that what paid
 * on one category carries to kernels of another that share the trait.
 * KEVO_EINVAL when the source does not parse or lacks the kernel. */
int kevo_recipe_traits(char **out, const char *source, const char *kernel_name);

/* The traits (kevo_recipe_traits' words, space-separated) an arm is written
 * for, when its payoff turns on one of them rather than on the operator:
 * the `flags` sets that relax the maths are what vectorises libm calls
 * ("libm-call") and floating-point reductions ("fp-reduction"); on a kernel
 * without those traits they change nothing. `variant`: the value of the
 * recipe's variant parameter (`flags`: the set), -1 for the recipe as a
 * whole. Static; NULL when the arm targets no trait (most recipes) or the
 * recipe is unknown. The built-in generator tries such an arm on the first
 * kernel of each trait signature that has the trait, before what other
 * kernels of the category measured can rule it out. */
const char *kevo_recipe_arm_traits(const char *recipe, long variant);

/* --- one parse, several recipes ------------------------------------------ */

/* A candidate to run several recipes on, parsed once: the source is parsed
 * (with libclang) the first time a recipe needs its model, and the model
 * is kept for every later check, apply, mutation or traits on the same
 * input. The source-taking calls above parse each time.
 * kevo_recipe_input_new() parses nothing yet; *out is the caller's, freed
 * with kevo_recipe_input_free() (accepts NULL). It borrows `source`, which
 * must outlive it, and copies `kernel_name`. KEVO_ENOMEM. */
typedef struct kevo_recipe_input kevo_recipe_input;
int kevo_recipe_input_new(kevo_recipe_input **out, const char *source, const char *kernel_name);
void kevo_recipe_input_free(kevo_recipe_input *in);

/* Whether `recipe` with `params` (NULL/0: the defaults) applies to the
 * input: as kevo_recipe_check(), except that the rewritten source is not
 * parsed again (that guard against recipe bugs is kevo_recipe_apply's and
 * kevo_recipe_input_apply's, whose output is handed out). */
int kevo_recipe_input_check(bool *out_applicable, char **out_reason, const char *recipe,
                            const long *params, size_t n_params, kevo_recipe_input *in);

/* As kevo_recipe_apply(), on the input's kept model; the rewritten source
 * (a new text) is parsed once more, as the guard. */
int kevo_recipe_input_apply(char **out_source, const char *recipe, const long *params,
                            size_t n_params, kevo_recipe_input *in);

/* As kevo_recipe_params_mutate() with the input's source and kernel (in
 * may be NULL: the static choices). */
int kevo_recipe_input_params_mutate(bool *out_changed, long *params, kevo_rng *rng,
                                    const char *recipe, kevo_recipe_input *in);

/* As kevo_recipe_traits() on the input. */
int kevo_recipe_input_traits(char **out, kevo_recipe_input *in);

/* --- OpenCL --------------------------------------------------------------- */


/* Whether `source` is an OpenCL candidate (a `// kevo: launch` line in its
 * leading comment block). Recipes are per backend (kevo_recipe_desc.backend);
 * a recipe declines a source of another backend. */
bool kevo_recipe_is_opencl(const char *source);

/* --- one task's kernel for another task ----------------------------------- */

/* `source` (a C kernel of task `from`) rewritten for task `to`, which
 * computes the same function with another prototype (a PyTorch-defined task
 * and the kevo C task translating the same KernelBench problem): renamed
 * to to->name, with to's parameter list (buffers paired in order within
 * inputs and within outputs, same types, keeping from's names; to's scalars
 * as kb_NAME; inputs of to's beyond from's are passed as kb_unused_NAME) and from's scalars declared first in the body, from to's
 * sizes (a dimension of from that is exactly the size, at the same place
 * in to's buffer, or all of to's dimensions for a flat buffer; a size no
 * shape shows, a group count say, keeps from's timed value). KEVO_EINVAL
 * saying why when the two do not pair. *out is the caller's. Correctness
 * is not checked here (kevo eval it). */
int kevo_recipe_adapt_signature(char **out, const char *source, const kevo_task *from,
                                const kevo_task *to);

/* --- build flags carried by the candidate's first line ------------------- */

/* True when `flag` is one of the build flags a candidate may ask for:
 * -O2 -O3 -march=native -mtune=native -funroll-loops -ffast-math
 * -fno-math-errno -ffp-contract=fast -fopenmp -fopenmp-simd
 * -mprefer-vector-width=512. */
bool kevo_cflags_allowed(const char *flag);

/* The flags of the `// kevo: cflags ...` first line of `source`, single-space
 * separated, as written (not filtered: check each with kevo_cflags_allowed()).
 * *out_flags is malloc'd (caller frees); "" when the source has no such line.
 */
int kevo_recipe_cflags_get(char **out_flags, const char *source);

/* Add space-separated `flags` to the source's cflags line, creating the line
 * when missing. Flags already present are not repeated; a new -O level
 * replaces the old one. Every flag must pass kevo_cflags_allowed(), otherwise
 * KEVO_EINVAL naming it. *out_source is malloc'd (caller frees);
 * out_changed (may be NULL) tells whether the flags changed. */
int kevo_recipe_cflags_add(char **out_source, bool *out_changed, const char *source,
                           const char *flags);

#ifdef __cplusplus
}
#endif
#endif
