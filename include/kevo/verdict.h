/*
 * kevo/verdict.h - what the gates concluded about one candidate: the one
 * verdict type, its one name table (the names are the DESIGN.md contract and
 * what the store keeps) and the one "compiled" predicate. Owned by
 * src/verify; memory, context, agent and report use it as a type, never as
 * a string.
 */
#ifndef KEVO_VERDICT_H
#define KEVO_VERDICT_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KEVO_VERDICT_CORRECT,
    KEVO_VERDICT_INCORRECT,
    KEVO_VERDICT_COMPILE_ERROR,
    KEVO_VERDICT_REJECTED,
    KEVO_VERDICT_TIMEOUT,
    KEVO_VERDICT_CRASH,
    KEVO_VERDICT_INFRA_ERROR,
    KEVO_VERDICT_COUNT
} kevo_verdict;

/* "correct", "incorrect", "compile_error", "rejected", "timeout", "crash",
 * "infra_error"; "unknown" for a value out of range. Static. */
const char *kevo_verdict_name(kevo_verdict v);
/* Parse a verdict name; KEVO_EINVAL naming it when unknown (NULL too). */
int kevo_verdict_parse(kevo_verdict *out, const char *name);
/* The candidate built and ran: correct, incorrect, timeout or crash. The
 * compile rate of the papers counts these. */
bool kevo_verdict_compiled(kevo_verdict v);

#ifdef __cplusplus
}
#endif
#endif
