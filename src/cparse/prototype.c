/*
 * cparse/prototype.c - a function's prototype read from its definition:
 * the result type, each parameter's name, type and (for a pointer) pointee
 * with its constness, whether it is variadic, and where the main file names
 * the function (what a rename edits), whether it is static. Types come as
 * kinds plus their spellings as written and canonical (typedefs resolved).
 *
 * Must not: decide what a type means to kevo (a buffer, a size, an element
 * type): that is the caller's (`kevo tasks new` maps it to task params).
 */
#include "kevo/cparse.h"

#include <stdlib.h>
#include <string.h>

static kevo_ctype_kind kind_of(CXType t)
{
    switch (t.kind) {
    case CXType_Void: return KEVO_CTYPE_VOID;
    case CXType_Bool:
    case CXType_Char_U:
    case CXType_UChar:
    case CXType_Char16:
    case CXType_Char32:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_UInt128:
    case CXType_Char_S:
    case CXType_SChar:
    case CXType_WChar:
    case CXType_Short:
    case CXType_Int:
    case CXType_Long:
    case CXType_LongLong:
    case CXType_Int128: return KEVO_CTYPE_INTEGER;
    case CXType_Float:
    case CXType_Double:
    case CXType_LongDouble:
    case CXType_Half:
    case CXType_Float16:
    case CXType_Float128: return KEVO_CTYPE_FLOATING;
    case CXType_Pointer: return KEVO_CTYPE_POINTER;
    case CXType_Record: return KEVO_CTYPE_RECORD;
    case CXType_FunctionProto:
    case CXType_FunctionNoProto: return KEVO_CTYPE_FUNCTION;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: return KEVO_CTYPE_ARRAY;
    default: return KEVO_CTYPE_OTHER;
    }
}

static bool is_array(CXType t)
{
    return kind_of(t) == KEVO_CTYPE_ARRAY;
}

/* s with the qualifiers of the type itself removed: the leading ones of a
 * non-pointer ("const int" -> "int"), the ones after the last '*' of a
 * pointer ("float *const" -> "float *"). malloc'd. */
static char *unqualified(const char *s, bool pointer)
{
    static const char *const quals[] = {"const", "volatile", "restrict", NULL};
    char *r = strdup(s);
    if (!r)
        return NULL;
    if (pointer) {
        char *star = strrchr(r, '*');
        if (star)
            star[1] = '\0';
        return r;
    }
    char *p = r;
    for (bool again = true; again;) {
        again = false;
        for (const char *const *q = quals; *q; q++) {
            size_t n = strlen(*q);
            if (!strncmp(p, *q, n) && p[n] == ' ') {
                p += n + 1;
                again = true;
            }
        }
    }
    memmove(r, p, strlen(p) + 1);
    return r;
}

static char *spell(CXType t)
{
    CXString s = clang_getTypeSpelling(t);
    char *r = strdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

/* Fill *out from t; a parameter of array type reads as a pointer. */
static int describe(kevo_cparse_ctype *out, CXType t, bool param)
{
    CXType c = clang_getCanonicalType(t);
    out->kind = param && is_array(c) ? KEVO_CTYPE_POINTER : kind_of(c);
    out->is_const = clang_isConstQualifiedType(t) != 0;
    out->spelling = spell(t);
    char *canon = spell(c);
    out->canonical = canon ? unqualified(canon, c.kind == CXType_Pointer) : NULL;
    free(canon);
    if (!out->spelling || !out->canonical)
        return kevo_error_set(KEVO_ENOMEM, "out of memory reading a prototype");
    return 0;
}

static int describe_param(kevo_cparse_param *p, CXCursor arg)
{
    int error = 0;
    CXString s = clang_getCursorSpelling(arg);
    const char *n = clang_getCString(s);
    if (n && *n && !(p->name = strdup(n)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory reading a prototype");
    clang_disposeString(s);
    if (error < 0)
        return error;
    CXType t = clang_getCursorType(arg);
    if ((error = describe(&p->type, t, true)) < 0 || p->type.kind != KEVO_CTYPE_POINTER)
        return error;
    CXType c = clang_getCanonicalType(t);
    if (!is_array(c))
        return describe(&p->pointee, clang_getPointeeType(c), false);
    /* a canonical array type carries its elements' qualifiers itself
     * (`const float x[]` is a const-qualified float[]) */
    if ((error = describe(&p->pointee, clang_getArrayElementType(c), false)) < 0)
        return error;
    p->pointee.is_const |= clang_isConstQualifiedType(c) != 0;
    p->type.is_const = false;
    return 0;
}

/* Whether the token at [s, e) of src, annotated with cursor c, names fn. */
static bool names_function(CXCursor c, CXCursor fn, const char *src, unsigned s, unsigned e,
                           const char *name)
{
    if (e - s != strlen(name) || memcmp(src + s, name, e - s) != 0)
        return false;
    CXCursor ref = clang_getCursorKind(c) == CXCursor_FunctionDecl ? c
                                                                    : clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_FunctionDecl)
        return false;
    return clang_equalCursors(clang_getCanonicalCursor(ref), clang_getCanonicalCursor(fn)) != 0;
}

static int name_offsets(kevo_cparse_prototype *p, const kevo_cparse_tu *tu, CXCursor fn)
{
    kevo_cparse_token *toks = NULL;
    size_t n = 0, len = 0;
    const char *src = kevo_cparse_source(tu, &len);
    int error = kevo_cparse_tokens(&toks, &n, tu, clang_getNullCursor());
    if (error < 0)
        return error;
    if (n && !(p->name_offsets = calloc(n, sizeof(unsigned))))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory reading a prototype");
    for (size_t i = 0; i < n && error == 0; i++)
        if (toks[i].kind == KEVO_CTOK_IDENT && !toks[i].directive && toks[i].end <= len &&
            names_function(toks[i].cursor, fn, src, toks[i].start, toks[i].end, p->name))
            p->name_offsets[p->n_name_offsets++] = toks[i].start;
    free(toks);
    return error;
}

int kevo_cparse_prototype_read(kevo_cparse_prototype **out, const kevo_cparse_tu *tu,
                               const char *name)
{
    CXCursor fn;
    kevo_cparse_prototype *p = NULL;
    int error;

    *out = NULL;
    if ((error = kevo_cparse_function(&fn, tu, name)) < 0)
        return error;
    if (!(p = calloc(1, sizeof(*p))) || !(p->name = strdup(name))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory reading a prototype");
        goto done;
    }
    CXType ft = clang_getCursorType(fn);
    p->variadic = clang_isFunctionTypeVariadic(ft) != 0;
    p->is_static = clang_Cursor_getStorageClass(fn) == CX_SC_Static;
    if ((error = describe(&p->result, clang_getResultType(ft), false)) < 0)
        goto done;
    int n = clang_Cursor_getNumArguments(fn);
    if (n > 0 && !(p->params = calloc((size_t)n, sizeof(*p->params)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory reading a prototype");
        goto done;
    }
    for (int i = 0; i < n; i++, p->nparams++)
        if ((error = describe_param(&p->params[i], clang_Cursor_getArgument(fn, (unsigned)i))) <
            0) {
            p->nparams++;
            goto done;
        }
    if ((error = name_offsets(p, tu, fn)) < 0)
        goto done;
    *out = p;
    p = NULL;
done:
    kevo_cparse_prototype_free(p);
    return error;
}

static void ctype_free(kevo_cparse_ctype *t)
{
    free(t->spelling);
    free(t->canonical);
}

void kevo_cparse_prototype_free(kevo_cparse_prototype *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nparams; i++) {
        free(p->params[i].name);
        ctype_free(&p->params[i].type);
        ctype_free(&p->params[i].pointee);
    }
    free(p->params);
    ctype_free(&p->result);
    free(p->name);
    free(p->name_offsets);
    free(p);
}
