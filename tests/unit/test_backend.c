/*
 * tests/unit/test_backend.c - the backend vtable's contract, run against
 * every registered backend (a new backend passes it or says why not), the
 * registry, the capability bits, the backends of task.json coming from the
 * registry, and the memory seeded from each backend's own API notes.
 *
 * Nothing here builds or runs a kernel: no compiler, no device.
 */
#include "kevo/llm.h"
#include "kevo/memory.h"
#include "kevo/sys/backend.h"
#include "kevo/verify.h"
#include "kevo/task.h"
#include "kevo/util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define assert_contains(hay, needle) assert_contains_at(hay, needle, __FILE__, __LINE__)

static void assert_contains_at(const char *hay, const char *needle, const char *file, int line)
{
    if (!hay || !strstr(hay, needle)) {
        print_error("%s:%d: expected \"%s\" in \"%s\"\n", file, line, needle, hay ? hay : "(null)");
        _fail(file, line);
    }
}

static char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/kevo_test_backend_XXXXXX", base && *base ? base : "/tmp");
    char *dir = mkdtemp(path);
    assert_non_null(dir);
    return strdup(dir);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *path = kevo_path_join(dir, name);
    assert_non_null(path);
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
    free(path);
}

static size_t count_backends(void)
{
    size_t n = 0;
    while (kevo_backend_at(n))
        n++;
    return n;
}

/* ---- the registry ---- */

static void test_backend__registry_lookup(void **state)
{
    (void)state;
    size_t n = count_backends();
    assert_true(n >= 1);
    /* names() is the registry's, in its order, NULL-terminated */
    const char *const *names = kevo_backend_names();
    for (size_t i = 0; i < n; i++) {
        const kevo_backend *be = kevo_backend_at(i);
        assert_non_null(names[i]);
        assert_string_equal(names[i], be->name);
        assert_ptr_equal(kevo_backend_find(be->name), be);
        for (size_t j = 0; j < i; j++) /* one entry per name */
            assert_true(strcmp(kevo_backend_at(j)->name, be->name) != 0);
    }
    assert_null(names[n]);
    assert_ptr_equal(kevo_backend_names(), names); /* static, built once */
    /* the reference's backend is first */
    assert_string_equal(kevo_backend_at(0)->name, "c");
    assert_null(kevo_backend_at(n));
    assert_null(kevo_backend_find("nope"));
    assert_null(kevo_backend_find(""));
    assert_null(kevo_backend_find(NULL));
    assert_null(kevo_backend_find("C")); /* exact */
}

/* ---- the contract every backend meets ---- */

static void check_fence(const kevo_backend *be)
{
    /* the fence the prompt asks for is the first of the tags extraction takes */
    assert_non_null(be->code_language);
    assert_non_null(be->code_fence_tags);
    size_t len = strlen(be->code_language);
    assert_true(len > 0);
    assert_int_equal(strncmp(be->code_fence_tags, be->code_language, len), 0);
    assert_true(be->code_fence_tags[len] == ' ' || be->code_fence_tags[len] == ';' ||
                be->code_fence_tags[len] == '\0');
    /* a reply fenced the way the prompt asks is found with those tags */
    char reply[256], *code = NULL;
    snprintf(reply, sizeof(reply), "Here:\n```%s\nvoid relu(float *y)\n{\n    y[0] = 0;\n}\n```\n",
             be->code_language);
    if (kevo_llm_extract_code(&code, reply, be->code_fence_tags, "relu") != 0) {
        print_error("backend %s: tags '%s': %s\n", be->name, be->code_fence_tags,
                    kevo_error_last());
        fail();
    }
    assert_string_equal(code, "void relu(float *y)\n{\n    y[0] = 0;\n}\n");
    free(code);
    /* a block in a language outside the tags is not taken */
    assert_int_equal(
        kevo_llm_extract_code(&code, "```python\nrelu = 0\n```\n", be->code_fence_tags, "relu"),
        KEVO_ENOTFOUND);
    assert_null(code);
    assert_contains(kevo_error_last(), be->code_language);
}

static void check_notes(const kevo_backend *be)
{
    assert_true(be->napi_notes == 0 || be->api_notes != NULL);
    for (size_t i = 0; i < be->napi_notes; i++) {
        const kevo_backend_note *n = &be->api_notes[i];
        assert_non_null(n->title);
        assert_non_null(n->body);
        assert_non_null(n->tags);
        assert_true(*n->title && *n->body && *n->tags);
        for (size_t j = 0; j < i; j++) /* the title is part of the item's uid */
            assert_true(strcmp(be->api_notes[j].title, n->title) != 0);
    }
}

static void test_backend__contract(void **state)
{
    (void)state;
    const kevo_backend *be;
    for (size_t i = 0; (be = kevo_backend_at(i)) != NULL; i++) {
        assert_int_equal(be->version, KEVO_BACKEND_VERSION);
        assert_non_null(be->name);
        assert_non_null(be->build);
        assert_non_null(be->candidate_ext);
        assert_true(be->candidate_ext[0] == '.' && be->candidate_ext[1]);
        check_fence(be);
        check_notes(be);
        /* every backend has a static gate today; NULL would be allowed */
        assert_non_null(be->source_gate);
        /* the built-in generator needs a first draft */
        assert_int_equal(kevo_backend_has(be, KEVO_BACKEND_CAP_BUILTIN_GENERATOR),
                         be->draft != NULL);
        /* a backend that may lack its device says so through can_run or its
         * compile gate; one that needs none never refuses to run */
        if (!kevo_backend_has(be, KEVO_BACKEND_CAP_NEEDS_DEVICE) && be->can_run) {
            const char *why = NULL;
            assert_true(be->can_run(be, &why));
        }
    }
}

/* ---- capabilities ---- */

static void test_backend__capability_flags(void **state)
{
    (void)state;
    /* distinct bits */
    assert_int_equal(KEVO_BACKEND_NO_AS_LIMIT & KEVO_BACKEND_CAP_BUILTIN_GENERATOR, 0);
    assert_int_equal(KEVO_BACKEND_NO_AS_LIMIT & KEVO_BACKEND_CAP_NEEDS_DEVICE, 0);
    assert_int_equal(KEVO_BACKEND_CAP_BUILTIN_GENERATOR & KEVO_BACKEND_CAP_NEEDS_DEVICE, 0);
    assert_false(kevo_backend_has(NULL, KEVO_BACKEND_CAP_BUILTIN_GENERATOR));
    const kevo_backend *c = kevo_backend_find("c");
    assert_non_null(c);
    assert_true(kevo_backend_has(c, KEVO_BACKEND_CAP_BUILTIN_GENERATOR));
    assert_false(kevo_backend_has(c, KEVO_BACKEND_CAP_NEEDS_DEVICE));
    assert_false(kevo_backend_has(c, KEVO_BACKEND_NO_AS_LIMIT));
    assert_true(kevo_backend_has(c, 0));
    /* all the bits asked for, not any */
    assert_false(
        kevo_backend_has(c, KEVO_BACKEND_CAP_BUILTIN_GENERATOR | KEVO_BACKEND_CAP_NEEDS_DEVICE));
    /* what today's device backends say of themselves */
    const kevo_backend *ocl = kevo_backend_find("opencl");
    const kevo_backend *cuda = kevo_backend_find("cuda");
    assert_non_null(ocl);
    assert_non_null(cuda);
    assert_true(
        kevo_backend_has(ocl, KEVO_BACKEND_CAP_BUILTIN_GENERATOR | KEVO_BACKEND_CAP_NEEDS_DEVICE));
    assert_false(kevo_backend_has(ocl, KEVO_BACKEND_NO_AS_LIMIT));
    assert_true(kevo_backend_has(cuda, KEVO_BACKEND_CAP_NEEDS_DEVICE | KEVO_BACKEND_NO_AS_LIMIT));
    assert_false(kevo_backend_has(cuda, KEVO_BACKEND_CAP_BUILTIN_GENERATOR));
    assert_null(cuda->draft);
}

/* ---- drafts ---- */

static void test_backend__c_draft_is_the_reference(void **state)
{
    (void)state;
    const kevo_backend *c = kevo_backend_find("c");
    const char *ref = "void relu(const float *x, float *y, int64_t n) { }\n";
    char *src = NULL;
    const char *summary = NULL;
    assert_int_equal(c->draft(c, NULL, ref, &src, &summary), 0);
    assert_string_equal(src, ref);
    assert_true(src != ref); /* the caller's copy */
    assert_non_null(summary);
    free(src);
}

/* ---- task.json's backends come from the registry ---- */

static const char TASK_HEAD[] =
    "{\"name\": \"relu\", \"level\": 1, \"category\": \"activation\", \"description\": \"d\", "
    "\"params\": [{\"name\": \"x\", \"role\": \"in\", \"type\": \"f32\", \"shape\": [\"N\"]}, "
    "{\"name\": \"y\", \"role\": \"out\", \"type\": \"f32\", \"shape\": [\"N\"]}, "
    "{\"name\": \"N\", \"role\": \"scalar\", \"type\": \"i64\"}], \"sizes\": {\"N\": 16}, "
    "\"flops\": \"N\", \"bytes\": \"8 * N\", \"backends\": ";

static int load_with_backends(kevo_task **t, char **dir, const char *backends_json)
{
    kevo_buf json = {0};
    kevo_buf_printf(&json, "%s%s}", TASK_HEAD, backends_json);
    *dir = make_tmpdir();
    write_file(*dir, "task.json", kevo_buf_cstr(&json));
    write_file(*dir, "reference.c", "/* reference */\n");
    kevo_buf_free(&json);
    return kevo_task_load(t, *dir);
}

static void test_backend__task_unknown_backend(void **state)
{
    (void)state;
    kevo_task *t = NULL;
    char *dir = NULL;
    /* a name, so task.json loads; the backend module refuses it (evaluators,
     * runs and `kevo tasks` ask it) */
    assert_int_equal(load_with_backends(&t, &dir, "[\"c\", \"fortran\"]"), 0);
    assert_int_equal(kevo_backend_check_task(t), KEVO_EINVAL);
    kevo_evaluator *ev = NULL;
    kevo_eval_options eo;
    kevo_eval_options_default(&eo);
    assert_int_equal(kevo_evaluator_new(&ev, t, &eo), KEVO_EINVAL);
    assert_null(ev);
    kevo_task_free(t);
    t = NULL;
    const char *msg = kevo_error_last();
    assert_contains(msg, "\"fortran\"");
    char *json_path = kevo_path_join(dir, "task.json");
    assert_contains(msg, json_path);          /* the file */
    assert_contains(msg, "field 'backends'"); /* the field */
    for (const char *const *n = kevo_backend_names(); *n; n++) {
        char quoted[64];
        snprintf(quoted, sizeof(quoted), "\"%s\"", *n); /* every registered name offered */
        assert_contains(msg, quoted);
    }
    free(json_path);
    kevo_rmtree(dir);
    free(dir);
    /* not a string */
    assert_int_equal(load_with_backends(&t, &dir, "[1]"), KEVO_EINVAL);
    assert_contains(kevo_error_last(), "field 'backends'");
    kevo_rmtree(dir);
    free(dir);
}

static void test_backend__task_accepts_every_registered_backend(void **state)
{
    (void)state;
    kevo_buf list = {0};
    kevo_buf_puts(&list, "[");
    const char *const *names = kevo_backend_names();
    for (size_t i = 0; names[i]; i++)
        kevo_buf_printf(&list, "%s\"%s\"", i ? ", " : "", names[i]);
    kevo_buf_puts(&list, "]");
    kevo_task *t = NULL;
    char *dir = NULL;
    if (load_with_backends(&t, &dir, kevo_buf_cstr(&list)) != 0) {
        print_error("%s\n", kevo_error_last());
        fail();
    }
    assert_int_equal(t->nbackends, count_backends());
    for (size_t i = 0; i < t->nbackends; i++)
        assert_string_equal(t->backends[i], names[i]);
    kevo_task_free(t);
    kevo_rmtree(dir);
    free(dir);
    kevo_buf_free(&list);
}

/* ---- seeding takes each backend's notes, once ---- */

static size_t count_items(kevo_memory *mem, const char *backend, kevo_item_kind kind)
{
    kevo_item_list *l = NULL;
    kevo_item_filter f = {.kinds = KEVO_ITEM_BIT(kind), .backend = backend, .no_body = 1};
    assert_int_equal(kevo_memory_item_list(&l, mem, &f), 0);
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += backend ? (l->items[i].backend && !strcmp(l->items[i].backend, backend))
                     : !l->items[i].backend;
    kevo_item_list_free(l);
    return n;
}

static void test_backend__seed_takes_notes_from_each_backend(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char *db = kevo_path_join(dir, "memory.db");
    kevo_memory *mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, db), 0);
    assert_int_equal(kevo_memory_seed_builtin(mem), 0);
    size_t practices = count_items(mem, NULL, KEVO_ITEM_BEST_PRACTICE);
    assert_true(practices > 0);
    const kevo_backend *be;
    for (size_t i = 0; (be = kevo_backend_at(i)) != NULL; i++) {
        assert_int_equal(count_items(mem, be->name, KEVO_ITEM_API_DOC), be->napi_notes);
        /* each note is there under its own title, body and tags */
        for (size_t k = 0; k < be->napi_notes; k++) {
            const kevo_backend_note *n = &be->api_notes[k];
            kevo_item_list *l = NULL;
            kevo_item_filter f = {.kinds = KEVO_ITEM_BIT(KEVO_ITEM_API_DOC), .backend = be->name};
            assert_int_equal(kevo_memory_item_list(&l, mem, &f), 0);
            bool found = false;
            for (size_t j = 0; j < l->n && !found; j++) {
                const kevo_item *it = &l->items[j];
                found = it->backend && !strcmp(it->backend, be->name) &&
                        !strcmp(it->title, n->title) && !strcmp(it->body, n->body) &&
                        !strcmp(it->tags, n->tags) &&
                        (n->category ? it->category && !strcmp(it->category, n->category)
                                     : !it->category);
            }
            if (!found) {
                print_error("backend %s: note '%s' not seeded\n", be->name, n->title);
                fail();
            }
            kevo_item_list_free(l);
        }
    }
    /* idempotent: a second seeding, and a reopened memory's, add nothing */
    assert_int_equal(kevo_memory_seed_builtin(mem), 0);
    kevo_memory_free(mem);
    mem = NULL;
    assert_int_equal(kevo_memory_open(&mem, db), 0);
    assert_int_equal(kevo_memory_seed_builtin(mem), 0);
    assert_int_equal(count_items(mem, NULL, KEVO_ITEM_BEST_PRACTICE), practices);
    for (size_t i = 0; (be = kevo_backend_at(i)) != NULL; i++)
        assert_int_equal(count_items(mem, be->name, KEVO_ITEM_API_DOC), be->napi_notes);
    kevo_memory_free(mem);
    kevo_rmtree(dir);
    free(db);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend__registry_lookup),
        cmocka_unit_test(test_backend__contract),
        cmocka_unit_test(test_backend__capability_flags),
        cmocka_unit_test(test_backend__c_draft_is_the_reference),
        cmocka_unit_test(test_backend__task_unknown_backend),
        cmocka_unit_test(test_backend__task_accepts_every_registered_backend),
        cmocka_unit_test(test_backend__seed_takes_notes_from_each_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
