/*
 * cli/progress.c - the terminal side of a run's progress: the agent's
 * events (kevo/agent.h) become its plain lines (kevo_run_event_line, the
 * same text the agent prints by itself) and, when stdout is a terminal, one
 * status line at the bottom that is erased ("\r\033[K") before each
 * scrolling line and drawn again after it, redrawn in place by a small
 * thread so that the elapsed time never freezes. Colour (verdicts) only on
 * a terminal without NO_COLOR. Must not: decide anything about the run,
 * write an escape code when stdout is not a live terminal, or use
 * cursor-movement tricks beyond carriage return and erase-line.
 */
#include "progress.h"
#include "kevo/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define ERASE "\r\033[K"
#define SLOTS 64          /* tasks in flight shown (--jobs beyond it: counted, not named) */
#define MIN_REDRAW_S 0.1  /* at most ten redraws a second for phase changes */
#define TICK_S 1.0        /* the elapsed time moves at least this often */

/* A task in flight, known by (run, index, name): a worker works tasks of
 * several runs, each as task 1 of 1. */
typedef struct slot {
    bool used;
    int64_t run_id;
    size_t index;
    char task[64];
    int iteration, iterations;
    kevo_stage stage;
    kevo_attempt_phase phase;
    bool attempting; /* a phase was heard: iteration/stage/phase mean something */
    double updated;
} slot;

struct kevo_progress {
    kevo_run_observer observer;
    kevo_progress_mode mode;
    bool colour;
    char label[96];
    bool label_run_id;
    volatile sig_atomic_t *stop;

    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t ticker;
    bool ticking, ending, ended;

    /* what the status line shows (under lock) */
    bool started;          /* an event came: there is something to show */
    bool run_known;        /* RUN_STARTED came (kevo run): run id and task count known */
    int64_t run_id;
    size_t total, done;
    size_t ended_tasks;    /* without RUN_STARTED (a worker): tasks seen to end */
    double t0;             /* the first event, on this clock */
    double left_s, left_at; /* the last estimate, and when it came; left_s < 0: none */
    double best;
    char best_task[64];
    slot slots[SLOTS];
    size_t untracked;      /* tasks in flight beyond SLOTS */
    bool drawn;            /* a status line is on the screen */
    bool dirty;
    double last_draw;
};

kevo_progress_mode kevo_progress_mode_detect(bool quiet, bool *colour)
{
    *colour = false;
    if (quiet)
        return KEVO_PROGRESS_QUIET;
    const char *term = getenv("TERM");
    if (!isatty(STDOUT_FILENO) || !term || !*term || !strcmp(term, "dumb"))
        return KEVO_PROGRESS_PLAIN;
    const char *no_colour = getenv("NO_COLOR");
    *colour = !no_colour || !*no_colour;
    return KEVO_PROGRESS_LIVE;
}

/* ---- the status line ------------------------------------------------- */

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

/* 62s -> "1m02s", 3725s -> "1h02m". */
static void duration(char *buf, size_t cap, double seconds)
{
    long t = seconds > 0 ? (long)seconds : 0;
    if (t >= 3600)
        snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else
        snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
}

/* The most recently updated task in flight, or NULL. */
static const slot *latest(const kevo_progress *p)
{
    const slot *best = NULL;
    for (size_t i = 0; i < SLOTS; i++)
        if (p->slots[i].used && (!best || p->slots[i].updated > best->updated))
            best = &p->slots[i];
    return best;
}

/* Lock held. */
static void status_text(const kevo_progress *p, char *buf, size_t cap, int width, double now)
{
    kevo_buf b = {0};
    kevo_buf_puts(&b, p->label);
    if (p->label_run_id && p->run_known)
        kevo_buf_printf(&b, " %lld", (long long)p->run_id);
    if (p->run_known)
        kevo_buf_printf(&b, " | tasks %zu/%zu", p->done, p->total);
    else
        kevo_buf_printf(&b, " | %zu tasks done", p->ended_tasks);
    const slot *s = latest(p);
    size_t in_flight = p->untracked;
    for (size_t i = 0; i < SLOTS; i++)
        in_flight += p->slots[i].used;
    if (s && s->attempting)
        kevo_buf_printf(&b, " | %s iter %d/%d %s: %s", s->task, s->iteration + 1, s->iterations,
                        s->stage == KEVO_STAGE_DRAFT ? "draft" : "refine",
                        kevo_attempt_phase_name(s->phase));
    else if (s)
        kevo_buf_printf(&b, " | %s: preparing", s->task); /* the reference is built */
    if (in_flight > 1)
        kevo_buf_printf(&b, " (+%zu more)", in_flight - 1);
    if (p->best > 0)
        kevo_buf_printf(&b, " | best %.2fx (%s)", p->best, p->best_task);
    char el[32], left[32];
    duration(el, sizeof(el), now - p->t0);
    kevo_buf_printf(&b, " | %s elapsed", el);
    /* the last estimate counts down; once it has run out it says nothing */
    double l = p->left_s - (now - p->left_at);
    if (p->left_s >= 0 && p->done < p->total && l >= 1) {
        duration(left, sizeof(left), l);
        kevo_buf_printf(&b, ", ~%s left", left);
    }
    if (p->stop && *p->stop)
        kevo_buf_puts(&b, " | stopping after the attempt in flight");
    /* width - 1: a line that fills the last column leaves the cursor in
     * the terminal's pending-wrap state, where \r behaves differently */
    size_t max = width > 1 ? (size_t)width - 1 : 1;
    if (max >= cap)
        max = cap - 1;
    const char *text = kevo_buf_cstr(&b);
    size_t n = text ? strlen(text) : 0;
    if (n > max)
        n = max;
    memcpy(buf, text ? text : "", n);
    buf[n] = '\0';
    kevo_buf_free(&b);
}

void kevo_progress_status(kevo_progress *p, char *buf, size_t cap, int width)
{
    pthread_mutex_lock(&p->lock);
    status_text(p, buf, cap, width, kevo_now_s());
    pthread_mutex_unlock(&p->lock);
}

/* Bytes to stdout in one write(2) where the terminal allows it: a line
 * and the status line after it arrive together (stdio on a terminal would
 * flush at the newline, and the screen would show the moment between). */
static void put(const char *data, size_t len)
{
    fflush(stdout);
    while (len > 0) {
        ssize_t w = write(STDOUT_FILENO, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* a terminal gone away: nothing better to do with progress */
        data += w;
        len -= (size_t)w;
    }
}

/* Lock held. Erase what is drawn, print `line` (NULL: none) on its
 * stream, draw the status line again. One write to stdout per call. */
static void draw(kevo_progress *p, const char *line, bool to_stderr)
{
    double now = kevo_now_s();
    bool live = p->mode == KEVO_PROGRESS_LIVE && !p->ended;
    kevo_buf b = {0};
    if (live && p->drawn)
        kevo_buf_puts(&b, ERASE);
    if (line && !to_stderr) {
        kevo_buf_puts(&b, line);
        kevo_buf_puts(&b, "\n");
    }
    if (line && to_stderr) {
        /* the erase first, on stdout; then the line on stderr */
        put(b.ptr, b.len);
        kevo_buf_clear(&b);
        fprintf(stderr, "%s\n", line);
        fflush(stderr);
    }
    if (live && p->started) {
        char status[1024];
        status_text(p, status, sizeof(status), term_width(), now);
        kevo_buf_puts(&b, status);
        p->drawn = true;
        p->last_draw = now;
        p->dirty = false;
    } else if (live) {
        p->drawn = false;
    }
    put(b.ptr, b.len);
    kevo_buf_free(&b);
}

/* An attempt's line with its verdict coloured: correct green, a kernel
 * that ran but was wrong or failed to build red, the rest yellow. */
static void coloured(kevo_buf *b, const kevo_run_line *l, const kevo_run_event *ev)
{
    const char *c = ev->verdict == KEVO_VERDICT_CORRECT           ? "\033[32m"
                    : ev->verdict == KEVO_VERDICT_INCORRECT ||
                              ev->verdict == KEVO_VERDICT_COMPILE_ERROR ||
                              ev->verdict == KEVO_VERDICT_CRASH
                        ? "\033[31m"
                        : "\033[33m";
    kevo_buf_put(b, l->text, l->verdict_at);
    kevo_buf_puts(b, c);
    kevo_buf_put(b, l->text + l->verdict_at, l->verdict_len);
    kevo_buf_puts(b, "\033[0m");
    kevo_buf_puts(b, l->text + l->verdict_at + l->verdict_len);
}

/* ---- the observer ---------------------------------------------------- */

static bool same_task(const slot *s, const kevo_run_event *ev)
{
    /* TASK_FINISHED names the folder only: run and index tell */
    return s->used && s->run_id == ev->run_id && s->index == ev->index &&
           (!ev->task || !strcmp(s->task, ev->task));
}

static slot *slot_of(kevo_progress *p, const kevo_run_event *ev)
{
    for (size_t i = 0; i < SLOTS; i++)
        if (same_task(&p->slots[i], ev))
            return &p->slots[i];
    return NULL;
}

static void task_begins(kevo_progress *p, const kevo_run_event *ev, double now)
{
    slot *s = slot_of(p, ev);
    for (size_t i = 0; i < SLOTS && !s; i++)
        if (!p->slots[i].used)
            s = &p->slots[i];
    if (!s) {
        p->untracked++;
        return;
    }
    memset(s, 0, sizeof(*s));
    s->used = true;
    s->run_id = ev->run_id;
    s->index = ev->index;
    snprintf(s->task, sizeof(s->task), "%s", ev->task ? ev->task : "");
    s->iterations = ev->iterations;
    s->updated = now;
}

static void task_ends(kevo_progress *p, const kevo_run_event *ev)
{
    slot *s = slot_of(p, ev);
    if (s)
        s->used = false;
    else if (p->untracked > 0)
        p->untracked--;
    else
        return; /* never seen to start (skipped, already complete) or already ended */
    p->ended_tasks++;
}

/* Lock held: what the status line shows, from the event. */
static void track(kevo_progress *p, const kevo_run_event *ev, double now)
{
    if (!p->started) {
        p->started = true;
        p->t0 = now;
    }
    slot *s;
    switch (ev->kind) {
    case KEVO_RUN_EVENT_RUN_STARTED:
        p->run_known = true;
        p->run_id = ev->run_id;
        p->total = ev->total;
        p->t0 = now;
        p->left_s = -1;
        break;
    case KEVO_RUN_EVENT_TASK_STARTED:
        task_begins(p, ev, now);
        break;
    case KEVO_RUN_EVENT_ATTEMPT_PHASE:
    case KEVO_RUN_EVENT_ATTEMPT_FINISHED:
        if ((s = slot_of(p, ev))) {
            s->attempting = true;
            s->iteration = ev->iteration;
            s->iterations = ev->iterations;
            s->stage = ev->stage;
            s->phase = ev->phase;
            s->updated = now;
        }
        if (ev->kind == KEVO_RUN_EVENT_ATTEMPT_FINISHED && ev->best > p->best) {
            p->best = ev->best;
            snprintf(p->best_task, sizeof(p->best_task), "%s", ev->task ? ev->task : "");
        }
        /* a worker says no TASK_FINISHED: the last iteration ends the task */
        if (ev->kind == KEVO_RUN_EVENT_ATTEMPT_FINISHED && !p->run_known &&
            ev->iteration + 1 >= ev->iterations)
            task_ends(p, ev);
        break;
    case KEVO_RUN_EVENT_TASK_FINISHED:
        task_ends(p, ev);
        break;
    case KEVO_RUN_EVENT_PROGRESS:
        p->done = ev->done;
        p->left_s = ev->left_s;
        p->left_at = now;
        break;
    default:
        break;
    }
}

static void on_event(void *ctx, const kevo_run_event *ev)
{
    kevo_progress *p = ctx;
    kevo_run_line l;
    kevo_run_event_line(&l, ev, p->mode == KEVO_PROGRESS_QUIET);
    pthread_mutex_lock(&p->lock);
    double now = kevo_now_s();
    track(p, ev, now);
    bool live = p->mode == KEVO_PROGRESS_LIVE && !p->ended;
    if (l.text[0]) {
        kevo_buf b = {0};
        if (live && p->colour && l.verdict_len && !l.to_stderr)
            coloured(&b, &l, ev);
        const char *text = b.len ? kevo_buf_cstr(&b) : l.text;
        draw(p, text ? text : l.text, l.to_stderr);
        kevo_buf_free(&b);
    } else if (live && p->started) {
        /* a phase or a task start: redrawn now unless it was just redrawn,
         * then by the ticker within MIN_REDRAW_S */
        if (now - p->last_draw >= MIN_REDRAW_S)
            draw(p, NULL, false);
        else {
            p->dirty = true;
            pthread_cond_signal(&p->wake);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

static void *tick(void *arg)
{
    kevo_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->ending) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(MIN_REDRAW_S * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->wake, &p->lock, &ts);
        if (p->ending || !p->started)
            continue;
        double since = kevo_now_s() - p->last_draw;
        if ((p->dirty && since >= MIN_REDRAW_S) || since >= TICK_S)
            draw(p, NULL, false);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* ---- life ------------------------------------------------------------ */

int kevo_progress_new(kevo_progress **out, const kevo_progress_options *opts)
{
    *out = NULL;
    kevo_progress *p = calloc(1, sizeof(*p));
    if (!p)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    p->observer = (kevo_run_observer){.version = KEVO_RUN_OBSERVER_VERSION, .ctx = p,
                                      .on_event = on_event};
    p->mode = kevo_progress_mode_detect(opts->quiet, &p->colour);
    snprintf(p->label, sizeof(p->label), "%s", opts->label ? opts->label : "kevo");
    p->label_run_id = opts->label_run_id;
    p->stop = opts->stop;
    p->left_s = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    if (p->mode == KEVO_PROGRESS_LIVE) {
        /* Ctrl-C and SIGTERM are for the threads that do the work: the
         * ticker starts with them blocked (it inherits the mask) */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        int started = pthread_create(&p->ticker, NULL, tick, p);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (started != 0) {
            pthread_cond_destroy(&p->wake);
            pthread_mutex_destroy(&p->lock);
            free(p);
            return kevo_error_set(KEVO_EIO, "progress: cannot start the status line's thread");
        }
        p->ticking = true;
    }
    *out = p;
    return 0;
}

const kevo_run_observer *kevo_progress_observer(kevo_progress *p)
{
    return &p->observer;
}

kevo_progress_mode kevo_progress_mode_of(const kevo_progress *p)
{
    return p->mode;
}

void kevo_progress_line(kevo_progress *p, bool to_stderr, const char *text)
{
    pthread_mutex_lock(&p->lock);
    draw(p, text, to_stderr);
    pthread_mutex_unlock(&p->lock);
}

void kevo_progress_end(kevo_progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->ending = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    if (p->ticking)
        pthread_join(p->ticker, NULL);
    p->ticking = false;
    pthread_mutex_lock(&p->lock);
    if (p->mode == KEVO_PROGRESS_LIVE && p->drawn)
        put(ERASE, strlen(ERASE));
    p->drawn = false;
    p->ended = true;
    pthread_mutex_unlock(&p->lock);
}

void kevo_progress_free(kevo_progress *p)
{
    if (!p)
        return;
    kevo_progress_end(p);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
