/*
 * cli/cmd_run.c - `kevo run SUITE_OR_TASK... [options]` and
 * `kevo run --resume RUN_ID`. Parses flags, installs the Ctrl-C handler,
 * calls the agent, prints where the results are.
 */
#include "cli/commands.h"
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
            "  --audit            LLM runs: the model-based anti-hacking auditor after the\n"
            "                     static gate (prompts/c/audit.md); `invalid` = rejected\n"
            "  --reflect          LLM runs: store an LLM reflection on every attempt\n"
            "  --refine-with builtin[:SHARE]  LLM runs: give SHARE (default 0.3) of the\n"
            "                     refine iterations to zero-token built-in recipes\n"
            "  --strategy NAME    evo (default) | refine (iterative-refinement baseline) |\n"
            "                     passk (independent samples; LLM generators)\n"
            "  --api-base URL     openai: e.g. http://127.0.0.1:8000/v1 (or KEVO_API_BASE)\n"
            "  --model NAME       openai: the served model (or KEVO_MODEL); key: KEVO_API_KEY\n"
            "  --temperature T    --max-tokens N   sampling settings\n"
            "  --replay FILE      replay: the recorded exchanges (JSON lines)\n"
            "  --record FILE      append every LLM exchange to FILE (replayable)\n"
            "  --context MODE     active (default) | passive (recent history, no selection)\n"
            "  --token-budget N   memory context tokens per prompt (default 6000)\n"
            "  --iterations T     attempts per task (default 30)\n"
            "  --db PATH          the experience store (default kevo.db)\n"
            "  --seed S           makes the run's random choices reproducible (default 1)\n"
            "  --retrieval MODE   value (default) | heuristic | random\n"
            "  --memory on|off    off: no learned values (ablation)\n"
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

int kevo_cmd_run(int argc, char **argv)
{
    kevo_run_config cfg;
    kevo_run_config_init(&cfg);
    const char **paths = calloc((size_t)argc, sizeof(char *));
    int rc = KEVO_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            goto done;
        } else if (!strcmp(a, "--quick")) {
            cfg.quick_timing = true;
        } else if (!strcmp(a, "--quiet")) {
            cfg.quiet = true;
        } else if (!strcmp(a, "--audit")) {
            cfg.audit = true;
        } else if (!strcmp(a, "--reflect")) {
            cfg.reflect = true;
        } else if (!strcmp(a, "--normalize")) {
            cfg.normalize = true;
        } else if (a[0] == '-' && !v) {
            fprintf(stderr, "kevo run: %s needs a value (see kevo run --help)\n", a);
            rc = KEVO_EXIT_USAGE;
            goto done;
        } else if (!strcmp(a, "--generator")) {
            cfg.generator = argv[++i];
        } else if (!strcmp(a, "--refine-with")) {
            /* builtin[:SHARE] */
            const char *spec = argv[++i];
            if (strncmp(spec, "builtin", 7) || (spec[7] && spec[7] != ':')) {
                fprintf(stderr, "kevo run: --refine-with takes builtin or builtin:SHARE\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
            cfg.refine_with_builtin = spec[7] ? atof(spec + 8) : 0.3;
            if (cfg.refine_with_builtin <= 0 || cfg.refine_with_builtin > 1) {
                fprintf(stderr, "kevo run: the share of --refine-with must be in (0, 1]\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
        } else if (!strcmp(a, "--strategy")) {
            cfg.strategy = argv[++i];
            if (strcmp(cfg.strategy, "evo") && strcmp(cfg.strategy, "refine") &&
                strcmp(cfg.strategy, "passk")) {
                fprintf(stderr, "kevo run: --strategy must be evo, refine or passk\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
        } else if (!strcmp(a, "--api-base")) {
            cfg.api_base = argv[++i];
        } else if (!strcmp(a, "--model")) {
            cfg.model = argv[++i];
        } else if (!strcmp(a, "--replay")) {
            cfg.replay_path = argv[++i];
        } else if (!strcmp(a, "--record")) {
            cfg.record_path = argv[++i];
        } else if (!strcmp(a, "--temperature")) {
            cfg.temperature = atof(argv[++i]);
        } else if (!strcmp(a, "--context")) {
            cfg.context = argv[++i];
            if (strcmp(cfg.context, "active") && strcmp(cfg.context, "passive")) {
                fprintf(stderr, "kevo run: --context must be active or passive\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
        } else if (!strcmp(a, "--backend")) {
            cfg.backend = argv[++i];
        } else if (!strcmp(a, "--db")) {
            cfg.db_path = argv[++i];
        } else if (!strcmp(a, "--retrieval")) {
            cfg.retrieval = argv[++i];
            if (strcmp(cfg.retrieval, "value") && strcmp(cfg.retrieval, "heuristic") &&
                strcmp(cfg.retrieval, "random")) {
                fprintf(stderr, "kevo run: --retrieval must be value, heuristic or random\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
        } else if (!strcmp(a, "--memory")) {
            i++;
            if (strcmp(v, "on") && strcmp(v, "off")) {
                fprintf(stderr, "kevo run: --memory must be on or off\n");
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
            cfg.memory = !strcmp(v, "on");
        } else if (!strcmp(a, "--memory-from")) {
            cfg.memory_from = argv[++i];
        } else if (!strcmp(a, "--iterations") || !strcmp(a, "--max-tasks") ||
                   !strcmp(a, "--resume") || !strcmp(a, "--seed") ||
                   !strcmp(a, "--token-budget") || !strcmp(a, "--max-tokens") ||
                   !strcmp(a, "--jobs")) {
            if (parse_int(&n, a, argv[++i]) < 0) {
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
            if (!strcmp(a, "--iterations"))
                cfg.iterations = n;
            else if (!strcmp(a, "--max-tasks"))
                cfg.max_tasks = n;
            else if (!strcmp(a, "--resume"))
                cfg.resume_run = n;
            else if (!strcmp(a, "--jobs"))
                cfg.jobs = n;
            else if (!strcmp(a, "--token-budget"))
                cfg.token_budget = n;
            else if (!strcmp(a, "--max-tokens"))
                cfg.max_tokens = n;
            else
                cfg.seed = (uint64_t)n;
        } else if (!strcmp(a, "--epsilon") || !strcmp(a, "--alpha") || !strcmp(a, "--q-init")) {
            char *end;
            double x = strtod(argv[++i], &end);
            if (end == argv[i] || *end) {
                fprintf(stderr, "kevo run: %s needs a number, got '%s'\n", a, argv[i]);
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
            *(!strcmp(a, "--epsilon") ? &cfg.epsilon
              : !strcmp(a, "--alpha") ? &cfg.alpha
                                      : &cfg.q_init) = x;
        } else if (!strcmp(a, "--lambda") || !strcmp(a, "--pool-n")) {
            if (parse_int(&n, a, argv[++i]) < 0) {
                rc = KEVO_EXIT_USAGE;
                goto done;
            }
            *(!strcmp(a, "--lambda") ? &cfg.lambda : &cfg.pool_n) = n;
        } else if (a[0] == '-') {
            fprintf(stderr, "kevo run: unknown option '%s' (see kevo run --help)\n", a);
            rc = KEVO_EXIT_USAGE;
            goto done;
        } else {
            paths[cfg.npaths++] = a;
        }
    }
    cfg.paths = paths;
    if (cfg.npaths == 0 && !cfg.resume_run) {
        usage(stderr);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (strcmp(cfg.generator, "builtin") && strcmp(cfg.generator, "openai") &&
        strcmp(cfg.generator, "replay")) {
        fprintf(stderr, "kevo run: --generator must be builtin, openai or replay\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if ((cfg.audit || cfg.reflect) && !strcmp(cfg.generator, "builtin")) {
        fprintf(stderr, "kevo run: --audit and --reflect need an LLM generator\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (!strcmp(cfg.generator, "replay") && !cfg.replay_path && !cfg.resume_run) {
        fprintf(stderr, "kevo run: --generator replay needs --replay FILE\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    const char *bad = kevo_run_config_check(&cfg);
    if (bad) {
        fprintf(stderr, "kevo run: %s\n", bad);
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (!strcmp(cfg.strategy, "passk") && !strcmp(cfg.generator, "builtin")) {
        fprintf(stderr, "kevo run: --strategy passk needs an LLM generator (openai or replay): "
                        "the built-in draft is deterministic, so independent samples of it "
                        "would all be one kernel\n");
        rc = KEVO_EXIT_USAGE;
        goto done;
    }
    if (cfg.iterations < 1) {
        fprintf(stderr, "kevo run: --iterations must be at least 1\n");
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
