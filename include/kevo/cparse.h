/*
 * kevo/cparse.h - the one libclang front end of kevo: the index, the clang
 * arguments of each source language kevo reads (a C11 kernel, OpenCL C 1.2
 * with clang's opencl-c.h built-ins, the host side of a CUDA file), the
 * clang resource directory and system include paths (fixed by CMake at
 * configure time, never spelled in code), in-memory ("unsaved") parsing,
 * the first error of a parse in words, a function's prototype, the tokens
 * of a source range with byte offsets, and an edit list of byte-offset
 * replacements.
 *
 * Who uses it: the recipe model (src/recipe/model.c), the OpenCL draft
 * (backend/opencl_draft.c) and the anti-hacking gates, which walk the translation
 * unit with the libclang C API themselves (kevo_cparse_cx()); `kevo tasks
 * new` reads a user's function's prototype (kevo_cparse_prototype_read()).
 *
 * Offsets are byte offsets into the parsed source; a range is half-open
 * [start, end).
 *
 * Errors: 0 ok; KEVO_EINVAL for bad arguments or a source with errors
 * (kevo_cparse_errors()); KEVO_EINFRA when libclang itself fails;
 * KEVO_ENOMEM. The message is in kevo_error_last().
 *
 * Must not: know what a kernel, a recipe or a gate is; run a compiler.
 */
#ifndef KEVO_CPARSE_H
#define KEVO_CPARSE_H

#include "kevo/common.h"

#include <clang-c/Index.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The language of the main file, and with it clang's arguments. */
typedef enum kevo_cparse_lang {
    /* `-x c -std=gnu11 -resource-dir R -idirafter <multiarch> -idirafter
     * /usr/include` */
    KEVO_CPARSE_C11 = 0,
    /* `-x cl -cl-std=CL1.2 -cl-no-stdinc -include R/include/opencl-c.h`:
     * every built-in is declared in a header, so a call resolves to a
     * built-in or to a function of the file */
    KEVO_CPARSE_OPENCL12,
    /* `-x cuda --cuda-host-only --cuda-path=P --cuda-gpu-arch=sm_80
     * -nocudalib -std=c++17 -Wno-unknown-cuda-version` */
    KEVO_CPARSE_CUDA_HOST
} kevo_cparse_lang;

/* Options of a parse (kevo_cparse_options.flags). */
enum {
    /* -fopenmp: OpenMP directives are parsed (libclang then hides the loops
     * under them inside CapturedStmts it does not descend into) */
    KEVO_CPARSE_OPENMP = 1u << 0,
    /* -D_OPENMP=201511 -Wno-unknown-pragmas: `#ifdef _OPENMP` code and
     * <omp.h> are seen, the pragmas stay text and the loops stay visible */
    KEVO_CPARSE_OPENMP_MACRO = 1u << 1,
    /* -Wno-everything -ferror-limit=0: read past any number of errors */
    KEVO_CPARSE_TOLERANT = 1u << 2,
    /* keep the macro definitions and expansions as cursors
     * (CXTranslationUnit_DetailedPreprocessingRecord) */
    KEVO_CPARSE_PREPROCESSING = 1u << 3
};

/* An in-memory file: the main file, or a header it includes. */
typedef struct kevo_cparse_file {
    const char *name;
    const char *text;
    size_t len;
} kevo_cparse_file;

typedef struct kevo_cparse_options {
    kevo_cparse_lang lang;
    unsigned flags;        /* KEVO_CPARSE_* */
    const char *file_name; /* the main file's name; NULL: kevo_candidate.c / .cl / .cu */
    /* appended after kevo's arguments (e.g. "-include", "/x/prelude.h") */
    const char *const *extra_args;
    size_t n_extra_args;
    /* more in-memory files (headers the extra arguments or the source name) */
    const kevo_cparse_file *extra_files;
    size_t n_extra_files;
} kevo_cparse_options;

/* A parsed source: its translation unit and index. */
typedef struct kevo_cparse_tu kevo_cparse_tu;

/* The clang resource directory CMake found (`clang -print-resource-dir`).
 * Static string. */
const char *kevo_cparse_resource_dir(void);

/* The arguments a parse with `opts` passes to clang, in order: fills
 * out[0..cap) and returns how many there are (possibly more than cap).
 * Static strings, or borrowed from opts. */
size_t kevo_cparse_args(const char **out, size_t cap, const kevo_cparse_options *opts);

/* Parse `source` (len bytes, not necessarily NUL-terminated) as an unsaved
 * file with `opts` (NULL: C11, no flags). A source with errors still gives
 * a translation unit (clang keeps going): ask kevo_cparse_errors(). *out is
 * the caller's, freed with kevo_cparse_free(); it borrows `source` and the
 * strings of `opts`, which must outlive it. KEVO_EINVAL for a NULL source or
 * one too large for 32-bit offsets; KEVO_EINFRA when libclang fails. */
int kevo_cparse_parse(kevo_cparse_tu **out, const char *source, size_t len,
                      const kevo_cparse_options *opts);

/* Free a parse. Accepts NULL. */
void kevo_cparse_free(kevo_cparse_tu *tu);

/* 0 when the parse has no error, else KEVO_EINVAL with the first one:
 * "source does not parse: line L:C: <clang's message>". */
int kevo_cparse_errors(const kevo_cparse_tu *tu);

/* The libclang translation unit (borrowed: do not dispose). */
CXTranslationUnit kevo_cparse_cx(const kevo_cparse_tu *tu);

/* The main file (for clang_getLocation and friends), and its name. */
CXFile kevo_cparse_main_file(const kevo_cparse_tu *tu);
const char *kevo_cparse_file_name(const kevo_cparse_tu *tu);

/* The parsed source and its length (borrowed). */
const char *kevo_cparse_source(const kevo_cparse_tu *tu, size_t *len);

/* The definition of function `name` in the main file. KEVO_EINVAL "kernel
 * function 'NAME' is not defined in the source" (or "is declared but not
 * defined") when there is none. */
int kevo_cparse_function(CXCursor *out, const kevo_cparse_tu *tu, const char *name);

/* The byte range of a cursor's extent (expansion locations). out_in_main
 * (may be NULL) tells whether both ends lie in the main file. */
void kevo_cparse_extent(unsigned *out_start, unsigned *out_end, bool *out_in_main, CXCursor c);

/* Token kinds, the values of CXTokenKind. */
enum {
    KEVO_CTOK_PUNCT = 0,
    KEVO_CTOK_KEYWORD = 1,
    KEVO_CTOK_IDENT = 2,
    KEVO_CTOK_LITERAL = 3,
    KEVO_CTOK_COMMENT = 4
};

/* What a token's identifier declares. */
enum { KEVO_CDECL_NONE = 0, KEVO_CDECL_VAR, KEVO_CDECL_PARAM };

/* One token of a source range. */
typedef struct kevo_cparse_token {
    unsigned start, end; /* byte offsets (spelling locations) */
    unsigned char kind;  /* KEVO_CTOK_* */
    unsigned char decl;  /* KEVO_CDECL_*: the declaring name of a variable */
    bool pointer;        /* decl: the variable's canonical type is a pointer */
    bool directive;      /* part of a preprocessor line (#include, #pragma, ...) */
    CXCursor cursor;     /* what libclang annotates it with */
} kevo_cparse_token;

/* The tokens of cursor c's extent (a function definition, say), in source
 * order; a null cursor (clang_getNullCursor()) means the whole main file.
 * Comments are tokens of kind KEVO_CTOK_COMMENT only where libclang
 * returns them. *out is malloc'd (free()); *out_n may be 0. */
int kevo_cparse_tokens(kevo_cparse_token **out, size_t *out_n, const kevo_cparse_tu *tu,
                       CXCursor c);

/* --- a function's prototype (cparse/prototype.c) --------------------------- */

/* What a type is, as far as a caller that maps C arguments needs to know. */
typedef enum kevo_ctype_kind {
    KEVO_CTYPE_VOID = 0,
    KEVO_CTYPE_INTEGER,  /* char, short, int, long, long long, _Bool, signed or not */
    KEVO_CTYPE_FLOATING, /* float, double, long double */
    KEVO_CTYPE_POINTER,  /* also an array parameter (C adjusts it to a pointer) */
    KEVO_CTYPE_RECORD,   /* struct or union */
    KEVO_CTYPE_FUNCTION, /* the pointee of a function pointer */
    KEVO_CTYPE_ARRAY,    /* the pointee of a pointer to an array (float (*x)[4]) */
    KEVO_CTYPE_OTHER     /* enum, complex, vector, ... */
} kevo_ctype_kind;

/* One type. */
typedef struct kevo_cparse_ctype {
    kevo_ctype_kind kind;
    char *spelling;  /* as written, qualifiers included ("const float *restrict") */
    char *canonical; /* the canonical type without its own qualifiers: typedefs
                        resolved ("int64_t" reads "long" on LP64, "size_t" "unsigned long") */
    bool is_const;   /* the type itself is const-qualified */
} kevo_cparse_ctype;

/* One parameter: its name (NULL when unnamed), its type and, for a pointer,
 * what it points to (pointee.kind KEVO_CTYPE_POINTER: a pointer to a
 * pointer; pointee.is_const: `const T *`). pointee is zeroed otherwise. */
typedef struct kevo_cparse_param {
    char *name;
    kevo_cparse_ctype type;
    kevo_cparse_ctype pointee;
} kevo_cparse_param;

/* A function's prototype as its definition in the main file gives it. */
typedef struct kevo_cparse_prototype {
    char *name;
    kevo_cparse_ctype result;
    bool variadic;  /* `...` */
    bool is_static; /* internal linkage: no other file can call it by name */
    kevo_cparse_param *params;
    size_t nparams;
    /* the byte offset of every token of the main file that names this
     * function (its declarations, its definition, calls, address taken), in
     * source order: what a rename edits */
    unsigned *name_offsets;
    size_t n_name_offsets;
} kevo_cparse_prototype;

/* The prototype of the function `name` defined in tu's main file. *out is
 * the caller's (kevo_cparse_prototype_free). KEVO_EINVAL as
 * kevo_cparse_function() when it is not defined there; KEVO_ENOMEM. */
int kevo_cparse_prototype_read(kevo_cparse_prototype **out, const kevo_cparse_tu *tu,
                               const char *name);

/* Free a prototype. Accepts NULL. */
void kevo_cparse_prototype_free(kevo_cparse_prototype *p);

/* --- an edit list ---------------------------------------------------------- */

/* Replace [start, end) of the original text with `text`; start == end
 * inserts. */
typedef struct kevo_cparse_edit {
    unsigned start, end;
    char *text; /* owned */
    size_t seq; /* recording order */
} kevo_cparse_edit;

/* Zero-initialise (`kevo_cparse_edits e = {0};`), add, apply, free. */
typedef struct kevo_cparse_edits {
    kevo_cparse_edit *v;
    size_t n, cap;
} kevo_cparse_edits;

/* Record an edit; the text is printf-formatted. KEVO_ERROR when end <
 * start, KEVO_ENOMEM. */
int kevo_cparse_edits_add(kevo_cparse_edits *e, unsigned start, unsigned end, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

/* Apply the edits to src[0..len) into a malloc'd *out. Every offset refers
 * to the original text, so the edits act as if applied back to front (no
 * edit shifts another); at one offset, insertions come first, then the
 * edits in the order they were recorded. KEVO_ERROR when an edit ends past
 * len or two edits overlap. */
int kevo_cparse_edits_apply(char **out, const kevo_cparse_edits *e, const char *src, size_t len);

/* Free the edits' texts and storage (the struct itself is the caller's);
 * leaves an empty list. Accepts NULL. */
void kevo_cparse_edits_free(kevo_cparse_edits *e);

#ifdef __cplusplus
}
#endif
#endif
