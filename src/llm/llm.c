/*
 * llm/llm.c - the provider-independent part of kevo/llm.h: request and
 * response helpers, configuration defaults, the kevo_llm_complete()
 * dispatcher and token estimates. It knows no wire format and no provider;
 * it must not touch the experience store or build prompts.
 */
#include "internal.h"

#include "kevo/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[] = {"system", "user", "assistant"};

const char *kevo_llm_role_name(kevo_llm_role role)
{
    if ((unsigned)role < sizeof(role_names) / sizeof(role_names[0]))
        return role_names[role];
    return "user";
}

int kevo_llm_role_parse(kevo_llm_role *out, const char *name)
{
    for (unsigned i = 0; name && i < sizeof(role_names) / sizeof(role_names[0]); i++) {
        if (!strcmp(name, role_names[i])) {
            *out = (kevo_llm_role)i;
            return 0;
        }
    }
    return kevo_error_set(KEVO_EINVAL,
                          "unknown chat role '%s' (expected system, user or assistant)",
                          name ? name : "(null)");
}

void kevo_llm_request_init(kevo_llm_request *req)
{
    memset(req, 0, sizeof(*req));
    req->temperature = -1.0;
}

void kevo_llm_response_clear(kevo_llm_response *resp)
{
    if (!resp)
        return;
    free(resp->content);
    free(resp->failure);
    free(resp->finish_reason);
    free(resp->model);
    memset(resp, 0, sizeof(*resp));
}

void kevo_llm_config_init(kevo_llm_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->temperature = -1.0; /* none sent: reasoning models refuse any but their own */
    cfg->max_tokens = 4096;
    cfg->connect_timeout_s = 10.0;
    cfg->request_timeout_s = 300.0;
    cfg->max_retries = 4;
    cfg->backoff_initial_s = 1.0;
    cfg->backoff_max_s = 30.0;
    cfg->retry_after_max_s = 60.0;
}

static const char *const tokens_param_names[KEVO_LLM_TOKENS_PARAM_COUNT] = {
    "auto", "max_tokens", "max_completion_tokens"};
static const char *const effort_names[KEVO_LLM_REASONING_COUNT] = {"default", "low", "medium",
                                                                   "high"};

const char *kevo_llm_tokens_param_name(kevo_llm_tokens_param p)
{
    return (unsigned)p < KEVO_LLM_TOKENS_PARAM_COUNT ? tokens_param_names[p] : "?";
}

int kevo_llm_tokens_param_parse(kevo_llm_tokens_param *out, const char *name)
{
    for (int i = 0; name && i < KEVO_LLM_TOKENS_PARAM_COUNT; i++)
        if (!strcmp(name, tokens_param_names[i])) {
            *out = (kevo_llm_tokens_param)i;
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL,
                          "the token budget's field must be max_tokens, max_completion_tokens "
                          "or auto, not '%s'",
                          name ? name : "(none)");
}

const char *kevo_llm_reasoning_effort_name(kevo_llm_reasoning_effort e)
{
    return (unsigned)e < KEVO_LLM_REASONING_COUNT ? effort_names[e] : "?";
}

int kevo_llm_reasoning_effort_parse(kevo_llm_reasoning_effort *out, const char *name)
{
    for (int i = 0; name && i < KEVO_LLM_REASONING_COUNT; i++)
        if (!strcmp(name, effort_names[i])) {
            *out = (kevo_llm_reasoning_effort)i;
            return 0;
        }
    return kevo_error_set(KEVO_EINVAL, "reasoning effort must be low, medium or high, not '%s'",
                          name ? name : "(none)");
}

void kevo_llm_config_apply_env(kevo_llm_config *cfg)
{
    const char *v;
    if (!cfg->api_base && (v = getenv("KEVO_API_BASE")) != NULL && *v)
        cfg->api_base = v;
    if (!cfg->model && (v = getenv("KEVO_MODEL")) != NULL && *v)
        cfg->model = v;
    if (cfg->temperature < 0 && (v = getenv("KEVO_TEMPERATURE")) != NULL && *v) {
        char *end;
        double t = strtod(v, &end);
        /* NaN: the provider refuses it, naming the variable */
        cfg->temperature = end != v && !*end && isfinite(t) && t >= 0 ? t : NAN;
    }
    if (cfg->max_tokens_param == KEVO_LLM_TOKENS_PARAM_AUTO &&
        (v = getenv("KEVO_MAX_TOKENS_PARAM")) != NULL && *v &&
        kevo_llm_tokens_param_parse(&cfg->max_tokens_param, v) < 0)
        cfg->max_tokens_param = KEVO_LLM_TOKENS_PARAM_COUNT;
    if (cfg->reasoning_effort == KEVO_LLM_REASONING_DEFAULT &&
        (v = getenv("KEVO_REASONING_EFFORT")) != NULL && *v &&
        kevo_llm_reasoning_effort_parse(&cfg->reasoning_effort, v) < 0)
        cfg->reasoning_effort = KEVO_LLM_REASONING_COUNT;
}

const char *kevo_llm_provider_name(const kevo_provider *p)
{
    return p && p->name ? p->name : "(none)";
}

void kevo_llm_provider_free(kevo_provider *p)
{
    if (!p)
        return;
    if (p->free)
        p->free(p);
    free(p);
}

int kevo_llm_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp)
{
    int error = 0;
    memset(resp, 0, sizeof(*resp));
    if (!p || !p->complete || p->version < 1)
        return kevo_error_set(KEVO_EINVAL,
                              "LLM provider '%s' is not usable (no complete method "
                              "or version 0)",
                              kevo_llm_provider_name(p));
    if (!req || !req->messages || req->n_messages == 0)
        return kevo_error_set(KEVO_EINVAL, "LLM request has no messages");
    for (size_t i = 0; i < req->n_messages; i++)
        if (!req->messages[i].content)
            return kevo_error_set(KEVO_EINVAL, "LLM request message %zu has no content", i);

    double t0 = kevo_now_s();
    if ((error = p->complete(p, req, resp)) < 0) {
        kevo_llm_response_clear(resp);
        return error;
    }
    double dt = kevo_now_s() - t0;
    if (resp->elapsed_s <= 0)
        resp->elapsed_s = dt;
    if (resp->latency_s <= 0)
        resp->latency_s = resp->elapsed_s;
    if (resp->attempts <= 0)
        resp->attempts = 1;
    if (resp->failure) {
        /* an unusable reply never also carries content: callers test one field */
        free(resp->content);
        resp->content = NULL;
    } else if (!resp->content) {
        resp->failure = kevo_strdup("the provider returned neither content nor a failure reason");
        if (!resp->failure) {
            kevo_llm_response_clear(resp);
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        }
    }
    return 0;
}

int64_t kevo_llm_count_tokens(kevo_provider *p, const char *text)
{
    if (!text)
        return 0;
    if (p && p->version >= 1 && p->count_tokens)
        return p->count_tokens(p, text);
    return kevo_llm_tokens_estimate(text, strlen(text));
}

/* ---- token estimates ------------------------------------------------ */

#define BYTES_PER_TOKEN_CODE 3.2
#define BYTES_PER_TOKEN_PROSE 4.7

static bool is_fence_line(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return n - i >= 3 && ((s[i] == '`' && s[i + 1] == '`' && s[i + 2] == '`') ||
                          (s[i] == '~' && s[i + 1] == '~' && s[i + 2] == '~'));
}

/* A line outside fences counts as code when it looks like C: starts like a
 * preprocessor line or comment, ends like a statement or block, or is dense
 * in operator characters. Prose rarely does any of these. */
static bool is_code_line(const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == n)
        return false;
    if (s[i] == '#' || (n - i >= 2 && s[i] == '/' && (s[i + 1] == '/' || s[i + 1] == '*')))
        return true;
    char last = s[n - 1];
    if (last == ';' || last == '{' || last == '}')
        return true;
    size_t sym = 0;
    for (size_t k = i; k < n; k++)
        if (strchr("{}();[]=<>*&|+-/%^!", s[k]))
            sym++;
    return sym * 10 >= (n - i);
}

int64_t kevo_llm_tokens_estimate(const char *text, size_t len)
{
    if (!text || len == 0)
        return 0;
    double code = 0, prose = 0;
    bool in_fence = false;
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        size_t with_nl = nl ? n + 1 : n;
        if (is_fence_line(line, n)) {
            in_fence = !in_fence;
            code += (double)with_nl;
        } else if (in_fence || is_code_line(line, n)) {
            code += (double)with_nl;
        } else {
            prose += (double)with_nl;
        }
        pos += with_nl;
    }
    int64_t t = (int64_t)ceil(code / BYTES_PER_TOKEN_CODE + prose / BYTES_PER_TOKEN_PROSE);
    return t > 0 ? t : 1;
}

int64_t kevo_llm_request_tokens_estimate(const kevo_llm_request *req)
{
    /* chat formats wrap each message in a few tokens and prime the reply
     * with a few more; 4 and 3 are what OpenAI's cookbook counts */
    int64_t t = 3;
    for (size_t i = 0; req && i < req->n_messages; i++) {
        const char *c = req->messages[i].content;
        t += 4 + (c ? kevo_llm_tokens_estimate(c, strlen(c)) : 0);
    }
    return t;
}

/* ---- shared helpers --------------------------------------------------- */

cJSON *kevo_llm_request_json(const kevo_llm_request *req, const kevo_llm_wire *w)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *msgs = NULL;
    if (!root)
        return NULL;
    if (w->model && !cJSON_AddStringToObject(root, "model", w->model))
        goto fail;
    if (!(msgs = cJSON_AddArrayToObject(root, "messages")))
        goto fail;
    for (size_t i = 0; i < req->n_messages; i++) {
        cJSON *m = cJSON_CreateObject();
        if (!m)
            goto fail;
        cJSON_AddItemToArray(msgs, m);
        if (!cJSON_AddStringToObject(m, "role", kevo_llm_role_name(req->messages[i].role)) ||
            !cJSON_AddStringToObject(m, "content", req->messages[i].content))
            goto fail;
    }
    if (w->temperature >= 0 && !cJSON_AddNumberToObject(root, "temperature", w->temperature))
        goto fail;
    if (w->max_tokens > 0 &&
        !cJSON_AddNumberToObject(
            root, w->max_completion_tokens ? "max_completion_tokens" : "max_tokens", w->max_tokens))
        goto fail;
    if (w->reasoning_effort &&
        !cJSON_AddStringToObject(root, "reasoning_effort", w->reasoning_effort))
        goto fail;
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

void kevo_llm_redact(char *s, const char *secret)
{
    if (!s || !secret || !*secret)
        return;
    size_t sl = strlen(secret);
    char *r = s, *w = s;
    while (*r) {
        if (!strncmp(r, secret, sl)) {
            /* "***" may be longer than a (silly) 1-2 byte secret: never
             * write past what was read */
            size_t k = sl < 3 ? sl : 3;
            memset(w, '*', k);
            w += k;
            r += sl;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}
