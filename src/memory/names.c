/*
 * memory/names.c - the name tables of the memory's enums: stage names
 * ("draft", "refine"), item-kind names ("api_doc", "experience", ...) and
 * work-queue states ("queued", "running", ...),
 * the strings the store keeps and export/import writes. Both the public
 * API (memory.c) and the stores (store_sqlite.c) use them, so they live
 * here, below both. It must not reach the store or hold any state: pure
 * lookups only.
 */
#include "kevo/memory.h"

#include "kevo/common.h"

#include <string.h>

static const char *const kind_names[] = {NULL,    "api_doc",       "experience",
                                         "trace", "best_practice", "recipe"};

const char *kevo_stage_name(kevo_stage stage)
{
    return stage == KEVO_STAGE_DRAFT ? "draft" : stage == KEVO_STAGE_REFINE ? "refine" : "?";
}

int kevo_stage_parse(kevo_stage *out, const char *name)
{
    int error = 0;
    if (name && !strcmp(name, "draft"))
        *out = KEVO_STAGE_DRAFT;
    else if (name && !strcmp(name, "refine"))
        *out = KEVO_STAGE_REFINE;
    else
        error = kevo_error_set(KEVO_EINVAL, "unknown stage '%s' (draft or refine)",
                               name ? name : "(null)");
    return error;
}

const char *kevo_item_kind_name(kevo_item_kind kind)
{
    return kind >= 1 && kind <= KEVO_ITEM_KIND_MAX ? kind_names[kind] : "?";
}

int kevo_item_kind_parse(kevo_item_kind *out, const char *name)
{
    for (int k = 1; name && k <= KEVO_ITEM_KIND_MAX; k++) {
        if (!strcmp(kind_names[k], name)) {
            *out = (kevo_item_kind)k;
            return 0;
        }
    }
    return kevo_error_set(KEVO_EINVAL,
                          "unknown item kind '%s' (api_doc experience trace best_practice recipe)",
                          name ? name : "(null)");
}

static const char *const state_names[] = {
    [KEVO_WORK_QUEUED] = "queued",
    [KEVO_WORK_RUNNING] = "running",
    [KEVO_WORK_DONE] = "done",
    [KEVO_WORK_FAILED] = "failed",
};
#define N_STATES (sizeof(state_names) / sizeof(state_names[0]))

const char *kevo_work_state_name(kevo_work_state state)
{
    if ((unsigned)state >= N_STATES || !state_names[state])
        return "?";
    return state_names[state];
}

int kevo_work_state_parse(kevo_work_state *out, const char *name)
{
    for (unsigned i = 1; name && i < N_STATES; i++) {
        if (!strcmp(name, state_names[i])) {
            *out = (kevo_work_state)i;
            return 0;
        }
    }
    return kevo_error_set(KEVO_EINVAL, "unknown work state '%s' (queued, running, done, failed)",
                          name ? name : "(null)");
}
