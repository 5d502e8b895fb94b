/*
 * recipe/model.c - builds the model of one kernel function (model.h) on
 * the shared libclang front end (kevo/cparse.h): parse the candidate as an
 * unsaved file, find the kernel's definition, tokenize and annotate it,
 * collect its variables, parameters, `for` loops (nesting, header parts,
 * canonical form) and the pragma lines above them.
 *
 * Why libclang is run without -fopenmp: with -fopenmp, clang wraps every loop
 * under an OpenMP directive in a CapturedStmt that the libclang C API does
 * not descend into, so those loops would be invisible. kevo parses with
 * KEVO_CPARSE_OPENMP_MACRO (-D_OPENMP, so `#ifdef _OPENMP` code and <omp.h>
 * are seen as under OpenMP, and -Wno-unknown-pragmas), and reads the pragma
 * lines as text. The compile gate is what checks that pragmas are well
 * formed.
 *
 * Dependencies run one way: this file uses the analyses (access.c: whether
 * a loop body writes its induction variable) and the token helpers
 * (tokens.c); neither calls back into the builder.
 *
 * Must not: edit the source or decide what a recipe does; spell clang's
 * arguments or paths (cparse owns them).
 */
#include "model.h"

#include "kevo/cparse.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANDIDATE_NAME "kevo_candidate.c"
#define OPENCL_PRELUDE_NAME "/kevo-unsaved/opencl_prelude.h"

/* An OpenCL C source is modelled as C: the recipes need its structure
 * (loops, variables, tokens), not OpenCL semantics, and clang's OpenCL mode
 * would need the 17k-line opencl-c.h on every parse. The prelude maps the
 * address-space and function qualifiers to nothing and declares the
 * work-item functions and scalar types kevo's ports use. */
static const char opencl_prelude[] =
    "#include <math.h>\n#include <float.h>\n"
    "#define __kernel\n#define kernel\n#define __global\n#define __local\n"
    "#define __constant const\n#define __private\n"
    "#define CLK_LOCAL_MEM_FENCE 1\n#define CLK_GLOBAL_MEM_FENCE 2\n"
    "typedef unsigned char uchar; typedef unsigned short ushort; typedef unsigned int uint;\n"
    "typedef unsigned long ulong; typedef unsigned long size_t;\n"
    "size_t get_global_id(uint); size_t get_local_id(uint); size_t get_group_id(uint);\n"
    "size_t get_global_size(uint); size_t get_local_size(uint); size_t get_num_groups(uint);\n"
    "void barrier(int);\n";

bool kevo_recipe_header_next(const char **cursor, kevo_header_line *out)
{
    const char *p = *cursor;
    if (!p || !*p)
        return false;
    const char *q = p;
    while (*q == ' ' || *q == '\t')
        q++;
    if (*q && *q != '\n' && strncmp(q, "//", 2) != 0)
        return false;
    const char *e = strchr(p, '\n');
    out->raw = p;
    out->raw_len = e ? (size_t)(e - p) + 1 : strlen(p);
    out->text = q;
    out->text_len = e ? (size_t)(e - q) : strlen(q);
    *cursor = p + out->raw_len;
    return true;
}

bool kevo_recipe_is_opencl(const char *source)
{
    /* an OpenCL candidate says what the host launches in its first lines */
    kevo_header_line h;
    for (const char *cur = source; kevo_recipe_header_next(&cur, &h);)
        if (!strncmp(h.text, "// kevo: launch ", 16))
            return true;
    return false;
}

/* ---- libclang plumbing -------------------------------------------------- */

static unsigned cx_offset(CXSourceLocation loc, bool *in_main)
{
    CXFile file;
    unsigned off = 0;
    clang_getExpansionLocation(loc, &file, NULL, NULL, &off);
    if (in_main)
        *in_main = clang_Location_isFromMainFile(loc) != 0;
    return off;
}

typedef struct raw_loop {
    unsigned start, end; /* extent */
    unsigned body_start; /* offset of the body statement */
    bool body_compound;
    bool ok;
} raw_loop;

typedef struct loop_ctx {
    raw_loop *v;
    size_t n, cap;
    int error;
} loop_ctx;

typedef struct last_child_ctx {
    CXCursor last;
    bool any;
} last_child_ctx;

static enum CXChildVisitResult take_last(CXCursor c, CXCursor parent, CXClientData data)
{
    last_child_ctx *l = data;
    (void)parent;
    l->last = c;
    l->any = true;
    return CXChildVisit_Continue;
}

static enum CXChildVisitResult find_loops(CXCursor c, CXCursor parent, CXClientData data)
{
    loop_ctx *lc = data;
    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_ForStmt)
        return CXChildVisit_Recurse;
    if (lc->n == lc->cap) {
        size_t cap = lc->cap ? lc->cap * 2 : 16;
        raw_loop *v = realloc(lc->v, cap * sizeof(*v));
        if (!v) {
            lc->error = kevo_error_set(KEVO_ENOMEM, "out of memory listing loops");
            return CXChildVisit_Break;
        }
        lc->v = v;
        lc->cap = cap;
    }
    raw_loop *r = &lc->v[lc->n++];
    memset(r, 0, sizeof(*r));
    CXSourceRange ext = clang_getCursorExtent(c);
    bool main_start = false, main_end = false;
    r->start = cx_offset(clang_getRangeStart(ext), &main_start);
    r->end = cx_offset(clang_getRangeEnd(ext), &main_end);
    last_child_ctx l = {.any = false};
    clang_visitChildren(c, take_last, &l);
    if (l.any) {
        bool main_body = false;
        r->body_start = cx_offset(clang_getRangeStart(clang_getCursorExtent(l.last)), &main_body);
        r->body_compound = clang_getCursorKind(l.last) == CXCursor_CompoundStmt;
        r->ok = main_start && main_end && main_body;
    }
    return CXChildVisit_Recurse;
}

static int vtype_of(CXType t)
{
    t = clang_getCanonicalType(t);
    switch (t.kind) {
    case CXType_Bool:
    case CXType_Char_U:
    case CXType_UChar:
    case CXType_UShort:
    case CXType_UInt:
    case CXType_ULong:
    case CXType_ULongLong:
    case CXType_Char_S:
    case CXType_SChar:
    case CXType_Short:
    case CXType_Int:
    case CXType_Long:
    case CXType_LongLong:
    case CXType_Enum:
        return KEVO_VTYPE_INT;
    case CXType_Float:
    case CXType_Double:
    case CXType_LongDouble:
    case CXType_Half:
    case CXType_Float16:
        return KEVO_VTYPE_FLOAT;
    case CXType_Pointer:
        return KEVO_VTYPE_POINTER;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray:
        return KEVO_VTYPE_ARRAY;
    default:
        return KEVO_VTYPE_OTHER;
    }
}

/* Find or add the variable declared by `decl`; returns its index or < 0. */
static int var_index(kevo_recipe_model *m, CXCursor **decls, size_t *cap, CXCursor decl)
{
    for (size_t i = 0; i < m->n_var; i++)
        if (clang_equalCursors((*decls)[i], decl))
            return (int)i;
    if (m->n_var == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        CXCursor *d = realloc(*decls, ncap * sizeof(*d));
        if (!d)
            return kevo_error_set(KEVO_ENOMEM, "out of memory listing variables");
        *decls = d;
        kevo_rvar *v = realloc(m->var, ncap * sizeof(*v));
        if (!v)
            return kevo_error_set(KEVO_ENOMEM, "out of memory listing variables");
        m->var = v;
        *cap = ncap;
    }
    kevo_rvar *v = &m->var[m->n_var];
    memset(v, 0, sizeof(*v));
    CXString s = clang_getCursorSpelling(decl);
    v->name = strdup(clang_getCString(s));
    clang_disposeString(s);
    if (!v->name)
        return kevo_error_set(KEVO_ENOMEM, "out of memory listing variables");
    bool in_main = false;
    CXSourceLocation loc = clang_getCursorLocation(decl);
    CXFile file;
    unsigned off = 0;
    clang_getSpellingLocation(loc, &file, NULL, NULL, &off);
    in_main = clang_Location_isFromMainFile(loc) != 0;
    v->decl_off = in_main ? off : UINT_MAX;
    CXType t = clang_getCursorType(decl);
    v->vtype = vtype_of(t);
    v->is_param = clang_getCursorKind(decl) == CXCursor_ParmDecl;
    v->is_restrict = clang_isRestrictQualifiedType(t) != 0;
    CXType canon = clang_getCanonicalType(t);
    v->is_f32 = canon.kind == CXType_Float;
    v->int_rank = canon.kind == CXType_Int        ? 1
                  : canon.kind == CXType_Long     ? 2
                  : canon.kind == CXType_LongLong ? 3
                                                  : 0;
    if (v->vtype == KEVO_VTYPE_POINTER) {
        CXType pointee = clang_getCanonicalType(clang_getPointeeType(canon));
        v->points_to_function =
            pointee.kind == CXType_FunctionProto || pointee.kind == CXType_FunctionNoProto;
        v->elem_f32 = pointee.kind == CXType_Float;
        v->elem_const = clang_isConstQualifiedType(pointee) != 0;
    } else if (v->vtype == KEVO_VTYPE_ARRAY) {
        CXType elem = clang_getCanonicalType(clang_getArrayElementType(canon));
        v->elem_f32 = elem.kind == CXType_Float;
        v->elem_const = clang_isConstQualifiedType(elem) != 0;
    }
    (*decls)[m->n_var] = decl;
    return (int)m->n_var++;
}

/* Statements that leave a loop early: a break with the offset of the
 * statement it breaks, or a return/goto (target UINT_MAX). */
typedef struct exit_ctx {
    unsigned breakable; /* offset of the innermost for/while/do/switch */
    unsigned (*v)[2];
    size_t n, cap;
    int error;
} exit_ctx;

static enum CXChildVisitResult find_exits(CXCursor c, CXCursor parent, CXClientData data)
{
    exit_ctx *x = data;
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(c);
    unsigned off = cx_offset(clang_getRangeStart(clang_getCursorExtent(c)), NULL);
    if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt ||
        k == CXCursor_SwitchStmt) {
        unsigned saved = x->breakable;
        x->breakable = off;
        clang_visitChildren(c, find_exits, x);
        x->breakable = saved;
        return x->error < 0 ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    if (k != CXCursor_BreakStmt && k != CXCursor_ReturnStmt && k != CXCursor_GotoStmt &&
        k != CXCursor_IndirectGotoStmt)
        return CXChildVisit_Recurse;
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 8;
        unsigned(*v)[2] = realloc(x->v, cap * sizeof(*v));
        if (!v) {
            x->error = kevo_error_set(KEVO_ENOMEM, "out of memory listing loop exits");
            return CXChildVisit_Break;
        }
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n][0] = off;
    x->v[x->n][1] = k == CXCursor_BreakStmt ? x->breakable : UINT_MAX;
    x->n++;
    return CXChildVisit_Continue;
}

/* ---- building ----------------------------------------------------------- */

static int index_lines(kevo_recipe_model *m)
{
    size_t n = 1;
    for (size_t i = 0; i < m->len; i++)
        n += m->src[i] == '\n';
    m->line_start = malloc(n * sizeof(*m->line_start));
    if (!m->line_start)
        return kevo_error_set(KEVO_ENOMEM, "out of memory indexing lines");
    m->n_lines = 0;
    m->line_start[m->n_lines++] = 0;
    for (size_t i = 0; i < m->len; i++)
        if (m->src[i] == '\n')
            m->line_start[m->n_lines++] = (unsigned)i + 1;
    return 0;
}

/* First token index whose start is >= offset. */
static unsigned tok_at(const kevo_recipe_model *m, unsigned offset)
{
    size_t lo = 0, hi = m->n_tok;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->tok[mid].start < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (unsigned)lo;
}

static unsigned classify_pragma(const char *p, size_t n)
{
    /* p points at '#'; skip "#", spaces, "pragma", spaces. */
    size_t i = 1;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (n - i < 6 || strncmp(p + i, "pragma", 6) != 0)
        return 0;
    i += 6;
    char words[8][16];
    int nw = 0;
    while (i < n && nw < 8) {
        while (i < n && (p[i] == ' ' || p[i] == '\t'))
            i++;
        size_t s = i;
        while (i < n &&
               ((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_'))
            i++;
        if (i == s || i - s >= sizeof(words[0]))
            break;
        memcpy(words[nw], p + s, i - s);
        words[nw][i - s] = '\0';
        nw++;
    }
    if (nw == 0)
        return KEVO_PRAGMA_OTHER;
    if (strcmp(words[0], "omp") == 0) {
        unsigned f = 0;
        for (int w = 1; w < nw; w++) {
            if (strcmp(words[w], "parallel") == 0)
                f |= KEVO_PRAGMA_OMP_PARALLEL;
            else if (strcmp(words[w], "for") == 0)
                f |= KEVO_PRAGMA_OMP_FOR;
            else if (strcmp(words[w], "simd") == 0)
                f |= KEVO_PRAGMA_OMP_SIMD;
            else {
                if (w == 1)
                    f |= KEVO_PRAGMA_OMP_OTHER;
                break;
            }
        }
        return f ? f : KEVO_PRAGMA_OMP_OTHER;
    }
    if (strcmp(words[0], "unroll") == 0 ||
        (nw > 1 && strcmp(words[0], "GCC") == 0 && strcmp(words[1], "unroll") == 0))
        return KEVO_PRAGMA_UNROLL;
    return KEVO_PRAGMA_OTHER;
}

/* The directive starting exactly at offset `at`, or -1. */
static int directive_at(const kevo_recipe_model *m, unsigned at)
{
    for (size_t i = 0; i < m->n_dir; i++)
        if (m->dir[i].start == at)
            return (int)i;
    return -1;
}

static bool only_space(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
            return false;
    return true;
}

/* Attach the #pragma lines directly above loop l (blank lines and // comment
 * lines between them are allowed). */
static void attach_pragmas(kevo_recipe_model *m, kevo_rloop *l)
{
    unsigned for_off = m->tok[l->t_for].start;
    unsigned lb = kevo_recipe_line_begin(m, for_off);
    l->at_line_start = only_space(m->src + lb, for_off - lb);
    if (!l->at_line_start)
        return;
    int found[KEVO_RLOOP_MAX_PRAGMAS];
    int nf = 0;
    unsigned line = kevo_recipe_line(m, for_off);
    while (line > 1 && nf < KEVO_RLOOP_MAX_PRAGMAS) {
        line--;
        unsigned s = m->line_start[line - 1], e = m->line_start[line];
        if (only_space(m->src + s, e - s))
            continue;
        unsigned p = s;
        while (p < e && (m->src[p] == ' ' || m->src[p] == '\t'))
            p++;
        if (p + 1 < e && m->src[p] == '/' && m->src[p + 1] == '/')
            continue; /* a line comment between a pragma and its loop */
        int d = directive_at(m, p);
        if (d < 0 || m->dir[d].flags == 0)
            break;
        found[nf++] = d;
    }
    for (int i = 0; i < nf; i++) {
        int d = found[nf - 1 - i];
        l->pragmas[l->n_pragmas++] = d;
        l->pragma_flags |= m->dir[d].flags;
        m->dir[d].attached = true;
    }
}

/* fmt takes the loop's line (%u) then one string. */
static void set_why(kevo_recipe_model *m, kevo_rloop *l, const char *fmt, const char *detail)
    __attribute__((format(printf, 3, 0)));
static void set_why(kevo_recipe_model *m, kevo_rloop *l, const char *fmt, const char *detail)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(l->why, sizeof(l->why), fmt, kevo_recipe_line(m, m->tok[l->t_for].start), detail);
#pragma GCC diagnostic pop
}

/* The source text of tokens [a,b) for a message, cut to the buffer. */
static const char *header_text(char *buf, size_t size, const kevo_recipe_model *m, unsigned a,
                               unsigned b)
{
    if (b <= a) {
        buf[0] = '\0';
        return buf;
    }
    snprintf(buf, size, "%.*s", (int)(m->tok[b - 1].end - m->tok[a].start),
             m->src + m->tok[a].start);
    return buf;
}

/* Whether the token at t opens or closes a bracket: +1, -1 or 0. */
static int bracket(const kevo_recipe_model *m, unsigned t)
{
    size_t n;
    const char *p = kevo_rtok_text(m, t, &n);
    if (n == 1 && strchr("([{", p[0]))
        return 1;
    if (n == 1 && strchr(")]}", p[0]))
        return -1;
    return 0;
}

/* The init part: `T i = a` (one declarator) or `i = a`; sets var,
 * declared, the type and lower-bound tokens. False (why set) otherwise. */
static bool header_init(kevo_recipe_model *m, kevo_rloop *l)
{
    char text[96];
    unsigned i0 = l->t_lparen + 1, i1 = l->t_semi1;
    if (i1 == i0) {
        set_why(m, l, "loop at line %u has no init part%s", "");
        return false;
    }
    int decl_tok = -1, depth = 0;
    for (unsigned t = i0; t < i1; t++) {
        int br = bracket(m, t);
        depth += br;
        if (br == 0 && depth == 0 && kevo_rtok_is(m, t, ",")) {
            set_why(m, l, "loop at line %u declares or assigns several variables in '%s'",
                    header_text(text, sizeof(text), m, i0, i1));
            return false;
        }
        if (decl_tok < 0 && m->tok[t].is_decl)
            decl_tok = (int)t;
    }
    unsigned lb0;
    if (decl_tok > (int)i0 && kevo_rtok_is(m, (unsigned)decl_tok + 1, "=")) {
        l->declared = true;
        l->var = m->tok[decl_tok].var;
        l->t_type0 = i0;
        l->t_type1 = (unsigned)decl_tok;
        lb0 = (unsigned)decl_tok + 2;
    } else if (decl_tok < 0 && m->tok[i0].var >= 0 && kevo_rtok_is(m, i0 + 1, "=")) {
        l->var = m->tok[i0].var;
        lb0 = i0 + 2;
    } else {
        set_why(m, l, "loop at line %u: init '%s' is not 'T i = a' or 'i = a'",
                header_text(text, sizeof(text), m, i0, i1));
        return false;
    }
    if (m->var[l->var].vtype != KEVO_VTYPE_INT) {
        set_why(m, l, "loop at line %u: induction variable '%s' is not of integer type",
                m->var[l->var].name);
        return false;
    }
    if (lb0 >= i1) {
        set_why(m, l, "loop at line %u has an empty lower bound%s", "");
        return false;
    }
    l->t_lb0 = lb0;
    l->t_lb1 = i1;
    return true;
}

/* Whether the bound [t_ub0,t_ub1) holds, at bracket depth 0, an operator
 * binding looser than the comparison (`i < a && b`, `i < c ? x : y`): then
 * the test is not `i < b`. */
static bool bound_has_looser_op(const kevo_recipe_model *m, const kevo_rloop *l)
{
    static const char *const looser[] = {"<", "<=", ">",  ">=", "==", "!=", "&", "|",
                                         "^", "&&", "||", "?",  ":",  ",",  "="};
    int depth = 0;
    for (unsigned t = l->t_ub0; t < l->t_ub1; t++) {
        int br = bracket(m, t);
        depth += br;
        if (br != 0 || depth != 0)
            continue;
        for (size_t k = 0; k < sizeof(looser) / sizeof(looser[0]); k++)
            if (kevo_rtok_is(m, t, looser[k]))
                return true;
    }
    return false;
}

/* The test: `i relop b` or `b relop i`, normalised to `i op b`, b free of
 * i and a single comparison. */
static bool header_test(kevo_recipe_model *m, kevo_rloop *l)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", "!="};
    static const int flipped[] = {KEVO_COND_GT, KEVO_COND_GE, KEVO_COND_LT, KEVO_COND_LE,
                                  KEVO_COND_NE};
    char text[96];
    unsigned c0 = l->t_semi1 + 1, c1 = l->t_semi2;
    int op = -1;
    if (c1 - c0 >= 3 && m->tok[c0].var == l->var) {
        for (int k = 0; k < 5; k++)
            if (kevo_rtok_is(m, c0 + 1, ops[k]))
                op = k;
        if (op >= 0) {
            l->cond_op = op;
            l->t_ub0 = c0 + 2;
            l->t_ub1 = c1;
        }
    } else if (c1 - c0 >= 3 && m->tok[c1 - 1].var == l->var) {
        for (int k = 0; k < 5; k++)
            if (kevo_rtok_is(m, c1 - 2, ops[k]))
                op = k;
        if (op >= 0) {
            l->cond_op = flipped[op];
            l->t_ub0 = c0;
            l->t_ub1 = c1 - 2;
        }
    }
    if (op < 0 || kevo_recipe_uses_var(m, l->t_ub0, l->t_ub1, l->var)) {
        set_why(m, l, "loop at line %u: test '%s' is not 'i < b' with b free of i",
                header_text(text, sizeof(text), m, c0, c1));
        return false;
    }
    if (bound_has_looser_op(m, l)) {
        set_why(m, l, "loop at line %u: test '%s' is not a single comparison",
                header_text(text, sizeof(text), m, c0, c1));
        return false;
    }
    return true;
}

/* The literal step of tokens [t] of an increment, 0 when it is not a
 * plain integer literal (a suffix u/l is allowed). */
static long literal_step(const kevo_recipe_model *m, unsigned t, bool suffix_ok)
{
    char *end;
    size_t n;
    const char *p = kevo_rtok_text(m, t, &n);
    long step = strtol(p, &end, 0);
    if (suffix_ok && end != p + n && strspn(end, "uUlL") < (size_t)(p + n - end))
        step = 0;
    return step;
}

/* Whether tokens [t0, t1) are a constant made of sizeof quotients: no
 * variable, no call but sizeof, only literals, type names and keywords, parentheses, `*`
 * and `/`, and at least one sizeof (`(int64_t)(sizeof(vf) / sizeof(float))`,
 * vectorize's step: a number of lanes, known when the kernel compiles). */
static bool sized_constant(const kevo_recipe_model *m, unsigned t0, unsigned t1)
{
    bool has_sizeof = false;
    for (unsigned t = t0; t < t1; t++) {
        const kevo_rtok *k = &m->tok[t];
        if (k->var >= 0)
            return false;
        if (kevo_rtok_is(m, t, "sizeof")) {
            has_sizeof = true;
            continue;
        }
        if (k->kind == KEVO_CTOK_IDENT) {
            if (t + 1 < t1 && kevo_rtok_is(m, t + 1, "("))
                return false; /* a call */
            continue;
        }
        if (k->kind == KEVO_CTOK_KEYWORD)
            continue; /* float, int, unsigned, ... */
        if (k->kind == KEVO_CTOK_LITERAL) {
            size_t n;
            const char *p = kevo_rtok_text(m, t, &n);
            if (n == 0 || p[0] < '0' || p[0] > '9')
                return false; /* a string or character */
            continue;
        }
        if (!kevo_rtok_is(m, t, "(") && !kevo_rtok_is(m, t, ")") && !kevo_rtok_is(m, t, "*") &&
            !kevo_rtok_is(m, t, "/"))
            return false;
    }
    return has_sizeof;
}

/* The increment: i++, ++i, i--, --i, i += c, i -= c, i = i + c, i = i - c
 * (c free of i); sets step (0 when c is not a literal). */
static bool header_increment(kevo_recipe_model *m, kevo_rloop *l)
{
    char text[96];
    unsigned s0 = l->t_semi2 + 1, s1 = l->t_rparen;
    size_t ns = s1 - s0;
    long step = 0;
    bool ok = false;
    bool first = ns >= 1 && m->tok[s0].var == l->var;
    bool second = ns >= 2 && m->tok[s0 + 1].var == l->var;
    if (ns == 2 &&
        ((first && kevo_rtok_is(m, s0 + 1, "++")) || (kevo_rtok_is(m, s0, "++") && second))) {
        step = 1;
        ok = true;
    } else if (ns == 2 && ((first && kevo_rtok_is(m, s0 + 1, "--")) ||
                           (kevo_rtok_is(m, s0, "--") && second))) {
        step = -1;
        ok = true;
    } else if (ns >= 3 && first &&
               (kevo_rtok_is(m, s0 + 1, "+=") || kevo_rtok_is(m, s0 + 1, "-=")) &&
               !kevo_recipe_uses_var(m, s0 + 2, s1, l->var)) {
        ok = true;
        if (ns == 3 && m->tok[s0 + 2].kind == KEVO_CTOK_LITERAL) {
            step = literal_step(m, s0 + 2, true);
            if (kevo_rtok_is(m, s0 + 1, "-="))
                step = -step;
        } else if (kevo_rtok_is(m, s0 + 1, "+=") && sized_constant(m, s0 + 2, s1)) {
            l->sized_step = true;
            l->t_step0 = s0 + 2;
            l->t_step1 = s1;
        }
    } else if (ns >= 5 && first && kevo_rtok_is(m, s0 + 1, "=") && m->tok[s0 + 2].var == l->var &&
               (kevo_rtok_is(m, s0 + 3, "+") || kevo_rtok_is(m, s0 + 3, "-")) &&
               !kevo_recipe_uses_var(m, s0 + 4, s1, l->var)) {
        ok = true;
        if (ns == 5 && m->tok[s0 + 4].kind == KEVO_CTOK_LITERAL) {
            step = literal_step(m, s0 + 4, false);
            if (kevo_rtok_is(m, s0 + 3, "-"))
                step = -step;
        }
    }
    if (!ok) {
        set_why(m, l, "loop at line %u: increment '%s' is not i++, i += c or i = i + c",
                header_text(text, sizeof(text), m, s0, s1));
        return false;
    }
    l->step = step;
    return true;
}

/* Whether the body leaves the induction variable alone: 1 yes, 0 no (why
 * set), or an error. */
static int header_body_keeps_var(kevo_recipe_model *m, kevo_rloop *l)
{
    kevo_rwrite *w = NULL;
    size_t nw = 0;
    int error = kevo_recipe_writes(&w, &nw, m, l->t_body, l->t_end);
    if (error < 0)
        goto done;
    error = 1;
    for (size_t k = 0; k < nw && error == 1; k++) {
        if (w[k].var == l->var && w[k].kind == KEVO_WRITE_SCALAR) {
            char line[16];
            snprintf(line, sizeof(line), "%u", kevo_recipe_line(m, m->tok[w[k].t_op].start));
            set_why(m, l, "loop at line %u: the body assigns the induction variable (line %s)",
                    line);
            error = 0;
        }
    }
done:
    free(w);
    return error;
}

/* Parse the loop header into its canonical form, if it has one. */
static int analyse_header(kevo_recipe_model *m, kevo_rloop *l)
{
    int error = 0;
    char text[96];

    l->var = -1;
    if (!header_init(m, l) || !header_test(m, l) || !header_increment(m, l))
        goto not_canonical;
    if ((error = header_body_keeps_var(m, l)) <= 0)
        goto not_canonical;
    error = 0;
    l->canonical = true;
    l->strided =
        l->declared && (l->cond_op == KEVO_COND_LT || l->cond_op == KEVO_COND_LE) && l->step >= 1;
    l->simple = l->strided && l->step == 1;
    l->sized_step =
        l->sized_step && l->declared && (l->cond_op == KEVO_COND_LT || l->cond_op == KEVO_COND_LE);
    if (!l->simple)
        set_why(m, l, "loop at line %u ('%s') is not in the form 'for (T i = a; i < b; i++)'",
                header_text(text, sizeof(text), m, l->t_for, l->t_rparen + 1));
    goto done;
not_canonical:
    l->var = -1;
done:
    return error;
}

/* The loop of raw loop r, its header's tokens located; false when it is
 * not a plain `for (...;...;...)` of the kernel's tokens (a loop written
 * through a macro: left alone). */
static bool loop_from_raw(kevo_rloop *l, const kevo_recipe_model *m, const raw_loop *r)
{
    if (!r->ok)
        return false;
    unsigned tf = tok_at(m, r->start);
    if (tf >= m->n_tok || m->tok[tf].start != r->start || !kevo_rtok_is(m, tf, "for") ||
        !kevo_rtok_is(m, tf + 1, "("))
        return false;
    memset(l, 0, sizeof(*l));
    l->t_for = tf;
    l->t_lparen = tf + 1;
    unsigned rp = kevo_rtok_match(m, tf + 1);
    if (rp == (unsigned)-1)
        return false;
    int semis = 0, depth = 0;
    for (unsigned t = tf + 2; t < rp; t++) {
        int br = bracket(m, t);
        depth += br;
        if (br == 0 && depth == 0 && kevo_rtok_is(m, t, ";")) {
            if (semis == 0)
                l->t_semi1 = t;
            else
                l->t_semi2 = t;
            semis++;
        }
    }
    if (semis != 2)
        return false;
    l->t_rparen = rp;
    l->t_body = rp + 1;
    if (l->t_body >= m->n_tok || m->tok[l->t_body].start != r->body_start)
        return false;
    l->body_compound = r->body_compound;
    unsigned te = tok_at(m, r->end);
    if (te < m->n_tok && kevo_rtok_is(m, te, ";") && !l->body_compound)
        te++;
    l->t_end = te;
    l->line = kevo_recipe_line(m, m->tok[tf].start);
    l->sole_child = -1;
    return true;
}

/* Nesting by token ranges (loops are in source order). */
static void nest_loops(kevo_recipe_model *m)
{
    int stack[256];
    int sp = 0;
    for (size_t k = 0; k < m->n_loop; k++) {
        kevo_rloop *l = &m->loop[k];
        while (sp > 0 && m->loop[stack[sp - 1]].t_end <= l->t_for)
            sp--;
        l->parent = sp > 0 ? stack[sp - 1] : -1;
        l->level = sp;
        if (l->parent >= 0)
            m->loop[l->parent].n_children++;
        if (sp < (int)(sizeof(stack) / sizeof(stack[0])))
            stack[sp++] = (int)k;
    }
}

/* Perfect nesting: whether the body of loop k is exactly its first child
 * (empty statements aside). */
static void find_sole_child(kevo_recipe_model *m, size_t k)
{
    kevo_rloop *l = &m->loop[k];
    for (size_t c = k + 1; c < m->n_loop; c++) {
        kevo_rloop *ch = &m->loop[c];
        if (ch->parent != (int)k)
            continue;
        unsigned b0 = l->t_body, b1 = l->t_end;
        if (l->body_compound) {
            b0++;
            b1--;
            while (b0 < b1 && kevo_rtok_is(m, b0, ";"))
                b0++;
        }
        unsigned e = ch->t_end;
        while (e < b1 && kevo_rtok_is(m, e, ";"))
            e++;
        if (ch->t_for == b0 && e == b1)
            l->sole_child = (int)c;
        else
            l->t_other = ch->t_for != b0 ? b0 : e;
        return;
    }
}

/* Fill nesting, header, sole child and pragmas of the loops. */
static int build_loops(kevo_recipe_model *m, raw_loop *raw, size_t n_raw)
{
    int error = 0;
    m->loop = calloc(n_raw ? n_raw : 1, sizeof(*m->loop));
    if (!m->loop)
        return kevo_error_set(KEVO_ENOMEM, "out of memory listing loops");
    for (size_t r = 0; r < n_raw; r++)
        if (loop_from_raw(&m->loop[m->n_loop], m, &raw[r]))
            m->n_loop++;
    nest_loops(m);
    for (size_t k = 0; k < m->n_loop; k++)
        attach_pragmas(m, &m->loop[k]);
    for (size_t k = 0; k < m->n_loop; k++)
        find_sole_child(m, k);
    for (size_t k = 0; k < m->n_loop && error == 0; k++)
        error = analyse_header(m, &m->loop[k]);
    return error;
}

/* Record the preprocessor line whose token starts at s, once. */
static void record_directive(kevo_recipe_model *m, unsigned s)
{
    if (m->n_dir > 0 && m->dir[m->n_dir - 1].end >= s)
        return;
    unsigned end = s;
    while (end < m->len && m->src[end] != '\n') {
        if (m->src[end] == '\\' && end + 1 < m->len && m->src[end + 1] == '\n')
            end++;
        end++;
    }
    if (end > s && m->src[end - 1] == '\r')
        end--;
    kevo_rdirective *d = &m->dir[m->n_dir++];
    d->start = s;
    d->end = end;
    d->flags = classify_pragma(m->src + s, end - s);
}

/* The variable an identifier token names or declares: its index, -1 when
 * none, or an error. */
static int token_var(kevo_recipe_model *m, const kevo_cparse_token *tk, CXCursor **decls,
                     size_t *decl_cap)
{
    CXCursor c = tk->cursor, decl;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_DeclRefExpr)
        decl = clang_getCursorReferenced(c);
    else if ((k == CXCursor_VarDecl || k == CXCursor_ParmDecl) && tk->decl != KEVO_CDECL_NONE)
        decl = c;
    else
        return -1;
    enum CXCursorKind dk = clang_getCursorKind(decl);
    if (dk != CXCursor_VarDecl && dk != CXCursor_ParmDecl)
        return -1;
    int v = var_index(m, decls, decl_cap, decl);
    if (v < 0)
        return v;
    unsigned s = tk->start, e = tk->end;
    if (strlen(m->var[v].name) != e - s || memcmp(m->var[v].name, m->src + s, e - s) != 0)
        return -1; /* named through a macro */
    return v;
}

static int collect_tokens(kevo_recipe_model *m, const kevo_cparse_tu *tu, CXCursor fn,
                          CXCursor **decls, size_t *decl_cap)
{
    int error = 0;
    kevo_cparse_token *toks = NULL;
    size_t nt = 0;

    if ((error = kevo_cparse_tokens(&toks, &nt, tu, fn)) < 0)
        return error;
    if (nt == 0)
        return kevo_error_set(KEVO_EINFRA, "libclang returned no tokens for the kernel");
    m->tok = calloc(nt, sizeof(*m->tok));
    m->dir = calloc(nt, sizeof(*m->dir));
    if (!m->tok || !m->dir) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory tokenizing the kernel");
        goto done;
    }
    for (size_t i = 0; i < nt; i++) {
        if (toks[i].directive) {
            record_directive(m, toks[i].start);
            continue;
        }
        kevo_rtok *t = &m->tok[m->n_tok++];
        t->start = toks[i].start;
        t->end = toks[i].end;
        t->kind = toks[i].kind;
        t->var = -1;
        if (t->kind != KEVO_CTOK_IDENT)
            continue;
        int v = token_var(m, &toks[i], decls, decl_cap);
        if (v < -1) {
            error = v;
            goto done;
        }
        t->var = v;
        t->is_decl = v >= 0 && toks[i].decl != KEVO_CDECL_NONE;
    }
done:
    free(toks);
    return error;
}

/* Parse the candidate: C11 with -D_OPENMP, and for an OpenCL candidate the
 * prelude that makes its qualifiers C. */
static int parse_candidate(kevo_cparse_tu **out, const char *source, size_t len)
{
    static const char *const ocl_args[] = {"-include", OPENCL_PRELUDE_NAME};
    static const kevo_cparse_file prelude = {OPENCL_PRELUDE_NAME, opencl_prelude,
                                             sizeof(opencl_prelude) - 1};
    kevo_cparse_options o = {0};
    o.lang = KEVO_CPARSE_C11;
    o.flags = KEVO_CPARSE_OPENMP_MACRO;
    o.file_name = CANDIDATE_NAME;
    if (kevo_recipe_is_opencl(source)) {
        o.extra_args = ocl_args;
        o.n_extra_args = 2;
        o.extra_files = &prelude;
        o.n_extra_files = 1;
    }
    int error = kevo_cparse_parse(out, source, len, &o);
    if (error == 0 && (error = kevo_cparse_errors(*out)) < 0) {
        kevo_cparse_free(*out);
        *out = NULL;
    }
    return error;
}

/* Parameters in order, as variable indices. */
static int collect_params(kevo_recipe_model *m, CXCursor fn, const CXCursor *decls)
{
    int nargs = clang_Cursor_getNumArguments(fn);
    if (nargs <= 0)
        return 0;
    m->param = calloc((size_t)nargs, sizeof(*m->param));
    if (!m->param)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (int i = 0; i < nargs; i++) {
        CXCursor a = clang_Cursor_getArgument(fn, (unsigned)i);
        m->param[i] = -1;
        for (size_t v = 0; v < m->n_var; v++)
            if (clang_equalCursors(decls[v], a))
                m->param[i] = (int)v;
    }
    m->n_param = (size_t)nargs;
    return 0;
}

/* The body `{`: the first `{` after the parameter list's `)`. */
static void find_function_body(kevo_recipe_model *m)
{
    m->t_fbody = (unsigned)m->n_tok;
    for (size_t t = 0; t < m->n_tok; t++) {
        if (kevo_rtok_is(m, t, "(")) {
            unsigned rp = kevo_rtok_match(m, (unsigned)t);
            if (rp != (unsigned)-1 && kevo_rtok_is(m, rp + 1, "{"))
                m->t_fbody = rp + 1;
            break;
        }
    }
}

/* The loops of the kernel and which of them can leave early. */
static int collect_loops(kevo_recipe_model *m, CXCursor fn)
{
    int error = 0;
    loop_ctx lc = {0};
    exit_ctx ex = {.breakable = UINT_MAX};

    clang_visitChildren(fn, find_loops, &lc);
    if ((error = lc.error) < 0 || (error = build_loops(m, lc.v, lc.n)) < 0)
        goto done;
    clang_visitChildren(fn, find_exits, &ex);
    if ((error = ex.error) < 0)
        goto done;
    for (size_t l = 0; l < m->n_loop; l++) {
        kevo_rloop *L = &m->loop[l];
        unsigned s0 = m->tok[L->t_for].start, s1 = m->tok[L->t_end - 1].end;
        for (size_t i = 0; i < ex.n; i++)
            if (ex.v[i][0] >= s0 && ex.v[i][0] < s1 && (ex.v[i][1] == UINT_MAX || ex.v[i][1] == s0))
                L->early_exit = true;
    }
done:
    free(lc.v);
    free(ex.v);
    return error;
}

int kevo_recipe_model_parse(kevo_recipe_model **out, const char *source, const char *kernel_name)
{
    int error = 0;
    kevo_recipe_model *m = NULL;
    kevo_cparse_tu *tu = NULL;
    CXCursor *decls = NULL;
    size_t decl_cap = 0;
    CXCursor fn;

    *out = NULL;
    if (!source || !kernel_name || !*kernel_name)
        return kevo_error_set(KEVO_EINVAL, "recipe: no source or kernel name given");
    m = calloc(1, sizeof(*m));
    if (!m)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    m->src = source;
    m->len = strlen(source);
    if (m->len >= UINT_MAX / 2) {
        error = kevo_error_set(KEVO_EINVAL, "recipe: source too large");
        goto done;
    }
    if ((error = index_lines(m)) < 0 || (error = parse_candidate(&tu, source, m->len)) < 0 ||
        (error = kevo_cparse_function(&fn, tu, kernel_name)) < 0)
        goto done;
    kevo_cparse_extent(&m->fn_start, &m->fn_end, NULL, fn);
    if ((error = collect_tokens(m, tu, fn, &decls, &decl_cap)) < 0 ||
        (error = collect_params(m, fn, decls)) < 0)
        goto done;
    find_function_body(m);
    if ((error = collect_loops(m, fn)) < 0)
        goto done;
    *out = m;
    m = NULL;
done:
    free(decls);
    kevo_cparse_free(tu);
    kevo_recipe_model_free(m);
    return error;
}

void kevo_recipe_model_free(kevo_recipe_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_var; i++)
        free(m->var[i].name);
    free(m->var);
    free(m->tok);
    free(m->dir);
    free(m->param);
    free(m->loop);
    free(m->line_start);
    free(m);
}
