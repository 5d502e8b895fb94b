/*
 * llm/registry.c - providers by name. The built-in table lists the
 * providers that live in src/llm; providers from other modules (the
 * offline "builtin" generator) join through kevo_llm_provider_register()
 * at start-up, so src/llm never depends on them. It must not know any
 * provider's internals.
 */
#include "internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct provider_entry {
    const char *name;
    kevo_llm_provider_ctor ctor;
} provider_entry;

/* To add a provider that lives in src/llm: one line here. */
static const provider_entry builtin_providers[] = {
    {"openai", kevo_llm_openai_new},
    {"replay", kevo_llm_replay_new},
};

#define N_BUILTIN (sizeof(builtin_providers) / sizeof(builtin_providers[0]))
#define MAX_REGISTERED 16

/* Written only at start-up (see kevo/llm.h), so no lock. */
static provider_entry registered[MAX_REGISTERED];
static size_t n_registered;

int kevo_llm_provider_register(const char *name, kevo_llm_provider_ctor ctor)
{
    if (!name || !*name || !ctor)
        return kevo_error_set(KEVO_EINVAL, "provider registration needs a name and a constructor");
    for (size_t i = 0; i < n_registered; i++) {
        if (!strcmp(registered[i].name, name)) {
            registered[i].ctor = ctor;
            return 0;
        }
    }
    if (n_registered == MAX_REGISTERED)
        return kevo_error_set(KEVO_EINVAL, "cannot register provider '%s': the table holds %d",
                              name, MAX_REGISTERED);
    registered[n_registered].name = name;
    registered[n_registered].ctor = ctor;
    n_registered++;
    return 0;
}

/* Registered providers win over built-in ones of the same name, so a test
 * or a later module can stand in for one. */
static kevo_llm_provider_ctor find_ctor(const char *name)
{
    for (size_t i = 0; i < n_registered; i++)
        if (!strcmp(registered[i].name, name))
            return registered[i].ctor;
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (!strcmp(builtin_providers[i].name, name))
            return builtin_providers[i].ctor;
    return NULL;
}

static bool is_builtin_name(const char *name)
{
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (!strcmp(builtin_providers[i].name, name))
            return true;
    return false;
}

const char *kevo_llm_provider_names(char *buf, size_t len)
{
    size_t used = 0;
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < N_BUILTIN + n_registered; i++) {
        const char *n = i < N_BUILTIN ? builtin_providers[i].name : registered[i - N_BUILTIN].name;
        if (i >= N_BUILTIN && is_builtin_name(n))
            continue; /* a stand-in for a built-in one: already listed */
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

bool kevo_llm_provider_known(const char *name)
{
    return name && find_ctor(name) != NULL;
}

int kevo_llm_provider_new(kevo_provider **out, const char *name, const kevo_llm_config *cfg)
{
    kevo_llm_config defaults;
    *out = NULL;
    if (!name || !*name)
        return kevo_error_set(KEVO_EINVAL, "no LLM provider name given");
    kevo_llm_provider_ctor ctor = find_ctor(name);
    if (!ctor) {
        char names[256];
        return kevo_error_set(KEVO_ENOTFOUND, "unknown LLM provider '%s' (known: %s)", name,
                              kevo_llm_provider_names(names, sizeof(names)));
    }
    if (!cfg) {
        kevo_llm_config_init(&defaults);
        cfg = &defaults;
    }
    return ctor(out, cfg);
}
