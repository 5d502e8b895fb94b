/*
 * report/metrics.c - run metrics as the papers define them, computed from
 * one loaded run and its attempts: compiled and correct rates per
 * operator (any attempt within budget) and per attempt, fast_1 / fast_2,
 * geometric-mean best speedup over tasks with a correct kernel, median
 * and IQR of best speedup over the first correct draft, iterations to the
 * first correct kernel, tokens, wall time.
 *
 * Computes only: the store is load.c's (no kevo_memory_* call here) and
 * the text / JSON / CSV forms are render.c's.
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "no_store.h"

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

/* What the attempts add up to beyond the per-task numbers. */
typedef struct attempt_tally {
    int compiled, correct, llm_attempts;
    int64_t llm_tokens;
} attempt_tally;

/* The entry of task `name` in m->per_task, added when new (per_task has
 * room for one task per attempt); NULL when out of memory. */
static kevo_task_metrics *task_entry(kevo_run_metrics *m, const char *name)
{
    for (size_t k = 0; k < m->ntasks; k++)
        if (!strcmp(m->per_task[k].task, name))
            return &m->per_task[k];
    kevo_task_metrics *t = &m->per_task[m->ntasks];
    if (!(t->task = strdup(name)))
        return NULL;
    m->ntasks++;
    return t;
}

/* One attempt, in decision order, into its task's numbers and the run's. */
static void tally_attempt(kevo_run_metrics *m, kevo_task_metrics *t, attempt_tally *tally,
                          const kevo_attempt *a)
{
    t->attempts++;
    m->attempts++;
    if (a->generator && !strcmp(a->generator, "builtin")) {
        m->builtin_attempts++;
    } else {
        tally->llm_attempts++;
        tally->llm_tokens += a->tokens_prompt + a->tokens_completion;
    }
    bool comp = kevo_verdict_compiled(a->verdict), corr = a->verdict == KEVO_VERDICT_CORRECT;
    tally->compiled += comp;
    tally->correct += corr;
    t->compiled |= comp;
    t->tokens_prompt += a->tokens_prompt;
    t->tokens_completion += a->tokens_completion;
    if (!corr)
        return;
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

/* The run's numbers over its tasks. */
static int summarize_tasks(kevo_run_metrics *m, const attempt_tally *tally)
{
    m->tasks = (int)m->ntasks;
    double *vs_first = calloc(m->ntasks + 1, sizeof(double));
    if (!vs_first)
        return kevo_error_set(KEVO_ENOMEM, "out of memory computing metrics");
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
    if (tally->llm_attempts && m->builtin_attempts)
        m->tokens_saved_estimate =
            (double)m->builtin_attempts * (double)tally->llm_tokens / (double)tally->llm_attempts;
    if (nsp)
        m->mean_iters_to_first_speedup = sp_iters / (double)nsp;
    if (m->ntasks)
        m->speedup_1_1_rate = (double)nsp / (double)m->ntasks;
    if (m->attempts) {
        m->attempt_compiled_rate = (double)tally->compiled / m->attempts;
        m->attempt_correct_rate = (double)tally->correct / m->attempts;
    }
    if (ncorrect) {
        m->geomean_speedup = exp(logsum / (double)ncorrect);
        m->mean_iters_to_first_correct = iters / (double)ncorrect;
        m->tokens_per_solved_task =
            (double)(m->tokens_prompt + m->tokens_completion) / (double)ncorrect;
    }
    kevo_sort_doubles(vs_first, nvs);
    m->median_speedup_vs_first_draft = quantile(vs_first, nvs, 0.5);
    m->iqr_low = quantile(vs_first, nvs, 0.25);
    m->iqr_high = quantile(vs_first, nvs, 0.75);
    free(vs_first);
    return 0;
}

static int oom(int64_t run_id)
{
    return kevo_error_set(KEVO_ENOMEM, "out of memory computing the metrics of run %lld",
                          (long long)run_id);
}

int kevo_report__metrics_compute(kevo_run_metrics **out, int64_t run_id, const kevo_run *run,
                                 const kevo_attempt_list *list)
{
    int error = 0;
    attempt_tally tally = {0};
    kevo_run_metrics *m = calloc(1, sizeof(*m));
    *out = NULL;
    if (!m || !(m->config_json = strdup(run->config_json ? run->config_json : "{}")) ||
        !(m->status = strdup(run->status ? run->status : "")) ||
        !(m->per_task = calloc(list->n + 1, sizeof(kevo_task_metrics)))) {
        error = oom(run_id);
        goto done;
    }
    m->run_id = run_id;
    for (size_t i = 0; i < list->n; i++) {
        const kevo_attempt *a = &list->attempts[i];
        kevo_task_metrics *t = task_entry(m, a->task);
        if (!t) {
            error = oom(run_id);
            goto done;
        }
        tally_attempt(m, t, &tally, a);
    }
    if ((error = summarize_tasks(m, &tally)) < 0)
        goto done;
    if (run->finished > run->started)
        m->wall_s = (double)(run->finished - run->started) / 1000.0;
    else if (list->n)
        m->wall_s = (double)(list->attempts[list->n - 1].created - run->started) / 1000.0;
    *out = m;
    m = NULL;
done:
    kevo_run_metrics_free(m);
    return error;
}
