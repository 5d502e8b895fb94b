/*
 * tests/unit/test_data_dir.c - where kevo finds its data (util/data_dir.c)
 * and the short suite paths it allows (kevo_task_find): KEVO_DATA_DIR wins
 * and is never silently ignored when wrong; this test binary lives in the
 * build tree, so without it the source tree is the data directory; a
 * relative suite path missing from the cwd is looked up under suites/.
 * (The installed layout, share/kevo next to bin/kevo, is
 * tests/integration/test_install.sh's.)
 */
#include "kevo/task.h"
#include "kevo/util.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

static char *make_tmpdir(void)
{
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-data-dir-"), 0);
    return dir;
}

static void test_data_dir__source_tree_for_a_build(void **state)
{
    (void)state;
    unsetenv("KEVO_DATA_DIR");
    char src[PATH_MAX];
    assert_non_null(realpath(KEVO_SOURCE_DIR, src));
    const char *dir = kevo_data_dir();
    assert_non_null(dir);
    assert_string_equal(dir, src);
    /* borrowed and stable: the same pointer every time */
    assert_ptr_equal(kevo_data_dir(), dir);
    const char *harness = kevo_data_path(NULL, "harness");
    assert_non_null(harness);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof(want), "%s/harness", src);
    assert_string_equal(harness, want);
    assert_ptr_equal(kevo_data_path(NULL, "harness"), harness);
}

static void test_data_dir__env_wins(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    char real[PATH_MAX];
    assert_non_null(realpath(tmp, real));
    setenv("KEVO_DATA_DIR", tmp, 1);
    const char *dir = kevo_data_dir();
    assert_non_null(dir);
    assert_string_equal(dir, real);
    /* a part's own variable still replaces that part alone */
    setenv("KEVO_TEST_PART_DIR", "/somewhere/else", 1);
    assert_string_equal(kevo_data_path("KEVO_TEST_PART_DIR", "prompts"), "/somewhere/else");
    unsetenv("KEVO_TEST_PART_DIR");
    char want[PATH_MAX + 16];
    snprintf(want, sizeof(want), "%s/prompts", real);
    assert_string_equal(kevo_data_path("KEVO_TEST_PART_DIR", "prompts"), want);
    unsetenv("KEVO_DATA_DIR");
    kevo_rmtree(tmp);
    free(tmp);
}

static void test_data_dir__wrong_env_is_an_error(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    char missing[PATH_MAX], file[PATH_MAX];
    snprintf(missing, sizeof(missing), "%s/nowhere", tmp);
    snprintf(file, sizeof(file), "%s/a-file", tmp);
    assert_int_equal(kevo_file_write(file, "x", 1), 0);

    setenv("KEVO_DATA_DIR", missing, 1);
    assert_null(kevo_data_dir());
    assert_non_null(strstr(kevo_error_last(), "KEVO_DATA_DIR="));
    assert_non_null(strstr(kevo_error_last(), missing));
    assert_null(kevo_data_path(NULL, "harness"));

    setenv("KEVO_DATA_DIR", file, 1);
    assert_null(kevo_data_dir());
    assert_non_null(strstr(kevo_error_last(), "not a directory"));
    unsetenv("KEVO_DATA_DIR");
    kevo_rmtree(tmp);
    free(tmp);
}

static void test_data_dir__short_suite_paths(void **state)
{
    (void)state;
    unsetenv("KEVO_DATA_DIR");
    char *tmp = make_tmpdir(), cwd[PATH_MAX], src[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_non_null(realpath(KEVO_SOURCE_DIR, src));
    assert_int_equal(chdir(tmp), 0);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "%s/suites/c/level1/001_relu", src);

    char **dirs = NULL;
    size_t n = 0;
    const char *forms[] = {"c/level1/001_relu", "suites/c/level1/001_relu", "c/level1/001_relu/"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        assert_int_equal(kevo_task_find(&dirs, &n, forms[i]), 0);
        assert_int_equal(n, 1);
        assert_string_equal(dirs[0], want);
        kevo_task_dirs_free(dirs, n);
    }
    /* not under suites/ either, or spelled relative to the cwd: an error */
    assert_int_equal(kevo_task_find(&dirs, &n, "c/no_such_suite"), KEVO_ENOTFOUND);
    assert_non_null(strstr(kevo_error_last(), "c/no_such_suite: no such directory"));
    assert_int_equal(kevo_task_find(&dirs, &n, "./c/level1"), KEVO_ENOTFOUND);
    assert_int_equal(kevo_task_find(&dirs, &n, ""), KEVO_ENOTFOUND);

    /* a folder of that name in the cwd wins over the data directory */
    assert_int_equal(kevo_mkdirs("c/level1/001_relu", 0755), 0);
    assert_int_equal(kevo_task_find(&dirs, &n, "c/level1/001_relu"), 0);
    assert_int_equal(n, 0);
    kevo_task_dirs_free(dirs, n);

    assert_int_equal(chdir(cwd), 0);
    kevo_rmtree(tmp);
    free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_dir__source_tree_for_a_build),
        cmocka_unit_test(test_data_dir__env_wins),
        cmocka_unit_test(test_data_dir__wrong_env_is_an_error),
        cmocka_unit_test(test_data_dir__short_suite_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
