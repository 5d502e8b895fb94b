/*
 * tests/unit/fake_llm_server.h - start and stop tests/helpers/fake_llm_server
 * from a unit test, and read back what it was sent. Header-only (static
 * functions) because each tests/unit/test_*.c is its own executable.
 *
 * The helper is found through $KEVO_FAKE_LLM_SERVER, else next to the test
 * binary (both are built into <build>/tests/). A test that cannot find it
 * is skipped with a printed reason rather than failed.
 */
#ifndef KEVO_TEST_FAKE_LLM_SERVER_H
#define KEVO_TEST_FAKE_LLM_SERVER_H

#include "kevo/util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct fake_server {
    pid_t pid;
    int port;
    char *dir;     /* private temp dir holding script.jsonl and requests.jsonl */
    char *script;  /* path */
    char *log;     /* path */
    char base[64]; /* "http://127.0.0.1:PORT/v1" */
} fake_server;

static inline char *fake_server_binary(void)
{
    const char *env = getenv("KEVO_FAKE_LLM_SERVER");
    if (env && *env)
        return strdup(env);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return NULL;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    char *path = kevo_path_join(self, "fake_llm_server");
    if (path && access(path, X_OK) != 0) {
        free(path);
        return NULL;
    }
    return path;
}

/* Start a server answering from `script_text` (JSON lines). extra_args: a
 * NULL-terminated list of further arguments, or NULL. Returns 0, or -1
 * with a reason on stderr. */
static inline int fake_server_start(fake_server *fs, const char *script_text,
                                    const char *const *extra)
{
    memset(fs, 0, sizeof(*fs));
    fs->pid = -1;
    char *bin = fake_server_binary();
    int pipefd[2] = {-1, -1};
    if (!bin) {
        fprintf(stderr, "fake_llm_server not found (build it, or set KEVO_FAKE_LLM_SERVER)\n");
        return -1;
    }
    if (kevo_mkdtemp(&fs->dir, "kevo-fake-llm-") < 0)
        goto fail;
    fs->script = kevo_path_join(fs->dir, "script.jsonl");
    fs->log = kevo_path_join(fs->dir, "requests.jsonl");
    if (kevo_file_write(fs->script, script_text, strlen(script_text)) < 0)
        goto fail;
    if (pipe(pipefd) < 0)
        goto fail;
    const char *argv[32] = {bin, "--script", fs->script, "--log", fs->log, "--lifetime", "60"};
    size_t argc = 7;
    for (size_t i = 0; extra && extra[i] && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    fs->pid = fork();
    if (fs->pid < 0)
        goto fail;
    if (fs->pid == 0) {
        dup2(pipefd[1], STDOUT_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    pipefd[1] = -1;
    char line[32];
    size_t got = 0;
    while (got < sizeof(line) - 1) {
        struct pollfd pfd = {.fd = pipefd[0], .events = POLLIN};
        if (poll(&pfd, 1, 10000) <= 0)
            break;
        ssize_t r = read(pipefd[0], line + got, 1);
        if (r <= 0 || line[got] == '\n')
            break;
        got++;
    }
    line[got] = '\0';
    close(pipefd[0]);
    fs->port = atoi(line);
    if (fs->port <= 0) {
        fprintf(stderr, "fake_llm_server did not report a port\n");
        goto fail;
    }
    snprintf(fs->base, sizeof(fs->base), "http://127.0.0.1:%d/v1", fs->port);
    free(bin);
    return 0;
fail:
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    if (fs->pid > 0) {
        kill(fs->pid, SIGKILL);
        waitpid(fs->pid, NULL, 0);
        fs->pid = -1;
    }
    free(bin);
    return -1;
}

/* Stop the server (SIGTERM) and remove its files. */
static inline void fake_server_stop(fake_server *fs)
{
    if (fs->pid > 0) {
        kill(fs->pid, SIGTERM);
        waitpid(fs->pid, NULL, 0);
        fs->pid = -1;
    }
    if (fs->dir)
        kevo_rmtree(fs->dir);
    free(fs->dir);
    free(fs->script);
    free(fs->log);
    fs->dir = fs->script = fs->log = NULL;
}

/* The request log as text (caller frees); "" when nothing was logged. */
static inline char *fake_server_log_text(const fake_server *fs)
{
    char *text = NULL;
    if (kevo_file_read(&text, NULL, fs->log) < 0)
        return strdup("");
    return text;
}

/* The n-th (0-based) logged request as a cJSON tree (caller deletes), or
 * NULL when there are fewer. */
static inline cJSON *fake_server_request(const fake_server *fs, int n)
{
    char *text = fake_server_log_text(fs);
    char *p = text, *save = NULL;
    cJSON *found = NULL;
    int i = 0;
    for (char *line = strtok_r(p, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
        if (i == n) {
            found = cJSON_Parse(line);
            break;
        }
    }
    free(text);
    return found;
}

/* Number of logged requests. */
static inline int fake_server_request_count(const fake_server *fs)
{
    char *text = fake_server_log_text(fs);
    int n = 0;
    for (char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

#endif
