/*
 * agent/llm_gen.c - the LLM generator: assembles the prompt from the
 * templates and the memory's token-budgeted context (src/context), asks the
 * provider (src/llm), extracts the kernel from the reply. A reply without
 * usable code is a failed attempt, not a failed run; exhausted retries stop
 * the run (it can be resumed).
 */
#include "internal.h"
#include "kevo/context.h"
#include "kevo/llm.h"
#include "kevo/roofline.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The roofline diagnosis of the start point, when its work is known. */
static char *bottleneck_of(const kevo_attempt *start, const kevo_task *task)
{
    double flops = 0, bytes = 0;
    kevo_peaks peaks;
    bool have_peaks = kevo_peaks_load(&peaks) == 0;
    char *out = NULL;
    if (start && kevo_task_work(&flops, &bytes, task) == 0)
        kevo_roofline_diagnose(&out, flops, bytes, start->candidate_us,
                               have_peaks ? &peaks : NULL);
    return out;
}

int kevo_llm_propose(kevo_proposal *out, kevo_attempt_state *st)
{
    memset(out, 0, sizeof(*out));
    const kevo_agent_task *at = st->at;
    const kevo_run_config *cfg = st->cfg;
    kevo_provider *prov = st->prov;
    kevo_stage stage = st->start ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT;
    int error = 0;
    kevo_context *ctx = NULL;
    char *context_text = NULL, *rules = NULL, *system = NULL, *user = NULL, *proto = NULL;
    kevo_llm_response resp = {0};
    kevo_context_config cc = st->derived->context;
    kevo_context_query q = {0};
    q.task = at->task->name;
    q.category = at->task->category;
    q.description = at->task->description;
    q.reference = at->reference;
    q.backend = cfg->backend;
    q.stage = stage;
    /* drafting shows the last attempt's feedback (pass@k: none) */
    q.feedback = st->start || cfg->strategy == KEVO_STRATEGY_PASSK ? NULL : st->last_feedback;
    q.start_point = st->start;
    char *bottleneck = bottleneck_of(st->start, at->task);
    q.bottleneck = bottleneck;
    if ((error = kevo_context_build(&ctx, st->mem, &q, &cc, &st->rng)) < 0 ||
        (error = kevo_context_render(&context_text, ctx)) < 0)
        goto done;
    kevo_task_prototype(&proto, at->task);
    char atol[32], rtol[32];
    snprintf(atol, sizeof(atol), "%g", at->task->atol);
    snprintf(rtol, sizeof(rtol), "%g", at->task->rtol);
    /* the backend says which fence and file extension the reply must use */
    const kevo_backend *be = kevo_backend_find(cfg->backend);
    const char *fence = be && be->code_language ? be->code_language : "c";
    const char *ext = be && be->candidate_ext ? be->candidate_ext : ".c";
    const char *keys[] = {"name", "prototype", "backend", "atol", "rtol",
                          "fence", "ext", "context", "rules"};
    const char *vals[] = {at->task->name, proto, cfg->backend, atol, rtol,
                          fence, ext, context_text, NULL};
    if ((error = kevo_prompt_render(&rules, cfg->backend, "rules", keys, vals, 7)) < 0)
        goto done;
    vals[8] = rules;
    if ((error = kevo_prompt_render(&system, cfg->backend, "system", keys, vals, 9)) < 0 ||
        (error = kevo_prompt_render(&user, cfg->backend,
                                    stage == KEVO_STAGE_DRAFT ? "draft" : "refine", keys, vals,
                                    9)) < 0)
        goto done;
    kevo_llm_message msgs[2] = {{KEVO_LLM_SYSTEM, system}, {KEVO_LLM_USER, user}};
    kevo_llm_request req;
    kevo_llm_request_init(&req);
    req.messages = msgs;
    req.n_messages = 2;
    char tag[160];
    snprintf(tag, sizeof(tag), "task=%s iter=%d stage=%s", at->task->name, st->iteration,
             kevo_stage_name(stage));
    req.tag = tag;
    if ((error = kevo_llm_complete(prov, &req, &resp)) < 0)
        goto done;
    out->tokens_prompt = resp.tokens_prompt;
    out->tokens_completion = resp.tokens_completion;
    out->tokens_estimated = resp.tokens_estimated;
    for (size_t i = 0; i < ctx->n_used && out->nused < 64; i++)
        out->used[out->nused++] = ctx->used[i];
    snprintf(out->summary, sizeof(out->summary), "%s, %d ctx tokens",
             kevo_llm_provider_name(prov), ctx->total_tokens);
    out->context_tokens = ctx->total_tokens;
    if (resp.failure) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "The model's reply was unusable: %s", resp.failure);
        out->failure = kevo_buf_detach(&b);
        goto done;
    }
    char *code = NULL;
    const char *tags = be && be->version >= 2 && be->code_fence_tags ? be->code_fence_tags : "c";
    if (kevo_llm_extract_code(&code, resp.content, tags, at->task->name) < 0) {
        kevo_buf b = {0};
        kevo_buf_printf(&b, "No kernel found in the reply: %s. Reply with the whole source of "
                            "`%s` in one ```%s block.", kevo_error_last(), at->task->name, fence);
        out->failure = kevo_buf_detach(&b);
        goto done;
    }
    out->source = code;
done:
    free(bottleneck);
    kevo_llm_response_clear(&resp);
    kevo_context_free(ctx);
    free(context_text);
    free(rules);
    free(system);
    free(user);
    free(proto);
    return error;
}

/* One single-message exchange with a template; *out is the reply or NULL. */
static int ask(char **out, kevo_provider *prov, const kevo_run_config *cfg, const char *tmpl,
               const char *const *keys, const char *const *vals, size_t n, const char *tag,
               int64_t tokens[2])
{
    *out = NULL;
    char *text = NULL;
    int error = kevo_prompt_render(&text, cfg->backend, tmpl, keys, vals, n);
    if (error < 0)
        return error;
    kevo_llm_message msg = {KEVO_LLM_USER, text};
    kevo_llm_request req;
    kevo_llm_request_init(&req);
    req.messages = &msg;
    req.n_messages = 1;
    req.tag = tag;
    kevo_llm_response resp = {0};
    error = kevo_llm_complete(prov, &req, &resp);
    if (error == 0) {
        tokens[0] += resp.tokens_prompt;
        tokens[1] += resp.tokens_completion;
        if (resp.content && !resp.failure)
            *out = strdup(resp.content);
    }
    kevo_llm_response_clear(&resp);
    free(text);
    return error;
}

/* The auditor's verdict from its reply: the first JSON object in it (bare
 * or in a fence). Fail closed: only {"valid": true} is valid. *reason is
 * the model's reason, or what was wrong with the answer. */
static void audit_verdict(bool *valid, char **reason, const char *reply)
{
    *valid = false;
    *reason = NULL;
    const char *open = reply ? strchr(reply, '{') : NULL;
    const char *close = reply ? strrchr(reply, '}') : NULL;
    cJSON *o = open && close > open ? cJSON_ParseWithLength(open, (size_t)(close - open + 1))
                                    : NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "valid");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "reason");
    kevo_buf b = {0};
    if (cJSON_IsBool(v)) {
        *valid = cJSON_IsTrue(v);
        kevo_buf_puts(&b, cJSON_IsString(r) && *r->valuestring ? r->valuestring
                                                                 : "(no reason given)");
    } else {
        const char *p = reply ? reply : "";
        size_t n = strcspn(p, "\n");
        kevo_buf_printf(&b, "the auditor did not answer {\"valid\": true|false, \"reason\": ...} "
                        "(kevo fails closed); its answer began: \"%.*s\"",
                        (int)(n > 120 ? 120 : n), p);
    }
    cJSON_Delete(o);
    *reason = kevo_buf_detach(&b);
}

int kevo_llm_audit(bool *out_invalid, char **out_reason, kevo_provider *prov,
                   const kevo_agent_task *at, const char *candidate, const kevo_run_config *cfg,
                   int64_t tokens[2])
{
    *out_invalid = true;
    *out_reason = NULL;
    char *proto = NULL, *reply = NULL, tag[160];
    kevo_task_prototype(&proto, at->task);
    const char *keys[] = {"name", "description", "prototype", "reference", "candidate"};
    const char *vals[] = {at->task->name, at->task->description, proto, at->reference, candidate};
    snprintf(tag, sizeof(tag), "task=%s audit", at->task->name);
    int error = ask(&reply, prov, cfg, "audit", keys, vals, 5, tag, tokens);
    if (error == 0) {
        bool valid = false;
        audit_verdict(&valid, out_reason, reply);
        *out_invalid = !valid;
    }
    free(reply);
    free(proto);
    return error;
}

int kevo_llm_reflect(char **out, kevo_provider *prov, const kevo_agent_task *at,
                     const char *candidate, const char *verdict, const char *feedback,
                     const kevo_run_config *cfg, int64_t tokens[2])
{
    char tag[160];
    const char *keys[] = {"name", "description", "verdict", "feedback", "candidate"};
    const char *vals[] = {at->task->name, at->task->description, verdict,
                          feedback ? feedback : "", candidate ? candidate : ""};
    snprintf(tag, sizeof(tag), "task=%s reflect", at->task->name);
    return ask(out, prov, cfg, "reflect", keys, vals, 5, tag, tokens);
}
