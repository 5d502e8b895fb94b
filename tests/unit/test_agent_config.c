/*
 * test_agent_config.c - the run configuration's one derivation
 * (kevo_agent__derive) and its one check: what each strategy, ablation and
 * baseline gives the modules below (start-point rule, context budget and
 * sections, learning, auditor), and the same parsers for flags and stored
 * names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/internal.h"

#include <string.h>

static kevo_derived derive(const kevo_run_config *c)
{
    kevo_derived d;
    kevo_agent__derive(&d, c);
    return d;
}

static void test_agent__derive_start_rules(void **state)
{
    kevo_run_config c;
    kevo_run_config_init(&c);
    assert_int_equal(derive(&c).start_rule, KEVO_START_Q2); /* the paper's, by default */
    assert_true(derive(&c).start_climb); /* built-in evo: no kernel slower than its parent */
    c.start_score = KEVO_START_SCORE_Q2_LATENCY;
    assert_int_equal(derive(&c).start_rule, KEVO_START_Q2_LATENCY);
    c.retrieval = KEVO_RETRIEVAL_HEURISTIC;
    assert_int_equal(derive(&c).start_rule, KEVO_START_FASTEST);
    c.retrieval = KEVO_RETRIEVAL_VALUE;
    c.memory = false; /* no learned value to go by */
    assert_int_equal(derive(&c).start_rule, KEVO_START_FASTEST);
    c.memory = true;
    c.strategy = KEVO_STRATEGY_REFINE;
    assert_int_equal(derive(&c).start_rule, KEVO_START_NEWEST); /* built-in refinement */
    assert_false(derive(&c).start_climb); /* the baseline refines the newest, as written */
    c.generator = "openai";
    assert_int_equal(derive(&c).start_rule, KEVO_START_FASTEST); /* App. D.2: revert to best */
    c.strategy = KEVO_STRATEGY_EVO;
    assert_false(derive(&c).start_climb); /* an LLM rewrites the whole kernel */
}

static void test_agent__derive_context_and_learning(void **state)
{
    kevo_run_config c;
    kevo_run_config_init(&c);
    c.generator = "openai";
    kevo_derived d = derive(&c);
    assert_int_equal(d.context.mode, KEVO_CONTEXT_VALUE);
    assert_true(d.context.token_budget == 6000 && d.context.n == 6 && d.context.lambda == 3);
    assert_true(d.context.q_init == c.q_init && d.learn.q_init == c.q_init); /* one Q0 */
    assert_true(d.context.alpha == c.alpha && d.learn.alpha == c.alpha);
    assert_true(d.memory && !d.learn.frozen && d.audit);
    c.retrieval = KEVO_RETRIEVAL_RANDOM; /* random context, not heuristic */
    assert_int_equal(derive(&c).context.mode, KEVO_CONTEXT_RANDOM);
    c.retrieval = KEVO_RETRIEVAL_HEURISTIC;
    assert_int_equal(derive(&c).context.mode, KEVO_CONTEXT_HEURISTIC);
    c.retrieval = KEVO_RETRIEVAL_VALUE;
    /* KOPE's passive baseline: growing context, no budget unless one is given */
    c.context = KEVO_RUN_CONTEXT_PASSIVE;
    d = derive(&c);
    assert_int_equal(d.context.mode, KEVO_CONTEXT_PASSIVE);
    assert_int_equal(d.context.token_budget, KEVO_PASSIVE_BUDGET);
    c.token_budget = 3000;
    assert_int_equal(derive(&c).context.token_budget, 3000);
    /* --memory off: nothing retrieved (no notes either), nothing learnt */
    c.context = KEVO_RUN_CONTEXT_ACTIVE;
    c.memory = false;
    d = derive(&c);
    assert_true(!d.memory && d.learn.frozen);
    assert_true(d.context.n == 0 && d.context.max_practices == 0 && d.context.max_api == 0);
    /* pass@k: no memory in the prompt, but what it records is still learnt */
    c.memory = true;
    c.strategy = KEVO_STRATEGY_PASSK;
    d = derive(&c);
    assert_true(!d.memory && !d.learn.frozen && d.context.n == 0);
    /* the auditor: on for LLM runs unless --no-audit, never for the built-in */
    c.audit = 0;
    assert_false(derive(&c).audit);
    c.audit = -1;
    c.generator = "builtin";
    c.strategy = KEVO_STRATEGY_EVO;
    assert_false(derive(&c).audit);
}

static void test_agent__config_check_and_names(void **state)
{
    kevo_run_config c;
    kevo_run_config_init(&c);
    assert_int_equal(kevo_run_config_check(&c), 0);
    c.audit = 1; /* asked for with the built-in generator */
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "need an LLM generator"));
    c.audit = -1;
    c.strategy = KEVO_STRATEGY_PASSK;
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    c.strategy = KEVO_STRATEGY_EVO;
    c.backend = "metal";
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "unknown backend 'metal'"));
    c.backend = "cuda"; /* registered, but the built-in generator has no draft for it */
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    c.backend = "c";
    c.retrieval = KEVO_RETRIEVAL_HEURISTIC; /* no text to be similar to */
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "ablation of LLM runs"));
    c.retrieval = KEVO_RETRIEVAL_VALUE;
    c.generator = "no-such-provider";
    assert_int_equal(kevo_run_config_check(&c), KEVO_EINVAL);
    /* one name table per choice, the same for flags and stored configs */
    kevo_start_score s;
    assert_int_equal(kevo_start_score_parse(&s, "q2-latency"), 0);
    assert_string_equal(kevo_start_score_name(s), "q2-latency");
    assert_int_equal(kevo_start_score_parse(&s, "fastest"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "q2 or q2-latency"));
    kevo_strategy st;
    assert_int_equal(kevo_strategy_parse(&st, "refine"), 0);
    assert_int_equal(st, KEVO_STRATEGY_REFINE);
    assert_int_equal(kevo_strategy_parse(&st, NULL), KEVO_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent__derive_start_rules),
        cmocka_unit_test(test_agent__derive_context_and_learning),
        cmocka_unit_test(test_agent__config_check_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
