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

/* The prompt texts of this attempt. */
typedef struct prompt_parts {
    kevo_context *ctx;
    char *context, *rules, *system, *user, *proto;
    const kevo_backend *be; /* the run's: its fence, extension and reply tags */
    const char *fence;
} prompt_parts;

static void prompt_parts_clear(prompt_parts *pp)
{
    kevo_context_free(pp->ctx);
    free(pp->context);
    free(pp->rules);
    free(pp->system);
    free(pp->user);
    free(pp->proto);
    memset(pp, 0, sizeof(*pp));
}

/* True for the iterative-refinement baseline's conversation (App. D.2):
 * once the task has an attempt, the prompt is the whole exchange so far. */
static bool conversation_of(const kevo_attempt_state *st)
{
    return st->cfg->strategy == KEVO_STRATEGY_REFINE && st->nturns > 0;
}

/* The memory's context for this attempt, then the system and user prompts
 * from the backend's templates. The refinement baseline's first user turn
 * is the draft prompt (its history is the conversation itself). */
static int build_prompts(prompt_parts *pp, kevo_attempt_state *st, char **bottleneck)
{
    const kevo_agent_task *at = st->at;
    const kevo_run_config *cfg = st->cfg;
    bool conversation = conversation_of(st);
    kevo_stage stage = st->start && !conversation ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT;
    kevo_context_config cc = st->derived->context;
    if (conversation) /* the task section only: the history is the conversation */
        cc.n = cc.max_practices = cc.max_api = 0;
    kevo_context_query q = {.task = at->task->name,
                            .category = at->task->category,
                            .description = at->task->description,
                            .reference = at->reference,
                            .reference_torch = at->task->torch,
                            .backend = cfg->backend,
                            .stage = stage,
                            .start_point = conversation ? NULL : st->start};
    /* drafting shows the last attempt's feedback (pass@k: none) */
    if (!st->start && !conversation && cfg->strategy != KEVO_STRATEGY_PASSK)
        q.feedback = kevo_agent__last_feedback(st);
    q.bottleneck = *bottleneck = bottleneck_of(st->start, at->task);
    int error = 0;
    if ((error = kevo_context_build(&pp->ctx, st->mem, &q, &cc, &st->rng)) < 0 ||
        (error = kevo_context_render(&pp->context, pp->ctx)) < 0 ||
        (error = kevo_task_prototype(&pp->proto, at->task)) < 0)
        return error;
    char atol[32], rtol[32];
    snprintf(atol, sizeof(atol), "%g", at->task->atol);
    snprintf(rtol, sizeof(rtol), "%g", at->task->rtol);
    /* the backend says which fence and file extension the reply must use */
    const kevo_backend *be = pp->be = kevo_backend_find(cfg->backend);
    pp->fence = be && be->code_language ? be->code_language : "c";
    const char *ext = be && be->candidate_ext ? be->candidate_ext : ".c";
    const char *keys[] = {"name", "prototype", "backend", "atol", "rtol",
                          "fence", "ext", "context", "rules"};
    const char *vals[] = {at->task->name, pp->proto, cfg->backend, atol, rtol,
                          pp->fence, ext, pp->context, NULL};
    if ((error = kevo_prompt_render(&pp->rules, cfg->backend, "rules", keys, vals, 7)) < 0)
        return error;
    vals[8] = pp->rules;
    if ((error = kevo_prompt_render(&pp->system, cfg->backend, "system", keys, vals, 9)) < 0)
        return error;
    if ((error = kevo_prompt_render(&pp->user, cfg->backend,
                                    stage == KEVO_STAGE_DRAFT ? "draft" : "refine", keys, vals,
                                    9)) < 0 ||
        cfg->strategy != KEVO_STRATEGY_PASSK)
        return error;
    /* pass@k's one demonstration (App. D.1): an example task and answer
     * before the task itself */
    char *demo = NULL, *user = NULL;
    kevo_buf b = {0};
    if ((error = kevo_prompt_render(&demo, cfg->backend, "demonstration", keys, vals, 9)) == 0) {
        kevo_buf_printf(&b, "%s\n%s", demo, pp->user);
        if (!(user = kevo_buf_detach(&b)))
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    free(demo);
    if (user) {
        free(pp->user);
        pp->user = user;
    }
    return error;
}

/* App. D.2's turns: each earlier attempt as the model's answer and the
 * verifier's feedback on it (at most 4000 characters), then the request to
 * improve the best kernel so far. The strings live in `arena`. */
static int add_turns(kevo_llm_message *msgs, size_t *n, char **arena,
                     const kevo_attempt_state *st, const char *fence)
{
    int error = 0;
    for (size_t i = 0; i < st->nturns && error == 0; i++) {
        const struct kevo_turn *t = &st->turns[i];
        kevo_buf answer = {0}, fb = {0};
        kevo_buf_printf(&answer, "```%s\n%s\n```", fence, t->source);
        kevo_buf_printf(&fb, "The verifier's verdict on that kernel: %s", kevo_verdict_name(t->verdict));
        if (t->speedup > 0)
            kevo_buf_printf(&fb, ", %.2fx the reference", t->speedup);
        kevo_buf_printf(&fb, ".\n%.4000s", t->feedback);
        if (i + 1 == st->nturns && st->start)
            kevo_buf_printf(&fb, "\n\nThe best correct kernel so far is attempt %d (%.2fx). "
                            "Write a FASTER correct version of `%s`, starting from it. Reply "
                            "with the complete source in one ```%s fenced block.",
                            st->start->iteration + 1, st->start->speedup, st->at->task->name,
                            fence);
        else if (i + 1 == st->nturns)
            kevo_buf_printf(&fb, "\n\nNo kernel so far is correct. Write a correct version of "
                            "`%s` that fixes what the verifier reports. Reply with the complete "
                            "source in one ```%s fenced block.", st->at->task->name, fence);
        arena[2 * i] = kevo_buf_detach(&answer);
        arena[2 * i + 1] = kevo_buf_detach(&fb);
        if (!arena[2 * i] || !arena[2 * i + 1])
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        msgs[(*n)++] = (kevo_llm_message){KEVO_LLM_ASSISTANT, arena[2 * i]};
        msgs[(*n)++] = (kevo_llm_message){KEVO_LLM_USER, arena[2 * i + 1]};
    }
    return error;
}

/* The reply's kernel into out->source, or out->failure saying why not. */
static int take_code(kevo_proposal *out, const kevo_llm_response *resp,
                     const kevo_attempt_state *st, const prompt_parts *pp)
{
    const kevo_backend *be = pp->be;
    const char *fence = pp->fence;
    const char *tags = be && be->version >= 2 && be->code_fence_tags ? be->code_fence_tags : "c";
    kevo_buf b = {0};
    if (resp->failure)
        kevo_buf_printf(&b, "The model's reply was unusable: %s", resp->failure);
    else if (kevo_llm_extract_code(&out->source, resp->content, tags, st->at->task->name) < 0)
        kevo_buf_printf(&b, "No kernel found in the reply: %s. Reply with the whole source of "
                            "`%s` in one ```%s block.", kevo_error_last(), st->at->task->name,
                        fence);
    else
        return 0;
    if (!(out->failure = kevo_buf_detach(&b)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    return 0;
}

int kevo_llm_propose(kevo_proposal *out, kevo_attempt_state *st)
{
    memset(out, 0, sizeof(*out));
    prompt_parts pp = {0};
    kevo_llm_response resp = {0};
    char *bottleneck = NULL;
    bool conversation = conversation_of(st);
    size_t cap = 2 + (conversation ? 2 * st->nturns : 0), n = 0;
    kevo_llm_message *msgs = calloc(cap, sizeof(*msgs));
    char **arena = calloc(cap, sizeof(*arena));
    int error = msgs && arena ? 0 : kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error < 0 || (error = build_prompts(&pp, st, &bottleneck)) < 0)
        goto done;
    msgs[n++] = (kevo_llm_message){KEVO_LLM_SYSTEM, pp.system};
    msgs[n++] = (kevo_llm_message){KEVO_LLM_USER, pp.user};
    if (conversation && (error = add_turns(msgs, &n, arena, st, pp.fence)) < 0)
        goto done;
    kevo_llm_request req;
    kevo_llm_request_init(&req);
    req.messages = msgs;
    req.n_messages = n;
    char tag[160];
    snprintf(tag, sizeof(tag), "task=%s iter=%d stage=%s", st->at->task->name, st->iteration,
             kevo_stage_name(st->start ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT));
    req.tag = tag;
    if ((error = kevo_llm_complete(st->prov, &req, &resp)) < 0)
        goto done;
    out->tokens_prompt = resp.tokens_prompt;
    out->tokens_completion = resp.tokens_completion;
    out->tokens_estimated = resp.tokens_estimated;
    for (size_t i = 0; i < pp.ctx->n_used && out->nused < 64; i++)
        out->used[out->nused++] = pp.ctx->used[i];
    snprintf(out->summary, sizeof(out->summary), "%s, %d ctx tokens",
             kevo_llm_provider_name(st->prov), pp.ctx->total_tokens);
    out->context_tokens = pp.ctx->total_tokens;
    error = take_code(out, &resp, st, &pp);
done:
    for (size_t i = 0; arena && i < cap; i++)
        free(arena[i]);
    free(arena);
    free(msgs);
    free(bottleneck);
    kevo_llm_response_clear(&resp);
    prompt_parts_clear(&pp);
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
    const char *keys[] = {"name",      "description",    "prototype",       "reference",
                          "candidate", "reference_lang", "reference_fence"};
    const char *vals[] = {at->task->name, at->task->description, proto, at->reference, candidate,
                          at->task->torch ? "PyTorch" : "C", at->task->torch ? "python" : "c"};
    snprintf(tag, sizeof(tag), "task=%s audit", at->task->name);
    int error = ask(&reply, prov, cfg, "audit", keys, vals, 7, tag, tokens);
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
