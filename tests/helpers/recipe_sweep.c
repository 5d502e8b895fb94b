/*
 * tests/helpers/recipe_sweep.c - the recipe safety sweep (issue 20): runs
 * every C recipe, with every parameter value the built-in generator may
 * choose, on every suite reference; every recipe on the kernels those
 * applications produce (one more step, on a deterministic sample or on all
 * of them); a few deterministic random chains of 6 steps; and, as the
 * generator does, parameters mutated from the defaults of each recipe that
 * applies with its defaults (each must apply too). Every result a recipe
 * declared applicable is compiled with the C backend's own compile line
 * (with --guard also parsed first, as kevo_recipe_input_apply does: twice
 * the time; gcc is the stricter judge) (kevo_c_compile_flags:
 * gcc -std=gnu11 -O3 -march=native, the candidate's cflags line, the forced
 * prototype header) plus -fsyntax-only, each distinct result once: up to
 * 64 results of a task that differ only in the kernel's definition in one
 * translation unit, each definition renamed (a cc1 start is most of the
 * cost of a compile here), and each in its own file when that unit fails.
 * Fails listing every (task, recipe, parameters) whose result does not
 * compile, with gcc's first error line. --break K (the self-test) puts an
 * error in every K-th result's kernel: each must be listed.
 *   recipe_sweep [--level2 sample|all|none] [--per-recipe P] [--stride S]
 *                [--walks N] [--mutations N] [--all-sizes] [--guard] [--break K] [--jobs J]
 *                [--keep] [--emit DIR] SUITE_DIR...
 * Tile sizes: each structural vector (loop, depth) with the default sizes
 * and with sizes drawn in rotation from the choices; --all-sizes: each size
 * alone over all its choices. Step 2 starts from P (--per-recipe, 1) step-1
 * results per recipe, those whose text hashes lowest, and takes each
 * recipe's default vector and one in S (--stride, 12) of the others;
 * --level2 all starts from every step-1 result (with --stride 1: every
 * vector). The mutation check (--mutations, 2 draws per recipe applicable
 * with its defaults) runs on the reference and on step 2's starts; walks
 * (--walks, 2) are 6 steps long.
 * Exit 0 when every applicable result compiles, 1 when some do not (listed
 * on stdout), 2 on bad usage or input, 3 when gcc cannot be run.
 *
 * Must not: run a compiled kernel (the results are only compiled, never
 * linked or run), or judge correctness (the verifier does).
 */
#include "kevo/recipe.h"
#include "kevo/sys/backend.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "recipe/model.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_VECTORS 4096
#define BATCH 24

/* One distinct rewritten source of a task and the applications that gave it. */
typedef struct variant {
    char *text;
    uint64_t hash;
    kevo_buf labels; /* one "recipe(params) <- chain" line per application */
    size_t n_apps;
    int level;          /* 0: the reference, 1: one step, 2: two steps, 3+: walks */
    char *error;        /* gcc's first error line, or NULL when it compiles */
    char *hint_key;     /* the cflags of its first line, joined */
    char **hint;        /* kevo_cflags_parse */
    bool hint_bad;      /* the cflags line is refused by the backend */
    bool split;         /* text = prelude + the kernel's definition [f0, f1) + rest */
    size_t f0, f1;
} variant;

typedef struct task_run {
    kevo_task *task;
    char *dir; /* temporary folder with proto.h and v<N>.c */
    variant *v;
    size_t n, cap;
} task_run;

typedef struct counts {
    size_t tried, applicable, recipe_bugs;
} counts;

static counts by_level[5];
/* where the rewriting time goes: seconds and applications per recipe */
static double recipe_s[32];
static size_t recipe_n[32];
static bool guard;     /* --guard: parse each distinct result as kevo_recipe_input_apply does */
static long break_every; /* --break K: every K-th result gets an error in its kernel (self-test) */
static size_t n_broken;
static size_t n_units, n_in_units, n_alone; /* combined units and their results; files alone */
static bool all_sizes; /* --all-sizes: every size choice on every structural vector */

/* Whether parameter p is varied in rotation across the structural vectors
 * rather than multiplied into them: register_block's `pack` and `cols`
 * (rows x width x pack x cols was 64 vectors per kernel, each a chain of
 * four recipes). */
static bool rotated(const kevo_recipe_param_desc *p)
{
    return (!strcmp(p->name, "pack") || !strcmp(p->name, "cols")) && p->n_choices > 1;
}

/* Parameter vectors of recipe d to sweep on a kernel with n_loop loops:
 * the cartesian product of the structural parameters (loop -1..n_loop-1,
 * collapse 1..4, depth, all_nests, factor, set: default and every choice),
 * with the tile sizes and the rotated parameters at their defaults, then
 * one vector more per structural vector with the rotated ones varied, then
 * each size varied alone over its choices when `sizes` is set. */
static size_t param_vectors(long (*out)[KEVO_RECIPE_MAX_PARAMS], const kevo_recipe_desc *d,
                            size_t n_loop, bool sizes)
{
    long vals[KEVO_RECIPE_MAX_PARAMS][64];
    size_t nv[KEVO_RECIPE_MAX_PARAMS];
    size_t n = 0;
    for (size_t i = 0; i < d->n_params; i++) {
        const kevo_recipe_param_desc *p = &d->params[i];
        nv[i] = 0;
        if (!strncmp(p->name, "size", 4) || rotated(p)) {
            vals[i][nv[i]++] = p->def;
            continue;
        }
        if (!strcmp(p->name, "loop")) {
            for (long l = -1; l < (long)n_loop && nv[i] < 64; l++)
                vals[i][nv[i]++] = l;
            continue;
        }
        if (!strcmp(p->name, "collapse")) {
            for (long c = 1; c <= 4 && c <= p->max; c++)
                vals[i][nv[i]++] = c;
            continue;
        }
        vals[i][nv[i]++] = p->def;
        for (size_t k = 0; k < p->n_choices && nv[i] < 64; k++) {
            bool seen = false;
            for (size_t j = 0; j < nv[i]; j++)
                seen |= vals[i][j] == p->choices[k];
            if (!seen)
                vals[i][nv[i]++] = p->choices[k];
        }
    }
    size_t idx[KEVO_RECIPE_MAX_PARAMS] = {0};
    for (;;) {
        if (n == MAX_VECTORS)
            break;
        for (size_t i = 0; i < d->n_params; i++)
            out[n][i] = vals[i][idx[i]];
        n++;
        size_t i = 0;
        while (i < d->n_params && ++idx[i] == nv[i])
            idx[i++] = 0;
        if (i == d->n_params)
            break;
    }
    /* the rotated parameters: one more vector per structural one whose
     * rotated values differ from the defaults, value index (b / n_before)
     * % n_choices, so that every combination of them appears */
    size_t base0 = n;
    for (size_t b = 0; b < base0 && n < MAX_VECTORS; b++) {
        bool other = false;
        size_t div = 1;
        memcpy(out[n], out[b], sizeof(out[n]));
        for (size_t i = 0; i < d->n_params; i++) {
            const kevo_recipe_param_desc *p = &d->params[i];
            if (!rotated(p))
                continue;
            out[n][i] = p->choices[(b / div) % p->n_choices];
            other |= out[n][i] != p->def;
            div *= p->n_choices;
        }
        n += other;
    }
    if (!sizes)
        return n;
    size_t base = n;
    if (!all_sizes) {
        /* one more vector per structural one, its sizes drawn in rotation
         * from the choices, so that every size value is swept */
        for (size_t b = 0; b < base && n < MAX_VECTORS; b++) {
            bool any = false;
            memcpy(out[n], out[b], sizeof(out[n]));
            for (size_t i = 0; i < d->n_params; i++) {
                const kevo_recipe_param_desc *p = &d->params[i];
                if (strncmp(p->name, "size", 4) != 0 || p->n_choices == 0)
                    continue;
                out[n][i] = p->choices[(b + i) % p->n_choices];
                any = true;
            }
            n += any;
        }
        return n;
    }
    /* each tile size alone over its choices, on every structural vector */
    for (size_t i = 0; i < d->n_params; i++) {
        const kevo_recipe_param_desc *p = &d->params[i];
        if (strncmp(p->name, "size", 4) != 0)
            continue;
        for (size_t k = 0; k < p->n_choices; k++) {
            if (p->choices[k] == p->def)
                continue;
            for (size_t b = 0; b < base && n < MAX_VECTORS; b++) {
                memcpy(out[n], out[b], sizeof(out[n]));
                out[n][i] = p->choices[k];
                n++;
            }
        }
    }
    return n;
}

static void label_of(char *buf, size_t size, const kevo_recipe_desc *d, const long *p)
{
    size_t n = (size_t)snprintf(buf, size, "%s", d->name);
    for (size_t i = 0; i < d->n_params && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%ld", i ? "," : "(", d->params[i].name,
                              p[i]);
    if (d->n_params && n < size)
        snprintf(buf + n, size - n, ")");
}

/* Record `text` (taken) as produced by `label` after `chain`; returns its
 * variant index or < 0. */
static long add_variant(task_run *t, char *text, const char *label, const char *chain, int level)
{
    uint64_t h = kevo_hash64(text, strlen(text), 7);
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].hash == h && !strcmp(t->v[i].text, text)) {
            free(text);
            if (t->v[i].n_apps++ < 64)
                kevo_buf_printf(&t->v[i].labels, "%s%s%s\n", label, chain[0] ? " after " : "",
                                chain);
            return (long)i;
        }
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        variant *v = realloc(t->v, cap * sizeof(*v));
        if (!v) {
            free(text);
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        }
        t->v = v;
        t->cap = cap;
    }
    variant *v = &t->v[t->n];
    memset(v, 0, sizeof(*v));
    v->text = text;
    v->hash = h;
    v->level = level;
    v->n_apps = 1;
    kevo_buf_printf(&v->labels, "%s%s%s\n", label, chain[0] ? " after " : "", chain);
    if (guard && level > 0 && !v->error) {
        /* the guard kevo_recipe_input_apply runs: the result must parse */
        kevo_recipe_model *m = NULL;
        int e = kevo_recipe_model_parse(&m, text, t->task->name);
        kevo_recipe_model_free(m);
        if (e == KEVO_EINVAL) {
            kevo_buf b = {0};
            kevo_buf_printf(&b, "recipe bug: the rewritten source fails: %s", kevo_error_last());
            v->error = kevo_buf_detach(&b);
            by_level[level > 4 ? 4 : level].recipe_bugs++;
        } else if (e < 0) {
            return e;
        }
    }
    if (kevo_cflags_parse(&v->hint, text) < 0) {
        v->hint_bad = true;
        if (!v->error)
            v->error = strdup(kevo_error_last());
    }
    kevo_buf key = {0};
    for (char **f = v->hint; f && *f; f++)
        kevo_buf_printf(&key, "%s ", *f);
    v->hint_key = kevo_buf_detach(&key);
    if (!v->hint_key)
        v->hint_key = strdup("");
    return (long)t->n++;
}

/* The chain that produced variant i (its first label), for labels of the
 * next step. */
static const char *chain_of(const task_run *t, size_t i, char *buf, size_t size)
{
    const char *l = kevo_buf_cstr(&t->v[i].labels);
    const char *e = strchr(l, '\n');
    snprintf(buf, size, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
    return buf;
}

#define DECLINED (-1000L)
static char last_decline[1024]; /* the reason of the last DECLINED */

/* Rewrite `in` with recipe d and parameters p, as the generator would
 * (kevo_recipe_input_apply: the recipe, then the guard, which add_variant
 * runs once per distinct result). Returns the variant index, DECLINED when
 * the recipe does not apply, or an error < 0. A rewrite that fails for
 * another reason (a recipe bug: an edit outside the kernel) is a variant
 * with that error. */
static long apply_one(task_run *t, kevo_recipe_input *in, const kevo_recipe_desc *d, const long *p,
                      const char *chain, int level)
{
    char *text = NULL, label[256];
    size_t n_desc;
    size_t r = (size_t)(d - kevo_recipe_list(&n_desc));
    by_level[level].tried++;
    double t0 = kevo_now_s();
    int e = kevo_recipe__input_rewrite(&text, d->name, p, d->n_params, in);
    if (r < 32) {
        recipe_s[r] += kevo_now_s() - t0;
        recipe_n[r]++;
    }
    if (e == KEVO_EINVAL) {
        snprintf(last_decline, sizeof(last_decline), "%s", kevo_error_last());
        kevo_error_clear();
        return DECLINED;
    }
    label_of(label, sizeof(label), d, p);
    if (e == KEVO_ERROR) {
        kevo_buf b = {0};
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s", kevo_error_last());
        kevo_buf_printf(&b, "// recipe error: %s\n", msg);
        by_level[level].applicable++;
        by_level[level].recipe_bugs++;
        long vi = add_variant(t, kevo_buf_detach(&b), label, chain, level);
        if (vi >= 0 && !t->v[vi].error)
            t->v[vi].error = strdup(msg);
        return vi;
    }
    if (e < 0)
        return e;
    by_level[level].applicable++;
    return add_variant(t, text, label, chain, level);
}

/* Every C recipe with every swept parameter vector on variant `from`; the
 * applicable results become variants of `level`. With stride > 1 only one
 * vector in `stride` of each recipe (the default one always), chosen by a
 * hash of the source: a deterministic sample. */
static int sweep_from(task_run *t, size_t from, int level, bool sizes, size_t stride)
{
    int error = 0;
    kevo_recipe_input *in = NULL;
    static long vec[MAX_VECTORS][KEVO_RECIPE_MAX_PARAMS];
    char chain[1024];
    size_t n_desc;
    const kevo_recipe_desc *descs = kevo_recipe_list(&n_desc);
    char *src = strdup(t->v[from].text); /* t->v moves as variants are added */

    if (!src)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (from == 0)
        chain[0] = '\0';
    else
        chain_of(t, from, chain, sizeof(chain));
    if ((error = kevo_recipe_input_new(&in, src, t->task->name)) < 0)
        goto done;
    size_t n_loop = kevo_recipe__input_loops(in);
    uint64_t salt = kevo_hash64(src, strlen(src), 3);
    for (size_t r = 0; r < n_desc; r++) {
        const kevo_recipe_desc *d = &descs[r];
        if (strcmp(d->backend, "c") != 0)
            continue;
        size_t nvec = param_vectors(vec, d, n_loop, sizes);
        for (size_t k = 0; k < nvec; k++) {
            if (stride > 1 && k != 0 && (k + salt) % stride != 0)
                continue;
            long vi = apply_one(t, in, d, vec[k], chain, level);
            if (vi < 0 && vi != DECLINED) {
                error = (int)vi;
                goto done;
            }
        }
    }
done:
    kevo_recipe_input_free(in);
    free(src);
    return error;
}

/* What the generator does with variant `from`: every recipe that applies
 * with its defaults (kevo_recipe_input_check, as find_applicable) is
 * rewritten with `draws` parameter sets mutated from the defaults
 * (kevo_recipe_input_params_mutate), each of which must apply too: a
 * decline there is an attempt the generator books as a failure. */
static int mutate_check(task_run *t, size_t from, int draws, kevo_rng *rng)
{
    int error = 0;
    kevo_recipe_input *in = NULL;
    char chain[1024];
    size_t n_desc;
    const kevo_recipe_desc *descs = kevo_recipe_list(&n_desc);
    char *src = strdup(t->v[from].text);

    if (!src)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (from == 0)
        chain[0] = '\0';
    else
        chain_of(t, from, chain, sizeof(chain));
    if ((error = kevo_recipe_input_new(&in, src, t->task->name)) < 0)
        goto done;
    for (size_t r = 0; r < n_desc; r++) {
        const kevo_recipe_desc *d = &descs[r];
        bool ok = false;
        if (strcmp(d->backend, "c") != 0 || d->n_params == 0)
            continue;
        if ((error = kevo_recipe_input_check(&ok, NULL, d->name, NULL, 0, in)) < 0)
            goto done;
        if (!ok)
            continue;
        for (int k = 0; k < draws; k++) {
            long p[KEVO_RECIPE_MAX_PARAMS];
            size_t np;
            bool changed = false;
            if ((error = kevo_recipe_params_default(p, &np, d->name)) < 0 ||
                (error = kevo_recipe_input_params_mutate(&changed, p, rng, d->name, in)) < 0)
                goto done;
            long vi = apply_one(t, in, d, p, chain, 4);
            if (vi < 0 && vi != DECLINED) {
                error = (int)vi;
                goto done;
            }
            if (vi == DECLINED) {
                char label[256];
                label_of(label, sizeof(label), d, p);
                printf("DECLINED %s: %s mutated from its applicable defaults to %s%s%s: %s\n",
                       t->task->name, d->name, label, chain[0] ? " after " : "", chain,
                       last_decline);
                by_level[4].recipe_bugs++;
            }
        }
    }
done:
    kevo_recipe_input_free(in);
    free(src);
    return error;
}

/* The step-1 variants [1, n1) that step 2 and the mutation check start
 * from: all when per_recipe is 0, else per recipe (the step that made it)
 * the per_recipe ones whose text hashes lowest, a deterministic sample
 * that changes only with the recipes' output. *out is the caller's. */
static int sample_variants(size_t **out, size_t *out_n, const task_run *t, size_t n1,
                           size_t per_recipe)
{
    size_t n = 0;
    *out = calloc(n1 ? n1 : 1, sizeof(**out));
    if (!*out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t n_desc;
    const kevo_recipe_desc *descs = kevo_recipe_list(&n_desc);
    for (size_t r = 0; r < n_desc; r++) {
        size_t len = strlen(descs[r].name), taken = 0;
        uint64_t last = 0;
        while (per_recipe == 0 || taken < per_recipe) {
            /* the next-lowest hash among this recipe's variants */
            size_t best = 0;
            uint64_t best_h = UINT64_MAX;
            for (size_t k = 1; k < n1; k++) {
                const char *l = kevo_buf_cstr(&t->v[k].labels);
                uint64_t h = kevo_hash64(t->v[k].text, strlen(t->v[k].text), 5);
                if (t->v[k].error || strncmp(l, descs[r].name, len) != 0 ||
                    (l[len] != '(' && l[len] != '\n' && l[len] != ' '))
                    continue;
                if ((taken == 0 || h > last) && h < best_h) {
                    best_h = h;
                    best = k;
                }
            }
            if (best == 0)
                break;
            (*out)[n++] = best;
            last = best_h;
            taken++;
        }
    }
    *out_n = n;
    return 0;
}

/* Fisher-Yates: idx[0..n) a random permutation of 0..n-1. */
static void shuffle(size_t *idx, size_t n, kevo_rng *rng)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(kevo_rng_next(rng) % i), x = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = x;
    }
}

/* A deterministic random chain of `len` steps from the reference: at each
 * step one applicable (recipe, parameters) drawn, the recipe uniformly
 * among those with an applicable vector, then one of its vectors
 * uniformly. Drawn by rejection, not by checking every vector: the first
 * recipe of a random order that has an applicable vector is uniform among
 * those that have one, and the first applicable vector of a random order
 * of its vectors uniform among its applicable ones; the checks stop there
 * (checking all of them, register_block's 28 vectors on every step of
 * every walk, was half of the sweep). */
static int walk(task_run *t, kevo_rng *rng, int len)
{
    int error = 0;
    static long vec[MAX_VECTORS][KEVO_RECIPE_MAX_PARAMS];
    static size_t vorder[MAX_VECTORS];
    size_t n_desc;
    const kevo_recipe_desc *descs = kevo_recipe_list(&n_desc);
    long cur = 0;
    char chain[1024];

    for (int step = 0; step < len; step++) {
        kevo_recipe_input *in = NULL;
        char *src = strdup(t->v[cur].text);
        if (!src)
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        if ((error = kevo_recipe_input_new(&in, src, t->task->name)) < 0) {
            free(src);
            return error;
        }
        size_t n_loop = kevo_recipe__input_loops(in);
        size_t rorder[32], nd = n_desc < 32 ? n_desc : 32;
        shuffle(rorder, nd, rng);
        long next = -1;
        bool found = false;
        for (size_t ri = 0; ri < nd && !found && error == 0; ri++) {
            size_t r = rorder[ri];
            const kevo_recipe_desc *d = &descs[r];
            if (strcmp(d->backend, "c") != 0)
                continue;
            size_t nvec = param_vectors(vec, d, n_loop, false);
            shuffle(vorder, nvec, rng);
            for (size_t ki = 0; ki < nvec; ki++) {
                size_t k = vorder[ki];
                bool ok = false;
                double t0 = kevo_now_s();
                error = kevo_recipe_input_check(&ok, NULL, d->name, vec[k], d->n_params, in);
                recipe_s[r] += kevo_now_s() - t0;
                recipe_n[r]++;
                if (error < 0)
                    break;
                if (!ok)
                    continue;
                found = true;
                if (cur == 0)
                    chain[0] = '\0';
                else
                    chain_of(t, (size_t)cur, chain, sizeof(chain));
                next = apply_one(t, in, d, vec[k], chain, 3);
                if (next < 0 && next != DECLINED)
                    error = (int)next;
                break;
            }
        }
        kevo_recipe_input_free(in);
        free(src);
        if (error < 0 || next < 0 || t->v[next].error)
            break;
        cur = next;
    }
    return error;
}


/* ---- compiling ----------------------------------------------------------- */

#define COMBINE 64 /* results per combined translation unit */

typedef struct job {
    task_run *t;
    size_t idx[COMBINE];
    size_t n;
    bool combined; /* one translation unit of them all (see combine_write) */
    pid_t pid;
    char *log;
} job;

/* Where the kernel's definition is in `text`: [*f0, *f1) from just after
 * the previous file-scope declaration, directive or comment to the body's
 * closing brace, when that span holds one function definition and no
 * directive but #pragma (comments, strings and character constants are
 * skipped). False when it is not found so. */
static bool kernel_span(const char *text, const char *name, size_t *f0, size_t *f1)
{
    size_t len = strlen(text), nlen = strlen(name), start = 0;
    int depth = 0, paren = 0;
    bool line_start = true;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (c == '\n') {
            line_start = true;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') {
            i++;
            continue;
        }
        if (c == '/' && text[i + 1] == '/') {
            while (i < len && text[i] != '\n')
                i++;
            if (depth == 0)
                start = i;
            continue;
        }
        if (c == '/' && text[i + 1] == '*') {
            const char *e = strstr(text + i + 2, "*/");
            if (!e)
                return false;
            i = (size_t)(e - text) + 2;
            if (depth == 0)
                start = i;
            continue;
        }
        if (line_start && c == '#') {
            if (depth > 0 && strncmp(text + i, "#pragma", 7) != 0)
                return false; /* a directive inside a body: it could reach the next one */
            while (i < len && (text[i] != '\n' || text[i - 1] == '\\'))
                i++;
            if (depth == 0)
                start = i;
            continue;
        }
        line_start = false;
        if (c == '"' || c == '\'') {
            for (i++; i < len && text[i] != c; i++)
                if (text[i] == '\\')
                    i++;
            i++;
            continue;
        }
        if (c == '{')
            depth++;
        else if (c == '}') {
            if (--depth < 0)
                return false;
            if (depth == 0)
                start = i + 1;
        } else if (c == '(')
            paren++;
        else if (c == ')')
            paren--;
        else if (c == ';' && depth == 0 && paren == 0)
            start = i + 1;
        else if (depth == 0 && paren == 0 && !strncmp(text + i, name, nlen) &&
                 (i == 0 || !(isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_')) &&
                 !(isalnum((unsigned char)text[i + nlen]) || text[i + nlen] == '_')) {
            /* the kernel's name at file scope: a definition when its
             * parameter list is followed by a body */
            size_t k = i + nlen;
            while (isspace((unsigned char)text[k]))
                k++;
            if (text[k] != '(') {
                i += nlen;
                continue;
            }
            int pd = 0;
            for (; k < len; k++) {
                pd += text[k] == '(' ? 1 : text[k] == ')' ? -1 : 0;
                if (pd == 0)
                    break;
            }
            k++;
            while (k < len && isspace((unsigned char)text[k]))
                k++;
            if (text[k] != '{') {
                i += nlen;
                continue; /* a declaration (or a call at file scope) */
            }
            /* the body: balanced braces, skipping comments and literals */
            int bd = 0;
            for (; k < len; k++) {
                char b = text[k];
                if (b == '/' && text[k + 1] == '/') {
                    while (k < len && text[k] != '\n')
                        k++;
                } else if (b == '/' && text[k + 1] == '*') {
                    const char *e = strstr(text + k + 2, "*/");
                    if (!e)
                        return false;
                    k = (size_t)(e - text) + 1;
                } else if (b == '"' || b == '\'') {
                    for (k++; k < len && text[k] != b; k++)
                        if (text[k] == '\\')
                            k++;
                } else if (b == '#' && strncmp(text + k, "#pragma", 7) != 0) {
                    size_t ls = k;
                    while (ls > 0 && (text[ls - 1] == ' ' || text[ls - 1] == '\t'))
                        ls--;
                    if (ls == 0 || text[ls - 1] == '\n')
                        return false;
                } else if (b == '{') {
                    bd++;
                } else if (b == '}' && --bd == 0) {
                    *f0 = start;
                    *f1 = k + 1;
                    return true;
                }
            }
            return false;
        }
        i++;
    }
    return false;
}

/* Write the combined translation unit of job j: the shared prelude, then
 * each result's kernel definition renamed (NAME__sweep_v<K>) after the
 * prototype header under the same name, then the shared rest. Each
 * definition sees what it sees alone, plus the other renamed kernels,
 * which nothing names: kernel_span let no declaration, macro or directive
 * but #pragma into a definition. */
static int combine_write(const job *j, const char *path)
{
    task_run *t = j->t;
    const variant *v0 = &t->v[j->idx[0]];
    const char *name = t->task->name;
    kevo_buf b = {0};
    kevo_buf_printf(&b, "%.*s", (int)v0->f0, v0->text);
    for (size_t i = 0; i < j->n; i++) {
        const variant *v = &t->v[j->idx[i]];
        kevo_buf_printf(&b, "\n#define %s %s__sweep_v%zu\n#include \"%s\"\n", name, name,
                        j->idx[i], KEVO_C_PROTO_FILE);
        kevo_buf_printf(&b, "%.*s\n#undef %s\n", (int)(v->f1 - v->f0), v->text + v->f0, name);
    }
    kevo_buf_printf(&b, "%s", v0->text + v0->f1);
    int error = kevo_file_write(path, kevo_buf_cstr(&b), b.len);
    kevo_buf_free(&b);
    return error;
}

static int job_start(job *j)
{
    const char *argv[64 + BATCH];
    char names[BATCH][32];
    _Static_assert(BATCH <= COMBINE, "a job holds a batch");
    bool openmp;
    variant *v0 = &j->t->v[j->idx[0]];
    size_t n = kevo_c_compile_flags(argv, 32, v0->hint, &openmp);
    argv[n++] = "-fsyntax-only";
    if (j->combined) {
        n_units++;
        n_in_units += j->n;
        snprintf(names[0], sizeof(names[0]), "c%zu.c", j->idx[0]);
        char *path = kevo_path_join(j->t->dir, names[0]);
        int error = path ? combine_write(j, path) : KEVO_ENOMEM;
        free(path);
        if (error < 0)
            return error;
        argv[n++] = names[0];
    } else {
        n_alone += j->n;
        for (size_t i = 0; i < j->n; i++) {
            snprintf(names[i], sizeof(names[i]), "v%zu.c", j->idx[i]);
            argv[n++] = names[i];
        }
    }
    argv[n] = NULL;
    char logname[64];
    snprintf(logname, sizeof(logname), "gcc-%zu.log", j->idx[0]);
    j->log = kevo_path_join(j->t->dir, logname);
    pid_t pid = fork();
    if (pid < 0)
        return kevo_error_set(KEVO_EINFRA, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || chdir(j->t->dir) < 0)
            _exit(126);
        dup2(fd, 2);
        dup2(fd, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    j->pid = pid;
    return 0;
}

/* Read the job's log: each file's first error line. */
static int job_finish(job *j, int status)
{
    char *log = NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 126)
        return kevo_error_set(KEVO_EINFRA, "cannot run gcc in %s", j->t->dir);
    if (kevo_file_read(&log, NULL, j->log) < 0)
        return KEVO_EINFRA;
    bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0), attributed = false;
    if (j->combined) {
        unlink(j->log);
        free(j->log);
        j->log = NULL;
        free(log);
        return failed; /* 1: compile them again each in its own file, to say which */
    }
    for (char *line = log; line && *line;) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        size_t idx;
        int used = 0;
        if ((strstr(line, ": error: ") || strstr(line, ": fatal error: ")) &&
            sscanf(line, "v%zu.c:%n", &idx, &used) == 1 && used > 0) {
            for (size_t i = 0; i < j->n; i++)
                if (j->idx[i] == idx && !j->t->v[idx].error) {
                    j->t->v[idx].error = strdup(line);
                    attributed = true;
                }
        }
        line = eol ? eol + 1 : NULL;
    }
    if (failed && !attributed)
        for (size_t i = 0; i < j->n; i++)
            if (!j->t->v[j->idx[i]].error)
                j->t->v[j->idx[i]].error = strdup("gcc failed without an error line (see log)");
    free(log);
    unlink(j->log);
    free(j->log);
    j->log = NULL;
    return 0;
}

/* The compile queue: jobs of the tasks rewritten so far, run `slots` gcc
 * processes at a time while the next tasks are rewritten (fewer while
 * rewriting: that takes a core), all of them at the end. */
typedef struct sched {
    job *list;
    size_t n, cap, next;
    job **slot;
    int n_slot, active;
} sched;

/* A new empty job for task t at the end of the queue, or NULL. */
static job *sched_push(sched *s, task_run *t, bool combined)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        /* the running jobs' slots point into the list */
        ptrdiff_t at[64];
        for (int k = 0; k < s->n_slot && k < 64; k++)
            at[k] = s->slot[k] ? s->slot[k] - s->list : -1;
        job *g = realloc(s->list, cap * sizeof(*g));
        if (!g) {
            kevo_error_set(KEVO_ENOMEM, "out of memory");
            return NULL;
        }
        for (int k = 0; k < s->n_slot && k < 64; k++)
            s->slot[k] = at[k] < 0 ? NULL : g + at[k];
        s->list = g;
        s->cap = cap;
    }
    job *j = &s->list[s->n++];
    memset(j, 0, sizeof(*j));
    j->t = t;
    j->combined = combined;
    return j;
}

/* Queue results idx[0..n) of t, same cflags line, as gcc runs of BATCH
 * files each (each file its own translation unit). */
static int sched_add_files(sched *s, task_run *t, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i += BATCH) {
        job *j = sched_push(s, t, false);
        if (!j)
            return KEVO_ENOMEM;
        for (size_t k = i; k < n && k < i + BATCH; k++)
            j->idx[j->n++] = idx[k];
    }
    return 0;
}

/* Queue the results of task t that have no error yet: those with the same
 * cflags line, prelude and rest around the kernel (kernel_span) COMBINE to
 * a translation unit (one cc1 start, most of a compile here: compiled
 * alone each when that unit fails); the others BATCH files per gcc. */
static int sched_add_task(sched *s, task_run *t)
{
    int error = 0;
    bool *taken = calloc(t->n + 1, sizeof(*taken));
    size_t *solo = calloc(t->n + 1, sizeof(*solo)), n_solo = 0;
    if (!taken || !solo) {
        free(taken);
        free(solo);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t a = 0; a < t->n && error == 0; a++) {
        variant *va = &t->v[a];
        if (taken[a] || va->error)
            continue;
        n_solo = 0;
        job *j = NULL;
        for (size_t b = a; b < t->n && error == 0; b++) {
            variant *vb = &t->v[b];
            if (taken[b] || vb->error || strcmp(va->hint_key, vb->hint_key))
                continue;
            bool same_frame = va->split && vb->split && va->f0 == vb->f0 &&
                              !memcmp(va->text, vb->text, va->f0) &&
                              !strcmp(va->text + va->f1, vb->text + vb->f1);
            if (!va->split) {
                if (vb->split)
                    continue;
                solo[n_solo++] = b; /* the unsplit ones of a's cflags group, file by file */
            } else if (same_frame) {
                if (!j || j->n == COMBINE) {
                    if (!(j = sched_push(s, t, true)))
                        error = KEVO_ENOMEM;
                }
                if (j)
                    j->idx[j->n++] = b;
            } else {
                continue; /* another frame: its own group */
            }
            taken[b] = true;
        }
        if (error == 0 && n_solo)
            error = sched_add_files(s, t, solo, n_solo);
    }
    free(taken);
    free(solo);
    return error;
}

/* Start queued jobs in up to `use` slots and collect finished ones; with
 * `drain`, until the queue is empty and every job has finished. */
static int sched_run(sched *s, int use, bool drain)
{
    int error = 0;
    for (;;) {
        for (int k = 0; k < use && s->next < s->n && error == 0; k++) {
            if (s->slot[k])
                continue;
            if ((error = job_start(&s->list[s->next])) < 0)
                break;
            s->slot[k] = &s->list[s->next++];
            s->active++;
        }
        if (s->active == 0 || error < 0)
            return error;
        int status;
        pid_t pid = waitpid(-1, &status, drain ? 0 : WNOHANG);
        if (pid == 0)
            return 0; /* nothing has finished yet: back to rewriting */
        if (pid < 0)
            return kevo_error_set(KEVO_EINFRA, "wait: %s", strerror(errno));
        for (int k = 0; k < s->n_slot; k++) {
            if (!s->slot[k] || s->slot[k]->pid != pid)
                continue;
            job *done = s->slot[k];
            s->slot[k] = NULL;
            s->active--;
            int e = job_finish(done, status);
            if (e == 1) {
                /* the combined unit failed: each result in its own file */
                size_t idx[COMBINE], n = done->n;
                task_run *t = done->t;
                memcpy(idx, done->idx, n * sizeof(*idx));
                e = sched_add_files(s, t, idx, n);
            }
            if (e < 0 && error == 0)
                error = e;
        }
    }
}

/* Write variants [from, t->n) of t into its folder, each with where its
 * kernel is (kernel_span); with --break K, every K-th result (not the
 * reference) first gets an undeclared name in its kernel's body. */
static int write_variants(task_run *t, size_t from)
{
    for (size_t i = from; i < t->n; i++) {
        variant *v = &t->v[i];
        v->split = kernel_span(v->text, t->task->name, &v->f0, &v->f1);
        if (break_every > 0 && i > 0 && i % (size_t)break_every == 0 && !v->error) {
            size_t at = v->split ? v->f1 - 1 : strlen(v->text);
            kevo_buf b = {0};
            kevo_buf_printf(&b, "%.*s%s%s", (int)at, v->text,
                            v->split ? " sweep_break_undeclared = 1; " : "\n#error sweep break\n",
                            v->text + at);
            char *broken = kevo_buf_detach(&b);
            if (!broken)
                return kevo_error_set(KEVO_ENOMEM, "out of memory");
            free(v->text);
            v->text = broken;
            v->split = kernel_span(v->text, t->task->name, &v->f0, &v->f1);
            n_broken++;
        }
        char name[32];
        snprintf(name, sizeof(name), "v%zu.c", i);
        char *path = kevo_path_join(t->dir, name);
        int error = path ? kevo_file_write(path, t->v[i].text, strlen(t->v[i].text)) : KEVO_ENOMEM;
        free(path);
        if (error < 0)
            return error;
    }
    return 0;
}

/* --emit DIR: for a run of `kevo eval` on each (the verifier judges what
 * this sweep does not: semantics), the first compiling result of each
 * recipe of steps 1 and 2 per task, as DIR/<task>__<n>.c, and
 * DIR/manifest.tsv: task folder, file, chain. */
static int emit_sample(const char *dir, task_run **tasks, size_t n_tasks)
{
    int error = 0;
    kevo_buf man = {0};
    if ((error = kevo_mkdirs(dir, 0700)) < 0)
        return error;
    for (size_t i = 0; i < n_tasks && error == 0; i++) {
        task_run *t = tasks[i];
        char seen[64][128];
        size_t n_seen = 0;
        for (size_t k = 1; k < t->n && error == 0; k++) {
            variant *v = &t->v[k];
            if (v->error || v->level > 2)
                continue;
            /* the key: the recipe names of its chain, e.g. "tile<-interchange" */
            char key[128] = "", first[1024];
            chain_of(t, k, first, sizeof(first));
            size_t kl = 0;
            for (const char *q = first; *q && kl + 1 < sizeof(key);) {
                size_t w = strcspn(q, "( ");
                kl += (size_t)snprintf(key + kl, sizeof(key) - kl, "%.*s/", (int)w, q);
                const char *nx = strstr(q, " after ");
                if (!nx)
                    break;
                q = nx + 7;
            }
            bool dup = false;
            for (size_t j = 0; j < n_seen; j++)
                dup |= !strcmp(seen[j], key);
            if (dup || n_seen == 64)
                continue;
            snprintf(seen[n_seen++], sizeof(seen[0]), "%s", key);
            char name[256];
            snprintf(name, sizeof(name), "%s__%zu.c", t->task->name, k);
            char *path = kevo_path_join(dir, name);
            error = path ? kevo_file_write(path, v->text, strlen(v->text)) : KEVO_ENOMEM;
            free(path);
            kevo_buf_printf(&man, "%s\t%s\t%s\n", t->task->dir, name, first);
        }
    }
    if (error == 0) {
        char *path = kevo_path_join(dir, "manifest.tsv");
        error = path ? kevo_file_write(path, kevo_buf_cstr(&man), man.len) : KEVO_ENOMEM;
        free(path);
    }
    kevo_buf_free(&man);
    return error;
}

static void usage(void)
{
    fprintf(stderr, "usage: recipe_sweep [--level2 sample|all|none] [--per-recipe P] [--stride S] "
                    "[--walks N] [--mutations N] [--all-sizes] [--guard] [--break K] [--jobs J] [--keep] "
                    "[--emit DIR] SUITE_DIR...\n");
}

int main(int argc, char **argv)
{
    int error = 0, rc = 0;
    const char *level2 = "sample";
    int walks = 2, jobs = 2, draws = 2;
    long stride = 12, per_recipe = 1;
    bool keep = false;
    const char *emit = NULL;
    char **roots = calloc((size_t)argc, sizeof(char *));
    size_t n_roots = 0;
    task_run **tasks = NULL;
    size_t n_tasks = 0;
    char *tmp = NULL;
    sched queue = {0};

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--level2") && i + 1 < argc)
            level2 = argv[++i];
        else if (!strcmp(argv[i], "--walks") && i + 1 < argc)
            walks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
            jobs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mutations") && i + 1 < argc)
            draws = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
            stride = atol(argv[++i]);
        else if (!strcmp(argv[i], "--guard"))
            guard = true;
        else if (!strcmp(argv[i], "--break") && i + 1 < argc)
            break_every = atol(argv[++i]);
        else if (!strcmp(argv[i], "--per-recipe") && i + 1 < argc)
            per_recipe = atol(argv[++i]);
        else if (!strcmp(argv[i], "--all-sizes"))
            all_sizes = true;
        else if (!strcmp(argv[i], "--keep"))
            keep = true;
        else if (!strcmp(argv[i], "--emit") && i + 1 < argc)
            emit = argv[++i];
        else if (argv[i][0] == '-') {
            usage();
            return 2;
        } else
            roots[n_roots++] = argv[i];
    }
    if (n_roots == 0 || jobs < 1 || jobs > 64 || walks < 0 || draws < 0 || stride < 1 || per_recipe < 1 ||
        (strcmp(level2, "sample") && strcmp(level2, "all") && strcmp(level2, "none"))) {
        usage();
        return 2;
    }
    double t0 = kevo_now_s();
    if (!(queue.slot = calloc((size_t)jobs, sizeof(*queue.slot)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    queue.n_slot = jobs;
    if ((error = kevo_mkdtemp(&tmp, "kevo-recipe-sweep-")) < 0)
        goto done;
    for (size_t r = 0; r < n_roots; r++) {
        char **dirs = NULL;
        size_t nd = 0;
        if ((error = kevo_task_find(&dirs, &nd, roots[r])) < 0)
            goto done;
        task_run **grown = realloc(tasks, (n_tasks + nd) * sizeof(*tasks));
        if (!grown) {
            kevo_task_dirs_free(dirs, nd);
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
            goto done;
        }
        tasks = grown;
        for (size_t i = 0; i < nd; i++) {
            task_run *t = calloc(1, sizeof(*t));
            char *ref = NULL, *proto = NULL;
            kevo_buf protoh = {0};
            if (!t) {
                error = kevo_error_set(KEVO_ENOMEM, "out of memory");
                kevo_task_dirs_free(dirs, nd);
                goto done;
            }
            tasks[n_tasks++] = t;
            if ((error = kevo_task_load(&t->task, dirs[i])) < 0) {
                kevo_task_dirs_free(dirs, nd);
                goto done;
            }
            if (t->task->torch)
                continue; /* a PyTorch module: no C reference to rewrite */
            char sub[32];
            snprintf(sub, sizeof(sub), "t%zu", n_tasks);
            t->dir = kevo_path_join(tmp, sub);
            if ((error = kevo_mkdirs(t->dir, 0700)) < 0 ||
                (error = kevo_file_read(&ref, NULL, t->task->reference_path)) < 0 ||
                (error = kevo_c_proto_header(&proto, &protoh, t->task)) < 0) {
                free(ref);
                kevo_task_dirs_free(dirs, nd);
                goto done;
            }
            char *pp = kevo_path_join(t->dir, KEVO_C_PROTO_FILE);
            error = kevo_file_write(pp, kevo_buf_cstr(&protoh), protoh.len);
            free(pp);
            free(proto);
            kevo_buf_free(&protoh);
            long vi = error < 0 ? error : add_variant(t, ref, "reference", "", 0);
            if (vi < 0) {
                error = (int)vi;
                kevo_task_dirs_free(dirs, nd);
                goto done;
            }
        }
        kevo_task_dirs_free(dirs, nd);
    }

    /* step 1: every recipe, every swept vector, on each reference */
    for (size_t i = 0; i < n_tasks; i++) {
        task_run *t = tasks[i];
        if (!t->dir)
            continue;
        if ((error = sweep_from(t, 0, 1, true, 1)) < 0)
            goto done;
        /* step 2: on the kernels of step 1; the generator's mutations on
         * the reference and on them */
        size_t n1 = t->n;
        kevo_rng rng;
        kevo_rng_seed(&rng, kevo_hash64(t->task->name, strlen(t->task->name), 11));
        size_t *pick = NULL, n_pick = 0;
        if ((error = sample_variants(&pick, &n_pick, t, n1,
                                     !strcmp(level2, "all") ? 0 : (size_t)per_recipe)) < 0)
            goto done;
        if (draws > 0 && (error = mutate_check(t, 0, draws, &rng)) < 0) {
            free(pick);
            goto done;
        }
        for (size_t q = 0; q < n_pick; q++) {
            size_t k = pick[q];
            if (strcmp(level2, "none") != 0 &&
                (error = sweep_from(t, k, 2, false, (size_t)stride)) < 0)
                break;
            if (draws > 0 && (error = mutate_check(t, k, draws, &rng)) < 0)
                break;
        }
        free(pick);
        if (error < 0)
            goto done;
        for (int w = 0; w < walks; w++)
            if ((error = walk(t, &rng, 6)) < 0)
                goto done;
        if ((error = write_variants(t, 0)) < 0 || (error = sched_add_task(&queue, t)) < 0 ||
            (error = sched_run(&queue, jobs > 1 ? jobs - 1 : 1, false)) < 0)
            goto done;
    }
    double t_rewrite = kevo_now_s() - t0;
    if ((error = sched_run(&queue, jobs, true)) < 0)
        goto done;

    if (emit && (error = emit_sample(emit, tasks, n_tasks)) < 0)
        goto done;
    size_t distinct = 0, bad_variants = 0, bad_apps[5] = {0}, distinct_at[5] = {0}, ref_bad = 0, n_c = 0;
    for (size_t i = 0; i < n_tasks; i++) {
        task_run *t = tasks[i];
        if (!t->dir)
            continue;
        n_c++;
        for (size_t k = 0; k < t->n; k++) {
            variant *v = &t->v[k];
            distinct += k > 0;
            distinct_at[v->level]++;
            if (!v->error)
                continue;
            if (k == 0) {
                ref_bad++;
                printf("REFERENCE %s does not compile: %s\n", t->task->name, v->error);
                continue;
            }
            bad_variants++;
            bad_apps[v->level] += v->n_apps;
            printf("FAIL %s: %s\n", t->task->name, v->error);
            const char *l = kevo_buf_cstr(&v->labels);
            printf("  %zu application(s):\n", v->n_apps);
            for (const char *p = l; *p;) {
                const char *e = strchr(p, '\n');
                printf("    %s: %.*s\n", t->task->name, e ? (int)(e - p) : (int)strlen(p), p);
                p = e ? e + 1 : p + strlen(p);
            }
            if (keep)
                printf("  source: %s/v%zu.c\n", t->dir, k);
        }
    }
    const char *names[5] = {"", "step 1 (references)", "step 2 (on step-1 kernels)",
                            "walks (6 steps)", "mutated parameters"};
    printf("recipe sweep: %zu C tasks (%zu tasks found), level2=%s (stride %ld), %d walks, "
           "%d mutations per applicable recipe\n",
           n_c, n_tasks, level2, !strcmp(level2, "all") ? 1L : stride, walks, draws);
    for (int l = 1; l < 5; l++)
        printf("  %-27s %7zu applications tried, %6zu declared applicable (%zu new distinct "
               "results), %zu failed to compile, %zu recipe errors%s\n",
               names[l], by_level[l].tried, by_level[l].applicable, distinct_at[l], bad_apps[l],
               by_level[l].recipe_bugs, l == 4 ? " or declines" : "");
    if (break_every > 0)
        printf("  %zu results broken on purpose (--break %ld)\n", n_broken, break_every);
    printf("  gcc runs: %zu combined units of %zu results, %zu files alone (the results "
           "combine_write could not join, and those of failed units)\n",
           n_units, n_in_units, n_alone);
    printf("  %zu distinct results compiled with gcc -fsyntax-only, %zu do not compile; "
           "%zu references do not compile\n",
           distinct, bad_variants, ref_bad);
    printf("  %.1f s rewriting (compiles run beside it), %.1f s in all; per recipe:", t_rewrite,
           kevo_now_s() - t0);
    size_t n_desc;
    const kevo_recipe_desc *descs = kevo_recipe_list(&n_desc);
    for (size_t r = 0; r < n_desc && r < 32; r++)
        if (recipe_n[r])
            printf(" %s %.1f s/%zu", descs[r].name, recipe_s[r], recipe_n[r]);
    printf("\n");
    rc = bad_variants || ref_bad || by_level[4].recipe_bugs ? 1 : 0;
done:
    if (error < 0) {
        /* let the running compiles end before their folders go */
        while (queue.active > 0 && wait(NULL) > 0)
            queue.active--;
        fprintf(stderr, "recipe_sweep: %s\n", kevo_error_last());
        rc = error == KEVO_EINFRA ? 3 : 2;
    }
    for (size_t i = 0; i < n_tasks; i++) {
        task_run *t = tasks[i];
        for (size_t k = 0; k < t->n; k++) {
            free(t->v[k].text);
            free(t->v[k].error);
            free(t->v[k].hint_key);
            kevo_strv_free(t->v[k].hint);
            kevo_buf_free(&t->v[k].labels);
        }
        free(t->v);
        free(t->dir);
        kevo_task_free(t->task);
        free(t);
    }
    free(tasks);
    for (size_t i = 0; i < queue.n; i++)
        free(queue.list[i].log);
    free(queue.list);
    free(queue.slot);
    if (tmp && !keep)
        kevo_rmtree(tmp);
    else if (tmp)
        fprintf(stderr, "recipe_sweep: results kept in %s\n", tmp);
    free(tmp);
    free(roots);
    return rc;
}
