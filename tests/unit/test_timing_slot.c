/*
 * test_timing_slot.c - the machine's timing slot (verify/gate_common.c) is
 * machine-wide: exclusive holders in different processes never overlap,
 * an exclusive holder never overlaps a shared one of another process, and
 * shared holders that keep coming do not starve an exclusive one; a
 * thread's holds nest.
 * White-box: calls the verifier's internal slot functions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/util.h"
#include "kevo/verify.h"
#include "verify/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One process: `rounds` times take the slot (exclusive when `excl`), note
 * [start, end) of the holding in `log` (one line per holding), hold 20 ms. */
static void holder(const char *log, int rounds, int excl)
{
    FILE *f = fopen(log, "w");
    if (!f)
        _exit(3);
    for (int i = 0; i < rounds; i++) {
        kevo_verify__slot_shared();
        if (excl)
            kevo_verify__slot_exclusive();
        double a = now_s();
        usleep(20000);
        double b = now_s();
        kevo_verify__slot_release();
        fprintf(f, "%d %.6f %.6f\n", excl, a, b);
        usleep(1000);
    }
    fclose(f);
    _exit(0);
}

typedef struct span {
    int excl;
    double a, b;
} span;

static size_t read_spans(span *out, size_t cap, const char *log)
{
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t n = 0;
    while (n < cap && fscanf(f, "%d %lf %lf", &out[n].excl, &out[n].a, &out[n].b) == 3)
        n++;
    fclose(f);
    return n;
}

static void test_timing_slot__exclusive_across_processes(void **state)
{
    (void)state;
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-slot-"), 0);
    char lock[512], logs[3][512];
    snprintf(lock, sizeof(lock), "%s/slot.lock", dir);
    setenv("KEVO_TIMING_LOCK", lock, 1);
    pid_t pids[3];
    /* two measuring processes and one that only builds (shared) */
    for (int p = 0; p < 3; p++) {
        snprintf(logs[p], sizeof(logs[p]), "%s/log%d", dir, p);
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0)
            holder(logs[p], 10, p < 2);
    }
    for (int p = 0; p < 3; p++) {
        int st = 0;
        assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    span all[64];
    size_t n = 0;
    for (int p = 0; p < 3; p++) {
        size_t k = read_spans(all + n, 64 - n, logs[p]);
        assert_int_equal(k, 10);
        for (size_t i = n; i < n + k; i++)
            all[i].excl |= p << 1; /* remember the process in the high bits */
        n += k;
    }
    /* no exclusive holding overlaps any holding of another process */
    size_t overlaps = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if ((all[i].excl >> 1) == (all[j].excl >> 1) || !(all[i].excl & 1))
                continue;
            if (all[i].a < all[j].b && all[j].a < all[i].b)
                overlaps++;
        }
    assert_int_equal(overlaps, 0);
    unsetenv("KEVO_TIMING_LOCK");
    kevo_rmtree(dir);
    free(dir);
}

/* The shared holders of two processes do run at once (builds and
 * correctness checks are not serialised, only timing is). */
static void test_timing_slot__shared_holders_overlap(void **state)
{
    (void)state;
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-slot-"), 0);
    char lock[512], logs[2][512];
    snprintf(lock, sizeof(lock), "%s/slot.lock", dir);
    setenv("KEVO_TIMING_LOCK", lock, 1);
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        snprintf(logs[p], sizeof(logs[p]), "%s/log%d", dir, p);
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0)
            holder(logs[p], 5, 0);
    }
    for (int p = 0; p < 2; p++) {
        int st = 0;
        assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    span a[8], b[8];
    assert_int_equal(read_spans(a, 8, logs[0]), 5);
    assert_int_equal(read_spans(b, 8, logs[1]), 5);
    size_t overlaps = 0;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++)
            overlaps += a[i].a < b[j].b && b[j].a < a[i].b;
    assert_true(overlaps > 0);
    unsetenv("KEVO_TIMING_LOCK");
    kevo_rmtree(dir);
    free(dir);
}

/* A measurement is not starved by builds that keep coming: two processes
 * hold the slot shared in overlapping turns for 3 s (some build always
 * holds it); a third asks for it exclusively after 0.3 s and must get it
 * within one build's hold, not when the builds stop (with plain flock it
 * waited for all 3 s). */
static void test_timing_slot__measurement_not_starved(void **state)
{
    (void)state;
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-slot-"), 0);
    char lock[512], waited[512];
    snprintf(lock, sizeof(lock), "%s/slot.lock", dir);
    snprintf(waited, sizeof(waited), "%s/waited", dir);
    setenv("KEVO_TIMING_LOCK", lock, 1);
    pid_t pids[3];
    for (int p = 0; p < 2; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            usleep((useconds_t)(p * 15000)); /* the two readers' holds overlap */
            double end = now_s() + 3.0;
            while (now_s() < end) {
                kevo_verify__slot_shared();
                usleep(30000);
                kevo_verify__slot_release();
            }
            _exit(0);
        }
    }
    pids[2] = fork();
    assert_true(pids[2] >= 0);
    if (pids[2] == 0) {
        usleep(300000);
        double t0 = now_s();
        kevo_verify__slot_shared();
        kevo_verify__slot_exclusive();
        double w = now_s() - t0;
        kevo_verify__slot_release();
        FILE *f = fopen(waited, "w");
        if (!f)
            _exit(3);
        fprintf(f, "%.6f\n", w);
        fclose(f);
        _exit(0);
    }
    for (int p = 0; p < 3; p++) {
        int st = 0;
        assert_int_equal(waitpid(pids[p], &st, 0), pids[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    FILE *f = fopen(waited, "r");
    assert_non_null(f);
    double w = 0;
    assert_int_equal(fscanf(f, "%lf", &w), 1);
    fclose(f);
    printf("exclusive after %.3f s of continuous shared holders\n", w);
    assert_true(w < 1.5);
    unsetenv("KEVO_TIMING_LOCK");
    kevo_rmtree(dir);
    free(dir);
}

/* A child's note of a moment (exits 3 when it cannot write), and the
 * parent's reading of it. */
static void note_time(const char *path, double t)
{
    FILE *f = fopen(path, "w");
    if (!f)
        _exit(3);
    fprintf(f, "%.6f\n", t);
    fclose(f);
}

static double read_time(const char *path)
{
    double t = 0;
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lf", &t), 1);
    fclose(f);
    return t;
}

/* kevo's own CPU work (kevo_verify_busy_begin, the built-in generator's
 * parsing) holds the slot like a build, and an evaluation inside it nests:
 * after the inner measurement lets go, the outer hold still keeps another
 * process's measurement out until kevo_verify_busy_end. */
static void test_timing_slot__busy_hold_nests_around_a_measurement(void **state)
{
    (void)state;
    char *dir = NULL;
    assert_int_equal(kevo_mkdtemp(&dir, "kevo-slot-"), 0);
    char lock[512], ended[512], got[512];
    snprintf(lock, sizeof(lock), "%s/slot.lock", dir);
    snprintf(ended, sizeof(ended), "%s/busy_ended", dir);
    snprintf(got, sizeof(got), "%s/measure_got", dir);
    setenv("KEVO_TIMING_LOCK", lock, 1);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t busy = fork();
    assert_true(busy >= 0);
    if (busy == 0) {
        close(ready[0]);
        kevo_verify_busy_begin();
        kevo_verify__slot_shared(); /* an evaluation: build, then measure */
        kevo_verify__slot_exclusive();
        kevo_verify__slot_release();
        if (write(ready[1], "x", 1) != 1)
            _exit(3);
        usleep(300000); /* more of the generator's work */
        note_time(ended, now_s());
        kevo_verify_busy_end();
        _exit(0);
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    pid_t measure = fork();
    assert_true(measure >= 0);
    if (measure == 0) {
        kevo_verify__slot_shared();
        kevo_verify__slot_exclusive();
        note_time(got, now_s());
        kevo_verify__slot_release();
        _exit(0);
    }
    for (int i = 0; i < 2; i++) {
        int st = 0;
        pid_t pid = waitpid(-1, &st, 0);
        assert_true(pid == busy || pid == measure);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_true(read_time(got) >= read_time(ended)); /* not while the busy hold lasted */
    /* and the holds are all gone: one more exclusive here at once */
    double t0 = now_s();
    kevo_verify__slot_shared();
    kevo_verify__slot_exclusive();
    kevo_verify__slot_release();
    assert_true(now_s() - t0 < 1.0);
    unsetenv("KEVO_TIMING_LOCK");
    kevo_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timing_slot__exclusive_across_processes),
        cmocka_unit_test(test_timing_slot__shared_holders_overlap),
        cmocka_unit_test(test_timing_slot__measurement_not_starved),
        cmocka_unit_test(test_timing_slot__busy_hold_nests_around_a_measurement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
