/*
 * recipe/recipe_stream.c - the `stream` recipe: non-temporal (streaming)
 * stores for a loop that only maps inputs to one output, `y[e + i] = f(...)`.
 * A plain store first reads the line it writes (write-allocate), so a map
 * over arrays larger than the last-level cache moves 12 bytes per float
 * for 8 of work; a streaming store writes the line without reading it.
 *
 * The loop becomes, in one block:
 *   - the first i whose &y[e + i] is 64-byte aligned (a line start);
 *   - blocks of 16 iterations (one line): the body runs for each lane with
 *     the store turned into a store to a local aligned buffer (GCC
 *     vectorises that lane loop, `omp simd` under -fopenmp-simd), then nt_stream16() writes the line with
 *     streaming stores; with `threads`, the blocks run in OpenMP threads,
 *     each thread fencing its own stores before the region's barrier;
 *   - the iterations before the first line and after the last block, as
 *     written;
 *   - a store fence (streaming stores are weakly ordered).
 * nt_stream16 and nt_stream_fence are defined above the kernel: AVX-512,
 * AVX or SSE streaming stores where the compiler targets them, plain stores
 * elsewhere (no intrinsic outside an #if that guards it).
 *
 * Checks (any iteration order gives the same memory, every lane of a block
 * is written): an innermost simple loop `for (T i = a; i < b; i++)`, not
 * collapsed into a loop above, whose pragmas are `omp simd`, `GCC unroll`
 * (both dropped: the lane loop is vectorised) or exactly `omp parallel
 * for`; no preprocessor line, break, continue, return or goto in its body;
 * its only write to memory declared outside the body is one statement
 * `y[E] = rhs;` at the top level of the body, y a float pointer or array;
 * no other token of the body names y or a pointer from the same parameter;
 * E is a sum with the term `+ i` (coefficient 1) and other terms that do
 * not use i, read no memory and call nothing; the bounds read no memory.
 *
 * Must not: change anything outside the loop statement other than adding
 * the two helpers above the kernel once.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_LANES 16

/* Above the kernel, once; every directive at file level (a branch per
 * instruction set, no #if inside a function body). */
static const char prelude[] =
    "/* stream recipe: nt_stream16 writes the 16 floats at t (64-byte aligned) to p (64-byte\n"
    " * aligned) past the caches, no read of the line first; nt_stream_fence orders those\n"
    " * weakly ordered stores before anything after them */\n"
    "#if defined(__AVX512F__)\n"
    "#include <immintrin.h>\n"
    "static inline void nt_stream16(float *p, const float *t)\n"
    "{\n"
    "    _mm512_stream_ps(p, _mm512_load_ps(t));\n"
    "}\n"
    "static inline void nt_stream_fence(void) { _mm_sfence(); }\n"
    "#elif defined(__AVX__)\n"
    "#include <immintrin.h>\n"
    "static inline void nt_stream16(float *p, const float *t)\n"
    "{\n"
    "    _mm256_stream_ps(p, _mm256_load_ps(t));\n"
    "    _mm256_stream_ps(p + 8, _mm256_load_ps(t + 8));\n"
    "}\n"
    "static inline void nt_stream_fence(void) { _mm_sfence(); }\n"
    "#elif defined(__SSE__)\n"
    "#include <immintrin.h>\n"
    "static inline void nt_stream16(float *p, const float *t)\n"
    "{\n"
    "    for (int k = 0; k < 16; k += 4)\n"
    "        _mm_stream_ps(p + k, _mm_load_ps(t + k));\n"
    "}\n"
    "static inline void nt_stream_fence(void) { _mm_sfence(); }\n"
    "#else\n"
    "static inline void nt_stream16(float *p, const float *t)\n"
    "{\n"
    "    for (int k = 0; k < 16; k++)\n"
    "        p[k] = t[k];\n"
    "}\n"
    "static inline void nt_stream_fence(void) {}\n"
    "#endif\n";

typedef struct stream_loop {
    int l;
    bool parallel;         /* the loop carries `omp parallel for` */
    unsigned t_store;      /* first token of `y[E]` */
    unsigned t_lb, t_rb;   /* the subscript's brackets */
    unsigned t_lhs1;       /* one past `]` */
} stream_loop;

/* Whether directive d is exactly `#pragma omp parallel for`. */
static bool plain_parallel_for(const kevo_recipe_model *m, int d)
{
    const char *s = m->src + m->dir[d].start, *e = m->src + m->dir[d].end;
    static const char *const words[] = {"#", "pragma", "omp", "parallel", "for"};
    for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++) {
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        size_t n = strlen(words[k]);
        if ((size_t)(e - s) < n || strncmp(s, words[k], n) != 0)
            return false;
        s += n;
        if (k == 0)
            continue;
        if (s < e && *s != ' ' && *s != '\t')
            return false;
    }
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    return s == e;
}

bool kevo_recipe__reads_memory(const kevo_recipe_model *m, unsigned a, unsigned b)
{
    for (unsigned t = a; t < b; t++) {
        if (kevo_rtok_is(m, t, "[") || kevo_rtok_is(m, t, "->") || kevo_rtok_is(m, t, ".") ||
            kevo_rtok_is(m, t, "&"))
            return true;
        int v = m->tok[t].var;
        if (v >= 0 && (m->var[v].vtype == KEVO_VTYPE_POINTER || m->var[v].vtype == KEVO_VTYPE_ARRAY))
            return true;
        if (m->tok[t].kind == KEVO_CTOK_IDENT && v < 0 && t + 1 < b &&
            kevo_rtok_is(m, t + 1, "("))
            return true;
    }
    return false;
}

/* Whether token t, naming a pointer from parameter `root`, only derives
 * another such pointer: it lies in the initialiser of a declaration
 * `T *w = ...` with w from the same parameter. */
static bool derives_pointer(const kevo_recipe_model *m, unsigned t, int root)
{
    for (unsigned k = t; k > m->t_fbody; k--) {
        if (kevo_rtok_is(m, k, ";") || kevo_rtok_is(m, k, "{") || kevo_rtok_is(m, k, "}"))
            return false;
        if (kevo_rtok_is(m, k, "=") && m->tok[k - 1].is_decl) {
            int w = m->tok[k - 1].var;
            return w >= 0 && m->var[w].vtype == KEVO_VTYPE_POINTER &&
                   kevo_recipe_root_param(m, w) == root;
        }
    }
    return false;
}

/* Whether the kernel outside loop L's body names memory from parameter
 * `root` other than to declare pointers into it: a line streamed out would
 * be read back from memory (a zero fill before an accumulation). Writes
 * the line into *line. */
static bool touched_elsewhere(const kevo_recipe_model *m, const kevo_rloop *L, int root,
                              unsigned *line)
{
    for (unsigned t = m->t_fbody; t < m->n_tok; t++) {
        if (t == L->t_body) {
            t = L->t_end - 1;
            continue;
        }
        int v = m->tok[t].var;
        if (v < 0 || m->tok[t].is_decl ||
            (m->var[v].vtype != KEVO_VTYPE_POINTER && m->var[v].vtype != KEVO_VTYPE_ARRAY) ||
            kevo_recipe_root_param(m, v) != root || derives_pointer(m, t, root))
            continue;
        *line = kevo_recipe_line(m, m->tok[t].start);
        return true;
    }
    return false;
}

bool kevo_recipe__unit_stride(const kevo_recipe_model *m, unsigned a, unsigned b, int v, char *why,
                        size_t wl, unsigned line)
{
    int uses = 0, depth = 0;
    for (unsigned t = a; t < b; t++) {
        if (kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
            depth++;
        else if (kevo_rtok_is(m, t, ")") || kevo_rtok_is(m, t, "]"))
            depth--;
        if (m->tok[t].var != v)
            continue;
        uses++;
        bool before = t == a || (depth == 0 && kevo_rtok_is(m, t - 1, "+"));
        bool after = t + 1 == b || kevo_rtok_is(m, t + 1, "+") || kevo_rtok_is(m, t + 1, "-");
        if (depth != 0 || !before || !after) {
            snprintf(why, wl,
                     "the store at line %u is not at `e + %s` (the loop variable with "
                     "coefficient 1): consecutive iterations must store consecutive elements",
                     line, m->var[v].name);
            return false;
        }
    }
    if (uses != 1) {
        snprintf(why, wl,
                 uses ? "the store at line %u names the loop variable more than once"
                      : "the store at line %u does not move with the loop variable",
                 line);
        return false;
    }
    if (kevo_recipe__reads_memory(m, a, b)) {
        snprintf(why, wl, "the store index at line %u reads memory or calls a function", line);
        return false;
    }
    for (unsigned t = a; t < b; t++)
        if (kevo_rtok_is(m, t, "?") || kevo_rtok_is(m, t, ",") || kevo_rtok_is(m, t, "=") ||
            kevo_rtok_is(m, t, "++") || kevo_rtok_is(m, t, "--")) {
            snprintf(why, wl, "the store index at line %u is not a plain sum", line);
            return false;
        }
    return true;
}

/* Whether loop l can stream; fills *s, or writes the reason to why. */
static bool stream_check(const kevo_recipe_model *m, int l, stream_loop *s, char *why, size_t wl)
{
    const kevo_rloop *L = &m->loop[l];
    memset(s, 0, sizeof(*s));
    s->l = l;
    if (L->n_children > 0) {
        snprintf(why, wl, "the loop at line %u holds other loops", L->line);
        return false;
    }
    if (!L->simple) {
        snprintf(why, wl, "%s", L->why[0] ? L->why : "a loop is not `for (T i = a; i < b; i++)`");
        return false;
    }
    if (m->var[L->var].vtype != KEVO_VTYPE_INT) {
        snprintf(why, wl, "the variable of the loop at line %u is not an integer", L->line);
        return false;
    }
    int into = kevo_recipe_collapsed_into(m, l);
    if (into >= 0) {
        snprintf(why, wl, "the loop at line %u is collapsed into the omp loop at line %u",
                 L->line, m->loop[into].line);
        return false;
    }
    for (int k = 0; k < L->n_pragmas; k++) {
        int d = L->pragmas[k];
        unsigned f = m->dir[d].flags;
        if (f == KEVO_PRAGMA_OMP_SIMD || f == KEVO_PRAGMA_UNROLL)
            continue;
        if (f == (KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR) && plain_parallel_for(m, d)) {
            s->parallel = true;
            continue;
        }
        snprintf(why, wl, "the loop at line %u carries '%.*s'", L->line,
                 (int)(m->dir[d].end - m->dir[d].start), m->src + m->dir[d].start);
        return false;
    }
    for (size_t d = 0; d < m->n_dir; d++)
        if (m->dir[d].start > m->tok[L->t_for].start && m->dir[d].start < m->tok[L->t_end - 1].end) {
            snprintf(why, wl, "the loop at line %u holds a preprocessor line", L->line);
            return false;
        }
    static const char *const exits[] = {"break", "continue", "return", "goto", NULL};
    for (unsigned t = L->t_body; t < L->t_end; t++)
        if (kevo_rtok_is_any(m, t, exits)) {
            snprintf(why, wl,
                     "the loop at line %u has '%.*s': every iteration must reach its store",
                     L->line, (int)(m->tok[t].end - m->tok[t].start), m->src + m->tok[t].start);
            return false;
        }
    if (kevo_recipe__reads_memory(m, L->t_lb0, L->t_lb1) || kevo_recipe__reads_memory(m, L->t_ub0, L->t_ub1)) {
        snprintf(why, wl, "the bounds of the loop at line %u read memory or call", L->line);
        return false;
    }

    kevo_rwrite *w = NULL;
    size_t nw = 0;
    if (kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end) < 0) {
        snprintf(why, wl, "%s", kevo_error_last());
        return false;
    }
    int store = -1;
    bool ok = true;
    for (size_t k = 0; k < nw && ok; k++) {
        unsigned line = kevo_recipe_line(m, m->tok[w[k].t_lhs0].start);
        if (w[k].var >= 0 && w[k].kind != KEVO_WRITE_UNKNOWN &&
            kevo_recipe_declared_in(m, w[k].var, L->t_body, L->t_end))
            continue; /* a local of the body */
        if (w[k].kind != KEVO_WRITE_ELEMENT || w[k].var < 0 || store >= 0 ||
            !kevo_rtok_is(m, w[k].t_op, "=") || w[k].t_lhs0 + 1 != w[k].t_idx0 ||
            w[k].t_idx1 != w[k].t_lhs1 || kevo_rtok_match(m, w[k].t_idx0) != w[k].t_idx1 - 1) {
            snprintf(why, wl,
                     "the loop at line %u also writes '%s' at line %u: stream takes a loop whose "
                     "only write outside its body is one `y[e + i] = ...;`",
                     L->line, w[k].var >= 0 ? m->var[w[k].var].name : "memory", line);
            ok = false;
        }
        store = (int)k;
    }
    if (ok && store < 0) {
        snprintf(why, wl, "the loop at line %u stores nothing", L->line);
        ok = false;
    }
    if (!ok) {
        free(w);
        return false;
    }
    kevo_rwrite st = w[store];
    free(w);
    unsigned line = kevo_recipe_line(m, m->tok[st.t_lhs0].start);
    const kevo_rvar *Y = &m->var[st.var];
    if (!Y->elem_f32 || (Y->vtype != KEVO_VTYPE_POINTER && Y->vtype != KEVO_VTYPE_ARRAY) ||
        Y->elem_const) {
        snprintf(why, wl, "the store at line %u is not into a float array", line);
        return false;
    }
    /* a statement of its own at the top level of the body */
    unsigned a = st.t_lhs0;
    if (L->body_compound) {
        int depth = 0;
        for (unsigned t = L->t_body + 1; t < a; t++) {
            if (kevo_rtok_is(m, t, "{") || kevo_rtok_is(m, t, "(") || kevo_rtok_is(m, t, "["))
                depth++;
            else if (kevo_rtok_is(m, t, "}") || kevo_rtok_is(m, t, ")") ||
                     kevo_rtok_is(m, t, "]"))
                depth--;
        }
        bool starts = kevo_rtok_is(m, a - 1, "{") || kevo_rtok_is(m, a - 1, ";") ||
                      kevo_rtok_is(m, a - 1, "}");
        if (depth != 0 || !starts) {
            snprintf(why, wl, "the store at line %u is not a statement of the loop's body itself "
                              "(a lane the condition skips would be written all the same)",
                     line);
            return false;
        }
    } else if (a != L->t_body) {
        snprintf(why, wl, "the store at line %u is not the loop's statement", line);
        return false;
    }
    unsigned end = kevo_recipe_expr_end(m, st.t_op + 1, L->t_end);
    if (end >= L->t_end || !kevo_rtok_is(m, end, ";")) {
        snprintf(why, wl, "the store at line %u is not one `y[...] = value;` statement", line);
        return false;
    }
    /* y, and any pointer from the same parameter, named only by the store */
    int root = kevo_recipe_root_param(m, st.var);
    for (unsigned t = L->t_body; t < L->t_end; t++) {
        int v = m->tok[t].var;
        if (v < 0 || t == st.t_lhs0)
            continue;
        if (v == st.var || (root >= 0 && (m->var[v].vtype == KEVO_VTYPE_POINTER ||
                                          m->var[v].vtype == KEVO_VTYPE_ARRAY) &&
                            kevo_recipe_root_param(m, v) == root)) {
            snprintf(why, wl,
                     "the loop at line %u reads '%s', which it streams to (a streamed line "
                     "is not in the cache)",
                     L->line, m->var[v].name);
            return false;
        }
    }
    unsigned other;
    if (root < 0) {
        snprintf(why, wl, "the store at line %u is through '%s', whose parameter kevo cannot "
                          "tell", line, Y->name);
        return false;
    }
    if (touched_elsewhere(m, L, root, &other)) {
        snprintf(why, wl,
                 "the kernel reads or writes '%s' again at line %u (a line streamed out at "
                 "line %u would be read back from memory)",
                 m->var[root].name, other, line);
        return false;
    }
    if (!kevo_recipe__unit_stride(m, st.t_idx0 + 1, st.t_idx1 - 1, L->var, why, wl, line))
        return false;
    for (unsigned t = st.t_idx0 + 1; t + 1 < st.t_idx1; t++) {
        int v = m->tok[t].var;
        if (v >= 0 && v != L->var && kevo_recipe_declared_in(m, v, L->t_body, L->t_end)) {
            snprintf(why, wl, "the store index at line %u uses '%s', declared in the loop", line,
                     m->var[v].name);
            return false;
        }
    }
    s->t_store = st.t_lhs0;
    s->t_lb = st.t_idx0;
    s->t_rb = st.t_idx1 - 1;
    s->t_lhs1 = st.t_lhs1;
    return true;
}

/* Tokens [a,b) as written, with the loop variable v replaced by `(with)`. */
static int put_subst(kevo_buf *b, const kevo_recipe_model *m, unsigned a, unsigned e, int v,
                     const char *with)
{
    int error = 0;
    for (unsigned t = a; t < e && error == 0; t++) {
        if (t > a)
            error = kevo_buf_printf(b, "%.*s", (int)(m->tok[t].start - m->tok[t - 1].end),
                                    m->src + m->tok[t - 1].end);
        if (error == 0)
            error = m->tok[t].var == v
                        ? kevo_buf_printf(b, "(%s)", with)
                        : kevo_buf_printf(b, "%.*s", (int)(m->tok[t].end - m->tok[t].start),
                                          m->src + m->tok[t].start);
    }
    return error;
}

/* The text of the loop's body, with the store's target replaced by
 * `repl` when repl is not NULL. */
static int put_body(kevo_buf *b, const kevo_recipe_model *m, const stream_loop *s,
                    const char *repl)
{
    const kevo_rloop *L = &m->loop[s->l];
    unsigned b0 = m->tok[L->t_body].start, b1 = m->tok[L->t_end - 1].end;
    if (!repl)
        return kevo_buf_printf(b, "%.*s", (int)(b1 - b0), m->src + b0);
    unsigned s0 = m->tok[s->t_store].start, s1 = m->tok[s->t_lhs1 - 1].end;
    return kevo_buf_printf(b, "%.*s%s%.*s", (int)(s0 - b0), m->src + b0, repl, (int)(b1 - s1),
                           m->src + s1);
}

static int rewrite(kevo_cparse_edits *e, const kevo_recipe_model *m, const stream_loop *s,
                   bool threads)
{
    const kevo_rloop *L = &m->loop[s->l];
    const kevo_rvar *iv = &m->var[L->var];
    unsigned from = L->n_pragmas ? m->dir[L->pragmas[0]].start : m->tok[L->t_for].start;
    from = kevo_recipe_line_begin(m, from);
    if (!L->at_line_start && !L->n_pragmas)
        from = m->tok[L->t_for].start;
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    /* fresh names from the loop variable's: bounds, first line start, end of
     * the lines, line index, line buffer, lane */
    static const char *const suffix[] = {"_lo", "_out", "_line", "_lines_end", "_blk", "_hi",
                                         "_lane"};
    char name[7][64];
    for (size_t k = 0; k < 7; k++)
        kevo_recipe_fresh_name(name[k], sizeof name[k], m, iv->name, suffix[k], name, k);
    const char *lo = name[0], *buf = name[1], *al = name[2], *bl = name[3], *blk = name[4],
               *hi = name[5], *lane = name[6];

    unsigned t0 = m->tok[L->t_type0].start, t1 = m->tok[L->t_type1 - 1].end;
    int tl = (int)(t1 - t0);
    const char *T = m->src + t0;
    const char *Y = m->src + m->tok[s->t_store].start;
    int yl = (int)(m->tok[s->t_store].end - m->tok[s->t_store].start);
    unsigned lb0 = m->tok[L->t_lb0].start, lb1 = m->tok[L->t_lb1 - 1].end;
    unsigned ub0 = m->tok[L->t_ub0].start, ub1 = m->tok[L->t_ub1 - 1].end;
    bool par = s->parallel || (threads && L->level == 0);
    char repl[160];
    snprintf(repl, sizeof repl, "%s[%s]", buf, lane);

    kevo_buf b = {0};
    int error = 0;
#define P(...)                                                                                     \
    do {                                                                                           \
        if (error == 0)                                                                            \
            error = kevo_buf_printf(&b, __VA_ARGS__);                                              \
    } while (0)
    const char *I = ind;
    int n = (int)il;
    P("%.*s{\n", L->at_line_start || L->n_pragmas ? n : 0, I);
    P("%.*s    /* stream: whole 64-byte lines of %.*s written past the caches */\n", n, I, yl, Y);
    P("%.*s    %.*s %s = %.*s, %s = (%.*s)%s, %s;\n", n, I, tl, T, lo, (int)(lb1 - lb0),
      m->src + lb0, hi, (int)(ub1 - ub0), m->src + ub0,
      L->cond_op == KEVO_COND_LE ? " + 1" : "", al);
    P("%.*s    for (%s = %s; %s < %s && ((__UINTPTR_TYPE__)&%.*s[", n, I, al, lo, al, hi, yl, Y);
    if (error == 0)
        error = put_subst(&b, m, s->t_lb + 1, s->t_rb, L->var, al);
    P("] & 63) != 0; %s++)\n%.*s        ;\n", al, n, I);
    P("%.*s    %.*s %s = %s < %s ? %s + (%s - %s) / %d * %d : %s;\n", n, I, tl, T, bl, al, hi, al,
      hi, al, STREAM_LANES, STREAM_LANES, al);
    const char *in = par ? "        " : "    ";
    if (par) {
        P("%.*s    #pragma omp parallel\n%.*s    {\n", n, I, n, I);
        P("%.*s        #pragma omp for nowait\n", n, I);
    }
    P("%.*s%sfor (%.*s %s = %s; %s < %s; %s += %d) {\n", n, I, in, tl, T, blk, al, blk, bl, blk,
      STREAM_LANES);
    P("%.*s%s    float %s[%d] __attribute__((aligned(64)));\n", n, I, in, buf, STREAM_LANES);
    /* omp simd (-fopenmp-simd): without it GCC unrolls the 16 iterations
     * completely and then fails to vectorise them; `unroll` leaves a loop
     * with an OpenMP pragma alone (an unroll 16 there ran hardsigmoid at 0.14x) */
    P("%.*s%s    #pragma omp simd\n", n, I, in);
    P("%.*s%s    for (int %s = 0; %s < %d; %s++) {\n", n, I, in, lane, lane, STREAM_LANES, lane);
    P("%.*s%s        const %.*s %s = %s + %s;\n%.*s%s        ", n, I, in, tl, T, iv->name, blk,
      lane, n, I, in);
    if (error == 0)
        error = put_body(&b, m, s, repl);
    P("\n%.*s%s    }\n", n, I, in);
    P("%.*s%s    nt_stream16(&%.*s[", n, I, in, yl, Y);
    if (error == 0)
        error = put_subst(&b, m, s->t_lb + 1, s->t_rb, L->var, blk);
    P("], %s);\n%.*s%s}\n", buf, n, I, in);
    if (par)
        P("%.*s        nt_stream_fence();\n%.*s    }\n", n, I, n, I);
    P("%.*s    for (%.*s %s = %s; %s < %s; %s++)\n%.*s        ", n, I, tl, T, iv->name, lo,
      iv->name, al, iv->name, n, I);
    if (error == 0)
        error = put_body(&b, m, s, NULL);
    P("\n%.*s    for (%.*s %s = %s; %s < %s; %s++)\n%.*s        ", n, I, tl, T, iv->name, bl,
      iv->name, hi, iv->name, n, I);
    if (error == 0)
        error = put_body(&b, m, s, NULL);
    P("\n");
    if (!par)
        P("%.*s    nt_stream_fence();\n", n, I);
    P("%.*s}", n, I);
#undef P
    unsigned to = m->tok[L->t_end - 1].end;
    if (error == 0)
        error = kevo_cparse_edits_add(e, from, to, "%s", kevo_buf_cstr(&b));
    kevo_buf_free(&b);
    return error < 0 ? error : (par ? 2 : 1);
}

int kevo_recipe_stream_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                             const long *params)
{
    long only = params[0];
    bool threads = params[1] != 0;
    int error = 0, applied = 0;
    bool openmp = false;
    kevo_buf reasons = {0};
    char why[400];

    if (kevo_recipe_loop_index_check(m, only) < 0)
        return KEVO_EINVAL;
    bool have_prelude = strstr(source, prelude) != NULL;
    if (!have_prelude && (strstr(source, "nt_stream16") || strstr(source, "nt_stream_fence")))
        return kevo_error_set(KEVO_EINVAL, "the source defines its own nt_stream16 or "
                                           "nt_stream_fence");
    for (size_t l = 0; l < m->n_loop; l++) {
        if (m->loop[l].n_children > 0 || (only >= 0 && (long)l != only))
            continue;
        stream_loop s;
        if (!stream_check(m, (int)l, &s, why, sizeof why)) {
            if ((reasons.len && (error = kevo_buf_puts(&reasons, "; ")) < 0) ||
                (error = kevo_buf_puts(&reasons, why)) < 0)
                goto done;
            continue;
        }
        int r = rewrite(&out->edits, m, &s, threads);
        if (r < 0) {
            error = r;
            goto done;
        }
        openmp |= r == 2;
        applied++;
    }
    if (applied == 0) {
        error = kevo_error_set(KEVO_EINVAL, "no loop streams its stores: %s",
                               reasons.len ? kevo_buf_cstr(&reasons) : "no innermost loop");
        goto done;
    }
    if ((error = kevo_recipe_edits_apply_with(&out->whole, &out->edits, source, m, prelude)) < 0)
        goto done;
    out->cflags = openmp ? "-fopenmp" : "-fopenmp-simd";
done:
    kevo_buf_free(&reasons);
    return error;
}
