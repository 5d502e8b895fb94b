/*
 * agent/events.c - a run's events: the one place they are handed on (to
 * the run's observer, else to the default printer), serialised across the
 * task workers, and each event's plain line, the format `kevo run` has
 * always printed (integration tests grep it). Must not: know about
 * terminals (escape codes, widths, colours are the CLI's renderer's), or
 * decide anything about the run.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One lock for every run in the process: observers and stdout see one
 * event at a time, whole. */
static pthread_mutex_t emit_lock = PTHREAD_MUTEX_INITIALIZER;

const char *kevo_attempt_phase_name(kevo_attempt_phase p)
{
    static const char *const names[KEVO_ATTEMPT_PHASE_COUNT] = {"proposing", "verifying"};
    return (unsigned)p < KEVO_ATTEMPT_PHASE_COUNT ? names[p] : "unknown";
}

static void mmss(long *m, long *s, double seconds)
{
    long t = seconds > 0 ? (long)seconds : 0;
    *m = t / 60;
    *s = t % 60;
}

/* An attempt's line: the verdict's span marked for renderers that colour it. */
static void attempt_line(kevo_run_line *out, const kevo_run_event *ev)
{
    char sp[32] = "";
    if (ev->speedup > 0)
        snprintf(sp, sizeof(sp), "%.2fx", ev->speedup);
    const char *verdict = kevo_verdict_name(ev->verdict);
    int n = snprintf(out->text, sizeof(out->text), "[%zu/%zu] %-24s iter %2d/%d %-6s %-24.24s ",
                     ev->index + 1, ev->total, ev->task ? ev->task : "", ev->iteration + 1,
                     ev->iterations, ev->stage == KEVO_STAGE_DRAFT ? "draft" : "refine",
                     ev->summary ? ev->summary : "");
    if (n < 0 || (size_t)n >= sizeof(out->text))
        return;
    out->verdict_at = (size_t)n;
    out->verdict_len = strlen(verdict);
    snprintf(out->text + n, sizeof(out->text) - (size_t)n, "%-13s %7s  best %.2fx", verdict, sp,
             ev->best);
}

void kevo_run_event_line(kevo_run_line *out, const kevo_run_event *ev, bool quiet)
{
    memset(out, 0, sizeof(*out));
    char *t = out->text;
    size_t n = sizeof(out->text);
    long em, es, lm, ls;
    switch (ev->kind) {
    case KEVO_RUN_EVENT_RUN_STARTED:
        if (!quiet) {
            /* a PostgreSQL URL is shown without its password */
            char *store = NULL;
            kevo_conninfo_redact(&store, ev->db_path);
            snprintf(t, n, "run %lld: %zu tasks, %d iterations each, generator %s, store %s",
                     (long long)ev->run_id, ev->total, ev->iterations,
                     ev->generator ? ev->generator : "", store ? store : "");
            free(store);
        }
        break;
    case KEVO_RUN_EVENT_ATTEMPT_FINISHED:
        if (!quiet)
            attempt_line(out, ev);
        break;
    case KEVO_RUN_EVENT_TASK_SKIPPED: /* said even when quiet: the task did not run */
        snprintf(t, n, "[%zu/%zu] %-28s skipped: %s", ev->index + 1, ev->total,
                 ev->task ? ev->task : "", ev->message ? ev->message : "");
        break;
    case KEVO_RUN_EVENT_TASK_COMPLETE:
        if (!quiet)
            snprintf(t, n, "[%zu/%zu] %-28s already complete (%d attempts)", ev->index + 1,
                     ev->total, ev->task ? ev->task : "", ev->attempts);
        break;
    case KEVO_RUN_EVENT_TASK_FAILED: /* an error: said even when quiet */
        snprintf(t, n, "kevo run: %s: %s", ev->task_dir ? ev->task_dir : "",
                 ev->message ? ev->message : "");
        out->to_stderr = true;
        break;
    case KEVO_RUN_EVENT_PROGRESS:
        /* once something ran and something is left: an estimate exists */
        if (!quiet && ev->worked > 0 && ev->done < ev->total && ev->left_s >= 0) {
            mmss(&em, &es, ev->elapsed_s);
            mmss(&lm, &ls, ev->left_s);
            snprintf(t, n, "-- %zu of %zu tasks done, %ldm%02lds elapsed, about %ldm%02lds left",
                     ev->done, ev->total, em, es, lm, ls);
        }
        break;
    default: /* task started, attempt phases, task finished: no line */
        break;
    }
}

static void print_plain(const kevo_run_event *ev, bool quiet)
{
    kevo_run_line line;
    kevo_run_event_line(&line, ev, quiet);
    if (!line.text[0])
        return;
    FILE *f = line.to_stderr ? stderr : stdout;
    fprintf(f, "%s\n", line.text);
    fflush(f);
}

void kevo_agent__emit(const kevo_run_config *cfg, const kevo_run_event *ev)
{
    pthread_mutex_lock(&emit_lock);
    const kevo_run_observer *o = cfg->observer;
    if (o && o->on_event)
        o->on_event(o->ctx, ev);
    else
        print_plain(ev, cfg->quiet);
    pthread_mutex_unlock(&emit_lock);
}
