/*
 * agent/builtin_gen.c - the built-in offline generator: a candidate is a
 * start point plus one more recipe (src/recipe) with parameters. Recipes
 * are memory items of kind `recipe`. An arm is a recipe, or for a recipe
 * whose parameter selects between different transformations (`flags`:
 * which flag set) one value of that parameter. Each arm has three items:
 * four items: a general one, one per operator category, one per trait
 * signature (kevo_recipe_traits() of the task's reference: "traits:
 * deep-nest fp-reduction") and one per bottleneck ("bound: memory" or
 * "bound: compute": the task's roofline on this machine), so the Q-values
 * learn which recipes pay off for which kinds of kernels, and the signature
 * and the bottleneck carry what was learned to kernels of other categories
 * with the same structure or the same limit (Level 1 -> Level 2).
 * An arm written for a trait (kevo_recipe_arm_traits: the flag sets that
 * relax the maths, for libm calls and fp reductions) is valued by kernels
 * of the task's trait signature alone, and tried first on the first kernel
 * of a signature that has the trait (arm_walk_next()).
 * Selection is epsilon-greedy over the refine-stage Q of the arms that
 * apply to the start point (category and signature blended by evidence,
 * arm_value()), exploiting the best arm not yet tried from that start
 * point; `random` retrieval picks a recipe uniformly (the ablation
 * baseline). When exploiting, tuning parameters start from those of the
 * fastest correct attempt that applied the same recipe on a task of the
 * same category (kept or mutated), else the defaults; when exploring, from
 * the defaults, mutated. Drawing again the tunable recipe the start point
 * ends with retunes it: other parameters on the text it rewrote (retune(),
 * below). A nest shaper drawn on a kernel already threaded or vectorised
 * goes before those steps, the chain replayed from the reference
 * (kevo_builtin__place), and is retuned there when drawn again
 * (retune_placed). The first refinement of a draft may instead be the
 * transfer move (builtin_transfer.c: a sibling task's whole chain).
 * It never copies anything but the task's own reference.
 */
#include "internal.h"
#include "kevo/recipe.h"
#include "kevo/roofline.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Recipes whose parameter picks between different transformations rather
 * than tuning one: each value is its own arm with its own Q-values
 * ("flags set=2" is -ffast-math, which pays on transcendental maths and
 * breaks tight tolerances; averaging it with "-funroll-loops" would teach
 * nothing; "permute reduce=8" sums the input channels in vector registers,
 * which pays on the stride-1 transposed convolutions and loses on the
 * strided ones, where "permute reduce=0" is the faster form). */
static const struct {
    const char *recipe;
    size_t param;
} variant_params[] = {{"flags", 0}, {"permute", 4}};

static int variant_param(const char *recipe)
{
    for (size_t i = 0; i < sizeof(variant_params) / sizeof(variant_params[0]); i++)
        if (!strcmp(variant_params[i].recipe, recipe))
            return (int)variant_params[i].param;
    return -1;
}

/* The title of an arm: the recipe's name, plus "NAME=V" for a variant
 * (variant < 0: the recipe as a whole). */
static void arm_title(char *buf, size_t size, const kevo_recipe_desc *d, long variant)
{
    int vp = variant_param(d->name);
    if (vp < 0 || variant < 0)
        snprintf(buf, size, "%s", d->name);
    else
        snprintf(buf, size, "%s %s=%ld", d->name, d->params[vp].name, variant);
}

/* The memory items of the arms, loaded once per proposal: every item of
 * kind `recipe` tagged `builtin`, looked up by (title, category), and the
 * task's category and trait signature under which its specific items are
 * kept. */
typedef struct arm_book {
    kevo_memory *mem;
    kevo_item_list *items;
    const char *category;  /* the task's declared category */
    char signature[96];    /* "traits: deep-nest fp-reduction", "traits: none" */
    const char *bound;     /* "bound: memory", "bound: compute", NULL when unknown */
    char state[64];        /* "state: shaped, bound: compute" (book_state), "" */
} arm_book;

static int book_load(arm_book *b)
{
    kevo_item_filter f = {0};
    f.kinds = KEVO_ITEM_BIT(KEVO_ITEM_RECIPE);
    f.tag = "builtin";
    f.no_body = 1;
    kevo_item_list_free(b->items);
    b->items = NULL;
    return kevo_memory_item_list(&b->items, b->mem, &f);
}

/* The flops per byte above which a task counts as compute-bound when this
 * machine was never calibrated: between the DRAM ridge of today's CPUs
 * (10-25 flop/B) and their cache ridge (1-2 flop/B); the streaming and
 * reduction tasks sit below 1, GEMMs and convolutions far above 10. */
#define NOMINAL_RIDGE 4.0

/* The task's bottleneck: its roofline at its timed sizes against this
 * machine's calibrated peaks (kevo calibrate), the nominal ridge without
 * them; NULL when the task does not state its work. */
static const char *task_bound(const kevo_task *task)
{
    double flops = 0, bytes = 0;
    if (kevo_task_work(&flops, &bytes, task) < 0 || flops <= 0 || bytes <= 0) {
        kevo_error_clear();
        return NULL;
    }
    kevo_peaks peaks;
    kevo_roofline r;
    if (kevo_peaks_load(&peaks) == 0 && kevo_roofline_compute(&r, flops, bytes, 1.0, &peaks) == 0 &&
        r.have_bound)
        return r.memory_bound ? "bound: memory" : "bound: compute";
    kevo_error_clear();
    return flops / bytes < NOMINAL_RIDGE ? "bound: memory" : "bound: compute";
}

/* `start` is the parsed start point, whose model gives the traits when the
 * start point is the reference itself (one parse instead of two). */
static int book_open(arm_book *b, kevo_memory *mem, const kevo_agent_task *at,
                     kevo_recipe_input *start, const char *start_source)
{
    memset(b, 0, sizeof(*b));
    b->mem = mem;
    b->category = at->task->category;
    char *traits = NULL;
    int rc = at->c_start && start_source && !strcmp(at->c_start, start_source)
                 ? kevo_recipe_input_traits(&traits, start)
                 : kevo_recipe_traits(&traits, at->c_start, at->task->name);
    if (rc < 0)
        kevo_error_clear(); /* an unparsable reference has no traits; recipes will decline */
    snprintf(b->signature, sizeof(b->signature), "traits: %s",
             traits && *traits ? traits : "none");
    free(traits);
    b->bound = task_bound(at->task);
    return book_load(b);
}

static void book_close(arm_book *b)
{
    kevo_item_list_free(b->items);
    b->items = NULL;
}

static bool same_category(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The item of arm `title` (of recipe `recipe`) under `category` (NULL: the
 * general item), created on first use. */
static int book_item(int64_t *out, arm_book *b, const char *title, const char *recipe,
                     const char *category, const char *backend)
{
    *out = 0;
    for (size_t i = 0; i < b->items->n; i++)
        if (!strcmp(b->items->items[i].title, title) &&
            same_category(b->items->items[i].category, category))
            *out = b->items->items[i].id;
    if (*out)
        return 0;
    const kevo_recipe_desc *d = kevo_recipe_find(recipe);
    kevo_buf body = {0};
    kevo_buf_printf(&body, "%s. Applies when: %s", d ? d->description : recipe,
                    d ? d->precondition : "?");
    int vp = d ? variant_param(recipe) : -1;
    if (vp >= 0)
        kevo_buf_printf(&body, ". This arm: %s (%s)", title, d->params[vp].description);
    kevo_item it = {0};
    it.kind = KEVO_ITEM_RECIPE;
    it.title = title;
    it.body = kevo_buf_cstr(&body);
    it.category = category;
    it.backend = backend;
    it.tags = "builtin";
    int error = kevo_memory_item_add(b->mem, &it, out);
    kevo_buf_free(&body);
    if (error == 0)
        error = book_load(b); /* a new item: rare once the memory has seen the arms */
    return error;
}

/* The items of an arm: general, the task's category, its trait signature,
 * its bottleneck (0 when unknown), and for the thread step on a shaped
 * kernel its state item (0 otherwise: book_state). */
typedef struct arm_items {
    int64_t general, category, signature, bound, state;
} arm_items;

static int step_rank(const char *recipe);

/* The start point's state, for the thread step: a kernel whose chain has a
 * nest shaper (step_rank 0: register_block, acc_row, permute, ...) and no
 * omp_parallel. What omp_parallel measured on unshaped kernels says little
 * there: on the reference's loop nest two threads split loops that wait on
 * memory (matmul_square 1.22x), on a register-blocked nest they double the
 * FMAs issued; in a whole-Level-1 run 35 of 80 best kernels were shaped and
 * never threaded (conv2d's register_block at 72.9x on one core). */
static void book_state(arm_book *b, const kevo_recipe_step *chain, size_t n)
{
    bool shaped = false, threaded = false;
    for (size_t i = 0; i < n; i++) {
        shaped = shaped || step_rank(chain[i].recipe) == 0;
        threaded = threaded || step_rank(chain[i].recipe) == 1;
    }
    b->state[0] = 0;
    if (shaped && !threaded)
        snprintf(b->state, sizeof(b->state), "state: shaped%s%s", b->bound ? ", " : "",
                 b->bound ? b->bound : "");
}

static int book_arm(arm_items *out, arm_book *b, const kevo_recipe_desc *d, long variant)
{
    char title[160];
    arm_title(title, sizeof(title), d, variant);
    int error = book_item(&out->general, b, title, d->name, NULL, d->backend);
    if (error == 0)
        error = book_item(&out->category, b, title, d->name, b->category, d->backend);
    if (error == 0)
        error = book_item(&out->signature, b, title, d->name, b->signature, d->backend);
    out->bound = 0;
    if (error == 0 && b->bound)
        error = book_item(&out->bound, b, title, d->name, b->bound, d->backend);
    out->state = 0;
    if (error == 0 && b->state[0] && step_rank(d->name) == 1)
        error = book_item(&out->state, b, title, d->name, b->state, d->backend);
    return error;
}

/* Record the items of an arm as used by the proposal, ranked in order. */
static void proposal_use(kevo_proposal *out, const arm_items *a)
{
    const int64_t ids[5] = {a->general, a->category, a->signature, a->bound, a->state};
    for (int i = 0; i < 5; i++)
        if (ids[i]) {
            out->used[out->nused] =
                (kevo_used_item){ids[i], KEVO_STAGE_REFINE, (int)out->nused + 1, 0, false};
            out->nused++;
        }
}

/* A Q-value, or with `unbiased` the mean of the rewards behind it: the
 * update Q <- Q + alpha (R - Q) from q_init leaves q_init a weight of
 * (1 - alpha)^n after n rewards, taken out here (an arm tried once at 1.4x
 * reads Q 0.45, below the untried 0.5, and a mean reward of +0.32). */
static double q_value(double q, int64_t n, const kevo_run_config *unbiased)
{
    if (!unbiased)
        return q;
    double w = pow(1.0 - unbiased->alpha, (double)n);
    return w < 1.0 ? (q - w * unbiased->q_init) / (1.0 - w) : q;
}

/* Score of an arm for this task: the Qs of its category, trait-signature
 * and bottleneck items, weighted by how often each was updated (up to 5
 * times: after that they count alike); when none has been updated, the
 * general Q where it is above `prior`, else `prior`. *known, when not NULL,
 * says whether one of the first three has evidence: an arm no task of this
 * category, signature or bottleneck has tried is not known. With
 * `unbiased`, the mean rewards behind those Qs instead (q_value). The
 * signature and the bottleneck are what carry across categories: a Level 2
 * `fused` GEMM with a sigmoid starts from what paid on Level 1 kernels with
 * the same traits and the same limit, and its own category takes over as
 * it gathers evidence. The general Q of an arm that is not known here was
 * measured on kernels of another bottleneck (a task that states its work
 * has one of two), so it may raise the arm (omp_parallel pays nearly everywhere) but not bury
 * it: on Level 1, the first compute-bound kernel (matmul_square) came after
 * fourteen memory-bound ones, where register_block had gained nothing, and
 * its search never drew register_block; nor did the next four GEMMs. */
static double arm_value(kevo_memory *mem, const arm_items *a, double prior,
                        const kevo_run_config *unbiased, bool *known)
{
    double q, sum = 0, wsum = 0;
    int64_t n = 0;
    const int64_t specific[3] = {a->category, a->signature, a->bound};
    if (known)
        *known = false;
    for (int i = 0; i < 3; i++)
        if (specific[i] && kevo_memory_q_get(&q, &n, mem, specific[i], KEVO_STAGE_REFINE) == 0 &&
            n > 0) {
            double w = n < 5 ? (double)n : 5.0;
            sum += w * q_value(q, n, unbiased);
            wsum += w;
            if (known)
                *known = true;
        }
    if (wsum > 0)
        return sum / wsum;
    if (a->general && kevo_memory_q_get(&q, &n, mem, a->general, KEVO_STAGE_REFINE) == 0 && n > 0)
        return fmax(q_value(q, n, unbiased), prior);
    return prior;
}

/* The parameters of `recipe` in the fastest correct attempt that applied it
 * (its last step, or where kevo_builtin__place put it) through the category
 * item `cat_item` (so: on a task of the same category). Returns 1 and
 * fills best[0..np) when there is one, 0 when there is none, or an error. */
static int best_params(long *best, kevo_memory *mem, int64_t cat_item, const char *recipe,
                       size_t np)
{
    kevo_attempt_filter f = {0};
    f.used_item = cat_item;
    f.correct_only = 1;
    f.best_first = 1;
    f.no_source = 1;
    f.limit = 8;
    kevo_attempt_list *list = NULL;
    int error = kevo_memory_attempt_list(&list, mem, &f);
    if (error < 0)
        return error == KEVO_ENOTFOUND ? 0 : error;
    int found = 0;
    for (size_t i = 0; i < list->n && !found; i++) {
        kevo_recipe_step *steps = NULL;
        size_t n = 0;
        if (!list->attempts[i].recipes_json ||
            kevo_recipe_chain_from_json(&steps, &n, list->attempts[i].recipes_json) < 0)
            continue;
        size_t k = n; /* its step: the last (appended) or anywhere (placed) */
        while (k > 0 && strcmp(steps[k - 1].recipe, recipe) != 0)
            k--;
        if (k > 0 && steps[k - 1].n_params >= np) {
            memcpy(best, steps[k - 1].params, np * sizeof(long));
            found = 1;
        }
        kevo_recipe_chain_free(steps);
    }
    kevo_attempt_list_free(list);
    return found;
}

static bool same_step(const kevo_recipe_step *a, const kevo_recipe_step *b)
{
    if (strcmp(a->recipe, b->recipe) != 0 || a->n_params != b->n_params)
        return false;
    for (size_t i = 0; i < a->n_params; i++)
        if (a->params[i] != b->params[i])
            return false;
    return true;
}

/* The step a child's chain (n steps) added to its start point's (m), or
 * changed in it: the one without which it is the start's (the last when
 * appended, another when placed: kevo_builtin__place); for a chain as long
 * as the start's, the one step that differs (a retune: of the last step,
 * or of a placed one, retune_placed); else the last. */
static size_t added_step(const kevo_recipe_step *steps, size_t n, const kevo_recipe_step *start,
                         size_t m)
{
    for (size_t k = n; n == m + 1 && k-- > 0;) {
        bool same = true;
        for (size_t i = 0, j = 0; i < n && same; i++)
            if (i != k)
                same = same_step(&steps[i], &start[j++]);
        if (same)
            return k;
    }
    size_t differ = n, count = 0;
    for (size_t i = 0; n == m && i < n; i++)
        if (!same_step(&steps[i], &start[i]))
            differ = i, count++;
    return count == 1 ? differ : n - 1;
}

/* Titles of the arms already tried from attempt `start_id`, whose chain is
 * start[0..m) (the step each child's chain added to it: added_step; a
 * child more than one step longer, the transfer move's, tried none),
 * newline-separated in *out (malloc'd). */
static int tried_arms(char **out, kevo_memory *mem, int64_t start_id,
                      const kevo_recipe_step *start, size_t m)
{
    kevo_buf b = {0};
    kevo_attempt_list *kids = NULL;
    *out = NULL;
    if (start_id > 0 && kevo_memory_attempt_children(&kids, mem, start_id) == 0) {
        for (size_t i = 0; i < kids->n; i++) {
            kevo_recipe_step *steps = NULL;
            size_t n = 0;
            if (!kids->attempts[i].recipes_json ||
                kevo_recipe_chain_from_json(&steps, &n, kids->attempts[i].recipes_json) < 0)
                continue;
            if (n > m + 1) { /* a transfer (builtin_transfer.c): no one arm tried */
                kevo_recipe_chain_free(steps);
                continue;
            }
            size_t k = n ? added_step(steps, n, start, m) : 0;
            const kevo_recipe_desc *d = n ? kevo_recipe_find(steps[k].recipe) : NULL;
            if (d) {
                char title[160];
                int vp = variant_param(d->name);
                arm_title(title, sizeof(title), d, vp >= 0 ? steps[k].params[vp] : -1);
                kevo_buf_printf(&b, "%s\n", title);
            }
            kevo_recipe_chain_free(steps);
        }
        kevo_attempt_list_free(kids);
    }
    kevo_error_clear();
    *out = kevo_buf_detach(&b);
    return 0;
}

bool kevo_agent__listed(const char *lines, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = lines; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !memcmp(p, line, n))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

/* What one proposal works on and decides, shared by its steps. */
typedef struct proposal_ctx {
    kevo_memory *mem;
    const kevo_agent_task *at;
    const kevo_run_config *cfg;
    kevo_rng *rng;
    kevo_recipe_input *start; /* the start point, parsed once */
    arm_book book;
    const kevo_recipe_desc *all;
    size_t nr;
    int *applicable; /* per recipe of the registry */
    size_t napp;
    bool explore;
    size_t pick;      /* the recipe picked, nr when none */
    long pick_variant; /* its variant, -1 for the recipe as a whole */
    /* the retune move: the start point's last step, when it has tuning
     * parameters, and the text it was applied to */
    kevo_recipe_step *chain; /* the start point's chain */
    size_t nchain;
    size_t last;                /* registry index of its last recipe, nr when not tunable */
    char *base_source;          /* the text the last step rewrote (p->base borrows it) */
    kevo_recipe_input *base;    /* its input, NULL when not found */
    bool last_on_start;         /* that recipe also applies to the start point itself */
} proposal_ctx;

static bool variant_applies(proposal_ctx *p, size_t i, int vp, long v);

/* Which recipes of the backend apply to the start point (default
 * parameters, on the one model; a recipe whose parameter picks the
 * transformation, when one of its variants applies: `flags` whose default
 * set changes nothing still has sets that do). */
static void find_applicable(proposal_ctx *p)
{
    for (size_t i = 0; i < p->nr; i++) {
        bool ok = false;
        char *reason = NULL;
        if (strcmp(p->all[i].backend, p->cfg->backend) != 0)
            continue; /* recipes are per backend */
        if (kevo_recipe_input_check(&ok, &reason, p->all[i].name, NULL, 0, p->start) < 0)
            ok = false;
        int vp = variant_param(p->all[i].name);
        for (size_t c = 0; !ok && vp >= 0 && c < p->all[i].params[vp].n_choices; c++)
            ok = variant_applies(p, i, vp, p->all[i].params[vp].choices[c]);
        if (i == p->last)
            p->last_on_start = ok;
        if (ok || (i == p->last && p->base)) { /* or retuned on the text it rewrote */
            p->applicable[i] = 1;
            p->napp++;
        }
        kevo_error_clear();
        free(reason);
    }
}

/* Whether variant v of recipe i (its variant parameter vp) applies on its
 * own. */
static bool variant_applies(proposal_ctx *p, size_t i, int vp, long v)
{
    long params[KEVO_RECIPE_MAX_PARAMS];
    size_t np = 0;
    bool ok = false;
    kevo_recipe_params_default(params, &np, p->all[i].name);
    params[vp] = v;
    if (kevo_recipe_input_check(&ok, NULL, p->all[i].name, params, np, p->start) < 0)
        kevo_error_clear();
    return ok;
}

/* Whether word `w` (length n) is one of the space-separated words of `list`. */
static bool has_word(const char *list, const char *w, size_t n)
{
    for (const char *p = list; *p;) {
        p += strspn(p, " ");
        size_t len = strcspn(p, " ");
        if (len == n && len > 0 && !memcmp(p, w, n))
            return true;
        p += len;
    }
    return false;
}

/* Whether the arm (variant v of recipe d) is written for traits
 * (kevo_recipe_arm_traits); when it is, *hit says whether the task has one
 * of them (the book's signature), *n how many rewards the arm's signature
 * item holds and *q its Q. */
static bool trait_arm(bool *hit, double *q, int64_t *n, proposal_ctx *p,
                      const kevo_recipe_desc *d, long v, const arm_items *items)
{
    const char *targets = kevo_recipe_arm_traits(d->name, v);
    const char *mine = p->book.signature + strlen("traits: ");
    *hit = false;
    *q = 0;
    *n = 0;
    for (const char *t = targets; t && *t && !*hit;) {
        t += strspn(t, " ");
        size_t len = strcspn(t, " ");
        *hit = has_word(mine, t, len);
        t += len;
    }
    if (!targets || !items->signature ||
        kevo_memory_q_get(q, n, p->mem, items->signature, KEVO_STAGE_REFINE) < 0) {
        kevo_error_clear();
        return false;
    }
    return true;
}

/* The arms of applicable recipe i, in order: the recipe as a whole, or one
 * per variant that applies on its own, each with its items and the prior
 * it is valued from. `unbiased`: as arm_value. */
typedef struct arm_walk {
    size_t i, c, nv;
    int vp;
    double prior;
    const kevo_run_config *unbiased;
    bool known;       /* the last arm's own items have evidence (arm_value) */
    bool whole_known; /* a variant recipe's items as a whole have evidence */
} arm_walk;

static int arm_walk_start(arm_walk *w, proposal_ctx *p, size_t i, const kevo_run_config *unbiased)
{
    const kevo_recipe_desc *d = &p->all[i];
    *w = (arm_walk){.i = i, .vp = variant_param(d->name), .unbiased = unbiased};
    w->nv = w->vp < 0 ? 1 : d->params[w->vp].n_choices;
    /* a variant arm nobody has tried yet is valued like its recipe as a
     * whole, not optimistically: otherwise a cold memory spends its budget
     * on every flag set in turn */
    w->prior = p->cfg->q_init;
    if (w->vp >= 0) {
        arm_items whole;
        int error = book_arm(&whole, &p->book, d, -1);
        if (error < 0)
            return error;
        w->prior = arm_value(p->mem, &whole, p->cfg->q_init, unbiased, &w->whole_known);
    }
    return 0;
}

/* The next arm not in `tried` (NULL: every arm): its variant into *v (-1:
 * the recipe as a whole) and its value into *value. Returns 1, 0 when none
 * is left, or an error. */
static int arm_walk_next(arm_walk *w, proposal_ctx *p, const char *tried, long *v, double *value)
{
    const kevo_recipe_desc *d = &p->all[w->i];
    for (; w->c < w->nv; w->c++) {
        *v = w->vp < 0 ? -1 : d->params[w->vp].choices[w->c];
        if (w->vp >= 0 && !variant_applies(p, w->i, w->vp, *v))
            continue; /* this variant must apply on its own */
        char title[160];
        arm_title(title, sizeof(title), d, *v);
        if (tried && kevo_agent__listed(tried, title))
            continue;
        arm_items items;
        int error = book_arm(&items, &p->book, d, *v);
        if (error < 0)
            return error;
        double q;
        int64_t n;
        bool hit;
        *value = arm_value(p->mem, &items, w->prior, w->unbiased, &w->known);
        /* a variant nobody tried is valued from its recipe as a whole, so
         * it is no more novel than that: otherwise every flag set in turn
         * kept the draft the start point (sigmoid at 5.5x with -ffast-math
         * spent its last five attempts on the reference's other flag sets
         * and omp_parallel, never on top) */
        w->known = w->known || w->whole_known;
        if (trait_arm(&hit, &q, &n, p, d, *v, &items)) {
            /* written for a trait: what it measured on kernels of another
             * trait signature says nothing here (-ffast-math at 1x on relu
             * is no reason to leave it off sigmoid, nor its 40x on tanh a
             * reason to try it on relu), so kernels of this signature
             * decide. None has tried it yet, and the task has the trait:
             * it goes first, once; nor the trait: as any other arm. */
            if (n > 0) {
                *value = q_value(q, n, w->unbiased);
                w->known = true;
            } else if (hit) {
                *value = w->unbiased ? fmax(*value, p->cfg->q_init) : 1.0;
                w->known = false;
            }
        }
        if (items.state) {
            /* the thread step on a shaped kernel (book_state): valued by
             * what it measured on shaped kernels alone; none yet, it goes
             * first, once, as an arm written for a trait does */
            if (kevo_memory_q_get(&q, &n, p->mem, items.state, KEVO_STAGE_REFINE) == 0 && n > 0)
                *value = q_value(q, n, w->unbiased);
            else
                *value = w->unbiased ? fmax(*value, p->cfg->q_init) : 1.0;
            kevo_error_clear();
        }
        w->c++;
        return 1;
    }
    return 0;
}

/* Score the arms of applicable recipe i (one, or one per variant) and keep
 * the best in p->pick; pass 0 skips arms already tried. *best and *ties
 * carry across calls. */
static int score_arms(proposal_ctx *p, size_t i, int pass, const char *tried, double *best,
                      int *ties)
{
    arm_walk w;
    long v = -1;
    double sc = 0;
    int rc = arm_walk_start(&w, p, i, NULL);
    if (rc < 0)
        return rc;
    while ((rc = arm_walk_next(&w, p, pass == 0 ? tried : NULL, &v, &sc)) == 1) {
        if (sc > *best + 1e-12) {
            *best = sc;
            p->pick = i;
            p->pick_variant = v;
            *ties = 1;
        } else if (fabs(sc - *best) <= 1e-12 && kevo_rng_uniform(p->rng) * ++*ties < 1.0) {
            p->pick = i;
            p->pick_variant = v;
        }
    }
    return rc;
}

/* Epsilon-greedy over the arms (or uniform over the recipes for the random
 * baseline); ties broken at random. Exploiting: the best arm not yet tried
 * from this start point (what was tried is known; its outcome is in the
 * Q-values), or the best of all when every arm has been tried. */
static int pick_arm(proposal_ctx *p, int64_t start_id)
{
    int error = 0;
    char *tried = NULL;
    p->pick = p->nr;
    p->pick_variant = -1;
    p->explore = p->cfg->retrieval == KEVO_RETRIEVAL_RANDOM || !p->cfg->memory ||
                 kevo_rng_uniform(p->rng) < p->cfg->epsilon;
    if (p->explore) {
        size_t k = (size_t)(kevo_rng_uniform(p->rng) * (double)p->napp);
        for (size_t i = 0; i < p->nr; i++)
            if (p->applicable[i] && k-- == 0)
                p->pick = i;
        goto done;
    }
    tried_arms(&tried, p->mem, start_id, p->chain, p->nchain);
    double best = -INFINITY;
    int ties = 0;
    for (int pass = 0; pass < 2 && p->pick == p->nr; pass++)
        for (size_t i = 0; i < p->nr; i++)
            if (p->applicable[i] && (error = score_arms(p, i, pass, tried, &best, &ties)) < 0)
                goto done;
done:
    free(tried);
    return error;
}

/* The speedup an arm is expected to give: its mean reward (tanh of the log
 * speedup, kevo_memory_reward_refine) turned back into a factor; a mean
 * near 1 (every try a large gain) is held below 1 so the factor stays
 * finite. */
static double expected_gain(double mean)
{
    return exp(atanh(fmin(mean, 0.9999)));
}

/* The largest expected gain (expected_gain) among the arms of recipe i (one,
 * or one per variant that applies on its own) not in `tried` and expected
 * to gain: the mean reward for this task (arm_value, unbiased) above 0,
 * q_init where nothing is known; *novel set when one of them is not known
 * (arm_value: no task of this category, signature or bottleneck has tried
 * it). *gain and *novel are left as they are when none is. */
static int open_arm_gain(double *gain, bool *novel, proposal_ctx *p, size_t i, const char *tried)
{
    arm_walk w;
    long v = -1;
    double mean = 0;
    int rc = arm_walk_start(&w, p, i, p->cfg);
    if (rc < 0)
        return rc;
    while ((rc = arm_walk_next(&w, p, tried, &v, &mean)) == 1)
        if (mean > 0) {
            *gain = fmax(*gain, expected_gain(mean));
            *novel = *novel || !w.known;
        }
    return rc < 0 ? rc : 0;
}

int kevo_builtin_open_gain(double *gain, bool *novel, kevo_memory *mem, const kevo_agent_task *at,
                           int64_t id, const char *source, const char *recipes_json,
                           const kevo_run_config *cfg)
{
    int error = 0;
    char *tried = NULL;
    proposal_ctx p = {.mem = mem, .at = at, .cfg = cfg};
    *gain = 0;
    *novel = false;
    if (!cfg->memory || cfg->retrieval == KEVO_RETRIEVAL_RANDOM)
        return 0; /* no values to rank arms by: the ablations keep their start points */
    p.all = kevo_recipe_list(&p.nr);
    p.last = p.nr; /* fresh arms only: the retune move is the start rule's */
    if (!(p.applicable = calloc(p.nr, sizeof(int)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    if (recipes_json && *recipes_json &&
        kevo_recipe_chain_from_json(&p.chain, &p.nchain, recipes_json) < 0) {
        kevo_error_clear(); /* an unreadable chain: its children's last steps count */
        p.nchain = 0;
    }
    if ((error = kevo_recipe_input_new(&p.start, source, at->task->name)) < 0 ||
        (error = book_open(&p.book, mem, at, p.start, source)) < 0 ||
        (error = tried_arms(&tried, mem, id, p.chain, p.nchain)) < 0)
        goto done;
    book_state(&p.book, p.chain, p.nchain);
    find_applicable(&p);
    for (size_t i = 0; i < p.nr && error == 0; i++)
        if (p.applicable[i])
            error = open_arm_gain(gain, novel, &p, i, tried);
done:
    free(tried);
    book_close(&p.book);
    kevo_recipe_input_free(p.start);
    kevo_recipe_chain_free(p.chain);
    free(p.applicable);
    return error;
}

int kevo_builtin__arm_score(double *value, bool *known, kevo_memory *mem,
                            const kevo_agent_task *at, const char *source, const char *recipe,
                            const kevo_run_config *cfg)
{
    const kevo_recipe_desc *d = kevo_recipe_find(recipe);
    if (!d)
        return kevo_error_set(KEVO_ENOTFOUND, "no recipe '%s'", recipe);
    proposal_ctx p = {.mem = mem, .at = at, .cfg = cfg};
    arm_items items;
    int error = kevo_recipe_input_new(&p.start, source, at->task->name);
    if (error == 0 && (error = book_open(&p.book, mem, at, p.start, source)) == 0 &&
        (error = book_arm(&items, &p.book, d, -1)) == 0)
        *value = arm_value(mem, &items, cfg->q_init, NULL, known);
    book_close(&p.book);
    kevo_recipe_input_free(p.start);
    return error;
}

/* Rewrite the start point with the picked recipe: the arm's variant as it
 * is, or tuning parameters inherited from the best attempt of the category
 * (exploiting), else the defaults (exploiting) or mutated defaults
 * (exploring). params[0..*np) get what was used. */
static int rewrite(kevo_proposal *out, long *params, size_t *np, proposal_ctx *p)
{
    int error = 0;
    const char *name = p->all[p->pick].name;
    char *src = NULL;
    bool inherited = false;
    if ((error = kevo_recipe_params_default(params, np, name)) < 0)
        return error;
    int vp = variant_param(name);
    if (vp >= 0 && p->pick_variant >= 0) {
        /* the arm fixes the variant: no tuning */
        params[vp] = p->pick_variant;
        if (kevo_recipe_input_apply(&src, name, params, *np, p->start) < 0) {
            out->failure = strdup(kevo_error_last());
            kevo_error_clear();
        }
        inherited = true;
    } else if (!p->explore && *np > 0) {
        /* exploiting: tune around the best seen (exploring: fresh values) */
        long best[KEVO_RECIPE_MAX_PARAMS];
        arm_items items;
        if ((error = book_arm(&items, &p->book, &p->all[p->pick], -1)) < 0 ||
            (error = best_params(best, p->mem, items.category, name, *np)) < 0)
            goto done;
        /* the best parameters seen in this category, kept as they are half
         * of the time (exploit) and mutated otherwise (explore around them);
         * they may not fit this kernel (a loop index it lacks): then defaults */
        if (error == 1) {
            error = 0;
            bool changed = false;
            if (kevo_rng_uniform(p->rng) < 0.5)
                kevo_recipe_input_params_mutate(&changed, best, p->rng, name, p->start);
            if (kevo_recipe_input_apply(&src, name, best, *np, p->start) == 0) {
                memcpy(params, best, sizeof(best));
                inherited = true;
            }
        }
    }
    if (!inherited) {
        /* nothing to inherit: exploiting, the recipe's defaults (the
         * parameters measured best where they were chosen: register_block's
         * rows 6 x cols 2); exploring, fresh values. Mutating the defaults
         * here too made a 60-attempt run on matmul_square apply
         * register_block once, at rows 2 (2.1x where rows 6 gave 3.3x), and
         * never from that kernel again. The retune move tunes from there. */
        bool changed = false;
        if (*np > 0 && p->explore)
            kevo_recipe_input_params_mutate(&changed, params, p->rng, name, p->start);
        if (kevo_recipe_input_apply(&src, name, params, *np, p->start) < 0)
            /* the precondition held but the rewrite failed: count it as a failed attempt */
            out->failure = strdup(kevo_error_last());
    }
done:
    out->source = src;
    return error;
}

/* The proposal's recipe chain: the start point's, plus this step. */
static int record_chain(kevo_proposal *out, const char *start_recipes_json, const char *name,
                        const long *params, size_t np)
{
    int error = 0;
    kevo_recipe_step *chain = NULL;
    size_t nchain = 0;
    if (start_recipes_json && *start_recipes_json)
        kevo_recipe_chain_from_json(&chain, &nchain, start_recipes_json);
    kevo_recipe_step *grown = realloc(chain, (nchain + 1) * sizeof(*chain));
    if (!grown) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    chain = grown;
    memset(&chain[nchain], 0, sizeof(chain[nchain]));
    chain[nchain].recipe = name;
    memcpy(chain[nchain].params, params, KEVO_RECIPE_MAX_PARAMS * sizeof(long));
    chain[nchain].n_params = np;
    kevo_recipe_chain_to_json(&out->recipes_json, chain, nchain + 1);
    chain[nchain].recipe = NULL; /* borrowed from the registry, not ours to free */
done:
    kevo_recipe_chain_free(chain); /* recipe names from from_json are owned by the chain */
    return error;
}

/* The items the Q-values learn from: the arm that was actually tried, and
 * for a variant also the recipe as a whole (the prior of its untried
 * variants). */
static int record_use(kevo_proposal *out, proposal_ctx *p, const long *params)
{
    int error = 0;
    const kevo_recipe_desc *d = &p->all[p->pick];
    int vp = variant_param(d->name);
    arm_items used;
    if (!p->cfg->memory) {
        /* --memory off: no arm is booked as an item, none is used (the
         * attempt's recipe chain still says what was applied) */
        arm_title(out->summary, sizeof(out->summary), d, vp >= 0 ? params[vp] : -1);
        return 0;
    }
    if ((error = book_arm(&used, &p->book, d, vp >= 0 ? params[vp] : -1)) < 0)
        return error;
    proposal_use(out, &used);
    if (vp >= 0) {
        if ((error = book_arm(&used, &p->book, d, -1)) < 0)
            return error;
        proposal_use(out, &used);
    }
    arm_title(out->summary, sizeof(out->summary), d, vp >= 0 ? params[vp] : -1);
    return 0;
}

/* The retune move. A recipe whose parameters tune it (rows, tile sizes,
 * unroll factors), drawn again right after it was applied, is applied with
 * other parameters to the text it rewrote, not a second time on top of its
 * own result (register_block twice, unroll of an unrolled loop): the
 * parameter search a performance engineer runs on the step just made. The
 * candidate refines the start point (its Q2 learns from it, its tried arms
 * hold it) and its chain is the start point's with the last step's
 * parameters changed, so retuning never makes the chain longer. */

/* The start point's chain and, when its last recipe has tuning parameters
 * (not a variant recipe), that recipe's registry index and the text it was
 * applied to: the source of the nearest ancestor whose chain is the start
 * point's without its last step (the parent after an append; further up
 * after retunes, whose parent carries the same number of steps; after a
 * transfer, none: that chain replayed on the task's start). Anything
 * missing on the way leaves the move off. */
static bool replays_to(const char *start_source, const kevo_recipe_step *chain, size_t n,
                       const char *base, const char *kernel);

static int retune_open(proposal_ctx *p, int64_t start_id, const char *start_source,
                       const char *start_recipes_json)
{
    int error = 0;
    char *want = NULL;
    kevo_attempt *a = NULL;
    p->last = p->nr;
    if (!start_recipes_json || !*start_recipes_json ||
        kevo_recipe_chain_from_json(&p->chain, &p->nchain, start_recipes_json) < 0 ||
        p->nchain == 0)
        goto out;
    const kevo_recipe_step *l = &p->chain[p->nchain - 1];
    size_t i = 0;
    while (i < p->nr && strcmp(p->all[i].name, l->recipe) != 0)
        i++;
    if (i == p->nr || p->all[i].n_params == 0 || variant_param(l->recipe) >= 0 ||
        strcmp(p->all[i].backend, p->cfg->backend) != 0 ||
        kevo_recipe_chain_to_json(&want, p->chain, p->nchain - 1) < 0)
        goto out;
    int64_t id = start_id;
    size_t shorter = (size_t)-1; /* steps of the first ancestor with fewer */
    for (int up = 0; up < 64 && id > 0 && !p->base; up++) {
        kevo_attempt_free(a);
        a = NULL;
        if (kevo_memory_attempt_get(&a, p->mem, id) < 0)
            break;
        if (up > 0 && a->source) {
            kevo_recipe_step *st = NULL;
            size_t n = 0;
            char *have = NULL;
            if (!a->recipes_json || !*a->recipes_json ||
                kevo_recipe_chain_from_json(&st, &n, a->recipes_json) == 0)
                kevo_recipe_chain_to_json(&have, st, n);
            kevo_recipe_chain_free(st);
            if (have && n < p->nchain && shorter == (size_t)-1)
                shorter = n;
            if (have && !strcmp(have, want)) {
                if (!(p->base_source = strdup(a->source)))
                    error = kevo_error_set(KEVO_ENOMEM, "out of memory");
                else
                    error = kevo_recipe_input_new(&p->base, p->base_source, p->at->task->name);
                if (error < 0) {
                    free(have);
                    goto out;
                }
            }
            free(have);
        }
        id = a->parent_id;
    }
    if (!p->base && shorter != (size_t)-1 && shorter + 1 < p->nchain && p->at->c_start) {
        /* a transfer's kernel (builtin_transfer.c) came several steps at
         * once: no ancestor holds the text its last step rewrote, the
         * chain before that step replayed on the task's start does */
        const char *kernel = p->at->task->name;
        char *base = NULL;
        if (replays_to(start_source, p->chain, p->nchain, p->at->c_start, kernel) &&
            kevo_recipe_apply_chain(&base, p->chain, p->nchain - 1, p->at->c_start, kernel) == 0) {
            p->base_source = base;
            if ((error = kevo_recipe_input_new(&p->base, base, kernel)) < 0)
                goto out;
        } else {
            free(base);
        }
    }
    if (p->base)
        p->last = i;
out:
    kevo_error_clear();
    kevo_attempt_free(a);
    free(want);
    return error;
}

/* The retune itself: the last step's parameters with one changed (among
 * those that apply to the base), applied to the base. 1 when it made a
 * candidate (out->source, or out->failure when the rewrite failed), 0 when
 * no other parameters apply (then the recipe is appended as usual). */
static int retune(kevo_proposal *out, long *params, size_t *np, proposal_ctx *p)
{
    const kevo_recipe_step *l = &p->chain[p->nchain - 1];
    const char *name = p->all[p->last].name;
    int error = kevo_recipe_params_default(params, np, name);
    if (error < 0)
        return error;
    for (size_t k = 0; k < l->n_params && k < *np; k++)
        params[k] = l->params[k];
    bool changed = false;
    if ((error = kevo_recipe_input_params_mutate(&changed, params, p->rng, name, p->base)) < 0)
        return error;
    if (!changed)
        return 0;
    if (kevo_recipe_input_apply(&out->source, name, params, *np, p->base) < 0) {
        out->failure = strdup(kevo_error_last());
        kevo_error_clear();
    }
    return 1;
}

/* The proposal's chain after a retune: the start point's with the last
 * step's parameters replaced. */
static int record_retuned_chain(kevo_proposal *out, proposal_ctx *p, const long *params,
                                size_t np)
{
    kevo_recipe_step *l = &p->chain[p->nchain - 1];
    memcpy(l->params, params, KEVO_RECIPE_MAX_PARAMS * sizeof(long));
    l->n_params = np;
    return kevo_recipe_chain_to_json(&out->recipes_json, p->chain, p->nchain);
}

/* Where a step goes in the chain. The nest shapers (rank 0: fuse,
 * interchange, permute, tile, unroll_jam, register_block, scan, acc_row,
 * split) rewrite
 * the loops of the scalar kernel; threads (1), the vector forms of the
 * inner loops (2) and streaming stores (3) are put on the nest as it ends
 * up. Appended after those, a shaper meets their output instead:
 * register_block drawn on Level 1's conv2d after omp_parallel and
 * vectorize blocked the vectorised loop, 1.8x slower than the same three
 * steps with register_block first (docs/performance.md, "Where a step
 * goes"). Others (flags, restrict, pack, kblock): -1, no place of their
 * own. */
static int step_rank(const char *recipe)
{
    static const struct {
        const char *name;
        int rank;
    } ranks[] = {
        {"fuse", 0},      {"interchange", 0}, {"permute", 0}, {"tile", 0},
        {"unroll_jam", 0}, {"register_block", 0}, {"scan", 0}, {"acc_row", 0},
        {"split", 0}, /* the nest */
        {"omp_parallel", 1},                                   /* threads */
        {"vectorize", 2}, {"omp_simd", 2},    {"unroll", 2},   /* inner loops */
        {"stream", 3},                                         /* stores */
    };
    for (size_t i = 0; recipe && i < sizeof(ranks) / sizeof(ranks[0]); i++)
        if (!strcmp(ranks[i].name, recipe))
            return ranks[i].rank;
    return -1;
}

/* Whether chain[0..n), replayed on `base`, gives start_source: then a
 * chain with a step put among them, or one of them changed, is the start
 * point's steps so changed. */
static bool replays_to(const char *start_source, const kevo_recipe_step *chain, size_t n,
                       const char *base, const char *kernel)
{
    char *replayed = NULL;
    bool same = kevo_recipe_apply_chain(&replayed, chain, n, base, kernel) == 0 &&
                strcmp(replayed, start_source) == 0;
    free(replayed);
    kevo_error_clear();
    return same;
}

int kevo_builtin__place(char **out_source, char **out_chain, const char **before,
                        const char *base, const char *kernel, const char *start_source,
                        const kevo_recipe_step *chain, size_t n, const char *recipe,
                        const long *params, size_t np)
{
    int error = 0;
    *out_source = *out_chain = NULL;
    *before = NULL;
    if (step_rank(recipe) != 0 || !base || n == 0)
        return 0;
    size_t k = 0;
    while (k < n && step_rank(chain[k].recipe) <= 0)
        k++;
    if (k == n)
        return 0; /* nothing it should go before */
    char *placed = NULL;
    kevo_recipe_step *steps = calloc(n + 1, sizeof(*steps));
    if (!steps)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    memcpy(steps, chain, k * sizeof(*steps));
    steps[k].recipe = recipe;
    memcpy(steps[k].params, params, KEVO_RECIPE_MAX_PARAMS * sizeof(long));
    steps[k].n_params = np;
    memcpy(steps + k + 1, chain + k, (n - k) * sizeof(*steps));
    /* only where the chain, replayed, is the start point (then the placed
     * chain is the start point's steps with this one among them), and
     * only where every step still applies in the new order */
    if (!replays_to(start_source, chain, n, base, kernel) ||
        kevo_recipe_apply_chain(&placed, steps, n + 1, base, kernel) < 0) {
        kevo_error_clear();
        goto out;
    }
    if ((error = kevo_recipe_chain_to_json(out_chain, steps, n + 1)) < 0)
        goto out;
    *out_source = placed;
    placed = NULL;
    *before = chain[k].recipe;
out:
    free(placed);
    free(steps);
    return error;
}

/* The retune move for a nest shaper that kevo_builtin__place put before
 * later steps: drawn again on a kernel whose chain has it (not last), it
 * is not applied a second time on top of itself (register_block on a
 * register-blocked GEMM, three times over in a row) but retuned where it
 * stands: its parameters with one changed (among those that apply to the
 * text it rewrote, the chain before it replayed on the start), then the
 * steps after it replayed. 1 when it made a candidate (out->source and
 * out->recipes_json), 0 when the move does not apply (then the recipe is
 * drawn as usual), or an error. */
static int retune_placed(kevo_proposal *out, long *params, size_t *np, proposal_ctx *p,
                         const char *start_source)
{
    const char *name = p->all[p->pick].name;
    const char *ref = p->at->c_start, *kernel = p->at->task->name;
    size_t k = p->nchain > 0 ? p->nchain - 1 : 0;
    if (step_rank(name) != 0 || !ref || p->nchain < 2 || variant_param(name) >= 0)
        return 0;
    while (k > 0 && strcmp(p->chain[k - 1].recipe, name) != 0)
        k--;
    if (k-- == 0)
        return 0; /* not in the chain before its last step */
    int error = 0, made = 0;
    char *base = NULL, *src = NULL;
    kevo_recipe_input *in = NULL;
    kevo_recipe_step *steps = malloc(p->nchain * sizeof(*steps));
    if (!steps)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    memcpy(steps, p->chain, p->nchain * sizeof(*steps));
    if ((error = kevo_recipe_params_default(params, np, name)) < 0)
        goto out;
    for (size_t i = 0; i < p->chain[k].n_params && i < *np; i++)
        params[i] = p->chain[k].params[i];
    bool changed = false;
    if (!replays_to(start_source, p->chain, p->nchain, ref, kernel) ||
        kevo_recipe_apply_chain(&base, p->chain, k, ref, kernel) < 0)
        goto out;
    if ((error = kevo_recipe_input_new(&in, base, kernel)) < 0 ||
        (error = kevo_recipe_input_params_mutate(&changed, params, p->rng, name, in)) < 0 ||
        !changed)
        goto out;
    memcpy(steps[k].params, params, KEVO_RECIPE_MAX_PARAMS * sizeof(long));
    steps[k].n_params = *np;
    if (kevo_recipe_apply_chain(&src, steps, p->nchain, ref, kernel) < 0 ||
        (error = kevo_recipe_chain_to_json(&out->recipes_json, steps, p->nchain)) < 0)
        goto out;
    out->source = src;
    src = NULL;
    made = 1;
out:
    if (error == 0)
        kevo_error_clear(); /* a step that no longer applies: no move */
    kevo_recipe_input_free(in);
    free(base);
    free(src);
    free(steps);
    return error < 0 ? error : made;
}

/* The start point is parsed once (p.start) for the applicability of every
 * recipe, the variants' checks, the parameter mutation and the rewrite;
 * the rewritten source is parsed once more, as the recipes' guard. */
int kevo_builtin_propose(kevo_proposal *out, kevo_memory *mem, const kevo_agent_task *at,
                         int64_t start_id, const char *start_source, const char *start_recipes_json,
                         const kevo_run_config *cfg, kevo_rng *rng)
{
    int error = 0;
    proposal_ctx p = {.mem = mem, .at = at, .cfg = cfg, .rng = rng};
    long params[KEVO_RECIPE_MAX_PARAMS] = {0};
    size_t np = 0;

    memset(out, 0, sizeof(*out));
    p.all = kevo_recipe_list(&p.nr);
    if (!(p.applicable = calloc(p.nr, sizeof(int)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    p.last = p.nr;
    if ((error = kevo_recipe_input_new(&p.start, start_source, at->task->name)) < 0 ||
        (error = book_open(&p.book, mem, at, p.start, start_source)) < 0 ||
        (error = retune_open(&p, start_id, start_source, start_recipes_json)) < 0)
        goto done;
    book_state(&p.book, p.chain, p.nchain);
    find_applicable(&p);
    if (p.napp == 0) {
        out->exhausted = true;
        goto done;
    }
    if ((error = pick_arm(&p, start_id)) < 0)
        goto done;
    if (p.pick == p.nr) { /* no variant applied on its own */
        out->exhausted = true;
        goto done;
    }
    int retuned = 0;
    if (p.pick == p.last && (retuned = retune(out, params, &np, &p)) < 0)
        goto done;
    if (retuned && (error = record_retuned_chain(out, &p, params, np)) < 0)
        goto done;
    if (!retuned && p.pick != p.last &&
        (retuned = retune_placed(out, params, &np, &p, start_source)) < 0)
        goto done;
    if (retuned) {
        if ((error = record_use(out, &p, params)) < 0)
            goto done;
        /* its speedup over the start point is what the new parameters
         * gained, not what the recipe gains: the arm's Q-values keep what
         * fresh applications measured (a retune 0.6x as fast as the first
         * register_block on a convolution had taken the arm's Q there from
         * 0.65 to 0.15, and the next convolution started elsewhere) */
        for (size_t k = 0; k < out->nused; k++)
            out->used[k].no_credit = true;
        size_t n = strlen(out->summary);
        snprintf(out->summary + n, sizeof(out->summary) - n, " (retuned)");
        goto done;
    }
    if (p.pick == p.last && !p.last_on_start) {
        /* only the retune applied, and no other parameters do: another arm */
        p.applicable[p.last] = 0;
        if (--p.napp == 0) {
            out->exhausted = true;
            goto done;
        }
        if ((error = pick_arm(&p, start_id)) < 0)
            goto done;
        if (p.pick == p.nr) {
            out->exhausted = true;
            goto done;
        }
    }
    if ((error = rewrite(out, params, &np, &p)) < 0)
        goto done;
    /* a nest shaper goes before the steps that work on the nest it
     * shapes (step_rank); appended where it has no place or the placed
     * chain does not apply */
    const char *before = NULL;
    char *placed = NULL, *placed_chain = NULL;
    if (out->source && !out->failure &&
        (error = kevo_builtin__place(&placed, &placed_chain, &before, at->c_start,
                                     at->task->name, start_source, p.chain, p.nchain,
                                     p.all[p.pick].name, params, np)) < 0)
        goto done;
    if (placed) {
        free(out->source);
        out->source = placed;
        out->recipes_json = placed_chain;
    } else if ((error = record_chain(out, start_recipes_json, p.all[p.pick].name, params,
                                     np)) < 0) {
        goto done;
    }
    if ((error = record_use(out, &p, params)) < 0)
        goto done;
    if (before) {
        size_t n = strlen(out->summary);
        snprintf(out->summary + n, sizeof(out->summary) - n, " (before %s)", before);
    }
done:
    book_close(&p.book);
    kevo_recipe_input_free(p.start);
    kevo_recipe_input_free(p.base);
    free(p.base_source);
    kevo_recipe_chain_free(p.chain);
    free(p.applicable);
    return error;
}
