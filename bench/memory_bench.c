/*
 * bench/memory_bench.c - how fast is one full retrieval + context assembly
 * on a large memory? Fills a store with ~100k attempts over 100 tasks
 * (each recorded through kevo_memory_attempt_record, so ~100k distilled
 * experience items plus traces) and extra api_doc / best_practice / recipe
 * items up to the item target, then times kevo_context_build (start-point
 * pick included when refining) for random tasks and stages.
 *
 *   bench_memory_bench [--db PATH] [--items N] [--attempts N] [--queries N]
 *                      [--reuse] [--keep]
 *
 * Prints the fill time, the median / p90 wall and CPU time of one build,
 * and the store size on disk. --reuse skips the fill when PATH exists.
 */
#include "kevo/context.h"
#include "kevo/memory.h"
#include "kevo/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_TASKS 100

static const char *categories[10] = {"activation", "elementwise", "reduction", "norm", "matmul",
                                     "conv",       "pooling",     "scan",      "loss", "attention"};
static const char *ops[10][10] = {
    {"relu", "gelu", "silu", "tanh", "sigmoid", "softplus", "elu", "hardswish", "mish", "selu"},
    {"add", "mul", "axpy", "clamp", "where", "pow", "abs", "scale_shift", "lerp", "fma3"},
    {"sum_rows", "max_rows", "argmax", "mean_cols", "l2norm", "logsumexp", "min_rows", "prod",
     "var_rows", "count_nonzero"},
    {"layernorm", "rmsnorm", "batchnorm", "groupnorm", "instancenorm", "l2_normalize",
     "softmax_rows", "log_softmax", "standardize", "minmax_scale"},
    {"gemm", "gemv", "batched_gemm", "matmul_t", "outer", "syrk", "gemm_bias_relu", "trmm",
     "matvec_t", "bmm_small"},
    {"conv2d", "conv1d", "depthwise_conv", "conv3x3", "conv1x1", "conv_transpose", "dilated_conv",
     "grouped_conv", "im2col", "winograd"},
    {"maxpool2d", "avgpool2d", "global_avgpool", "maxpool1d", "lppool", "adaptive_avg", "minpool",
     "sumpool", "maxpool3d", "avgpool1d"},
    {"cumsum", "cumprod", "cummax", "exclusive_scan", "segmented_scan", "reverse_cumsum",
     "running_mean", "logcumsumexp", "scan_rows", "prefix_max"},
    {"mse", "cross_entropy", "huber", "kl_div", "hinge", "bce", "nll", "smooth_l1", "cosine_loss",
     "triplet"},
    {"attention", "causal_attention", "flash_attention", "softmax_qk", "mha_proj", "rope", "alibi",
     "kv_cache_update", "sdpa_small", "cross_attention"},
};
static const char *techniques[] = {
    "#pragma omp parallel for schedule(static)",
    "#pragma omp simd",
    "#pragma omp parallel for simd reduction(+:acc)",
    "__m512 v = _mm512_loadu_ps(x + i);",
    "v = _mm512_fmadd_ps(a, v, b);",
    "_mm512_storeu_ps(y + i, v);",
    "__m512 m = _mm512_max_ps(v, _mm512_setzero_ps());",
    "float s = _mm512_reduce_add_ps(acc0);",
    "__builtin_prefetch(x + i + 64, 0, 1);",
    "#pragma GCC unroll 4",
    "for (int64_t jb = 0; jb < C; jb += 64) /* tile */",
    "float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;",
    "const float *restrict xr = x + r * C;",
    "__mmask16 k = (__mmask16)((1u << rem) - 1);",
    "y[i] = fmaxf(x[i], 0.0f);",
    "double acc = 0.0; /* accumulate in double */",
    "float mx = -INFINITY; for (int64_t j = 0; j < C; j++) mx = fmaxf(mx, xr[j]);",
    "y[i] = expf(x[i] - mx) * inv;",
};
/* One line of bottleneck diagnosis (four kinds). */
static void bottleneck(char *buf, size_t len, int kind, int pct, double x)
{
    switch (kind) {
    case 0:
        snprintf(buf, len,
                 "memory bound: %d%% of peak bandwidth, arithmetic intensity %.2f "
                 "flop/byte",
                 pct, x);
        break;
    case 1:
        snprintf(buf, len,
                 "compute bound: %d%% of peak flops, fma latency limits the reduction "
                 "chain %.2f",
                 pct, x);
        break;
    case 2:
        snprintf(buf, len,
                 "latency bound: small problem, thread start-up dominates (%d%% idle, "
                 "%.2f us)",
                 pct, x);
        break;
    default:
        snprintf(buf, len,
                 "cache misses: strided access along columns, %d%% of loads miss L2 "
                 "(%.2f)",
                 pct, x);
        break;
    }
}

static char *make_source(kevo_rng *rng, const char *op, int variant)
{
    kevo_buf b = {0};
    kevo_buf_printf(&b,
                    "// kevo: cflags -O3 -march=native -fopenmp\n#include <immintrin.h>\n"
                    "#include <math.h>\n#include <stdint.h>\n\n"
                    "void %s(const float *x, float *y, int64_t R, int64_t C)\n{\n",
                    op);
    int n = 6 + (int)(kevo_rng_next(rng) % 10);
    for (int i = 0; i < n; i++) {
        const char *t = techniques[kevo_rng_next(rng) % (sizeof(techniques) / sizeof(*techniques))];
        kevo_buf_printf(&b, "    %s\n", t);
        if (i % 3 == 0)
            kevo_buf_printf(&b,
                            "    for (int64_t i%d = 0; i%d < R * C; i%d += %d) {\n"
                            "        y[i%d] = x[i%d] * %d.0f + %d.5f;\n    }\n",
                            i, i, i, 16 << (variant % 3), i, i, variant % 7, i);
    }
    kevo_buf_puts(&b, "}\n");
    return kevo_buf_detach(&b);
}

/* A verdict by name (the bench's names are all valid). */
static kevo_verdict verdict_of(const char *name)
{
    kevo_verdict v = KEVO_VERDICT_INFRA_ERROR;
    kevo_verdict_parse(&v, name);
    return v;
}

static char *make_feedback(kevo_rng *rng, const char *verdict, int *bn)
{
    kevo_buf b = {0};
    *bn = (int)(kevo_rng_next(rng) % 4);
    if (!strcmp(verdict, "correct"))
        kevo_buf_printf(&b, "all outputs within atol=rtol=1e-2\n");
    else if (!strcmp(verdict, "incorrect"))
        kevo_buf_printf(&b,
                        "max abs error %.3f at index %d (expected %.4f, got %.4f)\n"
                        "%d of %d outputs outside atol=rtol=1e-2, worst near the row tail\n",
                        kevo_rng_uniform(rng), (int)(kevo_rng_next(rng) % 100000),
                        kevo_rng_normal(rng), kevo_rng_normal(rng),
                        (int)(kevo_rng_next(rng) % 5000), 1 << 20);
    else if (!strcmp(verdict, "compile_error"))
        kevo_buf_printf(
            &b, "error: '%s' undeclared (first use in this function)\n",
            (const char *[]){"acc4", "_mm512_mask_max_ps", "rem", "inv"}[kevo_rng_next(rng) % 4]);
    else
        kevo_buf_printf(&b, "the kernel ran longer than %d s\n", 10);
    char line[200];
    bottleneck(line, sizeof(line), *bn, (int)(kevo_rng_next(rng) % 100), kevo_rng_uniform(rng) * 4);
    kevo_buf_printf(&b, "%s\n", line);
    return kevo_buf_detach(&b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fill(kevo_memory *mem, long n_items, long n_attempts, kevo_rng *rng)
{
    int error = 0;
    char name[64], desc[256];
    int64_t last_correct[N_TASKS] = {0};
    double best_us[N_TASKS];
    int64_t recent[64] = {0};
    size_t n_recent = 0;
    if ((error = kevo_memory_seed_builtin(mem)) < 0)
        return error;
    for (int t = 0; t < N_TASKS; t++) {
        const char *cat = categories[t / 10];
        snprintf(name, sizeof(name), "%s", ops[t / 10][t % 10]);
        snprintf(desc, sizeof(desc),
                 "%s: %s of an R x C float matrix (%s category), "
                 "atol=rtol=1e-2",
                 name, t % 2 ? "row-wise" : "elementwise", cat);
        char *ref = make_source(rng, name, t);
        kevo_memory_task task = {.name = name,
                                 .level = 1 + t % 3,
                                 .category = cat,
                                 .description = desc,
                                 .reference = ref};
        error = kevo_memory_task_upsert(mem, &task, NULL);
        free(ref);
        if (error < 0)
            return error;
        best_us[t] = 1000;
    }
    double t0 = kevo_now_s();
    for (long i = 0; i < n_attempts && error == 0; i++) {
        if (i % 1000 == 0 && (error = kevo_memory_tx_begin(mem)) < 0)
            return error;
        int t = (int)(kevo_rng_next(rng) % N_TASKS);
        const char *op = ops[t / 10][t % 10];
        int refine = last_correct[t] && kevo_rng_uniform(rng) < 0.7;
        double u = kevo_rng_uniform(rng);
        const char *verdict = u < 0.55   ? "correct"
                              : u < 0.8  ? "incorrect"
                              : u < 0.95 ? "compile_error"
                                         : "timeout";
        int ok = !strcmp(verdict, "correct");
        /* mostly no better than the best so far; now and then a new best */
        double us = ok ? best_us[t] * (0.97 + kevo_rng_uniform(rng) * 0.5) : 0;
        char *src = make_source(rng, op, (int)i);
        int bn = 0;
        char *fb = make_feedback(rng, verdict, &bn);
        kevo_used_item used[6];
        size_t n_used = 0;
        for (size_t k = 0; k < 6 && k < n_recent; k++) {
            int64_t id = recent[kevo_rng_next(rng) % n_recent];
            int dup = 0;
            for (size_t j = 0; j < n_used; j++)
                dup |= used[j].item_id == id;
            if (!dup)
                used[n_used++] = (kevo_used_item){id, 0, (int)n_used + 1, 60, false};
        }
        kevo_attempt a = {.task = op,
                          .backend = "c",
                          .generator = i % 3 ? "openai" : "builtin",
                          .stage = refine ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                          .iteration = (int)(i % 30),
                          .parent_id = refine ? last_correct[t] : 0,
                          .verdict = verdict_of(verdict),
                          .gates_json = "[{\"gate\":\"anti_hack\",\"ok\":true},"
                                        "{\"gate\":\"compile\",\"ok\":true}]",
                          .feedback = fb,
                          .source = src,
                          .recipes_json = i % 3 ? NULL : "[\"vectorize\",\"openmp\"]",
                          .candidate_us = us,
                          .reference_us = 1000,
                          .speedup = ok ? 1000 / us : 0,
                          .tokens_prompt = 3000,
                          .tokens_completion = 700};
        int64_t id = 0;
        error = kevo_memory_attempt_record(mem, &a, used, n_used, NULL, &id);
        free(src);
        free(fb);
        if (error < 0)
            break;
        if (ok) {
            if (us < best_us[t])
                best_us[t] = us;
            if (!last_correct[t] || kevo_rng_uniform(rng) < 0.3)
                last_correct[t] = id;
        }
        /* the newest items are the ones contexts would mostly pick */
        kevo_item_list *l = NULL;
        if (i % 50 == 0) {
            kevo_item_filter f = {.newest_first = 1, .limit = 64, .no_body = 1};
            if ((error = kevo_memory_item_list(&l, mem, &f)) < 0)
                break;
            n_recent = l->n;
            for (size_t k = 0; k < l->n; k++)
                recent[k] = l->items[k].id;
            kevo_item_list_free(l);
        }
        if (i % 1000 == 999 && (error = kevo_memory_tx_commit(mem)) < 0)
            return error;
        if (i % 10000 == 9999)
            fprintf(stderr, "  %ld attempts, %.1f s\n", i + 1, kevo_now_s() - t0);
    }
    if (error < 0) {
        kevo_memory_tx_rollback(mem);
        return error;
    }
    if (n_attempts % 1000 && (error = kevo_memory_tx_commit(mem)) < 0)
        return error;
    /* top up the items with knowledge of the other kinds */
    kevo_memory_stats st;
    if ((error = kevo_memory_stats_get(&st, mem)) < 0)
        return error;
    if ((error = kevo_memory_tx_begin(mem)) < 0)
        return error;
    for (long i = 0; st.items + i < n_items && error == 0; i++) {
        int kind = (int)(i % 3);
        char title[128], body[600];
        const char *cat = categories[kevo_rng_next(rng) % 10];
        if (kind == 0)
            snprintf(title, sizeof(title), "_mm512_op%ld_ps", i);
        else
            snprintf(title, sizeof(title), "%s advice %ld for %s kernels",
                     kind == 1 ? "practice" : "recipe", i, cat);
        snprintf(body, sizeof(body),
                 "%s. Applies to %s kernels: %s then %s. Check the %s before and after; "
                 "it usually helps when the kernel is %s.",
                 title, cat, techniques[i % 18], techniques[(i * 7) % 18],
                 i % 2 ? "roofline" : "tail handling", i % 3 ? "memory bound" : "compute bound");
        kevo_item it = {.kind = kind == 0   ? KEVO_ITEM_API_DOC
                                : kind == 1 ? KEVO_ITEM_BEST_PRACTICE
                                            : KEVO_ITEM_RECIPE,
                        .title = title,
                        .body = body,
                        .category = i % 4 ? cat : NULL,
                        .backend = kind == 0 ? "c" : NULL,
                        .tags = kind == 1 ? "memory compute latency" : NULL};
        error = kevo_memory_item_add(mem, &it, NULL);
    }
    if (error < 0) {
        kevo_memory_tx_rollback(mem);
        return error;
    }
    return kevo_memory_tx_commit(mem);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_memory_bench [--db PATH] [--items N] [--attempts N] "
                    "[--queries N] [--reuse] [--keep]\n");
}

int main(int argc, char **argv)
{
    const char *db = NULL;
    long n_items = 100000, n_attempts = 100000, n_queries = 300;
    int reuse = 0, keep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "--items") && i + 1 < argc)
            n_items = atol(argv[++i]);
        else if (!strcmp(argv[i], "--attempts") && i + 1 < argc)
            n_attempts = atol(argv[++i]);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            n_queries = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reuse"))
            reuse = 1;
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else {
            usage();
            return 2;
        }
    }
    if (n_queries < 1 || n_attempts < 0 || n_items < 0) {
        usage();
        return 2;
    }
    char *dir = NULL, *path = NULL;
    if (!db) {
        if (kevo_mkdtemp(&dir, "kevo-bench-") < 0) {
            fprintf(stderr, "memory_bench: %s\n", kevo_error_last());
            return 3;
        }
        path = kevo_path_join(dir, "bench.db");
    } else {
        path = strdup(db);
        keep = 1;
    }
    int exists = kevo_file_exists(path);
    kevo_memory *mem = NULL;
    kevo_rng rng;
    kevo_rng_seed(&rng, 20260101);
    int error = kevo_memory_open(&mem, path);
    double fill_s = 0;
    if (error == 0 && !(reuse && exists)) {
        fprintf(stderr, "filling %s: %ld attempts, %ld items ...\n", path, n_attempts, n_items);
        double t0 = kevo_now_s();
        error = fill(mem, n_items, n_attempts, &rng);
        fill_s = kevo_now_s() - t0;
    }
    if (error < 0) {
        fprintf(stderr, "memory_bench: %s\n", kevo_error_last());
        kevo_memory_free(mem);
        return 3;
    }
    /* reopen: the timed builds start from a fresh handle (cold caches) */
    kevo_memory_free(mem);
    if ((error = kevo_memory_open(&mem, path)) < 0) {
        fprintf(stderr, "memory_bench: %s\n", kevo_error_last());
        return 3;
    }
    kevo_memory_stats st;
    kevo_memory_stats_get(&st, mem);

    double *wall = calloc((size_t)n_queries, sizeof(double));
    double *cpu = calloc((size_t)n_queries, sizeof(double));
    long tokens = 0, used = 0, pools = 0;
    kevo_context_config cfg;
    kevo_context_config_init(&cfg);
    for (long qi = 0; qi < n_queries && error == 0; qi++) {
        int t = (int)(kevo_rng_next(&rng) % N_TASKS);
        kevo_memory_task *task = NULL;
        if ((error = kevo_memory_task_get(&task, mem, ops[t / 10][t % 10])) < 0)
            break;
        int bn = 0;
        char *fb = make_feedback(&rng, qi % 3 ? "incorrect" : "correct", &bn);
        char bott[200];
        bottleneck(bott, sizeof(bott), bn, 70, 0.25);
        kevo_context_query q = {.task = task->name,
                                .category = task->category,
                                .description = task->description,
                                .reference = task->reference,
                                .backend = "c",
                                .stage = qi % 2 ? KEVO_STAGE_REFINE : KEVO_STAGE_DRAFT,
                                .feedback = fb,
                                .bottleneck = bott};
        kevo_context *ctx = NULL;
        double w0 = kevo_now_s(), c0 = cpu_now();
        error = kevo_context_build(&ctx, mem, &q, &cfg, &rng);
        cpu[qi] = (cpu_now() - c0) * 1e3;
        wall[qi] = (kevo_now_s() - w0) * 1e3;
        if (error == KEVO_ENOTFOUND) /* a task without a correct attempt */
            error = 0;
        if (ctx) {
            tokens += ctx->total_tokens;
            used += (long)ctx->n_used;
            pools += (long)ctx->pool_size;
        }
        kevo_context_free(ctx);
        kevo_memory_task_free(task);
        free(fb);
    }
    if (error < 0) {
        fprintf(stderr, "memory_bench: %s\n", kevo_error_last());
        return 3;
    }
    qsort(wall, (size_t)n_queries, sizeof(double), cmp_double);
    qsort(cpu, (size_t)n_queries, sizeof(double), cmp_double);
    double load[3] = {0};
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = -1;
        fclose(lf);
    }
    printf("store            %s\n", path);
    printf("attempts         %lld (%lld correct), items %lld (experience %lld, trace %lld, "
           "api_doc %lld, best_practice %lld, recipe %lld)\n",
           (long long)st.attempts, (long long)st.attempts_correct, (long long)st.items,
           (long long)st.items_by_kind[KEVO_ITEM_EXPERIENCE],
           (long long)st.items_by_kind[KEVO_ITEM_TRACE],
           (long long)st.items_by_kind[KEVO_ITEM_API_DOC],
           (long long)st.items_by_kind[KEVO_ITEM_BEST_PRACTICE],
           (long long)st.items_by_kind[KEVO_ITEM_RECIPE]);
    printf("edges            used %lld, distilled_from %lld; Q rows %lld + %lld\n",
           (long long)st.edges_used, (long long)st.edges_distilled, (long long)st.q_items,
           (long long)st.q_starts);
    if (fill_s > 0)
        printf("fill             %.1f s (%.0f us per recorded attempt)\n", fill_s,
               fill_s * 1e6 / (double)(n_attempts ? n_attempts : 1));
    printf("size on disk     %.1f MiB (%lld bytes)\n", (double)st.bytes / (1024.0 * 1024.0),
           (long long)st.bytes);
    printf("context build    median %.2f ms, p90 %.2f ms, max %.2f ms wall; median %.2f ms CPU "
           "(%ld builds, half refining)\n",
           wall[n_queries / 2], wall[n_queries * 9 / 10], wall[n_queries - 1], cpu[n_queries / 2],
           n_queries);
    printf("per build        %.0f tokens of %d, %.1f items used, pool %.1f\n",
           (double)tokens / (double)n_queries, cfg.token_budget, (double)used / (double)n_queries,
           (double)pools / (double)n_queries);
    printf("machine load     %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    kevo_memory_free(mem);
    if (!keep && dir)
        kevo_rmtree(dir);
    free(wall);
    free(cpu);
    free(path);
    free(dir);
    return 0;
}
