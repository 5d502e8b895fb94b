/*
 * cparse/cparse.c - kevo's one way into libclang: the arguments of each
 * language, the index and the unsaved-file parse, the first error in words,
 * finding a function's definition and a cursor's byte range.
 *
 * The clang resource directory and the system include directories come
 * from CMake (KEVO_CLANG_RESOURCE_DIR, KEVO_CPARSE_MULTIARCH_INCLUDE,
 * KEVO_CPARSE_SYSTEM_INCLUDE, KEVO_CUDA_PATH are compile definitions of
 * this module only), so no path to an LLVM installation is spelled in C.
 *
 * Must not: know what a kernel, a recipe or a gate is; keep state between
 * parses (every parse has its own index, so parses on several threads do
 * not share one).
 */
#include "kevo/cparse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifndef KEVO_CLANG_RESOURCE_DIR
#error "KEVO_CLANG_RESOURCE_DIR must come from CMake (clang -print-resource-dir)"
#endif
#ifndef KEVO_CPARSE_MULTIARCH_INCLUDE
#error "KEVO_CPARSE_MULTIARCH_INCLUDE must come from CMake"
#endif
#ifndef KEVO_CPARSE_SYSTEM_INCLUDE
#error "KEVO_CPARSE_SYSTEM_INCLUDE must come from CMake"
#endif
#ifndef KEVO_CUDA_PATH
#error "KEVO_CUDA_PATH must come from CMake"
#endif

#define OPENCL_C_HEADER KEVO_CLANG_RESOURCE_DIR "/include/opencl-c.h"

struct kevo_cparse_tu {
    CXIndex index;
    CXTranslationUnit tu;
    const char *source;
    size_t len;
    const char *name;
};

static const char *const c11_args[] = {"-x", "c", "-std=gnu11"};
static const char *const opencl_args[] = {"-x", "cl", "-cl-std=CL1.2", "-cl-no-stdinc",
                                          "-include", OPENCL_C_HEADER};
static const char *const cuda_args[] = {"-x",
                                        "cuda",
                                        "--cuda-host-only",
                                        "--cuda-path=" KEVO_CUDA_PATH,
                                        "--cuda-gpu-arch=sm_80",
                                        "-nocudalib",
                                        "-std=c++17",
                                        "-Wno-unknown-cuda-version"};
/* after the flags' arguments, so that they read like the command lines
 * kevo used before (language, options, include paths) */
static const char *const c_include_args[] = {
    "-resource-dir", KEVO_CLANG_RESOURCE_DIR, "-idirafter", KEVO_CPARSE_MULTIARCH_INCLUDE,
    "-idirafter",    KEVO_CPARSE_SYSTEM_INCLUDE};
static const char *const openmp_args[] = {"-fopenmp"};
static const char *const openmp_macro_args[] = {"-D_OPENMP=201511", "-Wno-unknown-pragmas"};
static const char *const tolerant_args[] = {"-Wno-everything", "-ferror-limit=0"};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *kevo_cparse_resource_dir(void)
{
    return KEVO_CLANG_RESOURCE_DIR;
}

/* Append list[0..n) to out[0..cap) at *at (counting past cap). */
static void push(const char **out, size_t cap, size_t *at, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++, (*at)++)
        if (*at < cap)
            out[*at] = list[i];
}

size_t kevo_cparse_args(const char **out, size_t cap, const kevo_cparse_options *opts)
{
    static const kevo_cparse_options defaults = {0};
    size_t n = 0;
    if (!opts)
        opts = &defaults;
    if (opts->lang == KEVO_CPARSE_OPENCL12)
        push(out, cap, &n, opencl_args, N_OF(opencl_args));
    else if (opts->lang == KEVO_CPARSE_CUDA_HOST)
        push(out, cap, &n, cuda_args, N_OF(cuda_args));
    else
        push(out, cap, &n, c11_args, N_OF(c11_args));
    if (opts->flags & KEVO_CPARSE_OPENMP)
        push(out, cap, &n, openmp_args, N_OF(openmp_args));
    if (opts->flags & KEVO_CPARSE_OPENMP_MACRO)
        push(out, cap, &n, openmp_macro_args, N_OF(openmp_macro_args));
    if (opts->flags & KEVO_CPARSE_TOLERANT)
        push(out, cap, &n, tolerant_args, N_OF(tolerant_args));
    if (opts->lang == KEVO_CPARSE_C11)
        push(out, cap, &n, c_include_args, N_OF(c_include_args));
    push(out, cap, &n, opts->extra_args, opts->extra_args ? opts->n_extra_args : 0);
    return n;
}

static const char *default_name(kevo_cparse_lang lang)
{
    return lang == KEVO_CPARSE_OPENCL12  ? "kevo_candidate.cl"
           : lang == KEVO_CPARSE_CUDA_HOST ? "kevo_candidate.cu"
                                           : "kevo_candidate.c";
}

/* The unsaved files of a parse: the main file first. *out is malloc'd. */
static int unsaved_files(struct CXUnsavedFile **out, const kevo_cparse_tu *p,
                         const kevo_cparse_options *opts)
{
    size_t n = 1 + (opts->extra_files ? opts->n_extra_files : 0);
    struct CXUnsavedFile *u = calloc(n, sizeof(*u));
    if (!u)
        return kevo_error_set(KEVO_ENOMEM, "out of memory parsing a source");
    u[0] = (struct CXUnsavedFile){p->name, p->source, (unsigned long)p->len};
    for (size_t i = 1; i < n; i++) {
        const kevo_cparse_file *f = &opts->extra_files[i - 1];
        u[i] = (struct CXUnsavedFile){f->name, f->text, (unsigned long)f->len};
    }
    *out = u;
    return 0;
}

int kevo_cparse_parse(kevo_cparse_tu **out, const char *source, size_t len,
                      const kevo_cparse_options *opts)
{
    static const kevo_cparse_options defaults = {0};
    int error = 0;
    kevo_cparse_tu *p = NULL;
    const char **args = NULL;
    struct CXUnsavedFile *files = NULL;

    *out = NULL;
    if (!opts)
        opts = &defaults;
    if (!source)
        return kevo_error_set(KEVO_EINVAL, "cparse: no source given");
    if (len >= UINT_MAX / 2)
        return kevo_error_set(KEVO_EINVAL, "cparse: source too large");
    size_t nargs = kevo_cparse_args(NULL, 0, opts);
    if (!(p = calloc(1, sizeof(*p))) || !(args = calloc(nargs, sizeof(*args)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory parsing a source");
        goto done;
    }
    kevo_cparse_args(args, nargs, opts);
    p->source = source;
    p->len = len;
    p->name = opts->file_name ? opts->file_name : default_name(opts->lang);
    if ((error = unsaved_files(&files, p, opts)) < 0)
        goto done;
    if (!(p->index = clang_createIndex(0, 0))) {
        error = kevo_error_set(KEVO_EINFRA, "libclang: cannot create an index");
        goto done;
    }
    unsigned options = CXTranslationUnit_KeepGoing;
    if (opts->flags & KEVO_CPARSE_PREPROCESSING)
        options |= CXTranslationUnit_DetailedPreprocessingRecord;
    enum CXErrorCode rc = clang_parseTranslationUnit2(
        p->index, p->name, args, (int)nargs, files,
        1 + (unsigned)(opts->extra_files ? opts->n_extra_files : 0), options, &p->tu);
    if (rc != CXError_Success || !p->tu) {
        error = kevo_error_set(KEVO_EINFRA, "libclang could not parse the candidate (error %d)",
                               (int)rc);
        goto done;
    }
    *out = p;
    p = NULL;
done:
    free(files);
    free(args);
    kevo_cparse_free(p);
    return error;
}

void kevo_cparse_free(kevo_cparse_tu *tu)
{
    if (!tu)
        return;
    if (tu->tu)
        clang_disposeTranslationUnit(tu->tu);
    if (tu->index)
        clang_disposeIndex(tu->index);
    free(tu);
}

int kevo_cparse_errors(const kevo_cparse_tu *tu)
{
    int error = 0;
    unsigned n = clang_getNumDiagnostics(tu->tu);
    for (unsigned i = 0; i < n && error == 0; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu->tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            unsigned line = 0, col = 0;
            clang_getSpellingLocation(clang_getDiagnosticLocation(d), NULL, &line, &col, NULL);
            CXString s = clang_getDiagnosticSpelling(d);
            error = kevo_error_set(KEVO_EINVAL, "source does not parse: line %u:%u: %s", line, col,
                                   clang_getCString(s));
            clang_disposeString(s);
        }
        clang_disposeDiagnostic(d);
    }
    return error;
}

CXTranslationUnit kevo_cparse_cx(const kevo_cparse_tu *tu)
{
    return tu->tu;
}

CXFile kevo_cparse_main_file(const kevo_cparse_tu *tu)
{
    return clang_getFile(tu->tu, tu->name);
}

const char *kevo_cparse_file_name(const kevo_cparse_tu *tu)
{
    return tu->name;
}

const char *kevo_cparse_source(const kevo_cparse_tu *tu, size_t *len)
{
    if (len)
        *len = tu->len;
    return tu->source;
}

typedef struct find_ctx {
    const char *name;
    CXCursor found;
    bool have;
    bool declared_only;
} find_ctx;

static enum CXChildVisitResult find_function(CXCursor c, CXCursor parent, CXClientData data)
{
    find_ctx *f = data;
    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl ||
        !clang_Location_isFromMainFile(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    CXString s = clang_getCursorSpelling(c);
    bool same = strcmp(clang_getCString(s), f->name) == 0;
    clang_disposeString(s);
    if (same) {
        if (clang_isCursorDefinition(c)) {
            f->found = c;
            f->have = true;
            return CXChildVisit_Break;
        }
        f->declared_only = true;
    }
    return CXChildVisit_Continue;
}

int kevo_cparse_function(CXCursor *out, const kevo_cparse_tu *tu, const char *name)
{
    find_ctx f = {.name = name};
    *out = clang_getNullCursor();
    if (!name || !*name)
        return kevo_error_set(KEVO_EINVAL, "cparse: no function name given");
    clang_visitChildren(clang_getTranslationUnitCursor(tu->tu), find_function, &f);
    if (!f.have)
        return kevo_error_set(KEVO_EINVAL, "kernel function '%s' is %s in the source", name,
                              f.declared_only ? "declared but not defined" : "not defined");
    *out = f.found;
    return 0;
}

void kevo_cparse_extent(unsigned *out_start, unsigned *out_end, bool *out_in_main, CXCursor c)
{
    CXSourceRange ext = clang_getCursorExtent(c);
    CXSourceLocation s = clang_getRangeStart(ext), e = clang_getRangeEnd(ext);
    CXFile file;
    *out_start = *out_end = 0;
    clang_getExpansionLocation(s, &file, NULL, NULL, out_start);
    clang_getExpansionLocation(e, &file, NULL, NULL, out_end);
    if (out_in_main)
        *out_in_main = clang_Location_isFromMainFile(s) && clang_Location_isFromMainFile(e);
}
