/*
 * cli/cmd_run.c - `kevo run SUITE_OR_TASK... [options]` and
 * `kevo run --resume RUN_ID`. Parses flags, installs the Ctrl-C handler,
 * calls the agent, prints where the results are.
 */
#include "commands.h"
#include "opts.h"
#include "progress.h"
#include "kevo/sandbox.h"
#include "kevo/agent.h"
#include "kevo/util.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kevo run SUITE_OR_TASK_DIR... [options]\n"
            "       kevo run --resume RUN_ID [--db PATH]\n"
            "\n"
            "Optimise every task: draft until a correct kernel, then refine from start\n"
            "points chosen by learned value, every attempt verified and remembered.\n"
            "\n"
            "options:\n"
            "  --generator NAME   builtin (offline recipes; default) | openai | replay\n"
            "  --no-audit         LLM runs: without the model-based auditor, which by default\n"
            "                     judges every candidate that passed the static gate before\n"
            "                     it is compiled (prompts/BACKEND/audit.md; it must answer\n"
            "                     {\"valid\": true} or the candidate is rejected)\n"
            "  --reflect          LLM runs: store an LLM reflection on every attempt\n"
            "  --refine-with builtin[:SHARE]  LLM runs: give SHARE (default 0.3) of the\n"
            "                     refine iterations to zero-token built-in recipes\n"
            "  --strategy NAME    evo (default) | refine (iterative-refinement baseline) |\n"
            "                     passk (independent samples; LLM generators)\n"
            "  --api-base URL     openai: e.g. http://127.0.0.1:8000/v1 (or KEVO_API_BASE)\n"
            "  --model NAME       openai: the served model (or KEVO_MODEL); key: KEVO_API_KEY\n"
            "  --temperature T    sent only when given (or KEVO_TEMPERATURE): reasoning\n"
            "                     models refuse it\n"
            "  --max-tokens N     completion budget per request (default 4096);\n"
            "                     a reply cut off at it is retried once with twice as much\n"
            "  --max-tokens-param max_tokens|max_completion_tokens  the budget's field (or\n"
            "                     KEVO_MAX_TOKENS_PARAM; default: max_tokens, switched for\n"
            "                     good when the server's HTTP 400 asks for the other)\n"
            "  --reasoning-effort low|medium|high  reasoning models (or KEVO_REASONING_EFFORT)\n"
            "  --replay FILE      replay: the recorded exchanges (JSON lines)\n"
            "  --record FILE      append every LLM exchange to FILE (replayable)\n"
            "  --context MODE     active (default) | passive (recent history, no selection)\n"
            "  --token-budget N   memory context tokens per prompt (default 6000)\n"
            "  --iterations T     attempts per task (default 30)\n"
            "  --db PATH          the experience store (default kevo.db)\n"
            "  --seed S           makes the run's random choices reproducible (default 1)\n"
            "  --retrieval MODE   value (default) | heuristic | random\n"
            "  --start-score S    how refine start points are valued: q2 (default; the\n"
            "                     paper's learned Q2) | q2-latency (Q2 + log(speedup/best))\n"
            "  --memory on|off    off: nothing retrieved, nothing learnt; attempts are still\n"
            "                     recorded (ablation)\n"
            "  --epsilon E        exploration rate of every epsilon-greedy pick (default 0.1)\n"
            "  --alpha A          Q step size, Q <- Q + A (R - Q) (default 0.3)\n"
            "  --q-init Q         Q0 of items and start points never updated, in [-1, 1]\n"
            "                     (default 0.5: every unseen item is tried before a poor one)\n"
            "  --lambda L         LLM context: the candidate pool holds L x N items (default 3)\n"
            "  --pool-n N         LLM context: experience items selected per prompt (default 6)\n"
            "  --normalize        z-score refine rewards against the earlier ones (App. A)\n"
            "  --memory-from FILE import an exported memory first (transfer); or a whole\n"
            "                     store: a SQLite file, a PostgreSQL URL\n"
            "  --max-tasks N      only the first N tasks (sorted by path)\n"
            "  --jobs N           N tasks in flight; latency measurements never overlap\n"
            "  --quick            shorter latency measurements (demos, tests)\n"
            "  --resume RUN_ID    continue a stopped or killed run\n"
            "  --quiet            no progress lines\n"
            "Ctrl-C stops after the attempt in flight; `kevo run --resume` continues.\n");
}

enum {
    OPT_GENERATOR = 256, OPT_BACKEND, OPT_DB, OPT_MODEL, OPT_API_BASE, OPT_REPLAY, OPT_RECORD,
    OPT_MEMORY_FROM, OPT_TEMPERATURE, OPT_STRATEGY, OPT_RETRIEVAL, OPT_CONTEXT, OPT_START_SCORE,
    OPT_MAX_TOKENS_PARAM, OPT_REASONING_EFFORT, OPT_MEMORY, OPT_REFINE_WITH, OPT_ITERATIONS,
    OPT_MAX_TASKS, OPT_JOBS, OPT_TOKEN_BUDGET, OPT_MAX_TOKENS, OPT_LAMBDA, OPT_POOL_N,
    OPT_EPSILON, OPT_ALPHA, OPT_Q_INIT, OPT_SEED, OPT_RESUME, OPT_QUICK, OPT_QUIET, OPT_REFLECT,
    OPT_NORMALIZE, OPT_AUDIT, OPT_NO_AUDIT,
};

static const struct option run_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"generator", required_argument, NULL, OPT_GENERATOR},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"db", required_argument, NULL, OPT_DB},
    {"model", required_argument, NULL, OPT_MODEL},
    {"api-base", required_argument, NULL, OPT_API_BASE},
    {"replay", required_argument, NULL, OPT_REPLAY},
    {"record", required_argument, NULL, OPT_RECORD},
    {"memory-from", required_argument, NULL, OPT_MEMORY_FROM},
    {"temperature", required_argument, NULL, OPT_TEMPERATURE},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"retrieval", required_argument, NULL, OPT_RETRIEVAL},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"start-score", required_argument, NULL, OPT_START_SCORE},
    {"max-tokens-param", required_argument, NULL, OPT_MAX_TOKENS_PARAM},
    {"reasoning-effort", required_argument, NULL, OPT_REASONING_EFFORT},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"refine-with", required_argument, NULL, OPT_REFINE_WITH},
    {"iterations", required_argument, NULL, OPT_ITERATIONS},
    {"max-tasks", required_argument, NULL, OPT_MAX_TASKS},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"token-budget", required_argument, NULL, OPT_TOKEN_BUDGET},
    {"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
    {"lambda", required_argument, NULL, OPT_LAMBDA},
    {"pool-n", required_argument, NULL, OPT_POOL_N},
    {"epsilon", required_argument, NULL, OPT_EPSILON},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"q-init", required_argument, NULL, OPT_Q_INIT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"reflect", no_argument, NULL, OPT_REFLECT},
    {"normalize", no_argument, NULL, OPT_NORMALIZE},
    {"audit", no_argument, NULL, OPT_AUDIT},
    {"no-audit", no_argument, NULL, OPT_NO_AUDIT},
    {NULL, 0, NULL, 0},
};

/* --refine-with builtin[:SHARE] */
static int parse_refine_with(kevo_run_config *cfg, const char *v)
{
    if (strncmp(v, "builtin", 7) || (v[7] && v[7] != ':'))
        return kevo_error_set(KEVO_EINVAL, "takes builtin or builtin:SHARE, not '%s'", v);
    char *end = NULL;
    cfg->refine_with_builtin = v[7] ? strtod(v + 8, &end) : 0.3;
    if ((end && (end == v + 8 || *end)) || !(cfg->refine_with_builtin > 0) ||
        cfg->refine_with_builtin > 1)
        return kevo_error_set(KEVO_EINVAL, "the share must be a number in (0, 1], not '%s'",
                              v[7] ? v + 8 : v);
    return 0;
}

/* The named choices become enums here, with the agent's parsers (the same
 * a resumed run's stored names go through). */
static int parse_choice(kevo_run_config *cfg, int c, const char *v)
{
    switch (c) {
    case OPT_STRATEGY: return kevo_strategy_parse(&cfg->strategy, v);
    case OPT_RETRIEVAL: return kevo_retrieval_parse(&cfg->retrieval, v);
    case OPT_CONTEXT: return kevo_run_context_parse(&cfg->context, v);
    case OPT_START_SCORE: return kevo_start_score_parse(&cfg->start_score, v);
    case OPT_MAX_TOKENS_PARAM: return kevo_llm_tokens_param_parse(&cfg->max_tokens_param, v);
    case OPT_REASONING_EFFORT:
        return kevo_llm_reasoning_effort_parse(&cfg->reasoning_effort, v);
    case OPT_MEMORY:
        if (strcmp(v, "on") && strcmp(v, "off"))
            return kevo_error_set(KEVO_EINVAL, "must be on or off, not '%s'", v);
        cfg->memory = !strcmp(v, "on");
        return 0;
    case OPT_REFINE_WITH: return parse_refine_with(cfg, v);
    default: return 1;
    }
}

/* One option into cfg: 0 taken, -1 bad (the problem printed). */
static int parse_option(kevo_run_config *cfg, kevo_opts *o, int c)
{
    const char *v = o->arg;
    int n = 0;
    switch (c) {
    case OPT_GENERATOR: cfg->generator = v; return 0;
    case OPT_BACKEND: cfg->backend = v; return 0;
    case OPT_DB: cfg->db_path = v; return 0;
    case OPT_MODEL: cfg->model = v; return 0;
    case OPT_API_BASE: cfg->api_base = v; return 0;
    case OPT_REPLAY: cfg->replay_path = v; return 0;
    case OPT_RECORD: cfg->record_path = v; return 0;
    case OPT_MEMORY_FROM: cfg->memory_from = v; return 0;
    case OPT_QUICK: cfg->quick_timing = true; return 0;
    case OPT_QUIET: cfg->quiet = true; return 0;
    case OPT_REFLECT: cfg->reflect = true; return 0;
    case OPT_NORMALIZE: cfg->normalize = true; return 0;
    case OPT_AUDIT: cfg->audit = true; return 0;
    case OPT_NO_AUDIT: cfg->audit = false; return 0;
    case OPT_TEMPERATURE: return kevo_opts_double(o, &cfg->temperature, 0, 100);
    case OPT_ITERATIONS: return kevo_opts_int(o, &cfg->iterations, 0, 1000000);
    case OPT_MAX_TASKS: return kevo_opts_int(o, &cfg->max_tasks, 0, 1000000);
    case OPT_JOBS: return kevo_opts_int(o, &cfg->jobs, 0, 1024);
    case OPT_TOKEN_BUDGET: return kevo_opts_int(o, &cfg->token_budget, 0, 100000000);
    case OPT_MAX_TOKENS: return kevo_opts_int(o, &cfg->max_tokens, 0, 100000000);
    case OPT_LAMBDA: return kevo_opts_int(o, &cfg->lambda, 0, 1000000);
    case OPT_POOL_N: return kevo_opts_int(o, &cfg->pool_n, 0, 1000000);
    case OPT_EPSILON: return kevo_opts_double(o, &cfg->epsilon, -HUGE_VAL, HUGE_VAL);
    case OPT_ALPHA: return kevo_opts_double(o, &cfg->alpha, -HUGE_VAL, HUGE_VAL);
    case OPT_Q_INIT: return kevo_opts_double(o, &cfg->q_init, -HUGE_VAL, HUGE_VAL);
    case OPT_SEED:
        if (kevo_opts_int(o, &n, 0, 2147483647) < 0)
            return -1;
        cfg->seed = (uint64_t)n;
        return 0;
    case OPT_RESUME: {
        int64_t id = 0;
        if (kevo_opts_int64(o, &id, 1, INT64_MAX) < 0)
            return -1;
        cfg->resume_run = id;
        return 0;
    }
    default:
        break;
    }
    int error = parse_choice(cfg, c, v);
    if (error < 0) {
        kevo_opts_usage(o, "%s: %s", o->flag, kevo_error_last());
        return -1;
    }
    return 0;
}

int kevo_cli_run_options(kevo_run_config *cfg, const char **paths, int argc, char **argv,
                         const char *cmd, void (*help)(FILE *f))
{
    kevo_opts o;
    kevo_opts_init(&o, cmd, argc, argv, run_options, "h");
    int c;
    while ((c = kevo_opts_next(&o)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        if (c == 'h') {
            help(stdout);
            return -1;
        }
        if (parse_option(cfg, &o, c) < 0)
            return KEVO_EXIT_USAGE;
    }
    int n = 0;
    char **rest = kevo_opts_operands(&o, &n);
    for (int k = 0; k < n; k++)
        paths[cfg->npaths++] = rest[k];
    return KEVO_EXIT_OK;
}

void kevo_cli_run_options_help(FILE *f)
{
    usage(f);
}

/* The command line into cfg. KEVO_EXIT_OK to run, -1 when --help was
 * printed, else the exit status. */
static int parse_args(kevo_run_config *cfg, const char **paths, int argc, char **argv)
{
    return kevo_cli_run_options(cfg, paths, argc, argv, "kevo run", usage);
}

int kevo_cmd_run(int argc, char **argv)
{
    kevo_run_config cfg;
    kevo_run_config_init(&cfg);
    const char **paths = calloc((size_t)argc, sizeof(char *));
    int rc = paths ? parse_args(&cfg, paths, argc, argv) : KEVO_EXIT_INFRA;
    cfg.paths = paths;
    if (rc != KEVO_EXIT_OK) {
        rc = rc < 0 ? KEVO_EXIT_OK : rc;
        goto done;
    }
    if (cfg.npaths == 0 && !cfg.resume_run) {
        usage(stderr);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (kevo_run_config_check(&cfg) < 0) {
        fprintf(stderr, "kevo run: %s\n", kevo_error_last());
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    volatile sig_atomic_t *stop_requested = kevo_cli_stop_install();
    cfg.stop = stop_requested;
    int scratch_error = kevo_sandbox_private_scratch();
    if (scratch_error < 0) {
        fprintf(stderr, "kevo run: %s\n", kevo_error_last());
        rc = scratch_error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    kevo_progress *progress = NULL; /* the plain lines; on a terminal a status line too */
    kevo_progress_options po = {.label = "kevo run", .label_run_id = true, .quiet = cfg.quiet,
                                .stop = stop_requested};
    if (kevo_progress_new(&progress, &po) == 0) {
        cfg.observer = kevo_progress_observer(progress);
        kevo_cli_stop_status_line(kevo_progress_mode_of(progress) == KEVO_PROGRESS_LIVE);
    }
    int64_t run_id = 0;
    int error = kevo_agent_run(&run_id, &cfg);
    kevo_progress_free(progress); /* the status line erased: what follows starts a clean line */
    /* the store as the lines below show it: a PostgreSQL URL without its
     * password (libpq finds it again in PGPASSWORD or ~/.pgpass) */
    char *shown = NULL;
    kevo_conninfo_redact(&shown, cfg.db_path);
    const char *db = shown ? shown : "";
    if (error == KEVO_EINTR) {
        fprintf(stderr, "kevo run: stopped; continue with `kevo run --resume %lld --db %s`\n",
                (long long)run_id, db);
        rc = 130;
    } else if (error < 0) {
        fprintf(stderr, "kevo run: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL || error == KEVO_ENOTFOUND ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
    } else if (!cfg.quiet) {
        long long id = (long long)run_id;
        printf("run %lld finished; see `kevo report --run %lld --db %s`\n", id, id, db);
        printf("  best kernels: kevo best --db %s --run %lld --out best-run-%lld\n"
               "  HTML report:  kevo report --run %lld --db %s --format html -o run-%lld.html\n",
               db, id, id, id, db, id);
    }
    free(shown);
done:
    free(paths);
    return rc;
}
