/*
 * tests/unit/test_llm_extract_tags.c - kevo_llm_extract_code() with the
 * fence tags a caller gives ("FENCE ALIAS...; RELATED...", a backend's
 * code_fence_tags): aliases rank as the fence, related tags only when no
 * block has the fence, other tags never; malformed specs are refused.
 */
#include "kevo/llm.h"
#include "kevo/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define K1 "void k(float *y)\n{\n    y[0] = 1;\n}\n"
#define K2 "void k(float *y)\n{\n    y[0] = 2;\n}\n"

static void expect(const char *reply, const char *tags, const char *want)
{
    char *out = NULL;
    int rc = kevo_llm_extract_code(&out, reply, tags, "k");
    if (rc != 0) {
        print_error("tags '%s': %d %s\n", tags, rc, kevo_error_last());
        fail();
    }
    assert_string_equal(out, want);
    free(out);
}

static void test_llm_extract_tags__alias_and_related(void **state)
{
    (void)state;
    const char *tags = "zeta zt; c h";
    expect("```zeta\n" K1 "```\n", tags, K1);
    expect("```ZT\n" K1 "```\n", tags, K1);                  /* alias, any case */
    expect("```c\n" K1 "```\n", tags, K1);                   /* related, alone */
    expect("```zt\n" K1 "```\n```c\n" K2 "```\n", tags, K1); /* the fence beats related */
    expect("```c\n" K2 "```\n```zeta\n" K1 "```\n", tags, K1);
    /* the same tags without a related part take no c block */
    char *out = NULL;
    assert_int_equal(kevo_llm_extract_code(&out, "```c\n" K1 "```\n", "zeta zt", "k"),
                     KEVO_ENOTFOUND);
    assert_null(out);
    assert_non_null(strstr(kevo_error_last(), "```zeta block"));
    /* commas separate as spaces do */
    expect("```zt\n" K1 "```\n", "zeta,zt;c", K1);
}

static void test_llm_extract_tags__bad_specs(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(kevo_llm_extract_code(&out, "```c\n" K1 "```\n", "; c h", "k"), KEVO_EINVAL);
    assert_int_equal(
        kevo_llm_extract_code(&out, "```c\n" K1 "```\n", "averyveryverylongfencetagname c", "k"),
        KEVO_EINVAL);
    assert_int_equal(kevo_llm_extract_code(&out, "```c\n" K1 "```\n", "nosuchlanguage", "k"),
                     KEVO_EINVAL);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_extract_tags__alias_and_related),
        cmocka_unit_test(test_llm_extract_tags__bad_specs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
