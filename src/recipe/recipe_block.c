/*
 * recipe/recipe_block.c - the `register_block` recipe: register blocking
 * in one step, as a chain of the loop recipes on the kernel's text:
 *   1. the loop `vectorize` would run in lanes among those holding other
 *      loops (the column loop around a reduction loop); when there is none,
 *      `interchange` first (the row-update matmul: it sinks the row's
 *      scalars and swaps k and j) and look again; else the loop it would
 *      pick among all (a reduction loop: the dot products of x W^T);
 *   2. `unroll_jam` of the loop around it by `rows` (skipped when it does
 *      not apply: then one accumulator per lane);
 *   3. `vectorize` (loop -1, `width`).
 * With `pack` 1 (the default), one copy of the operand the vector loads
 * read: on the dot-product forms (`x W^T`, `A B^T`) `pack` layout 1 first,
 * the operand read strided in the column loop transposed so that the
 * column loop runs in lanes, and nothing more; elsewhere (or when the
 * chain does not go through on the transposed text) `pack` layout 0 last
 * when it applies, the vector loads copied into panels: the GEMM schedule
 * in one move. With `pack` 2, the transposed copy and then panels of it,
 * declining where layout 1 does not apply: two copies of the operand per
 * call, which cost more than the panels give on this machine
 * (matmul_trans_b at 333x1021x517: 0.54x of OpenBLAS against 0.82x with
 * one copy; the Level 2 x W^T GEMMs: 1.4-1.9x the speed; docs/recipes.md).
 * With `cols` > 1 (default 2), last, `unroll_jam` of the blocked vector
 * loop by `cols` (jam_columns()): rows x cols accumulators, the reduction
 * loop kept rolled (`unroll` factor 1: -funroll-loops spilled them);
 * skipped where it does not apply.
 * The built-in generator adds one recipe per attempt and keeps the fastest
 * kernel as the next start point, so it would not walk through the slow
 * intermediate (an interchanged matmul reads B by columns) to the fast
 * chain: this recipe is that walk as one move.
 *
 * Must not: edit text itself (each step is its recipe's own rewrite).
 */
#include "model.h"

#include "kevo/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Intermediate models, kept per thread: the sweep and the generator's
 * probes run register_block on one source with many (rows, width): the
 * interchanged text and the jammed one (per rows) are the same each time, and a libclang parse (~5
 * ms) was most of the recipe's cost. An entry owns its text and model; at most 6 are in use in one
 * call, so 8 entries never evict one a call still holds. */
#define MODEL_CACHE 8
typedef struct model_entry {
    uint64_t hash;
    char *text, *name;
    kevo_recipe_model *model;
    unsigned long used;
} model_entry;
static _Thread_local model_entry model_cache[MODEL_CACHE];
static _Thread_local unsigned long model_clock;

/* The model of `text` (kernel `name`), from the cache or parsed into it;
 * borrowed (valid for this call of the recipe). */
static int cached_parse(const kevo_recipe_model **out, const char *text, const char *name)
{
    size_t len = strlen(text);
    uint64_t h = kevo_hash64(text, len, 0x9e3779b97f4a7c15ull);
    model_entry *victim = &model_cache[0];
    for (size_t i = 0; i < MODEL_CACHE; i++) {
        model_entry *e = &model_cache[i];
        if (e->model && e->hash == h && !strcmp(e->text, text) && !strcmp(e->name, name)) {
            e->used = ++model_clock;
            *out = e->model;
            return 0;
        }
        if (e->used < victim->used)
            victim = e;
    }
    char *t = strdup(text), *n = strdup(name);
    kevo_recipe_model *mm = NULL;
    if (!t || !n) {
        free(t);
        free(n);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    int error = kevo_recipe_model_parse(&mm, t, n);
    if (error < 0) {
        free(t);
        free(n);
        return error;
    }
    kevo_recipe_model_free(victim->model);
    free(victim->text);
    free(victim->name);
    victim->hash = h;
    victim->text = t;
    victim->name = n;
    victim->model = mm;
    victim->used = ++model_clock;
    *out = mm;
    return 0;
}

/* error, and when it is a decline (KEVO_EINVAL) its reason put after
 * `what`: "WHAT: REASON", still KEVO_EINVAL. */
static int decline_because(int error, const char *what)
{
    if (error != KEVO_EINVAL)
        return error;
    char why[600];
    snprintf(why, sizeof(why), "%s", kevo_error_last());
    return kevo_error_set(KEVO_EINVAL, "%s: %s", what, why);
}

/* The kernel's name: the identifier before the parameter list. */
static int kernel_name(char *buf, size_t size, const kevo_recipe_model *m)
{
    for (unsigned t = 0; t + 1 < m->t_fbody && t + 1 < m->n_tok; t++)
        if (m->tok[t].kind == KEVO_CTOK_IDENT && kevo_rtok_is(m, t + 1, "(")) {
            size_t n;
            const char *s = kevo_rtok_text(m, t, &n);
            snprintf(buf, size, "%.*s", (int)n, s);
            return 0;
        }
    return kevo_error_set(KEVO_ERROR, "recipe bug: no kernel name in the model");
}

/* The row-update matmul (k outside j): `unroll_jam` of the row loop on the
 * kernel as written, then `interchange` and `vectorize` of the jammed nest,
 * then the vector loop's scalar remainder interchanged back (k outside the
 * few columns left). Jamming before the interchange leaves the remainder
 * rows (M % rows) in the order they were written: jammed after it, they ran
 * the interchanged nest, reading B by columns over all of N x K (on
 * matmul_rect's M=1000 with rows 6, four such rows cost more than the 996
 * blocked ones). `around` is the row loop's index in the interchanged model
 * `sm`: interchange leaves the loops before the pair it swaps where they
 * were, and the row loop holds the pair. Returns 0 and *out, or < 0 when a
 * step does not apply (the caller then jams after the interchange). */
static int jam_then_interchange(char **out, const kevo_recipe_model *m, const char *source,
                                const kevo_recipe_model *sm, int around, const long *params,
                                const char *name)
{
    char *jammed = NULL, *swapped = NULL, *vec = NULL;
    const kevo_recipe_model *jm = NULL, *xm = NULL, *vm = NULL;
    int error = KEVO_EINVAL, v;
    *out = NULL;
    if (around < 0 || (size_t)around >= m->n_loop || m->loop[around].var < 0 ||
        sm->loop[around].var < 0 ||
        strcmp(m->var[m->loop[around].var].name, sm->var[sm->loop[around].var].name) != 0)
        return KEVO_EINVAL;
    long jp[2] = {around, params[0]}, ip[1] = {-1}, vp[2] = {-1, params[1]};
    if (kevo_recipe__rewrite_parsed(&jammed, "unroll_jam", jp, 2, m, source, name) < 0 ||
        cached_parse(&jm, jammed, name) < 0 ||
        kevo_recipe__rewrite_parsed(&swapped, "interchange", ip, 1, jm, jammed, name) < 0 ||
        cached_parse(&xm, swapped, name) < 0 || (v = kevo_recipe__vectorize_pick(xm, true)) < 0 ||
        xm->loop[v].parent != around ||
        kevo_recipe__rewrite_parsed(&vec, "vectorize", vp, 2, xm, swapped, name) < 0)
        goto out;
    /* the remainder columns: k back outside them, as the kernel had it */
    error = 0;
    *out = vec;
    vec = NULL;
    if (cached_parse(&vm, *out, name) == 0)
        for (size_t l = 0; l < vm->n_loop; l++)
            if (vm->loop[l].parent == around && kevo_recipe_vector_tail(vm, (int)l) &&
                vm->loop[l].sole_child >= 0) {
                long tp[1] = {(long)l};
                char *back = NULL;
                if (kevo_recipe__rewrite_parsed(&back, "interchange", tp, 1, vm, *out, name) == 0) {
                    free(*out);
                    *out = back;
                }
                break;
            }
out:
    kevo_error_clear();
    free(jammed);
    free(swapped);
    free(vec);
    return error;
}

/* The rows unroll_jam leaves vectorised as the blocked rows are: its tail
 * block (`tail` 1: the last `rows` rows again, jammed, the row variable a
 * local `T i = E - F;` inside an `if` block) and its remainder loop (`for
 * (T i = split; i < b; i++)`, the nest as written: on the dot-product form
 * after `pack` layout 1 (matmul_trans_b), they read the transposed operand
 * down its columns, one element a row apart per k, and the 5 rows M=333
 * leaves of 8 cost a third of the kernel). The region of each, in tokens:
 * which 0 the tail block (from the row variable's declaration to the end of
 * its block), 1 the remainder loop. False when there is none. */
static bool rest_region(unsigned *t0, unsigned *t1, const kevo_recipe_model *rm,
                        const char *row_var, int which)
{
    for (size_t v = 0; v < rm->n_var; v++) {
        if (strcmp(rm->var[v].name, row_var) != 0)
            continue;
        int of = -1;
        for (size_t k = 0; k < rm->n_loop && of < 0; k++)
            if (rm->loop[k].var == (int)v)
                of = (int)k;
        if (which == 1 && of >= 0 && rm->loop[of].simple) {
            *t0 = rm->loop[of].t_for;
            *t1 = rm->loop[of].t_end;
            return true;
        }
        if (which == 0 && of < 0) {
            unsigned d = 0;
            while (d < rm->n_tok && rm->tok[d].start < rm->var[v].decl_off)
                d++;
            unsigned open = d; /* the `{` of the block declaring it */
            while (open > rm->t_fbody && !kevo_rtok_is(rm, open, "{"))
                open--;
            unsigned close = kevo_rtok_match(rm, open);
            if (d >= rm->n_tok || open <= rm->t_fbody || close == (unsigned)-1)
                continue;
            *t0 = d;
            *t1 = close;
            return true;
        }
    }
    return false;
}

/* Vectorise the loop vectorize would pick in the rows' tail block (which
 * 0) or remainder loop (1), with `width`; *done unchanged where there is
 * none or it declines. */
static void vectorize_remainder(char **done, const char *row_var, int which, long width,
                                const char *name)
{
    const kevo_recipe_model *rm = NULL;
    char *vec = NULL;
    unsigned t0, t1;
    int v;
    if (cached_parse(&rm, *done, name) < 0 || !rest_region(&t0, &t1, rm, row_var, which) ||
        (v = kevo_recipe__vectorize_pick_within(rm, true, t0, t1)) < 0) {
        kevo_error_clear();
        return;
    }
    long vp[2] = {v, width};
    if (kevo_recipe__rewrite_parsed(&vec, "vectorize", vp, 2, rm, *done, name) == 0) {
        free(*done);
        *done = vec;
    }
    kevo_error_clear();
}

/* `cols` vectors per row: unroll_jam of the blocked vector loop (the first
 * loop stepping by a number of lanes that holds the reduction loop: the
 * packed branch comes before the unpacked one, the blocked rows before the
 * remainder rows) by `cols`, so that each broadcast of A feeds `cols` FMAs
 * and rows x cols accumulators hide the FMA latency (rows 8 x 1 on AVX2
 * has 8 FMAs in flight where two pipes of latency 5 need 10). Declines
 * KEVO_EINVAL where the jam does not apply (the caller then keeps cols 1). */
static int jam_columns(char **done, long cols, const char *name)
{
    const kevo_recipe_model *dm = NULL;
    int error = cached_parse(&dm, *done, name);
    if (error < 0)
        return error;
    int v = -1;
    for (size_t l = 0; l < dm->n_loop && v < 0; l++)
        if (dm->loop[l].n_children > 0 && kevo_recipe_vector_loop(dm, (int)l))
            v = (int)l;
    if (v < 0)
        return kevo_error_set(KEVO_EINVAL,
                              "cols %ld: no vector loop holding the reduction loop "
                              "to jam",
                              cols);
    long jp[2] = {v, cols};
    char *jammed = NULL;
    if ((error = kevo_recipe__rewrite_parsed(&jammed, "unroll_jam", jp, 2, dm, *done, name)) < 0) {
        char what[96];
        snprintf(what, sizeof(what), "cols %ld: unroll_jam of the vector loop at line %u declines",
                 cols, dm->loop[v].line);
        return decline_because(error, what);
    }
    free(*done);
    *done = jammed;
    /* the jammed loop keeps its index; its reduction loops rolled (`unroll`
     * factor 1): under -funroll-loops GCC unrolls them by 2 and spills the
     * rows x cols accumulators (matmul_square 768, rows 6 x cols 2, one Zen 2
     * core: 60 GFLOP/s unrolled, 95 rolled) */
    const kevo_recipe_model *jm = NULL;
    if ((error = cached_parse(&jm, *done, name)) < 0)
        return error;
    for (size_t l = 0; l < jm->n_loop; l++) {
        if (jm->loop[l].parent != v || jm->loop[l].n_children > 0)
            continue;
        long up[2] = {1, (long)l};
        char *rolled = NULL;
        if (kevo_recipe__rewrite_parsed(&rolled, "unroll", up, 2, jm, *done, name) == 0) {
            free(*done);
            *done = rolled;
            kevo_error_clear();
            return 0; /* the first: the kept reduction loop */
        }
        kevo_error_clear();
    }
    return 0;
}

/* Whether variable `var` appears in the subscript `[...]` of a read in
 * tokens [t0,t1) (not of an element assigned) that also names variable
 * `with` (with < 0: in any such subscript). */
static bool in_subscript_with(const kevo_recipe_model *m, unsigned t0, unsigned t1, int var,
                              int with)
{
    for (unsigned t = t0; t < t1; t++) {
        if (!kevo_rtok_is(m, t, "["))
            continue;
        unsigned c = kevo_rtok_match(m, t);
        if (c == (unsigned)-1 || c + 1 >= t1 || kevo_rtok_assigns(m, c + 1, true))
            continue;
        bool has_var = false, has_with = with < 0;
        for (unsigned k = t + 1; k < c; k++) {
            has_var |= m->tok[k].var == var;
            has_with |= m->tok[k].var == with;
        }
        if (has_var && has_with)
            return true;
    }
    return false;
}

/* Register reuse: the rows register_block jams should be a loop the vector
 * loads do not depend on, so that its copies share each load and differ
 * only in a broadcast (a GEMM's rows: B[k*N + j] has no i). On a direct
 * convolution the loop around the vector loop `ow` is `oh`, which every
 * load of x names: jammed, each of the rows x cols FMAs loads its own
 * vector, unaligned (conv2d: 30 GFLOP/s on one Zen 2 core). The output
 * channels `oc` are such a loop: jammed, the copies share the x vectors
 * and broadcast w (55 GFLOP/s). When the loop around the vector loop v is
 * named by a subscript that names v's variable, and an enclosing loop A is
 * not but is named by another subscript in v's body, A is interchanged
 * down to just above v (each step `interchange`, A's iterations first
 * checked independent, as unroll_jam checks the loop it jams: then no
 * dependence forbids running them inside the loops below A). Returns 0 with
 * *out the interchanged text, or KEVO_EINVAL where there is no such A or a
 * step declines (the caller keeps the nest as it is). */
static int sink_reuse_loop(char **out, const kevo_recipe_model *m, const char *source, int v,
                           const char *name)
{
    *out = NULL;
    const kevo_rloop *V = &m->loop[v];
    int parent = V->parent;
    if (parent < 0 || V->var < 0 || m->loop[parent].var < 0 ||
        !in_subscript_with(m, V->t_body, V->t_end, m->loop[parent].var, V->var))
        return KEVO_EINVAL;
    int a = -1;
    for (int k = m->loop[parent].parent; k >= 0 && a < 0; k = m->loop[k].parent) {
        int var = m->loop[k].var;
        if (var >= 0 && m->loop[k].simple &&
            !in_subscript_with(m, V->t_body, V->t_end, var, V->var) &&
            in_subscript_with(m, V->t_body, V->t_end, var, -1))
            a = k;
    }
    if (a < 0)
        return KEVO_EINVAL;
    const kevo_rloop *A = &m->loop[a];
    kevo_rscalars sc;
    if (kevo_recipe_scalars(&sc, m, A->t_body, A->t_end, A->t_end) < 0 || sc.n_red > 0 ||
        kevo_recipe_stores_indexed(m, A->t_body, A->t_end, &A->var, 1) < 0 ||
        kevo_recipe_same_index(m, A->t_body, A->t_end) < 0) {
        kevo_error_clear();
        return KEVO_EINVAL;
    }
    char *cur = strdup(source);
    if (!cur)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    const kevo_recipe_model *cm = m;
    /* A is swapped with the loop that is its body, level by level: its
     * index goes one down each time (loops are numbered in source order) */
    for (int steps = V->level - A->level - 1, i = 0; i < steps; i++) {
        long ip[1] = {a + i};
        char *next = NULL;
        if (kevo_recipe__rewrite_parsed(&next, "interchange", ip, 1, cm, cur, name) < 0 ||
            cached_parse(&cm, next, name) < 0) {
            free(next);
            free(cur);
            kevo_error_clear();
            return KEVO_EINVAL;
        }
        free(cur);
        cur = next;
    }
    *out = cur;
    return 0;
}

/* What register_block copies of the operand its vector loads read (the
 * `pack` parameter): nothing; panels of the loads (`pack` layout 0, last,
 * where it applies); the operand read strided in the column loop
 * transposed first (`pack` layout 1: the dot-product forms, x W^T, A B^T)
 * and nothing more; or both, the transposed copy then put in panels. */
typedef enum { COPY_NONE, COPY_PANELS, COPY_TRANSPOSED, COPY_BOTH } copy_mode;

static int block_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                       const long *params, const char *name, copy_mode copies)
{
    char *swapped = NULL, *jammed = NULL, *done = NULL, *panels = NULL, *transposed = NULL;
    const kevo_recipe_model *sm = NULL, *jm = NULL, *dm = NULL, *tm = NULL;
    int error = 0;
    if (copies == COPY_TRANSPOSED || copies == COPY_BOTH) {
        long tp[1] = {1};
        if ((error = kevo_recipe__rewrite_parsed(&transposed, "pack", tp, 1, m, source, name)) <
                0 ||
            (error = cached_parse(&tm, transposed, name)) < 0) {
            free(transposed);
            return decline_because(error, copies == COPY_BOTH
                                              ? "pack 2 needs `pack` layout 1 to apply first, "
                                                "and it does not"
                                              : "the transposed copy (`pack` layout 1) does not "
                                                "apply");
        }
        m = tm;
        source = transposed;
    }
    /* each intermediate text is parsed once, here; the caller's guard
     * parses the result */
    const kevo_recipe_model *cm = m;
    const char *cur = source;
    int v = kevo_recipe__vectorize_pick(m, true);
    if (v < 0) {
        long ip[1] = {-1};
        if (kevo_recipe__rewrite_parsed(&swapped, "interchange", ip, 1, m, source, name) == 0 &&
            cached_parse(&sm, swapped, name) == 0 &&
            (v = kevo_recipe__vectorize_pick(sm, true)) >= 0) {
            cm = sm;
            cur = swapped;
            if (params[0] > 1 &&
                jam_then_interchange(&done, m, source, sm, sm->loop[v].parent, params, name) == 0)
                goto panels;
        }
        kevo_error_clear();
    }
    if (v < 0 && (v = kevo_recipe__vectorize_pick(m, false)) < 0) {
        error = kevo_error_set(KEVO_EINVAL,
                               "vectorize applies to no loop, before or after interchange (see "
                               "its reasons)");
        goto out;
    }
    /* the rows: a loop the vector loads do not name, moved down to the
     * vector loop where the loop around it is one they name */
    if (params[0] > 1) {
        char *sunk = NULL;
        const kevo_recipe_model *km = NULL;
        int kv;
        if (sink_reuse_loop(&sunk, cm, cur, v, name) == 0 && cached_parse(&km, sunk, name) == 0 &&
            (kv = kevo_recipe__vectorize_pick(km, true)) >= 0 && km->loop[kv].parent >= 0) {
            free(swapped);
            swapped = sunk;
            sunk = NULL;
            cm = km;
            cur = swapped;
            v = kv;
        }
        free(sunk);
        kevo_error_clear();
    }
    int around = cm->loop[v].parent;
    if (around >= 0 && params[0] > 1) {
        long jp[3] = {around, params[0], params[4]};
        if (kevo_recipe__rewrite_parsed(&jammed, "unroll_jam", jp, 3, cm, cur, name) < 0 ||
            cached_parse(&jm, jammed, name) < 0) {
            kevo_error_clear(); /* one accumulator per lane, then */
            free(jammed);
            jammed = NULL;
        }
    }
    long vp[2] = {-1, params[1]};
    if (jammed && kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, jm, jammed, name) == 0) {
        const char *row_var = cm->var[cm->loop[around].var].name;
        vectorize_remainder(&done, row_var, 0, params[1], name);
        vectorize_remainder(&done, row_var, 1, params[1], name);
    } else {
        if (!jammed) {
            error = kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, cm, cur, name);
            if (error == KEVO_EINVAL) {
                char why[600];
                snprintf(why, sizeof(why), "%s", kevo_error_last());
                error = kevo_error_set(KEVO_ERROR,
                                       "recipe bug: vectorize declined its own pick: %s", why);
            }
            if (error < 0)
                goto out;
        } else {
            kevo_error_clear(); /* the jammed body did not vectorise: without the jam */
            if ((error = kevo_recipe__rewrite_parsed(&done, "vectorize", vp, 2, cm, cur, name)) < 0)
                goto out;
        }
    }
panels:
    if (copies == COPY_PANELS || copies == COPY_BOTH) {
        long lp[1] = {0};
        if (cached_parse(&dm, done, name) == 0 &&
            kevo_recipe__rewrite_parsed(&panels, "pack", lp, 1, dm, done, name) == 0) {
            free(done);
            done = panels;
            panels = NULL;
        }
        kevo_error_clear();
    }
    /* skipped where it does not apply (a reduction in lanes, a jam that
     * declines): cols 2 is the default, and the rest of the chain stands */
    if (params[3] > 1 && (error = jam_columns(&done, params[3], name)) < 0) {
        if (error != KEVO_EINVAL)
            goto out;
        error = 0;
        kevo_error_clear();
    }
    out->whole = done;
    done = NULL;
out:
    free(transposed);
    free(swapped);
    free(jammed);
    free(done);
    free(panels);
    return error;
}

/* pack 1 (the default): the transposed copy alone where it applies and the
 * chain goes through on it (on matmul_trans_b and the Level 2 x W^T GEMMs
 * 1.4-1.9x the speed of panels, docs/recipes.md), else panels; pack 2: the
 * transposed copy then panels of it (declines where the copy does not
 * apply); pack 3: panels only (what pack 1 was before the transposed copy:
 * where W fits in L2 a reduction in lanes may pay more); pack 0: registers
 * only. */
int kevo_recipe_register_block_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                     const char *source, const long *params)
{
    char name[256];
    int error = kernel_name(name, sizeof(name), m);
    if (error < 0)
        return error;
    if (params[2] == 0)
        return block_apply(out, m, source, params, name, COPY_NONE);
    if (params[2] == 2)
        return block_apply(out, m, source, params, name, COPY_BOTH);
    if (params[2] == 3)
        return block_apply(out, m, source, params, name, COPY_PANELS);
    error = block_apply(out, m, source, params, name, COPY_TRANSPOSED);
    if (error != KEVO_EINVAL)
        return error;
    kevo_error_clear();
    return block_apply(out, m, source, params, name, COPY_PANELS);
}
