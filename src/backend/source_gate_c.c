/*
 * backend/source_gate_c.c - the static anti-hacking gate for C candidates (and,
 * with a few CUDA rules added, for CUDA candidates), on the libclang-14 C API (the AST after preprocessing, so macro tricks are
 * seen through, plus libclang's tokens for attributes and asm).
 *
 * Rules (each rejection names the rule and the line):
 *   include      only allow-listed system headers
 *   entry-point  no `main`
 *   libc-symbol  no definitions of libc/libm/timer functions (clock_gettime...)
 *   constructor  no constructor/destructor/section/alias/ifunc attributes
 *   forbidden-call  no process, file, network, thread, signal, dynamic
 *                loading, timer or environment APIs (calls or addresses)
 *   asm-syscall  no inline asm that makes system calls
 *   reference    no mention of the reference implementation or the harness
 * CUDA candidates (parsed as CUDA host code) also get: headers from a
 * CUDA allow-list; no host callbacks or device resets (cudaLaunchHostFunc,
 * cudaStreamAddCallback, cudaDeviceReset, cudaSetDevice...); global-init:
 * no file-scope object initialised by a call (C++ constructors run before
 * the harness locks itself down).
 * The runtime defences (seccomp, symbol checks of the object, rlimits)
 * stand behind this gate; it exists to explain a rejection early and in
 * words, not to be the only wall.
 */
#include "source_gate.h"
#include "kevo/cparse.h"
#include "elf_inspect.h"
#include "toolchain.h"
#include "kevo/sandbox.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <clang-c/Index.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const allowed_headers[] = {
    "math.h", "stdint.h", "stddef.h", "stdbool.h", "string.h", "stdlib.h", "float.h",
    "limits.h", "omp.h", "inttypes.h", "tgmath.h", "stdalign.h", "complex.h", NULL};

typedef struct {
    const char *name;
    const char *why;
} denied;

static const denied denied_calls[] = {
    {"fork", "process creation"}, {"vfork", "process creation"}, {"clone", "process creation"},
    {"clone3", "process creation"}, {"execve", "process creation"}, {"execv", "process creation"},
    {"execvp", "process creation"}, {"execvpe", "process creation"}, {"execl", "process creation"},
    {"execlp", "process creation"}, {"execle", "process creation"}, {"fexecve", "process creation"},
    {"system", "process creation"}, {"popen", "process creation"}, {"posix_spawn", "process creation"},
    {"posix_spawnp", "process creation"}, {"daemon", "process creation"},
    {"socket", "networking"}, {"socketpair", "networking"}, {"connect", "networking"},
    {"bind", "networking"}, {"listen", "networking"}, {"accept", "networking"},
    {"accept4", "networking"}, {"send", "networking"}, {"sendto", "networking"},
    {"sendmsg", "networking"}, {"recv", "networking"}, {"recvfrom", "networking"},
    {"recvmsg", "networking"}, {"getaddrinfo", "networking"}, {"gethostbyname", "networking"},
    {"open", "file access"}, {"open64", "file access"}, {"openat", "file access"},
    {"creat", "file access"}, {"fopen", "file access"}, {"fopen64", "file access"},
    {"freopen", "file access"}, {"fdopen", "file access"}, {"opendir", "file access"},
    {"read", "file access"}, {"write", "file access"}, {"pread", "file access"},
    {"pwrite", "file access"}, {"readlink", "file access"}, {"unlink", "file access"},
    {"remove", "file access"}, {"rename", "file access"}, {"mkdir", "file access"},
    {"chdir", "file access"}, {"stat", "file access"}, {"access", "file access"},
    {"dlopen", "dynamic loading"}, {"dlsym", "dynamic loading"}, {"dlmopen", "dynamic loading"},
    {"syscall", "raw system calls"}, {"ptrace", "process control"}, {"prctl", "process control"},
    {"ioctl", "device control"}, {"pthread_create", "threads outliving the call"},
    {"pthread_detach", "threads outliving the call"}, {"thrd_create", "threads outliving the call"},
    {"kill", "signals"}, {"raise", "signals"}, {"signal", "signals"}, {"sigaction", "signals"},
    {"alarm", "signals"}, {"setitimer", "timers"}, {"clock_gettime", "timers"},
    {"gettimeofday", "timers"}, {"time", "timers"}, {"clock", "timers"}, {"times", "timers"},
    {"getrusage", "timers"}, {"omp_get_wtime", "timers"}, {"sleep", "timers"},
    {"usleep", "timers"}, {"nanosleep", "timers"}, {"mmap", "memory mapping"},
    {"mprotect", "memory mapping"}, {"munmap", "memory mapping"}, {"getenv", "environment"},
    {"setenv", "environment"}, {"putenv", "environment"}, {"exit", "leaving the process"},
    {"_exit", "leaving the process"}, {"_Exit", "leaving the process"},
    {"abort", "leaving the process"}, {"atexit", "leaving the process"},
    {"longjmp", "non-local jumps"}, {"setjmp", "non-local jumps"}, {NULL, NULL}};

static const char *const timer_and_libc_defs[] = {
    "clock_gettime", "gettimeofday", "time", "clock", "times", "getrusage", "omp_get_wtime",
    "printf", "puts", "exit", "abort", "write", "read", "open", "rand", "srand", NULL};

static const char *const banned_attributes[] = {
    "constructor", "destructor", "section", "alias", "ifunc", "weakref", "init_priority",
    "__constructor__", "__destructor__", "__section__", "__alias__", "__ifunc__", NULL};

static const char *const cuda_headers[] = {
    "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "mma.h", "math.h", "stdint.h", "stddef.h", "stdbool.h",
    "float.h", "limits.h", "cstdint", "cmath", "cstddef", "cfloat", "climits", NULL};

static const denied cuda_denied_calls[] = {
    {"cudaLaunchHostFunc", "host callbacks"}, {"cudaStreamAddCallback", "host callbacks"},
    {"cudaDeviceReset", "device control"}, {"cudaSetDevice", "device control"},
    {"cudaSetDeviceFlags", "device control"}, {"cudaDeviceSetLimit", "device control"},
    {"cudaIpcGetMemHandle", "inter-process memory"}, {"cudaIpcOpenMemHandle", "inter-process memory"},
    {"cudaProfilerStart", "profiler control"}, {"cudaProfilerStop", "profiler control"},
    {"cudaEventElapsedTime", "timers"}, {"cudaThreadExit", "device control"}, {NULL, NULL}};

typedef struct {
    const kevo_task *task;
    kevo_buf *findings;
    int violations;
    CXFile main_file;
    bool cuda;
} ctx;

static void report(ctx *c, unsigned line, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(ctx *c, unsigned line, const char *rule, const char *fmt, ...)
{
    /* One line per finding; the same text twice is reported once. */
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

static unsigned cursor_line(CXCursor cur, CXFile *file)
{
    unsigned line = 0;
    CXFile f = NULL;
    clang_getExpansionLocation(clang_getCursorLocation(cur), &f, &line, NULL, NULL);
    if (file)
        *file = f;
    return line;
}

static bool header_allowed(const ctx *c, const char *name)
{
    if (c->cuda) {
        for (const char *const *h = cuda_headers; *h; h++)
            if (!strcmp(*h, name))
                return true;
        return false;
    }
    for (const char *const *h = allowed_headers; *h; h++)
        if (!strcmp(*h, name))
            return true;
    size_t n = strlen(name);
    return n > 8 && !strcmp(name + n - 8, "intrin.h") && !strchr(name, '/');
}

static const denied *find_denied(const ctx *c, const char *name)
{
    for (const denied *d = denied_calls; d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    for (const denied *d = cuda_denied_calls; c->cuda && d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

/* CUDA: a file-scope variable whose initialiser calls something (a C++
 * constructor or function) runs code before main. */
static enum CXChildVisitResult find_call(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(cur);
    if (k == CXCursor_CallExpr || k == CXCursor_LambdaExpr) {
        *(bool *)data = true;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult visit(CXCursor cur, CXCursor parent, CXClientData data)
{
    ctx *c = data;
    CXFile file;
    unsigned line = cursor_line(cur, &file);
    enum CXCursorKind kind = clang_getCursorKind(cur);
    if (kind == CXCursor_InclusionDirective) {
        if (!clang_File_isEqual(file, c->main_file))
            return CXChildVisit_Continue;
        CXString s = clang_getCursorSpelling(cur);
        const char *name = clang_getCString(s);
        if (!header_allowed(c, name) && c->cuda)
            report(c, line, "include", "<%s> is not allowed (allowed: cuda_runtime.h, "
                   "cuda_fp16.h, cuda_bf16.h, cooperative_groups.h, mma.h and the C maths and "
                   "integer headers)", name);
        else if (!header_allowed(c, name))
            report(c, line, "include", "<%s> is not allowed (allowed: math.h, stdint.h, "
                   "stddef.h, stdbool.h, string.h, stdlib.h, float.h, limits.h, omp.h, "
                   "*intrin.h)", name);
        clang_disposeString(s);
        return CXChildVisit_Continue;
    }
    /* Only judge code written in the candidate, not system headers. */
    if (!file || !clang_File_isEqual(file, c->main_file))
        return CXChildVisit_Continue;
    if (kind == CXCursor_FunctionDecl && clang_isCursorDefinition(cur)) {
        CXString s = clang_getCursorSpelling(cur);
        const char *name = clang_getCString(s);
        bool libc = false;
        for (const char *const *t = timer_and_libc_defs; *t; t++)
            libc |= !strcmp(*t, name);
        if (!strcmp(name, "main"))
            report(c, line, "entry-point", "defines `%s`; a candidate defines only the kernel "
                   "(and static helpers)", name);
        else if (libc || find_denied(c, name) || kevo_elf_symbol_allowed(name))
            report(c, line, "libc-symbol", "defines `%s`, a C library function; give helpers "
                   "their own names", name);
        clang_disposeString(s);
    } else if (c->cuda && kind == CXCursor_VarDecl &&
               (clang_getCursorKind(clang_getCursorSemanticParent(cur)) ==
                    CXCursor_TranslationUnit ||
                clang_getCursorKind(clang_getCursorSemanticParent(cur)) == CXCursor_Namespace)) {
        bool calls = false;
        clang_visitChildren(cur, find_call, &calls);
        if (calls) {
            CXString s = clang_getCursorSpelling(cur);
            report(c, line, "global-init", "`%s` is initialised by a call at file scope: code "
                   "that runs before the kernel is not allowed", clang_getCString(s));
            clang_disposeString(s);
        }
    } else if (kind == CXCursor_CallExpr || kind == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(cur);
        if (!clang_Cursor_isNull(ref) && clang_getCursorKind(ref) == CXCursor_FunctionDecl) {
            CXString s = clang_getCursorSpelling(ref);
            const char *name = clang_getCString(s);
            const denied *d = find_denied(c, name);
            if (d) {
                kevo_buf b = {0};
                kevo_buf_printf(&b, "uses `%s` (%s is not allowed in a kernel)", name, d->why);
                report(c, line, "forbidden-call", "%s", b.ptr);
                kevo_buf_free(&b);
            }
            if (!strncmp(name, "kevo_", 5))
                report(c, line, "reference", "uses `%s`, part of kevo's harness", name);
            clang_disposeString(s);
        }
    }
    return CXChildVisit_Recurse;
}

/* Assembler directives in an asm string (".byte", ".incbin", ".section"...):
 * they can embed files read at compile time or hand-assembled syscalls. */
static bool asm_directive(const char *lit)
{
    for (const char *p = strchr(lit, '.'); p; p = strchr(p + 1, '.')) {
        const char *q = p + 1;
        if (!((*q >= 'a' && *q <= 'z') || *q == '_'))
            continue;
        /* a directive starts a statement: after the opening quote, a newline
         * escape, a ';' or whitespace that follows one of those */
        const char *b = p;
        while (b > lit && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b == lit + 1 || (b > lit && (b[-1] == '"' || b[-1] == ';')) ||
            (b > lit + 1 && b[-2] == '\\' && (b[-1] == 'n' || b[-1] == 't')))
            return true;
    }
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
                /* inspect identifiers up to the closing "))" */
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
                            report(c, line, "constructor", "attribute `%s` is not allowed: no "
                                   "code may run outside the kernel call or change linkage", u);
                    clang_disposeString(s2);
                    if (depth <= 0)
                        break;
                }
            } else if (!strcmp(t, "asm") || !strcmp(t, "__asm__") || !strcmp(t, "__asm")) {
                for (unsigned j = i + 1; j < n; j++) {
                    CXString s2 = clang_getTokenSpelling(tu, toks[j]);
                    const char *u = clang_getCString(s2);
                    bool end = !strcmp(u, ";");
                    if (clang_getTokenKind(toks[j]) == CXToken_Literal &&
                        (strstr(u, "syscall") || strstr(u, "sysenter") || strstr(u, "int $0x80") ||
                         strstr(u, "int 0x80") || strstr(u, "svc")))
                        report(c, line, "asm-syscall", "inline asm makes a system call (%s)", u);
                    if (clang_getTokenKind(toks[j]) == CXToken_Literal && asm_directive(u))
                        report(c, line, "asm-directive", "inline asm with an assembler "
                               "directive (%.60s): raw bytes, sections and included files are "
                               "not allowed", u);
                    clang_disposeString(s2);
                    if (end)
                        break;
                }
            } else if (strcasestr(t, "reference") || !strncmp(t, "kevo_", 5)) {
                report(c, line, "reference", "identifier `%s`: a candidate must not use the "
                       "reference implementation or kevo's harness", t);
            }
        } else if (k == CXToken_Literal && t[0] == '"' && strcasestr(t, "reference")) {
            report(c, line, "reference", "string %s mentions the reference implementation", t);
        } else if (k == CXToken_Punctuation && !strcmp(t, "#")) {
            /* #pragma weak / #pragma init style linkage tricks */
            if (i + 2 < n) {
                CXString a = clang_getTokenSpelling(tu, toks[i + 1]);
                CXString b = clang_getTokenSpelling(tu, toks[i + 2]);
                if (!strcmp(clang_getCString(a), "pragma") &&
                    (!strcmp(clang_getCString(b), "weak") || !strcmp(clang_getCString(b), "init") ||
                     !strcmp(clang_getCString(b), "fini")))
                    report(c, line, "constructor", "#pragma %s is not allowed",
                           clang_getCString(b));
                clang_disposeString(a);
                clang_disposeString(b);
            }
        }
        clang_disposeString(s);
    }
    clang_disposeTokens(tu, toks, n);
}

/* ---- the translation unit as gcc sees it ----
 * libclang parses with clang's preprocessor, so code under `#ifndef
 * __clang__` or a construct gcc alone accepts is invisible to it. This pass
 * runs gcc's own preprocessor with the compile's flags (sandboxed, as the
 * compiler runs) and judges its output: every header as gcc resolves it,
 * and the candidate's own lines after every macro, stringification, token
 * paste and digraph has been applied. */

static bool system_header_path(const char *path)
{
    return !strncmp(path, "/usr/include/", 13) || !strncmp(path, "/usr/lib/gcc/", 13);
}

/* -H prints one line per header: depth dots, a space, the path. A header
 * gcc could not find (the compiler's minimal root has no /etc/passwd, no
 * other build folder) is an include all the same: "...: fatal error: NAME:
 * No such file or directory". */
static void check_headers(ctx *c, const char *output)
{
    for (const char *p = output; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *fe = memmem(p, len, "fatal error: ", 13);
        const char *nf = fe ? memmem(fe, (size_t)(p + len - fe), ": No such file or directory",
                                     27)
                            : NULL;
        if (fe && nf && nf > fe + 13) {
            char name[512];
            snprintf(name, sizeof(name), "%.*s", (int)(nf - fe - 13), fe + 13);
            if (strchr(name, '/') || !header_allowed(c, name))
                report(c, 0, "include", "`%s` is not an allowed system header (as gcc resolves "
                       "the includes)", name);
        }
        size_t depth = 0;
        while (depth < len && p[depth] == '.')
            depth++;
        if (depth > 0 && depth < len && p[depth] == ' ') {
            char path[512];
            snprintf(path, sizeof(path), "%.*s", (int)(len - depth - 1), p + depth + 1);
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            if (depth == 1 && (!strcmp(path, KEVO_C_PROTO_FILE) ||
                               !strcmp(path, "./" KEVO_C_PROTO_FILE)))
                ; /* kevo's forced prototype header */
            else if (!system_header_path(path))
                report(c, 0, "include", "the compiler would read `%s`, which is not a system "
                       "header (includes may name only the allowed system headers)", path);
            else if (depth == 1 && !header_allowed(c, base))
                report(c, 0, "include", "<%s> is not allowed (as gcc resolves the includes)",
                       base);
        }
        p += len + (eol ? 1 : 0);
    }
}

static bool ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* Identifiers of one line of preprocessed C, string and character literals
 * skipped; calls fn(c, line, ident, len, state). */
static void scan_pp_line(ctx *c, unsigned line, const char *p, size_t len, int *attr_depth)
{
    const char *end = p + len;
    while (p < end) {
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (p < end && *p != q)
                p += *p == '\\' && p + 1 < end ? 2 : 1;
            p++;
            continue;
        }
        if (*attr_depth > 0 && (*p == '(' || *p == '['))
            (*attr_depth)++;
        else if (*attr_depth > 0 && (*p == ')' || *p == ']'))
            (*attr_depth)--;
        if (*p == '[' && p + 1 < end && p[1] == '[' && *attr_depth == 0) {
            *attr_depth = 1; /* [[gnu::...]] */
            p++;
            continue;
        }
        if (!ident_char(*p) || (isdigit((unsigned char)*p))) {
            if (isdigit((unsigned char)*p))
                while (p < end && ident_char(*p))
                    p++;
            else
                p++;
            continue;
        }
        const char *s = p;
        while (p < end && ident_char(*p))
            p++;
        size_t n = (size_t)(p - s);
        char word[64];
        if (n >= sizeof(word))
            continue;
        memcpy(word, s, n);
        word[n] = 0;
        if (!strcmp(word, "asm") || !strcmp(word, "__asm__") || !strcmp(word, "__asm"))
            report(c, line, "asm", "assembly is not allowed in a C kernel (found after "
                   "preprocessing); write C, with vector extensions or intrinsics for SIMD");
        else if (!strcmp(word, "__attribute__") || !strcmp(word, "__attribute"))
            *attr_depth = -1; /* armed: the next '(' opens it */
        else if (*attr_depth != 0) {
            const char *w = word;
            char bare[64];
            size_t k = 0;
            while (*w == '_')
                w++;
            while (*w && k < sizeof(bare) - 1)
                bare[k++] = *w++;
            while (k && bare[k - 1] == '_')
                k--;
            bare[k] = 0;
            for (const char *const *b = banned_attributes; *b; b++)
                if (!strcmp(bare, *b))
                    report(c, line, "constructor", "attribute `%s` is not allowed (found after "
                           "preprocessing): no code may run outside the kernel call or "
                           "change linkage", bare);
        }
        if (*attr_depth < 0) { /* armed __attribute__: wait for its '(' */
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end && *p == '(') {
                *attr_depth = 1;
                p++;
            }
        }
    }
}

/* Walk the preprocessed text; only lines that came from the candidate
 * (line markers naming it) are judged. */
static void check_preprocessed(ctx *c, const char *text, const char *main_name)
{
    bool in_main = false;
    unsigned line = 0;
    int attr_depth = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > 2 && p[0] == '#' && p[1] == ' ' && isdigit((unsigned char)p[2])) {
            line = (unsigned)strtoul(p + 2, NULL, 10);
            const char *q = memchr(p, '"', len);
            in_main = q && (size_t)(p + len - q) > strlen(main_name) + 1 &&
                      !strncmp(q + 1, main_name, strlen(main_name)) &&
                      q[1 + strlen(main_name)] == '"';
        } else {
            if (in_main) {
                const char *t = p;
                while (t < p + len && (*t == ' ' || *t == '\t'))
                    t++;
                if (!strncmp(t, "#pragma", 7)) {
                    const char *w = t + 7;
                    while (*w == ' ' || *w == '\t')
                        w++;
                    if (!strncmp(w, "weak", 4) || !strncmp(w, "init", 4) ||
                        !strncmp(w, "fini", 4) || !strncmp(w, "GCC push_options", 16) ||
                        !strncmp(w, "GCC optimize", 12) || !strncmp(w, "GCC target", 10))
                        report(c, line, "constructor", "#pragma %.20s is not allowed", w);
                } else {
                    scan_pp_line(c, line, p, len, &attr_depth);
                }
            }
            line++;
        }
        p += len + (eol ? 1 : 0);
    }
}

static int gcc_view(ctx *c, const char *source)
{
    char *dir = NULL, *out = NULL, *text = NULL, *ipath = NULL, *proto = NULL;
    char **hint = NULL;
    kevo_buf protoh = {0};
    int error = kevo_mkdtemp(&dir, "kevo-pp-");
    if (error < 0)
        return error;
    /* The build's own command and directory contents (c_backend.c): the
     * hint's flags (so __FAST_MATH__, _OPENMP... are defined as they will
     * be), the forced prototype header, the same file names. A hint that
     * does not parse is the compile gate's to reject; here it adds none. */
    if (kevo_cflags_parse(&hint, source) < 0)
        hint = NULL;
    if ((error = kevo_c_proto_header(&proto, &protoh, c->task)) < 0 ||
        (error = kevo_tool_write(dir, KEVO_C_KERNEL_FILE, source)) < 0 ||
        (error = kevo_tool_write(dir, KEVO_C_PROTO_FILE, kevo_buf_cstr(&protoh))) < 0 ||
        (error = kevo_sandbox_prepare_dir(dir)) < 0)
        goto done;
    const char *argv[48];
    bool openmp;
    size_t n = kevo_c_compile_flags(argv, 40, hint, &openmp);
    argv[n++] = "-E";
    argv[n++] = "-H";
    argv[n++] = KEVO_C_KERNEL_FILE;
    argv[n++] = "-o";
    argv[n++] = "kernel.i";
    argv[n] = NULL;
    kevo_proc_status st;
    if ((error = kevo_tool_run_output(&st, &out, dir, argv, NULL, KEVO_TOOL_TIMEOUT_S)) < 0)
        goto done;
    check_headers(c, out ? out : "");
    ipath = kevo_path_join(dir, "kernel.i");
    /* preprocessing errors (a missing header, #error) are the compile gate's */
    if (st.kind == KEVO_EXIT_NORMAL && st.exit_code == 0 &&
        kevo_file_read(&text, NULL, ipath) == 0)
        check_preprocessed(c, text, KEVO_C_KERNEL_FILE);
done:
    free(out);
    free(text);
    free(ipath);
    free(proto);
    kevo_strv_free(hint);
    kevo_buf_free(&protoh);
    kevo_rmtree(dir);
    free(dir);
    return error;
}

static int analyse(int *violations, kevo_buf *findings, const kevo_task *task,
                   const char *source, bool cuda)
{
    *violations = 0;
    /* the one front end: C11 with OpenMP, or CUDA host code against the
     * installed toolkit; errors in headers do not matter here */
    kevo_cparse_options o = {0};
    o.lang = cuda ? KEVO_CPARSE_CUDA_HOST : KEVO_CPARSE_C11;
    o.flags = KEVO_CPARSE_TOLERANT | KEVO_CPARSE_PREPROCESSING | (cuda ? 0 : KEVO_CPARSE_OPENMP);
    o.file_name = cuda ? "candidate.cu" : "candidate.c";
    kevo_cparse_tu *ptu = NULL;
    int error = kevo_cparse_parse(&ptu, source, strlen(source), &o);
    if (error < 0)
        return error;
    CXTranslationUnit tu = kevo_cparse_cx(ptu);
    ctx c = {task, findings, 0, kevo_cparse_main_file(ptu), cuda};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, &c);
    scan_tokens(&c, tu);
    error = cuda ? 0 : gcc_view(&c, source);
    *violations = c.violations;
    kevo_cparse_free(ptu);
    return error;
}

int kevo_backend__gate_c(int *violations, kevo_buf *findings, const kevo_task *task,
                    const char *source)
{
    return analyse(violations, findings, task, source, false);
}

int kevo_backend__gate_cuda(int *violations, kevo_buf *findings, const kevo_task *task,
                       const char *source)
{
    return analyse(violations, findings, task, source, true);
}
