/*
 * test_fault_buf.c - the fault hooks themselves (kevo/fault.h) and the
 * sticky failure of kevo_buf (kevo/util.h): the n-th allocation fails and
 * only that one (or every one from it on, sticky), counting without
 * failing, counters that hold under several threads, spawn failures that
 * come back as the sandbox's fork error; a buffer that fails once keeps
 * failing, writes nothing more and detaches to NULL with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/fault.h"
#include "kevo/sandbox.h"
#include "kevo/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int disarm(void **state)
{
    (void)state;
    kevo_fault_disarm();
    return 0;
}

/* ---- the allocation hook ---------------------------------------------- */

static void test_fault__nth_allocation_fails_once(void **state)
{
    kevo_fault_arm(KEVO_FAULT_ALLOC, 3);
    char *a = kevo_strdup("one"), *b = kevo_strdup("two"), *c = kevo_strdup("three"),
         *d = kevo_strdup("four");
    kevo_fault_disarm();
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    assert_non_null(d);
    assert_int_equal(kevo_fault_hits(), 1);
    assert_int_equal(kevo_fault_hits_of(KEVO_FAULT_ALLOC), 1);
    assert_int_equal(kevo_fault_calls(KEVO_FAULT_ALLOC), 4);
    free(a);
    free(b);
    free(d);
}

static void test_fault__sticky_fails_from_n_on(void **state)
{
    kevo_fault_arm_sticky(KEVO_FAULT_ALLOC, 2);
    char *a = kevo_strdup("one"), *b = kevo_strdup("two"), *c = kevo_strdup("three");
    kevo_fault_disarm();
    assert_non_null(a);
    assert_null(b);
    assert_null(c);
    assert_int_equal(kevo_fault_hits(), 2);
    char *d = kevo_strdup("after");
    assert_non_null(d);
    free(a);
    free(d);
}

static void test_fault__zero_counts_only(void **state)
{
    kevo_fault_arm(KEVO_FAULT_ALLOC, 0);
    for (int i = 0; i < 100; i++) {
        char *s = kevo_strdup("x");
        assert_non_null(s);
        free(s);
    }
    kevo_fault_disarm();
    assert_int_equal(kevo_fault_calls(KEVO_FAULT_ALLOC), 100);
    assert_int_equal(kevo_fault_hits(), 0);
    /* disarmed: nothing counted */
    free(kevo_strdup("y"));
    assert_int_equal(kevo_fault_calls(KEVO_FAULT_ALLOC), 100);
    assert_false(kevo_fault_armed(KEVO_FAULT_ALLOC));
}

static void test_fault__kinds_are_separate(void **state)
{
    kevo_fault_arm(KEVO_FAULT_SPAWN, 1);
    char *s = kevo_strdup("not a spawn");
    assert_non_null(s);
    free(s);
    assert_true(kevo_fault_armed(KEVO_FAULT_SPAWN));
    assert_false(kevo_fault_armed(KEVO_FAULT_ALLOC));
    assert_int_equal(kevo_fault_calls(KEVO_FAULT_SPAWN), 0);
    kevo_fault_disarm();
}

#define THREADS 4
#define PER_THREAD 2000

static void *alloc_many(void *arg)
{
    long *failed = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char *s = kevo_strdup("threaded");
        if (!s)
            (*failed)++;
        free(s);
    }
    return NULL;
}

static void test_fault__counters_hold_under_threads(void **state)
{
    long failed[THREADS] = {0};
    pthread_t t[THREADS];
    kevo_fault_arm(KEVO_FAULT_ALLOC, THREADS * PER_THREAD / 2);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, alloc_many, &failed[i]), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    kevo_fault_disarm();
    long total = 0;
    for (int i = 0; i < THREADS; i++)
        total += failed[i];
    assert_int_equal(total, 1);
    assert_int_equal(kevo_fault_hits(), 1);
    assert_int_equal(kevo_fault_calls(KEVO_FAULT_ALLOC), THREADS * PER_THREAD);
}

/* ---- the spawn hook --------------------------------------------------- */

static void test_fault__spawn_fails_like_fork(void **state)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-fault-"), 0);
    assert_int_equal(kevo_sandbox_prepare_dir(dir), 0);
    const char *argv[] = {"/bin/echo", "hello", NULL};
    kevo_sandbox_opts o = {.workdir = dir, .wall_timeout_s = 10};
    kevo_proc_status st;
    char *out = NULL;

    kevo_fault_arm(KEVO_FAULT_SPAWN, 1);
    int rc = kevo_sandbox_run(&st, &out, 4096, argv, &o);
    kevo_fault_disarm();
    assert_int_equal(rc, KEVO_EIO);
    assert_non_null(strstr(kevo_error_last(), "fork"));
    assert_null(out);
    assert_int_equal(kevo_fault_hits_of(KEVO_FAULT_SPAWN), 1);

    kevo_child *c = NULL;
    kevo_fault_arm(KEVO_FAULT_SPAWN, 1);
    rc = kevo_sandbox_spawn(&c, argv, &o);
    kevo_fault_disarm();
    assert_int_equal(rc, KEVO_EIO);
    assert_null(c);

    /* unarmed: it runs */
    assert_int_equal(kevo_sandbox_run(&st, &out, 4096, argv, &o), 0);
    assert_int_equal(st.kind, KEVO_EXIT_NORMAL);
    assert_int_equal(st.exit_code, 0);
    assert_string_equal(out, "hello\n");
    free(out);
    kevo_rmtree(dir);
    free(dir);
}

/* Every allocation of a sandboxed run in turn: an error with a message,
 * never a crash, and the next run works. */
static void test_fault__sandbox_run_every_allocation(void **state)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-fault-"), 0);
    assert_int_equal(kevo_sandbox_prepare_dir(dir), 0);
    const char *argv[] = {"/bin/echo", "hello", NULL};
    const char *env[] = {"A=1", "B=2", NULL};
    kevo_sandbox_opts o = {.workdir = dir, .wall_timeout_s = 10, .untrusted = true,
                           .extra_env = env};
    long n = 1;
    for (;; n++) {
        kevo_proc_status st;
        char *out = NULL;
        kevo_error_clear();
        kevo_fault_arm(KEVO_FAULT_ALLOC, n);
        int rc = kevo_sandbox_run(&st, &out, 4096, argv, &o);
        kevo_fault_disarm();
        if (kevo_fault_hits() == 0) {
            assert_int_equal(rc, 0);
            free(out);
            break;
        }
        if (rc == 0) {
            /* the failed allocation was not needed for the answer */
            assert_non_null(out);
        } else {
            assert_true(rc < 0);
            assert_true(kevo_error_last()[0] != '\0');
            assert_null(out);
        }
        free(out);
        out = NULL;
        assert_int_equal(kevo_sandbox_run(&st, &out, 4096, argv, &o), 0);
        assert_string_equal(out, "hello\n");
        free(out);
    }
    assert_true(n > 3);
    kevo_rmtree(dir);
    free(dir);
}

/* ---- sticky kevo_buf -------------------------------------------------- */

static void test_buf__zero_initialised_is_empty(void **state)
{
    kevo_buf b = {0};
    assert_false(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_error(&b), 0);
    assert_string_equal(kevo_buf_cstr(&b), "");
    char *s = kevo_buf_detach(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
}

static void test_buf__first_append_fails_then_sticks(void **state)
{
    kevo_buf b = {0};
    kevo_fault_arm(KEVO_FAULT_ALLOC, 1);
    assert_int_equal(kevo_buf_puts(&b, "hello"), KEVO_ENOMEM);
    kevo_fault_disarm();
    assert_true(kevo_buf_oom(&b));
    /* memory is back, the buffer still refuses: the run is checked once */
    assert_int_equal(kevo_buf_puts(&b, " world"), KEVO_ENOMEM);
    assert_int_equal(kevo_buf_printf(&b, "%d", 42), KEVO_ENOMEM);
    assert_int_equal(kevo_buf_put(&b, "", 0), KEVO_ENOMEM);
    assert_int_equal(kevo_buf_grow(&b, 1), KEVO_ENOMEM);
    assert_null(b.ptr);
    assert_int_equal(b.len, 0);
    assert_string_equal(kevo_buf_cstr(&b), "");
    kevo_error_clear();
    assert_null(kevo_buf_detach(&b));
    assert_non_null(strstr(kevo_error_last(), "out of memory"));
    /* detach reset it */
    assert_false(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_puts(&b, "again"), 0);
    assert_string_equal(kevo_buf_cstr(&b), "again");
    kevo_buf_free(&b);
}

static void test_buf__growth_fails_content_kept_nothing_written(void **state)
{
    kevo_buf b = {0};
    assert_int_equal(kevo_buf_puts(&b, "abc"), 0);
    char big[200];
    memset(big, 'x', sizeof(big));
    kevo_fault_arm(KEVO_FAULT_ALLOC, 1);
    assert_int_equal(kevo_buf_put(&b, big, sizeof(big)), KEVO_ENOMEM); /* needs to grow */
    kevo_fault_disarm();
    assert_true(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_puts(&b, "d"), KEVO_ENOMEM); /* would fit: still refused */
    assert_int_equal(b.len, 3);
    assert_string_equal(kevo_buf_cstr(&b), "abc");
    /* clear keeps the failure; free resets it */
    kevo_buf_clear(&b);
    assert_true(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_puts(&b, "e"), KEVO_ENOMEM);
    kevo_buf_free(&b);
    assert_false(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_puts(&b, "f"), 0);
    assert_string_equal(kevo_buf_cstr(&b), "f");
    kevo_buf_free(&b);
}

static void test_buf__detach_after_failure_frees_and_returns_null(void **state)
{
    kevo_buf b = {0};
    assert_int_equal(kevo_buf_printf(&b, "%s-%d", "run", 1), 0);
    kevo_fault_arm(KEVO_FAULT_ALLOC, 1);
    char pad[100];
    memset(pad, 'p', sizeof(pad));
    kevo_buf_put(&b, pad, sizeof(pad));
    kevo_fault_disarm();
    /* a run of unchecked appends, then one check */
    kevo_buf_puts(&b, "x");
    kevo_buf_printf(&b, "%zu", sizeof(pad));
    assert_null(kevo_buf_detach(&b)); /* the content is freed: ASan would see a leak */
    assert_non_null(strstr(kevo_error_last(), "out of memory"));
    assert_null(b.ptr);
    assert_int_equal(b.error, 0);
}

static void test_buf__size_overflow_is_sticky(void **state)
{
    kevo_buf b = {0};
    assert_int_equal(kevo_buf_puts(&b, "a"), 0);
    assert_int_equal(kevo_buf_grow(&b, SIZE_MAX), KEVO_ENOMEM);
    assert_true(kevo_buf_oom(&b));
    assert_int_equal(kevo_buf_puts(&b, "b"), KEVO_ENOMEM);
    kevo_buf_free(&b);
}

static void test_buf__detach_of_empty_buffer_out_of_memory(void **state)
{
    kevo_buf b = {0};
    kevo_fault_arm(KEVO_FAULT_ALLOC, 1);
    char *s = kevo_buf_detach(&b);
    kevo_fault_disarm();
    assert_null(s);
    assert_non_null(strstr(kevo_error_last(), "out of memory"));
}

static void test_buf__every_allocation_of_a_run_of_appends(void **state)
{
    for (long n = 1;; n++) {
        kevo_buf b = {0};
        kevo_fault_arm(KEVO_FAULT_ALLOC, n);
        for (int i = 0; i < 200; i++)
            kevo_buf_printf(&b, "line %d of a long report\n", i);
        kevo_fault_disarm();
        char *s = kevo_buf_detach(&b);
        if (kevo_fault_hits() == 0) {
            assert_non_null(s);
            assert_non_null(strstr(s, "line 199 of"));
            free(s);
            assert_true(n > 5);
            break;
        }
        assert_null(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fault__nth_allocation_fails_once, disarm),
        cmocka_unit_test_teardown(test_fault__sticky_fails_from_n_on, disarm),
        cmocka_unit_test_teardown(test_fault__zero_counts_only, disarm),
        cmocka_unit_test_teardown(test_fault__kinds_are_separate, disarm),
        cmocka_unit_test_teardown(test_fault__counters_hold_under_threads, disarm),
        cmocka_unit_test_teardown(test_fault__spawn_fails_like_fork, disarm),
        cmocka_unit_test_teardown(test_fault__sandbox_run_every_allocation, disarm),
        cmocka_unit_test_teardown(test_buf__zero_initialised_is_empty, disarm),
        cmocka_unit_test_teardown(test_buf__first_append_fails_then_sticks, disarm),
        cmocka_unit_test_teardown(test_buf__growth_fails_content_kept_nothing_written, disarm),
        cmocka_unit_test_teardown(test_buf__detach_after_failure_frees_and_returns_null, disarm),
        cmocka_unit_test_teardown(test_buf__size_overflow_is_sticky, disarm),
        cmocka_unit_test_teardown(test_buf__detach_of_empty_buffer_out_of_memory, disarm),
        cmocka_unit_test_teardown(test_buf__every_allocation_of_a_run_of_appends, disarm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
