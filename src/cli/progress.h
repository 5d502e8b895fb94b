/*
 * cli/progress.h - how long work shows its progress on stdout: a run
 * observer (kevo/agent.h) that prints the agent's plain lines and, on a
 * terminal, keeps one status line at the bottom, redrawn in place. Used by
 * `kevo run`; any command that runs the agent (a worker) may use it with
 * its own label.
 */
#ifndef KEVO_CLI_PROGRESS_H
#define KEVO_CLI_PROGRESS_H

#include "kevo/agent.h"

#include <signal.h>
#include <stdbool.h>

typedef enum {
    KEVO_PROGRESS_QUIET, /* --quiet: only skip and failure lines, as the agent prints them */
    KEVO_PROGRESS_PLAIN, /* piped, redirected, TERM=dumb or unset: the plain lines, no escapes */
    KEVO_PROGRESS_LIVE   /* a terminal: the lines scroll, a status line stays at the bottom */
} kevo_progress_mode;

typedef struct kevo_progress_options {
    const char *label;  /* the status line's first field: "kevo run", "worker host:1234" */
    bool label_run_id;  /* append the run id once the run starts: "kevo run 12" */
    bool quiet;
    /* the run's stop flag (Ctrl-C), or NULL: when set, the status line says
     * the run stops after the attempt in flight */
    volatile sig_atomic_t *stop;
} kevo_progress_options;

typedef struct kevo_progress kevo_progress;

/* The mode stdout asks for: QUIET when quiet; LIVE when stdout is a
 * terminal and TERM is set and not "dumb"; else PLAIN. *colour: LIVE and
 * NO_COLOR unset or empty (https://no-color.org). */
kevo_progress_mode kevo_progress_mode_detect(bool quiet, bool *colour);

/* A renderer in the detected mode; LIVE starts a thread that keeps the
 * elapsed time moving (at most ten redraws a second). The label is copied.
 * *out is the caller's, freed by kevo_progress_free(). KEVO_ENOMEM, or
 * KEVO_EIO when the thread cannot start. */
int kevo_progress_new(kevo_progress **out, const kevo_progress_options *opts);

/* The observer to put in kevo_run_config.observer; borrowed, valid until
 * kevo_progress_free(). */
const kevo_run_observer *kevo_progress_observer(kevo_progress *p);

kevo_progress_mode kevo_progress_mode_of(const kevo_progress *p);

/* Print one line (no newline in text) above the status line, on stdout or
 * stderr; in every mode, quiet included. */
void kevo_progress_line(kevo_progress *p, bool to_stderr, const char *text);

/* Stop the thread and erase the status line, leaving the cursor at the
 * start of a clean line; later events print plain lines only. Idempotent. */
void kevo_progress_end(kevo_progress *p);

/* Ends it first. NULL is fine. */
void kevo_progress_free(kevo_progress *p);

/* The status line as it would be drawn now, at most width - 1 characters
 * (for tests and for the renderer itself). */
void kevo_progress_status(kevo_progress *p, char *buf, size_t cap, int width);

#endif
