/*
 * tests/helpers/fake_llm_server.c - a fake OpenAI-compatible chat server for
 * tests: HTTP/1.1 on 127.0.0.1, one connection at a time, no threads.
 *
 *   fake_llm_server --script FILE [--port N] [--log FILE] [--max-requests N]
 *                   [--no-repeat] [--lifetime SECONDS]
 *
 * Prints the port it listens on (useful with the default --port 0) as the
 * first line of stdout. Serves POST /v1/chat/completions and POST
 * /chat/completions from the script: JSON lines, one response step each,
 * used in order; the last step repeats unless --no-repeat (then every
 * further request gets a 500 "script exhausted"). Blank lines and lines
 * starting with '#' are ignored. Step fields (all optional):
 *
 *   "status": 200            HTTP status (default 200)
 *   "content": "..."         assistant message content (null or absent: null)
 *   "usage": {...}           copied into the body as is (absent: no usage)
 *   "finish_reason": "stop"  (default "stop")
 *   "model": "..."           (default "fake-model")
 *   "error": "..."           error message for a non-2xx status
 *   "retry_after": 1         sends "Retry-After: 1" (number or string)
 *   "raw": "not json{"       this exact body instead of a generated one
 *   "body": {...}            this JSON body instead of a generated one
 *   "close": true            drop the connection without answering
 *   "delay_ms": 2000         wait before answering
 *   "repeat": 3              serve this step 3 times before the next
 *   "reasoning_content": ".." message.reasoning_content (vLLM, DeepSeek)
 *   "reasoning": "..."       message.reasoning (OpenRouter, llama.cpp)
 *
 * and two gates, which answer in the step's place without using it up, so
 * the request that passes them gets the step (what a reasoning model does):
 *
 *   "reject_params": ["max_tokens", "temperature"]   (or one string) an
 *                            HTTP 400 in OpenAI's words for a request whose
 *                            body has one of these fields
 *   "min_budget": 1000       a request whose max_tokens or
 *                            max_completion_tokens is below 1000 gets the
 *                            step's content cut in half, finish_reason
 *                            "length" (no budget at all passes)
 *
 * Every request is logged as one JSON line to the --log file:
 *   {"n":1,"method":"POST","path":"/v1/chat/completions",
 *    "authorization":"Bearer ..." | null,"body":{...} | "raw text"}
 * Exits 0 after --max-requests requests or on SIGTERM/SIGINT, and 3 after
 * --lifetime seconds (default 120) so that a crashed test leaves no server
 * behind. It must stay small: it is a test fixture, not a web server.
 */
#include <cjson/cJSON.h>

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEADER_BYTES (64 * 1024)
#define MAX_BODY_BYTES (64 * 1024 * 1024)
#define READ_TIMEOUT_MS 10000

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct script {
    cJSON **steps;
    size_t n;
    size_t at;        /* current step */
    long served_here; /* times the current step was served */
    bool repeat_last;
} script;

static int load_script(script *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fake_llm_server: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int line_no = 0, rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        line_no++;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '\0' || *p == '#')
            continue;
        cJSON *step = cJSON_Parse(p);
        if (!cJSON_IsObject(step)) {
            fprintf(stderr, "fake_llm_server: %s:%d: not a JSON object\n", path, line_no);
            cJSON_Delete(step);
            rc = -1;
            break;
        }
        cJSON **grown = realloc(s->steps, (s->n + 1) * sizeof(*grown));
        if (!grown) {
            cJSON_Delete(step);
            rc = -1;
            break;
        }
        s->steps = grown;
        s->steps[s->n++] = step;
    }
    free(line);
    fclose(f);
    if (rc == 0 && s->n == 0) {
        fprintf(stderr, "fake_llm_server: %s: no steps\n", path);
        rc = -1;
    }
    return rc;
}

/* The step the next request gets, without using it; NULL when exhausted. */
static const cJSON *peek_step(const script *s)
{
    if (s->at >= s->n)
        return s->repeat_last ? s->steps[s->n - 1] : NULL;
    return s->steps[s->at];
}

/* The step for this request, or NULL when the script is exhausted. */
static const cJSON *next_step(script *s)
{
    if (s->at >= s->n)
        return s->repeat_last ? s->steps[s->n - 1] : NULL;
    const cJSON *step = s->steps[s->at];
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(step, "repeat");
    long times = cJSON_IsNumber(rep) && rep->valuedouble >= 1 ? (long)rep->valuedouble : 1;
    if (++s->served_here >= times) {
        s->served_here = 0;
        if (s->at + 1 < s->n || !s->repeat_last)
            s->at++;
    }
    return step;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
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

static void sleep_ms(long ms)
{
    double until = now_s() + (double)ms / 1000.0;
    while (!stop_requested) {
        double left = until - now_s();
        if (left <= 0)
            break;
        if (left > 0.05)
            left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

static void respond(int fd, int status, const char *extra_headers, const char *body)
{
    char head[512];
    size_t blen = strlen(body);
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
                     status, reason_phrase(status), blen, extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof(head))
        return;
    if (send_all(fd, head, (size_t)n) == 0)
        send_all(fd, body, blen);
}

static void respond_error(int fd, int status, const char *message, const char *extra_headers)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(err, "message", message);
    cJSON_AddStringToObject(err, "type", status == 429 ? "rate_limit_error" : "server_error");
    char *body = cJSON_PrintUnformatted(root);
    respond(fd, status, extra_headers, body ? body : "{}");
    cJSON_free(body);
    cJSON_Delete(root);
}

/* The field of `request` named in the step's reject_params, or NULL. */
static const char *rejected_param(const cJSON *step, const cJSON *request)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(step, "reject_params");
    if (cJSON_IsString(r))
        return cJSON_GetObjectItemCaseSensitive(request, r->valuestring) ? r->valuestring : NULL;
    const cJSON *name, *list = cJSON_IsArray(r) ? r : NULL;
    cJSON_ArrayForEach(name, list)
    {
        if (cJSON_IsString(name) && cJSON_GetObjectItemCaseSensitive(request, name->valuestring))
            return name->valuestring;
    }
    return NULL;
}

/* OpenAI's answer to a field a reasoning model does not take. */
static void respond_rejected(int fd, const char *param, const cJSON *request)
{
    char msg[256];
    const char *code = "unsupported_parameter";
    if (!strcmp(param, "max_tokens")) {
        snprintf(msg, sizeof(msg),
                 "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                 "'max_completion_tokens' instead.");
    } else if (!strcmp(param, "temperature")) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(request, "temperature");
        snprintf(msg, sizeof(msg),
                 "Unsupported value: 'temperature' does not support %g with this model. Only "
                 "the default (1) value is supported.",
                 cJSON_IsNumber(t) ? t->valuedouble : 0.0);
        code = "unsupported_value";
    } else {
        snprintf(msg, sizeof(msg),
                 "Unsupported parameter: '%.100s' is not supported with this "
                 "model.",
                 param);
    }
    cJSON *root = cJSON_CreateObject();
    cJSON *err = cJSON_AddObjectToObject(root, "error");
    cJSON_AddStringToObject(err, "message", msg);
    cJSON_AddStringToObject(err, "type", "invalid_request_error");
    cJSON_AddStringToObject(err, "param", param);
    cJSON_AddStringToObject(err, "code", code);
    char *body = cJSON_PrintUnformatted(root);
    respond(fd, 400, NULL, body ? body : "{}");
    cJSON_free(body);
    cJSON_Delete(root);
}

/* The request's completion budget, or -1 when it sets none. */
static double budget_of(const cJSON *request)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(request, "max_completion_tokens");
    if (!cJSON_IsNumber(v))
        v = cJSON_GetObjectItemCaseSensitive(request, "max_tokens");
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Whether the step's min_budget cuts this request's answer short. */
static bool below_budget(const cJSON *step, const cJSON *request)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(step, "min_budget");
    double b = budget_of(request);
    return cJSON_IsNumber(m) && b >= 0 && b < m->valuedouble;
}

static void serve_step(int fd, const cJSON *step, long n, bool cut)
{
    const cJSON *v;
    if (!step) {
        respond_error(fd, 500, "fake_llm_server: script exhausted", NULL);
        return;
    }
    v = cJSON_GetObjectItemCaseSensitive(step, "delay_ms");
    if (cJSON_IsNumber(v) && v->valuedouble > 0)
        sleep_ms((long)v->valuedouble);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "close")))
        return; /* the caller closes the socket without a word */

    v = cJSON_GetObjectItemCaseSensitive(step, "status");
    int status = cJSON_IsNumber(v) ? (int)v->valuedouble : 200;
    char extra[128] = "";
    v = cJSON_GetObjectItemCaseSensitive(step, "retry_after");
    if (cJSON_IsNumber(v))
        snprintf(extra, sizeof(extra), "Retry-After: %g\r\n", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(extra, sizeof(extra), "Retry-After: %.80s\r\n", v->valuestring);

    v = cJSON_GetObjectItemCaseSensitive(step, "raw");
    if (cJSON_IsString(v)) {
        respond(fd, status, extra, v->valuestring);
        return;
    }
    v = cJSON_GetObjectItemCaseSensitive(step, "body");
    if (v) {
        char *body = cJSON_PrintUnformatted(v);
        respond(fd, status, extra, body ? body : "");
        cJSON_free(body);
        return;
    }
    if (status < 200 || status > 299) {
        v = cJSON_GetObjectItemCaseSensitive(step, "error");
        char msg[64];
        snprintf(msg, sizeof(msg), "fake error %d", status);
        respond_error(fd, status, cJSON_IsString(v) ? v->valuestring : msg, extra);
        return;
    }

    cJSON *root = cJSON_CreateObject();
    char id[32];
    snprintf(id, sizeof(id), "fake-%ld", n);
    cJSON_AddStringToObject(root, "id", id);
    cJSON_AddStringToObject(root, "object", "chat.completion");
    cJSON_AddNumberToObject(root, "created", 0);
    v = cJSON_GetObjectItemCaseSensitive(step, "model");
    cJSON_AddStringToObject(root, "model", cJSON_IsString(v) ? v->valuestring : "fake-model");
    cJSON *choices = cJSON_AddArrayToObject(root, "choices");
    cJSON *choice = cJSON_CreateObject();
    cJSON_AddItemToArray(choices, choice);
    cJSON_AddNumberToObject(choice, "index", 0);
    cJSON *message = cJSON_AddObjectToObject(choice, "message");
    cJSON_AddStringToObject(message, "role", "assistant");
    v = cJSON_GetObjectItemCaseSensitive(step, "content");
    if (cJSON_IsString(v) && cut) {
        /* the first half: a kernel cut off mid-way */
        size_t half = strlen(v->valuestring) / 2;
        char *text = strndup(v->valuestring, half);
        cJSON_AddStringToObject(message, "content", text ? text : "");
        free(text);
    } else if (cJSON_IsString(v)) {
        cJSON_AddStringToObject(message, "content", v->valuestring);
    } else {
        cJSON_AddNullToObject(message, "content");
    }
    static const char *const reasoning_fields[] = {"reasoning_content", "reasoning"};
    for (size_t i = 0; i < sizeof(reasoning_fields) / sizeof(reasoning_fields[0]); i++) {
        v = cJSON_GetObjectItemCaseSensitive(step, reasoning_fields[i]);
        if (cJSON_IsString(v))
            cJSON_AddStringToObject(message, reasoning_fields[i], v->valuestring);
    }
    v = cJSON_GetObjectItemCaseSensitive(step, "finish_reason");
    cJSON_AddStringToObject(choice, "finish_reason",
                            cut                 ? "length"
                            : cJSON_IsString(v) ? v->valuestring
                                                : "stop");
    v = cJSON_GetObjectItemCaseSensitive(step, "usage");
    if (v)
        cJSON_AddItemToObject(root, "usage", cJSON_Duplicate(v, 1));
    char *body = cJSON_PrintUnformatted(root);
    respond(fd, status, extra, body ? body : "{}");
    cJSON_free(body);
    cJSON_Delete(root);
}

/* Read until `want` bytes are buffered or the header end is seen
 * (want == 0). Returns 0, or -1 on EOF, error, timeout or stop. */
static int read_more(int fd, char **buf, size_t *len, size_t *cap, size_t limit, double deadline)
{
    if (*len + 4096 + 1 > *cap) {
        size_t ncap = *cap ? *cap * 2 : 8192;
        while (ncap < *len + 4096 + 1)
            ncap *= 2;
        if (ncap > limit + 4096 + 1)
            ncap = limit + 4096 + 1;
        if (ncap <= *len + 1)
            return -1;
        char *p = realloc(*buf, ncap);
        if (!p)
            return -1;
        *buf = p;
        *cap = ncap;
    }
    for (;;) {
        if (stop_requested)
            return -1;
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0)
            return -1;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int r = poll(&pfd, 1, ms > 200 ? 200 : ms);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        ssize_t got = recv(fd, *buf + *len, *cap - *len - 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        *len += (size_t)got;
        (*buf)[*len] = '\0';
        return 0;
    }
}

/* Value of header `name` in the header block (borrowed copy in out). */
static bool header_value(const char *headers, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    const char *p = strstr(headers, "\r\n");
    while (p) {
        p += 2;
        if (!strncasecmp(p, name, nl) && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            const char *e = strstr(v, "\r\n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
        p = strstr(p, "\r\n");
    }
    return false;
}

static void log_request(FILE *log, long n, const char *method, const char *path,
                        const char *authorization, const char *body, size_t body_len)
{
    if (!log)
        return;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "n", (double)n);
    cJSON_AddStringToObject(root, "method", method);
    cJSON_AddStringToObject(root, "path", path);
    if (authorization)
        cJSON_AddStringToObject(root, "authorization", authorization);
    else
        cJSON_AddNullToObject(root, "authorization");
    cJSON *parsed = cJSON_ParseWithLength(body, body_len);
    if (parsed)
        cJSON_AddItemToObject(root, "body", parsed);
    else
        cJSON_AddStringToObject(root, "body", body);
    char *line = cJSON_PrintUnformatted(root);
    if (line) {
        fprintf(log, "%s\n", line);
        fflush(log);
    }
    cJSON_free(line);
    cJSON_Delete(root);
}

/* One request on one connection. Returns 1 when a request was counted. */
static int handle_connection(int fd, script *s, FILE *log, long *count)
{
    char *buf = NULL, *hdr_end = NULL;
    size_t len = 0, cap = 0;
    double deadline = now_s() + READ_TIMEOUT_MS / 1000.0;
    int counted = 0;

    while (!(hdr_end = buf ? strstr(buf, "\r\n\r\n") : NULL)) {
        if (len >= MAX_HEADER_BYTES ||
            read_more(fd, &buf, &len, &cap, MAX_HEADER_BYTES, deadline) < 0)
            goto done;
    }
    size_t head_len = (size_t)(hdr_end - buf) + 4;
    char method[16] = "", path[256] = "";
    if (sscanf(buf, "%15s %255s", method, path) != 2) {
        respond_error(fd, 400, "bad request line", NULL);
        goto done;
    }
    hdr_end[2] = '\0'; /* headers end with one CRLF for header_value() */
    char value[4096], authorization[4096];
    bool has_auth = header_value(buf, "Authorization", authorization, sizeof(authorization));
    size_t body_len = 0;
    if (header_value(buf, "Transfer-Encoding", value, sizeof(value))) {
        respond_error(fd, 501, "chunked bodies are not supported by the fake server", NULL);
        goto done;
    }
    if (header_value(buf, "Content-Length", value, sizeof(value)))
        body_len = strtoul(value, NULL, 10);
    if (body_len > MAX_BODY_BYTES) {
        respond_error(fd, 413, "body too large", NULL);
        goto done;
    }
    if (header_value(buf, "Expect", value, sizeof(value)) && !strcasecmp(value, "100-continue"))
        send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    while (len - head_len < body_len)
        if (read_more(fd, &buf, &len, &cap, head_len + body_len, deadline) < 0)
            goto done;
    char *body = buf + head_len;
    body[body_len] = '\0';

    counted = 1;
    (*count)++;
    log_request(log, *count, method, path, has_auth ? authorization : NULL, body, body_len);
    bool chat = !strcmp(path, "/v1/chat/completions") || !strcmp(path, "/chat/completions");
    if (!chat)
        respond_error(fd, 404, "no such endpoint on the fake server", NULL);
    else if (strcmp(method, "POST"))
        respond_error(fd, 405, "use POST", NULL);
    else {
        /* the gates answer in the step's place and leave it for the next request */
        cJSON *request = cJSON_ParseWithLength(body, body_len);
        const cJSON *step = peek_step(s);
        const char *rejected = step ? rejected_param(step, request) : NULL;
        if (rejected)
            respond_rejected(fd, rejected, request);
        else if (step && below_budget(step, request))
            serve_step(fd, step, *count, true);
        else
            serve_step(fd, next_step(s), *count, false);
        cJSON_Delete(request);
    }
done:
    free(buf);
    return counted;
}

static void usage(void)
{
    fprintf(stderr, "usage: fake_llm_server --script FILE [--port N] [--log FILE] "
                    "[--max-requests N] [--no-repeat] [--lifetime SECONDS]\n");
}

int main(int argc, char **argv)
{
    const char *script_path = NULL, *log_path = NULL;
    long port = 0, max_requests = 0;
    double lifetime = 120;
    script s = {.repeat_last = true};
    FILE *log = NULL;
    int lfd = -1, rc = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-repeat")) {
            s.repeat_last = false;
            continue;
        }
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(a, "--script"))
            script_path = v;
        else if (!strcmp(a, "--log"))
            log_path = v;
        else if (!strcmp(a, "--port"))
            port = strtol(v, NULL, 10);
        else if (!strcmp(a, "--max-requests"))
            max_requests = strtol(v, NULL, 10);
        else if (!strcmp(a, "--lifetime"))
            lifetime = strtod(v, NULL);
        else {
            usage();
            return 2;
        }
        i++;
    }
    if (!script_path || port < 0 || port > 65535) {
        usage();
        return 2;
    }
    if (load_script(&s, script_path) < 0)
        return 2;
    if (log_path && !(log = fopen(log_path, "a"))) {
        fprintf(stderr, "fake_llm_server: %s: %s\n", log_path, strerror(errno));
        rc = 2;
        goto done;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(addr);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(lfd, 16) < 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) {
        fprintf(stderr, "fake_llm_server: cannot listen on 127.0.0.1:%ld: %s\n", port,
                strerror(errno));
        rc = 2;
        goto done;
    }
    printf("%d\n", ntohs(addr.sin_port));
    fflush(stdout);

    double end = now_s() + lifetime;
    long count = 0;
    while (!stop_requested) {
        if (now_s() >= end) {
            fprintf(stderr, "fake_llm_server: lifetime of %g s is over\n", lifetime);
            rc = 3;
            break;
        }
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        int r = poll(&pfd, 1, 200);
        if (r <= 0)
            continue;
        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0)
            continue;
        handle_connection(cfd, &s, log, &count);
        shutdown(cfd, SHUT_WR);
        close(cfd);
        if (max_requests > 0 && count >= max_requests)
            break;
    }
done:
    if (lfd >= 0)
        close(lfd);
    if (log)
        fclose(log);
    for (size_t i = 0; i < s.n; i++)
        cJSON_Delete(s.steps[i]);
    free(s.steps);
    return rc;
}
