/*
 * memory_seed.c - fill a memory store with a small, known experience graph
 * for the CLI integration tests: two tasks (seed_relu, seed_softmax), one
 * run each plus a shared one, drafts and refines with used items, the
 * built-in knowledge. Usage: memory_seed DB
 */
#include "kevo/context.h"
#include "kevo/memory.h"

#include <stdio.h>
#include <string.h>

static int record(kevo_memory *mem, const char *task, int64_t run, kevo_stage stage, int64_t parent,
                  int it, const char *verdict, double us, const kevo_context *ctx, int64_t *out)
{
    int ok = !strcmp(verdict, "correct");
    kevo_verdict v = KEVO_VERDICT_INFRA_ERROR;
    if (kevo_verdict_parse(&v, verdict) < 0)
        return -1;
    char source[160];
    snprintf(source, sizeof(source),
             "#pragma omp parallel for\nvoid %s(const float *x, float *y, int64_t n) { /* %d */ }",
             task, it);
    kevo_attempt a = {.run_id = run,
                      .task = task,
                      .backend = "c",
                      .generator = "seed",
                      .stage = stage,
                      .iteration = it,
                      .parent_id = parent,
                      .verdict = v,
                      .gates_json = "[{\"gate\":\"compile\",\"ok\":true}]",
                      .feedback =
                          ok ? "all outputs within tolerance" : "max abs error 0.5 at index 3",
                      .source = source,
                      .candidate_us = ok ? us : 0,
                      .reference_us = 100,
                      .speedup = ok ? 100 / us : 0,
                      .tokens_prompt = 1200,
                      .tokens_completion = 300};
    return kevo_memory_attempt_record(mem, &a, ctx ? ctx->used : NULL, ctx ? ctx->n_used : 0, NULL,
                                      out);
}

static int build(kevo_context **out, kevo_memory *mem, const char *task, kevo_stage stage,
                 int64_t start)
{
    kevo_context_query q = {.task = task,
                            .category = "activation",
                            .description = "elementwise activation over N floats",
                            .reference = "void k(const float *x, float *y, int64_t n) {}",
                            .backend = "c",
                            .stage = stage,
                            .feedback = "max abs error 0.5 at index 3",
                            .bottleneck = "memory bound",
                            .start_point_id = start};
    return kevo_context_build(out, mem, &q, NULL, NULL);
}

int main(int argc, char **argv)
{
    kevo_memory *mem = NULL;
    int error = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: memory_seed DB\n");
        return 2;
    }
    if ((error = kevo_memory_open(&mem, argv[1])) < 0 ||
        (error = kevo_memory_seed_builtin(mem)) < 0)
        goto done;
    const char *tasks[2] = {"seed_relu", "seed_softmax"};
    int64_t shared = 0;
    if ((error = kevo_memory_run_begin(mem, "{\"tasks\":[\"seed_relu\",\"seed_softmax\"]}",
                                       &shared)) < 0)
        goto done;
    for (int t = 0; t < 2; t++) {
        kevo_memory_task task = {.name = tasks[t],
                                 .level = 1,
                                 .category = "activation",
                                 .description = t ? "Row-wise softmax" : "Elementwise ReLU",
                                 .reference = "void k(void) {}",
                                 .suite_path = "suites/c/level1"};
        if ((error = kevo_memory_task_upsert(mem, &task, NULL)) < 0)
            goto done;
        int64_t run = 0;
        char cfg[64];
        snprintf(cfg, sizeof(cfg), "{\"task\":\"%s\"}", tasks[t]);
        if ((error = kevo_memory_run_begin(mem, cfg, &run)) < 0)
            goto done;
        /* draft 0 fails, draft 1 is correct; two refines from it, one more
         * refine from the better refine */
        kevo_context *ctx = NULL;
        int64_t d0 = 0, d1 = 0, r1 = 0, r2 = 0;
        if ((error = build(&ctx, mem, tasks[t], KEVO_STAGE_DRAFT, 0)) < 0 ||
            (error = record(mem, tasks[t], run, KEVO_STAGE_DRAFT, 0, 0, "incorrect", 0, ctx, &d0)) <
                0)
            goto done;
        kevo_context_free(ctx);
        if ((error = build(&ctx, mem, tasks[t], KEVO_STAGE_DRAFT, 0)) < 0 ||
            (error = record(mem, tasks[t], run, KEVO_STAGE_DRAFT, 0, 1, "correct", 80, ctx, &d1)) <
                0)
            goto done;
        kevo_context_free(ctx);
        if ((error = build(&ctx, mem, tasks[t], KEVO_STAGE_REFINE, d1)) < 0 ||
            (error = record(mem, tasks[t], shared, KEVO_STAGE_REFINE, d1, 2, "correct", 40, ctx,
                            &r1)) < 0)
            goto done;
        kevo_context_free(ctx);
        if ((error = build(&ctx, mem, tasks[t], KEVO_STAGE_REFINE, d1)) < 0 ||
            (error = record(mem, tasks[t], run, KEVO_STAGE_REFINE, d1, 3, "compile_error", 0, ctx,
                            &r2)) < 0)
            goto done;
        kevo_context_free(ctx);
        if ((error = build(&ctx, mem, tasks[t], KEVO_STAGE_REFINE, r1)) < 0 ||
            (error = record(mem, tasks[t], run, KEVO_STAGE_REFINE, r1, 4, "correct", 30, ctx,
                            NULL)) < 0)
            goto done;
        kevo_context_free(ctx);
        if ((error = kevo_memory_run_finish(mem, run, "done")) < 0)
            goto done;
    }
done:
    if (error < 0)
        fprintf(stderr, "memory_seed: %s\n", kevo_error_last());
    kevo_memory_free(mem);
    return error < 0 ? 1 : 0;
}
