/*
 * report/metrics.c - run metrics as the papers define them: compiled and
 * correct rates per operator (any attempt within budget) and per attempt,
 * fast_1 / fast_2, geometric-mean best speedup over tasks with a correct
 * kernel, median and IQR of best speedup over the first correct draft,
 * iterations to the first correct kernel, tokens, wall time. Reads the
 * store; never writes it.
 */
#include "kevo/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void kevo_run_metrics_free(kevo_run_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ntasks; i++)
        free(m->per_task[i].task);
    free(m->per_task);
    free(m->config_json);
    free(m->status);
    free(m);
}

static double quantile(const double *s, size_t n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
    return s[lo] + (s[hi] - s[lo]) * (pos - (double)lo);
}

int kevo_report_metrics(kevo_run_metrics **out, kevo_memory *mem, int64_t run_id)
{
    *out = NULL;
    int error = 0;
    kevo_run *run = NULL;
    kevo_attempt_list *list = NULL;
    if (run_id == 0) {
        kevo_run_list *runs = NULL;
        if ((error = kevo_memory_run_list(&runs, mem)) < 0)
            return error;
        for (size_t i = 0; i < runs->n; i++)
            if (runs->runs[i].id > run_id)
                run_id = runs->runs[i].id;
        kevo_run_list_free(runs);
        if (run_id == 0)
            return kevo_error_set(KEVO_ENOTFOUND, "%s: no runs recorded yet (start one with "
                                  "`kevo run`)", kevo_memory_path(mem));
    }
    if ((error = kevo_memory_run_get(&run, mem, run_id)) < 0)
        return error;
    if ((error = kevo_memory_attempts_of_run(&list, mem, run_id)) < 0)
        goto done;
    kevo_run_metrics *m = calloc(1, sizeof(*m));
    m->run_id = run_id;
    m->config_json = strdup(run->config_json ? run->config_json : "{}");
    m->status = strdup(run->status ? run->status : "");
    m->per_task = calloc(list->n + 1, sizeof(kevo_task_metrics));
    int attempts_compiled = 0, attempts_correct = 0, llm_attempts = 0;
    int64_t llm_tokens = 0;
    for (size_t i = 0; i < list->n; i++) {
        const kevo_attempt *a = &list->attempts[i];
        kevo_task_metrics *t = NULL;
        for (size_t k = 0; k < m->ntasks; k++)
            if (!strcmp(m->per_task[k].task, a->task))
                t = &m->per_task[k];
        if (!t) {
            t = &m->per_task[m->ntasks++];
            t->task = strdup(a->task);
        }
        t->attempts++;
        m->attempts++;
        if (a->generator && !strcmp(a->generator, "builtin")) {
            m->builtin_attempts++;
        } else {
            llm_attempts++;
            llm_tokens += a->tokens_prompt + a->tokens_completion;
        }
        bool comp = kevo_verdict_compiled(a->verdict), corr = a->verdict == KEVO_VERDICT_CORRECT;
        attempts_compiled += comp;
        attempts_correct += corr;
        t->compiled |= comp;
        t->tokens_prompt += a->tokens_prompt;
        t->tokens_completion += a->tokens_completion;
        if (corr) {
            if (!t->correct) {
                t->correct = true;
                t->first_correct_iter = a->iteration + 1;
                t->first_correct_us = a->candidate_us;
                t->first_correct_speedup = a->speedup;
            }
            if (!t->first_speedup_iter && a->speedup >= 1.1)
                t->first_speedup_iter = a->iteration + 1;
            if (a->speedup > t->best_speedup) {
                t->best_speedup = a->speedup;
            }
            if (t->best_us == 0 || a->candidate_us < t->best_us)
                t->best_us = a->candidate_us;
        }
    }
    m->tasks = (int)m->ntasks;
    double *vs_first = calloc(m->ntasks + 1, sizeof(double));
    size_t nvs = 0, ncorrect = 0, ncompiled = 0, fast1 = 0, fast2 = 0;
    double logsum = 0, iters = 0, sp_iters = 0;
    size_t nsp = 0;
    for (size_t k = 0; k < m->ntasks; k++) {
        kevo_task_metrics *t = &m->per_task[k];
        m->tokens_prompt += t->tokens_prompt;
        m->tokens_completion += t->tokens_completion;
        ncompiled += t->compiled;
        if (t->first_speedup_iter) {
            nsp++;
            sp_iters += t->first_speedup_iter;
        }
        if (!t->correct)
            continue;
        ncorrect++;
        iters += t->first_correct_iter;
        fast1 += t->best_speedup > 1.0;
        fast2 += t->best_speedup > 2.0;
        logsum += log(t->best_speedup > 0 ? t->best_speedup : 1e-9);
        /* Both speedups were measured against the reference in their own
         * evaluation, so their ratio is immune to drift between evaluations. */
        if (t->first_correct_speedup > 0) {
            t->speedup_vs_first = t->best_speedup / t->first_correct_speedup;
            vs_first[nvs++] = t->speedup_vs_first;
        }
    }
    if (m->ntasks) {
        m->compiled_rate = (double)ncompiled / (double)m->ntasks;
        m->correct_rate = (double)ncorrect / (double)m->ntasks;
        m->fast_1 = (double)fast1 / (double)m->ntasks;
        m->fast_2 = (double)fast2 / (double)m->ntasks;
    }
    if (llm_attempts && m->builtin_attempts)
        m->tokens_saved_estimate = (double)m->builtin_attempts * (double)llm_tokens /
                                   (double)llm_attempts;
    if (nsp)
        m->mean_iters_to_first_speedup = sp_iters / (double)nsp;
    if (m->ntasks)
        m->speedup_1_1_rate = (double)nsp / (double)m->ntasks;
    if (m->attempts) {
        m->attempt_compiled_rate = (double)attempts_compiled / m->attempts;
        m->attempt_correct_rate = (double)attempts_correct / m->attempts;
    }
    if (ncorrect) {
        m->geomean_speedup = exp(logsum / (double)ncorrect);
        m->mean_iters_to_first_correct = iters / (double)ncorrect;
        m->tokens_per_solved_task = (double)(m->tokens_prompt + m->tokens_completion) /
                                    (double)ncorrect;
    }
    kevo_sort_doubles(vs_first, nvs);
    m->median_speedup_vs_first_draft = quantile(vs_first, nvs, 0.5);
    m->iqr_low = quantile(vs_first, nvs, 0.25);
    m->iqr_high = quantile(vs_first, nvs, 0.75);
    free(vs_first);
    if (run->finished > run->started)
        m->wall_s = (double)(run->finished - run->started) / 1000.0;
    else if (list->n)
        m->wall_s = (double)(list->attempts[list->n - 1].created - run->started) / 1000.0;
    *out = m;
done:
    kevo_attempt_list_free(list);
    kevo_run_free(run);
    return error;
}

static cJSON *run_json(const kevo_run_metrics *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "run_id", (double)m->run_id);
    cJSON_AddStringToObject(o, "status", m->status);
    cJSON *cfg = cJSON_Parse(m->config_json);
    cJSON_AddItemToObject(o, "config", cfg ? cfg : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "tasks", m->tasks);
    cJSON_AddNumberToObject(o, "attempts", m->attempts);
    cJSON_AddNumberToObject(o, "compiled_rate", m->compiled_rate);
    cJSON_AddNumberToObject(o, "correct_rate", m->correct_rate);
    cJSON_AddNumberToObject(o, "attempt_compiled_rate", m->attempt_compiled_rate);
    cJSON_AddNumberToObject(o, "attempt_correct_rate", m->attempt_correct_rate);
    cJSON_AddNumberToObject(o, "fast_1", m->fast_1);
    cJSON_AddNumberToObject(o, "fast_2", m->fast_2);
    cJSON_AddNumberToObject(o, "geomean_speedup", m->geomean_speedup);
    cJSON_AddNumberToObject(o, "median_speedup_vs_first_draft", m->median_speedup_vs_first_draft);
    cJSON_AddNumberToObject(o, "speedup_vs_first_draft_iqr_low", m->iqr_low);
    cJSON_AddNumberToObject(o, "speedup_vs_first_draft_iqr_high", m->iqr_high);
    cJSON_AddNumberToObject(o, "mean_iterations_to_first_correct", m->mean_iters_to_first_correct);
    cJSON_AddNumberToObject(o, "mean_iterations_to_first_speedup", m->mean_iters_to_first_speedup);
    cJSON_AddNumberToObject(o, "share_reaching_1_1x", m->speedup_1_1_rate);
    cJSON_AddNumberToObject(o, "tokens_prompt", (double)m->tokens_prompt);
    cJSON_AddNumberToObject(o, "tokens_completion", (double)m->tokens_completion);
    cJSON_AddNumberToObject(o, "tokens_total", (double)(m->tokens_prompt + m->tokens_completion));
    cJSON_AddNumberToObject(o, "tokens_per_solved_task", m->tokens_per_solved_task);
    cJSON_AddNumberToObject(o, "builtin_attempts", m->builtin_attempts);
    cJSON_AddNumberToObject(o, "tokens_saved_estimate", m->tokens_saved_estimate);
    cJSON_AddNumberToObject(o, "wall_s", m->wall_s);
    cJSON *tasks = cJSON_AddArrayToObject(o, "per_task");
    for (size_t k = 0; k < m->ntasks; k++) {
        const kevo_task_metrics *t = &m->per_task[k];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "task", t->task);
        cJSON_AddNumberToObject(j, "attempts", t->attempts);
        cJSON_AddBoolToObject(j, "compiled", t->compiled);
        cJSON_AddBoolToObject(j, "correct", t->correct);
        cJSON_AddNumberToObject(j, "first_correct_iteration", t->first_correct_iter);
        cJSON_AddNumberToObject(j, "first_speedup_iteration", t->first_speedup_iter);
        cJSON_AddNumberToObject(j, "best_speedup", t->best_speedup);
        cJSON_AddNumberToObject(j, "speedup_vs_first_draft", t->speedup_vs_first);
        cJSON_AddItemToArray(tasks, j);
    }
    return o;
}

int kevo_report_render(kevo_buf *out, kevo_run_metrics *const *runs, size_t n,
                       kevo_report_format fmt)
{
    if (fmt == KEVO_REPORT_HTML)
        return kevo_error_set(KEVO_EINVAL, "report: HTML needs the store; use kevo_report_html()");
    if (fmt == KEVO_REPORT_JSON) {
        cJSON *root;
        if (n == 1) {
            root = run_json(runs[0]);
        } else {
            root = cJSON_CreateObject();
            cJSON *arr = cJSON_AddArrayToObject(root, "runs");
            for (size_t i = 0; i < n; i++)
                cJSON_AddItemToArray(arr, run_json(runs[i]));
        }
        char *s = cJSON_Print(root);
        kevo_buf_puts(out, s);
        kevo_buf_puts(out, "\n");
        free(s);
        cJSON_Delete(root);
        return 0;
    }
    if (fmt == KEVO_REPORT_CSV) {
        kevo_buf_puts(out, "run_id,task,attempts,compiled,correct,first_correct_iteration,"
                           "best_speedup,speedup_vs_first_draft\n");
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < runs[i]->ntasks; k++) {
                const kevo_task_metrics *t = &runs[i]->per_task[k];
                kevo_buf_printf(out, "%lld,%s,%d,%d,%d,%d,%.4f,%.4f\n",
                                (long long)runs[i]->run_id, t->task, t->attempts, t->compiled,
                                t->correct, t->first_correct_iter, t->best_speedup,
                                t->speedup_vs_first);
            }
        return 0;
    }
    /* text: per-task table of the first run, then the summary side by side */
    if (n == 1) {
        const kevo_run_metrics *m = runs[0];
        kevo_buf_printf(out, "%-32s %8s %8s %12s %10s %10s\n", "task", "attempts", "correct",
                        "first iter", "best", "vs draft");
        for (size_t k = 0; k < m->ntasks; k++) {
            const kevo_task_metrics *t = &m->per_task[k];
            kevo_buf_printf(out, "%-32s %8d %8s %12d %9.2fx %9.2fx\n", t->task, t->attempts,
                            t->correct ? "yes" : "no", t->first_correct_iter, t->best_speedup,
                            t->speedup_vs_first);
        }
        kevo_buf_puts(out, "\n");
    }
    kevo_buf_printf(out, "%-34s", "run");
    for (size_t i = 0; i < n; i++)
        kevo_buf_printf(out, " %14lld", (long long)runs[i]->run_id);
    kevo_buf_puts(out, "\n");
#define ROW(label, fmtspec, expr)                                                                 \
    do {                                                                                          \
        kevo_buf_printf(out, "%-34s", label);                                                     \
        for (size_t i = 0; i < n; i++) {                                                          \
            const kevo_run_metrics *m = runs[i];                                                  \
            kevo_buf_printf(out, " " fmtspec, expr);                                              \
        }                                                                                         \
        kevo_buf_puts(out, "\n");                                                                 \
    } while (0)
    ROW("tasks", "%14d", m->tasks);
    ROW("attempts", "%14d", m->attempts);
    ROW("compiled_rate (per operator)", "%13.1f%%", 100 * m->compiled_rate);
    ROW("correct_rate (per operator)", "%13.1f%%", 100 * m->correct_rate);
    ROW("correct_rate (per attempt)", "%13.1f%%", 100 * m->attempt_correct_rate);
    ROW("fast_1 (correct and faster)", "%13.1f%%", 100 * m->fast_1);
    ROW("fast_2 (correct and >2x faster)", "%13.1f%%", 100 * m->fast_2);
    ROW("geomean_speedup vs reference", "%13.2fx", m->geomean_speedup);
    ROW("median_speedup_vs_first_draft", "%13.2fx", m->median_speedup_vs_first_draft);
    ROW("  IQR low", "%13.2fx", m->iqr_low);
    ROW("  IQR high", "%13.2fx", m->iqr_high);
    ROW("iterations to first correct", "%14.1f", m->mean_iters_to_first_correct);
    ROW("share reaching >= 1.1x", "%13.1f%%", 100 * m->speedup_1_1_rate);
    ROW("iterations to first >= 1.1x", "%14.1f", m->mean_iters_to_first_speedup);
    ROW("tokens_prompt", "%14lld", (long long)m->tokens_prompt);
    ROW("tokens_completion", "%14lld", (long long)m->tokens_completion);
    ROW("built-in (zero-token) attempts", "%14d", m->builtin_attempts);
    ROW("tokens saved (estimate)", "%14.0f", m->tokens_saved_estimate);
    ROW("wall time (s)", "%14.0f", m->wall_s);
#undef ROW
    return 0;
}
