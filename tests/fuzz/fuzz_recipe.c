/*
 * tests/fuzz/fuzz_recipe.c - libFuzzer target for the recipe engine: the
 * input's first byte picks a recipe and a parameter mutation, the rest is a
 * candidate source defining kernel `k`. Whatever the input, recipes must
 * either apply or decline with KEVO_EINVAL; a rewritten source must accept a
 * second recipe the same way. Any other error ("recipe bug") aborts.
 */
#include "kevo/recipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(char **cur, unsigned pick)
{
    size_t n_recipes = 0;
    const kevo_recipe_desc *list = kevo_recipe_list(&n_recipes);
    const kevo_recipe_desc *d = &list[pick % n_recipes];
    long params[KEVO_RECIPE_MAX_PARAMS];
    size_t n = 0;
    bool changed = false;
    kevo_rng rng;
    kevo_recipe_params_default(params, &n, d->name);
    kevo_rng_seed(&rng, pick);
    if (pick & 0x80)
        kevo_recipe_params_mutate(&changed, params, &rng, d->name, *cur, "k");
    char *out = NULL;
    int rc = kevo_recipe_apply(&out, d->name, params, n, *cur, "k");
    if (rc != 0 && rc != KEVO_EINVAL) {
        fprintf(stderr, "%s: unexpected %s: %s\n", d->name, kevo_error_name(rc), kevo_error_last());
        abort();
    }
    if (rc == 0) {
        free(*cur);
        *cur = out;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    char *src = malloc(size);
    if (!src)
        return 0;
    memcpy(src, data + 1, size - 1);
    src[size - 1] = '\0';
    one(&src, data[0]);
    one(&src, (unsigned)data[0] >> 3 | ((unsigned)data[0] & 0x80));
    free(src);
    return 0;
}
