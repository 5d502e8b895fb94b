/*
 * tests/unit/test_llm_replay.c - the recorder and the "replay" provider:
 * recording then replaying reproduces contents, failures, errors and token
 * counts; matching is by tag in order; missing and malformed records are
 * clear errors; a killed recorder's partial last line is tolerated; the
 * registry takes providers from outside src/llm (a scripted one here, as
 * the built-in generator will do); and an end-to-end record of the openai
 * provider against the fake server replays offline without the API key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fake_llm_server.h"
#include "kevo/llm.h"
#include "kevo/sys/provider.h"

#include <math.h>
#include <pthread.h>

/* ---- a scripted provider, written against the public vtable ---------- */

typedef struct scripted_ctx {
    pthread_mutex_t lock;
    int calls;
} scripted_ctx;

static int scripted_complete(kevo_provider *p, const kevo_llm_request *req, kevo_llm_response *resp)
{
    scripted_ctx *c = p->ctx;
    pthread_mutex_lock(&c->lock);
    int n = ++c->calls;
    pthread_mutex_unlock(&c->lock);
    const char *last = req->messages[req->n_messages - 1].content;
    if (strstr(last, "ERROR"))
        return kevo_error_set(KEVO_ETIMEOUT, "scripted: the model timed out on call %d", n);
    if (strstr(last, "BROKEN")) {
        resp->failure = strdup("scripted: the reply is not JSON");
        resp->tokens_prompt = 11;
        resp->tokens_estimated = true;
        return 0;
    }
    kevo_buf b = {0};
    kevo_buf_printf(&b, "reply %d to \"%s\"\n```c\nvoid k(void) {}\n```", n, last);
    resp->content = kevo_buf_detach(&b);
    resp->finish_reason = strdup(n % 2 ? "stop" : "length");
    resp->model = strdup("scripted-1");
    resp->tokens_prompt = 100 + n;
    resp->tokens_completion = 10 + n;
    resp->tokens_estimated = n % 3 == 0;
    resp->latency_s = 0.25 * n;
    resp->http_status = 200;
    return 0;
}

static void scripted_free(kevo_provider *p)
{
    scripted_ctx *c = p->ctx;
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int scripted_new(kevo_provider **out, const kevo_llm_config *cfg)
{
    kevo_provider *p = calloc(1, sizeof(*p));
    scripted_ctx *c = calloc(1, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    p->version = KEVO_PROVIDER_VERSION;
    p->name = "scripted";
    p->ctx = c;
    p->complete = scripted_complete;
    p->free = scripted_free;
    *out = p;
    return 0;
}

/* ---- helpers ---------------------------------------------------------- */

static char *tmp_dir;

static int setup(void **state)
{
    assert_int_equal(kevo_mkdtemp(&tmp_dir, "kevo-test-replay-"), 0);
    assert_int_equal(kevo_llm_provider_register("scripted", scripted_new), 0);
    return 0;
}

static int teardown(void **state)
{
    kevo_rmtree(tmp_dir);
    free(tmp_dir);
    return 0;
}

static char *tmp_path(const char *name)
{
    return kevo_path_join(tmp_dir, name);
}

static kevo_provider *replay_of(const char *path, bool strict)
{
    kevo_llm_config cfg;
    kevo_llm_config_init(&cfg);
    cfg.replay_path = path;
    cfg.replay_strict = strict;
    kevo_provider *p = NULL;
    int rc = kevo_llm_provider_new(&p, "replay", &cfg);
    if (rc < 0)
        print_error("replay: %s\n", kevo_error_last());
    assert_int_equal(rc, 0);
    return p;
}

static int ask(kevo_provider *p, const char *tag, const char *prompt, kevo_llm_response *resp)
{
    kevo_llm_message m[2] = {{KEVO_LLM_SYSTEM, "system prompt"}, {KEVO_LLM_USER, prompt}};
    kevo_llm_request req;
    kevo_llm_request_init(&req);
    req.messages = m;
    req.n_messages = 2;
    req.tag = tag;
    return kevo_llm_complete(p, &req, resp);
}

static void assert_same_response(const kevo_llm_response *a, const kevo_llm_response *b)
{
    if (a->content)
        assert_string_equal(a->content, b->content);
    else
        assert_null(b->content);
    if (a->failure)
        assert_string_equal(a->failure, b->failure);
    else
        assert_null(b->failure);
    if (a->finish_reason)
        assert_string_equal(a->finish_reason, b->finish_reason);
    assert_int_equal(a->tokens_prompt, b->tokens_prompt);
    assert_int_equal(a->tokens_completion, b->tokens_completion);
    assert_int_equal(a->tokens_estimated, b->tokens_estimated);
    /* recorded to the microsecond */
    assert_true(fabs(a->latency_s - b->latency_s) <= 1e-6);
}

/* ---- tests ------------------------------------------------------------ */

static void test_llm_replay__record_then_replay_reproduces(void **state)
{
    char *path = tmp_path("record.jsonl");
    kevo_provider *inner = NULL, *rec = NULL, *rep = NULL;
    kevo_llm_response got[6], again;
    int rcs[6];
    static const char *const tags[6] = {
        "task=relu iter=1 stage=draft", "task=gelu iter=1 stage=draft",
        "task=relu iter=1 stage=draft", "task=relu iter=2 stage=refine",
        "task=gelu iter=1 stage=draft", "task=relu iter=1 stage=draft"};
    static const char *const prompts[6] = {"write relu",    "write gelu",   "again relu",
                                           "BROKEN please", "ERROR please", "third relu"};

    assert_int_equal(kevo_llm_provider_new(&inner, "scripted", NULL), 0);
    assert_int_equal(kevo_llm_recorder_wrap(&rec, inner, path), 0);
    for (int i = 0; i < 6; i++)
        rcs[i] = ask(rec, tags[i], prompts[i], &got[i]);
    assert_int_equal(rcs[4], KEVO_ETIMEOUT);
    assert_non_null(strstr(kevo_error_last(), "timed out on call 5")); /* passed through */
    assert_non_null(got[3].failure);
    kevo_llm_provider_free(rec); /* frees inner too */

    rep = replay_of(path, true);
    assert_string_equal(kevo_llm_provider_name(rep), "replay");
    /* a different order across tags, the same order within each tag */
    static const int order[6] = {1, 0, 3, 2, 5, 4};
    for (int k = 0; k < 6; k++) {
        int i = order[k];
        int rc = ask(rep, tags[i], prompts[i], &again);
        assert_int_equal(rc, rcs[i]);
        if (rc == 0) {
            assert_same_response(&got[i], &again);
        } else {
            assert_non_null(strstr(kevo_error_last(), "timed out on call 5"));
            assert_non_null(strstr(kevo_error_last(), "replayed from"));
        }
        kevo_llm_response_clear(&again);
    }
    /* the recording is used up */
    assert_int_equal(ask(rep, tags[0], "one more", &again), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "task=relu iter=1 stage=draft"));
    assert_non_null(strstr(kevo_error_last(), "request #4"));
    assert_non_null(strstr(kevo_error_last(), "has 3"));
    assert_non_null(strstr(kevo_error_last(), path));

    for (int i = 0; i < 6; i++)
        kevo_llm_response_clear(&got[i]);
    kevo_llm_provider_free(rep);
    free(path);
}

static void test_llm_replay__handwritten_file_and_defaults(void **state)
{
    char *path = tmp_path("hand.jsonl");
    const char *text =
        "\n"
        "{\"tag\":\"a\",\"response\":{\"content\":\"first a\",\"usage\":{\"prompt_tokens\":5,"
        "\"completion_tokens\":6}}}\n"
        "{\"tag\":\"b\",\"response\":{\"content\":\"only b\"}}\n"
        "   \n"
        "{\"tag\":\"a\",\"response\":{\"content\":\"second a\",\"usage\":{\"prompt_tokens\":7,"
        "\"completion_tokens\":8}}}\n"
        "{\"tag\":\"\",\"response\":{}}\n";
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
    kevo_provider *rep = replay_of(path, false);
    kevo_llm_response r;

    assert_int_equal(ask(rep, "b", "anything", &r), 0);
    assert_string_equal(r.content, "only b");
    assert_true(r.tokens_estimated); /* no usage recorded: estimated */
    assert_true(r.tokens_prompt > 0 && r.tokens_completion > 0);
    kevo_llm_response_clear(&r);

    assert_int_equal(ask(rep, "a", "anything", &r), 0);
    assert_string_equal(r.content, "first a");
    assert_int_equal(r.tokens_prompt, 5);
    assert_false(r.tokens_estimated);
    kevo_llm_response_clear(&r);

    assert_int_equal(ask(rep, "a", "anything", &r), 0);
    assert_string_equal(r.content, "second a");
    assert_int_equal(r.tokens_completion, 8);
    kevo_llm_response_clear(&r);

    assert_int_equal(ask(rep, NULL, "anything", &r), 0); /* NULL tag == "" */
    assert_null(r.content);
    assert_non_null(strstr(r.failure, "no content"));
    kevo_llm_response_clear(&r);

    assert_int_equal(ask(rep, "c", "anything", &r), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "tag 'c'"));
    assert_non_null(strstr(kevo_error_last(), "has 0"));
    kevo_llm_provider_free(rep);
    free(path);
}

static void test_llm_replay__killed_recording_and_bad_lines(void **state)
{
    char *path = tmp_path("killed.jsonl");
    /* the last line was cut off by a kill: skipped, the rest replays */
    const char *text = "{\"tag\":\"a\",\"response\":{\"content\":\"kept\"}}\n"
                       "{\"tag\":\"a\",\"response\":{\"content\":\"cut of";
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
    kevo_provider *rep = replay_of(path, false);
    kevo_llm_response r;
    assert_int_equal(ask(rep, "a", "x", &r), 0);
    assert_string_equal(r.content, "kept");
    kevo_llm_response_clear(&r);
    assert_int_equal(ask(rep, "a", "x", &r), KEVO_ENOTFOUND);
    kevo_llm_provider_free(rep);

    /* a bad line in the middle is an error naming the line */
    const char *bad = "{\"tag\":\"a\",\"response\":{\"content\":\"ok\"}}\n"
                      "{\"tag\":\"a\",\"response\":\n"
                      "{\"tag\":\"a\",\"response\":{\"content\":\"ok\"}}\n";
    assert_int_equal(kevo_file_write(path, bad, strlen(bad)), 0);
    kevo_llm_config cfg;
    kevo_llm_config_init(&cfg);
    cfg.replay_path = path;
    rep = (kevo_provider *)1;
    assert_int_equal(kevo_llm_provider_new(&rep, "replay", &cfg), KEVO_EINVAL);
    assert_null(rep);
    assert_non_null(strstr(kevo_error_last(), ":2:"));

    const char *no_tag = "{\"response\":{\"content\":\"ok\"}}\n";
    assert_int_equal(kevo_file_write(path, no_tag, strlen(no_tag)), 0);
    assert_int_equal(kevo_llm_provider_new(&rep, "replay", &cfg), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "tag"));

    const char *no_response = "{\"tag\":\"a\"}\n";
    assert_int_equal(kevo_file_write(path, no_response, strlen(no_response)), 0);
    assert_int_equal(kevo_llm_provider_new(&rep, "replay", &cfg), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "response"));

    cfg.replay_path = "/nonexistent/kevo/recording.jsonl";
    assert_int_equal(kevo_llm_provider_new(&rep, "replay", &cfg), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "/nonexistent/kevo/recording.jsonl"));
    cfg.replay_path = NULL;
    assert_int_equal(kevo_llm_provider_new(&rep, "replay", &cfg), KEVO_EINVAL);
    free(path);
}

static void test_llm_replay__strict_mode_checks_messages(void **state)
{
    char *path = tmp_path("strict.jsonl");
    kevo_provider *inner = NULL, *rec = NULL;
    kevo_llm_response r;
    unlink(path);
    assert_int_equal(kevo_llm_provider_new(&inner, "scripted", NULL), 0);
    assert_int_equal(kevo_llm_recorder_wrap(&rec, inner, path), 0);
    assert_int_equal(ask(rec, "t", "the prompt", &r), 0);
    kevo_llm_response_clear(&r);
    assert_int_equal(ask(rec, "t", "the second prompt", &r), 0);
    kevo_llm_response_clear(&r);
    kevo_llm_provider_free(rec);

    kevo_provider *strict = replay_of(path, true);
    assert_int_equal(ask(strict, "t", "the prompt", &r), 0);
    kevo_llm_response_clear(&r);
    assert_int_equal(ask(strict, "t", "a changed prompt", &r), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "differs"));
    assert_non_null(strstr(kevo_error_last(), "message 1"));
    kevo_llm_provider_free(strict);

    kevo_provider *loose = replay_of(path, false);
    assert_int_equal(ask(loose, "t", "whatever", &r), 0);
    assert_non_null(strstr(r.content, "the prompt"));
    kevo_llm_response_clear(&r);
    kevo_llm_provider_free(loose);
    free(path);
}

typedef struct worker_arg {
    kevo_provider *p;
    int id;
    int failures;
} worker_arg;

static void *worker(void *varg)
{
    worker_arg *a = varg;
    char tag[32];
    snprintf(tag, sizeof(tag), "worker=%d", a->id);
    for (int i = 0; i < 25; i++) {
        kevo_llm_response r;
        if (ask(a->p, tag, "parallel", &r) < 0)
            a->failures++;
        kevo_llm_response_clear(&r);
    }
    return NULL;
}

static void test_llm_replay__parallel_recording_keeps_whole_lines(void **state)
{
    char *path = tmp_path("parallel.jsonl");
    kevo_provider *inner = NULL, *rec = NULL;
    unlink(path);
    assert_int_equal(kevo_llm_provider_new(&inner, "scripted", NULL), 0);
    assert_int_equal(kevo_llm_recorder_wrap(&rec, inner, path), 0);
    pthread_t t[4];
    worker_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){rec, i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    kevo_llm_provider_free(rec);

    char *text = NULL;
    assert_int_equal(kevo_file_read(&text, NULL, path), 0);
    int lines = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(l);
        assert_non_null(o);
        cJSON_Delete(o);
        lines++;
    }
    assert_int_equal(lines, 100);
    free(text);

    kevo_provider *rep = replay_of(path, false);
    for (int i = 0; i < 4; i++) {
        char tag[32];
        snprintf(tag, sizeof(tag), "worker=%d", i);
        for (int k = 0; k < 25; k++) {
            kevo_llm_response r;
            assert_int_equal(ask(rep, tag, "parallel", &r), 0);
            kevo_llm_response_clear(&r);
        }
    }
    kevo_llm_provider_free(rep);
    free(path);
}

static void test_llm_replay__recorder_errors(void **state)
{
    kevo_provider *inner = NULL, *rec = (kevo_provider *)1;
    assert_int_equal(kevo_llm_provider_new(&inner, "scripted", NULL), 0);
    assert_int_equal(kevo_llm_recorder_wrap(&rec, inner, "/nonexistent/dir/rec.jsonl"), KEVO_EIO);
    assert_null(rec);
    assert_non_null(strstr(kevo_error_last(), "/nonexistent/dir/rec.jsonl"));
    kevo_llm_provider_free(inner); /* still ours after a failed wrap */
    assert_int_equal(kevo_llm_recorder_wrap(&rec, NULL, "x"), KEVO_EINVAL);
}

static void test_llm_replay__registry(void **state)
{
    char names[256];
    kevo_llm_provider_names(names, sizeof(names));
    assert_string_equal(names, "openai, replay, scripted");
    /* a re-registration replaces, it does not duplicate */
    assert_int_equal(kevo_llm_provider_register("scripted", scripted_new), 0);
    kevo_llm_provider_names(names, sizeof(names));
    assert_string_equal(names, "openai, replay, scripted");
    assert_int_equal(kevo_llm_provider_register(NULL, scripted_new), KEVO_EINVAL);
    kevo_provider *p = (kevo_provider *)1;
    assert_int_equal(kevo_llm_provider_new(&p, "nope", NULL), KEVO_ENOTFOUND);
    assert_null(p);
    assert_non_null(strstr(kevo_error_last(), "scripted"));
    kevo_llm_provider_free(NULL);
    kevo_llm_response_clear(NULL);
}

static void test_llm_replay__complete_checks_its_inputs(void **state)
{
    kevo_provider *p = NULL;
    kevo_llm_response r;
    kevo_llm_request req;
    assert_int_equal(kevo_llm_provider_new(&p, "scripted", NULL), 0);
    kevo_llm_request_init(&req);
    assert_int_equal(kevo_llm_complete(p, &req, &r), KEVO_EINVAL); /* no messages */
    kevo_llm_message m = {KEVO_LLM_USER, NULL};
    req.messages = &m;
    req.n_messages = 1;
    assert_int_equal(kevo_llm_complete(p, &req, &r), KEVO_EINVAL); /* NULL content */
    kevo_provider old = *p;
    old.version = 0;
    m.content = "hi";
    assert_int_equal(kevo_llm_complete(&old, &req, &r), KEVO_EINVAL); /* unversioned */
    assert_int_equal(kevo_llm_complete(p, &req, &r), 0);
    assert_true(r.elapsed_s > 0 && r.attempts == 1);
    kevo_llm_response_clear(&r);
    /* no count_tokens method: the estimate is used */
    assert_int_equal(kevo_llm_count_tokens(p, "int x = 1;\n"),
                     kevo_llm_tokens_estimate("int x = 1;\n", 11));
    kevo_llm_provider_free(p);

    kevo_llm_role role;
    assert_int_equal(kevo_llm_role_parse(&role, "assistant"), 0);
    assert_int_equal(role, KEVO_LLM_ASSISTANT);
    assert_int_equal(kevo_llm_role_parse(&role, "tool"), KEVO_EINVAL);
    assert_string_equal(kevo_llm_role_name(KEVO_LLM_SYSTEM), "system");
}

static void test_llm_replay__token_estimates(void **state)
{
    /* ~4.7 bytes per token for prose, ~3.2 for code */
    const char *prose = "The quick brown fox jumps over the lazy dog and keeps running far away.";
    int64_t tp = kevo_llm_tokens_estimate(prose, strlen(prose));
    assert_true(tp >= 14 && tp <= 17);
    const char *code = "for (int i = 0; i < n; i++) {\n    y[i] = x[i] > 0 ? x[i] : 0;\n}\n";
    int64_t tc = kevo_llm_tokens_estimate(code, strlen(code));
    assert_int_equal(tc, (int64_t)((strlen(code) + 3.19) / 3.2));
    assert_int_equal(kevo_llm_tokens_estimate("", 0), 0);
    assert_int_equal(kevo_llm_tokens_estimate("a", 1), 1);
}

static void test_llm_replay__record_openai_then_replay_offline(void **state)
{
    fake_server fs;
    if (fake_server_start(&fs,
                          "{\"content\":\"```c\\nvoid relu(float *y) {}\\n```\","
                          "\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":9}}\n"
                          "{\"content\":\"second\"}\n",
                          NULL) < 0)
        skip();
    setenv("KEVO_API_KEY", "sk-replay-test-SECRET", 1);
    char *path = tmp_path("openai.jsonl");
    unlink(path);
    kevo_llm_config cfg;
    kevo_llm_config_init(&cfg);
    cfg.api_base = fs.base;
    cfg.model = "m";
    cfg.backoff_initial_s = 0.01;
    kevo_provider *inner = NULL, *rec = NULL;
    assert_int_equal(kevo_llm_provider_new(&inner, "openai", &cfg), 0);
    assert_int_equal(kevo_llm_recorder_wrap(&rec, inner, path), 0);
    kevo_llm_response a, b;
    assert_int_equal(ask(rec, "task=relu iter=1", "p1", &a), 0);
    assert_int_equal(ask(rec, "task=relu iter=2", "p2", &b), 0);
    kevo_llm_provider_free(rec);
    fake_server_stop(&fs); /* replay needs no server */

    char *text = NULL;
    assert_int_equal(kevo_file_read(&text, NULL, path), 0);
    assert_null(strstr(text, "sk-replay-test-SECRET"));
    free(text);

    unsetenv("KEVO_API_KEY");
    kevo_provider *rep = replay_of(path, true);
    kevo_llm_response r;
    assert_int_equal(ask(rep, "task=relu iter=1", "p1", &r), 0);
    assert_same_response(&a, &r);
    assert_int_equal(r.tokens_prompt, 31);
    assert_false(r.tokens_estimated);
    kevo_llm_response_clear(&r);
    assert_int_equal(ask(rep, "task=relu iter=2", "p2", &r), 0);
    assert_same_response(&b, &r);
    assert_true(r.tokens_estimated);
    kevo_llm_response_clear(&r);
    kevo_llm_provider_free(rep);
    kevo_llm_response_clear(&a);
    kevo_llm_response_clear(&b);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_replay__record_then_replay_reproduces),
        cmocka_unit_test(test_llm_replay__handwritten_file_and_defaults),
        cmocka_unit_test(test_llm_replay__killed_recording_and_bad_lines),
        cmocka_unit_test(test_llm_replay__strict_mode_checks_messages),
        cmocka_unit_test(test_llm_replay__parallel_recording_keeps_whole_lines),
        cmocka_unit_test(test_llm_replay__recorder_errors),
        cmocka_unit_test(test_llm_replay__registry),
        cmocka_unit_test(test_llm_replay__complete_checks_its_inputs),
        cmocka_unit_test(test_llm_replay__token_estimates),
        cmocka_unit_test(test_llm_replay__record_openai_then_replay_offline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
