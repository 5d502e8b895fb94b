/*
 * test_agent_events.c - a run's events (src/agent/events.c): each event's
 * plain line is the text `kevo run` has always printed (the integration
 * tests and users' scripts grep it), with the verdict's span marked for a
 * renderer that colours it and --quiet keeping only skips and failures;
 * and a real two-task run with --jobs 2 tells an observer, one call at a
 * time, run -> task -> proposing -> verifying -> outcome -> task finished
 * -> progress, in that order, and prints nothing itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/agent.h"
#include "kevo/sandbox.h"
#include "kevo/util.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_agent_events__plain_lines(void **state)
{
    (void)state;
    kevo_run_line l;
    kevo_run_event ev = {.kind = KEVO_RUN_EVENT_RUN_STARTED, .run_id = 7, .total = 2,
                         .iterations = 3, .generator = "builtin", .db_path = "x.db"};
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "run 7: 2 tasks, 3 iterations each, generator builtin, store x.db");
    assert_false(l.to_stderr);
    kevo_run_event_line(&l, &ev, true);
    assert_string_equal(l.text, "");

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_ATTEMPT_FINISHED, .index = 0, .total = 2,
                          .task = "relu", .iterations = 3, .iteration = 1,
                          .stage = KEVO_STAGE_REFINE, .summary = "flags set=4",
                          .verdict = KEVO_VERDICT_CORRECT, .speedup = 1.15, .best = 1.15};
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "[1/2] relu                     iter  2/3 refine flags set=4   "
                                "           correct         1.15x  best 1.15x");
    assert_int_equal(l.verdict_len, strlen("correct"));
    assert_memory_equal(l.text + l.verdict_at, "correct", l.verdict_len);
    kevo_run_event_line(&l, &ev, true);
    assert_string_equal(l.text, "");

    /* not timed: the speedup column is blank; a long summary is cut at 24 */
    ev.stage = KEVO_STAGE_DRAFT;
    ev.iteration = 0;
    ev.verdict = KEVO_VERDICT_COMPILE_ERROR;
    ev.speedup = 0;
    ev.best = 0;
    ev.summary = "a summary far longer than twenty-four characters";
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "[1/2] relu                     iter  1/3 draft  a summary far longer "
                                "tha compile_error          best 0.00x");
    assert_memory_equal(l.text + l.verdict_at, "compile_error", l.verdict_len);

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_TASK_SKIPPED, .index = 1, .total = 2,
                          .task = "t", .message = "why"};
    kevo_run_event_line(&l, &ev, true); /* said even when quiet */
    assert_string_equal(l.text, "[2/2] t                            skipped: why");
    assert_int_equal(l.verdict_len, 0);

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_TASK_COMPLETE, .index = 1, .total = 2,
                          .task = "t", .attempts = 3};
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "[2/2] t                            already complete (3 attempts)");

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_TASK_FAILED, .task_dir = "suites/x",
                          .message = "broken"};
    kevo_run_event_line(&l, &ev, true);
    assert_string_equal(l.text, "kevo run: suites/x: broken");
    assert_true(l.to_stderr);

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_PROGRESS, .total = 3, .done = 1, .worked = 1,
                          .elapsed_s = 62.5, .left_s = 125.0};
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "-- 1 of 3 tasks done, 1m02s elapsed, about 2m05s left");
    ev.worked = 0; /* nothing ran yet: no estimate, no line */
    ev.left_s = -1;
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "");
    ev.worked = 3; /* the last task: nothing left to estimate */
    ev.done = 3;
    ev.left_s = 0;
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "");

    ev = (kevo_run_event){.kind = KEVO_RUN_EVENT_ATTEMPT_PHASE, .task = "relu"};
    kevo_run_event_line(&l, &ev, false);
    assert_string_equal(l.text, "");
    assert_string_equal(kevo_attempt_phase_name(KEVO_ATTEMPT_PROPOSING), "proposing");
    assert_string_equal(kevo_attempt_phase_name(KEVO_ATTEMPT_VERIFYING), "verifying");
}

/* What an observer saw of a run. */
#define MAX_EVENTS 256
typedef struct seen {
    int inside;     /* calls in progress: must never exceed 1 */
    int overlapped; /* times it did */
    size_t n;
    kevo_run_event_kind kind[MAX_EVENTS];
    size_t index[MAX_EVENTS];
    int iteration[MAX_EVENTS];
    kevo_attempt_phase phase[MAX_EVENTS];
    size_t done[MAX_EVENTS];
    kevo_verdict verdict[MAX_EVENTS];
} seen;

static void record(void *ctx, const kevo_run_event *ev)
{
    seen *s = ctx;
    if (__atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST) != 1)
        s->overlapped++;
    usleep(2000); /* widen the window a second worker would have to overlap */
    if (s->n < MAX_EVENTS) {
        s->kind[s->n] = ev->kind;
        s->index[s->n] = ev->index;
        s->iteration[s->n] = ev->iteration;
        s->phase[s->n] = ev->phase;
        s->done[s->n] = ev->done;
        s->verdict[s->n] = ev->verdict;
        s->n++;
    }
    __atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
}

static void test_agent_events__observer_sees_the_run_in_order(void **state)
{
    (void)state;
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-test-events-"), 0);
    char db[512], out[512];
    snprintf(db, sizeof(db), "%s/e.db", dir);
    snprintf(out, sizeof(out), "%s/stdout", dir);
    assert_true(kevo_sandbox_private_scratch() >= 0);

    static seen s; /* large: off the stack */
    memset(&s, 0, sizeof(s));
    kevo_run_observer obs = {.version = KEVO_RUN_OBSERVER_VERSION, .ctx = &s, .on_event = record};
    const char *paths[] = {KEVO_SOURCE_DIR "/suites/c/level1/001_relu",
                           KEVO_SOURCE_DIR "/suites/c/level1/002_leaky_relu"};
    kevo_run_config cfg;
    kevo_run_config_init(&cfg);
    cfg.paths = paths;
    cfg.npaths = 2;
    cfg.db_path = db;
    cfg.iterations = 2;
    cfg.jobs = 2;
    cfg.quick_timing = true;
    cfg.observer = &obs;

    /* stdout into a file for the run: with an observer the agent prints nothing */
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    int64_t run_id = 0;
    int error = kevo_agent_run(&run_id, &cfg);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(error, 0);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_size, 0);

    assert_int_equal(s.overlapped, 0);
    assert_true(s.n > 0 && s.n < MAX_EVENTS);
    assert_int_equal(s.kind[0], KEVO_RUN_EVENT_RUN_STARTED);
    /* per task: started, then per iteration proposing -> verifying ->
     * finished, iterations in order, then finished; progress counts up */
    for (size_t task = 0; task < 2; task++) {
        int state_ = 0; /* 0 before start, 1 started, 2 finished */
        int expect_iter = 0, phase = -1;
        for (size_t i = 1; i < s.n; i++) {
            if (s.kind[i] == KEVO_RUN_EVENT_PROGRESS || s.index[i] != task)
                continue;
            switch (s.kind[i]) {
            case KEVO_RUN_EVENT_TASK_STARTED:
                assert_int_equal(state_, 0);
                state_ = 1;
                break;
            case KEVO_RUN_EVENT_ATTEMPT_PHASE:
                assert_int_equal(state_, 1);
                assert_int_equal(s.iteration[i], expect_iter);
                assert_int_equal((int)s.phase[i], phase + 1);
                phase = (int)s.phase[i];
                break;
            case KEVO_RUN_EVENT_ATTEMPT_FINISHED:
                assert_int_equal(state_, 1);
                assert_int_equal(phase, KEVO_ATTEMPT_VERIFYING);
                assert_int_equal(s.iteration[i], expect_iter);
                expect_iter++;
                phase = -1;
                break;
            case KEVO_RUN_EVENT_TASK_FINISHED:
                assert_int_equal(state_, 1);
                state_ = 2;
                break;
            default:
                fail_msg("task %zu: unexpected event kind %d", task, (int)s.kind[i]);
            }
        }
        assert_int_equal(state_, 2);
        assert_int_equal(expect_iter, 2);
    }
    size_t progress = 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.kind[i] == KEVO_RUN_EVENT_PROGRESS) {
            assert_true(i > 0 && s.kind[i - 1] == KEVO_RUN_EVENT_TASK_FINISHED);
            assert_int_equal(s.done[i], ++progress);
        }
    assert_int_equal(progress, 2);
    assert_int_equal(s.kind[s.n - 1], KEVO_RUN_EVENT_PROGRESS);

    kevo_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agent_events__plain_lines),
        cmocka_unit_test(test_agent_events__observer_sees_the_run_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
