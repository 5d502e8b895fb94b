/*
 * llm/internal.h - what the files of src/llm share and nothing outside
 * src/llm (except tests and fuzz targets) may use: the built-in provider
 * constructors, the OpenAI response parser (exposed so it can be fuzzed
 * without curl), request serialisation shared by openai and the recorder,
 * and secret redaction.
 */
#ifndef KEVO_LLM_INTERNAL_H
#define KEVO_LLM_INTERNAL_H

#include "kevo/llm.h"
#include "kevo/sys/provider.h"

#include <cjson/cJSON.h>

/* Provider constructors listed in registry.c. */
int kevo_llm_openai_new(kevo_provider **out, const kevo_llm_config *cfg);
int kevo_llm_replay_new(kevo_provider **out, const kevo_llm_config *cfg);

/* Parse an OpenAI chat-completions response body (`len` bytes, need not be
 * NUL-terminated) into `resp`: content or failure, finish_reason, model,
 * token counts (estimated from `req` and the content when `usage` is
 * missing; `req` may be NULL). Malformed input is never an error: it ends
 * up in resp->failure. Returns 0, or KEVO_ENOMEM (resp then cleared). */
int kevo_llm_openai_parse(kevo_llm_response *resp, const char *body, size_t len,
                          const kevo_llm_request *req);

/* The server's own words from an error body: error.message, error (a
 * string) or message; else a printable prefix of the body; NULL for an
 * empty body. malloc'd, the caller's; at most ~300 bytes, one line. */
char *kevo_llm_openai_error_message(const char *body, size_t len);

/* The fields of a request body beside its messages; each is left out of
 * the body when unset. */
typedef struct kevo_llm_wire {
    const char *model;          /* NULL: no "model" */
    double temperature;         /* < 0: no "temperature" */
    int max_tokens;             /* <= 0: no budget */
    bool max_completion_tokens; /* the budget's name: "max_completion_tokens", else "max_tokens" */
    const char *reasoning_effort; /* NULL: no "reasoning_effort" */
} kevo_llm_wire;

/* {"model", "messages", "temperature", "max_tokens" | "max_completion_tokens",
 * "reasoning_effort"} as sent to an OpenAI-compatible server (and as the
 * recorder writes a request); NULL when out of memory. The caller owns the
 * cJSON tree. */
cJSON *kevo_llm_request_json(const kevo_llm_request *req, const kevo_llm_wire *w);

/* Replace every occurrence of `secret` in `s` (in place) with "***".
 * No-op when secret is NULL or empty. */
void kevo_llm_redact(char *s, const char *secret);

#endif
