/*
 * recipe/recipe_omp.c - the pragma recipes:
 *   omp_parallel  `#pragma omp parallel for [collapse(n)] [private] [reduction]`
 *                 on the outermost loop of the first (or every) top-level nest;
 *   omp_simd      `#pragma omp simd [reduction]` on innermost loops;
 *   unroll        `#pragma GCC unroll F` on innermost loops.
 * Each checks the loop form and the scalar and store patterns in access.c
 * and declines, with the reason, where the pragma would be wrong.
 *
 * GCC accepts no other pragma between `#pragma omp simd|for` and its loop,
 * nor between the loops of a collapsed nest, so these recipes skip loops
 * whose pragmas would conflict, and merge `omp simd` with an `omp parallel
 * for` on the same loop into `omp parallel for simd`.
 *
 * Must not: move or rewrite loops (see recipe_loops.c).
 */
#include "model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Offset within p[0..n) of `word` as a whole word, or -1. */
static long find_word(const char *p, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++) {
        if (memcmp(p + i, word, w) != 0)
            continue;
        bool left = i == 0 || !(isalnum((unsigned char)p[i - 1]) || p[i - 1] == '_');
        bool right = i + w == n || !(isalnum((unsigned char)p[i + w]) || p[i + w] == '_');
        if (left && right)
            return (long)i;
    }
    return -1;
}

/* Append private/reduction clauses for `s`, leaving out variables the
 * existing directive text already names. */
static int append_clauses(kevo_buf *b, const kevo_recipe_model *m, const kevo_rscalars *s,
                          const char *existing, size_t existing_len)
{
    int error = 0;
    bool open = false;
    for (size_t i = 0; i < s->n_priv; i++) {
        const char *name = m->var[s->priv[i]].name;
        if (find_word(existing, existing_len, name) >= 0)
            continue;
        if ((error = kevo_buf_printf(b, "%s%s", open ? ", " : " private(", name)) < 0)
            return error;
        open = true;
    }
    if (open && (error = kevo_buf_puts(b, ")")) < 0)
        return error;
    for (size_t i = 0; i < s->n_red; i++) {
        bool first_of_op = true;
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->red_op[k], s->red_op[i]) == 0)
                first_of_op = false;
        if (!first_of_op)
            continue;
        open = false;
        for (size_t k = i; k < s->n_red; k++) {
            const char *name = m->var[s->red_var[k]].name;
            if (strcmp(s->red_op[k], s->red_op[i]) != 0 ||
                find_word(existing, existing_len, name) >= 0)
                continue;
            if (open)
                error = kevo_buf_printf(b, ", %s", name);
            else
                error = kevo_buf_printf(b, " reduction(%s:%s", s->red_op[i], name);
            if (error < 0)
                return error;
            open = true;
        }
        if (open && (error = kevo_buf_puts(b, ")")) < 0)
            return error;
    }
    return error;
}

static int add_reason(kevo_buf *reasons, const char *why)
{
    int error;
    if (reasons->len > 0 && (error = kevo_buf_puts(reasons, "; ")) < 0)
        return error;
    return kevo_buf_puts(reasons, why);
}

/* ---- omp_parallel ------------------------------------------------------- */

/* Loop r in a parallel region where each thread allocates its own copy of
 * the private buffers priv[0..np) (private.c), under the name of the
 * kernel's (which it shadows), and runs its share of the iterations under
 * `for_pragma` (`#pragma omp for ...`). When a thread cannot have its copy,
 * no thread runs the shared loop (all decide after a barrier, so the
 * worksharing loop is met by all threads or none) and the loop runs as
 * written, on the kernel's buffer, after the region:
 *
 *     { int sum_copies_ok = 1;
 *       #pragma omp parallel
 *       { __typeof__(sum) sum = malloc(...);
 *         if (!sum) { #pragma omp atomic write
 *                     sum_copies_ok = 0; }
 *         #pragma omp barrier
 *         if (sum_copies_ok) { #pragma omp for ...
 *                                LOOP }
 *         free(sum); }
 *       if (!sum_copies_ok)
 *           LOOP }
 */
/* Append text[0..len) with `by` spaces before each of its lines. */
static void indented(kevo_buf *b, const char *text, size_t len, int by)
{
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) + 1 : len;
        kevo_buf_printf(b, "%*s%.*s", by, "", (int)(e - i), text + i);
        i = e;
    }
}

static int private_region(kevo_cparse_edits *e, const kevo_recipe_model *m, int r,
                          const kevo_rprivate *priv, size_t np, const char *for_pragma)
{
    const kevo_rloop *L = &m->loop[r];
    unsigned a = kevo_recipe_line_begin(m, m->tok[L->t_for].start);
    unsigned b = m->tok[L->t_end - 1].end;
    size_t il;
    const char *ind = kevo_recipe_indent(m, m->tok[L->t_for].start, &il);
    int n = (int)il;
    char ok[64];
    kevo_recipe_fresh_name(ok, sizeof(ok), m, m->var[priv[0].var].name, "_copies_ok", NULL, 0);
    kevo_buf t = {0};
    kevo_buf_printf(&t, "%.*s{ /* kevo omp_parallel: each thread has its own", n, ind);
    for (size_t k = 0; k < np; k++)
        kevo_buf_printf(&t, "%s '%s'", k ? "," : "", m->var[priv[k].var].name);
    kevo_buf_printf(&t, " */\n%.*s    int %s = 1;\n", n, ind, ok);
    kevo_buf_printf(&t, "%.*s    #pragma omp parallel\n%.*s    {\n", n, ind, n, ind);
    for (size_t k = 0; k < np; k++) {
        const char *name = m->var[priv[k].var].name;
        unsigned i0 = m->tok[priv[k].t_init0].start, i1 = m->tok[priv[k].t_init1 - 1].end;
        kevo_buf_printf(&t, "%.*s        __typeof__(%s) %s = %.*s;\n", n, ind, name, name,
                        (int)(i1 - i0), m->src + i0);
        kevo_buf_printf(&t,
                        "%.*s        if (!%s) {\n%.*s            #pragma omp atomic write\n"
                        "%.*s            %s = 0;\n%.*s        }\n",
                        n, ind, name, n, ind, n, ind, ok, n, ind);
    }
    kevo_buf_printf(&t, "%.*s        #pragma omp barrier\n", n, ind);
    kevo_buf_printf(&t, "%.*s        if (%s) {\n%.*s            %s\n", n, ind, ok, n, ind,
                    for_pragma);
    indented(&t, m->src + a, b - a, 12);
    kevo_buf_printf(&t, "\n%.*s        }\n", n, ind);
    for (size_t k = 0; k < np; k++)
        kevo_buf_printf(&t, "%.*s        free(%s);\n", n, ind, m->var[priv[k].var].name);
    kevo_buf_printf(&t, "%.*s    }\n%.*s    if (!%s)\n", n, ind, n, ind, ok);
    indented(&t, m->src + a, b - a, 8);
    kevo_buf_printf(&t, "\n%.*s}", n, ind);
    int error = kevo_buf_cstr(&t) ? kevo_cparse_edits_add(e, a, b, "%s", kevo_buf_cstr(&t))
                                  : kevo_error_set(KEVO_ENOMEM, "out of memory");
    kevo_buf_free(&t);
    return error;
}

/* Parallelise the nest rooted at top-level loop r. Returns 1 when done,
 * 0 when skipped (reason appended), < 0 on error. */
static int parallel_nest(kevo_recipe_out *out, const kevo_recipe_model *m, int r, long collapse,
                         bool any_step, kevo_buf *reasons)
{
    int error = 0, applied = 0;
    kevo_buf pragma = {0};
    kevo_rscalars sc;
    const kevo_rloop *L = &m->loop[r];
    char why[256];

    for (size_t k = (size_t)r; k < m->n_loop && m->loop[k].t_for < L->t_end; k++)
        if (m->loop[k].pragma_flags & (KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR)) {
            snprintf(why, sizeof(why),
                     "the nest at line %u already has an omp parallel/for "
                     "directive (line %u)",
                     L->line, m->loop[k].line);
            error = add_reason(reasons, why);
            goto done;
        }
    /* any_step: OpenMP's canonical `i += s`, s loop-invariant (pack's panel
     * fill steps by the panel width, a constant of the kernel), one loop */
    bool stepped =
        any_step && L->canonical && L->declared && L->cond_op == KEVO_COND_LT && L->step >= 0;
    if (!L->strided && !stepped) {
        error = add_reason(reasons, L->why);
        goto done;
    }
    if (L->early_exit) {
        kevo_recipe_early_exit_why(why, sizeof(why), L);
        error = add_reason(reasons, why);
        goto done;
    }
    if (L->pragma_flags & ~KEVO_PRAGMA_OMP_SIMD) {
        int n;
        const char *t = kevo_recipe_pragma_text(m, r, ~0u, &n);
        snprintf(why, sizeof(why),
                 "the loop at line %u carries '%.*s', which cannot follow an "
                 "omp parallel for",
                 L->line, n, t);
        error = add_reason(reasons, why);
        goto done;
    }
    /* scratch buffers each iteration fills before it reads: one per thread */
    kevo_rprivate priv[4];
    int skip[4];
    size_t np = 0;
    char why_private[320] = "";
    if (L->pragma_flags == 0 && L->at_line_start && L->parent < 0 &&
        (error = kevo_recipe_private_buffers(priv, 4, &np, m, r, why_private,
                                             sizeof(why_private))) < 0)
        goto done;
    for (size_t k = 0; k < np; k++)
        skip[k] = priv[k].var;
    if (kevo_recipe_scalars(&sc, m, L->t_body, L->t_end, L->t_end) < 0 ||
        kevo_recipe_same_index_except(m, L->t_body, L->t_end, skip, np) < 0) {
        snprintf(why, sizeof(why), "%s", kevo_error_last());
        error = add_reason(reasons, why);
        goto done;
    }
    int c = L->strided ? kevo_recipe_band(m, r, (int)collapse, true, NULL, 0) : 1;
    int vars[8];
    for (; c >= 1; c--) {
        for (int k = 0; k < c && k < 8; k++)
            vars[k] = m->loop[kevo_recipe_nest_loop(m, r, k)].var;
        if (kevo_recipe_stores_indexed_except(m, L->t_body, L->t_end, vars, (size_t)c, skip, np) ==
            0)
            break;
        if (c == 1) {
            if (why_private[0])
                snprintf(why, sizeof(why), "%s (not a private buffer: %s)", kevo_error_last(),
                         why_private);
            else
                snprintf(why, sizeof(why), "%s", kevo_error_last());
            error = add_reason(reasons, why);
            goto done;
        }
    }
    if (c < 1) {
        error = add_reason(reasons, "no loop of the nest can be parallelised");
        goto done;
    }

    if (L->pragma_flags & KEVO_PRAGMA_OMP_SIMD) {
        /* `#pragma omp simd rest` -> `#pragma omp parallel for simd ... rest` */
        int d = L->pragmas[0];
        for (int k = 0; k < L->n_pragmas; k++)
            if (m->dir[L->pragmas[k]].flags & KEVO_PRAGMA_OMP_SIMD)
                d = L->pragmas[k];
        const char *p = m->src + m->dir[d].start;
        size_t n = m->dir[d].end - m->dir[d].start;
        long at = find_word(p, n, "simd");
        if (at < 0) {
            error = kevo_error_set(KEVO_ERROR, "recipe bug: no 'simd' in an omp simd pragma");
            goto done;
        }
        const char *rest = p + at + 4;
        size_t rest_len = n - (size_t)at - 4;
        if ((error = kevo_buf_puts(&pragma, "#pragma omp parallel for simd")) < 0)
            goto done;
        if (c > 1 && (error = kevo_buf_printf(&pragma, " collapse(%d)", c)) < 0)
            goto done;
        if ((error = append_clauses(&pragma, m, &sc, p, n)) < 0 ||
            (error = kevo_buf_put(&pragma, rest, rest_len)) < 0)
            goto done;
        if ((error = kevo_cparse_edits_add(&out->edits, m->dir[d].start, m->dir[d].end, "%s",
                                           kevo_buf_cstr(&pragma))) < 0)
            goto done;
        applied = 1;
        goto done;
    }
    if ((error = kevo_buf_puts(&pragma, np ? "#pragma omp for" : "#pragma omp parallel for")) < 0)
        goto done;
    if (c > 1 && (error = kevo_buf_printf(&pragma, " collapse(%d)", c)) < 0)
        goto done;
    if ((error = append_clauses(&pragma, m, &sc, "", 0)) < 0)
        goto done;
    if (np)
        error = private_region(&out->edits, m, r, priv, np, kevo_buf_cstr(&pragma));
    else
        error = kevo_recipe_insert_pragma(&out->edits, m, r, kevo_buf_cstr(&pragma));
    if (error < 0)
        goto done;
    applied = 1;
done:
    kevo_buf_free(&pragma);
    return error < 0 ? error : applied;
}

/* Whether nest r only fills the buffer of a `pack` (every store to an
 * array named *_pack or *_packt): not the kernel's work. */
static bool pack_fill(const kevo_recipe_model *m, int r)
{
    const kevo_rloop *L = &m->loop[r];
    kevo_rwrite *w = NULL;
    size_t nw = 0, fills = 0;
    if (kevo_recipe_writes(&w, &nw, m, L->t_body, L->t_end) < 0) {
        kevo_error_clear();
        return false;
    }
    bool only = true;
    for (size_t i = 0; i < nw && only; i++) {
        if (w[i].kind == KEVO_WRITE_SCALAR)
            continue;
        only = kevo_recipe_pack_buffer(m, w[i].var) != 0;
        fills++;
    }
    free(w);
    return only && fills > 0;
}

int kevo_recipe_omp_parallel_apply(kevo_recipe_out *out, const kevo_recipe_model *m,
                                   const char *source, const long *params)
{
    int error = 0, done_nests = 0;
    kevo_buf reasons = {0};
    (void)source;

    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    for (size_t d = 0; d < m->n_dir; d++)
        if ((m->dir[d].flags & KEVO_PRAGMA_OMP_ANY) && !m->dir[d].attached)
            return kevo_error_set(KEVO_EINVAL,
                                  "the kernel already has an OpenMP directive at line %u that is "
                                  "not on a loop",
                                  kevo_recipe_line(m, m->dir[d].start));
    for (size_t r = 0; r < m->n_loop; r++) {
        if (m->loop[r].parent >= 0)
            continue;
        if (!params[1] && pack_fill(m, (int)r))
            continue; /* the first nest is the kernel's work, not a copy `pack` added */
        int rc = parallel_nest(out, m, (int)r, params[0], false, &reasons);
        if (rc < 0) {
            error = rc;
            goto done;
        }
        done_nests += rc;
        if (!params[1])
            break;
    }
    if (done_nests == 0) {
        error = kevo_error_set(KEVO_EINVAL, "%s", kevo_buf_cstr(&reasons));
        goto done;
    }
    /* the copies `pack` makes for the nest: filled by the same threads,
     * not by one while the others wait at the nest (on matmul_trans_b at
     * 333x1021x517, two serial fills were 23% of the master's time) */
    for (size_t r = 0; r < m->n_loop && !params[1]; r++) {
        kevo_buf skipped = {0};
        int rc = 0;
        if (m->loop[r].parent < 0 && pack_fill(m, (int)r))
            rc = parallel_nest(out, m, (int)r, 1, true, &skipped);
        kevo_buf_free(&skipped);
        if (rc < 0) {
            error = rc;
            goto done;
        }
    }
    out->cflags = "-fopenmp";
done:
    kevo_buf_free(&reasons);
    return error;
}

/* ---- omp_simd ----------------------------------------------------------- */

int kevo_recipe_omp_simd_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                               const long *params)
{
    int error = 0, applied = 0;
    kevo_buf reasons = {0}, clauses = {0};
    char why[320];
    (void)source;
    (void)params;

    if (m->n_loop == 0)
        return kevo_error_set(KEVO_EINVAL, "the kernel has no for loop");
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        kevo_rscalars sc;
        if (L->n_children > 0)
            continue;
        kevo_buf_clear(&clauses);
        why[0] = '\0';
        int a = kevo_recipe_collapsed_into(m, (int)l);
        if (L->pragma_flags & KEVO_PRAGMA_OMP_SIMD) {
            snprintf(why, sizeof(why), "the loop at line %u already has omp simd", L->line);
        } else if (L->pragma_flags & ~(KEVO_PRAGMA_OMP_PARALLEL | KEVO_PRAGMA_OMP_FOR)) {
            int n;
            const char *t = kevo_recipe_pragma_text(m, (int)l, ~0u, &n);
            snprintf(why, sizeof(why),
                     "the loop at line %u carries '%.*s' (GCC allows no other "
                     "pragma between omp simd and its loop)",
                     L->line, n, t);
        } else if (a >= 0) {
            snprintf(why, sizeof(why),
                     "the loop at line %u is collapsed into the omp loop at "
                     "line %u",
                     L->line, m->loop[a].line);
        } else if (!L->canonical) {
            snprintf(why, sizeof(why), "%s", L->why);
        } else if (L->early_exit) {
            kevo_recipe_early_exit_why(why, sizeof(why), L);
        } else if (kevo_recipe_scalars(&sc, m, L->t_body, L->t_end, L->t_end) < 0 ||
                   kevo_recipe_stores_indexed(m, L->t_body, L->t_end, &L->var, 1) < 0 ||
                   kevo_recipe_same_index(m, L->t_body, L->t_end) < 0) {
            snprintf(why, sizeof(why), "loop at line %u: %s", L->line, kevo_error_last());
        }
        if (why[0]) {
            if ((error = add_reason(&reasons, why)) < 0)
                goto done;
            continue;
        }
        if (L->pragma_flags & KEVO_PRAGMA_OMP_FOR) {
            /* merge into the loop's own `omp [parallel] for`: add " simd" after "for" */
            int d = L->pragmas[0];
            for (int k = 0; k < L->n_pragmas; k++)
                if (m->dir[L->pragmas[k]].flags & KEVO_PRAGMA_OMP_FOR)
                    d = L->pragmas[k];
            const char *p = m->src + m->dir[d].start;
            size_t n = m->dir[d].end - m->dir[d].start;
            long at = find_word(p, n, "for");
            if (at < 0) {
                error = kevo_error_set(KEVO_ERROR, "recipe bug: no 'for' in an omp for pragma");
                goto done;
            }
            if ((error = append_clauses(&clauses, m, &sc, p, n)) < 0)
                goto done;
            unsigned after_for = m->dir[d].start + (unsigned)at + 3;
            if ((error = kevo_cparse_edits_add(&out->edits, after_for, after_for, " simd")) < 0 ||
                (error = kevo_cparse_edits_add(&out->edits, m->dir[d].end, m->dir[d].end, "%s",
                                               kevo_buf_cstr(&clauses))) < 0)
                goto done;
        } else {
            if ((error = kevo_buf_puts(&clauses, "#pragma omp simd")) < 0 ||
                (error = append_clauses(&clauses, m, &sc, "", 0)) < 0 ||
                (error = kevo_recipe_insert_pragma(&out->edits, m, (int)l,
                                                   kevo_buf_cstr(&clauses))) < 0)
                goto done;
        }
        applied++;
    }
    if (applied == 0) {
        error =
            kevo_error_set(KEVO_EINVAL, "no innermost loop qualifies: %s", kevo_buf_cstr(&reasons));
        goto done;
    }
    /* -fno-trapping-math: under gcc's default -ftrapping-math a division or
     * another floating-point operation under a condition may not be run
     * speculatively, so gcc keeps the branch and the loop stays scalar
     * ("control flow in loop") whatever the pragma says: huber_loss's
     * `s += r < beta ? 0.5f * r * r / beta : r - 0.5f * beta;`. The flag
     * changes no value (the default floating-point environment traps
     * nothing); it lets gcc compute both sides and select. */
    out->cflags = "-fopenmp-simd -fno-trapping-math";
done:
    kevo_buf_free(&reasons);
    kevo_buf_free(&clauses);
    return error;
}

/* ---- unroll ------------------------------------------------------------- */

int kevo_recipe_unroll_apply(kevo_recipe_out *out, const kevo_recipe_model *m, const char *source,
                             const long *params)
{
    int error = 0, applied = 0;
    kevo_buf reasons = {0};
    char why[256];
    long factor = params[0], only = params[1];
    (void)source;

    if (kevo_recipe_loop_index_check(m, only) < 0)
        return KEVO_EINVAL;
    if (only >= 0 && m->loop[only].n_children > 0)
        return kevo_error_set(KEVO_EINVAL,
                              "the loop at line %u holds other loops: unroll marks "
                              "innermost loops",
                              m->loop[only].line);
    for (size_t l = 0; l < m->n_loop; l++) {
        const kevo_rloop *L = &m->loop[l];
        if (L->n_children > 0 || (only >= 0 && (long)l != only))
            continue;
        why[0] = '\0';
        int a = kevo_recipe_collapsed_into(m, (int)l);
        if (L->pragma_flags & KEVO_PRAGMA_OMP_ANY) {
            int n;
            const char *t = kevo_recipe_pragma_text(m, (int)l, KEVO_PRAGMA_OMP_ANY, &n);
            snprintf(why, sizeof(why),
                     "the loop at line %u carries '%.*s' (GCC allows no "
                     "unroll pragma between it and the loop)",
                     L->line, n, t);
        } else if (a >= 0) {
            snprintf(why, sizeof(why),
                     "the loop at line %u is collapsed into the omp loop at "
                     "line %u",
                     L->line, m->loop[a].line);
        }
        if (why[0]) {
            if ((error = add_reason(&reasons, why)) < 0)
                goto done;
            continue;
        }
        if (L->pragma_flags & KEVO_PRAGMA_UNROLL) {
            int d = -1;
            for (int k = 0; k < L->n_pragmas; k++)
                if (m->dir[L->pragmas[k]].flags & KEVO_PRAGMA_UNROLL)
                    d = L->pragmas[k];
            const char *p = m->src + m->dir[d].start;
            size_t n = m->dir[d].end - m->dir[d].start;
            long at = find_word(p, n, "unroll");
            long old = at >= 0 ? strtol(p + at + 6, NULL, 10) : -1;
            if (old == factor) {
                snprintf(why, sizeof(why), "the loop at line %u already has '%.*s'", L->line,
                         (int)n, p);
                if ((error = add_reason(&reasons, why)) < 0)
                    goto done;
                continue;
            }
            if ((error = kevo_cparse_edits_add(&out->edits, m->dir[d].start, m->dir[d].end,
                                               "#pragma GCC unroll %ld", factor)) < 0)
                goto done;
        } else {
            char text[40];
            snprintf(text, sizeof(text), "#pragma GCC unroll %ld", factor);
            if ((error = kevo_recipe_insert_pragma(&out->edits, m, (int)l, text)) < 0)
                goto done;
        }
        applied++;
    }
    if (applied == 0)
        error = kevo_error_set(KEVO_EINVAL, "no innermost loop can take an unroll pragma: %s",
                               kevo_buf_cstr(&reasons));
done:
    kevo_buf_free(&reasons);
    return error;
}
