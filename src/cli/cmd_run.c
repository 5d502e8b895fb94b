/*
 * cli/cmd_run.c - `kevo run SUITE_OR_TASK... [options]` and
 * `kevo run --resume RUN_ID`. Parses flags, installs the Ctrl-C handler,
 * calls the agent, prints where the results are.
 */
#include "commands.h"
#include "kevo/sandbox.h"
#include "kevo/agent.h"
#include "kevo/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    if (stop_requested) /* second Ctrl-C: leave now; the store stays consistent */
        _exit(130);
    stop_requested = 1;
}

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
            "  --memory-from FILE import an exported memory first (transfer)\n"
            "  --max-tasks N      only the first N tasks (sorted by path)\n"
            "  --jobs N           N tasks in flight; latency measurements never overlap\n"
            "  --quick            shorter latency measurements (demos, tests)\n"
            "  --resume RUN_ID    continue a stopped or killed run\n"
            "  --quiet            no progress lines\n"
            "Ctrl-C stops after the attempt in flight; `kevo run --resume` continues.\n");
}

static int parse_int(int *out, const char *flag, const char *v)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1000000) {
        fprintf(stderr, "kevo run: %s needs a non-negative integer, got '%s'\n", flag, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int parse_number(double *out, const char *flag, const char *v)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end) {
        fprintf(stderr, "kevo run: %s needs a number, got '%s'\n", flag, v);
        return -1;
    }
    *out = x;
    return 0;
}

/* Options without a value. 1: taken, 0: not one of them. */
static int parse_switch(kevo_run_config *cfg, const char *a)
{
    bool *b = !strcmp(a, "--quick")       ? &cfg->quick_timing
              : !strcmp(a, "--quiet")     ? &cfg->quiet
              : !strcmp(a, "--reflect")   ? &cfg->reflect
              : !strcmp(a, "--normalize") ? &cfg->normalize
                                          : NULL;
    if (b)
        *b = true;
    if (!strcmp(a, "--audit") || !strcmp(a, "--no-audit"))
        cfg->audit = !strcmp(a, "--audit");
    return b != NULL || !strcmp(a, "--audit") || !strcmp(a, "--no-audit");
}

/* The named choices become enums here, with the agent's parsers (the same
 * a resumed run's stored names go through). 1 taken, 0 not one, -1 bad. */
static int parse_choice(kevo_run_config *cfg, const char *a, const char *v)
{
    int error = 0;
    if (!strcmp(a, "--strategy"))
        error = kevo_strategy_parse(&cfg->strategy, v);
    else if (!strcmp(a, "--retrieval"))
        error = kevo_retrieval_parse(&cfg->retrieval, v);
    else if (!strcmp(a, "--context"))
        error = kevo_run_context_parse(&cfg->context, v);
    else if (!strcmp(a, "--start-score"))
        error = kevo_start_score_parse(&cfg->start_score, v);
    else if (!strcmp(a, "--max-tokens-param"))
        error = kevo_llm_tokens_param_parse(&cfg->max_tokens_param, v);
    else if (!strcmp(a, "--reasoning-effort"))
        error = kevo_llm_reasoning_effort_parse(&cfg->reasoning_effort, v);
    else if (!strcmp(a, "--memory") && (!strcmp(v, "on") || !strcmp(v, "off")))
        cfg->memory = !strcmp(v, "on");
    else if (!strcmp(a, "--memory"))
        error = kevo_error_set(KEVO_EINVAL, "memory must be on or off, not '%s'", v);
    else if (!strcmp(a, "--refine-with")) {
        /* builtin[:SHARE] */
        if (strncmp(v, "builtin", 7) || (v[7] && v[7] != ':'))
            error = kevo_error_set(KEVO_EINVAL, "--refine-with takes builtin or builtin:SHARE");
        else {
            char *end = NULL;
            cfg->refine_with_builtin = v[7] ? strtod(v + 8, &end) : 0.3;
            if ((end && (end == v + 8 || *end)) || !(cfg->refine_with_builtin > 0) ||
                cfg->refine_with_builtin > 1)
                error = kevo_error_set(KEVO_EINVAL, "the share of --refine-with must be a number "
                                       "in (0, 1], not '%s'", v[7] ? v + 8 : v);
        }
    } else
        return 0;
    if (error < 0) {
        fprintf(stderr, "kevo run: %s: %s\n", a, kevo_error_last());
        return -1;
    }
    return 1;
}

/* Options with a number. 1 taken, 0 not one, -1 bad. */
static int parse_numeric(kevo_run_config *cfg, const char *a, const char *v)
{
    struct {
        const char *flag;
        int *i;
        double *d;
    } const table[] = {
        {"--iterations", &cfg->iterations, NULL}, {"--max-tasks", &cfg->max_tasks, NULL},
        {"--jobs", &cfg->jobs, NULL},             {"--token-budget", &cfg->token_budget, NULL},
        {"--max-tokens", &cfg->max_tokens, NULL}, {"--lambda", &cfg->lambda, NULL},
        {"--pool-n", &cfg->pool_n, NULL},         {"--epsilon", NULL, &cfg->epsilon},
        {"--alpha", NULL, &cfg->alpha},           {"--q-init", NULL, &cfg->q_init},
    };
    int n = 0;
    if (!strcmp(a, "--seed") || !strcmp(a, "--resume")) {
        if (parse_int(&n, a, v) < 0)
            return -1;
        if (!strcmp(a, "--seed"))
            cfg->seed = (uint64_t)n;
        else
            cfg->resume_run = n;
        return 1;
    }
    for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++) {
        if (strcmp(a, table[k].flag))
            continue;
        if (table[k].i)
            return parse_int(table[k].i, a, v) < 0 ? -1 : 1;
        return parse_number(table[k].d, a, v) < 0 ? -1 : 1;
    }
    return 0;
}

/* The command line into cfg. KEVO_EXIT_OK to run, -1 when --help was
 * printed, else the exit status. */
static int parse_args(kevo_run_config *cfg, const char **paths, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int taken;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
        if (parse_switch(cfg, a))
            continue;
        if (a[0] != '-') {
            paths[cfg->npaths++] = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "kevo run: %s needs a value (see kevo run --help)\n", a);
            return KEVO_EXIT_USAGE;
        }
        const char **str = !strcmp(a, "--generator")     ? &cfg->generator
                           : !strcmp(a, "--backend")     ? &cfg->backend
                           : !strcmp(a, "--db")          ? &cfg->db_path
                           : !strcmp(a, "--model")       ? &cfg->model
                           : !strcmp(a, "--api-base")    ? &cfg->api_base
                           : !strcmp(a, "--replay")      ? &cfg->replay_path
                           : !strcmp(a, "--record")      ? &cfg->record_path
                           : !strcmp(a, "--memory-from") ? &cfg->memory_from
                                                         : NULL;
        if (str) {
            *str = v;
        } else if (!strcmp(a, "--temperature")) {
            if (parse_number(&cfg->temperature, a, v) < 0)
                return KEVO_EXIT_USAGE;
        } else if ((taken = parse_choice(cfg, a, v)) == 0 &&
                   (taken = parse_numeric(cfg, a, v)) == 0) {
            fprintf(stderr, "kevo run: unknown option '%s' (see kevo run --help)\n", a);
            return KEVO_EXIT_USAGE;
        }
        if (taken < 0)
            return KEVO_EXIT_USAGE;
        i++;
    }
    return KEVO_EXIT_OK;
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
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    cfg.stop = &stop_requested;
    int scratch_error = kevo_sandbox_private_scratch();
    if (scratch_error < 0) {
        fprintf(stderr, "kevo run: %s\n", kevo_error_last());
        rc = scratch_error == KEVO_EINVAL ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
        goto done;
    }
    int64_t run_id = 0;
    int error = kevo_agent_run(&run_id, &cfg);
    if (error == KEVO_EINTR) {
        fprintf(stderr, "kevo run: stopped; continue with `kevo run --resume %lld --db %s`\n",
                (long long)run_id, cfg.db_path);
        rc = 130;
    } else if (error < 0) {
        fprintf(stderr, "kevo run: %s\n", kevo_error_last());
        rc = error == KEVO_EINVAL || error == KEVO_ENOTFOUND ? KEVO_EXIT_USAGE : KEVO_EXIT_INFRA;
    } else if (!cfg.quiet) {
        printf("run %lld finished; see `kevo report --run %lld --db %s`\n", (long long)run_id,
               (long long)run_id, cfg.db_path);
    }
done:
    free(paths);
    return rc;
}
