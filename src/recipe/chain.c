/*
 * recipe/chain.c - chains of recipe steps to and from JSON, so that the
 * agent records exactly which recipes, with which parameters, produced a
 * candidate, and can replay them. Format (an array, in application order):
 *
 *   [{"recipe": "interchange", "params": {"loop": -1}},
 *    {"recipe": "flags", "params": {"set": 2}, "flags": "-ffast-math"}]
 *
 * Must not: apply recipes (see recipe.c).
 */
#include "model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int kevo_recipe_chain_to_json(char **out_json, const kevo_recipe_step *steps, size_t n)
{
    int error = 0;
    cJSON *arr = NULL;
    char *text = NULL;

    *out_json = NULL;
    if (!(arr = cJSON_CreateArray()))
        goto oom;
    for (size_t i = 0; i < n; i++) {
        const kevo_recipe_desc *d = kevo_recipe_find(steps[i].recipe);
        if (!d) {
            error = kevo_error_set(KEVO_ENOTFOUND, "chain step %zu: unknown recipe '%s'", i + 1,
                                   steps[i].recipe ? steps[i].recipe : "(null)");
            goto done;
        }
        if (steps[i].n_params > d->n_params) {
            error = kevo_error_set(KEVO_EINVAL, "chain step %zu (%s): %zu parameters, takes %zu",
                                   i + 1, d->name, steps[i].n_params, d->n_params);
            goto done;
        }
        cJSON *step = cJSON_CreateObject(), *params = cJSON_CreateObject();
        if (!step || !params) {
            cJSON_Delete(step);
            cJSON_Delete(params);
            goto oom;
        }
        cJSON_AddItemToArray(arr, step);
        if (!cJSON_AddStringToObject(step, "recipe", d->name))
            goto oom;
        cJSON_AddItemToObject(step, "params", params);
        long set = -1;
        for (size_t k = 0; k < d->n_params; k++) {
            long v = k < steps[i].n_params ? steps[i].params[k] : d->params[k].def;
            if (!cJSON_AddNumberToObject(params, d->params[k].name, (double)v))
                goto oom;
            if (strcmp(d->name, "flags") == 0 && k == 0)
                set = v;
        }
        if (set >= 0 && (size_t)set < kevo_recipe_n_flag_sets &&
            !cJSON_AddStringToObject(step, "flags", kevo_recipe_flag_sets[set]))
            goto oom;
    }
    if (!(text = cJSON_PrintUnformatted(arr)))
        goto oom;
    if (!(*out_json = strdup(text)))
        goto oom;
    goto done;
oom:
    error = kevo_error_set(KEVO_ENOMEM, "out of memory writing a recipe chain");
done:
    if (text)
        cJSON_free(text);
    cJSON_Delete(arr);
    return error;
}

static int number_param(long *out, const cJSON *item, size_t step, const char *name)
{
    if (!cJSON_IsNumber(item) || item->valuedouble != floor(item->valuedouble) ||
        fabs(item->valuedouble) > 1e9)
        return kevo_error_set(KEVO_EINVAL, "chain step %zu: parameter '%s' is not an integer", step,
                              name);
    *out = (long)item->valuedouble;
    return 0;
}

int kevo_recipe_chain_from_json(kevo_recipe_step **out_steps, size_t *out_n, const char *json)
{
    int error = 0;
    cJSON *root = NULL;
    kevo_recipe_step *steps = NULL;

    *out_steps = NULL;
    *out_n = 0;
    if (!json || !(root = cJSON_Parse(json)))
        return kevo_error_set(KEVO_EINVAL, "recipe chain: not valid JSON");
    if (!cJSON_IsArray(root)) {
        error = kevo_error_set(KEVO_EINVAL, "recipe chain: expected a JSON array of steps");
        goto done;
    }
    size_t n = (size_t)cJSON_GetArraySize(root);
    if (!(steps = calloc(n ? n : 1, sizeof(*steps)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory reading a recipe chain");
        goto done;
    }
    size_t i = 0;
    const cJSON *el;
    cJSON_ArrayForEach(el, root)
    {
        size_t no = i + 1;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(el, "recipe");
        if (!cJSON_IsObject(el) || !cJSON_IsString(name)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "chain step %zu: expected an object with a "
                                   "\"recipe\" string",
                                   no);
            goto done;
        }
        const kevo_recipe_desc *d = kevo_recipe_find(name->valuestring);
        if (!d) {
            error = kevo_error_set(KEVO_EINVAL, "chain step %zu: unknown recipe '%s'", no,
                                   name->valuestring);
            goto done;
        }
        kevo_recipe_step *s = &steps[i];
        s->recipe = d->name;
        s->n_params = d->n_params;
        for (size_t k = 0; k < d->n_params; k++)
            s->params[k] = d->params[k].def;
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(el, "params");
        bool set_given = false;
        if (cJSON_IsArray(params)) {
            if ((size_t)cJSON_GetArraySize(params) > d->n_params) {
                error = kevo_error_set(KEVO_EINVAL, "chain step %zu (%s): too many parameters", no,
                                       d->name);
                goto done;
            }
            size_t k = 0;
            const cJSON *v;
            cJSON_ArrayForEach(v, params)
            {
                if ((error = number_param(&s->params[k], v, no, d->params[k].name)) < 0)
                    goto done;
                k++;
            }
            set_given = k > 0;
        } else if (cJSON_IsObject(params)) {
            const cJSON *v;
            cJSON_ArrayForEach(v, params)
            {
                size_t k = 0;
                while (k < d->n_params && strcmp(d->params[k].name, v->string) != 0)
                    k++;
                if (k == d->n_params) {
                    error = kevo_error_set(KEVO_EINVAL, "chain step %zu (%s): no parameter '%s'",
                                           no, d->name, v->string);
                    goto done;
                }
                if ((error = number_param(&s->params[k], v, no, v->string)) < 0)
                    goto done;
                set_given |= k == 0;
            }
        } else if (params && !cJSON_IsNull(params)) {
            error = kevo_error_set(KEVO_EINVAL,
                                   "chain step %zu (%s): \"params\" must be an "
                                   "object or an array",
                                   no, d->name);
            goto done;
        }
        const cJSON *flags = cJSON_GetObjectItemCaseSensitive(el, "flags");
        if (strcmp(d->name, "flags") == 0 && cJSON_IsString(flags) && !set_given) {
            size_t k = 0;
            while (k < kevo_recipe_n_flag_sets &&
                   strcmp(kevo_recipe_flag_sets[k], flags->valuestring) != 0)
                k++;
            if (k == kevo_recipe_n_flag_sets) {
                error = kevo_error_set(KEVO_EINVAL,
                                       "chain step %zu (flags): '%s' is not one of "
                                       "the flag sets",
                                       no, flags->valuestring);
                goto done;
            }
            s->params[0] = (long)k;
        }
        for (size_t k = 0; k < d->n_params; k++)
            if (s->params[k] < d->params[k].min || s->params[k] > d->params[k].max) {
                error = kevo_error_set(KEVO_EINVAL,
                                       "chain step %zu (%s): parameter %s = %ld is "
                                       "out of range [%ld, %ld]",
                                       no, d->name, d->params[k].name, s->params[k],
                                       d->params[k].min, d->params[k].max);
                goto done;
            }
        i++;
    }
    *out_steps = steps;
    *out_n = n;
    steps = NULL;
done:
    free(steps);
    cJSON_Delete(root);
    return error;
}

void kevo_recipe_chain_free(kevo_recipe_step *steps)
{
    free(steps);
}
