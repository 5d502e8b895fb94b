/*
 * tests/unit/test_eval_result.c - the eval result's one JSON form
 * (kevo_eval_result_json) and its gates array alone
 * (kevo_eval_result_gates_json), written against include/kevo/verify.h:
 * the gates array must be the very bytes a caller got by parsing the whole
 * object and printing its "gates" member, messages one line each, latency
 * and roofline null or an object (the roofline's fraction null without a
 * bound), and kevo_eval_result_clear. No task folders, no
 * kernels.
 */
#include "kevo/verify.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

/* A result as the gates leave one: two gates, multi-line messages with an
 * empty line and no final newline, odd characters, latency measured. */
static void sample(kevo_eval_result *r)
{
    memset(r, 0, sizeof(*r));
    r->verdict = KEVO_VERDICT_INCORRECT;
    r->ngates = 2;
    r->gates[0] = (kevo_gate){.name = "anti-hack", .ran = true, .ok = true, .seconds = 0.125};
    kevo_buf_puts(&r->gates[0].messages, "line 3: \"quoted\"\ttab\n\nlast without newline");
    r->gates[1] = (kevo_gate){.name = "compile", .ran = true, .ok = false, .seconds = 1.0 / 3};
    kevo_buf_puts(&r->gates[1].messages, "built in 0.33 s\n");
    r->feedback = strdup("Wrong results on sizes n=4, seed 1:\nüber");
    r->has_latency = true;
    r->latency = (kevo_latency){.candidate_us = 12.5, .reference_us = 25.0 / 3, .speedup = 0.6,
                                .candidate_samples = 10, .reference_samples = 11};
    r->has_roofline = true;
    r->roofline = (kevo_roofline){.gbs = 8, .gflops = 1, .intensity = 0.125, .have_bound = true,
                                  .bw_gbs = 25, .bound_gflops = 3.125, .bound_gbs = 25,
                                  .fraction = 0.32, .memory_bound = true};
    r->seconds = 2.718281828459045;
}

/* What src/agent/run.c did before kevo_eval_result_gates_json existed. */
static char *gates_by_reparse(const kevo_eval_result *r)
{
    char *full = NULL;
    assert_int_equal(kevo_eval_result_json(&full, r, NULL, false), 0);
    cJSON *o = cJSON_Parse(full);
    free(full);
    assert_non_null(o);
    char *g = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "gates"));
    cJSON_Delete(o);
    return g;
}

static void test_verify__gates_json_same_bytes_as_reparse(void **state)
{
    (void)state;
    kevo_eval_result r;
    sample(&r);
    char *want = gates_by_reparse(&r), *got = NULL;
    assert_int_equal(kevo_eval_result_gates_json(&got, &r), 0);
    assert_string_equal(got, want);
    free(want);
    free(got);
    kevo_eval_result_clear(&r);
}

static void test_verify__gates_json_lines(void **state)
{
    (void)state;
    kevo_eval_result r;
    sample(&r);
    char *got = NULL;
    assert_int_equal(kevo_eval_result_gates_json(&got, &r), 0);
    cJSON *a = cJSON_Parse(got);
    assert_true(cJSON_IsArray(a));
    assert_int_equal(cJSON_GetArraySize(a), 2);
    cJSON *g0 = cJSON_GetArrayItem(a, 0);
    assert_string_equal(cJSON_GetObjectItem(g0, "name")->valuestring, "anti-hack");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(g0, "ok")));
    cJSON *m = cJSON_GetObjectItem(g0, "messages");
    assert_int_equal(cJSON_GetArraySize(m), 2); /* the empty line is dropped */
    assert_string_equal(cJSON_GetArrayItem(m, 0)->valuestring, "line 3: \"quoted\"\ttab");
    assert_string_equal(cJSON_GetArrayItem(m, 1)->valuestring, "last without newline");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "ok")));
    cJSON_Delete(a);
    free(got);
    kevo_eval_result_clear(&r);
}

static void test_verify__result_json_fields(void **state)
{
    (void)state;
    kevo_eval_result r;
    sample(&r);
    char *text = NULL;
    assert_int_equal(kevo_eval_result_json(&text, &r, NULL, true), 0);
    cJSON *o = cJSON_Parse(text);
    assert_non_null(o);
    assert_string_equal(cJSON_GetObjectItem(o, "task")->valuestring, "");
    assert_string_equal(cJSON_GetObjectItem(o, "verdict")->valuestring, "incorrect");
    assert_string_equal(cJSON_GetObjectItem(o, "feedback")->valuestring, r.feedback);
    cJSON *l = cJSON_GetObjectItem(o, "latency");
    assert_true(cJSON_IsObject(l));
    assert_int_equal(cJSON_GetObjectItem(l, "reference_samples")->valueint, 11);
    assert_true(cJSON_GetObjectItem(l, "reference_us")->valuedouble == 25.0 / 3);
    assert_true(cJSON_GetObjectItem(o, "seconds")->valuedouble == 2.718281828459045);
    cJSON *rl = cJSON_GetObjectItem(o, "roofline");
    assert_true(cJSON_IsObject(rl));
    assert_true(cJSON_GetObjectItem(rl, "fraction")->valuedouble == 0.32);
    assert_true(cJSON_GetObjectItem(rl, "bound_gbs")->valuedouble == 25);
    assert_string_equal(cJSON_GetObjectItem(rl, "bottleneck")->valuestring, "memory");
    /* key order is part of the contract a person reads */
    const char *keys[] = {"task", "verdict", "gates", "feedback", "latency", "roofline",
                          "seconds"};
    int i = 0;
    for (cJSON *k = o->child; k; k = k->next, i++)
        assert_string_equal(k->string, keys[i]);
    assert_int_equal(i, 7);
    cJSON_Delete(o);
    free(text);
    /* without peaks or known flops: the achieved rates, no fraction */
    r.roofline.have_bound = false;
    assert_int_equal(kevo_eval_result_json(&text, &r, NULL, false), 0);
    o = cJSON_Parse(text);
    rl = cJSON_GetObjectItem(o, "roofline");
    assert_true(cJSON_GetObjectItem(rl, "gbs")->valuedouble == 8);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(rl, "fraction")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(rl, "bottleneck")));
    cJSON_Delete(o);
    free(text);
    kevo_eval_result_clear(&r);
}

static void test_verify__result_json_empty(void **state)
{
    (void)state;
    kevo_eval_result r = {0};
    char *text = NULL, *gates = NULL;
    assert_int_equal(kevo_eval_result_json(&text, &r, NULL, false), 0);
    assert_string_equal(text, "{\"task\":\"\",\"verdict\":\"correct\",\"gates\":[],"
                              "\"feedback\":\"\",\"latency\":null,\"roofline\":null,\"seconds\":0}");
    assert_int_equal(kevo_eval_result_gates_json(&gates, &r), 0);
    assert_string_equal(gates, "[]");
    free(text);
    free(gates);
}

static void test_verify__result_clear(void **state)
{
    (void)state;
    kevo_eval_result_clear(NULL);
    kevo_eval_result r;
    sample(&r);
    kevo_eval_result_clear(&r);
    assert_int_equal(r.ngates, 0);
    assert_null(r.feedback);
    assert_false(r.has_latency);
    kevo_eval_result_clear(&r); /* twice is fine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify__gates_json_same_bytes_as_reparse),
        cmocka_unit_test(test_verify__gates_json_lines),
        cmocka_unit_test(test_verify__result_json_fields),
        cmocka_unit_test(test_verify__result_json_empty),
        cmocka_unit_test(test_verify__result_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
