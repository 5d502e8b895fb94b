/*
 * verify/runner.c - a sandboxed runner process, the reference's or a
 * candidate's: start it with the evaluator's limits (its own uid, memory,
 * CPU and file caps) and say, as a verdict and a message, how one failed.
 * Must not: talk the channel protocol itself (channel.c does) or judge
 * outputs.
 */
#include "internal.h"
#include "protocol.h"

#include <stdio.h>
#include <string.h>

int kevo_verify__runner_start(kevo_channel_runner **out, kevo_child **dead,
                              const kevo_evaluator *ev, const kevo_backend *be,
                              const char *runner, const char *dir, int threads_n)
{
    char threads[32];
    char **extra = NULL;
    const char *env[16] = {threads, NULL};
    snprintf(threads, sizeof(threads), "OMP_NUM_THREADS=%d",
             threads_n > 0 ? threads_n : kevo_cpu_count());
    int error = 0;
    if (be && be->runner_env && (error = be->runner_env(be, dir, &extra)) < 0)
        return error;
    for (size_t i = 0, n = 1; extra && extra[i] && n + 1 < sizeof(env) / sizeof(env[0]); i++)
        env[n++] = extra[i], env[n] = NULL;
    bool no_as = be && (be->flags & KEVO_BACKEND_NO_AS_LIMIT);
    /* the reference of a torch task: the script under the venv's Python,
     * which may read the venv; torch maps ~3 GB of libraries */
    bool torch = !be && ev->task->torch;
    const char *argv[] = {torch ? ev->torch_python : runner, "-E", "-s", "-B", runner, NULL};
    const char *ro[] = {ev->torch_tree, NULL};
    if (!torch)
        argv[1] = NULL;
    /* Every C runner, the reference's included, gets a uid of its own: no
     * two runners can signal, trace or write for each other. A device
     * backend's runner_env prepares its driver cache for uid nobody. */
    unsigned uid = be && be->runner_env ? 0 : kevo_sandbox_fresh_uid();
    uint64_t mem = no_as ? 0 : ev->runner_mem + (torch ? 16ULL << 30 : 0);
    kevo_sandbox_opts o = {.workdir = dir, .mem_bytes = mem, .cpu_s = 600,
                           .untrusted = true, .extra_env = env, .file_bytes = 1 << 20,
                           .run_as_uid = uid, .ro_paths = torch ? ro : NULL};
    error = kevo_channel__start(out, dead, ev->inputs, (const char *const *)argv, &o, torch);
    kevo_strv_free(extra);
    return error;
}

/* The last line of a device runner's log, printable and at most 300
 * characters, as the reason its harness gave up. */
static void device_reason(kevo_buf *msg, kevo_child *c)
{
    char tail[1024];
    size_t len = kevo_child_log_tail(c, tail, sizeof(tail));
    while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r'))
        tail[--len] = 0;
    const char *line = strrchr(tail, '\n');
    line = line ? line + 1 : tail;
    char clean[301];
    size_t k = 0;
    for (const char *q = line; *q && k < 300; q++)
        clean[k++] = (*q >= 32 && *q < 127) ? *q : '?';
    clean[k] = 0;
    kevo_buf_printf(msg, "the harness gave up: %s", k ? clean : "(no reason given)");
}

kevo_verdict kevo_verify__runner_failure(kevo_buf *msg, kevo_child *c, int error)
{
    char why[512];
    snprintf(why, sizeof(why), "%s", kevo_error_last());
    if (error == KEVO_ETIMEOUT) {
        kevo_child_kill(c);
        kevo_buf_puts(msg, "did not return in time (killed)");
        return KEVO_VERDICT_TIMEOUT;
    }
    if (!kevo_child_exited_within(c, 1.0)) {
        /* alive: it broke the protocol (stray or malformed bytes) */
        kevo_child_kill(c);
        kevo_buf_puts(msg, why);
        return KEVO_VERDICT_CRASH;
    }
    if (c->status.kind == KEVO_EXIT_NORMAL && c->status.exit_code == KEVO_RUNNER_EXIT_DEVICE)
        device_reason(msg, c);
    else if (c->status.kind == KEVO_EXIT_NORMAL && c->status.exit_code == 13)
        kevo_buf_puts(msg, "the runner could not allocate the task's buffers (memory limit)");
    else if (c->status.kind == KEVO_EXIT_NORMAL)
        kevo_buf_printf(msg, "the process exited during the call (status %d): a kernel must "
                             "return normally", c->status.exit_code);
    else
        kevo_buf_puts(msg, kevo_proc_status_describe(&c->status));
    return c->status.kind == KEVO_EXIT_TIMEOUT ? KEVO_VERDICT_TIMEOUT : KEVO_VERDICT_CRASH;
}
