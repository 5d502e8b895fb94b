/*
 * cparse/tokens.c - the tokens of a range of the main file, with byte
 * offsets, the cursor libclang annotates each with, and what the
 * declaring name of a variable or parameter declares.
 *
 * Must not: interpret the tokens (which are a kernel's, which a recipe
 * edits): that is the caller's.
 */
#include "kevo/cparse.h"

#include <stdlib.h>
#include <string.h>

/* Whether cursor c (of token [s,e) of src) declares a variable at that
 * token: its location is the token and its name is the token's text. */
static bool declares_here(CXCursor c, const char *src, unsigned s, unsigned e)
{
    unsigned off = 0;
    clang_getSpellingLocation(clang_getCursorLocation(c), NULL, NULL, NULL, &off);
    if (off != s)
        return false;
    CXString name = clang_getCursorSpelling(c);
    const char *n = clang_getCString(name);
    bool same = n && strlen(n) == e - s && memcmp(n, src + s, e - s) == 0;
    clang_disposeString(name);
    return same;
}

static void describe(kevo_cparse_token *t, const kevo_cparse_tu *tu, CXToken tok, CXCursor c)
{
    CXTranslationUnit cx = kevo_cparse_cx(tu);
    CXSourceRange ext = clang_getTokenExtent(cx, tok);
    size_t len;
    const char *src = kevo_cparse_source(tu, &len);
    memset(t, 0, sizeof(*t));
    clang_getSpellingLocation(clang_getRangeStart(ext), NULL, NULL, NULL, &t->start);
    clang_getSpellingLocation(clang_getRangeEnd(ext), NULL, NULL, NULL, &t->end);
    t->kind = (unsigned char)clang_getTokenKind(tok);
    t->cursor = c;
    enum CXCursorKind k = clang_getCursorKind(c);
    t->directive = k == CXCursor_PreprocessingDirective;
    if (t->kind != KEVO_CTOK_IDENT || (k != CXCursor_VarDecl && k != CXCursor_ParmDecl) ||
        t->end > len || !declares_here(c, src, t->start, t->end))
        return;
    t->decl = k == CXCursor_ParmDecl ? KEVO_CDECL_PARAM : KEVO_CDECL_VAR;
    t->pointer = clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Pointer;
}

int kevo_cparse_tokens(kevo_cparse_token **out, size_t *out_n, const kevo_cparse_tu *tu,
                       CXCursor c)
{
    int error = 0;
    CXTranslationUnit cx = kevo_cparse_cx(tu);
    CXToken *toks = NULL;
    unsigned nt = 0;
    CXCursor *cur = NULL;
    kevo_cparse_token *v = NULL;

    *out = NULL;
    *out_n = 0;
    if (clang_Cursor_isNull(c))
        c = clang_getTranslationUnitCursor(cx);
    CXSourceRange range = clang_getCursorExtent(c);
    clang_tokenize(cx, range, &toks, &nt);
    if (nt == 0)
        goto done;
    cur = calloc(nt, sizeof(*cur));
    v = calloc(nt, sizeof(*v));
    if (!cur || !v) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory tokenizing a source");
        goto done;
    }
    clang_annotateTokens(cx, toks, nt, cur);
    for (unsigned i = 0; i < nt; i++)
        describe(&v[i], tu, toks[i], cur[i]);
    *out = v;
    *out_n = nt;
    v = NULL;
done:
    free(v);
    free(cur);
    if (toks)
        clang_disposeTokens(cx, toks, nt);
    return error;
}
