/*
 * verify/verdict.c - the verdict names and the "compiled" predicate
 * (kevo/verdict.h). Must not: grow a second table anywhere else.
 */
#include "kevo/verdict.h"
#include "kevo/util.h"

#include <string.h>

static const char *const names[KEVO_VERDICT_COUNT] = {
    [KEVO_VERDICT_CORRECT] = "correct",         [KEVO_VERDICT_INCORRECT] = "incorrect",
    [KEVO_VERDICT_COMPILE_ERROR] = "compile_error", [KEVO_VERDICT_REJECTED] = "rejected",
    [KEVO_VERDICT_TIMEOUT] = "timeout",         [KEVO_VERDICT_CRASH] = "crash",
    [KEVO_VERDICT_INFRA_ERROR] = "infra_error"};

const char *kevo_verdict_name(kevo_verdict v)
{
    return (unsigned)v < KEVO_VERDICT_COUNT ? names[v] : "unknown";
}

int kevo_verdict_parse(kevo_verdict *out, const char *name)
{
    for (int i = 0; name && i < KEVO_VERDICT_COUNT; i++)
        if (!strcmp(names[i], name)) {
            *out = (kevo_verdict)i;
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL, "unknown verdict '%s' (correct, incorrect, compile_error, "
                          "rejected, timeout, crash, infra_error)", name ? name : "(none)");
}

bool kevo_verdict_compiled(kevo_verdict v)
{
    return v == KEVO_VERDICT_CORRECT || v == KEVO_VERDICT_INCORRECT ||
           v == KEVO_VERDICT_TIMEOUT || v == KEVO_VERDICT_CRASH;
}
