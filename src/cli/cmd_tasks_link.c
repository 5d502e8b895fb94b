/*
 * cli/cmd_tasks_link.c - `kevo tasks link DIR... [--from SUITE]`: give each
 * PyTorch-defined task under DIR (one that names a KernelBench problem and
 * has no draft yet) a C draft for the built-in generator: the C reference
 * of the kevo C task under SUITE that translates the same problem, adapted
 * to the torch task's prototype (kevo_recipe_adapt_signature), kept only
 * when kevo's verifier finds it `correct` against the PyTorch reference.
 * `kevo tasks import` calls the same per-task step on what it imported.
 */
#include "commands.h"
#include "opts.h"
#include "kevo/recipe.h"
#include "kevo/task.h"
#include "kevo/util.h"
#include "kevo/verify.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The C task under root translating the same problem, or NULL. */
static kevo_task *c_twin(const char *root, const char *kernelbench)
{
    char **dirs = NULL;
    size_t n = 0;
    kevo_task *found = NULL;
    if (kevo_task_find(&dirs, &n, root) < 0) {
        kevo_error_clear();
        return NULL;
    }
    for (size_t i = 0; i < n && !found; i++) {
        kevo_task *t = NULL;
        if (kevo_task_load(&t, dirs[i]) < 0) {
            kevo_error_clear();
            continue;
        }
        if (!t->torch && t->kernelbench && !strcmp(t->kernelbench, kernelbench))
            found = t;
        else
            kevo_task_free(t);
    }
    kevo_task_dirs_free(dirs, n);
    return found;
}

/* task.json with "draft": "draft.c" added (formatted as kevo writes it). */
static int add_draft_field(const kevo_task *t)
{
    char *text = NULL;
    int error = kevo_file_read(&text, NULL, t->json_path);
    cJSON *root = error == 0 ? cJSON_Parse(text) : NULL;
    free(text);
    if (error < 0)
        return error;
    if (!root)
        return kevo_error_set(KEVO_EINVAL, "%s: not JSON", t->json_path);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "draft");
    cJSON_AddStringToObject(root, "draft", "draft.c");
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    if (!out)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t len = strlen(out);
    char *nl = realloc(out, len + 2);
    if (!nl) {
        free(out);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    nl[len] = '\n', nl[len + 1] = 0;
    error = kevo_file_write(t->json_path, nl, len + 1);
    free(nl);
    return error;
}

/* Is the adapted source correct against the torch reference? 1 yes, 0 no
 * (*why says what the verifier found, *v its verdict), negative when kevo
 * could not tell. */
static int verified(const kevo_task *t, const char *source, char *why, size_t cap,
                    kevo_verdict *v)
{
    kevo_eval_options o;
    kevo_eval_options_default(&o);
    o.skip_latency = true;
    kevo_evaluator *ev = NULL;
    int error = kevo_evaluator_new(&ev, t, &o);
    if (error < 0)
        return error;
    kevo_eval_result r = {0};
    error = kevo_evaluator_eval(ev, source, &r);
    if (error == 0) {
        *v = r.verdict;
        error = r.verdict == KEVO_VERDICT_CORRECT;
        snprintf(why, cap, "%s: %.200s", kevo_verdict_name(r.verdict),
                 r.feedback ? r.feedback : "");
        for (char *q = why; *q; q++)
            if (*q == '\n')
                *q = ' ';
    }
    kevo_eval_result_clear(&r);
    kevo_evaluator_free(ev);
    return error;
}

int kevo_cli_link_draft(const char *task_dir, const char *c_root, char *line, size_t cap)
{
    kevo_task *t = NULL, *twin = NULL;
    char *ref = NULL, *draft = NULL, why[300] = "";
    int error = kevo_task_load(&t, task_dir), linked = 0;
    if (error < 0) {
        snprintf(line, cap, "%s", kevo_error_last());
        return error;
    }
    if (!t->torch || !t->kernelbench || t->draft_path) {
        snprintf(line, cap, "%s", !t->torch ? "a C task (its reference is its draft)"
                                  : t->draft_path ? "has a draft already"
                                                  : "names no KernelBench problem");
        goto done;
    }
    if (!(twin = c_twin(c_root, t->kernelbench))) {
        snprintf(line, cap, "no C task under %s translates %s", c_root, t->kernelbench);
        goto done;
    }
    if ((error = kevo_file_read(&ref, NULL, twin->reference_path)) < 0 ||
        (error = kevo_recipe_adapt_signature(&draft, ref, twin, t)) < 0) {
        snprintf(line, cap, "%s does not adapt: %s", twin->dir, kevo_error_last());
        error = 0, kevo_error_clear();
        goto done;
    }
    char *with_note = NULL;
    kevo_buf b = {0};
    kevo_buf_printf(&b, "/* kevo tasks link: the C reference of %s (%s), with the prototype of "
                        "task %s; checked correct against its PyTorch reference */\n%s",
                    twin->dir, twin->kernelbench, t->name, draft);
    with_note = kevo_buf_detach(&b);
    free(draft);
    draft = with_note;
    if (!draft) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_verdict v = KEVO_VERDICT_CORRECT;
    int ok = verified(t, draft, why, sizeof(why), &v);
    if (ok < 0) {
        snprintf(line, cap, "cannot check the draft: %s", kevo_error_last());
        error = ok;
        goto done;
    }
    if (!ok) {
        /* what the verdict says about the pairing */
        const char *what = v == KEVO_VERDICT_TIMEOUT ? "is too slow at this task's sizes"
                           : v == KEVO_VERDICT_INCORRECT ? "is not this task's function"
                                                         : "does not fit this task";
        snprintf(line, cap, "the C reference of %s %s (%s)", twin->dir, what, why);
        goto done;
    }
    char *path = kevo_path_join(t->dir, "draft.c");
    error = path ? kevo_file_write(path, draft, strlen(draft)) : KEVO_ENOMEM;
    if (error == 0)
        chmod(path, 0644);
    free(path);
    if (error == 0 && (error = add_draft_field(t)) == 0) {
        linked = 1;
        snprintf(line, cap, "draft.c from %s", twin->dir);
    }
done:
    free(ref);
    free(draft);
    kevo_task_free(twin);
    kevo_task_free(t);
    return error < 0 ? error : linked;
}

/* `kevo tasks adapt KERNEL.c --from C_TASK --to TASK [-o OUT]`: a kernel
 * of one task rewritten for another task of the same function (the best
 * kernel of a C task for its PyTorch twin, say). Not checked: kevo eval it. */
int kevo_cmd_tasks_adapt(int argc, char **argv)
{
    const char *kernel = NULL, *from_dir = NULL, *to_dir = NULL, *out_path = NULL;
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    kevo_opts_init(&op, "kevo tasks adapt", argc - 1, argv + 1, table, "ho:");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        switch (c) {
        case '?': return KEVO_EXIT_USAGE;
        case 'h': kevo_cli_tasks_usage(stdout); return KEVO_EXIT_OK;
        case 'f': from_dir = op.arg; break;
        case 't': to_dir = op.arg; break;
        case 'o': out_path = op.arg; break;
        }
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops > 1)
        return kevo_opts_usage(&op, "unexpected argument '%s'", ops[1]);
    kernel = nops ? ops[0] : NULL;
    if (!kernel || !from_dir || !to_dir) {
        fprintf(stderr, "usage: kevo tasks adapt KERNEL.c --from TASK_DIR --to TASK_DIR [-o OUT]\n");
        return KEVO_EXIT_USAGE;
    }
    kevo_task *from = NULL, *to = NULL;
    char *src = NULL, *adapted = NULL;
    int status = KEVO_EXIT_USAGE;
    if (kevo_task_load(&from, from_dir) < 0 || kevo_task_load(&to, to_dir) < 0 ||
        kevo_file_read(&src, NULL, kernel) < 0)
        fprintf(stderr, "kevo tasks adapt: %s\n", kevo_error_last());
    else if (kevo_recipe_adapt_signature(&adapted, src, from, to) < 0)
        fprintf(stderr, "kevo tasks adapt: %s: %s\n", kernel, kevo_error_last());
    else if (out_path && kevo_file_write(out_path, adapted, strlen(adapted)) < 0)
        fprintf(stderr, "kevo tasks adapt: %s\n", kevo_error_last()), status = KEVO_EXIT_INFRA;
    else {
        if (!out_path)
            fputs(adapted, stdout);
        status = KEVO_EXIT_OK;
    }
    free(src);
    free(adapted);
    kevo_task_free(from);
    kevo_task_free(to);
    return status;
}

const char *kevo_cli_default_suites(void)
{
    const char *dir = kevo_data_path("KEVO_SUITES_DIR", "suites/c");
    return dir ? dir : "/(kevo's data directory not found: set KEVO_DATA_DIR)/suites/c";
}

int kevo_cmd_tasks_link(int argc, char **argv)
{
    const char *from = kevo_cli_default_suites();
    char **dirs = NULL;
    size_t n = 0;
    int status = KEVO_EXIT_OK;
    static const struct option table[] = {
        {"help", no_argument, NULL, 'h'},
        {"from", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    kevo_opts op;
    kevo_opts_init(&op, "kevo tasks link", argc - 1, argv + 1, table, "h");
    int c;
    while ((c = kevo_opts_next(&op)) != -1) {
        if (c == '?')
            return KEVO_EXIT_USAGE;
        if (c == 'h') {
            kevo_cli_tasks_usage(stdout);
            return KEVO_EXIT_OK;
        }
        from = op.arg;
    }
    int nops = 0;
    char **ops = kevo_opts_operands(&op, &nops);
    if (nops == 0) {
        fprintf(stderr, "usage: kevo tasks link DIR... [--from SUITE]\n");
        return KEVO_EXIT_USAGE;
    }
    size_t linked = 0, total = 0;
    for (int i = 0; i < nops; i++) {
        if (kevo_task_find(&dirs, &n, ops[i]) < 0) {
            fprintf(stderr, "kevo tasks link: %s\n", kevo_error_last());
            return KEVO_EXIT_USAGE;
        }
        for (size_t k = 0; k < n; k++) {
            char line[600];
            int rc = kevo_cli_link_draft(dirs[k], from, line, sizeof(line));
            total++;
            linked += rc == 1;
            printf("[%zu] %-8s %s: %s\n", total, rc == 1 ? "linked" : rc < 0 ? "error" : "no draft",
                   dirs[k], line);
            fflush(stdout);
            if (rc < 0)
                status = KEVO_EXIT_INFRA;
        }
        kevo_task_dirs_free(dirs, n);
    }
    printf("tasks link: %zu of %zu tasks got a C draft\n", linked, total);
    return status;
}
