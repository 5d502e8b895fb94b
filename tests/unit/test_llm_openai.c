/*
 * tests/unit/test_llm_openai.c - the "openai" provider against the fake
 * server (tests/helpers/fake_llm_server.c) on loopback: what is sent, what
 * is parsed, retries and backoff, timeouts, failures that are results, and
 * that the API key appears nowhere but the Authorization header.
 * Backoff is set to milliseconds so the whole file runs in a few seconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_llm_server.h"
#include <pthread.h>
#include "kevo/llm.h"
#include "kevo/sys/provider.h"
#include "llm/internal.h"

#define SECRET "sk-test-VERY-SECRET-0123456789"

static void assert_no_secret(const char *text)
{
    if (text && strstr(text, SECRET)) {
        fprintf(stderr, "secret leaked into: %s\n", text);
        fail();
    }
}

static void config_for(kevo_llm_config *cfg, const fake_server *fs)
{
    kevo_llm_config_init(cfg);
    cfg->api_base = fs->base;
    cfg->model = "test-model";
    cfg->temperature = 0.25;
    cfg->max_tokens = 321;
    cfg->connect_timeout_s = 2;
    cfg->request_timeout_s = 5;
    cfg->max_retries = 3;
    cfg->backoff_initial_s = 0.01;
    cfg->backoff_max_s = 0.05;
    cfg->retry_after_max_s = 5;
}

static const kevo_llm_message two_messages[] = {
    {KEVO_LLM_SYSTEM, "You write fast C kernels."},
    {KEVO_LLM_USER, "Write relu(const float *x, float *y, int64_t n)."},
};

static void request_init(kevo_llm_request *req)
{
    kevo_llm_request_init(req);
    req->messages = two_messages;
    req->n_messages = 2;
    req->tag = "task=relu iter=1 stage=draft";
}

/* Start the server or skip the test. */
#define START_OR_SKIP(fs, script, extra)                                                           \
    do {                                                                                           \
        if (fake_server_start((fs), (script), (extra)) < 0) {                                      \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static int setup(void **state)
{
    setenv("KEVO_API_KEY", SECRET, 1);
    return 0;
}

static void test_llm_openai__success_with_usage(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"status\":200,\"content\":\"```c\\nvoid relu(void){}\\n```\","
                  "\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":7},"
                  "\"model\":\"served-model\"}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    assert_string_equal(kevo_llm_provider_name(p), "openai");
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.failure);
    assert_string_equal(resp.content, "```c\nvoid relu(void){}\n```");
    assert_int_equal(resp.tokens_prompt, 42);
    assert_int_equal(resp.tokens_completion, 7);
    assert_false(resp.tokens_estimated);
    assert_string_equal(resp.finish_reason, "stop");
    assert_string_equal(resp.model, "served-model");
    assert_int_equal(resp.http_status, 200);
    assert_int_equal(resp.attempts, 1);
    assert_true(resp.latency_s > 0);

    /* what the server got */
    cJSON *r = fake_server_request(&fs, 0);
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(r, "path")->valuestring, "/v1/chat/completions");
    assert_string_equal(cJSON_GetObjectItem(r, "authorization")->valuestring, "Bearer " SECRET);
    cJSON *body = cJSON_GetObjectItem(r, "body");
    assert_string_equal(cJSON_GetObjectItem(body, "model")->valuestring, "test-model");
    assert_true(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.25);
    assert_int_equal(cJSON_GetObjectItem(body, "max_tokens")->valueint, 321);
    cJSON *msgs = cJSON_GetObjectItem(body, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "role")->valuestring,
                        "system");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "content")->valuestring,
                        two_messages[1].content);
    cJSON_Delete(r);

    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__request_overrides_config(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    req.model = "other-model";
    req.temperature = 0.0; /* greedy is a real temperature, not "default" */
    req.max_tokens = 77;
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    cJSON *r = fake_server_request(&fs, 0);
    cJSON *body = cJSON_GetObjectItem(r, "body");
    assert_string_equal(cJSON_GetObjectItem(body, "model")->valuestring, "other-model");
    assert_true(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.0);
    assert_int_equal(cJSON_GetObjectItem(body, "max_tokens")->valueint, 77);
    cJSON_Delete(r);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__missing_usage_is_estimated(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"Here is the kernel, written carefully for speed.\"}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.failure);
    assert_true(resp.tokens_estimated);
    assert_true(resp.tokens_prompt > 10 && resp.tokens_prompt < 60);
    assert_true(resp.tokens_completion >= 8 && resp.tokens_completion <= 16);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__retry_after_429_then_success(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"status\":429,\"retry_after\":1,\"error\":\"slow down\"}\n"
                  "{\"content\":\"ok\",\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    double t0 = kevo_now_s();
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    double dt = kevo_now_s() - t0;
    assert_string_equal(resp.content, "ok");
    assert_int_equal(resp.attempts, 2);
    /* Retry-After: 1 honoured although the backoff schedule says 10 ms */
    assert_true(dt >= 0.95);
    assert_true(dt < 4.0);
    assert_true(resp.elapsed_s >= 0.95);
    assert_true(resp.latency_s < resp.elapsed_s);
    assert_int_equal(fake_server_request_count(&fs), 2);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__retry_after_is_capped(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":503,\"retry_after\":3600}\n{\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.retry_after_max_s = 0.2;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    double t0 = kevo_now_s();
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    double dt = kevo_now_s() - t0;
    assert_string_equal(resp.content, "ok");
    assert_true(dt >= 0.18 && dt < 3.0);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__server_error_then_success(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":500}\n{\"status\":502}\n{\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    assert_int_equal(resp.attempts, 3);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__dropped_connection_is_retried(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"close\":true}\n{\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    assert_int_equal(resp.attempts, 2);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__broken_json_is_a_failure_not_an_error(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"raw\":\"not json{\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.content);
    assert_non_null(resp.failure);
    assert_non_null(strstr(resp.failure, "not JSON"));
    assert_non_null(strstr(resp.failure, "not json{"));
    assert_true(resp.tokens_estimated);
    assert_true(resp.tokens_prompt > 0); /* the prompt was still sent */
    assert_int_equal(resp.tokens_completion, 0);
    assert_int_equal(resp.attempts, 1); /* a bad 200 is not retried */
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__empty_content_is_a_failure(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"content\":\"  \\n\",\"finish_reason\":\"length\","
                  "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4096}}\n"
                  "{\"content\":null}\n"
                  "{\"body\":{\"choices\":[]}}\n"
                  "{\"body\":{\"error\":{\"message\":\"context too long\"}}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.max_tokens = 0; /* no budget sent: a reply cut at "length" is not retried */
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;

    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.content);
    assert_non_null(strstr(resp.failure, "empty"));
    assert_non_null(strstr(resp.failure, "length"));
    assert_non_null(strstr(resp.failure, "raise --max-tokens"));
    assert_non_null(strstr(resp.failure, "no max_tokens"));
    assert_int_equal(resp.tokens_completion, 4096); /* the server's count is kept */
    assert_false(resp.tokens_estimated);
    kevo_llm_response_clear(&resp);

    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.content);
    assert_non_null(strstr(resp.failure, "empty"));
    kevo_llm_response_clear(&resp);

    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_non_null(strstr(resp.failure, "no choices"));
    kevo_llm_response_clear(&resp);

    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_non_null(strstr(resp.failure, "context too long"));
    kevo_llm_response_clear(&resp);

    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__exhausted_retries_is_a_clear_error(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":503,\"error\":\"model overloaded, try later\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.max_retries = 2;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    int rc = kevo_llm_complete(p, &req, &resp);
    assert_int_equal(rc, KEVO_EIO);
    const char *msg = kevo_error_last();
    assert_non_null(strstr(msg, fs.base));
    assert_non_null(strstr(msg, "/chat/completions"));
    assert_non_null(strstr(msg, "3 tries"));
    assert_non_null(strstr(msg, "503"));
    assert_non_null(strstr(msg, "model overloaded, try later"));
    assert_no_secret(msg);
    assert_null(resp.content);
    assert_null(resp.failure);
    assert_int_equal(fake_server_request_count(&fs), 3);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__timeout(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"delay_ms\":3000,\"content\":\"too late\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.request_timeout_s = 0.3;
    cfg.max_retries = 1;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    double t0 = kevo_now_s();
    int rc = kevo_llm_complete(p, &req, &resp);
    double dt = kevo_now_s() - t0;
    assert_int_equal(rc, KEVO_ETIMEOUT);
    assert_non_null(strstr(kevo_error_last(), "2 tries"));
    assert_non_null(strstr(kevo_error_last(), fs.base));
    assert_no_secret(kevo_error_last());
    /* two tries of 0.3 s, not 3 s: the server is still sleeping on the
     * first one while the second waits in its backlog */
    assert_true(dt < 2.0);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__connection_refused(void **state)
{
    /* a port that was just free: bind, learn it, close */
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"x\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    fake_server_stop(&fs); /* nothing listens there any more */
    cfg.max_retries = 1;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    int rc = kevo_llm_complete(p, &req, &resp);
    assert_int_equal(rc, KEVO_EIO);
    assert_non_null(strstr(kevo_error_last(), "2 tries"));
    assert_non_null(strstr(kevo_error_last(), "127.0.0.1"));
    kevo_llm_provider_free(p);
}

static void test_llm_openai__unauthorized_is_not_retried_and_redacted(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":401,\"error\":\"Incorrect API key provided: " SECRET "\"}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    int rc = kevo_llm_complete(p, &req, &resp);
    assert_int_equal(rc, KEVO_EINFRA);
    const char *msg = kevo_error_last();
    assert_non_null(strstr(msg, "401"));
    assert_non_null(strstr(msg, "Incorrect API key provided: ***"));
    assert_non_null(strstr(msg, "KEVO_API_KEY"));
    assert_no_secret(msg);
    assert_int_equal(fake_server_request_count(&fs), 1);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__key_only_in_authorization_header(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":500}\n{\"raw\":\"oops " SECRET "\"}\n{\"content\":\"fine\"}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0); /* 500, then the raw body */
    assert_non_null(resp.failure);
    assert_no_secret(resp.failure); /* a server echoing the key is redacted */
    kevo_llm_response_clear(&resp);
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    kevo_llm_response_clear(&resp);

    int n = fake_server_request_count(&fs);
    assert_int_equal(n, 3);
    for (int i = 0; i < n; i++) {
        cJSON *r = fake_server_request(&fs, i);
        assert_string_equal(cJSON_GetObjectItem(r, "authorization")->valuestring, "Bearer " SECRET);
        cJSON_DeleteItemFromObject(r, "authorization");
        char *rest = cJSON_PrintUnformatted(r);
        assert_no_secret(rest);
        cJSON_free(rest);
        cJSON_Delete(r);
    }
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__no_key_sends_no_authorization(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"ok\"}\n", NULL);
    unsetenv("KEVO_API_KEY");
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    setenv("KEVO_API_KEY", SECRET, 1); /* read at creation, not per call */
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    cJSON *r = fake_server_request(&fs, 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "authorization")));
    cJSON_Delete(r);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__base_without_v1_and_trailing_slash(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"ok\"}\n", NULL);
    char base[80];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/", fs.port);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.api_base = base;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    cJSON *r = fake_server_request(&fs, 0);
    assert_string_equal(cJSON_GetObjectItem(r, "path")->valuestring, "/chat/completions");
    cJSON_Delete(r);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static volatile sig_atomic_t stop_flag;

static void *set_stop_later(void *arg)
{
    usleep(300000);
    stop_flag = 1;
    return NULL;
}

static void test_llm_openai__stop_flag_interrupts_backoff(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"status\":429,\"retry_after\":30}\n", NULL);
    stop_flag = 0;
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.retry_after_max_s = 60;
    cfg.stop_flag = &stop_flag;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, set_stop_later, NULL), 0);
    double t0 = kevo_now_s();
    int rc = kevo_llm_complete(p, &req, &resp);
    double dt = kevo_now_s() - t0;
    pthread_join(t, NULL);
    assert_int_equal(rc, KEVO_EINTR);
    assert_true(dt >= 0.25 && dt < 2.0); /* not the 30 s the server asked for */
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__config_errors(void **state)
{
    kevo_llm_config cfg;
    kevo_provider *p = NULL;
    kevo_llm_config_init(&cfg);
    cfg.model = "m";
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "KEVO_API_BASE"));
    cfg.api_base = "ftp://example";
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), KEVO_EINVAL);
    cfg.api_base = "http://127.0.0.1:9/v1";
    cfg.model = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "KEVO_MODEL"));
    assert_null(p);
    assert_int_equal(kevo_llm_provider_new(&p, "no-such-provider", &cfg), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "openai"));
    assert_non_null(strstr(kevo_error_last(), "replay"));

    /* the environment fills what flags left unset, flags win */
    setenv("KEVO_API_BASE", "http://127.0.0.1:1/v1", 1);
    setenv("KEVO_MODEL", "env-model", 1);
    kevo_llm_config_init(&cfg);
    cfg.model = "flag-model";
    kevo_llm_config_apply_env(&cfg);
    assert_string_equal(cfg.api_base, "http://127.0.0.1:1/v1");
    assert_string_equal(cfg.model, "flag-model");
    unsetenv("KEVO_API_BASE");
    unsetenv("KEVO_MODEL");
}

static void test_llm_openai__userinfo_not_shown(void **state)
{
    kevo_llm_config cfg;
    kevo_provider *p = NULL;
    kevo_llm_config_init(&cfg);
    cfg.api_base = "http://user:hunter2@127.0.0.1:1/v1";
    cfg.model = "m";
    cfg.max_retries = 0;
    cfg.connect_timeout_s = 1;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_true(kevo_llm_complete(p, &req, &resp) < 0);
    assert_null(strstr(kevo_error_last(), "hunter2"));
    assert_non_null(strstr(kevo_error_last(), "http://127.0.0.1:1/v1/chat/completions"));
    assert_non_null(strstr(kevo_error_last(), "1 try"));
    kevo_llm_provider_free(p);
}

/* ---- what reasoning models accept (issue 15) ---------------------------- */

/* The body of the i-th request the server logged (the caller's). */
static cJSON *request_body(const fake_server *fs, int i)
{
    cJSON *r = fake_server_request(fs, i);
    assert_non_null(r);
    cJSON *body = cJSON_DetachItemFromObject(r, "body");
    cJSON_Delete(r);
    assert_true(cJSON_IsObject(body));
    return body;
}

static void test_llm_openai__no_temperature_unless_configured(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"reject_params\":[\"temperature\"],\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    kevo_llm_config_init(&cfg);
    assert_true(cfg.temperature < 0); /* the default sends none */
    config_for(&cfg, &fs);
    cfg.temperature = -1;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    cJSON *body = request_body(&fs, 0);
    assert_null(cJSON_GetObjectItem(body, "temperature"));
    assert_null(cJSON_GetObjectItem(body, "reasoning_effort"));
    assert_int_equal(cJSON_GetObjectItem(body, "max_tokens")->valueint, 321);
    cJSON_Delete(body);
    kevo_llm_response_clear(&resp);

    /* a request's own temperature is sent, and refused: a clear error, no retry */
    req.temperature = 0.7;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), KEVO_EINVAL);
    const char *msg = kevo_error_last();
    assert_non_null(strstr(msg, "400"));
    assert_non_null(strstr(msg, "'temperature' does not support 0.7"));
    assert_non_null(strstr(msg, "leave --temperature and KEVO_TEMPERATURE unset"));
    assert_no_secret(msg);
    assert_int_equal(fake_server_request_count(&fs), 2);
    kevo_llm_provider_free(p);

    /* a configured one likewise */
    config_for(&cfg, &fs);
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    request_init(&req);
    assert_int_equal(kevo_llm_complete(p, &req, &resp), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "--temperature"));
    body = request_body(&fs, 2);
    assert_true(cJSON_GetObjectItem(body, "temperature")->valuedouble == 0.25);
    cJSON_Delete(body);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__max_completion_tokens_learnt_from_400(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"reject_params\":\"max_tokens\",\"content\":\"ok\","
                  "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    assert_int_equal(resp.attempts, 2); /* the refused try and the one that was answered */
    assert_int_equal(resp.http_status, 200);
    kevo_llm_response_clear(&resp);
    /* remembered: the next request goes straight to max_completion_tokens */
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_int_equal(resp.attempts, 1);
    kevo_llm_response_clear(&resp);
    assert_int_equal(fake_server_request_count(&fs), 3);
    cJSON *b0 = request_body(&fs, 0), *b1 = request_body(&fs, 1), *b2 = request_body(&fs, 2);
    assert_int_equal(cJSON_GetObjectItem(b0, "max_tokens")->valueint, 321);
    assert_null(cJSON_GetObjectItem(b0, "max_completion_tokens"));
    for (int i = 0; i < 2; i++) {
        cJSON *b = i ? b2 : b1;
        assert_null(cJSON_GetObjectItem(b, "max_tokens"));
        assert_int_equal(cJSON_GetObjectItem(b, "max_completion_tokens")->valueint, 321);
    }
    cJSON_Delete(b0);
    cJSON_Delete(b1);
    cJSON_Delete(b2);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__max_tokens_param_configured(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"reject_params\":\"max_tokens\",\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.max_tokens_param = KEVO_LLM_TOKENS_PARAM_MAX_COMPLETION_TOKENS;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_int_equal(resp.attempts, 1);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    cJSON *b = request_body(&fs, 0);
    assert_int_equal(cJSON_GetObjectItem(b, "max_completion_tokens")->valueint, 321);
    assert_null(cJSON_GetObjectItem(b, "max_tokens"));
    cJSON_Delete(b);

    /* max_tokens asked for by name: no switching, a hint instead */
    cfg.max_tokens_param = KEVO_LLM_TOKENS_PARAM_MAX_TOKENS;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    assert_int_equal(kevo_llm_complete(p, &req, &resp), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "Use 'max_completion_tokens' instead"));
    assert_non_null(strstr(kevo_error_last(), "--max-tokens-param max_completion_tokens"));
    assert_int_equal(fake_server_request_count(&fs), 2);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);

    assert_string_equal(kevo_llm_tokens_param_name(KEVO_LLM_TOKENS_PARAM_MAX_COMPLETION_TOKENS),
                        "max_completion_tokens");
    kevo_llm_tokens_param tp = KEVO_LLM_TOKENS_PARAM_AUTO;
    assert_int_equal(kevo_llm_tokens_param_parse(&tp, "max_tokens"), 0);
    assert_int_equal(tp, KEVO_LLM_TOKENS_PARAM_MAX_TOKENS);
    assert_int_equal(kevo_llm_tokens_param_parse(&tp, "max_new_tokens"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "max_completion_tokens"));
}

static void test_llm_openai__other_400_naming_max_tokens_is_not_a_switch(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"status\":400,\"body\":{\"error\":{\"message\":\"max_tokens is too large: "
                  "321. This model supports at most 100 completion tokens, whereas you provided "
                  "321.\",\"type\":\"invalid_request_error\",\"param\":\"max_tokens\","
                  "\"code\":null}}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "too large"));
    assert_null(strstr(kevo_error_last(), "--max-tokens-param"));
    assert_int_equal(fake_server_request_count(&fs), 1);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__reasoning_effort_sent_when_set(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs, "{\"content\":\"ok\"}\n", NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    cfg.reasoning_effort = KEVO_LLM_REASONING_HIGH;
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    kevo_llm_response_clear(&resp);
    cJSON *b = request_body(&fs, 0);
    assert_string_equal(cJSON_GetObjectItem(b, "reasoning_effort")->valuestring, "high");
    cJSON_Delete(b);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);

    kevo_llm_reasoning_effort e = KEVO_LLM_REASONING_DEFAULT;
    assert_int_equal(kevo_llm_reasoning_effort_parse(&e, "low"), 0);
    assert_int_equal(e, KEVO_LLM_REASONING_LOW);
    assert_string_equal(kevo_llm_reasoning_effort_name(KEVO_LLM_REASONING_MEDIUM), "medium");
    assert_int_equal(kevo_llm_reasoning_effort_parse(&e, "extreme"), KEVO_EINVAL);
}

static void test_llm_openai__length_retried_once_with_double_budget(void **state)
{
    fake_server fs;
    /* below 600 tokens the server cuts the kernel in half */
    START_OR_SKIP(&fs,
                  "{\"min_budget\":600,\"content\":\"```c\\nvoid relu(void){}\\n```\","
                  "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.failure);
    assert_string_equal(resp.content, "```c\nvoid relu(void){}\n```");
    assert_string_equal(resp.finish_reason, "stop");
    assert_int_equal(resp.attempts, 2);
    /* both answers were paid for */
    assert_int_equal(resp.tokens_prompt, 10);
    assert_int_equal(resp.tokens_completion, 14);
    assert_int_equal(fake_server_request_count(&fs), 2);
    cJSON *b0 = request_body(&fs, 0), *b1 = request_body(&fs, 1);
    assert_int_equal(cJSON_GetObjectItem(b0, "max_tokens")->valueint, 321);
    assert_int_equal(cJSON_GetObjectItem(b1, "max_tokens")->valueint, 642);
    cJSON_Delete(b0);
    cJSON_Delete(b1);
    kevo_llm_response_clear(&resp);
    /* the doubled budget is this request's, not the provider's */
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_int_equal(resp.attempts, 2);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__length_after_the_retry_is_a_clear_failure(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"content\":\"```c\\nvoid relu(const float *x\",\"finish_reason\":\"length\","
                  "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":300}}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.content);
    assert_non_null(resp.failure);
    assert_non_null(strstr(resp.failure, "cut off at the token limit"));
    assert_non_null(strstr(resp.failure, "raise --max-tokens"));
    assert_non_null(strstr(resp.failure, "max_tokens 321, then 642"));
    assert_string_equal(resp.finish_reason, "length");
    assert_int_equal(resp.tokens_completion, 600);
    assert_int_equal(resp.attempts, 2);
    assert_int_equal(fake_server_request_count(&fs), 2);
    assert_no_secret(resp.failure);
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__text_only_in_a_reasoning_field(void **state)
{
    fake_server fs;
    START_OR_SKIP(&fs,
                  "{\"content\":\"\",\"reasoning_content\":\"Let me think about relu...\"}\n"
                  "{\"repeat\":2,\"reasoning\":\"Vectorise? First the loop...\","
                  "\"finish_reason\":\"length\"}\n"
                  "{\"content\":\"ok\",\"reasoning_content\":\"easy\"}\n",
                  NULL);
    kevo_llm_config cfg;
    config_for(&cfg, &fs);
    kevo_provider *p = NULL;
    assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), 0);
    kevo_llm_request req;
    request_init(&req);
    kevo_llm_response resp;

    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_null(resp.content);
    assert_non_null(strstr(resp.failure, "only in message.reasoning_content"));
    assert_non_null(strstr(resp.failure, "raise --max-tokens"));
    assert_int_equal(resp.attempts, 1);      /* finished ("stop"): no retry */
    assert_true(resp.tokens_completion > 0); /* the thinking was paid for */
    kevo_llm_response_clear(&resp);

    /* out of tokens while thinking: the one retry with double the budget, then the failure */
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_non_null(strstr(resp.failure, "only in message.reasoning "));
    assert_non_null(strstr(resp.failure, "ran out of tokens thinking"));
    assert_non_null(strstr(resp.failure, "then 642"));
    assert_int_equal(resp.attempts, 2);
    kevo_llm_response_clear(&resp);

    /* content beside reasoning is an answer */
    assert_int_equal(kevo_llm_complete(p, &req, &resp), 0);
    assert_string_equal(resp.content, "ok");
    kevo_llm_response_clear(&resp);
    kevo_llm_provider_free(p);
    fake_server_stop(&fs);
}

static void test_llm_openai__settings_from_the_environment(void **state)
{
    kevo_llm_config cfg;
    setenv("KEVO_TEMPERATURE", "0.3", 1);
    setenv("KEVO_MAX_TOKENS_PARAM", "max_completion_tokens", 1);
    setenv("KEVO_REASONING_EFFORT", "medium", 1);
    kevo_llm_config_init(&cfg);
    kevo_llm_config_apply_env(&cfg);
    assert_true(cfg.temperature == 0.3);
    assert_int_equal(cfg.max_tokens_param, KEVO_LLM_TOKENS_PARAM_MAX_COMPLETION_TOKENS);
    assert_int_equal(cfg.reasoning_effort, KEVO_LLM_REASONING_MEDIUM);

    /* flags win */
    kevo_llm_config_init(&cfg);
    cfg.temperature = 0;
    cfg.max_tokens_param = KEVO_LLM_TOKENS_PARAM_MAX_TOKENS;
    cfg.reasoning_effort = KEVO_LLM_REASONING_LOW;
    kevo_llm_config_apply_env(&cfg);
    assert_true(cfg.temperature == 0);
    assert_int_equal(cfg.max_tokens_param, KEVO_LLM_TOKENS_PARAM_MAX_TOKENS);
    assert_int_equal(cfg.reasoning_effort, KEVO_LLM_REASONING_LOW);

    /* values that do not parse are refused by the provider, naming the variable */
    const char *const bad[][2] = {{"KEVO_TEMPERATURE", "warm"},
                                  {"KEVO_MAX_TOKENS_PARAM", "max_new_tokens"},
                                  {"KEVO_REASONING_EFFORT", "extreme"}};
    for (size_t i = 0; i < 3; i++) {
        unsetenv("KEVO_TEMPERATURE");
        unsetenv("KEVO_MAX_TOKENS_PARAM");
        unsetenv("KEVO_REASONING_EFFORT");
        setenv(bad[i][0], bad[i][1], 1);
        kevo_llm_config_init(&cfg);
        cfg.api_base = "http://127.0.0.1:9/v1";
        cfg.model = "m";
        kevo_llm_config_apply_env(&cfg);
        kevo_provider *p = NULL;
        assert_int_equal(kevo_llm_provider_new(&p, "openai", &cfg), KEVO_EINVAL);
        assert_null(p);
        assert_non_null(strstr(kevo_error_last(), bad[i][0]));
        assert_non_null(strstr(kevo_error_last(), bad[i][1]));
    }
    unsetenv("KEVO_TEMPERATURE");
    unsetenv("KEVO_MAX_TOKENS_PARAM");
    unsetenv("KEVO_REASONING_EFFORT");
}

/* The parser on its own (no HTTP): shapes servers really send. */
static void test_llm_openai__parse_shapes(void **state)
{
    kevo_llm_response r = {0};
    const char *parts =
        "{\"choices\":[{\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
        "{\"type\":\"text\",\"text\":\"b\"}]},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":3}}";
    assert_int_equal(kevo_llm_openai_parse(&r, parts, strlen(parts), NULL), 0);
    assert_string_equal(r.content, "ab");
    assert_int_equal(r.tokens_prompt, 3);
    assert_true(r.tokens_estimated); /* completion_tokens missing */
    kevo_llm_response_clear(&r);

    const char *legacy = "{\"choices\":[{\"text\":\"old style\"}]}";
    assert_int_equal(kevo_llm_openai_parse(&r, legacy, strlen(legacy), NULL), 0);
    assert_string_equal(r.content, "old style");
    kevo_llm_response_clear(&r);

    const char *refusal = "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"no.\"}}]}";
    assert_int_equal(kevo_llm_openai_parse(&r, refusal, strlen(refusal), NULL), 0);
    assert_non_null(strstr(r.failure, "refused: no."));
    kevo_llm_response_clear(&r);

    assert_int_equal(kevo_llm_openai_parse(&r, "[1,2]", 5, NULL), 0);
    assert_non_null(strstr(r.failure, "not a JSON object"));
    kevo_llm_response_clear(&r);

    assert_int_equal(kevo_llm_openai_parse(&r, "", 0, NULL), 0);
    assert_non_null(strstr(r.failure, "empty body"));
    kevo_llm_response_clear(&r);

    const char *cut = "{\"choices\":[{\"message\":{\"content\":\"void relu(\"},"
                      "\"finish_reason\":\"length\"}]}";
    assert_int_equal(kevo_llm_openai_parse(&r, cut, strlen(cut), NULL), 0);
    assert_null(r.content);
    assert_non_null(strstr(r.failure, "cut off"));
    assert_true(r.tokens_completion > 0); /* the cut text was paid for */
    kevo_llm_response_clear(&r);

    const char *thought = "{\"choices\":[{\"message\":{\"content\":null,"
                          "\"reasoning_content\":[{\"type\":\"text\",\"text\":\"hmm\"}]}}]}";
    assert_int_equal(kevo_llm_openai_parse(&r, thought, strlen(thought), NULL), 0);
    assert_non_null(strstr(r.failure, "message.reasoning_content (3 bytes"));
    kevo_llm_response_clear(&r);

    const char *neg = "{\"choices\":[{\"message\":{\"content\":\"x\"}}],"
                      "\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":1e300}}";
    assert_int_equal(kevo_llm_openai_parse(&r, neg, strlen(neg), NULL), 0);
    assert_true(r.tokens_estimated);
    assert_true(r.tokens_completion >= 0 && r.tokens_completion < 10);
    kevo_llm_response_clear(&r);
}

static void test_llm_openai__redact(void **state)
{
    char s[] = "a SECRET b SECRETSECRET c";
    kevo_llm_redact(s, "SECRET");
    assert_string_equal(s, "a *** b ****** c");
    char t[] = "xyx";
    kevo_llm_redact(t, "x");
    assert_string_equal(t, "*y*");
    kevo_llm_redact(t, NULL);
    kevo_llm_redact(t, "");
    assert_string_equal(t, "*y*");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_openai__success_with_usage),
        cmocka_unit_test(test_llm_openai__request_overrides_config),
        cmocka_unit_test(test_llm_openai__missing_usage_is_estimated),
        cmocka_unit_test(test_llm_openai__retry_after_429_then_success),
        cmocka_unit_test(test_llm_openai__retry_after_is_capped),
        cmocka_unit_test(test_llm_openai__server_error_then_success),
        cmocka_unit_test(test_llm_openai__dropped_connection_is_retried),
        cmocka_unit_test(test_llm_openai__broken_json_is_a_failure_not_an_error),
        cmocka_unit_test(test_llm_openai__empty_content_is_a_failure),
        cmocka_unit_test(test_llm_openai__exhausted_retries_is_a_clear_error),
        cmocka_unit_test(test_llm_openai__timeout),
        cmocka_unit_test(test_llm_openai__connection_refused),
        cmocka_unit_test(test_llm_openai__unauthorized_is_not_retried_and_redacted),
        cmocka_unit_test(test_llm_openai__key_only_in_authorization_header),
        cmocka_unit_test(test_llm_openai__no_key_sends_no_authorization),
        cmocka_unit_test(test_llm_openai__base_without_v1_and_trailing_slash),
        cmocka_unit_test(test_llm_openai__stop_flag_interrupts_backoff),
        cmocka_unit_test(test_llm_openai__config_errors),
        cmocka_unit_test(test_llm_openai__userinfo_not_shown),
        cmocka_unit_test(test_llm_openai__no_temperature_unless_configured),
        cmocka_unit_test(test_llm_openai__max_completion_tokens_learnt_from_400),
        cmocka_unit_test(test_llm_openai__max_tokens_param_configured),
        cmocka_unit_test(test_llm_openai__other_400_naming_max_tokens_is_not_a_switch),
        cmocka_unit_test(test_llm_openai__reasoning_effort_sent_when_set),
        cmocka_unit_test(test_llm_openai__length_retried_once_with_double_budget),
        cmocka_unit_test(test_llm_openai__length_after_the_retry_is_a_clear_failure),
        cmocka_unit_test(test_llm_openai__text_only_in_a_reasoning_field),
        cmocka_unit_test(test_llm_openai__settings_from_the_environment),
        cmocka_unit_test(test_llm_openai__parse_shapes),
        cmocka_unit_test(test_llm_openai__redact),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
