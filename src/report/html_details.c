/*
 * report/html_details.c - the Details section of the HTML page: per task
 * the attempt tree in decision order (an attempt under the start point it
 * refined; verdict, speedup and recipes on each node; the best starred;
 * chains deeper than TREE_MAX_DEPTH continue flat), the best kernel's
 * source (or the last attempt's), and the feedback of the first failed
 * attempts, each cut.
 *
 * Renders from the loaded model only: no store (no kevo_memory_* call).
 */
#include "html.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "no_store.h"

#define FEEDBACK_MAX_BYTES 1500
#define FEEDBACK_MAX_LINES 25
#define FEEDBACK_PER_TASK 6
#define TREE_MAX_DEPTH 24

/* A CSS class for a verdict: the verdict names are identifiers. */
static const char *verdict_class(kevo_verdict v)
{
    return (unsigned)v < KEVO_VERDICT_COUNT ? kevo_verdict_name(v) : "other";
}

/* "unroll(factor=16) + restrict" from the recipes JSON; the raw text when
 * it is not the expected shape. *out is malloc'd; NULL when none. */
static char *recipes_summary(const char *json)
{
    if (!json || !*json)
        return NULL;
    cJSON *root = cJSON_Parse(json);
    kevo_buf b = {0};
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return kevo_strdup(json);
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, root)
    {
        const cJSON *name = cJSON_GetObjectItem(r, "recipe");
        if (!cJSON_IsString(name))
            continue;
        if (b.len)
            kevo_buf_puts(&b, " + ");
        kevo_buf_puts(&b, name->valuestring);
        const cJSON *params = cJSON_GetObjectItem(r, "params"), *p;
        bool first = true;
        cJSON_ArrayForEach(p, params)
        {
            if (!p->string)
                continue;
            kevo_buf_puts(&b, first ? "(" : ", ");
            first = false;
            if (cJSON_IsNumber(p))
                kevo_buf_printf(&b, "%s=%g", p->string, p->valuedouble);
            else if (cJSON_IsString(p))
                kevo_buf_printf(&b, "%s=%s", p->string, p->valuestring);
            else
                kevo_buf_printf(&b, "%s", p->string);
        }
        if (!first)
            kevo_buf_puts(&b, ")");
    }
    cJSON_Delete(root);
    return kevo_buf_detach(&b);
}

/* Local index of attempt `id` among the task's attempts (sorted by id). */
static long local_index(const kevo_report__run *v, const kevo_report__task *t, int64_t id)
{
    size_t lo = 0, hi = t->natt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = v->list->attempts[t->att[mid]].id;
        if (x == id)
            return (long)mid;
        if (x < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* One node: id, iteration, stage, verdict, speedup, recipes; `flat` when
 * it is drawn at its parent's level (below TREE_MAX_DEPTH), so the
 * parent is named. */
static void tree_node(kevo_writer *w, const kevo_report__run *v, const kevo_report__task *t,
                      size_t j, long parent_local, bool flat)
{
    size_t idx = t->att[j];
    const kevo_attempt *a = &v->list->attempts[idx];
    if (flat)
        kevo_writer_printf(w, "<span class=\"rec\" title=\"refines #%lld\">&#8627;</span> ",
                           (long long)a->parent_id);
    const char *vc = verdict_class(a->verdict);
    kevo_writer_printf(w, "<span%s>#%lld</span> it %d &middot; %s &middot; <span class=\"v v-%s\">",
                       idx == t->best ? " class=\"best\"" : "", (long long)a->id,
                       kevo_report__clamp_iter(a->iteration) + 1, kevo_stage_name(a->stage), vc);
    kevo_writer_escape(w, kevo_verdict_name(a->verdict), (size_t)-1);
    kevo_writer_puts(w, "</span>");
    if (a->verdict == KEVO_VERDICT_CORRECT && kevo_report__good_speedup(a->speedup)) {
        char sp[32];
        kevo_report__fmt_speedup(sp, sizeof(sp), a->speedup);
        kevo_writer_printf(w, " %s", sp);
    }
    if (idx == t->best)
        kevo_writer_puts(w, " <span class=\"best\">&#9733; best</span>");
    if (a->parent_id > 0 && parent_local < 0)
        kevo_writer_printf(w, " <span class=\"rec\">(refines #%lld, outside this run)</span>",
                           (long long)a->parent_id);
    char *rec = recipes_summary(a->recipes_json);
    if (rec) {
        bool cut = false;
        size_t len = kevo_text_cut(rec, 120, 1, &cut);
        kevo_writer_puts(w, " <span class=\"rec\">");
        kevo_writer_escape(w, rec, len);
        if (cut)
            kevo_writer_puts(w, "&#8230;");
        kevo_writer_puts(w, "</span>");
        free(rec);
    }
}

/* The refines tree as nested lists, in decision order; iterative so that
 * a long chain cannot exhaust the stack, and flattened below
 * TREE_MAX_DEPTH so that it stays on the page. */
static int write_tree(kevo_writer *w, const kevo_report__run *v, const kevo_report__task *t)
{
    size_t m = t->natt;
    long *parent = calloc(m + 1, sizeof(long));
    size_t *nchild = calloc(m + 2, sizeof(size_t)), *child = calloc(m + 1, sizeof(size_t));
    size_t *fill = calloc(m + 1, sizeof(size_t)), *stack = calloc(m + 1, sizeof(size_t));
    int *depth = calloc(m + 1, sizeof(int));
    int error = 0;
    if (!parent || !nchild || !child || !fill || !stack || !depth) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory drawing an attempt tree");
        goto done;
    }
    /* children of j are child[nchild[j] .. nchild[j+1]) (counting sort) */
    for (size_t j = 0; j < m; j++) {
        const kevo_attempt *a = &v->list->attempts[t->att[j]];
        parent[j] = a->parent_id > 0 ? local_index(v, t, a->parent_id) : -1;
        if (parent[j] >= (long)j) /* parents come first; anything else is a root */
            parent[j] = -1;
        if (parent[j] >= 0)
            nchild[parent[j] + 1]++;
    }
    for (size_t j = 0; j < m; j++)
        nchild[j + 1] += nchild[j];
    for (size_t j = 0; j < m; j++)
        if (parent[j] >= 0) {
            size_t p = (size_t)parent[j];
            child[nchild[p] + fill[p]++] = j;
        }
    size_t sp = 0;
    for (size_t j = m; j-- > 0;)
        if (parent[j] < 0) {
            stack[sp] = j;
            depth[sp++] = 0;
        }
    kevo_writer_puts(w, "<ul class=\"tree\">");
    bool first = true;
    int cur = 0;
    while (sp > 0) {
        size_t j = stack[--sp];
        int td = depth[sp];                                /* in the tree */
        int d = td < TREE_MAX_DEPTH ? td : TREE_MAX_DEPTH; /* as drawn */
        bool flat = td > TREE_MAX_DEPTH;
        if (first)
            first = false;
        else if (d > cur)
            kevo_writer_puts(w, "<ul>");
        else {
            kevo_writer_puts(w, "</li>");
            for (int k = cur; k > d; k--)
                kevo_writer_puts(w, "</ul></li>");
        }
        kevo_writer_puts(w, "\n<li>");
        tree_node(w, v, t, j, parent[j], flat);
        cur = d;
        for (size_t c = nchild[j + 1]; c-- > nchild[j];) {
            stack[sp] = child[c];
            depth[sp++] = td + 1;
        }
    }
    if (!first) {
        kevo_writer_puts(w, "</li>");
        for (int k = cur; k > 0; k--)
            kevo_writer_puts(w, "</ul></li>");
    }
    kevo_writer_puts(w, "</ul>\n");
done:
    free(parent);
    free(nchild);
    free(child);
    free(fill);
    free(stack);
    free(depth);
    return error;
}

static int write_details(kevo_writer *w, const kevo_report__run *v, size_t r, size_t n)
{
    int error = 0;
    bool open = v->m->ntasks <= 12;
    kevo_writer_puts(w, "<h3>");
    if (n > 1)
        kevo_report__run_swatch(w, r);
    kevo_writer_printf(w, "Run %lld</h3>\n", (long long)v->m->run_id);
    for (size_t k = 0; k < v->m->ntasks && !error; k++) {
        const kevo_report__task *t = &v->tasks[k];
        const kevo_task_metrics *tm = t->tm;
        kevo_writer_printf(w, "<section class=\"task\" id=\"r%lld-t%zu\">\n<h3>",
                           (long long)v->m->run_id, k);
        kevo_writer_escape(w, tm->task, (size_t)-1);
        kevo_writer_printf(w, " <span class=\"st st-%s\">%s</span></h3>\n<p class=\"muted\">",
                           kevo_report__task_status(t), kevo_report__task_status(t));
        kevo_writer_printf(w, "%d attempt%s", tm->attempts, tm->attempts == 1 ? "" : "s");
        if (tm->correct) {
            char a[32], b[32];
            kevo_report__fmt_speedup(a, sizeof(a), tm->best_speedup);
            kevo_report__fmt_speedup(b, sizeof(b), tm->first_correct_speedup);
            kevo_writer_printf(w, " &middot; first correct at iteration %d (%s) &middot; best %s",
                               tm->first_correct_iter, b, a);
        }
        kevo_writer_printf(w, " &middot; <a href=\"#tasks\">back to the table</a></p>\n"
                              "<h4>Attempt tree</h4>\n");
        if ((error = write_tree(w, v, t)) < 0)
            break;
        /* the best kernel, else the last attempt's source */
        size_t src = t->best != SIZE_MAX ? t->best : t->natt ? t->att[t->natt - 1] : SIZE_MAX;
        if (src != SIZE_MAX) {
            const kevo_attempt *a = &v->list->attempts[src];
            const char *s = a->source ? a->source : "";
            size_t lines = 1;
            for (const char *c = s; *c; c++)
                lines += *c == '\n';
            if (t->best != SIZE_MAX) {
                char sp[32];
                kevo_report__fmt_speedup(sp, sizeof(sp), a->speedup);
                kevo_writer_printf(w, "<h4>Best kernel: attempt #%lld, %s</h4>\n", (long long)a->id,
                                   sp);
            } else {
                kevo_writer_printf(w, "<h4>No correct kernel; the last attempt (#%lld)</h4>\n",
                                   (long long)a->id);
            }
            kevo_writer_printf(w, "<details%s><summary>source (%zu lines)</summary><pre><code>",
                               open ? " open" : "", lines);
            kevo_report__put_cut(w, s, KEVO_REPORT__SOURCE_MAX_BYTES,
                                 KEVO_REPORT__SOURCE_MAX_LINES);
            kevo_writer_puts(w, "</code></pre></details>\n");
        }
        /* the feedback of failed attempts, the first few in decision order */
        size_t failed = 0;
        for (size_t j = 0; j < t->natt; j++)
            failed += v->list->attempts[t->att[j]].verdict != KEVO_VERDICT_CORRECT;
        if (failed) {
            kevo_writer_printf(w, "<h4>Failed attempts (%zu)</h4>\n", failed);
            size_t shown = 0;
            for (size_t j = 0; j < t->natt && shown < FEEDBACK_PER_TASK; j++) {
                const kevo_attempt *a = &v->list->attempts[t->att[j]];
                if (a->verdict == KEVO_VERDICT_CORRECT)
                    continue;
                shown++;
                kevo_writer_printf(w,
                                   "<details><summary>#%lld it %d &middot; <span class=\"v "
                                   "v-%s\">",
                                   (long long)a->id, kevo_report__clamp_iter(a->iteration) + 1,
                                   verdict_class(a->verdict));
                kevo_writer_escape(w, kevo_verdict_name(a->verdict), (size_t)-1);
                kevo_writer_puts(w, "</span></summary><pre class=\"fb\">");
                kevo_report__put_cut(
                    w, a->feedback && *a->feedback ? a->feedback : "(no feedback recorded)",
                    FEEDBACK_MAX_BYTES, FEEDBACK_MAX_LINES);
                kevo_writer_puts(w, "</pre></details>\n");
            }
            if (failed > shown)
                kevo_writer_printf(w,
                                   "<p class=\"muted\">%zu more failed attempts not shown "
                                   "(their feedback is in the store).</p>\n",
                                   failed - shown);
        }
        kevo_writer_puts(w, "</section>\n");
    }
    return error;
}

int kevo_report__html_details(kevo_writer *w, const kevo_report__model *model)
{
    int error = 0;
    kevo_writer_puts(w, "<h2 id=\"details\">Details</h2>\n");
    for (size_t r = 0; r < model->nruns; r++)
        if ((error = write_details(w, &model->runs[r], r, model->nruns)) < 0)
            goto done;
done:
    return error;
}
