/*
 * report/metrics.c - run metrics as the papers define them, computed from
 * one loaded run and its attempts: compiled and correct rates per
 * operator (any attempt within budget) and per attempt, fast_1 / fast_2,
 * geometric-mean best speedup over tasks with a correct kernel, median
 * and IQR of best speedup over the first correct draft, iterations to the
 * first correct kernel, tokens, wall time; the papers' forms (CR and Acc
 * per kernel, round 1, by iteration, per level, pass@k) and the paired
 * ratio of two runs. The one geometric mean of best speedups is
 * kevo_report_geomean() (docs/report.md "Definitions").
 *
 * Computes only: the store is load.c's (no kevo_memory_* call here) and
 * the text / JSON / CSV forms are render.c's.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
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
    free(m->by_iteration);
    free(m->per_level);
    free(m->per_machine);
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
    int iters; /* largest 1-based (clamped) iteration */
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
static void tally_attempt(kevo_run_metrics *m, kevo_task_metrics *t, int *r1_iter,
                          attempt_tally *tally, const kevo_attempt *a)
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
    if (a->tokens_estimated)
        m->tokens_estimated = true;
    int it = kevo_report__clamp_iter(a->iteration) + 1;
    if (it > tally->iters)
        tally->iters = it;
    /* round 1: the task's attempt at its smallest iteration (the first of
     * those in decision order) */
    if (t->attempts == 1 || it < *r1_iter) {
        *r1_iter = it;
        t->round1_compiled = comp;
        t->round1_correct = corr;
    }
    if (comp && (!t->first_compiled_iter || it < t->first_compiled_iter))
        t->first_compiled_iter = it;
    if (corr && (!t->first_correct_min_iter || it < t->first_correct_min_iter))
        t->first_correct_min_iter = it;
    if (a->stage == KEVO_STAGE_DRAFT) {
        t->draft_samples++;
        t->draft_correct += corr;
    }
    t->tokens_prompt += a->tokens_prompt;
    t->tokens_completion += a->tokens_completion;
    if (a->candidate_us > 0) /* a timed attempt: its baseline (older stores: the C one) */
        snprintf(t->baseline, sizeof(t->baseline), "%s",
                 a->baseline && *a->baseline ? a->baseline : "c-reference");
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
        snprintf(t->machine, sizeof(t->machine), "%s", a->machine ? a->machine : "");
    }
    if (a->candidate_us > 0 && (t->best_us == 0 || a->candidate_us < t->best_us)) {
        t->best_us = a->candidate_us;
        snprintf(t->best_us_machine, sizeof(t->best_us_machine), "%s",
                 a->machine ? a->machine : "");
    }
}

/* The run's numbers over its tasks. */
static int summarize_tasks(kevo_run_metrics *m, const attempt_tally *tally)
{
    m->tasks = (int)m->ntasks;
    double *vs_first = calloc(m->ntasks + 1, sizeof(double));
    if (!vs_first)
        return kevo_error_set(KEVO_ENOMEM, "out of memory computing metrics");
    size_t nvs = 0, ncorrect = 0, ncompiled = 0, fast1 = 0, fast2 = 0;
    double iters = 0, sp_iters = 0;
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

/* ---- the one geometric mean of best speedups -------------------------- */

double kevo_report_best_value(const kevo_task_metrics *t)
{
    /* best_speedup stays 0 unless a correct attempt had a positive speedup:
     * a task with no correct kernel, or with no measured one, is at the
     * reference (1.0x), not excluded and not near zero */
    return t->correct && t->best_speedup > 0 ? t->best_speedup : 1.0;
}

double kevo_report_geomean(const kevo_task_metrics *const *tasks, size_t n)
{
    if (n == 0)
        return 0;
    double logsum = 0;
    for (size_t i = 0; i < n; i++)
        logsum += log(kevo_report_best_value(tasks[i]));
    return exp(logsum / (double)n);
}

static int cmp_task_name(const void *a, const void *b)
{
    const kevo_task_metrics *x = *(const kevo_task_metrics *const *)a;
    const kevo_task_metrics *y = *(const kevo_task_metrics *const *)b;
    return strcmp(x->task, y->task);
}

int kevo_report_paired(double *out_ratio, int *out_tasks, const kevo_run_metrics *a,
                       const kevo_run_metrics *b)
{
    int error = 0;
    const kevo_task_metrics **bs = calloc(b->ntasks + 1, sizeof(*bs));
    const kevo_task_metrics **pa = calloc(a->ntasks + 1, sizeof(*pa));
    const kevo_task_metrics **pb = calloc(a->ntasks + 1, sizeof(*pb));
    size_t n = 0;
    *out_ratio = NAN;
    *out_tasks = 0;
    if (!bs || !pa || !pb) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory pairing runs");
        goto done;
    }
    for (size_t k = 0; k < b->ntasks; k++)
        bs[k] = &b->per_task[k];
    qsort(bs, b->ntasks, sizeof(*bs), cmp_task_name);
    for (size_t k = 0; k < a->ntasks; k++) {
        const kevo_task_metrics *t = &a->per_task[k];
        const kevo_task_metrics *const *hit =
            t->correct ? bsearch(&t, bs, b->ntasks, sizeof(*bs), cmp_task_name) : NULL;
        if (hit && (*hit)->correct) {
            pa[n] = t;
            pb[n] = *hit;
            n++;
        }
    }
    /* the geometric mean of the per-task ratios is the ratio of the two
     * geometric means over the same tasks: one definition, used twice */
    if (n) {
        *out_ratio = kevo_report_geomean(pa, n) / kevo_report_geomean(pb, n);
        *out_tasks = (int)n;
    }
done:
    free(bs);
    free(pa);
    free(pb);
    return error;
}

/* ---- the papers' forms ------------------------------------------------- */

double kevo_report__pass_at_k(int n, int c, int k)
{
    if (n <= 0 || c <= 0)
        return 0;
    if (n - c < k) /* every k-subset holds a correct sample (also n < k) */
        return 1;
    /* C(n-c, k) / C(n, k) as a product, never a factorial */
    double none = 1;
    for (int i = 0; i < k; i++)
        none *= (double)(n - c - i) / (double)(n - i);
    return 1 - none;
}

static const int pass_ks[KEVO_REPORT_PASS_K_MAX] = {1, 5, 10};

/* The papers' rates over tasks[0..n); pass@k for each k <= kmax. */
static int rates_compute(kevo_paper_rates *r, const kevo_task_metrics *const *tasks, size_t n,
                         int kmax)
{
    const kevo_task_metrics **solved = calloc(n + 1, sizeof(*solved));
    if (!solved)
        return kevo_error_set(KEVO_ENOMEM, "out of memory computing metrics");
    size_t comp = 0, corr = 0, r1c = 0, r1k = 0, fast1 = 0, sampled = 0;
    for (size_t i = 0; i < n; i++) {
        const kevo_task_metrics *t = tasks[i];
        comp += t->compiled;
        r1c += t->round1_compiled;
        r1k += t->round1_correct;
        sampled += t->draft_samples > 0;
        if (t->correct) {
            solved[corr++] = t;
            fast1 += t->best_speedup > 1.0;
        }
    }
    memset(r, 0, sizeof(*r));
    r->tasks = (int)n;
    if (n) {
        r->cr_per_kernel = (double)comp / (double)n;
        r->acc = (double)corr / (double)n;
        r->round1_cr = (double)r1c / (double)n;
        r->round1_acc = (double)r1k / (double)n;
        r->fast_1 = (double)fast1 / (double)n;
    }
    r->geomean_speedup = kevo_report_geomean(solved, corr);
    r->pass_at_k_tasks = (int)sampled;
    for (size_t j = 0; j < KEVO_REPORT_PASS_K_MAX && sampled; j++) {
        int k = pass_ks[j];
        if (k > kmax)
            break;
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            if (tasks[i]->draft_samples > 0)
                sum += kevo_report__pass_at_k(tasks[i]->draft_samples, tasks[i]->draft_correct, k);
        r->pass_at_k[r->npass_at_k++] = (kevo_pass_at_k){k, sum / (double)sampled};
    }
    free(solved);
    return 0;
}

static int cmp_mem_task_ptr(const void *a, const void *b)
{
    const kevo_memory_task *x = *(const kevo_memory_task *const *)a;
    const kevo_memory_task *y = *(const kevo_memory_task *const *)b;
    return strcmp(x->name, y->name);
}

/* Each task's level, from the store's tasks table (0 when not there). */
static int levels_assign(kevo_run_metrics *m, const kevo_memory_task_array *tasks)
{
    if (!tasks || tasks->n == 0)
        return 0;
    const kevo_memory_task **idx = calloc(tasks->n, sizeof(*idx));
    if (!idx)
        return kevo_error_set(KEVO_ENOMEM, "out of memory computing metrics");
    for (size_t i = 0; i < tasks->n; i++)
        idx[i] = &tasks->tasks[i];
    qsort(idx, tasks->n, sizeof(*idx), cmp_mem_task_ptr);
    for (size_t k = 0; k < m->ntasks; k++) {
        kevo_memory_task key = {.name = m->per_task[k].task};
        const kevo_memory_task *kp = &key;
        const kevo_memory_task *const *hit =
            bsearch(&kp, idx, tasks->n, sizeof(*idx), cmp_mem_task_ptr);
        m->per_task[k].level = hit && (*hit)->level > 0 ? (*hit)->level : 0;
    }
    free(idx);
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The run's paper rates, by iteration (1..iters) and per level. */
static int paper_compute(kevo_run_metrics *m, int iters)
{
    int error = 0;
    size_t n = m->ntasks;
    const kevo_task_metrics **all = calloc(n + 1, sizeof(*all));
    const kevo_task_metrics **sub = calloc(n + 1, sizeof(*sub));
    int *levels = calloc(n + 1, sizeof(int));
    int kmax = 0;
    if (!all || !sub || !levels ||
        !(m->by_iteration = calloc((size_t)iters + 1, sizeof(*m->by_iteration))) ||
        !(m->per_level = calloc(n + 1, sizeof(*m->per_level)))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory computing metrics");
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        all[k] = &m->per_task[k];
        levels[k] = m->per_task[k].level;
        if (m->per_task[k].attempts > kmax)
            kmax = m->per_task[k].attempts;
    }
    if ((error = rates_compute(&m->paper, all, n, kmax)) < 0)
        goto done;
    m->geomean_speedup = m->paper.geomean_speedup;
    m->geomean_speedup_all_tasks = kevo_report_geomean(all, n);
    for (int i = 1; i <= iters && n; i++) {
        size_t comp = 0, corr = 0;
        for (size_t k = 0; k < n; k++) {
            comp += all[k]->first_compiled_iter && all[k]->first_compiled_iter <= i;
            corr += all[k]->first_correct_min_iter && all[k]->first_correct_min_iter <= i;
        }
        m->by_iteration[m->niterations++] =
            (kevo_iteration_rates){i, (double)comp / (double)n, (double)corr / (double)n};
    }
    qsort(levels, n, sizeof(int), cmp_int);
    for (size_t j = 0; j < n; j++) {
        if (j > 0 && levels[j] == levels[j - 1])
            continue;
        size_t ns = 0;
        for (size_t k = 0; k < n; k++)
            if (all[k]->level == levels[j])
                sub[ns++] = all[k];
        kevo_level_rates *lr = &m->per_level[m->nlevels++];
        lr->level = levels[j];
        if ((error = rates_compute(&lr->r, sub, ns, kmax)) < 0)
            goto done;
    }
done:
    free(all);
    free(sub);
    free(levels);
    return error;
}

/* The attempts by the machine that measured them: counts, and over each
 * machine's tasks the geometric mean of the best speedup measured there
 * (so that no figure mixes machines). */
static int machines_compute(kevo_run_metrics *m, const kevo_attempt_list *list)
{
    size_t cap = list->n + 1, nt = m->ntasks ? m->ntasks : 1;
    if (!(m->per_machine = calloc(cap, sizeof(*m->per_machine))))
        return -1;
    size_t *mi_of = calloc(cap, sizeof(size_t));
    if (!mi_of)
        return -1;
    for (size_t i = 0; i < list->n; i++) {
        const char *id = list->attempts[i].machine ? list->attempts[i].machine : "";
        size_t k = 0;
        while (k < m->nmachines && strcmp(m->per_machine[k].id, id))
            k++;
        if (k == m->nmachines)
            snprintf(m->per_machine[m->nmachines++].id, sizeof(m->per_machine[0].id), "%s", id);
        mi_of[i] = k;
        m->per_machine[k].attempts++;
        m->per_machine[k].correct += list->attempts[i].verdict == KEVO_VERDICT_CORRECT;
    }
    /* best[k * nt + task] over the machine's correct attempts */
    kevo_task_metrics *best = calloc(m->nmachines * nt + 1, sizeof(*best));
    const kevo_task_metrics **given = calloc(nt + 1, sizeof(*given));
    if (!best || !given) {
        free(mi_of);
        free(best);
        free(given);
        return -1;
    }
    for (size_t i = 0; i < list->n; i++) {
        const kevo_attempt *a = &list->attempts[i];
        if (a->verdict != KEVO_VERDICT_CORRECT)
            continue;
        size_t t = 0;
        while (t < m->ntasks && strcmp(m->per_task[t].task, a->task))
            t++;
        kevo_task_metrics *b = &best[mi_of[i] * nt + (t < nt ? t : 0)];
        b->correct = true;
        if (a->speedup > b->best_speedup)
            b->best_speedup = a->speedup;
    }
    for (size_t k = 0; k < m->nmachines; k++) {
        size_t n = 0;
        for (size_t t = 0; t < m->ntasks; t++)
            if (best[k * nt + t].correct)
                given[n++] = &best[k * nt + t];
        m->per_machine[k].tasks = (int)n;
        m->per_machine[k].geomean_speedup = kevo_report_geomean(given, n);
    }
    free(mi_of);
    free(best);
    free(given);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void kevo_report__roofline_compute(kevo_run_metrics *m, const double *flops, const double *bytes,
                                   const kevo_peaks *peaks, const char *why)
{
    m->roof_tasks = 0;
    m->median_roof_fraction = NAN;
    snprintf(m->roof_note, sizeof(m->roof_note), "%s", peaks ? "" : why ? why : "no peaks");
    m->roof_peaks_known = peaks != NULL;
    if (peaks)
        m->roof_peaks = *peaks;
    double *fr = calloc(m->ntasks + 1, sizeof(double));
    for (size_t k = 0; k < m->ntasks; k++) {
        kevo_task_metrics *t = &m->per_task[k];
        kevo_roofline r;
        t->roof_known = false;
        /* a latency measured elsewhere says nothing against these peaks */
        bool here = !peaks || !peaks->machine[0] || !t->best_us_machine[0] ||
                    !strcmp(peaks->machine, t->best_us_machine);
        if (!peaks || !t->correct || !(t->best_us > 0) || !here ||
            kevo_roofline_compute(&r, flops[k], bytes[k], t->best_us, peaks) < 0 ||
            !r.have_bound || !isfinite(r.fraction))
            continue;
        t->roof_known = true;
        t->roof_fraction = r.fraction;
        t->roof_memory_bound = r.memory_bound;
        if (fr)
            fr[m->roof_tasks++] = r.fraction;
    }
    kevo_error_clear();
    if (fr && m->roof_tasks) {
        qsort(fr, (size_t)m->roof_tasks, sizeof(double), cmp_double);
        m->median_roof_fraction = quantile(fr, (size_t)m->roof_tasks, 0.5);
        /* A fraction above 1 is not a kernel beating the machine: the
         * machine reached more during the run than when it was calibrated
         * (a shared host's bandwidth moves with its load). Said, not hidden. */
        int above = 0;
        for (int k = 0; k < m->roof_tasks; k++)
            above += fr[k] > 1.0;
        if (above)
            snprintf(m->roof_note, sizeof(m->roof_note),
                     "%d task(s) above their bound (up to %.2f): the machine reached more "
                     "than its calibration%s%s did; calibrate when it is quiet, compare "
                     "fractions within one calibration",
                     above, fr[m->roof_tasks - 1], peaks->measured[0] ? " of " : "",
                     peaks->measured);
    }
    free(fr);
}

static int oom(int64_t run_id)
{
    return kevo_error_set(KEVO_ENOMEM, "out of memory computing the metrics of run %lld",
                          (long long)run_id);
}

int kevo_report__metrics_compute(kevo_run_metrics **out, int64_t run_id, const kevo_run *run,
                                 const kevo_attempt_list *list, const kevo_memory_task_array *tasks)
{
    int error = 0;
    attempt_tally tally = {0};
    kevo_run_metrics *m = calloc(1, sizeof(*m));
    int *r1_iter = calloc(list->n + 1, sizeof(int)); /* per task, as per_task */
    *out = NULL;
    if (!m || !r1_iter || !(m->config_json = strdup(run->config_json ? run->config_json : "{}")) ||
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
        tally_attempt(m, t, &r1_iter[t - m->per_task], &tally, a);
    }
    if ((error = summarize_tasks(m, &tally)) < 0 || (error = levels_assign(m, tasks)) < 0 ||
        (error = paper_compute(m, tally.iters)) < 0)
        goto done;
    if (machines_compute(m, list) < 0) {
        error = oom(run_id);
        goto done;
    }
    if (run->finished > run->started)
        m->wall_s = (double)(run->finished - run->started) / 1000.0;
    else if (list->n)
        m->wall_s = (double)(list->attempts[list->n - 1].created - run->started) / 1000.0;
    *out = m;
    m = NULL;
done:
    free(r1_iter);
    kevo_run_metrics_free(m);
    return error;
}
