/*
 * memory/transfer.c - the memory as a shareable artifact: export to JSON
 * lines and import back (merging into a store that may already hold
 * records). Works through the kevo_store vtable only, so it moves memories
 * between store implementations too.
 *
 * Format (docs/memory.md has an example): one JSON object per line, with a
 * "type" of header, run, task, item, machine, attempt, used,
 * distilled_from, q, q_start or reward_stats, in that order, each in id
 * order. Records keep their ids and uids; tasks are identified by name,
 * machines by their id. Version 2 added machine records and the attempts'
 * "machine" field; version-1 files (without them) still import. Work-queue
 * rows are operational state, not memory: never exported.
 */
#include "internal.h"
#include "map.h"

#include "kevo/util.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT_FORMAT "kevo-memory"
#define EXPORT_VERSION 2

/* ---- export ----------------------------------------------------------- */

typedef struct export_ctx {
    FILE *f;
    const char *path;
} export_ctx;

static void add_str(cJSON *o, const char *key, const char *v)
{
    cJSON_AddItemToObject(o, key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, v);
}

/* Print one record line and free it. */
static int emit(export_ctx *ec, cJSON *o)
{
    int error = 0;
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    if (!text)
        error = kevo_error_set(KEVO_ENOMEM, "%s: out of memory encoding a record", ec->path);
    else if (fputs(text, ec->f) == EOF || fputc('\n', ec->f) == EOF)
        error = kevo_error_set(KEVO_EIO, "%s: write failed: %s", ec->path, strerror(errno));
    cJSON_free(text);
    cJSON_Delete(o);
    return error;
}

static cJSON *record(const char *type)
{
    cJSON *o = cJSON_CreateObject();
    if (o)
        add_str(o, "type", type);
    return o;
}

static int export_run(void *arg, const kevo_run *r)
{
    cJSON *o = record("run");
    if (o) {
        add_num(o, "id", (double)r->id);
        add_str(o, "uid", r->uid);
        add_str(o, "config", r->config_json);
        add_str(o, "status", r->status);
        add_num(o, "started", (double)r->started);
        add_num(o, "finished", (double)r->finished);
    }
    return emit(arg, o);
}

static int export_task(void *arg, const kevo_memory_task *t, double score)
{
    cJSON *o = record("task");
    if (o) {
        add_str(o, "name", t->name);
        add_num(o, "level", t->level);
        add_str(o, "category", t->category);
        add_str(o, "description", t->description);
        add_str(o, "reference", t->reference);
        add_str(o, "suite_path", t->suite_path);
    }
    return emit(arg, o);
}

static int export_item(void *arg, const kevo_item *it, double score)
{
    cJSON *o = record("item");
    if (o) {
        add_num(o, "id", (double)it->id);
        add_str(o, "uid", it->uid);
        add_str(o, "kind", kevo_item_kind_name(it->kind));
        add_str(o, "title", it->title);
        add_str(o, "body", it->body);
        add_str(o, "category", it->category);
        add_str(o, "task", it->task);
        add_str(o, "backend", it->backend);
        add_str(o, "tags", it->tags);
        add_num(o, "created", (double)it->created);
    }
    return emit(arg, o);
}

static int export_attempt(void *arg, const kevo_attempt *a)
{
    cJSON *o = record("attempt");
    if (o) {
        add_num(o, "id", (double)a->id);
        add_str(o, "uid", a->uid);
        add_num(o, "run", (double)a->run_id);
        add_str(o, "task", a->task);
        add_str(o, "backend", a->backend);
        add_str(o, "generator", a->generator);
        add_str(o, "stage", kevo_stage_name(a->stage));
        add_num(o, "iteration", a->iteration);
        add_num(o, "parent", (double)a->parent_id);
        add_str(o, "verdict", kevo_verdict_name(a->verdict));
        add_str(o, "gates", a->gates_json);
        add_str(o, "feedback", a->feedback);
        add_str(o, "source", a->source);
        add_str(o, "recipes", a->recipes_json);
        add_num(o, "candidate_us", a->candidate_us);
        add_num(o, "reference_us", a->reference_us);
        add_num(o, "speedup", a->speedup);
        add_str(o, "baseline", a->baseline);
        add_num(o, "tokens_prompt", (double)a->tokens_prompt);
        add_num(o, "tokens_completion", (double)a->tokens_completion);
        cJSON_AddBoolToObject(o, "tokens_estimated", a->tokens_estimated != 0);
        add_num(o, "reward_raw", a->reward_raw);
        add_num(o, "reward", a->reward);
        add_num(o, "created", (double)a->created);
        add_str(o, "machine", a->machine);
    }
    return emit(arg, o);
}

static int export_machine(void *arg, const kevo_memory_machine *m)
{
    cJSON *o = record("machine");
    if (o) {
        add_str(o, "id", m->id);
        add_str(o, "hostname", m->hostname);
        add_str(o, "cpu", m->cpu);
        add_str(o, "gpu", m->gpu);
        add_num(o, "cores", m->cores);
        add_num(o, "first_seen", (double)m->first_seen);
        add_num(o, "last_seen", (double)m->last_seen);
    }
    return emit(arg, o);
}

static int export_used(void *arg, const kevo_used_edge *e)
{
    cJSON *o = record("used");
    if (o) {
        add_num(o, "attempt", (double)e->attempt_id);
        add_num(o, "item", (double)e->used.item_id);
        add_str(o, "stage", kevo_stage_name(e->used.stage));
        add_num(o, "rank", e->used.rank);
        add_num(o, "tokens", e->used.tokens);
        /* only when set: the reward did not update the item's Q */
        if (e->used.no_credit)
            cJSON_AddBoolToObject(o, "no_credit", 1);
    }
    return emit(arg, o);
}

static int export_distilled(void *arg, const kevo_distilled_edge *e)
{
    cJSON *o = record("distilled_from");
    if (o) {
        add_num(o, "item", (double)e->item_id);
        add_num(o, "attempt", (double)e->attempt_id);
    }
    return emit(arg, o);
}

static int export_q(void *arg, const kevo_q_row *row)
{
    cJSON *o = record(row->target == KEVO_Q_ITEM ? "q" : "q_start");
    if (o) {
        if (row->target == KEVO_Q_ITEM) {
            add_num(o, "item", (double)row->id);
            add_str(o, "stage", kevo_stage_name(row->stage));
        } else {
            add_num(o, "attempt", (double)row->id);
        }
        add_num(o, "q", row->q);
        add_num(o, "n", (double)row->n);
    }
    return emit(arg, o);
}

static int export_all(kevo_memory *mem, export_ctx *ec)
{
    kevo_store *s = mem->store;
    int error = 0;
    cJSON *h = record("header");
    if (h) {
        add_str(h, "format", EXPORT_FORMAT);
        add_num(h, "version", EXPORT_VERSION);
    }
    if ((error = emit(ec, h)) < 0 || (error = s->run_each(s, 0, export_run, ec)) < 0 ||
        (error = s->task_each(s, NULL, export_task, ec)) < 0 ||
        (error = s->item_each(s, 0, NULL, export_item, ec)) < 0 ||
        (s->version >= 2 && s->machine_each &&
         (error = s->machine_each(s, export_machine, ec)) < 0) ||
        (error = s->attempt_each(s, 0, NULL, export_attempt, ec)) < 0 ||
        (error = s->used_each(s, 0, 0, export_used, ec)) < 0 ||
        (error = s->distilled_each(s, 0, 0, export_distilled, ec)) < 0 ||
        (error = s->q_each(s, KEVO_Q_ITEM, export_q, ec)) < 0 ||
        (error = s->q_each(s, KEVO_Q_START, export_q, ec)) < 0)
        return error;
    for (int stage = KEVO_STAGE_DRAFT; stage <= KEVO_STAGE_REFINE; stage++) {
        kevo_reward_stats st;
        if ((error = s->reward_stats_get(s, (kevo_stage)stage, &st)) < 0)
            return error;
        if (st.n == 0)
            continue;
        cJSON *o = record("reward_stats");
        if (o) {
            add_str(o, "stage", kevo_stage_name((kevo_stage)stage));
            add_num(o, "n", (double)st.n);
            add_num(o, "mean", st.mean);
            add_num(o, "m2", st.m2);
        }
        if ((error = emit(ec, o)) < 0)
            return error;
    }
    return 0;
}

int kevo_memory_export(kevo_memory *mem, const char *path)
{
    kevo_buf tmp = {0};
    export_ctx ec = {NULL, path};
    int error = 0, to_stdout = !strcmp(path, "-");
    if (to_stdout) {
        ec.f = stdout;
        ec.path = "(stdout)";
    } else {
        if ((error = kevo_buf_printf(&tmp, "%s.tmp.%d", path, (int)getpid())) < 0)
            return error;
        if (!(ec.f = fopen(tmp.ptr, "w"))) {
            error = kevo_error_set(KEVO_EIO, "%s: cannot create: %s", path, strerror(errno));
            goto done;
        }
    }
    /* One read transaction: a consistent snapshot even while others write. */
    if ((error = mem->store->tx_begin_read(mem->store)) < 0)
        goto done;
    error = export_all(mem, &ec);
    error = kevo_memory_tx_end(mem, error);
    if (error < 0)
        goto done;
    if (fflush(ec.f) != 0 || (!to_stdout && fsync(fileno(ec.f)) != 0)) {
        error = kevo_error_set(KEVO_EIO, "%s: write failed: %s", path, strerror(errno));
        goto done;
    }
    if (!to_stdout) {
        FILE *f = ec.f;
        ec.f = NULL;
        if (fclose(f) != 0) {
            error = kevo_error_set(KEVO_EIO, "%s: write failed: %s", path, strerror(errno));
            goto done;
        }
        if (rename(tmp.ptr, path) != 0)
            error =
                kevo_error_set(KEVO_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    }
done:
    if (!to_stdout && ec.f)
        fclose(ec.f);
    if (!to_stdout && tmp.ptr && error < 0)
        unlink(tmp.ptr);
    kevo_buf_free(&tmp);
    return error;
}

/* ---- import ----------------------------------------------------------- */

typedef struct import_ctx {
    kevo_memory *mem;
    const char *path;
    size_t line;
    kevo_map runs, items, attempts;   /* file id -> store id */
    kevo_map new_items, new_attempts; /* store ids created by this import */
    size_t new_refine;                /* refine attempts created */
    int seen_header;
    kevo_import_stats st;
} import_ctx;

__attribute__((format(printf, 2, 3))) static int bad(import_ctx *ic, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return kevo_error_set(KEVO_EINVAL, "%s:%zu: %s", ic->path, ic->line, what);
}

static int get_str(import_ctx *ic, const cJSON *o, const char *key, int required, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return bad(ic, "missing field '%s'", key);
        return 0;
    }
    if (!cJSON_IsString(v))
        return bad(ic, "field '%s' is not a string", key);
    *out = v->valuestring;
    return 0;
}

static int get_num(import_ctx *ic, const cJSON *o, const char *key, int required, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = 0;
    if (!v || cJSON_IsNull(v)) {
        if (required)
            return bad(ic, "missing field '%s'", key);
        return 0;
    }
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v) ? 1 : 0;
        return 0;
    }
    if (!cJSON_IsNumber(v))
        return bad(ic, "field '%s' is not a number", key);
    *out = v->valuedouble;
    return 0;
}

static int get_id(import_ctx *ic, const cJSON *o, const char *key, int required, int64_t *out)
{
    double d = 0;
    int error = get_num(ic, o, key, required, &d);
    if (error < 0)
        return error;
    if (d < 0 || d != (double)(int64_t)d)
        return bad(ic, "field '%s' is not a non-negative integer", key);
    *out = (int64_t)d;
    return 0;
}

static int get_stage(import_ctx *ic, const cJSON *o, kevo_stage *out)
{
    const char *s = NULL;
    int error = get_str(ic, o, "stage", 1, &s);
    if (error == 0 && kevo_stage_parse(out, s) < 0)
        error = bad(ic, "field 'stage' is not draft or refine");
    return error;
}

/* Map a file id through `m`; 0 stays 0. */
static int map_ref(import_ctx *ic, kevo_map *m, int64_t file_id, const char *what, int64_t *out)
{
    if (file_id == 0) {
        *out = 0;
        return 0;
    }
    if (!kevo_map_get(m, file_id, out))
        return kevo_error_set(KEVO_EINVAL,
                              "%s:%zu: refers to %s %lld, which is not earlier in the file",
                              ic->path, ic->line, what, (long long)file_id);
    return 0;
}

static int import_run(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_run r = {0};
    double started = 0, finished = 0;
    int64_t file_id = 0, id = 0;
    int error;
    if ((error = get_id(ic, o, "id", 1, &file_id)) < 0 ||
        (error = get_str(ic, o, "uid", 1, &r.uid)) < 0 ||
        (error = get_str(ic, o, "config", 1, &r.config_json)) < 0 ||
        (error = get_str(ic, o, "status", 1, &r.status)) < 0 ||
        (error = get_num(ic, o, "started", 0, &started)) < 0 ||
        (error = get_num(ic, o, "finished", 0, &finished)) < 0)
        return error;
    error = s->find_uid(s, KEVO_STORE_RUNS, r.uid, &id);
    if (error == 0) {
        ic->st.skipped++;
    } else if (error == KEVO_ENOTFOUND) {
        r.id = file_id;
        r.started = (int64_t)started;
        r.finished = (int64_t)finished;
        if ((error = s->run_insert(s, &r, &id)) < 0)
            return error;
        ic->st.runs++;
    } else {
        return error;
    }
    return kevo_map_put(&ic->runs, file_id, id);
}

typedef struct exists_acc {
    int found;
} exists_acc;

static int task_exists_cb(void *arg, const kevo_memory_task *t, double score)
{
    ((exists_acc *)arg)->found = 1;
    return 1;
}

static int import_task(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_memory_task t = {0};
    double level = 0;
    int error;
    if ((error = get_str(ic, o, "name", 1, &t.name)) < 0 ||
        (error = get_num(ic, o, "level", 0, &level)) < 0 ||
        (error = get_str(ic, o, "category", 0, &t.category)) < 0 ||
        (error = get_str(ic, o, "description", 0, &t.description)) < 0 ||
        (error = get_str(ic, o, "reference", 0, &t.reference)) < 0 ||
        (error = get_str(ic, o, "suite_path", 0, &t.suite_path)) < 0)
        return error;
    if (!*t.name)
        return bad(ic, "field '%s' is empty", "name");
    t.level = (int)level;
    exists_acc acc = {0};
    if ((error = s->task_each(s, t.name, task_exists_cb, &acc)) < 0)
        return error;
    if (acc.found) {
        ic->st.skipped++;
        return 0;
    }
    if ((error = s->task_upsert(s, &t, NULL)) < 0)
        return error;
    ic->st.tasks++;
    return 0;
}

static int import_item(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_item it = {0};
    const char *kind = NULL;
    double created = 0;
    int64_t file_id = 0, id = 0;
    int error;
    if ((error = get_id(ic, o, "id", 1, &file_id)) < 0 ||
        (error = get_str(ic, o, "uid", 1, &it.uid)) < 0 ||
        (error = get_str(ic, o, "kind", 1, &kind)) < 0 ||
        (error = get_str(ic, o, "title", 1, &it.title)) < 0 ||
        (error = get_str(ic, o, "body", 1, &it.body)) < 0 ||
        (error = get_str(ic, o, "category", 0, &it.category)) < 0 ||
        (error = get_str(ic, o, "task", 0, &it.task)) < 0 ||
        (error = get_str(ic, o, "backend", 0, &it.backend)) < 0 ||
        (error = get_str(ic, o, "tags", 0, &it.tags)) < 0 ||
        (error = get_num(ic, o, "created", 0, &created)) < 0)
        return error;
    if (kevo_item_kind_parse(&it.kind, kind) < 0)
        return bad(ic, "field 'kind' is not a known item kind");
    error = s->find_uid(s, KEVO_STORE_ITEMS, it.uid, &id);
    if (error == 0) {
        ic->st.skipped++;
    } else if (error == KEVO_ENOTFOUND) {
        it.id = file_id;
        it.created = (int64_t)created;
        if ((error = s->item_insert(s, &it, &id)) < 0 ||
            (error = kevo_map_put(&ic->new_items, id, 1)) < 0)
            return error;
        ic->st.items++;
    } else {
        return error;
    }
    return kevo_map_put(&ic->items, file_id, id);
}

static int import_attempt(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_attempt a = {0};
    double iteration = 0, tp = 0, tc = 0, te = 0, created = 0;
    int64_t file_id = 0, id = 0, run = 0, parent = 0;
    const char *verdict = NULL;
    int error;
    if ((error = get_id(ic, o, "id", 1, &file_id)) < 0 ||
        (error = get_str(ic, o, "uid", 1, &a.uid)) < 0 ||
        (error = get_id(ic, o, "run", 0, &run)) < 0 ||
        (error = get_str(ic, o, "task", 1, &a.task)) < 0 ||
        (error = get_str(ic, o, "backend", 0, &a.backend)) < 0 ||
        (error = get_str(ic, o, "generator", 0, &a.generator)) < 0 ||
        (error = get_stage(ic, o, &a.stage)) < 0 ||
        (error = get_num(ic, o, "iteration", 0, &iteration)) < 0 ||
        (error = get_id(ic, o, "parent", 0, &parent)) < 0 ||
        (error = get_str(ic, o, "verdict", 1, &verdict)) < 0 ||
        (error = get_str(ic, o, "gates", 0, &a.gates_json)) < 0 ||
        (error = get_str(ic, o, "feedback", 0, &a.feedback)) < 0 ||
        (error = get_str(ic, o, "source", 0, &a.source)) < 0 ||
        (error = get_str(ic, o, "recipes", 0, &a.recipes_json)) < 0 ||
        (error = get_num(ic, o, "candidate_us", 0, &a.candidate_us)) < 0 ||
        (error = get_num(ic, o, "reference_us", 0, &a.reference_us)) < 0 ||
        (error = get_num(ic, o, "speedup", 0, &a.speedup)) < 0 ||
        (error = get_str(ic, o, "baseline", 0, &a.baseline)) < 0 ||
        (error = get_num(ic, o, "tokens_prompt", 0, &tp)) < 0 ||
        (error = get_num(ic, o, "tokens_completion", 0, &tc)) < 0 ||
        (error = get_num(ic, o, "tokens_estimated", 0, &te)) < 0 ||
        (error = get_num(ic, o, "reward_raw", 0, &a.reward_raw)) < 0 ||
        (error = get_num(ic, o, "reward", 0, &a.reward)) < 0 ||
        (error = get_num(ic, o, "created", 0, &created)) < 0 ||
        (error = get_str(ic, o, "machine", 0, &a.machine)) < 0)
        return error;
    if (!*a.task)
        return bad(ic, "field '%s' is empty", "task");
    if (kevo_verdict_parse(&a.verdict, verdict) < 0) {
        kevo_error_clear();
        return bad(ic, "field 'verdict' is '%s', not a known verdict", verdict);
    }
    error = s->find_uid(s, KEVO_STORE_ATTEMPTS, a.uid, &id);
    if (error == 0) {
        ic->st.skipped++;
    } else if (error == KEVO_ENOTFOUND) {
        if ((error = map_ref(ic, &ic->runs, run, "run", &a.run_id)) < 0 ||
            (error = map_ref(ic, &ic->attempts, parent, "attempt", &a.parent_id)) < 0)
            return error;
        a.id = file_id;
        a.iteration = (int)iteration;
        a.tokens_prompt = (int64_t)tp;
        a.tokens_completion = (int64_t)tc;
        a.tokens_estimated = te != 0;
        a.created = (int64_t)created;
        if ((error = s->attempt_insert(s, &a, &id)) < 0 ||
            (error = kevo_map_put(&ic->new_attempts, id, 1)) < 0)
            return error;
        if (a.stage == KEVO_STAGE_REFINE)
            ic->new_refine++;
        ic->st.attempts++;
    } else {
        return error;
    }
    return kevo_map_put(&ic->attempts, file_id, id);
}

/* A machine merges into the store's row of that id (hostname, CPU, GPU,
 * cores refreshed, last_seen the later one, first_seen kept). */
static int import_machine(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_memory_machine m = {0};
    double cores = 0, first = 0, last = 0;
    int error;
    if ((error = get_str(ic, o, "id", 1, &m.id)) < 0 ||
        (error = get_str(ic, o, "hostname", 0, &m.hostname)) < 0 ||
        (error = get_str(ic, o, "cpu", 0, &m.cpu)) < 0 ||
        (error = get_str(ic, o, "gpu", 0, &m.gpu)) < 0 ||
        (error = get_num(ic, o, "cores", 0, &cores)) < 0 ||
        (error = get_num(ic, o, "first_seen", 0, &first)) < 0 ||
        (error = get_num(ic, o, "last_seen", 0, &last)) < 0)
        return error;
    if (!*m.id)
        return bad(ic, "field '%s' is empty", "id");
    if (s->version < 2 || !s->machine_upsert) {
        ic->st.skipped++; /* a store without machines keeps none */
        return 0;
    }
    m.cores = (int)cores;
    m.first_seen = (int64_t)first;
    m.last_seen = (int64_t)last;
    if ((error = s->machine_upsert(s, &m)) == 0)
        ic->st.machines++;
    return error;
}

static int import_used(import_ctx *ic, const cJSON *o)
{
    int64_t fa = 0, fi = 0, a = 0, i = 0;
    double rank = 0, tokens = 0, no_credit = 0;
    kevo_used_item u = {0};
    int error;
    if ((error = get_id(ic, o, "attempt", 1, &fa)) < 0 ||
        (error = get_id(ic, o, "item", 1, &fi)) < 0 || (error = get_stage(ic, o, &u.stage)) < 0 ||
        (error = get_num(ic, o, "rank", 0, &rank)) < 0 ||
        (error = get_num(ic, o, "tokens", 0, &tokens)) < 0 ||
        (error = get_num(ic, o, "no_credit", 0, &no_credit)) < 0 ||
        (error = map_ref(ic, &ic->attempts, fa, "attempt", &a)) < 0 ||
        (error = map_ref(ic, &ic->items, fi, "item", &i)) < 0)
        return error;
    if (!kevo_map_get(&ic->new_attempts, a, NULL)) {
        ic->st.skipped++;
        return 0;
    }
    u.item_id = i;
    u.rank = (int)rank;
    u.tokens = (int)tokens;
    u.no_credit = no_credit != 0;
    if ((error = ic->mem->store->used_insert(ic->mem->store, a, &u)) == 0)
        ic->st.edges++;
    return error;
}

static int import_distilled(import_ctx *ic, const cJSON *o)
{
    int64_t fa = 0, fi = 0, a = 0, i = 0;
    int error;
    if ((error = get_id(ic, o, "item", 1, &fi)) < 0 ||
        (error = get_id(ic, o, "attempt", 1, &fa)) < 0 ||
        (error = map_ref(ic, &ic->items, fi, "item", &i)) < 0 ||
        (error = map_ref(ic, &ic->attempts, fa, "attempt", &a)) < 0)
        return error;
    if (!kevo_map_get(&ic->new_items, i, NULL) && !kevo_map_get(&ic->new_attempts, a, NULL)) {
        ic->st.skipped++;
        return 0;
    }
    if ((error = ic->mem->store->distilled_insert(ic->mem->store, i, a)) == 0)
        ic->st.edges++;
    return error;
}

static int import_q(import_ctx *ic, const cJSON *o, kevo_q_target target)
{
    kevo_q_row row = {.target = target, .stage = KEVO_STAGE_REFINE};
    int64_t fid = 0;
    double n = 0;
    int error;
    if (target == KEVO_Q_ITEM) {
        if ((error = get_id(ic, o, "item", 1, &fid)) < 0 ||
            (error = get_stage(ic, o, &row.stage)) < 0 ||
            (error = map_ref(ic, &ic->items, fid, "item", &row.id)) < 0)
            return error;
    } else if ((error = get_id(ic, o, "attempt", 1, &fid)) < 0 ||
               (error = map_ref(ic, &ic->attempts, fid, "attempt", &row.id)) < 0) {
        return error;
    }
    if ((error = get_num(ic, o, "q", 1, &row.q)) < 0 || (error = get_num(ic, o, "n", 1, &n)) < 0)
        return error;
    row.n = (int64_t)n;
    /* Q of records that were already here stays as this store learnt it. */
    kevo_map *fresh = target == KEVO_Q_ITEM ? &ic->new_items : &ic->new_attempts;
    if (row.n <= 0 || !kevo_map_get(fresh, row.id, NULL)) {
        ic->st.skipped++;
        return 0;
    }
    if ((error = ic->mem->store->q_set(ic->mem->store, &row)) == 0)
        ic->st.q_rows++;
    return error;
}

/* Merge imported reward statistics (Chan et al.'s parallel formula). Only
 * when this import added refine attempts, so that importing twice does not
 * count twice. */
static int import_reward_stats(import_ctx *ic, const cJSON *o)
{
    kevo_store *s = ic->mem->store;
    kevo_reward_stats in = {0}, cur;
    double n = 0;
    int error;
    if ((error = get_stage(ic, o, &in.stage)) < 0 || (error = get_num(ic, o, "n", 1, &n)) < 0 ||
        (error = get_num(ic, o, "mean", 1, &in.mean)) < 0 ||
        (error = get_num(ic, o, "m2", 1, &in.m2)) < 0)
        return error;
    in.n = (int64_t)n;
    if (in.n <= 0 || ic->new_refine == 0) {
        ic->st.skipped++;
        return 0;
    }
    if ((error = s->reward_stats_get(s, in.stage, &cur)) < 0)
        return error;
    if (cur.n > 0) {
        double na = (double)cur.n, nb = (double)in.n, d = in.mean - cur.mean;
        in.m2 = cur.m2 + in.m2 + d * d * na * nb / (na + nb);
        in.mean = cur.mean + d * nb / (na + nb);
        in.n += cur.n;
    }
    return s->reward_stats_set(s, &in);
}

static int import_line(import_ctx *ic, const char *line)
{
    int error = 0;
    cJSON *o = cJSON_Parse(line);
    const char *type = NULL;
    if (!o || !cJSON_IsObject(o)) {
        error = bad(ic, "not a JSON object");
        goto done;
    }
    if ((error = get_str(ic, o, "type", 1, &type)) < 0)
        goto done;
    if (!ic->seen_header) {
        const char *format = NULL;
        double version = 0;
        if (strcmp(type, "header") != 0) {
            error = bad(ic, "the first line must be the header, not a '%s' record", type);
            goto done;
        }
        if ((error = get_str(ic, o, "format", 1, &format)) < 0 ||
            (error = get_num(ic, o, "version", 1, &version)) < 0)
            goto done;
        if (strcmp(format, EXPORT_FORMAT) != 0) {
            error = bad(ic, "field 'format' is '%s', not " EXPORT_FORMAT, format);
            goto done;
        }
        if (version > EXPORT_VERSION) {
            error = bad(ic, "written by a newer kevo (format version %g > %d)", version,
                        EXPORT_VERSION);
            goto done;
        }
        ic->seen_header = 1;
    } else if (!strcmp(type, "run")) {
        error = import_run(ic, o);
    } else if (!strcmp(type, "task")) {
        error = import_task(ic, o);
    } else if (!strcmp(type, "item")) {
        error = import_item(ic, o);
    } else if (!strcmp(type, "machine")) {
        error = import_machine(ic, o);
    } else if (!strcmp(type, "attempt")) {
        error = import_attempt(ic, o);
    } else if (!strcmp(type, "used")) {
        error = import_used(ic, o);
    } else if (!strcmp(type, "distilled_from")) {
        error = import_distilled(ic, o);
    } else if (!strcmp(type, "q")) {
        error = import_q(ic, o, KEVO_Q_ITEM);
    } else if (!strcmp(type, "q_start")) {
        error = import_q(ic, o, KEVO_Q_START);
    } else if (!strcmp(type, "reward_stats")) {
        error = import_reward_stats(ic, o);
    } else {
        error = bad(ic, "unknown record type '%s'", type);
    }
    /* Errors from the store do not name the line yet. */
    if (error < 0 && !strstr(kevo_error_last(), ic->path)) {
        char saved[1800];
        snprintf(saved, sizeof(saved), "%s", kevo_error_last());
        kevo_error_set(error, "%s:%zu: %s", ic->path, ic->line, saved);
    }
done:
    cJSON_Delete(o);
    return error;
}

int kevo_memory_import(kevo_memory *mem, const char *path, kevo_import_stats *out)
{
    import_ctx ic = {.mem = mem, .path = path};
    FILE *f = NULL;
    char *line = NULL;
    size_t cap = 0;
    int error = 0, in_tx = 0, from_stdin = !strcmp(path, "-");
    if (from_stdin) {
        f = stdin;
        ic.path = "(stdin)";
    } else if (!(f = fopen(path, "r"))) {
        return kevo_error_set(errno == ENOENT ? KEVO_ENOTFOUND : KEVO_EIO, "%s: cannot open: %s",
                              path, strerror(errno));
    }
    if ((error = mem->store->tx_begin(mem->store)) < 0)
        goto done;
    in_tx = 1;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        ic.line++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        if ((error = import_line(&ic, line)) < 0)
            goto done;
    }
    if (ferror(f)) {
        error = kevo_error_set(KEVO_EIO, "%s: read error: %s", ic.path, strerror(errno));
        goto done;
    }
    if (!ic.seen_header)
        error = kevo_error_set(KEVO_EINVAL, "%s: empty file, not a kevo memory export", ic.path);
done:
    if (in_tx)
        error = kevo_memory_tx_end(mem, error);
    if (error == 0 && out)
        *out = ic.st;
    if (f && !from_stdin)
        fclose(f);
    free(line);
    kevo_map_free(&ic.runs);
    kevo_map_free(&ic.items);
    kevo_map_free(&ic.attempts);
    kevo_map_free(&ic.new_items);
    kevo_map_free(&ic.new_attempts);
    return error;
}
