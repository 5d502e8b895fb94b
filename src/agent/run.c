/*
 * agent/run.c - a run: the tasks of the suites given (those that list the
 * backend), or those of a run to resume, worked through by --jobs workers,
 * each task by kevo_agent__run_task (task_loop.c). A killed run resumes
 * from the store: each task continues at the iteration after its last
 * recorded attempt, so at most the attempt in flight is lost. What happens
 * goes to the run's observer as events (events.c). Must not:
 * judge a kernel or format a report.
 */
#include "internal.h"
#include "kevo/llm.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --jobs N: N tasks in flight, each worker with its own store connection;
 * the verifier's timing slot keeps latency measurements from overlapping. */
typedef struct {
    const kevo_run_config *cfg;
    kevo_provider *prov;
    int64_t run_id;
    char **dirs;
    size_t ndirs;
    kevo_memory *mem; /* worker 0's store */
    pthread_mutex_t lock;
    size_t next;
    int error; /* first fatal error, or KEVO_EINTR */
    bool first_taken;
    double t0;       /* when the run (or its resumption) started */
    size_t finished; /* tasks done, of ndirs */
    size_t worked;   /* of which ran attempts (not already complete) */
} worker_shared;

/* Run-level progress after a task: how far, how long, about how much is
 * left (from the mean wall time of the tasks that ran attempts). Emitted
 * under the lock so that the counts arrive in order. */
static void progress(worker_shared *ws, size_t i, bool worked)
{
    pthread_mutex_lock(&ws->lock);
    ws->finished++;
    ws->worked += worked;
    double elapsed = kevo_now_s() - ws->t0;
    size_t left = ws->ndirs - ws->finished;
    kevo_run_event ev = {.kind = KEVO_RUN_EVENT_TASK_FINISHED, .run_id = ws->run_id,
                         .index = i, .total = ws->ndirs, .task_dir = ws->dirs[i],
                         .iterations = ws->cfg->iterations};
    kevo_agent__emit(ws->cfg, &ev);
    ev.kind = KEVO_RUN_EVENT_PROGRESS;
    ev.done = ws->finished;
    ev.worked = ws->worked;
    ev.elapsed_s = elapsed;
    ev.left_s = ws->worked > 0 ? elapsed / (double)ws->worked * (double)left : -1;
    kevo_agent__emit(ws->cfg, &ev);
    pthread_mutex_unlock(&ws->lock);
}

static void *worker(void *arg)
{
    worker_shared *ws = arg;
    kevo_memory *mem = NULL;
    pthread_mutex_lock(&ws->lock);
    if (!ws->first_taken) {
        ws->first_taken = true;
        mem = ws->mem;
    }
    pthread_mutex_unlock(&ws->lock);
    bool own = mem == NULL;
    if (own && kevo_memory_open(&mem, ws->cfg->db_path) < 0) {
        pthread_mutex_lock(&ws->lock);
        if (!ws->error)
            ws->error = kevo_error_set(KEVO_EIO, "%s", kevo_error_last());
        pthread_mutex_unlock(&ws->lock);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&ws->lock);
        size_t i = ws->next++;
        bool stop = ws->error != 0 || i >= ws->ndirs;
        pthread_mutex_unlock(&ws->lock);
        if (stop)
            break;
        bool worked = false;
        int error =
            kevo_agent__run_task(&worked, mem, ws->prov, ws->run_id, ws->dirs[i], ws->dirs[i], i,
                                 ws->ndirs, ws->cfg);
        if (error < 0 && error != KEVO_EINTR) {
            /* a task that cannot be evaluated (broken reference) is reported and the
             * run goes on; running out of memory or disk, a dead provider, or the
             * user's stop end it */
            kevo_run_event ev = {.kind = KEVO_RUN_EVENT_TASK_FAILED, .run_id = ws->run_id,
                                 .index = i, .total = ws->ndirs, .task_dir = ws->dirs[i],
                                 .message = kevo_error_last()};
            kevo_agent__emit(ws->cfg, &ev);
        }
        progress(ws, i, worked);
        if (error < 0) {
            if (error == KEVO_EINTR || error == KEVO_ENOMEM || error == KEVO_EIO ||
                error == KEVO_ETIMEOUT || error == KEVO_EINFRA) {
                pthread_mutex_lock(&ws->lock);
                if (!ws->error)
                    ws->error = error;
                pthread_mutex_unlock(&ws->lock);
            }
        }
    }
    if (own)
        kevo_memory_free(mem);
    return NULL;
}

/* The task folders under the paths given that list the run's backend
 * (task.json "backends", default ["c"]), every one validated before any
 * time is spent; at most --max-tasks. */
static int append_found(char ***dirs, size_t *ndirs, const char *path)
{
    char **found = NULL;
    size_t k = 0;
    int error = kevo_task_find(&found, &k, path);
    if (error < 0)
        return error;
    if (k == 0) {
        kevo_task_dirs_free(found, k);
        return kevo_error_set(KEVO_EINVAL, "%s: no task.json found under it", path);
    }
    char **m = realloc(*dirs, (*ndirs + k + 1) * sizeof(char *));
    if (!m) {
        kevo_task_dirs_free(found, k);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    *dirs = m;
    memcpy(m + *ndirs, found, k * sizeof(char *));
    *ndirs += k;
    m[*ndirs] = NULL;
    free(found);
    return 0;
}

static int keep_listed(char **dirs, size_t *ndirs, const kevo_run_config *cfg)
{
    size_t kept = 0, found_total = *ndirs;
    int error = 0;
    for (size_t i = 0; i < *ndirs; i++) {
        kevo_task *t = NULL;
        if (error == 0 && (error = kevo_task_load(&t, dirs[i])) == 0)
            error = kevo_backend_check_task(t);
        bool listed = false;
        for (size_t b = 0; t && b < t->nbackends; b++)
            listed = listed || !strcmp(t->backends[b], cfg->backend);
        kevo_task_free(t);
        if (listed && error == 0)
            dirs[kept++] = dirs[i];
        else
            free(dirs[i]);
    }
    *ndirs = kept;
    if (error < 0)
        return error;
    if (kept == 0)
        return kevo_error_set(KEVO_EINVAL,
                              "none of the %zu tasks lists backend '%s' in its task.json "
                              "field 'backends'", found_total, cfg->backend);
    if (kept < found_total && !cfg->quiet)
        fprintf(stderr,
                "kevo run: %zu of %zu tasks list backend '%s' (task.json 'backends'); "
                "running those\n", kept, found_total, cfg->backend);
    return 0;
}

int kevo_agent__collect_tasks(char ***dirs, size_t *ndirs, const kevo_run_config *cfg)
{
    int error = 0;
    for (size_t i = 0; i < cfg->npaths && error == 0; i++)
        error = append_found(dirs, ndirs, cfg->paths[i]);
    if (error == 0)
        error = keep_listed(*dirs, ndirs, cfg);
    if (error == 0 && cfg->max_tasks > 0 && (size_t)cfg->max_tasks < *ndirs) {
        for (size_t i = (size_t)cfg->max_tasks; i < *ndirs; i++)
            free((*dirs)[i]);
        *ndirs = (size_t)cfg->max_tasks;
    }
    return error;
}

int kevo_agent__memory_from(kevo_memory *mem, const char *from)
{
    kevo_import_stats is;
    char head[16] = {0};
    FILE *f = kevo_conninfo_is_pg(from) ? NULL : fopen(from, "rb");
    bool sqlite = f && fread(head, 1, sizeof(head), f) == sizeof(head) &&
                  !memcmp(head, "SQLite format 3", 16);
    if (f)
        fclose(f);
    if (!sqlite && !kevo_conninfo_is_pg(from))
        return kevo_memory_import(mem, from, &is); /* an export (JSON lines) */
    /* another store: its export, imported */
    kevo_memory *src = NULL;
    char *dir = NULL, *path = NULL;
    int error = kevo_memory_open_ex(&src, from, KEVO_MEMORY_MUST_EXIST);
    if (error == 0 && (error = kevo_mkdtemp(&dir, "kevo-memory-from-")) == 0 &&
        !(path = kevo_path_join(dir, "memory.jsonl")))
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0 && (error = kevo_memory_export(src, path)) == 0)
        error = kevo_memory_import(mem, path, &is);
    kevo_memory_free(src);
    if (dir)
        kevo_rmtree(dir);
    free(dir);
    free(path);
    return error;
}

/* A new run (its memory imported first when asked) or the one to resume,
 * whose stored configuration then replaces cfg's (strings in *stored). */
static int begin_run(int64_t *run_id, kevo_run_config *cfg, char ***dirs, size_t *ndirs,
                     cJSON **stored, kevo_memory *mem)
{
    kevo_run *run = NULL;
    char *text = NULL;
    int error = 0;
    if (cfg->resume_run) {
        if ((error = kevo_memory_run_get(&run, mem, cfg->resume_run)) < 0)
            goto done;
        if (!(*stored = cJSON_Parse(run->config_json))) {
            error = kevo_error_set(KEVO_EINVAL, "run %lld: stored configuration is not JSON",
                                   (long long)cfg->resume_run);
            goto done;
        }
        if ((error = kevo_agent__config_from_json(cfg, dirs, ndirs, *stored)) < 0)
            goto done;
        *run_id = cfg->resume_run;
        goto done;
    }
    if (cfg->memory_from && (error = kevo_agent__memory_from(mem, cfg->memory_from)) < 0)
        goto done;
    if ((error = kevo_agent__collect_tasks(dirs, ndirs, cfg)) < 0)
        goto done;
    if (!(text = kevo_agent__config_json(cfg, *dirs, *ndirs))) {
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
        goto done;
    }
    error = kevo_memory_run_begin(mem, text, run_id);
done:
    free(text);
    kevo_run_free(run);
    return error;
}

int kevo_agent__open_provider(kevo_provider **out, const kevo_run_config *cfg)
{
    *out = NULL;
    if (kevo_agent__builtin(cfg))
        return 0;
    kevo_derived d;
    kevo_agent__derive(&d, cfg);
    int error = kevo_llm_provider_new(out, cfg->generator, &d.llm);
    if (error < 0 || !cfg->record_path)
        return error;
    kevo_provider *wrapped = NULL;
    if ((error = kevo_llm_recorder_wrap(&wrapped, *out, cfg->record_path)) < 0)
        return error;
    *out = wrapped;
    return 0;
}

static int run_workers(const kevo_run_config *cfg, kevo_provider *prov, kevo_memory *mem,
                       int64_t run_id, char **dirs, size_t ndirs)
{
    int jobs = cfg->jobs > 0 ? cfg->jobs : 1;
    if ((size_t)jobs > ndirs)
        jobs = (int)ndirs;
    worker_shared ws = {.cfg = cfg, .prov = prov, .run_id = run_id, .dirs = dirs,
                        .ndirs = ndirs, .mem = mem, .t0 = kevo_now_s()};
    pthread_t *threads = calloc((size_t)jobs, sizeof(pthread_t));
    if (!threads)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    pthread_mutex_init(&ws.lock, NULL);
    int started = 1;
    for (int j = 1; j < jobs; j++, started++)
        if (pthread_create(&threads[j], NULL, worker, &ws) != 0)
            break;
    worker(&ws); /* this thread is worker 0 and uses the open store */
    for (int j = 1; j < started; j++)
        pthread_join(threads[j], NULL);
    free(threads);
    pthread_mutex_destroy(&ws.lock);
    return ws.error;
}

int kevo_agent_run(int64_t *out_run_id, const kevo_run_config *cfg_in)
{
    kevo_run_config cfg = *cfg_in;
    kevo_memory *mem = NULL;
    kevo_provider *prov = NULL;
    char **dirs = NULL;
    size_t ndirs = 0;
    cJSON *stored = NULL;
    int64_t run_id = 0;
    int error = 0;
    if ((error = kevo_run_config_check(&cfg)) < 0 ||
        (error = kevo_memory_open(&mem, cfg.db_path)) < 0 ||
        (error = begin_run(&run_id, &cfg, &dirs, &ndirs, &stored, mem)) < 0)
        goto done;
    /* a fresh store gets the backends' API notes and the best practices
     * (idempotent: a store that has them is unchanged); --memory off
     * retrieves nothing and writes no knowledge */
    if (cfg.memory && (error = kevo_memory_seed_builtin(mem)) < 0)
        goto done;
    /* the machine its attempts name (kevo_attempt.machine) */
    kevo_machine here;
    kevo_machine_get(&here);
    kevo_memory_machine mm = {.id = here.id, .hostname = here.hostname, .cpu = here.cpu,
                              .gpu = here.gpu, .cores = here.cores};
    if ((error = kevo_memory_machine_upsert(mem, &mm)) < 0)
        goto done;
    *out_run_id = run_id;
    if ((error = kevo_agent__open_provider(&prov, &cfg)) < 0)
        goto done;
    kevo_run_event ev = {.kind = KEVO_RUN_EVENT_RUN_STARTED, .run_id = run_id, .total = ndirs,
                         .iterations = cfg.iterations, .generator = cfg.generator,
                         .db_path = cfg.db_path};
    kevo_agent__emit(&cfg, &ev);
    error = run_workers(&cfg, prov, mem, run_id, dirs, ndirs);
    kevo_memory_run_finish(mem, run_id, error == KEVO_EINTR ? "interrupted" : "finished");
done:
    kevo_llm_provider_free(prov);
    kevo_task_dirs_free(dirs, ndirs);
    cJSON_Delete(stored);
    kevo_memory_free(mem);
    return error;
}
