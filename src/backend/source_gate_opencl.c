/*
 * backend/source_gate_opencl.c - the static anti-hacking gate for OpenCL C 1.2
 * candidates, on libclang-14 (`-x cl -cl-std=CL1.2` with the OpenCL
 * built-in declarations, so every call resolves to a built-in or to a
 * function of the file).
 *
 * Rules (each rejection names the rule and the line):
 *   include      no #include at all: a candidate is one self-contained file
 *   printf       no printf (output from kernels is a side channel)
 *   asm          no inline asm
 *   extern-function  every function called or declared must be an OpenCL
 *                built-in or defined in the file: a declaration without a
 *                body would be resolved on the host when the device is the
 *                CPU (PoCL links kernels against libc)
 *   extension    #pragma OPENCL EXTENSION only for the cl_khr_ maths,
 *                atomics and storage extensions
 *   constructor  no constructor/destructor/section/alias attributes, no
 *                #pragma weak/init/fini
 *   reference    no mention of the reference implementation or the harness
 * Behind it stand the build (clBuildProgram), the check of what the
 * compiled kernel libraries import (src/backend/elf_inspect.c) and the
 * runner's sandbox.
 */
#include "source_gate.h"
#include "kevo/cparse.h"

#include <clang-c/Index.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const allowed_extensions[] = {"cl_khr_fp64",
                                                 "cl_khr_fp16",
                                                 "cl_khr_int64_base_atomics",
                                                 "cl_khr_int64_extended_atomics",
                                                 "cl_khr_global_int32_base_atomics",
                                                 "cl_khr_global_int32_extended_atomics",
                                                 "cl_khr_local_int32_base_atomics",
                                                 "cl_khr_local_int32_extended_atomics",
                                                 "cl_khr_byte_addressable_store",
                                                 "cl_khr_3d_image_writes",
                                                 NULL};

static const char *const banned_attributes[] = {
    "constructor",    "destructor",  "section",       "alias",     "ifunc",    "weakref",
    "weak",           "visibility",  "init_priority", "used",      "retain",   "__constructor__",
    "__destructor__", "__section__", "__alias__",     "__ifunc__", "__weak__", "__visibility__",
    "__used__",       NULL};

typedef struct {
    kevo_buf *findings;
    int violations;
    CXFile main_file;
} ctx;

static void report(ctx *c, unsigned line, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(ctx *c, unsigned line, const char *rule, const char *fmt, ...)
{
    kevo_buf msg = {0};
    va_list ap;
    kevo_buf_printf(&msg, "line %u: %s: ", line, rule);
    va_start(ap, fmt);
    kevo_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    if (!strstr(kevo_buf_cstr(c->findings), msg.ptr)) {
        kevo_buf_printf(c->findings, "%s\n", msg.ptr);
        c->violations++;
    }
    kevo_buf_free(&msg);
}

static bool in_main_file(ctx *c, CXCursor cur, unsigned *line)
{
    CXFile f = NULL;
    clang_getExpansionLocation(clang_getCursorLocation(cur), &f, line, NULL, NULL);
    return f && clang_File_isEqual(f, c->main_file);
}

/* A function declared in the candidate without a body anywhere in it.
 * Clang's own __builtin_* functions (INFINITY is __builtin_inff()) are
 * declared implicitly where they are used, so they look like the file's. */
static bool declared_without_body(ctx *c, CXCursor fn)
{
    unsigned line;
    if (!in_main_file(c, fn, &line))
        return false; /* an OpenCL built-in */
    CXString s = clang_getCursorSpelling(fn);
    bool builtin =
        !strncmp(clang_getCString(s), "__builtin_", 10) && !strstr(clang_getCString(s), "printf");
    clang_disposeString(s);
    if (builtin)
        return false;
    CXCursor def = clang_getCursorDefinition(fn);
    return clang_Cursor_isNull(def);
}

static enum CXChildVisitResult visit(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    ctx *c = data;
    unsigned line = 0;
    enum CXCursorKind kind = clang_getCursorKind(cur);
    bool mine = in_main_file(c, cur, &line);
    /* #include is reported by scan_tokens (also inside #if 0) */
    if (kind == CXCursor_InclusionDirective || !mine)
        return CXChildVisit_Continue;
    if (kind == CXCursor_FunctionDecl && declared_without_body(c, cur)) {
        CXString s = clang_getCursorSpelling(cur);
        report(c, line, "extern-function",
               "`%s` is declared but not defined in the file: "
               "kernels may call only OpenCL built-ins and functions defined here",
               clang_getCString(s));
        clang_disposeString(s);
    } else if (kind == CXCursor_CallExpr || kind == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(cur);
        if (!clang_Cursor_isNull(ref) && clang_getCursorKind(ref) == CXCursor_FunctionDecl) {
            CXString s = clang_getCursorSpelling(ref);
            const char *name = clang_getCString(s);
            if (strstr(name, "printf"))
                report(c, line, "printf", "printf is not allowed in a kernel");
            else if (declared_without_body(c, ref))
                report(c, line, "extern-function",
                       "calls `%s`, which is neither an OpenCL "
                       "built-in nor defined in the file",
                       name);
            if (!strncmp(name, "kevo_", 5))
                report(c, line, "reference", "uses `%s`, part of kevo's harness", name);
            clang_disposeString(s);
        }
    }
    return CXChildVisit_Recurse;
}

static bool extension_allowed(const char *name)
{
    for (const char *const *e = allowed_extensions; *e; e++)
        if (!strcmp(*e, name))
            return true;
    return false;
}

static void scan_tokens(ctx *c, CXTranslationUnit tu)
{
    CXCursor root = clang_getTranslationUnitCursor(tu);
    CXSourceRange range = clang_getCursorExtent(root);
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(tu, range, &toks, &n);
    for (unsigned i = 0; i < n; i++) {
        CXTokenKind k = clang_getTokenKind(toks[i]);
        if (k == CXToken_Comment)
            continue;
        CXString s = clang_getTokenSpelling(tu, toks[i]);
        const char *t = clang_getCString(s);
        unsigned line = 0;
        clang_getSpellingLocation(clang_getTokenLocation(tu, toks[i]), NULL, &line, NULL, NULL);
        if (k == CXToken_Identifier || k == CXToken_Keyword) {
            if (!strcmp(t, "__attribute__") || !strcmp(t, "__attribute")) {
                int depth = 0;
                for (unsigned j = i + 1; j < n; j++) {
                    CXString s2 = clang_getTokenSpelling(tu, toks[j]);
                    const char *u = clang_getCString(s2);
                    if (!strcmp(u, "("))
                        depth++;
                    else if (!strcmp(u, ")"))
                        depth--;
                    for (const char *const *b = banned_attributes; *b; b++)
                        if (!strcmp(u, *b))
                            report(c, line, "constructor",
                                   "attribute `%s` is not allowed: no "
                                   "code may run outside a launch or change linkage",
                                   u);
                    clang_disposeString(s2);
                    if (depth <= 0)
                        break;
                }
            } else if (!strcmp(t, "asm") || !strcmp(t, "__asm__") || !strcmp(t, "__asm")) {
                report(c, line, "asm", "inline asm is not allowed in OpenCL candidates");
            } else if (!strcmp(t, "printf")) {
                report(c, line, "printf", "printf is not allowed in a kernel");
            } else if (strcasestr(t, "reference") || !strncmp(t, "kevo_", 5)) {
                report(c, line, "reference",
                       "identifier `%s`: a candidate must not use the "
                       "reference implementation or kevo's harness",
                       t);
            }
        } else if (k == CXToken_Literal && t[0] == '"' && strcasestr(t, "reference")) {
            report(c, line, "reference", "string %s mentions the reference implementation", t);
        } else if (k == CXToken_Punctuation && !strcmp(t, "#") && i + 2 < n) {
            CXString a = clang_getTokenSpelling(tu, toks[i + 1]);
            CXString b = clang_getTokenSpelling(tu, toks[i + 2]);
            const char *d = clang_getCString(a), *w = clang_getCString(b);
            if (!strcmp(d, "include") || !strcmp(d, "include_next") || !strcmp(d, "import")) {
                report(c, line, "include",
                       "#%s is not allowed: an OpenCL candidate is one "
                       "self-contained file (the built-ins need no header)",
                       d);
            } else if (!strcmp(d, "pragma") &&
                       (!strcmp(w, "weak") || !strcmp(w, "init") || !strcmp(w, "fini"))) {
                report(c, line, "constructor", "#pragma %s is not allowed", w);
            } else if (!strcmp(d, "pragma") && !strcmp(w, "OPENCL") && i + 4 < n) {
                CXString e = clang_getTokenSpelling(tu, toks[i + 3]);
                CXString x = clang_getTokenSpelling(tu, toks[i + 4]);
                if (!strcmp(clang_getCString(e), "EXTENSION") &&
                    !extension_allowed(clang_getCString(x)))
                    report(c, line, "extension",
                           "extension `%s` is not allowed (allowed: "
                           "cl_khr_fp64, cl_khr_fp16, the cl_khr_*_atomics, "
                           "cl_khr_byte_addressable_store)",
                           clang_getCString(x));
                clang_disposeString(e);
                clang_disposeString(x);
            }
            clang_disposeString(a);
            clang_disposeString(b);
        }
        clang_disposeString(s);
    }
    clang_disposeTokens(tu, toks, n);
}

int kevo_backend__gate_opencl(int *violations, kevo_buf *findings, const kevo_task *task,
                         const char *source)
{
    (void)task;
    *violations = 0;
    /* OpenCL C 1.2 with the built-ins of opencl-c.h as a header (cparse):
     * clang's lazy declaration of built-ins would place them at the call
     * site, where they would look like the candidate's own declarations. */
    kevo_cparse_options o = {.lang = KEVO_CPARSE_OPENCL12,
                             .flags = KEVO_CPARSE_TOLERANT | KEVO_CPARSE_PREPROCESSING,
                             .file_name = "candidate.cl"};
    kevo_cparse_tu *ptu = NULL;
    int error = kevo_cparse_parse(&ptu, source, strlen(source), &o);
    if (error < 0)
        return error;
    ctx c = {findings, 0, kevo_cparse_main_file(ptu)};
    clang_visitChildren(clang_getTranslationUnitCursor(kevo_cparse_cx(ptu)), visit, &c);
    scan_tokens(&c, kevo_cparse_cx(ptu));
    *violations = c.violations;
    kevo_cparse_free(ptu);
    return 0;
}
