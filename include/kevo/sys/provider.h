/*
 * kevo/sys/provider.h - the vtable behind kevo_provider, for people who add
 * a provider (an HTTP API, an offline generator, a replay source). Callers
 * never touch these fields: they use kevo/llm.h.
 *
 * Adding a provider (docs/llm.md walks through it):
 *   1. write `int my_provider_new(kevo_provider **out, const kevo_llm_config *cfg)`
 *      that calloc()s a kevo_provider, sets version = KEVO_PROVIDER_VERSION,
 *      name, ctx, complete and (optionally) the other methods;
 *   2. register it: a line in the table in src/llm/registry.c for providers
 *      inside src/llm, or kevo_llm_provider_register("name", my_provider_new)
 *      at start-up for providers that live in other modules.
 *
 * Versioning: new methods are only ever appended, and each bump of
 * KEVO_PROVIDER_VERSION says which fields exist. kevo reads a field only
 * when p->version is at least the version that introduced it, so an old
 * provider keeps working after the struct grows.
 */
#ifndef KEVO_SYS_PROVIDER_H
#define KEVO_SYS_PROVIDER_H

#include "kevo/llm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KEVO_PROVIDER_VERSION 1

struct kevo_provider {
    /* KEVO_PROVIDER_VERSION the provider was written against (>= 1). */
    unsigned version;
    /* Registry name, e.g. "openai". Static storage. */
    const char *name;
    /* The provider's own state; kevo never looks inside. */
    void *ctx;

    /* Required. Answer `req` into `resp`, which kevo_llm_complete() has
     * zeroed. Return 0 with resp->content set (usable reply) or with
     * resp->failure set (a reply arrived but cannot be used); return a
     * negative KEVO_E* code with kevo_error_set() when no answer could be
     * had. Strings put in resp are malloc'd and become the caller's.
     * latency_s / elapsed_s / attempts may be left 0: kevo_llm_complete()
     * fills them from its own clock. */
    int (*complete)(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp);

    /* Optional. Release ctx and anything else the provider owns - but not
     * the kevo_provider struct itself, which kevo_llm_provider_free()
     * free()s afterwards (so it must come from malloc/calloc). NULL: there
     * is nothing to release beyond the struct. */
    void (*free)(kevo_provider *p);

    /* Optional. Exact token count of `text` for this provider's model.
     * NULL: kevo_llm_tokens_estimate() is used. */
    int64_t (*count_tokens)(kevo_provider *p, const char *text);

    /* Version 1 ends here. Append new optional methods below, bump
     * KEVO_PROVIDER_VERSION, and guard their use on p->version. */
};

#ifdef __cplusplus
}
#endif
#endif
