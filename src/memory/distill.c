/*
 * memory/distill.c - deterministic distillation of an attempt into
 * knowledge: an `experience` item (what was tried, what happened, why) and,
 * for a new best, a `trace` item holding the source. Same attempt in, same
 * text out: no clocks, no randomness, no LLM.
 */
#include "internal.h"

#include "kevo/util.h"

#include <cjson/cJSON.h>

#include <stdlib.h>
#include <string.h>

#define WHY_LINES 3
#define WHY_BYTES 360
#define TRACE_BYTES 12000

/* Source features worth naming when no recipe list says what was tried. */
static const struct {
    const char *needle;
    const char *label;
} features[] = {
    {"omp parallel", "OpenMP threads"},
    {"omp simd", "OpenMP SIMD"},
    {"_mm512_", "AVX-512 intrinsics"},
    {"_mm256_", "AVX2 intrinsics"},
    {"_mm_", "SSE intrinsics"},
    {"restrict", "restrict pointers"},
    {"unroll", "loop unrolling"},
    {"__builtin_prefetch", "software prefetch"},
    {"__builtin_assume_aligned", "alignment hints"},
    {"__shared__", "shared-memory tiling"},
    {"__local", "local-memory tiling"},
    {"__shfl", "warp shuffles"},
    {"float4", "vector loads"},
    {"vload", "vector loads"},
    {"tile", "tiling"},
    {"blocked", "blocking"},
};

static int describe_recipes(kevo_buf *b, const char *recipes_json)
{
    cJSON *root = cJSON_Parse(recipes_json);
    int error = 0, n = 0;
    if (!root)
        return kevo_buf_printf(b, "%.120s", recipes_json);
    if (cJSON_IsArray(root)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, root)
        {
            const char *name = NULL;
            if (cJSON_IsString(e))
                name = e->valuestring;
            else if (cJSON_IsObject(e) && cJSON_IsString(cJSON_GetObjectItem(e, "name")))
                name = cJSON_GetObjectItem(e, "name")->valuestring;
            if (!name)
                continue;
            if ((error = kevo_buf_printf(b, "%s%s", n ? ", " : "", name)) < 0)
                break;
            n++;
        }
    }
    if (error == 0 && n == 0) {
        char *text = cJSON_PrintUnformatted(root);
        error = kevo_buf_printf(b, "%.120s", text ? text : "?");
        cJSON_free(text);
    }
    cJSON_Delete(root);
    return error;
}

static int describe_source(kevo_buf *b, const char *source)
{
    int n = 0, error = 0;
    const char *seen[sizeof(features) / sizeof(features[0])];
    size_t n_seen = 0;
    for (size_t i = 0; source && i < sizeof(features) / sizeof(features[0]); i++) {
        if (!strstr(source, features[i].needle))
            continue;
        int dup = 0;
        for (size_t j = 0; j < n_seen; j++)
            dup |= !strcmp(seen[j], features[i].label);
        if (dup)
            continue;
        seen[n_seen++] = features[i].label;
        if ((error = kevo_buf_printf(b, "%s%s", n ? ", " : "", features[i].label)) < 0)
            return error;
        n++;
    }
    const char *hint = source ? strstr(source, "kevo: cflags") : NULL;
    if (hint) {
        size_t len = strcspn(hint, "\n");
        if (len > 100)
            len = 100;
        if ((error = kevo_buf_printf(b, "%sbuild flags \"%.*s\"", n ? ", " : "", (int)len - 12,
                                     hint + 12)) < 0)
            return error;
        n++;
    }
    if (n == 0)
        error = kevo_buf_puts(b, source && *source ? "plain scalar code" : "no source recorded");
    return error;
}

/* The first WHY_LINES non-empty lines of the feedback, at most WHY_BYTES. */
static int describe_why(kevo_buf *b, const char *feedback)
{
    int lines = 0, error = 0;
    size_t start = b->len;
    const char *p = feedback;
    while (p && *p && lines < WHY_LINES) {
        size_t len = strcspn(p, "\n");
        const char *s = p;
        size_t l = len;
        while (l && (*s == ' ' || *s == '\t'))
            s++, l--;
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
            l--;
        if (l) {
            if ((error = kevo_buf_printf(b, "%s%.*s", lines ? " / " : "", (int)l, s)) < 0)
                return error;
            lines++;
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    if (b->len - start > WHY_BYTES) {
        size_t keep = WHY_BYTES;
        /* do not cut a UTF-8 sequence */
        while (keep > 0 && ((unsigned char)b->ptr[start + keep] & 0xC0) == 0x80)
            keep--;
        b->len = start + keep;
        b->ptr[b->len] = '\0';
        error = kevo_buf_puts(b, " ...");
    } else if (lines == 0) {
        error = kevo_buf_puts(b, "no feedback recorded");
    }
    return error;
}

int kevo_distill_experience(char **out_title, char **out_body, const kevo_attempt *a,
                            const kevo_attempt *parent, const char *category)
{
    kevo_buf t = {0}, b = {0};
    int correct = a->verdict == KEVO_VERDICT_CORRECT;
    int error = kevo_buf_printf(&t, "%s %s #%d: %s", a->task, kevo_stage_name(a->stage),
                                a->iteration, kevo_verdict_name(a->verdict));
    if (error == 0 && correct && a->speedup > 0)
        error = kevo_buf_printf(&t, ", %.2fx", a->speedup);
    if (error < 0)
        goto done;

    if ((error = kevo_buf_printf(&b, "Task %s (%s), backend %s, generator %s, %s iteration %d.\n",
                                 a->task, category ? category : "uncategorised",
                                 a->backend ? a->backend : "?", a->generator ? a->generator : "?",
                                 kevo_stage_name(a->stage), a->iteration)) < 0)
        goto done;
    if (parent && (error = kevo_buf_printf(&b, "Start point: attempt #%lld (%s, %.2fx, %.1f us).\n",
                                           (long long)parent->id, kevo_verdict_name(parent->verdict), parent->speedup,
                                           parent->candidate_us)) < 0)
        goto done;
    if ((error = kevo_buf_puts(&b, "Tried: ")) < 0)
        goto done;
    if (a->recipes_json && *a->recipes_json) {
        if ((error = kevo_buf_puts(&b, "recipes ")) < 0 ||
            (error = describe_recipes(&b, a->recipes_json)) < 0)
            goto done;
    } else if ((error = describe_source(&b, a->source)) < 0) {
        goto done;
    }
    if ((error = kevo_buf_printf(&b, ".\nOutcome: %s", kevo_verdict_name(a->verdict))) < 0)
        goto done;
    if (correct && a->speedup > 0)
        error = kevo_buf_printf(&b, ", %.2fx over the reference (%.1f us vs %.1f us)", a->speedup,
                                a->candidate_us, a->reference_us);
    /* the start point measured on another machine: compare through the
     * references timed beside each (record.c's reward rule), never raw */
    int elsewhere = parent && a->machine && *a->machine && parent->machine &&
                    *parent->machine && strcmp(a->machine, parent->machine) != 0;
    double rho = 0;
    if (correct && parent && !elsewhere && parent->candidate_us > 0 && a->candidate_us > 0)
        rho = parent->candidate_us / a->candidate_us;
    else if (correct && parent && elsewhere && parent->speedup > 0 && a->speedup > 0)
        rho = a->speedup / parent->speedup;
    if (error == 0 && rho > 0)
        error = kevo_buf_printf(&b, "; %.2fx %s than the start point%s", rho >= 1 ? rho : 1 / rho,
                                rho >= 1 ? "faster" : "slower",
                                elsewhere ? " (measured on another machine: speedups compared)"
                                          : "");
    if (error < 0 || (error = kevo_buf_puts(&b, ".\nWhy: ")) < 0 ||
        (error = describe_why(&b, a->feedback)) < 0 || (error = kevo_buf_puts(&b, "\n")) < 0)
        goto done;
    *out_title = kevo_buf_detach(&t);
    *out_body = kevo_buf_detach(&b);
done:
    kevo_buf_free(&t);
    kevo_buf_free(&b);
    return error;
}

int kevo_distill_trace(char **out_title, char **out_body, const kevo_attempt *a)
{
    kevo_buf t = {0}, b = {0};
    int error = kevo_buf_printf(&t, "%s: %.2fx on %s (attempt #%lld)", a->task, a->speedup,
                                a->backend ? a->backend : "?", (long long)a->id);
    if (error < 0)
        goto done;
    size_t len = a->source ? strlen(a->source) : 0;
    if (len > TRACE_BYTES) {
        size_t keep = TRACE_BYTES;
        while (keep > 0 && ((unsigned char)a->source[keep] & 0xC0) == 0x80)
            keep--;
        error = kevo_buf_printf(&b, "%.*s\n[... cut: %zu more bytes]\n", (int)keep, a->source,
                                len - keep);
    } else {
        error = kevo_buf_puts(&b, a->source ? a->source : "");
    }
    if (error < 0)
        goto done;
    *out_title = kevo_buf_detach(&t);
    *out_body = kevo_buf_detach(&b);
done:
    kevo_buf_free(&t);
    kevo_buf_free(&b);
    return error;
}
