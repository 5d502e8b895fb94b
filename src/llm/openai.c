/*
 * llm/openai.c - the "openai" provider: OpenAI-compatible chat completions
 * over libcurl (`POST {api_base}/chat/completions`), which also fits vLLM,
 * llama.cpp's server, Ollama and most hosted gateways.
 *
 * What it does beyond one POST: connect and whole-request timeouts; retries
 * with exponential backoff and jitter on connection errors, 408, 429 and
 * 5xx, honouring a Retry-After of whole or decimal seconds (capped); a
 * clear error after the last try that names the URL, the status and the
 * server's own message; token accounting from `usage`, estimated when the
 * server sends none. And what reasoning models need: no `temperature`
 * unless one was configured, `reasoning_effort` when set, the budget as
 * `max_completion_tokens` when the server refuses `max_tokens` (learnt
 * from its HTTP 400 and kept for the provider's life, or configured), one
 * retry with double the budget for a reply cut off at the token limit,
 * and a failure that says so for a reply whose text is only in a
 * reasoning field.
 *
 * The API key comes only from the environment variable KEVO_API_KEY, read
 * once when the provider is created. It goes into the Authorization header
 * and nowhere else: never logged (no CURLOPT_VERBOSE), never recorded,
 * and redacted from every message this file produces, including the
 * server's own error text. Memory that held it is wiped before release.
 *
 * It must not interpret the reply beyond the chat-completions envelope:
 * code extraction is extract.c's business, what to do with a failure is
 * the caller's.
 */
#include "internal.h"

#include "kevo/util.h"

#include <curl/curl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY_BYTES (32u << 20) /* a chat reply is kilobytes; refuse to buffer a flood */
#define MESSAGE_PREVIEW 200        /* bytes of a bad body quoted in a message */

typedef struct openai_ctx {
    char *url;       /* {api_base}/chat/completions */
    char *url_shown; /* the same without user:password@, for messages */
    char *model;
    char *api_key; /* NULL when KEVO_API_KEY is unset (local servers need none) */
    double temperature; /* < 0: none sent */
    int max_tokens;     /* <= 0: none sent */
    kevo_llm_tokens_param tokens_param;
    /* AUTO: a server refused `max_tokens` (HTTP 400 naming it), so every
     * later request of this provider sends `max_completion_tokens` */
    atomic_bool completion_tokens_learnt;
    const char *reasoning_effort; /* static name; NULL: none sent */
    long connect_timeout_ms;
    long request_timeout_ms;
    int max_retries;
    double backoff_initial_s;
    double backoff_max_s;
    double retry_after_max_s;
    volatile sig_atomic_t *stop_flag;
    pthread_mutex_t rng_lock;
    kevo_rng rng; /* jitter only */
} openai_ctx;

/* One HTTP exchange's outcome. */
typedef struct exchange {
    kevo_buf body;
    bool body_too_big;
    double retry_after_s; /* < 0: the server sent none (or a date we ignore) */
    long status;
    CURLcode code;
    char curl_error[CURL_ERROR_SIZE];
    volatile sig_atomic_t *stop_flag;
} exchange;

/* ---- response parsing (no curl; fuzzed by tests/fuzz/fuzz_llm_response.c) */

/* A one-line, printable, bounded copy of s[0..len) for messages. */
static char *preview(const char *s, size_t len, size_t max)
{
    size_t n = len < max ? len : max;
    /* do not cut a UTF-8 sequence in half */
    if (n < len)
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    char *p = malloc(n + 4);
    if (!p)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        p[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    if (n < len) {
        memcpy(p + n, "...", 4);
    } else {
        p[n] = '\0';
    }
    return p;
}

static const char *error_text_of(const cJSON *root)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (cJSON_IsString(e))
        return e->valuestring;
    if (cJSON_IsObject(e)) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
        if (cJSON_IsString(m))
            return m->valuestring;
        return "(error object without a message)";
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
    if (e == NULL && cJSON_IsString(m))
        return m->valuestring;
    return NULL;
}

char *kevo_llm_openai_error_message(const char *body, size_t len)
{
    if (!body || len == 0)
        return NULL;
    char *msg = NULL;
    cJSON *root = cJSON_ParseWithLength(body, len);
    const char *text = cJSON_IsObject(root) ? error_text_of(root) : NULL;
    if (text)
        msg = preview(text, strlen(text), 300);
    else
        msg = preview(body, len, MESSAGE_PREVIEW);
    cJSON_Delete(root);
    return msg;
}

static bool is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return false;
    return true;
}

/* message.content is a string in the classic API and an array of parts
 * ({"type":"text","text":...}) in newer ones; take the text either way. */
static int content_of(char **out, const cJSON *content)
{
    *out = NULL;
    if (cJSON_IsString(content))
        return (*out = strdup(content->valuestring)) ? 0 : KEVO_ENOMEM;
    if (!cJSON_IsArray(content))
        return 0;
    kevo_buf b = {0};
    const cJSON *part;
    cJSON_ArrayForEach(part, content)
    {
        const cJSON *t =
            cJSON_IsString(part) ? part : cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(t) && kevo_buf_puts(&b, t->valuestring) < 0) {
            kevo_buf_free(&b);
            return KEVO_ENOMEM;
        }
    }
    if (b.len == 0) {
        kevo_buf_free(&b);
        return 0;
    }
    *out = kevo_buf_detach(&b);
    return 0;
}

/* The text of message.reasoning_content or message.reasoning (a string,
 * or parts as for content), NULL when neither holds any; *field names it. */
static int reasoning_of(char **out, const char **field, const cJSON *message)
{
    static const char *const names[] = {"reasoning_content", "reasoning"};
    *out = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int error = content_of(out, cJSON_GetObjectItemCaseSensitive(message, names[i]));
        if (error < 0)
            return error;
        if (*out && !is_blank(*out)) {
            *field = names[i];
            return 0;
        }
        free(*out);
        *out = NULL;
    }
    return 0;
}

static bool token_count(int64_t *out, const cJSON *usage, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(usage, field);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > 1e15)
        return false;
    *out = (int64_t)v->valuedouble;
    return true;
}

static int set_failure(kevo_llm_response *resp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int set_failure(kevo_llm_response *resp, const char *fmt, ...)
{
    kevo_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    int error = kevo_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (error < 0) {
        kevo_buf_free(&b);
        return error;
    }
    free(resp->failure);
    resp->failure = kevo_buf_detach(&b);
    return 0;
}

/* A reply without an answer: a refusal, reasoning only (the budget spent
 * thinking), or nothing. The failure says which; *reasoning (the caller's)
 * and *spent_text are what the completion tokens went on. */
static int empty_reply(kevo_llm_response *resp, const cJSON *message, bool cut, char **reasoning,
                       const char **spent_text)
{
    const cJSON *refusal =
        cJSON_IsObject(message) ? cJSON_GetObjectItemCaseSensitive(message, "refusal") : NULL;
    char *shown = NULL;
    int error = 0;
    free(resp->content);
    resp->content = NULL;
    const char *field = NULL;
    if (!cJSON_IsString(refusal) && cJSON_IsObject(message) &&
        (error = reasoning_of(reasoning, &field, message)) < 0)
        return error;
    if (cJSON_IsString(refusal)) {
        if (!(shown = preview(refusal->valuestring, strlen(refusal->valuestring), 300)))
            return kevo_error_set(KEVO_ENOMEM, "out of memory");
        error = set_failure(resp, "the model refused: %s", shown);
    } else if (*reasoning) {
        /* reasoning models (vLLM's and llama.cpp's reasoning parsers,
         * DeepSeek, OpenRouter) carry their thinking beside the answer;
         * thinking alone is no answer, usually a budget spent on it */
        *spent_text = *reasoning;
        error = set_failure(
            resp,
            "the reply has no answer: its text is only in message.%s (%zu bytes of "
            "reasoning, content empty, finish_reason: %s); the model %s before it wrote "
            "the kernel: raise --max-tokens",
            field, strlen(*reasoning), resp->finish_reason ? resp->finish_reason : "none",
            cut ? "ran out of tokens thinking" : "stopped thinking");
    } else if (cut) {
        error = set_failure(resp, "the reply is empty (finish_reason: length): the token limit "
                                  "was reached before any answer; raise --max-tokens");
    } else {
        error = set_failure(resp, "the reply is empty (finish_reason: %s)",
                            resp->finish_reason ? resp->finish_reason : "none");
    }
    free(shown);
    return error;
}

int kevo_llm_openai_parse(kevo_llm_response *resp, const char *body, size_t len,
                          const kevo_llm_request *req)
{
    int error = 0;
    char *shown = NULL, *reasoning = NULL, *spent_owned = NULL;
    const char *spent_text = NULL; /* the text the completion tokens were spent on */
    cJSON *root = NULL;
    const cJSON *choice = NULL, *usage = NULL, *v;
    bool have_prompt = false, have_completion = false;

    if (!body || len == 0) {
        error = set_failure(resp, "the server sent an empty body");
        goto tokens;
    }
    root = cJSON_ParseWithLength(body, len);
    if (!root) {
        if (!(shown = preview(body, len, MESSAGE_PREVIEW)))
            goto oom;
        error = set_failure(resp, "the response is not JSON (%zu bytes): %s", len, shown);
        goto tokens;
    }
    if (!cJSON_IsObject(root)) {
        if (!(shown = preview(body, len, MESSAGE_PREVIEW)))
            goto oom;
        error = set_failure(resp, "the response is not a JSON object: %s", shown);
        goto tokens;
    }
    usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
    if (cJSON_IsObject(usage)) {
        have_prompt = token_count(&resp->tokens_prompt, usage, "prompt_tokens");
        have_completion = token_count(&resp->tokens_completion, usage, "completion_tokens");
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (cJSON_IsString(v) && !(resp->model = strdup(v->valuestring)))
        goto oom;

    const char *server_error = error_text_of(root);
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
    if (cJSON_IsArray(choices))
        choice = cJSON_GetArrayItem(choices, 0);
    if (!cJSON_IsObject(choice)) {
        if (server_error) {
            if (!(shown = preview(server_error, strlen(server_error), 300)))
                goto oom;
            error = set_failure(resp, "the server answered with an error: %s", shown);
        } else {
            error = set_failure(resp, "the response has no choices");
        }
        goto tokens;
    }
    v = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
    if (cJSON_IsString(v) && !(resp->finish_reason = strdup(v->valuestring)))
        goto oom;

    const cJSON *message = cJSON_GetObjectItemCaseSensitive(choice, "message");
    if (cJSON_IsObject(message))
        v = cJSON_GetObjectItemCaseSensitive(message, "content");
    else
        v = cJSON_GetObjectItemCaseSensitive(choice, "text"); /* legacy completions shape */
    if ((error = content_of(&resp->content, v)) < 0)
        goto oom;
    bool cut = resp->finish_reason && !strcmp(resp->finish_reason, "length");
    if (!resp->content || is_blank(resp->content)) {
        if ((error = empty_reply(resp, message, cut, &reasoning, &spent_text)) < 0)
            goto oom;
        goto tokens;
    }
    if (cut) {
        /* a kernel cut off mid-way does not compile, or worse, compiles */
        free(spent_owned);
        spent_text = spent_owned = resp->content;
        resp->content = NULL;
        error = set_failure(resp,
                            "the reply was cut off at the token limit (finish_reason: length, "
                            "%zu bytes of text): the kernel in it is likely incomplete; raise "
                            "--max-tokens",
                            strlen(spent_text));
        goto tokens;
    }

tokens:
    if (error < 0)
        goto oom;
    if (!spent_text)
        spent_text = resp->content;
    if (!have_prompt && req)
        resp->tokens_prompt = kevo_llm_request_tokens_estimate(req);
    if (!have_completion)
        resp->tokens_completion =
            spent_text ? kevo_llm_tokens_estimate(spent_text, strlen(spent_text)) : 0;
    resp->tokens_estimated = !have_prompt || !have_completion;
    free(shown);
    free(reasoning);
    free(spent_owned);
    cJSON_Delete(root);
    return 0;
oom:
    free(shown);
    free(reasoning);
    free(spent_owned);
    cJSON_Delete(root);
    kevo_llm_response_clear(resp);
    return kevo_error_set(KEVO_ENOMEM, "out of memory parsing an LLM response");
}

/* ---- HTTP ------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code = CURLE_FAILED_INIT;

static void curl_init_once(void)
{
    curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    exchange *x = userp;
    size_t n = size * nmemb;
    if (x->body.len + n > MAX_BODY_BYTES) {
        x->body_too_big = true;
        return 0; /* curl stops with CURLE_WRITE_ERROR */
    }
    return kevo_buf_put(&x->body, data, n) < 0 ? 0 : n;
}

/* Retry-After: delta-seconds (decimals accepted: some gateways send them).
 * HTTP-date values are ignored: the backoff schedule applies instead. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *userp)
{
    exchange *x = userp;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
        x->retry_after_s = -1; /* a new response (after 100 Continue, say) */
    } else if (n > sizeof(name) - 1 && !strncasecmp(data, name, sizeof(name) - 1)) {
        char value[64];
        size_t vl = n - (sizeof(name) - 1);
        if (vl >= sizeof(value))
            vl = sizeof(value) - 1;
        memcpy(value, data + sizeof(name) - 1, vl);
        value[vl] = '\0';
        char *end;
        double s = strtod(value, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end != value && *end == '\0' && isfinite(s) && s >= 0)
            x->retry_after_s = s;
    }
    return n;
}

static int on_progress(void *userp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    exchange *x = userp;
    return x->stop_flag && *x->stop_flag ? 1 : 0;
}

static bool curl_code_retryable(CURLcode c)
{
    switch (c) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

static bool status_retryable(long status)
{
    return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

/* Sleep `s` seconds in short slices so a stop request is seen quickly. */
static int backoff_sleep(const openai_ctx *c, double s)
{
    double until = kevo_now_s() + s;
    for (;;) {
        if (c->stop_flag && *c->stop_flag)
            return kevo_error_set(KEVO_EINTR, "stopped while waiting to retry %s", c->url_shown);
        double left = until - kevo_now_s();
        if (left <= 0)
            return 0;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static double backoff_delay(openai_ctx *c, int retry_index, double retry_after_s)
{
    if (retry_after_s >= 0)
        return retry_after_s < c->retry_after_max_s ? retry_after_s : c->retry_after_max_s;
    double base = c->backoff_initial_s * pow(2.0, retry_index);
    if (base > c->backoff_max_s)
        base = c->backoff_max_s;
    pthread_mutex_lock(&c->rng_lock);
    double u = kevo_rng_uniform(&c->rng);
    pthread_mutex_unlock(&c->rng_lock);
    /* "equal jitter": at least half the schedule, so retries stay spaced,
     * randomised so many clients do not retry in step */
    return base * (0.5 + 0.5 * u);
}

static void wipe_headers(struct curl_slist *h)
{
    for (; h; h = h->next)
        if (h->data)
            explicit_bzero(h->data, strlen(h->data));
}

/* Fill resp (return 0) or set the final error (return < 0). */
static int make_headers(struct curl_slist **out, const openai_ctx *c)
{
    static const char *const fixed[] = {"Content-Type: application/json",
                                        "Accept: application/json",
                                        "Expect:"}; /* no 100-continue round trip */
    struct curl_slist *h;
    kevo_buf auth = {0};
    int error = 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (!(h = curl_slist_append(*out, fixed[i])))
            goto oom;
        *out = h;
    }
    if (c->api_key) {
        if (kevo_buf_printf(&auth, "Authorization: Bearer %s", c->api_key) < 0)
            goto oom;
        h = curl_slist_append(*out, auth.ptr);
        explicit_bzero(auth.ptr, auth.len);
        if (!h)
            goto oom;
        *out = h;
    }
    goto done;
oom:
    error = kevo_error_set(KEVO_ENOMEM, "out of memory talking to %s", c->url_shown);
done:
    kevo_buf_free(&auth);
    return error;
}

static void set_body(CURL *curl, const char *body)
{
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
}

static void set_options(CURL *curl, const openai_ctx *c, struct curl_slist *headers, exchange *x)
{
    curl_easy_setopt(curl, CURLOPT_URL, c->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kevo/" KEVO_VERSION);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, c->request_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, x->curl_error);
    x->stop_flag = c->stop_flag;
}

static const char *budget_name(bool completion_tokens)
{
    return completion_tokens ? "max_completion_tokens" : "max_tokens";
}

/* Whether an HTTP 400 body refuses the request field `sent` (OpenAI's
 * reasoning models: "Unsupported parameter: 'max_tokens' is not supported
 * with this model. Use 'max_completion_tokens' instead.", param
 * "max_tokens", code "unsupported_parameter"). Naming the field is not
 * enough: "max_tokens is too large" names it too, and is no cue to switch. */
static bool refuses_field(const char *body, size_t len, const char *sent, const char *instead)
{
    static const char *const refusals[] = {"unsupported",  "not supported", "unrecognized",
                                           "unknown",      "not permitted", "not allowed",
                                           "extra inputs", "extra fields"};
    bool yes = false;
    cJSON *root = cJSON_ParseWithLength(body, len);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *param = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "param") : NULL;
    const cJSON *code = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "code") : NULL;
    if (cJSON_IsString(param) && !strcmp(param->valuestring, sent) && cJSON_IsString(code) &&
        !strcmp(code->valuestring, "unsupported_parameter"))
        yes = true;
    cJSON_Delete(root);
    char *msg = yes ? NULL : kevo_llm_openai_error_message(body, len);
    if (msg && strcasestr(msg, sent)) {
        yes = instead && strcasestr(msg, instead);
        for (size_t i = 0; !yes && i < sizeof(refusals) / sizeof(refusals[0]); i++)
            yes = strcasestr(msg, refusals[i]) != NULL;
    }
    free(msg);
    return yes;
}

/* The error of a failure that retrying cannot mend, with a hint: `what` is
 * the (redacted) summary, `x` the exchange, `w` what the body carried. */
static int fail_for_good(const openai_ctx *c, const exchange *x, const char *what,
                         const kevo_llm_wire *w)
{
    long status = x->code == CURLE_OK ? x->status : 0;
    int code = KEVO_EIO;
    const char *hint = "";
    char buf[160];
    const char *budget = budget_name(w->max_completion_tokens);
    if (status == 401 || status == 403) {
        code = KEVO_EINFRA;
        hint = c->api_key ? " (check KEVO_API_KEY)" : " (KEVO_API_KEY is not set)";
    } else if (status == 404) {
        code = KEVO_EINVAL;
        hint = " (check --api-base / KEVO_API_BASE and --model / KEVO_MODEL)";
    } else if (status >= 400) {
        code = KEVO_EINVAL;
        /* a 400 refusing a field kevo sent: say which setting sent it */
        if (status == 400 && w->temperature >= 0 &&
            refuses_field(x->body.ptr, x->body.len, "temperature", NULL)) {
            hint = " (the model refuses `temperature`: leave --temperature and KEVO_TEMPERATURE "
                   "unset, then none is sent)";
        } else if (status == 400 && w->reasoning_effort &&
                   refuses_field(x->body.ptr, x->body.len, "reasoning_effort", NULL)) {
            hint = " (the model refuses `reasoning_effort`: leave --reasoning-effort and "
                   "KEVO_REASONING_EFFORT unset)";
        } else if (status == 400 && w->max_tokens > 0 &&
                   refuses_field(x->body.ptr, x->body.len, budget,
                                 budget_name(!w->max_completion_tokens))) {
            snprintf(buf, sizeof(buf), " (the server refuses `%s`: try --max-tokens-param %s)",
                     budget, budget_name(!w->max_completion_tokens));
            hint = buf;
        }
    }
    return kevo_error_set(code, "POST %s failed: %s%s", c->url_shown, what, hint);
}

/* What one try ended in. */
typedef enum { TRY_ANSWERED, TRY_FAILED, TRY_RETRY } try_outcome;

/* One POST. TRY_ANSWERED: resp is filled (a reply, or a failure the
 * attempt records); TRY_RETRY / TRY_FAILED: `last` says what went wrong
 * (redacted). Negative for a stop or no memory. */
static int try_once(try_outcome *out, CURL *curl, const openai_ctx *c, exchange *x, int attempt,
                    const kevo_llm_request *req, kevo_llm_response *resp, kevo_buf *last,
                    bool *timed_out)
{
    kevo_buf_clear(&x->body);
    x->body_too_big = false;
    x->retry_after_s = -1;
    x->status = 0;
    x->curl_error[0] = '\0';
    double t0 = kevo_now_s();
    x->code = curl_easy_perform(curl);
    double latency = kevo_now_s() - t0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &x->status);
    kevo_buf_clear(last);
    *timed_out = false;
    bool ok_status = x->status >= 200 && x->status < 300;
    if (x->code == CURLE_ABORTED_BY_CALLBACK && c->stop_flag && *c->stop_flag)
        return kevo_error_set(KEVO_EINTR, "stopped while asking %s", c->url_shown);
    if ((x->code == CURLE_WRITE_ERROR && x->body_too_big && ok_status) ||
        (x->code == CURLE_OK && ok_status)) {
        resp->http_status = (int)x->status;
        resp->latency_s = latency;
        resp->attempts = attempt;
        *out = TRY_ANSWERED;
        if (x->code == CURLE_OK)
            return kevo_llm_openai_parse(resp, x->body.ptr, x->body.len, req);
        resp->tokens_prompt = kevo_llm_request_tokens_estimate(req);
        resp->tokens_estimated = true;
        return set_failure(resp, "the response body is larger than %u bytes", MAX_BODY_BYTES);
    }
    int error = 0;
    bool retryable;
    if (x->code != CURLE_OK) {
        retryable = curl_code_retryable(x->code);
        *timed_out = x->code == CURLE_OPERATION_TIMEDOUT;
        error = kevo_buf_printf(last, "%s",
                                x->curl_error[0] ? x->curl_error : curl_easy_strerror(x->code));
    } else {
        retryable = status_retryable(x->status);
        char *server_msg = kevo_llm_openai_error_message(x->body.ptr, x->body.len);
        error = kevo_buf_printf(last, "HTTP %ld%s%s", x->status, server_msg ? ": " : "",
                                server_msg ? server_msg : "");
        free(server_msg);
    }
    if (error < 0)
        return kevo_error_set(KEVO_ENOMEM, "out of memory talking to %s", c->url_shown);
    kevo_llm_redact(last->ptr, c->api_key);
    *out = retryable ? TRY_RETRY : TRY_FAILED;
    return 0;
}

/* POST the body already set on `curl`, retrying what is transient. 0 with
 * *answered: resp is filled; 0 without: a failure retrying cannot mend,
 * `x` and `last` say which (the caller decides what it means); negative:
 * the final error (tries exhausted, stopped, no memory). *tries: tries made. */
static int post_with_retries(bool *answered, int *tries, CURL *curl, openai_ctx *c, exchange *x,
                             const kevo_llm_request *req, kevo_llm_response *resp, kevo_buf *last)
{
    int error = 0;
    *answered = false;
    for (int attempt = 1;; attempt++) {
        try_outcome outcome = TRY_FAILED;
        bool timed_out = false;
        *tries = attempt;
        if (c->stop_flag && *c->stop_flag)
            return kevo_error_set(KEVO_EINTR, "stopped before asking %s", c->url_shown);
        if ((error = try_once(&outcome, curl, c, x, attempt, req, resp, last, &timed_out)) < 0)
            return error;
        if (outcome == TRY_ANSWERED) {
            *answered = true;
            return 0;
        }
        if (outcome == TRY_FAILED)
            return 0;
        if (attempt > c->max_retries)
            return kevo_error_set(timed_out ? KEVO_ETIMEOUT : KEVO_EIO,
                                  "POST %s failed after %d %s: %s", c->url_shown, attempt,
                                  attempt == 1 ? "try" : "tries", last->ptr);
        if ((error = backoff_sleep(c, backoff_delay(c, attempt - 1, x->retry_after_s))) < 0)
            return error;
    }
}

static bool cut_at_length(const kevo_llm_response *resp)
{
    return resp->finish_reason && !strcmp(resp->finish_reason, "length");
}

/* A reply still cut off after what kevo could do: say what budget it had. */
static int explain_cut(kevo_llm_response *resp, const kevo_llm_wire *w, int first_budget)
{
    if (!resp->failure)
        return 0;
    kevo_buf b = {0};
    const char *name = budget_name(w->max_completion_tokens);
    if (w->max_tokens <= 0)
        kevo_buf_printf(&b, "%s (kevo sent no %s: the server's own limit applied)", resp->failure,
                        name);
    else if (w->max_tokens != first_budget)
        kevo_buf_printf(&b, "%s (%s %d, then %d on kevo's one retry with double the budget)",
                        resp->failure, name, first_budget, w->max_tokens);
    else
        kevo_buf_printf(&b, "%s (%s %d)", resp->failure, name, w->max_tokens);
    char *text = kevo_buf_detach(&b);
    if (!text)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    free(resp->failure);
    resp->failure = text;
    return 0;
}

static int openai_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp)
{
    openai_ctx *c = p->ctx;
    int error = 0;
    CURL *curl = NULL;
    struct curl_slist *headers = NULL;
    char *body = NULL;
    kevo_buf last = {0};
    exchange x = {0};
    double t_start = kevo_now_s();
    int tries = 0;
    bool switched = false, doubled = false;
    /* what an answer cut off at the token limit cost before the retry */
    int64_t spent_prompt = 0, spent_completion = 0;
    bool spent_estimated = false;
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_code != CURLE_OK) {
        error = kevo_error_set(KEVO_EINFRA, "libcurl initialisation failed: %s",
                               curl_easy_strerror(curl_init_code));
        goto done;
    }
    kevo_llm_wire w = {
        .model = req->model && *req->model ? req->model : c->model,
        .temperature = req->temperature >= 0 ? req->temperature : c->temperature,
        .max_tokens = req->max_tokens > 0 ? req->max_tokens : c->max_tokens,
        .reasoning_effort = c->reasoning_effort,
    };
    const int first_budget = w.max_tokens;
    if (!(curl = curl_easy_init())) {
        error = kevo_error_set(KEVO_EINFRA, "libcurl could not create a handle");
        goto done;
    }
    if ((error = make_headers(&headers, c)) < 0)
        goto done;
    set_options(curl, c, headers, &x);
    for (;;) {
        w.max_completion_tokens = c->tokens_param == KEVO_LLM_TOKENS_PARAM_MAX_COMPLETION_TOKENS ||
                                  (c->tokens_param == KEVO_LLM_TOKENS_PARAM_AUTO &&
                                   atomic_load(&c->completion_tokens_learnt));
        cJSON *json = kevo_llm_request_json(req, &w);
        if (body) {
            explicit_bzero(body, strlen(body));
            cJSON_free(body);
        }
        body = json ? cJSON_PrintUnformatted(json) : NULL;
        cJSON_Delete(json);
        if (!body) {
            error = kevo_error_set(KEVO_ENOMEM, "out of memory building the request body");
            goto done;
        }
        set_body(curl, body);
        bool answered = false;
        int n = 0;
        error = post_with_retries(&answered, &n, curl, c, &x, req, resp, &last);
        tries += n;
        if (error < 0)
            goto done;
        if (!answered) {
            /* a server that wants max_completion_tokens: once per request,
             * and the provider remembers it */
            if (!switched && c->tokens_param == KEVO_LLM_TOKENS_PARAM_AUTO && w.max_tokens > 0 &&
                !w.max_completion_tokens && x.code == CURLE_OK && x.status == 400 &&
                refuses_field(x.body.ptr, x.body.len, "max_tokens", "max_completion_tokens")) {
                atomic_store(&c->completion_tokens_learnt, true);
                switched = true;
                continue;
            }
            error = fail_for_good(c, &x, last.ptr, &w);
            goto done;
        }
        if (cut_at_length(resp) && !doubled && w.max_tokens > 0 && w.max_tokens <= INT_MAX / 2) {
            /* cut off at the budget kevo set: once more with twice as much */
            spent_prompt += resp->tokens_prompt;
            spent_completion += resp->tokens_completion;
            spent_estimated = spent_estimated || resp->tokens_estimated;
            kevo_llm_response_clear(resp);
            w.max_tokens *= 2;
            doubled = true;
            continue;
        }
        break;
    }
    resp->attempts = tries;
    resp->tokens_prompt += spent_prompt;
    resp->tokens_completion += spent_completion;
    resp->tokens_estimated = resp->tokens_estimated || spent_estimated;
    if (cut_at_length(resp) && (error = explain_cut(resp, &w, first_budget)) < 0)
        goto done;
    if (resp->failure)
        kevo_llm_redact(resp->failure, c->api_key);
    resp->elapsed_s = kevo_now_s() - t_start;
done:
    if (curl)
        curl_easy_cleanup(curl);
    wipe_headers(headers);
    curl_slist_free_all(headers);
    kevo_buf_free(&last);
    kevo_buf_free(&x.body);
    if (body) {
        explicit_bzero(body, strlen(body));
        cJSON_free(body);
    }
    return error;
}

static void openai_free(kevo_provider *p)
{
    openai_ctx *c = p->ctx;
    if (!c)
        return;
    if (c->api_key) {
        explicit_bzero(c->api_key, strlen(c->api_key));
        free(c->api_key);
    }
    free(c->url);
    free(c->url_shown);
    free(c->model);
    pthread_mutex_destroy(&c->rng_lock);
    free(c);
    p->ctx = NULL;
}

/* "scheme://user:pass@host/..." -> "scheme://host/..." */
static char *url_without_userinfo(const char *url)
{
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end ? scheme_end + 3 : url;
    const char *slash = strchr(host, '/');
    const char *at = strchr(host, '@');
    kevo_buf b = {0};
    if (at && (!slash || at < slash)) {
        if (kevo_buf_put(&b, url, (size_t)(host - url)) < 0 || kevo_buf_puts(&b, at + 1) < 0) {
            kevo_buf_free(&b);
            return NULL;
        }
        return kevo_buf_detach(&b);
    }
    return strdup(url);
}

static long to_ms(double s, long fallback)
{
    if (!(s > 0) || !isfinite(s))
        return fallback;
    return s * 1000.0 > 2e9 ? 2000000000L : (long)ceil(s * 1000.0);
}

int kevo_llm_openai_new(kevo_provider **out, const kevo_llm_config *cfg)
{
    int error = 0;
    kevo_provider *p = NULL;
    openai_ctx *c = NULL;
    kevo_buf url = {0};

    *out = NULL;
    if (!cfg->api_base || !*cfg->api_base)
        return kevo_error_set(
            KEVO_EINVAL, "openai provider: no API base URL "
                         "(pass --api-base or set KEVO_API_BASE, e.g. http://127.0.0.1:8000/v1)");
    if (strncmp(cfg->api_base, "http://", 7) && strncmp(cfg->api_base, "https://", 8))
        return kevo_error_set(KEVO_EINVAL, "openai provider: API base must start with http:// or "
                                           "https://");
    if (!cfg->model || !*cfg->model)
        return kevo_error_set(KEVO_EINVAL,
                              "openai provider: no model (pass --model or set KEVO_MODEL)");
    /* an unset temperature is negative; NaN is a KEVO_TEMPERATURE that did not parse */
    if (!isfinite(cfg->temperature)) {
        const char *env = getenv("KEVO_TEMPERATURE");
        return kevo_error_set(KEVO_EINVAL,
                              "openai provider: the temperature (--temperature, "
                              "KEVO_TEMPERATURE) must be a number >= 0%s%s%s",
                              env ? ", not KEVO_TEMPERATURE='" : "", env ? env : "",
                              env ? "'" : "");
    }
    if ((unsigned)cfg->max_tokens_param >= KEVO_LLM_TOKENS_PARAM_COUNT) {
        const char *env = getenv("KEVO_MAX_TOKENS_PARAM");
        return kevo_error_set(KEVO_EINVAL,
                              "openai provider: the budget's field (--max-tokens-param, "
                              "KEVO_MAX_TOKENS_PARAM) must be max_tokens or "
                              "max_completion_tokens, not '%s'",
                              env ? env : "?");
    }
    if ((unsigned)cfg->reasoning_effort >= KEVO_LLM_REASONING_COUNT) {
        const char *env = getenv("KEVO_REASONING_EFFORT");
        return kevo_error_set(KEVO_EINVAL,
                              "openai provider: the reasoning effort (--reasoning-effort, "
                              "KEVO_REASONING_EFFORT) must be low, medium or high, not '%s'",
                              env ? env : "?");
    }
    if (cfg->max_retries < 0 || cfg->max_retries > 100)
        return kevo_error_set(KEVO_EINVAL, "openai provider: max_retries must be 0..100");

    if (!(p = calloc(1, sizeof(*p))) || !(c = calloc(1, sizeof(*c))))
        goto oom;
    pthread_mutex_init(&c->rng_lock, NULL);
    p->version = KEVO_PROVIDER_VERSION;
    p->name = "openai";
    p->ctx = c;
    p->complete = openai_complete;
    p->free = openai_free;

    size_t bl = strlen(cfg->api_base);
    while (bl > 0 && cfg->api_base[bl - 1] == '/')
        bl--;
    if (kevo_buf_put(&url, cfg->api_base, bl) < 0 || kevo_buf_puts(&url, "/chat/completions") < 0)
        goto oom;
    c->url = kevo_buf_detach(&url);
    if (!(c->url_shown = url_without_userinfo(c->url)) || !(c->model = strdup(cfg->model)))
        goto oom;
    const char *key = getenv("KEVO_API_KEY");
    if (key && *key && !(c->api_key = strdup(key)))
        goto oom;
    c->temperature = cfg->temperature >= 0 ? cfg->temperature : -1.0;
    c->max_tokens = cfg->max_tokens;
    c->tokens_param = cfg->max_tokens_param;
    atomic_init(&c->completion_tokens_learnt, false);
    c->reasoning_effort = cfg->reasoning_effort != KEVO_LLM_REASONING_DEFAULT
                              ? kevo_llm_reasoning_effort_name(cfg->reasoning_effort)
                              : NULL;
    c->connect_timeout_ms = to_ms(cfg->connect_timeout_s, 10000);
    c->request_timeout_ms = to_ms(cfg->request_timeout_s, 300000);
    c->max_retries = cfg->max_retries;
    c->backoff_initial_s = cfg->backoff_initial_s >= 0 ? cfg->backoff_initial_s : 1.0;
    c->backoff_max_s = cfg->backoff_max_s >= 0 ? cfg->backoff_max_s : 30.0;
    c->retry_after_max_s = cfg->retry_after_max_s >= 0 ? cfg->retry_after_max_s : 60.0;
    c->stop_flag = cfg->stop_flag;
    kevo_rng_seed(&c->rng, (uint64_t)kevo_now_ns() ^ ((uint64_t)getpid() << 32));
    *out = p;
    return 0;
oom:
    error = kevo_error_set(KEVO_ENOMEM, "out of memory creating the openai provider");
    kevo_buf_free(&url);
    if (p && !p->ctx)
        free(c);
    kevo_llm_provider_free(p);
    return error;
}
