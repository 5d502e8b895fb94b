/*
 * agent/shared.c - shared work across processes and machines: `kevo
 * submit` (a run whose tasks are queued in the store, each with its folder
 * as a bundle) and `kevo worker` (claim a task under a lease, run its
 * draft -> refine loop with the shared memory, renew the lease while
 * working, finish it). A worker killed at any moment loses at most its
 * attempt in flight: its lease expires, another worker claims the task and
 * continues after the last recorded attempt, as --resume does; an
 * iteration recorded twice (a frozen worker waking up after its lease went
 * to another) is stored once (the attempt uid, attempt.c).
 * Must not: judge a kernel, format a report, or touch a terminal.
 */
#include "internal.h"
#include "kevo/llm.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Claims after which a task whose holders never finished it is failed. */
#define KEVO_WORKER_MAX_CLAIMS 5

/* What one file of a task folder may weigh in a bundle, and all of them. */
#define BUNDLE_FILE_MAX (8u << 20)
#define BUNDLE_TOTAL_MAX (32u << 20)

/* ---- bundles: a task folder as JSON ----------------------------------- */

static bool bundle_name_ok(const char *name)
{
    if (!*name || name[0] == '.' || strlen(name) > 200)
        return false;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
            return false;
    return true;
}

/* The regular files at the top of `dir` (a task folder: task.json, the
 * reference, a draft) as {"name": "contents", ...}. Folders in it (a
 * __pycache__) are left out; a file a task.json names must be at the top. */
static int bundle_make(char **out, const char *dir)
{
    *out = NULL;
    cJSON *obj = cJSON_CreateObject();
    DIR *d = opendir(dir);
    size_t total = 0;
    int error = 0;
    if (!obj || !d) {
        error = d ? kevo_error_set(KEVO_ENOMEM, "out of memory")
                  : kevo_error_set(KEVO_EIO, "%s: cannot open: %s", dir, strerror(errno));
        goto done;
    }
    struct dirent *e;
    while (error == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path = kevo_path_join(dir, e->d_name);
        struct stat st;
        if (!path || lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        char *text = NULL;
        size_t len = 0;
        if (!bundle_name_ok(e->d_name))
            error = kevo_error_set(KEVO_EINVAL, "%s: a file name a bundle cannot carry", path);
        else if ((size_t)st.st_size > BUNDLE_FILE_MAX)
            error = kevo_error_set(KEVO_EINVAL, "%s: %lld bytes, more than a task's file may "
                                   "carry to workers (%u MiB)", path, (long long)st.st_size,
                                   BUNDLE_FILE_MAX >> 20);
        else if ((error = kevo_file_read(&text, &len, path)) == 0) {
            total += len;
            if (strlen(text) != len)
                error = kevo_error_set(KEVO_EINVAL, "%s: binary content (a NUL byte): task "
                                       "folders carry text files", path);
            else if (total > BUNDLE_TOTAL_MAX)
                error = kevo_error_set(KEVO_EINVAL, "%s: the task folder holds more than %u MiB",
                                       dir, BUNDLE_TOTAL_MAX >> 20);
            else if (!cJSON_AddStringToObject(obj, e->d_name, text))
                error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        }
        free(text);
        free(path);
    }
    if (error == 0 && !(*out = cJSON_PrintUnformatted(obj)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
done:
    if (d)
        closedir(d);
    cJSON_Delete(obj);
    return error;
}

/* Write a bundle's files into a fresh folder under `root`; *out_dir the
 * task folder (the caller's). The sandboxed runners read it as other
 * uids: 0755 folders, 0644 files. */
static int bundle_unpack(char **out_dir, const char *root, const char *task, const char *bundle)
{
    *out_dir = NULL;
    char safe[128];
    size_t n = 0;
    for (const char *p = task; *p && n + 1 < sizeof(safe); p++)
        safe[n++] = (*p == '/' || *p == '.' || (unsigned char)*p < 0x20) ? '_' : *p;
    safe[n] = '\0';
    cJSON *obj = cJSON_Parse(bundle);
    char *dir = kevo_path_join(root, n ? safe : "task");
    int error = 0;
    if (!obj || !cJSON_IsObject(obj)) {
        error = kevo_error_set(KEVO_EINVAL, "task %s: its bundle is not a JSON object", task);
        goto done;
    }
    if (!dir || (error = kevo_mkdirs(dir, 0755)) < 0)
        goto done;
    chmod(dir, 0755);
    for (cJSON *f = obj->child; f && error == 0; f = f->next) {
        if (!cJSON_IsString(f) || !bundle_name_ok(f->string)) {
            error = kevo_error_set(KEVO_EINVAL, "task %s: bundle entry '%s' is not a plain file",
                                   task, f->string ? f->string : "?");
            break;
        }
        char *path = kevo_path_join(dir, f->string);
        if (!path)
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        else if ((error = kevo_file_write(path, f->valuestring, strlen(f->valuestring))) == 0)
            chmod(path, 0644);
        free(path);
    }
    if (error == 0) {
        *out_dir = dir;
        dir = NULL;
    }
done:
    free(dir);
    cJSON_Delete(obj);
    return error;
}

/* ---- kevo submit ------------------------------------------------------- */

int kevo_agent_submit(int64_t *out_run_id, size_t *out_tasks, const kevo_run_config *cfg_in)
{
    *out_run_id = 0;
    *out_tasks = 0;
    kevo_run_config cfg = *cfg_in;
    kevo_memory *mem = NULL;
    char **dirs = NULL, *config = NULL;
    size_t ndirs = 0;
    bool in_tx = false;
    int error = 0;
    if ((error = kevo_run_config_check(&cfg)) < 0 ||
        (error = kevo_agent__collect_tasks(&dirs, &ndirs, &cfg)) < 0)
        goto done;
    /* every bundle made and every task read before anything is written */
    char **bundles = calloc(ndirs + 1, sizeof(char *));
    char **names = calloc(ndirs + 1, sizeof(char *));
    if (!bundles || !names) {
        free(bundles);
        free(names);
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    kevo_task **loaded = calloc(ndirs + 1, sizeof(*loaded));
    if (!loaded)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < ndirs && error == 0; i++) {
        if ((error = kevo_task_load(&loaded[i], dirs[i])) == 0 &&
            (error = bundle_make(&bundles[i], dirs[i])) == 0 &&
            !(names[i] = strdup(loaded[i]->name)))
            error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ndirs && error == 0; i++)
        for (size_t j = 0; j < i && error == 0; j++)
            if (!strcmp(names[i], names[j]))
                error = kevo_error_set(KEVO_EINVAL, "%s and %s are both task '%s': a run "
                                       "holds a task once", dirs[j], dirs[i], names[i]);
    if (error == 0 && !(config = kevo_agent__config_json(&cfg, dirs, ndirs)))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0 && (error = kevo_memory_open(&mem, cfg.db_path)) == 0 &&
        (!cfg.memory || (error = kevo_memory_seed_builtin(mem)) == 0) &&
        (error = kevo_memory_tx_begin(mem)) == 0) {
        in_tx = true;
        if (cfg.memory_from)
            error = kevo_agent__memory_from(mem, cfg.memory_from);
        if (error == 0)
            error = kevo_memory_run_begin(mem, config, out_run_id);
        for (size_t i = 0; i < ndirs && error == 0; i++) {
            kevo_work w = {.run_id = *out_run_id, .task = names[i], .backend = cfg.backend,
                           .bundle = bundles[i]};
            /* the task row names the submitter's folder (absolute): kevo
             * report and kevo best read its task.json where they run;
             * workers keep it (their copies are private and temporary) */
            char *abs = realpath(dirs[i], NULL);
            char *ref = NULL;
            kevo_file_read(&ref, NULL, loaded[i]->reference_path);
            kevo_memory_task mt = {.name = names[i], .level = loaded[i]->level,
                                   .category = loaded[i]->category,
                                   .description = loaded[i]->description, .reference = ref,
                                   .suite_path = abs ? abs : dirs[i]};
            if ((error = kevo_memory_task_upsert(mem, &mt, NULL)) == 0)
                error = kevo_memory_work_add(mem, &w);
            free(abs);
            free(ref);
        }
        if (error == 0 && (error = kevo_memory_tx_commit(mem)) == 0) {
            in_tx = false;
            *out_tasks = ndirs;
        }
    }
    if (in_tx)
        kevo_memory_tx_rollback(mem);
    if (error < 0)
        *out_run_id = 0;
    for (size_t i = 0; i < ndirs; i++) {
        free(bundles[i]);
        free(names[i]);
        if (loaded)
            kevo_task_free(loaded[i]);
    }
    free(bundles);
    free(names);
    free(loaded);
done:
    free(config);
    kevo_task_dirs_free(dirs, ndirs);
    kevo_memory_free(mem);
    return error;
}

/* ---- kevo worker ------------------------------------------------------- */

void kevo_worker_config_init(kevo_worker_config *wc)
{
    memset(wc, 0, sizeof(*wc));
    wc->db_path = "kevo.db";
    wc->jobs = 1;
    wc->lease_s = 60;
    wc->poll_s = 2;
}

typedef struct worker_shared {
    const kevo_worker_config *wc;
    const char *const *backends;
    size_t nbackends;
    char id_base[320];
    pthread_mutex_t lock;
    kevo_worker_stats stats;
    int error; /* the first fatal error */
} worker_shared;

/* One claimed task's lease: renewed by a thread with its own store handle
 * every quarter lease; lost (another worker holds it, or the lease ran out
 * while the store was unreachable) stops the task after the attempt in
 * flight. The user's stop is passed on the same way. */
typedef struct lease {
    worker_shared *ws;
    kevo_memory *mem;
    int64_t run_id;
    const char *task, *worker;
    volatile sig_atomic_t stop; /* the task's stop flag (cfg.stop) */
    volatile int lost, done;
    int64_t until_ms;
    pthread_t keeper_thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} lease;

static void *lease_keeper(void *arg)
{
    lease *l = arg;
    const kevo_worker_config *wc = l->ws->wc;
    int64_t lease_ms = (int64_t)(wc->lease_s * 1000);
    int64_t every = lease_ms / 4 > 50 ? lease_ms / 4 : 50, last = kevo_unix_ms();
    pthread_mutex_lock(&l->lock);
    while (!l->done) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->lock, &ts);
        if (l->done)
            break;
        if (wc->stop && *wc->stop)
            l->stop = 1;
        int64_t t = kevo_unix_ms();
        if (t - last < every)
            continue;
        pthread_mutex_unlock(&l->lock);
        int error = kevo_memory_work_renew(l->mem, l->run_id, l->task, l->worker, 0, lease_ms);
        pthread_mutex_lock(&l->lock);
        if (error == 0) {
            last = t;
            l->until_ms = t + lease_ms;
        } else if (error == KEVO_ENOTFOUND || kevo_unix_ms() >= l->until_ms) {
            /* another worker has it, or may have it by now */
            l->lost = 1;
            l->stop = 1;
            break;
        }
        /* else: the store did not answer; try again while the lease lasts */
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

/* End the lease keeper (it renews nothing more) and wait for it. */
static void lease_keeper_stop(lease *l)
{
    pthread_mutex_lock(&l->lock);
    l->done = 1;
    pthread_cond_signal(&l->cond);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->keeper_thread, NULL);
}

static void say(const worker_shared *ws, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const worker_shared *ws, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (ws->wc->on_line)
        ws->wc->on_line(ws->wc->ctx, line);
    else if (!ws->wc->quiet) {
        printf("%s\n", line);
        fflush(stdout);
    }
}

static bool fatal(int error)
{
    return error == KEVO_ENOMEM || error == KEVO_EIO || error == KEVO_EINFRA ||
           error == KEVO_ETIMEOUT;
}

/* Work one claimed task: its run's configuration, its folder, a lease
 * keeper, the task loop (which continues after the last recorded attempt),
 * then done, failed, or handed back. */
static int work_one(worker_shared *ws, kevo_memory *mem, kevo_work *w, const char *worker,
                    const char *scratch)
{
    const kevo_worker_config *wc = ws->wc;
    kevo_run *run = NULL;
    cJSON *stored = NULL;
    char **dirs = NULL, *dir = NULL;
    size_t ndirs = 0;
    kevo_provider *prov = NULL;
    kevo_run_config cfg;
    kevo_run_config_init(&cfg);
    lease l = {.ws = ws, .run_id = w->run_id, .task = w->task, .worker = worker,
               .until_ms = w->lease_until};
    pthread_mutex_init(&l.lock, NULL);
    pthread_cond_init(&l.cond, NULL);
    bool keeper = false;
    int error = 0, task_error = 0;
    if ((error = kevo_memory_run_get(&run, mem, w->run_id)) < 0)
        goto done;
    if (w->claims > KEVO_WORKER_MAX_CLAIMS) {
        /* a task whose holders keep dying (killed for memory, a machine
         * that reboots under it) must not take worker after worker */
        task_error = kevo_error_set(KEVO_EINFRA, "claimed %lld times without finishing: the "
                                    "workers that held it stopped (killed? out of memory?)",
                                    (long long)w->claims);
        goto finish;
    }
    if (!(stored = cJSON_Parse(run->config_json))) {
        task_error = kevo_error_set(KEVO_EINVAL, "run %lld: stored configuration is not JSON",
                                    (long long)w->run_id);
        goto finish;
    }
    if ((task_error = kevo_agent__config_from_json(&cfg, &dirs, &ndirs, stored)) < 0)
        goto finish;
    cfg.db_path = wc->db_path; /* the stored one is the submitter's (redacted) */
    cfg.observer = wc->observer;
    cfg.quiet = wc->quiet;
    cfg.jobs = 1;
    cfg.stop = &l.stop;
    if ((task_error = kevo_run_config_check(&cfg)) < 0 ||
        (task_error = bundle_unpack(&dir, scratch, w->task, w->bundle)) < 0)
        goto finish;
    if ((error = kevo_agent__open_provider(&prov, &cfg)) < 0 ||
        (error = kevo_memory_open(&l.mem, wc->db_path)) < 0)
        goto done;
    if (pthread_create(&l.keeper_thread, NULL, lease_keeper, &l) != 0) {
        error = kevo_error_set(KEVO_EINFRA, "cannot start the lease keeper");
        goto done;
    }
    keeper = true;
    say(ws, "worker %s: run %lld task %s (claim %lld)", worker, (long long)w->run_id, w->task,
        (long long)w->claims);
    bool worked = false;
    task_error = kevo_agent__run_task(&worked, mem, prov, w->run_id, dir, NULL, 0, 1, &cfg);
    kevo_run_event ev = {.kind = KEVO_RUN_EVENT_TASK_FINISHED, .run_id = w->run_id, .index = 0,
                         .total = 1, .task = w->task, .task_dir = dir,
                         .iterations = cfg.iterations};
    kevo_agent__emit(&cfg, &ev);
    lease_keeper_stop(&l);
    keeper = false;
    if (l.lost) {
        say(ws, "worker %s: run %lld task %s: lease lost; the worker holding it continues",
            worker, (long long)w->run_id, w->task);
        pthread_mutex_lock(&ws->lock);
        ws->stats.leases_lost++;
        pthread_mutex_unlock(&ws->lock);
        goto done;
    }
    if (task_error == KEVO_EINTR || fatal(task_error)) {
        /* stopped, or kevo cannot go on here: hand the task back at once
         * (a lease ending now) for another worker to continue */
        int keep = task_error;
        kevo_memory_work_renew(mem, w->run_id, w->task, worker, 0, 0);
        say(ws, "worker %s: run %lld task %s handed back%s%s", worker, (long long)w->run_id,
            w->task, keep == KEVO_EINTR ? " (stopped)" : ": ",
            keep == KEVO_EINTR ? "" : kevo_error_last());
        error = keep;
        goto done;
    }
finish:;
    kevo_work_state state = task_error < 0 ? KEVO_WORK_FAILED : KEVO_WORK_DONE;
    char why[512] = "";
    if (task_error < 0)
        snprintf(why, sizeof(why), "%s", kevo_error_last());
    int run_finished = 0;
    error = kevo_memory_work_finish(mem, w->run_id, w->task, worker, state,
                                    task_error < 0 ? why : NULL, &run_finished);
    if (error == KEVO_ENOTFOUND) { /* fenced: it was taken from us meanwhile */
        kevo_error_clear();
        error = 0;
    } else if (error == 0) {
        say(ws, "worker %s: run %lld task %s %s%s%s%s", worker, (long long)w->run_id, w->task,
            kevo_work_state_name(state), task_error < 0 ? ": " : "", why,
            run_finished ? "; the run is finished" : "");
        pthread_mutex_lock(&ws->lock);
        ws->stats.tasks_done += state == KEVO_WORK_DONE;
        ws->stats.tasks_failed += state == KEVO_WORK_FAILED;
        pthread_mutex_unlock(&ws->lock);
    }
done:
    if (keeper)
        lease_keeper_stop(&l);
    pthread_mutex_destroy(&l.lock);
    pthread_cond_destroy(&l.cond);
    kevo_memory_free(l.mem);
    kevo_llm_provider_free(prov);
    if (dir) {
        kevo_rmtree(dir);
        free(dir);
    }
    kevo_task_dirs_free(dirs, ndirs);
    cJSON_Delete(stored);
    kevo_run_free(run);
    return error;
}

/* Whether a claimable or running row of our backends remains anywhere:
 * --until-idle waits while another worker's task might still come back. */
static int work_left(bool *out, kevo_memory *mem, const worker_shared *ws)
{
    *out = false;
    kevo_work_list *list = NULL;
    int error = kevo_memory_work_list(&list, mem, 0, 0);
    if (error < 0)
        return error;
    for (size_t i = 0; i < list->n && !*out; i++) {
        const kevo_work *w = &list->work[i];
        if (w->state != KEVO_WORK_QUEUED && w->state != KEVO_WORK_RUNNING)
            continue;
        for (size_t b = 0; b < ws->nbackends; b++)
            *out = *out || !strcmp(w->backend, ws->backends[b]);
    }
    kevo_work_list_free(list);
    return 0;
}

static void nap(const kevo_worker_config *wc, double s)
{
    for (double t = 0; t < s && !(wc->stop && *wc->stop); t += 0.1)
        usleep(100000);
}

static void *slot_main(void *arg)
{
    worker_shared *ws = ((void **)arg)[0];
    size_t slot = (size_t)(uintptr_t)((void **)arg)[1];
    const kevo_worker_config *wc = ws->wc;
    kevo_memory *mem = NULL;
    char worker[360], *scratch = NULL;
    snprintf(worker, sizeof(worker), "%s/%zu", ws->id_base, slot);
    int error = kevo_memory_open(&mem, wc->db_path);
    if (error == 0 && (error = kevo_mkdtemp(&scratch, "kevo-worker-")) == 0)
        chmod(scratch, 0755);
    while (error == 0 && !(wc->stop && *wc->stop)) {
        pthread_mutex_lock(&ws->lock);
        bool quit = ws->error != 0;
        pthread_mutex_unlock(&ws->lock);
        if (quit)
            break;
        kevo_work *w = NULL;
        int64_t lease_ms = (int64_t)(wc->lease_s * 1000);
        int c = kevo_memory_work_claim(&w, mem, ws->backends, ws->nbackends, worker, 0, lease_ms);
        if (c == KEVO_ENOTFOUND) {
            kevo_error_clear();
            bool left = true;
            if (wc->until_idle && (error = work_left(&left, mem, ws)) < 0)
                break;
            if (!left)
                break;
            nap(wc, wc->poll_s);
            continue;
        }
        if (c < 0) {
            error = c;
            break;
        }
        error = work_one(ws, mem, w, worker, scratch);
        kevo_work_free(w);
        if (error == KEVO_EINTR)
            error = 0; /* the user's stop: the loop ends on wc->stop */
        else if (error < 0 && !fatal(error)) {
            say(ws, "worker %s: %s", worker, kevo_error_last());
            error = 0;
        }
    }
    if (error < 0) {
        pthread_mutex_lock(&ws->lock);
        if (!ws->error) {
            ws->error = error;
            snprintf(ws->stats.error, sizeof(ws->stats.error), "%s", kevo_error_last());
        }
        pthread_mutex_unlock(&ws->lock);
    }
    if (scratch) {
        kevo_rmtree(scratch);
        free(scratch);
    }
    kevo_memory_free(mem);
    return NULL;
}

int kevo_agent_worker(kevo_worker_stats *out, const kevo_worker_config *wc)
{
    memset(out, 0, sizeof(*out));
    worker_shared ws = {.wc = wc};
    const char *here[16];
    size_t nhere = 0;
    if (wc->nbackends > 0) {
        for (size_t b = 0; b < wc->nbackends; b++) {
            const kevo_backend *be = kevo_backend_find(wc->backends[b]);
            const char *why = NULL;
            if (!be)
                return kevo_error_set(KEVO_EINVAL, "unknown backend '%s'", wc->backends[b]);
            if (be->can_run && !be->can_run(be, &why))
                return kevo_error_set(KEVO_EINVAL, "backend '%s' cannot run on this machine: %s",
                                      be->name, why ? why : "not available");
        }
        ws.backends = wc->backends;
        ws.nbackends = wc->nbackends;
    } else {
        /* every backend this machine can run */
        const kevo_backend *be;
        for (size_t i = 0; (be = kevo_backend_at(i)) && nhere < 16; i++) {
            const char *why = NULL;
            if (!be->can_run || be->can_run(be, &why))
                here[nhere++] = be->name;
        }
        ws.backends = here;
        ws.nbackends = nhere;
    }
    if (ws.nbackends == 0)
        return kevo_error_set(KEVO_EINVAL, "no backend can run on this machine");
    kevo_machine m;
    kevo_machine_get(&m);
    char rnd[9];
    uint64_t seed = (uint64_t)kevo_unix_ms() ^ ((uint64_t)getpid() << 32);
    snprintf(rnd, sizeof(rnd), "%08llx",
             (unsigned long long)(kevo_hash64(&seed, sizeof(seed), 0) & 0xffffffffu));
    snprintf(ws.id_base, sizeof(ws.id_base), "%s:%d:%s", m.hostname[0] ? m.hostname : "host",
             (int)getpid(), rnd);
    /* the machine its attempts name (kevo_attempt.machine) */
    kevo_memory *mem = NULL;
    int error = kevo_memory_open(&mem, wc->db_path);
    if (error < 0)
        return error;
    kevo_memory_machine mm = {.id = m.id, .hostname = m.hostname, .cpu = m.cpu, .gpu = m.gpu,
                              .cores = m.cores};
    error = kevo_memory_machine_upsert(mem, &mm);
    kevo_memory_free(mem);
    if (error < 0)
        return error;
    pthread_mutex_init(&ws.lock, NULL);
    int jobs = wc->jobs > 0 ? wc->jobs : 1;
    pthread_t *th = calloc((size_t)jobs, sizeof(pthread_t));
    void *(*args)[2] = calloc((size_t)jobs, sizeof(*args));
    if (!th || !args) {
        free(th);
        free(args);
        pthread_mutex_destroy(&ws.lock);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    char names[256] = "";
    for (size_t b = 0, at = 0; b < ws.nbackends && at + 1 < sizeof(names); b++) {
        int k = snprintf(names + at, sizeof(names) - at, "%s%s", b ? ", " : "", ws.backends[b]);
        at += k > 0 ? (size_t)k : 0;
    }
    say(&ws, "worker %s: backends %s, %d slot%s, store %s", ws.id_base, names, jobs,
        jobs == 1 ? "" : "s", wc->db_label ? wc->db_label : wc->db_path);
    int started = 0;
    for (int j = 0; j < jobs; j++) {
        args[j][0] = &ws;
        args[j][1] = (void *)(uintptr_t)j;
        if (pthread_create(&th[j], NULL, slot_main, args[j]) != 0)
            break;
        started++;
    }
    for (int j = 0; j < started; j++)
        pthread_join(th[j], NULL);
    free(th);
    free(args);
    *out = ws.stats;
    error = ws.error;
    pthread_mutex_destroy(&ws.lock);
    if (error < 0)
        return kevo_error_set(error, "%s", out->error);
    if (wc->stop && *wc->stop)
        return KEVO_EINTR;
    return 0;
}
