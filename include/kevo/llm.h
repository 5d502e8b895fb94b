/*
 * kevo/llm.h - asking a language model (or something that stands in for
 * one) for text: chat requests, responses, the provider registry, replay
 * and recording, code extraction from replies and token estimates.
 *
 * A provider turns a kevo_llm_request into a kevo_llm_response. Providers
 * live behind the vtable in kevo/sys/provider.h; callers only use the
 * functions below. This module never touches the experience store and
 * never builds prompts: it carries what it is given.
 *
 * Two kinds of "not good":
 *   - a response that arrived but cannot be used (not JSON, no choices,
 *     empty content...) is a RESULT: kevo_llm_complete() returns 0 and
 *     sets response->failure; the caller records it as that attempt's
 *     failure and goes on;
 *   - a request that could not be completed at all (server unreachable or
 *     overloaded after every retry, timeout, bad credentials, unknown
 *     model, missing replay record) is an ERROR: a negative KEVO_E* code
 *     with the message in kevo_error_last().
 *
 * The API key is read only from the environment variable KEVO_API_KEY; it
 * is never stored in a config, logged, recorded or put in a message.
 */
#ifndef KEVO_LLM_H
#define KEVO_LLM_H

#include "kevo/common.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kevo_provider kevo_provider; /* see kevo/sys/provider.h */

/* ---- requests ------------------------------------------------------- */

typedef enum kevo_llm_role {
    KEVO_LLM_SYSTEM = 0,
    KEVO_LLM_USER = 1,
    KEVO_LLM_ASSISTANT = 2
} kevo_llm_role;

/* "system", "user", "assistant". Static storage; "user" for unknown values. */
const char *kevo_llm_role_name(kevo_llm_role role);
/* Parse a role name. KEVO_EINVAL for anything else. */
int kevo_llm_role_parse(kevo_llm_role *out, const char *name);

typedef struct kevo_llm_message {
    kevo_llm_role role;
    const char *content; /* borrowed, NUL-terminated, never NULL */
} kevo_llm_message;

/* Everything in a request is borrowed from the caller for the duration of
 * the call. Start from kevo_llm_request_init(): temperature 0 is a real
 * temperature (greedy decoding), the "use the configured one" value is
 * negative. */
typedef struct kevo_llm_request {
    const kevo_llm_message *messages; /* n_messages >= 1 */
    size_t n_messages;
    const char *model;  /* NULL: the provider's configured model */
    double temperature; /* < 0: the provider's configured temperature (which may be
                           "none": then the request carries no temperature) */
    int max_tokens;     /* <= 0: the provider's configured limit */
    /* Free-form label of where in a run this request is, e.g.
     * "task=relu iter=3 stage=draft". Replay matches requests to records
     * by tag (the n-th request with a tag gets the n-th record with that
     * tag). NULL is the same as "". */
    const char *tag;
} kevo_llm_request;

/* Zero the request, then set temperature = -1 (configured default). */
void kevo_llm_request_init(kevo_llm_request *req);

/* ---- responses ------------------------------------------------------ */

/* Filled by kevo_llm_complete(). The caller owns the struct (usually on
 * the stack) and every string in it; kevo_llm_response_clear() frees them
 * and zeroes the struct. */
typedef struct kevo_llm_response {
    char *content;             /* reply text; NULL when failure is set */
    char *failure;             /* NULL: usable; else why this reply is unusable */
    char *finish_reason;       /* "stop", "length", ...; NULL when unknown */
    char *model;               /* model the server says answered; may be NULL */
    int64_t tokens_prompt;     /* from the server's `usage`, else estimated */
    int64_t tokens_completion; /* likewise */
    bool tokens_estimated;     /* true when any token count is an estimate */
    double latency_s;          /* the exchange that produced this response */
    double elapsed_s;          /* whole call: every try and every backoff wait */
    int attempts;              /* tries made (1 = no retry) */
    int http_status;           /* status of the last exchange; 0 if not HTTP */
} kevo_llm_response;

/* Free the response's strings and zero it. Accepts NULL. */
void kevo_llm_response_clear(kevo_llm_response *resp);

/* ---- configuration -------------------------------------------------- */

/* Which request field carries the completion budget. OpenAI's reasoning
 * models refuse `max_tokens` and want `max_completion_tokens`; most other
 * servers (vLLM, llama.cpp, older gateways) know only `max_tokens`. */
typedef enum kevo_llm_tokens_param {
    /* `max_tokens`, switched to `max_completion_tokens` for the provider's
     * life when a server answers HTTP 400 naming `max_tokens` as refused */
    KEVO_LLM_TOKENS_PARAM_AUTO = 0,
    KEVO_LLM_TOKENS_PARAM_MAX_TOKENS,            /* always `max_tokens` */
    KEVO_LLM_TOKENS_PARAM_MAX_COMPLETION_TOKENS, /* always `max_completion_tokens` */
    KEVO_LLM_TOKENS_PARAM_COUNT                  /* not a value (an unparseable setting) */
} kevo_llm_tokens_param;

/* "auto", "max_tokens", "max_completion_tokens" (static; "?" out of range). */
const char *kevo_llm_tokens_param_name(kevo_llm_tokens_param p);
/* Parse one of those names. KEVO_EINVAL, naming the accepted ones, else. */
int kevo_llm_tokens_param_parse(kevo_llm_tokens_param *out, const char *name);

/* The request's `reasoning_effort` (reasoning models); DEFAULT sends none. */
typedef enum kevo_llm_reasoning_effort {
    KEVO_LLM_REASONING_DEFAULT = 0, /* the field is left out: the server's default */
    KEVO_LLM_REASONING_LOW,
    KEVO_LLM_REASONING_MEDIUM,
    KEVO_LLM_REASONING_HIGH,
    KEVO_LLM_REASONING_COUNT /* not a value (an unparseable setting) */
} kevo_llm_reasoning_effort;

/* "default", "low", "medium", "high" (static; "?" out of range). */
const char *kevo_llm_reasoning_effort_name(kevo_llm_reasoning_effort e);
/* Parse "low", "medium" or "high" ("default" too). KEVO_EINVAL else. */
int kevo_llm_reasoning_effort_parse(kevo_llm_reasoning_effort *out, const char *name);

/* What a provider is created with. Strings are borrowed: providers copy
 * what they keep. Start from kevo_llm_config_init(). */
typedef struct kevo_llm_config {
    const char *api_base;     /* openai: e.g. "http://127.0.0.1:8000/v1"; required */
    const char *model;        /* openai: required; replay: ignored */
    double temperature;       /* < 0 (default -1): not sent, the server's default
                                 applies (reasoning models refuse any other) */
    int max_tokens;           /* default 4096; <= 0 leaves it to the server */
    double connect_timeout_s; /* default 10 */
    double request_timeout_s; /* whole exchange, per try; default 300 */
    int max_retries;          /* tries = 1 + max_retries; default 4 */
    double backoff_initial_s; /* first wait; doubles each retry; default 1 */
    double backoff_max_s;     /* cap on the computed wait; default 30 */
    double retry_after_max_s; /* cap on a server's Retry-After; default 60 */
    const char *replay_path;  /* replay: the JSON-lines recording; required */
    bool replay_strict;       /* replay: messages must equal the recorded ones */

    /* openai: the budget's field, default AUTO */
    kevo_llm_tokens_param max_tokens_param;
    /* openai: `reasoning_effort`, default DEFAULT (not sent) */
    kevo_llm_reasoning_effort reasoning_effort;

    /* Optional: when it becomes non-zero (e.g. set by a SIGINT handler) a
     * request in flight or waiting to retry stops with KEVO_EINTR. */
    volatile sig_atomic_t *stop_flag;
} kevo_llm_config;

/* Fill `cfg` with the defaults above (strings NULL). */
void kevo_llm_config_init(kevo_llm_config *cfg);

/* Fill what is still unset from the environment: NULL api_base and model
 * from KEVO_API_BASE and KEVO_MODEL (pointers into the environment: valid
 * while it is not changed), a negative temperature from KEVO_TEMPERATURE,
 * an AUTO max_tokens_param from KEVO_MAX_TOKENS_PARAM, a DEFAULT
 * reasoning_effort from KEVO_REASONING_EFFORT. A value that does not parse
 * leaves the field invalid (temperature NaN, an enum at its _COUNT) so
 * that the openai provider refuses it with KEVO_EINVAL naming the
 * variable. Flags given on a command line should be applied first, so
 * they win. Never reads or copies KEVO_API_KEY. */
void kevo_llm_config_apply_env(kevo_llm_config *cfg);

/* ---- providers ------------------------------------------------------ */

/* Create the provider called `name` ("openai", "replay", or one added
 * with kevo_llm_provider_register()). *out is the caller's; release it
 * with kevo_llm_provider_free(). KEVO_ENOTFOUND for an unknown name (the
 * message lists the known ones), KEVO_EINVAL for a config the provider
 * cannot work with. */
int kevo_llm_provider_new(kevo_provider **out, const char *name, const kevo_llm_config *cfg);

/* Constructor signature for the registry. */
typedef int (*kevo_llm_provider_ctor)(kevo_provider **out, const kevo_llm_config *cfg);

/* Add a provider (e.g. "builtin", defined outside src/llm) under `name`
 * (borrowed; must outlive the registry, e.g. a string literal). Replaces
 * an earlier registration with the same name. Call at start-up, before
 * any thread uses the registry. KEVO_EINVAL when the table is full. */
int kevo_llm_provider_register(const char *name, kevo_llm_provider_ctor ctor);

/* Names of the known providers, comma-separated, into buf (for --help and
 * messages). Returns buf. */
const char *kevo_llm_provider_names(char *buf, size_t len);
/* Whether a provider of that name is registered (or built in). */
bool kevo_llm_provider_known(const char *name);

/* The provider's name (borrowed). */
const char *kevo_llm_provider_name(const kevo_provider *p);

/* Release a provider and everything it owns. Accepts NULL. */
void kevo_llm_provider_free(kevo_provider *p);

/* Ask the provider. `resp` is overwritten (it need not be cleared first,
 * but must not hold strings the caller still owns). Returns 0 when a
 * response arrived - usable or not, see resp->failure - or a negative
 * KEVO_E* error, in which case resp is zeroed. Thread safety: the
 * built-in providers (openai, replay, recorder) accept concurrent calls. */
int kevo_llm_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp);

/* Count tokens of `text` as the provider's model would: uses the
 * provider's counter when it has one, else kevo_llm_tokens_estimate(). */
int64_t kevo_llm_count_tokens(kevo_provider *p, const char *text);

/* ---- recording ------------------------------------------------------ */

/* Wrap `inner` so that every request and its response (or error) is
 * appended to the JSON-lines file at `path` (created if missing), one line
 * per call, written with a single write() so a killed run keeps every line
 * it finished. On success *out owns `inner` (freeing *out frees inner); on
 * failure `inner` stays the caller's. The file format is in docs/llm.md and
 * is what the "replay" provider reads. */
int kevo_llm_recorder_wrap(kevo_provider **out, kevo_provider *inner, const char *path);

/* ---- code extraction ------------------------------------------------ */

/* Find the kernel source in an LLM reply. Looks at fenced blocks
 * (```c, ```cpp, ```cuda, ```opencl, ```cl, bare ```, also ~~~), accepts
 * CRLF line ends and an unterminated last fence, and picks the block in
 * language `lang` (a spec "FENCE ALIAS...; RELATED...", as a backend's
 * code_fence_tags gives it, or one of the C family's names "c", "cpp",
 * "c++"; NULL accepts any code block) that defines the function `kernel_name` (NULL: no such check).
 * Among equals it prefers an exact language tag over a related one, a
 * block without main(), then the last block (replies often end with the
 * final version). A reply without fences that itself looks like code and
 * defines the kernel is taken whole, minus leading and trailing prose.
 * *out is the caller's (free()), LF line ends, ends with a newline.
 * KEVO_ENOTFOUND when nothing fits, with the reason in kevo_error_last()
 * worded so it can be shown to the model; KEVO_EINVAL for a bad lang. */
int kevo_llm_extract_code(char **out, const char *reply, const char *lang, const char *kernel_name);

/* ---- token estimates ------------------------------------------------ */

/* Estimated token count of `len` bytes of text: ~3.2 bytes per token for
 * C-like source (fenced blocks or code-dense lines), ~4.7 for prose. Used
 * when a server reports no `usage`, and by context packing. */
int64_t kevo_llm_tokens_estimate(const char *text, size_t len);

/* Estimated prompt tokens of a whole request (messages + chat overhead). */
int64_t kevo_llm_request_tokens_estimate(const kevo_llm_request *req);

#ifdef __cplusplus
}
#endif
#endif
