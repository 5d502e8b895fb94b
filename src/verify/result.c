/*
 * verify/result.c - the eval result: its gates opened in order, its clear,
 * and its one JSON form (DESIGN.md "Verdicts"), whole or just the gates
 * array, built by one function so the two never drift. Must not: judge
 * (the gates do) or parse JSON back.
 */
#include "internal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

void kevo_eval_result_clear(kevo_eval_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ngates; i++)
        kevo_buf_free(&r->gates[i].messages);
    free(r->feedback);
    memset(r, 0, sizeof(*r));
}

kevo_gate *kevo_verify__gate_open(kevo_eval_result *r, const char *name)
{
    kevo_gate *g = &r->gates[r->ngates++];
    g->name = name;
    g->ran = true;
    return g;
}

/* One gate: name, ok, seconds, and its messages one line each (empty
 * lines dropped). */
static cJSON *gate_json(const kevo_gate *g)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", g->name);
    cJSON_AddBoolToObject(j, "ok", g->ok);
    cJSON_AddNumberToObject(j, "seconds", g->seconds);
    cJSON *msgs = cJSON_AddArrayToObject(j, "messages");
    const char *p = kevo_buf_cstr(&g->messages);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, len);
        if (len)
            cJSON_AddItemToArray(msgs, cJSON_CreateString(line));
        free(line);
        p += len + (eol ? 1 : 0);
    }
    return j;
}

static cJSON *gates_json(const kevo_eval_result *r)
{
    cJSON *gates = cJSON_CreateArray();
    for (size_t i = 0; i < r->ngates; i++)
        cJSON_AddItemToArray(gates, gate_json(&r->gates[i]));
    return gates;
}

static void latency_json(cJSON *o, const kevo_eval_result *r)
{
    if (!r->has_latency) {
        cJSON_AddNullToObject(o, "latency");
        return;
    }
    cJSON *l = cJSON_AddObjectToObject(o, "latency");
    cJSON_AddNumberToObject(l, "candidate_us", r->latency.candidate_us);
    cJSON_AddNumberToObject(l, "reference_us", r->latency.reference_us);
    cJSON_AddNumberToObject(l, "speedup", r->latency.speedup);
    cJSON_AddStringToObject(l, "baseline", r->latency.baseline);
    cJSON_AddNumberToObject(l, "candidate_min_us", r->latency.candidate_min_us);
    cJSON_AddNumberToObject(l, "reference_min_us", r->latency.reference_min_us);
    cJSON_AddNumberToObject(l, "candidate_cv", r->latency.candidate_cv);
    cJSON_AddNumberToObject(l, "reference_cv", r->latency.reference_cv);
    cJSON_AddNumberToObject(l, "candidate_samples", r->latency.candidate_samples);
    cJSON_AddNumberToObject(l, "reference_samples", r->latency.reference_samples);
}

/* "roofline": achieved rates and, with peaks, the bound and fraction;
 * null when nothing was timed or the task's bytes are unknown. */
static void roofline_json(cJSON *o, const kevo_eval_result *r)
{
    if (!r->has_roofline) {
        cJSON_AddNullToObject(o, "roofline");
        return;
    }
    const kevo_roofline *R = &r->roofline;
    cJSON *j = cJSON_AddObjectToObject(o, "roofline");
    cJSON_AddNumberToObject(j, "gbs", R->gbs);
    cJSON_AddNumberToObject(j, "gflops", R->gflops);
    cJSON_AddNumberToObject(j, "intensity", R->intensity);
    if (!R->have_bound) { /* no peaks, or flops unknown */
        cJSON_AddNullToObject(j, "fraction");
        cJSON_AddNullToObject(j, "bottleneck");
        return;
    }
    cJSON_AddNumberToObject(j, "bandwidth_gbs", R->bw_gbs);
    cJSON_AddNumberToObject(j, "bound_gbs", R->bound_gbs);
    cJSON_AddNumberToObject(j, "bound_gflops", R->bound_gflops);
    cJSON_AddNumberToObject(j, "fraction", R->fraction);
    cJSON_AddStringToObject(j, "bottleneck", kevo_roofline_bottleneck(R));
}

int kevo_eval_result_json(char **out, const kevo_eval_result *r, const kevo_task *t, bool pretty)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", t ? t->name : "");
    cJSON_AddStringToObject(o, "verdict", kevo_verdict_name(r->verdict));
    cJSON_AddItemToObject(o, "gates", gates_json(r));
    cJSON_AddStringToObject(o, "feedback", r->feedback ? r->feedback : "");
    latency_json(o, r);
    roofline_json(o, r);
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    *out = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}

int kevo_eval_result_gates_json(char **out, const kevo_eval_result *r)
{
    cJSON *gates = gates_json(r);
    *out = cJSON_PrintUnformatted(gates);
    cJSON_Delete(gates);
    return *out ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
}
