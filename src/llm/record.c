/*
 * llm/record.c - the recorder: a provider that wraps another one and
 * appends every request with its response (or its error) to a JSON-lines
 * file, which the "replay" provider (replay.c) plays back. One line per
 * call, written with one write() on an O_APPEND descriptor, so lines from
 * parallel calls never interleave and a killed run keeps every finished
 * line. The format is in docs/llm.md.
 *
 * It records what the caller asked (model, temperature and max_tokens
 * only when the request set them) and what came back; nothing else - in
 * particular no credentials: the API key never reaches this layer.
 */
#include "internal.h"

#include "kevo/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct recorder_ctx {
    kevo_provider *inner; /* owned */
    char *path;
    int fd;
    pthread_mutex_t lock; /* one writer at a time; also guards `calls` */
    long calls;
} recorder_ctx;

static cJSON *request_record(const kevo_llm_request *req)
{
    /* what the caller asked, not what a provider made of it: the provider's
     * configured temperature, budget field and effort are its own business
     * (replay answers by tag, whatever they were) */
    kevo_llm_wire w = {
        .model = req->model, .temperature = req->temperature, .max_tokens = req->max_tokens};
    return kevo_llm_request_json(req, &w);
}

static bool add_string_or_null(cJSON *o, const char *key, const char *value)
{
    return value ? cJSON_AddStringToObject(o, key, value) != NULL
                 : cJSON_AddNullToObject(o, key) != NULL;
}

/* Times are kept to the microsecond: readable lines, and values that
 * survive the text round trip exactly. */
static double to_microseconds(double s)
{
    return round(s * 1e6) / 1e6;
}

static cJSON *response_record(const kevo_llm_response *resp)
{
    cJSON *r = cJSON_CreateObject(), *usage;
    if (!r)
        return NULL;
    if (!add_string_or_null(r, "content", resp->content) ||
        !add_string_or_null(r, "failure", resp->failure) ||
        !add_string_or_null(r, "finish_reason", resp->finish_reason) ||
        !add_string_or_null(r, "model", resp->model) ||
        !(usage = cJSON_AddObjectToObject(r, "usage")) ||
        !cJSON_AddNumberToObject(usage, "prompt_tokens", (double)resp->tokens_prompt) ||
        !cJSON_AddNumberToObject(usage, "completion_tokens", (double)resp->tokens_completion) ||
        !cJSON_AddBoolToObject(r, "tokens_estimated", resp->tokens_estimated) ||
        !cJSON_AddNumberToObject(r, "latency_s", to_microseconds(resp->latency_s)) ||
        !cJSON_AddNumberToObject(r, "elapsed_s", to_microseconds(resp->elapsed_s)) ||
        !cJSON_AddNumberToObject(r, "attempts", resp->attempts) ||
        !cJSON_AddNumberToObject(r, "http_status", resp->http_status)) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int recorder_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp)
{
    recorder_ctx *c = p->ctx;
    int inner_error, error = 0;
    char *saved_message = NULL, *line = NULL;
    cJSON *rec = NULL, *part;
    char when[32];

    inner_error = kevo_llm_complete(c->inner, req, resp);
    if (inner_error < 0 && !(saved_message = strdup(kevo_error_last())))
        goto oom;

    kevo_iso_time(when, sizeof(when));
    if (!(rec = cJSON_CreateObject()) ||
        !cJSON_AddStringToObject(rec, "tag", req->tag ? req->tag : "") ||
        !cJSON_AddStringToObject(rec, "time", when) ||
        !cJSON_AddStringToObject(rec, "provider", kevo_llm_provider_name(c->inner)) ||
        !(part = request_record(req)))
        goto oom;
    cJSON_AddItemToObject(rec, "request", part);
    if (inner_error < 0) {
        if (!(part = cJSON_AddObjectToObject(rec, "error")) ||
            !cJSON_AddStringToObject(part, "code", kevo_error_name(inner_error)) ||
            !cJSON_AddStringToObject(part, "message", saved_message))
            goto oom;
    } else {
        if (!(part = response_record(resp)))
            goto oom;
        cJSON_AddItemToObject(rec, "response", part);
    }
    if (!(line = cJSON_PrintUnformatted(rec)))
        goto oom;
    size_t n = strlen(line);
    line[n] = '\n'; /* cJSON's buffer has the NUL's byte: reuse it for the newline */

    pthread_mutex_lock(&c->lock);
    int w = write_all(c->fd, line, n + 1);
    int saved_errno = errno;
    c->calls++;
    pthread_mutex_unlock(&c->lock);
    if (w < 0) {
        error = kevo_error_set(KEVO_EIO, "%s: cannot append the LLM record: %s", c->path,
                               strerror(saved_errno));
        goto done;
    }
    if (inner_error < 0)
        error = kevo_error_set(inner_error, "%s", saved_message);
    goto done;
oom:
    error = kevo_error_set(KEVO_ENOMEM, "out of memory recording an LLM exchange");
done:
    if (error < 0)
        kevo_llm_response_clear(resp);
    cJSON_free(line);
    cJSON_Delete(rec);
    free(saved_message);
    return error;
}

static int64_t recorder_count_tokens(kevo_provider *p, const char *text)
{
    recorder_ctx *c = p->ctx;
    return kevo_llm_count_tokens(c->inner, text);
}

static void recorder_free(kevo_provider *p)
{
    recorder_ctx *c = p->ctx;
    if (!c)
        return;
    kevo_llm_provider_free(c->inner);
    if (c->fd >= 0)
        close(c->fd);
    pthread_mutex_destroy(&c->lock);
    free(c->path);
    free(c);
    p->ctx = NULL;
}

int kevo_llm_recorder_wrap(kevo_provider **out, kevo_provider *inner, const char *path)
{
    int error = 0;
    kevo_provider *p = NULL;
    recorder_ctx *c = NULL;

    *out = NULL;
    if (!inner || !path || !*path)
        return kevo_error_set(KEVO_EINVAL, "recorder needs a provider and a file path");
    if (!(p = calloc(1, sizeof(*p))) || !(c = calloc(1, sizeof(*c))) || !(c->path = strdup(path))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory creating the recorder");
        goto fail;
    }
    c->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (c->fd < 0) {
        error =
            kevo_error_set(KEVO_EIO, "%s: cannot open for recording: %s", path, strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->inner = inner;
    p->version = KEVO_PROVIDER_VERSION;
    p->name = "recorder";
    p->ctx = c;
    p->complete = recorder_complete;
    p->free = recorder_free;
    p->count_tokens = recorder_count_tokens;
    *out = p;
    return 0;
fail:
    if (c) {
        free(c->path);
        free(c);
    }
    free(p);
    return error;
}
