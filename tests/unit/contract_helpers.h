/*
 * tests/unit/contract_helpers.h - what the contract tests share
 * (test_store_contract.c, test_backend_contract.c): skipping with a printed
 * reason and marking a known bug of one implementation.
 *
 * A contract test asserts what a vtable's header promises, against every
 * implementation. It must not reach past the vtable, and it must not
 * quietly weaken an assertion because one implementation gets it wrong:
 * a known bug is marked with CONTRACT_KNOWN_BUG() instead, so that it is
 * visible in every run and the test passes outright once it is fixed.
 *
 * Include after <cmocka.h>.
 */
#ifndef KEVO_TEST_CONTRACT_HELPERS_H
#define KEVO_TEST_CONTRACT_HELPERS_H

#include <stdlib.h>
#include <string.h>

/* KEVO_TEST_STRICT=1: known bugs fail instead of skipping. */
static inline int contract_strict(void)
{
    const char *v = getenv("KEVO_TEST_STRICT");
    return v && *v && strcmp(v, "0") != 0;
}

/* Skip the running test, saying why (cmocka prints only "SKIPPED"). */
#define CONTRACT_SKIP(...)                                                                         \
    do {                                                                                           \
        print_message("[ SKIP     ] " __VA_ARGS__);                                                \
        print_message("\n");                                                                       \
        skip();                                                                                    \
    } while (0)

/* `showed` true means the implementation just did what the bug report
 * says: print it and skip (or fail under KEVO_TEST_STRICT=1). When the bug
 * is fixed, `showed` is false and the test goes on to assert the rest. */
#define CONTRACT_KNOWN_BUG(showed, ...)                                                            \
    do {                                                                                           \
        if (showed) {                                                                              \
            print_message("[ KNOWN BUG] " __VA_ARGS__);                                            \
            print_message("\n");                                                                   \
            if (contract_strict())                                                                 \
                fail_msg("known bug (KEVO_TEST_STRICT is set)");                                   \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

#endif
