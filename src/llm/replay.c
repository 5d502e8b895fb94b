/*
 * llm/replay.c - the "replay" provider: answers requests from a JSON-lines
 * recording (written by the recorder in record.c, or by hand) instead of a
 * model, so runs, tests and bug reports can be reproduced offline.
 *
 * Matching is by tag, in order: the n-th request carrying tag T gets the
 * n-th record carrying tag T. A recorded error is replayed as the same
 * error. Running out of records is an error (KEVO_ENOTFOUND) naming the
 * file, the tag and the count. With replay_strict the request's messages
 * must also equal the recorded ones.
 *
 * It never talks to the network and never writes the recording.
 */
#include "internal.h"

#include "kevo/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay_record {
    const char *tag; /* borrowed from `json` */
    int line;
    bool used;
    cJSON *json;
} replay_record;

typedef struct replay_ctx {
    char *path;
    bool strict;
    replay_record *records;
    size_t n_records;
    pthread_mutex_t lock; /* guards records[].used */
} replay_ctx;

static char *dup_string_field(const cJSON *o, const char *key, bool *oom)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        return NULL;
    char *s = strdup(v->valuestring);
    if (!s)
        *oom = true;
    return s;
}

static int64_t int_field(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 1e15)
        return 0;
    return (int64_t)v->valuedouble;
}

static double double_field(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e9 ? v->valuedouble : 0;
}

static int error_code_of(const char *name)
{
    static const int codes[] = {KEVO_ENOTFOUND, KEVO_EINVAL, KEVO_ETIMEOUT, KEVO_ENOMEM,
                                KEVO_EIO,       KEVO_EINFRA, KEVO_EINTR};
    for (size_t i = 0; name && i < sizeof(codes) / sizeof(codes[0]); i++)
        if (!strcmp(kevo_error_name(codes[i]), name))
            return codes[i];
    return KEVO_ERROR;
}

/* Do the request's messages equal the recorded ones? */
static bool same_messages(const kevo_llm_request *req, const cJSON *recorded_request,
                          size_t *first_diff)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(recorded_request, "messages");
    size_t i = 0;
    const cJSON *m;
    *first_diff = 0;
    if (!cJSON_IsArray(msgs))
        return false;
    cJSON_ArrayForEach(m, msgs)
    {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        *first_diff = i;
        if (i >= req->n_messages || !cJSON_IsString(role) || !cJSON_IsString(content) ||
            strcmp(role->valuestring, kevo_llm_role_name(req->messages[i].role)) ||
            strcmp(content->valuestring, req->messages[i].content))
            return false;
        i++;
    }
    *first_diff = i;
    return i == req->n_messages;
}

static int replay_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp)
{
    replay_ctx *c = p->ctx;
    const char *tag = req->tag ? req->tag : "";
    replay_record *rec = NULL;
    size_t nth = 0, with_tag = 0;

    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n_records; i++) {
        if (strcmp(c->records[i].tag, tag))
            continue;
        with_tag++;
        if (!rec && !c->records[i].used) {
            rec = &c->records[i];
            rec->used = true;
            nth = with_tag;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (!rec)
        return kevo_error_set(KEVO_ENOTFOUND,
                              "replay %s: no record left for tag '%s' (request #%zu with this "
                              "tag; the file has %zu)",
                              c->path, tag, with_tag + 1, with_tag);

    const cJSON *recorded_req = cJSON_GetObjectItemCaseSensitive(rec->json, "request");
    size_t diff;
    if (c->strict && !same_messages(req, recorded_req, &diff))
        return kevo_error_set(KEVO_EINVAL,
                              "replay %s:%d: request #%zu with tag '%s' differs from the "
                              "recording from message %zu on (strict replay)",
                              c->path, rec->line, nth, tag, diff);

    const cJSON *err = cJSON_GetObjectItemCaseSensitive(rec->json, "error");
    if (cJSON_IsObject(err)) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");
        return kevo_error_set(error_code_of(cJSON_IsString(code) ? code->valuestring : NULL),
                              "%s (replayed from %s:%d)",
                              cJSON_IsString(msg) ? msg->valuestring : "recorded error", c->path,
                              rec->line);
    }

    const cJSON *r = cJSON_GetObjectItemCaseSensitive(rec->json, "response");
    bool oom = false;
    resp->content = dup_string_field(r, "content", &oom);
    resp->failure = dup_string_field(r, "failure", &oom);
    resp->finish_reason = dup_string_field(r, "finish_reason", &oom);
    resp->model = dup_string_field(r, "model", &oom);
    if (oom) {
        kevo_llm_response_clear(resp);
        return kevo_error_set(KEVO_ENOMEM, "out of memory replaying %s:%d", c->path, rec->line);
    }
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(r, "usage");
    bool has_prompt = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens"));
    bool has_completion =
        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(usage, "completion_tokens"));
    resp->tokens_prompt =
        has_prompt ? int_field(usage, "prompt_tokens") : kevo_llm_request_tokens_estimate(req);
    resp->tokens_completion = has_completion ? int_field(usage, "completion_tokens")
                              : resp->content
                                  ? kevo_llm_tokens_estimate(resp->content, strlen(resp->content))
                                  : 0;
    resp->tokens_estimated =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "tokens_estimated")) || !has_prompt ||
        !has_completion;
    resp->latency_s = double_field(r, "latency_s");
    resp->elapsed_s = double_field(r, "elapsed_s");
    resp->attempts = (int)int_field(r, "attempts");
    resp->http_status = (int)int_field(r, "http_status");
    if (!resp->content && !resp->failure) {
        kevo_buf b = {0};
        if (kevo_buf_printf(&b, "the recorded response at %s:%d has no content", c->path,
                            rec->line) < 0)
            return KEVO_ENOMEM;
        resp->failure = kevo_buf_detach(&b);
    }
    /* recorded latencies are kept (reports reproduce); never pretend 0 s */
    if (resp->latency_s <= 0)
        resp->latency_s = 1e-9;
    if (resp->elapsed_s <= 0)
        resp->elapsed_s = resp->latency_s;
    return 0;
}

static void replay_free(kevo_provider *p)
{
    replay_ctx *c = p->ctx;
    if (!c)
        return;
    for (size_t i = 0; i < c->n_records; i++)
        cJSON_Delete(c->records[i].json);
    free(c->records);
    free(c->path);
    pthread_mutex_destroy(&c->lock);
    free(c);
    p->ctx = NULL;
}

/* A record needs a string tag and either a "response" or an "error" object. */
static const char *record_problem(const cJSON *o)
{
    if (!cJSON_IsObject(o))
        return "not a JSON object";
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "tag")))
        return "no string \"tag\"";
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "response")) &&
        !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "error")))
        return "neither a \"response\" nor an \"error\" object";
    return NULL;
}

static int load_records(replay_ctx *c)
{
    int error = 0;
    char *data = NULL;
    size_t len = 0, cap = 0;

    if ((error = kevo_file_read(&data, &len, c->path)) < 0) {
        char why[512]; /* kevo_error_set must not read the buffer it writes */
        snprintf(why, sizeof(why), "%s", kevo_error_last());
        return kevo_error_set(error, "replay: %s", why);
    }
    size_t pos = 0;
    int line_no = 0;
    while (pos < len) {
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - line) : len - pos;
        pos += nl ? n + 1 : n;
        line_no++;
        size_t k = 0;
        while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
            k++;
        if (k == n)
            continue;
        cJSON *o = cJSON_ParseWithLength(line, n);
        const char *problem = o ? record_problem(o) : "not valid JSON";
        if (problem) {
            cJSON_Delete(o);
            /* a last line without its newline is what a killed recorder
             * leaves behind: skip it, keep the rest */
            if (!nl)
                break;
            error = kevo_error_set(KEVO_EINVAL, "replay %s:%d: %s", c->path, line_no, problem);
            goto done;
        }
        if (c->n_records == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            replay_record *r = realloc(c->records, ncap * sizeof(*r));
            if (!r) {
                cJSON_Delete(o);
                error = kevo_error_set(KEVO_ENOMEM, "out of memory loading %s", c->path);
                goto done;
            }
            c->records = r;
            cap = ncap;
        }
        replay_record *r = &c->records[c->n_records++];
        r->json = o;
        r->tag = cJSON_GetObjectItemCaseSensitive(o, "tag")->valuestring;
        r->line = line_no;
        r->used = false;
    }
done:
    free(data);
    return error;
}

int kevo_llm_replay_new(kevo_provider **out, const kevo_llm_config *cfg)
{
    int error = 0;
    kevo_provider *p = NULL;
    replay_ctx *c = NULL;

    *out = NULL;
    if (!cfg->replay_path || !*cfg->replay_path)
        return kevo_error_set(KEVO_EINVAL, "replay provider: no recording given (--replay FILE)");
    if (!(p = calloc(1, sizeof(*p))) || !(c = calloc(1, sizeof(*c))) ||
        !(c->path = strdup(cfg->replay_path))) {
        if (c)
            free(c);
        free(p);
        return kevo_error_set(KEVO_ENOMEM, "out of memory creating the replay provider");
    }
    pthread_mutex_init(&c->lock, NULL);
    c->strict = cfg->replay_strict;
    p->version = KEVO_PROVIDER_VERSION;
    p->name = "replay";
    p->ctx = c;
    p->complete = replay_complete;
    p->free = replay_free;
    if ((error = load_records(c)) < 0) {
        kevo_llm_provider_free(p);
        return error;
    }
    *out = p;
    return 0;
}
