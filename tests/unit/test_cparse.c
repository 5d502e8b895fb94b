/*
 * tests/unit/test_cparse.c - the shared libclang front end (kevo/cparse.h):
 * parsing in each language with the paths CMake found, the first error in
 * words, finding a function, tokens with offsets, the edit list, and a
 * function's prototype (parameter kinds, pointees, constness, where it is
 * named).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/cparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SCALE[] = "#include <math.h>\n"
                            "void scale(const float *x, float *y, int n)\n"
                            "{\n"
                            "#pragma GCC unroll 4\n"
                            "    for (int i = 0; i < n; i++)\n"
                            "        y[i] = 2.0f * expf(x[i]); // twice\n"
                            "}\n";

static kevo_cparse_tu *parse(const char *src, kevo_cparse_lang lang, unsigned flags)
{
    kevo_cparse_options o = {0};
    kevo_cparse_tu *tu = NULL;
    o.lang = lang;
    o.flags = flags;
    assert_int_equal(kevo_cparse_parse(&tu, src, strlen(src), &o), 0);
    assert_non_null(tu);
    return tu;
}

static void test_cparse__resource_dir_from_cmake(void **state)
{
    (void)state;
    const char *dir = kevo_cparse_resource_dir();
    char path[1024];
    assert_true(dir[0] == '/');
    snprintf(path, sizeof(path), "%s/include/stddef.h", dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof(path), "%s/include/opencl-c.h", dir);
    assert_int_equal(access(path, R_OK), 0);

    const char *args[32];
    kevo_cparse_options o = {.lang = KEVO_CPARSE_OPENCL12, .flags = KEVO_CPARSE_TOLERANT};
    size_t n = kevo_cparse_args(args, 32, &o);
    assert_true(n <= 32);
    bool header = false, tolerant = false;
    for (size_t i = 0; i < n; i++) {
        header |= strstr(args[i], dir) == args[i] && strstr(args[i], "/include/opencl-c.h");
        tolerant |= !strcmp(args[i], "-Wno-everything");
    }
    assert_true(header);
    assert_true(tolerant);
    /* counting without room: the same number */
    assert_int_equal(kevo_cparse_args(NULL, 0, &o), n);
}

static void test_cparse__parse_ok_and_function(void **state)
{
    (void)state;
    kevo_cparse_tu *tu = parse(SCALE, KEVO_CPARSE_C11, KEVO_CPARSE_OPENMP_MACRO);
    assert_int_equal(kevo_cparse_errors(tu), 0);
    assert_string_equal(kevo_cparse_file_name(tu), "kevo_candidate.c");
    assert_non_null(kevo_cparse_main_file(tu));
    size_t len;
    assert_ptr_equal(kevo_cparse_source(tu, &len), SCALE);
    assert_int_equal(len, strlen(SCALE));

    CXCursor fn;
    assert_int_equal(kevo_cparse_function(&fn, tu, "scale"), 0);
    unsigned s, e;
    bool in_main = false;
    kevo_cparse_extent(&s, &e, &in_main, fn);
    assert_true(in_main);
    assert_int_equal(s, strstr(SCALE, "void scale") - SCALE);
    assert_int_equal(e, strlen(SCALE) - 1); /* past the closing brace */
    assert_int_equal(SCALE[e - 1], '}');

    assert_int_equal(kevo_cparse_function(&fn, tu, "expf"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "'expf' is not defined")); /* not in the main file */
    assert_int_equal(kevo_cparse_function(&fn, tu, "missing"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "kernel function 'missing' is not defined"));
    kevo_cparse_free(tu);

    tu = parse("void g(int);\n", KEVO_CPARSE_C11, 0);
    assert_int_equal(kevo_cparse_function(&fn, tu, "g"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "declared but not defined"));
    kevo_cparse_free(tu);
    kevo_cparse_free(NULL);
}

static void test_cparse__parse_error_has_a_message(void **state)
{
    (void)state;
    kevo_cparse_tu *tu = parse("int f(void)\n{\n    return x;\n}\n", KEVO_CPARSE_C11, 0);
    assert_int_equal(kevo_cparse_errors(tu), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "source does not parse: line 3:12:"));
    assert_non_null(strstr(kevo_error_last(), "'x'"));
    kevo_cparse_free(tu);

    /* tolerant parses still report errors (only warnings are silenced) */
    tu = parse("void f( {", KEVO_CPARSE_C11, KEVO_CPARSE_TOLERANT);
    assert_int_equal(kevo_cparse_errors(tu), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "source does not parse: line 1:"));
    kevo_cparse_free(tu);

    kevo_cparse_tu *none = NULL;
    assert_int_equal(kevo_cparse_parse(&none, NULL, 0, NULL), KEVO_EINVAL);
    assert_null(none);
}

static void test_cparse__languages_and_system_headers(void **state)
{
    (void)state;
    /* C with -fopenmp and the system headers (omp.h, math.h, stdint.h) */
    kevo_cparse_tu *tu = parse("#include <omp.h>\n#include <math.h>\n#include <stdint.h>\n"
                               "int64_t f(float x) { return (int64_t)sqrtf(x) + "
                               "omp_get_max_threads(); }\n",
                               KEVO_CPARSE_C11, KEVO_CPARSE_OPENMP | KEVO_CPARSE_TOLERANT);
    assert_int_equal(kevo_cparse_errors(tu), 0);
    kevo_cparse_free(tu);

    /* OpenCL C 1.2 with the built-ins of opencl-c.h */
    static const char cl[] = "__kernel void k(__global float *y, const int n)\n"
                             "{\n"
                             "    const int i = (int)get_global_id(0);\n"
                             "    if (i < n)\n"
                             "        y[i] = exp(y[i]) + native_sqrt(2.0f);\n"
                             "}\n";
    tu = parse(cl, KEVO_CPARSE_OPENCL12, KEVO_CPARSE_TOLERANT | KEVO_CPARSE_PREPROCESSING);
    assert_int_equal(kevo_cparse_errors(tu), 0);
    assert_string_equal(kevo_cparse_file_name(tu), "kevo_candidate.cl");
    CXCursor fn;
    assert_int_equal(kevo_cparse_function(&fn, tu, "k"), 0);
    kevo_cparse_free(tu);

    /* an unsaved header named by an extra argument */
    static const char *const extra[] = {"-include", "/kevo-test/prelude.h"};
    static const char prelude[] = "#define WIDTH 4\ntypedef float real;\n";
    kevo_cparse_file f = {"/kevo-test/prelude.h", prelude, sizeof(prelude) - 1};
    kevo_cparse_options o = {.lang = KEVO_CPARSE_C11, .file_name = "main.c",
                             .extra_args = extra, .n_extra_args = 2,
                             .extra_files = &f, .n_extra_files = 1};
    static const char src[] = "real v[WIDTH];\n";
    assert_int_equal(kevo_cparse_parse(&tu, src, strlen(src), &o), 0);
    assert_int_equal(kevo_cparse_errors(tu), 0);
    assert_string_equal(kevo_cparse_file_name(tu), "main.c");
    kevo_cparse_free(tu);
}

static bool tok_is(const kevo_cparse_token *t, const char *src, const char *text)
{
    return t->end - t->start == strlen(text) && !memcmp(src + t->start, text, strlen(text));
}

static void test_cparse__tokens_with_offsets(void **state)
{
    (void)state;
    kevo_cparse_tu *tu = parse(SCALE, KEVO_CPARSE_C11, KEVO_CPARSE_OPENMP_MACRO);
    CXCursor fn;
    assert_int_equal(kevo_cparse_function(&fn, tu, "scale"), 0);
    kevo_cparse_token *t = NULL;
    size_t n = 0;
    assert_int_equal(kevo_cparse_tokens(&t, &n, tu, fn), 0);
    assert_true(n > 20);
    assert_true(tok_is(&t[0], SCALE, "void"));
    assert_int_equal(t[0].kind, KEVO_CTOK_KEYWORD);
    assert_int_equal(t[0].start, strstr(SCALE, "void") - SCALE);
    assert_true(tok_is(&t[n - 1], SCALE, "}"));
    int params = 0, pointers = 0, vars = 0, directive = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(t[i].start < t[i].end && t[i].end <= strlen(SCALE));
        params += t[i].decl == KEVO_CDECL_PARAM;
        pointers += t[i].decl != KEVO_CDECL_NONE && t[i].pointer;
        vars += t[i].decl == KEVO_CDECL_VAR;
        if (t[i].directive) {
            directive++;
            assert_true(t[i].start >= (unsigned)(strstr(SCALE, "#pragma") - SCALE));
            assert_true(t[i].end <= (unsigned)(strstr(SCALE, "    for") - SCALE));
        }
        if (tok_is(&t[i], SCALE, "n") && t[i].decl == KEVO_CDECL_PARAM)
            assert_int_equal(t[i].start, strstr(SCALE, "int n") + 4 - SCALE);
        if (tok_is(&t[i], SCALE, "1.0f") || tok_is(&t[i], SCALE, "2.0f"))
            assert_int_equal(t[i].kind, KEVO_CTOK_LITERAL);
        if (tok_is(&t[i], SCALE, "expf"))
            assert_int_equal(t[i].kind, KEVO_CTOK_IDENT);
    }
    assert_int_equal(params, 3);   /* x, y, n */
    assert_int_equal(pointers, 2); /* x, y */
    assert_int_equal(vars, 1);     /* i */
    assert_int_equal(directive, 5); /* #, pragma, GCC, unroll, 4 */
    free(t);

    /* the whole main file with a null cursor: the #include line too */
    assert_int_equal(kevo_cparse_tokens(&t, &n, tu, clang_getNullCursor()), 0);
    assert_true(tok_is(&t[0], SCALE, "#"));
    assert_int_equal(t[0].start, 0);
    free(t);
    kevo_cparse_free(tu);
}

static void test_cparse__edits_back_to_front(void **state)
{
    (void)state;
    static const char text[] = "float f(float x) { return x; }";
    kevo_cparse_edits e = {0};
    char *out = NULL;
    unsigned ret = (unsigned)(strstr(text, "return") - text);
    /* recorded out of order; offsets are the original text's */
    assert_int_equal(kevo_cparse_edits_add(&e, ret + 7, ret + 8, "%s", "2.0f * x"), 0);
    assert_int_equal(kevo_cparse_edits_add(&e, 0, 0, "__kernel "), 0);
    assert_int_equal(kevo_cparse_edits_add(&e, 0, 5, "double"), 0);
    assert_int_equal(kevo_cparse_edits_add(&e, 0, 0, "static "), 0);
    assert_int_equal(kevo_cparse_edits_add(&e, sizeof(text) - 1, sizeof(text) - 1, "\n"), 0);
    assert_int_equal(kevo_cparse_edits_apply(&out, &e, text, strlen(text)), 0);
    /* at offset 0: the insertions first, in recording order, then the replacement */
    assert_string_equal(out, "__kernel static double f(float x) { return 2.0f * x; }\n");
    free(out);

    /* overlapping edits, an edit past the end, an edit that ends before it starts */
    assert_int_equal(kevo_cparse_edits_add(&e, 2, 7, "y"), 0);
    assert_int_equal(kevo_cparse_edits_apply(&out, &e, text, strlen(text)), KEVO_ERROR);
    assert_null(out);
    assert_non_null(strstr(kevo_error_last(), "overlapping edits"));
    kevo_cparse_edits_free(&e);
    assert_int_equal(e.n, 0);
    assert_int_equal(kevo_cparse_edits_add(&e, 40, 50, "z"), 0);
    assert_int_equal(kevo_cparse_edits_apply(&out, &e, text, strlen(text)), KEVO_ERROR);
    assert_non_null(strstr(kevo_error_last(), "past the text"));
    assert_int_equal(kevo_cparse_edits_add(&e, 5, 4, "z"), KEVO_ERROR);
    kevo_cparse_edits_free(&e);

    /* no edits: a copy */
    assert_int_equal(kevo_cparse_edits_apply(&out, &e, text, strlen(text)), 0);
    assert_string_equal(out, text);
    free(out);
    kevo_cparse_edits_free(NULL);
}

/* --- kevo_cparse_prototype_read ------------------------------------------- */

static const char PROTO[] =
    "#include <stddef.h>\n"
    "#include <stdint.h>\n"
    "struct cfg { int n; };\n"
    "void axpy(const float *restrict x, float *const y, double y2[], int64_t n, size_t m,\n"
    "          float alpha, const int k);\n"
    "void arrays(const float a[], float b[8], const double c[static 4]) { }\n"
    "static void helper(void) { }\n"
    "void axpy(const float *restrict x, float *const y, double y2[], int64_t n, size_t m,\n"
    "          float alpha, const int k)\n"
    "{\n"
    "    for (int64_t i = 0; i < n; i++)\n"
    "        y[i] += alpha * x[i] + (float)y2[i % (int64_t)m] * k;\n"
    "    helper();\n"
    "}\n"
    "void twice(const float *x, float *y, int n) { axpy(x, y, 0, n, 1, 2.0f, 0); }\n"
    "int other(int axpy) { return axpy; }\n"
    "void bad(struct cfg c, float **pp, void (*fn)(int), float (*rows)[4], ...) { }\n"
    "float value(const unsigned char *u) { return u[0]; }\n";

static void test_cparse__prototype_params(void **state)
{
    (void)state;
    kevo_cparse_tu *tu = parse(PROTO, KEVO_CPARSE_C11, 0);
    assert_int_equal(kevo_cparse_errors(tu), 0);
    kevo_cparse_prototype *p = NULL;
    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "axpy"), 0);
    assert_string_equal(p->name, "axpy");
    assert_int_equal(p->result.kind, KEVO_CTYPE_VOID);
    assert_false(p->variadic);
    assert_false(p->is_static);
    assert_int_equal(p->nparams, 7);
    /* const T *restrict: a pointer to const float, restrict dropped from canonical */
    assert_string_equal(p->params[0].name, "x");
    assert_int_equal(p->params[0].type.kind, KEVO_CTYPE_POINTER);
    assert_string_equal(p->params[0].type.canonical, "const float *");
    assert_int_equal(p->params[0].pointee.kind, KEVO_CTYPE_FLOATING);
    assert_true(p->params[0].pointee.is_const);
    assert_string_equal(p->params[0].pointee.canonical, "float");
    /* T *const: the pointer is const, the data is not */
    assert_true(p->params[1].type.is_const);
    assert_false(p->params[1].pointee.is_const);
    assert_string_equal(p->params[1].pointee.canonical, "float");
    /* an array parameter reads as a pointer to its element */
    assert_int_equal(p->params[2].type.kind, KEVO_CTYPE_POINTER);
    assert_string_equal(p->params[2].pointee.canonical, "double");
    /* typedefs resolved in canonical, kept as written in spelling */
    assert_int_equal(p->params[3].type.kind, KEVO_CTYPE_INTEGER);
    assert_string_equal(p->params[3].type.spelling, "int64_t");
    assert_string_equal(p->params[3].type.canonical, "long");
    assert_string_equal(p->params[4].type.canonical, "unsigned long");
    assert_int_equal(p->params[5].type.kind, KEVO_CTYPE_FLOATING);
    assert_string_equal(p->params[5].type.canonical, "float");
    /* a const scalar: const, canonical without the qualifier */
    assert_true(p->params[6].type.is_const);
    assert_string_equal(p->params[6].type.canonical, "int");
    assert_int_equal(p->params[6].pointee.kind, KEVO_CTYPE_VOID); /* zeroed: not a pointer */
    assert_null(p->params[6].pointee.canonical);

    /* every token naming axpy: the declaration, the definition, the call in
     * twice; not the parameter of other() that shadows it */
    size_t len = strlen(PROTO);
    assert_int_equal(p->n_name_offsets, 3);
    const char *decl = strstr(PROTO, "void axpy(") + 5;
    const char *def = strstr(decl + 1, "void axpy(") + 5;
    const char *call = strstr(PROTO, "{ axpy(") + 2;
    assert_int_equal(p->name_offsets[0], (unsigned)(decl - PROTO));
    assert_int_equal(p->name_offsets[1], (unsigned)(def - PROTO));
    assert_int_equal(p->name_offsets[2], (unsigned)(call - PROTO));
    for (size_t k = 0; k < p->n_name_offsets; k++)
        assert_true(p->name_offsets[k] + 4 <= len && !strncmp(PROTO + p->name_offsets[k],
                                                               "axpy", 4));
    kevo_cparse_prototype_free(p);
    kevo_cparse_prototype_free(NULL);

    /* static, no parameters */
    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "helper"), 0);
    assert_true(p->is_static);
    assert_int_equal(p->nparams, 0);
    kevo_cparse_prototype_free(p);

    /* array parameters: the element's const is the pointee's */
    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "arrays"), 0);
    assert_int_equal(p->nparams, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(p->params[i].type.kind, KEVO_CTYPE_POINTER);
        assert_false(p->params[i].type.is_const);
    }
    assert_true(p->params[0].pointee.is_const);
    assert_string_equal(p->params[0].pointee.canonical, "float");
    assert_false(p->params[1].pointee.is_const);
    assert_true(p->params[2].pointee.is_const);
    assert_string_equal(p->params[2].pointee.canonical, "double");
    kevo_cparse_prototype_free(p);
    kevo_cparse_free(tu);
}

static void test_cparse__prototype_unsupported_shapes(void **state)
{
    (void)state;
    kevo_cparse_tu *tu = parse(PROTO, KEVO_CPARSE_C11, 0);
    kevo_cparse_prototype *p = NULL;
    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "bad"), 0);
    assert_true(p->variadic);
    assert_int_equal(p->nparams, 4); /* the named ones; `...` is the flag */
    assert_int_equal(p->params[0].type.kind, KEVO_CTYPE_RECORD);
    assert_string_equal(p->params[0].type.spelling, "struct cfg");
    assert_int_equal(p->params[1].type.kind, KEVO_CTYPE_POINTER);
    assert_int_equal(p->params[1].pointee.kind, KEVO_CTYPE_POINTER);
    assert_int_equal(p->params[2].type.kind, KEVO_CTYPE_POINTER);
    assert_int_equal(p->params[2].pointee.kind, KEVO_CTYPE_FUNCTION);
    assert_int_equal(p->params[3].pointee.kind, KEVO_CTYPE_ARRAY);
    kevo_cparse_prototype_free(p);

    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "value"), 0);
    assert_int_equal(p->result.kind, KEVO_CTYPE_FLOATING);
    assert_string_equal(p->result.spelling, "float");
    assert_string_equal(p->params[0].pointee.canonical, "unsigned char");
    kevo_cparse_prototype_free(p);

    /* declared only, or not there at all: KEVO_EINVAL with the reason, no prototype */
    static const char decl_only[] = "void f(float *y, int n);\n";
    kevo_cparse_tu *tu2 = parse(decl_only, KEVO_CPARSE_C11, 0);
    p = (kevo_cparse_prototype *)1;
    assert_int_equal(kevo_cparse_prototype_read(&p, tu2, "f"), KEVO_EINVAL);
    assert_null(p);
    assert_non_null(strstr(kevo_error_last(), "declared but not defined"));
    assert_int_equal(kevo_cparse_prototype_read(&p, tu, "nope"), KEVO_EINVAL);
    assert_non_null(strstr(kevo_error_last(), "'nope' is not defined"));
    kevo_cparse_free(tu2);
    kevo_cparse_free(tu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cparse__resource_dir_from_cmake),
        cmocka_unit_test(test_cparse__parse_ok_and_function),
        cmocka_unit_test(test_cparse__parse_error_has_a_message),
        cmocka_unit_test(test_cparse__languages_and_system_headers),
        cmocka_unit_test(test_cparse__tokens_with_offsets),
        cmocka_unit_test(test_cparse__edits_back_to_front),
        cmocka_unit_test(test_cparse__prototype_params),
        cmocka_unit_test(test_cparse__prototype_unsupported_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
