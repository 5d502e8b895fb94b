/*
 * verify/ref_cache.c - the reference's results kept between processes
 * (see ref_cache.h for what an entry holds and why it can be trusted).
 *
 * An entry is a folder CACHE/<key> with two files: `runner`, the built
 * reference runner, and `results`:
 *
 *   "KEVOREF1"  u64 nids  u64 nparams  i64 near_constant  u64 problems_len
 *   f64 build_s
 *   nids x (u64 input_hash, f64 call_s)
 *   nids x nparams x u64 bytes
 *   problems text, padded to 8
 *   every output buffer with bytes > 0, in (id, param) order, each padded to 64
 *   u64 checksum of everything before it (kevo_hash64_words)
 *
 * Native byte order: an entry belongs to one machine. It never decides a
 * verdict on its own, never runs anything, and never leaves this folder.
 */
#include "ref_cache.h"

#include "kevo/common.h"
#include "kevo/sys/backend.h"
#include "kevo/util.h"

#include <glob.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "KEVOREF1"
#define HEADER_BYTES 48
#define CHECK_SEED 0x73756dULL

const char *kevo_ref_cache__dir(void)
{
    return kevo_cache_dir("reference");
}

/* ---- the key ---- */

static int filter_regular(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Every regular file directly in dir: name, size and bytes, by name. */
static int hash_folder(kevo_buf *m, const char *dir)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, filter_regular, alphasort);
    if (n < 0)
        return kevo_error_set(KEVO_EIO, "%s: cannot list: %s", dir, strerror(errno));
    int error = 0;
    for (int i = 0; i < n; i++) {
        char *path = kevo_path_join(dir, names[i]->d_name);
        struct stat st;
        if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            char *text = NULL;
            size_t len = 0;
            if (error == 0 && (error = kevo_file_read(&text, &len, path)) == 0) {
                kevo_buf_printf(m, "file %s %zu\n", names[i]->d_name, len);
                kevo_buf_put(m, text, len);
            }
            free(text);
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return error;
}

/* This machine as far as the reference's build (-march=native) and its
 * timings can tell: the CPU's model and feature flags, the core count. */
static void hash_machine(kevo_buf *m)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    bool model = false, flags = false;
    while (f && fgets(line, sizeof(line), f) && !(model && flags)) {
        if (!model && !strncmp(line, "model name", 10))
            model = true, kevo_buf_puts(m, line);
        else if (!flags && (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)))
            flags = true, kevo_buf_puts(m, line);
    }
    if (f)
        fclose(f);
    kevo_buf_printf(m, "cpus %d\n", kevo_cpu_count());
}

/* A torch reference as far as its results can tell: the interpreter and
 * the torch install it imports (its version file). */
static void hash_torch(kevo_buf *m)
{
    char *python = NULL, *tree = NULL;
    if (kevo_torch_python(&python, &tree) < 0)
        return;
    kevo_buf_printf(m, "python %s\n", python);
    char pattern[4200];
    snprintf(pattern, sizeof(pattern), "%s/lib/python*/site-packages/torch/version.py", tree);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            char *text = NULL;
            if (kevo_file_read(&text, NULL, g.gl_pathv[i]) == 0)
                kevo_buf_printf(m, "torch %s\n%s", g.gl_pathv[i], text);
            free(text);
        }
        globfree(&g);
    }
    free(python);
    free(tree);
}

int kevo_ref_cache__key(char key[33], const kevo_task *task, int seeds)
{
    key[0] = 0;
    kevo_buf m = {0};
    kevo_buf_printf(&m, "kevo reference cache 1\nkevo %s\nseeds %d\n", KEVO_VERSION, seeds);
    int error = hash_folder(&m, task->dir);
    if (error == 0)
        error = hash_folder(&m, kevo_harness_dir());
    /* the compiler as the build runs it: its flags and its binary */
    const char *cc[40];
    bool openmp;
    size_t n = kevo_c_compile_flags(cc, 32, NULL, &openmp);
    for (size_t i = 0; i < n; i++)
        kevo_buf_printf(&m, "cc %s\n", cc[i]);
    struct stat st;
    if (stat(cc[0], &st) == 0)
        kevo_buf_printf(&m, "compiler %lld %lld %lld\n", (long long)st.st_size,
                        (long long)st.st_mtime, (long long)st.st_ino);
    hash_machine(&m);
    if (task->torch)
        hash_torch(&m);
    if (error == 0 && m.len == 0)
        error = kevo_error_set(KEVO_ENOMEM, "out of memory");
    if (error == 0)
        snprintf(key, 33, "%016llx%016llx",
                 (unsigned long long)kevo_hash64_words(m.ptr, m.len, 0x6b65766fULL),
                 (unsigned long long)kevo_hash64_words(m.ptr, m.len, 0x72656663ULL));
    kevo_buf_free(&m);
    return error;
}

uint64_t kevo_ref_cache__inputs_hash(const kevo_task *task, const kevo_call_data *d)
{
    uint64_t h = 0x696e70757473ULL;
    for (size_t p = 0; p < task->nparams; p++) {
        kevo_role r = task->params[p].role;
        if (r == KEVO_ROLE_SCALAR)
            h = kevo_hash64_words(&d->scalar[p], sizeof(double), h);
        else if ((r == KEVO_ROLE_IN || r == KEVO_ROLE_INOUT) && d->data[p])
            h = kevo_hash64_words(d->data[p], d->bytes[p], h);
        else
            h = kevo_hash64_words(&d->bytes[p], sizeof(d->bytes[p]), h);
    }
    return h;
}

/* ---- entries ---- */

int kevo_ref_cache__alloc(kevo_ref_cached *c, size_t nids, size_t nparams)
{
    memset(c, 0, sizeof(*c));
    c->nids = nids;
    c->nparams = nparams;
    size_t cells = nids * nparams + 1; /* + 1: never a zero-sized allocation */
    c->input_hash = calloc(nids + 1, sizeof(uint64_t));
    c->call_s = calloc(nids + 1, sizeof(double));
    c->bytes = calloc(cells, sizeof(uint64_t));
    c->out = calloc(cells, sizeof(void *));
    if (!c->input_hash || !c->call_s || !c->bytes || !c->out) {
        kevo_ref_cache__release(c);
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    }
    return 0;
}

void kevo_ref_cache__release(kevo_ref_cached *c)
{
    free(c->input_hash);
    free(c->call_s);
    free(c->bytes);
    free(c->out);
    free(c->problems);
    if (c->map)
        munmap(c->map, c->map_len);
    memset(c, 0, sizeof(*c));
}

static size_t pad(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* The size of the results file a header describes, or 0 when absurd. */
static size_t results_size(uint64_t nids, uint64_t nparams, uint64_t problems_len,
                           const uint64_t *bytes)
{
    if (nids > (1u << 20) || nparams > 4096 || problems_len > (1u << 24))
        return 0;
    size_t off = HEADER_BYTES + 16 * nids + 8 * nids * nparams + pad(problems_len, 8);
    off = pad(off, 64);
    for (size_t k = 0; bytes && k < nids * nparams; k++) {
        if (bytes[k] > (1ULL << 40))
            return 0;
        off += pad(bytes[k], 64);
    }
    return off + 8;
}

static int copy_file(const char *from, const char *to, unsigned mode)
{
    char *data = NULL;
    size_t len = 0;
    int error = kevo_file_read(&data, &len, from);
    if (error == 0)
        error = kevo_file_write(to, data, len);
    if (error == 0 && chmod(to, mode) < 0)
        error = kevo_error_set(KEVO_EIO, "%s: chmod: %s", to, strerror(errno));
    free(data);
    return error;
}

int kevo_ref_cache__load(kevo_ref_cached *c, const char *key, const char *runner_dst)
{
    memset(c, 0, sizeof(*c));
    const char *dir = kevo_ref_cache__dir();
    if (!dir || !key[0])
        return 0;
    char path[4200], runner[4200];
    snprintf(path, sizeof(path), "%s/%s/results", dir, key);
    snprintf(runner, sizeof(runner), "%s/%s/runner", dir, key);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char *map = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= HEADER_BYTES + 8)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (!map || map == MAP_FAILED)
        return 0;
    size_t len = (size_t)st.st_size;
    uint64_t h[4];
    double build_s;
    memcpy(h, map + 8, sizeof(h));
    memcpy(&build_s, map + 40, sizeof(build_s));
    uint64_t sum;
    memcpy(&sum, map + len - 8, 8);
    size_t nids = h[0], nparams = h[1];
    bool ok = !memcmp(map, MAGIC, 8) &&
              (size_t)HEADER_BYTES + 16 * (uint64_t)nids + 8 * (uint64_t)nids * nparams <= len &&
              kevo_ref_cache__alloc(c, nids, nparams) == 0;
    if (ok) {
        const unsigned char *q = map + HEADER_BYTES;
        for (size_t i = 0; i < nids; i++, q += 16) {
            memcpy(&c->input_hash[i], q, 8);
            memcpy(&c->call_s[i], q + 8, 8);
        }
        memcpy(c->bytes, q, 8 * nids * nparams);
        ok = results_size(nids, nparams, h[3], c->bytes) == len;
    }
    if (ok) {
        size_t off = HEADER_BYTES + 16 * nids + 8 * nids * nparams;
        c->problems = strndup((const char *)map + off, h[3]);
        off = pad(off + pad(h[3], 8), 64);
        uint64_t check = kevo_hash64_words(map, off, CHECK_SEED);
        for (size_t k = 0; k < nids * nparams; k++)
            if (c->bytes[k]) {
                c->out[k] = map + off;
                check = kevo_hash64_words(c->out[k], c->bytes[k], check);
                check = kevo_hash64_words(map + off + c->bytes[k],
                                          pad(c->bytes[k], 64) - c->bytes[k], check);
                off += pad(c->bytes[k], 64);
            }
        ok = check == sum;
        c->near_constant = (int)h[2];
        c->build_s = build_s;
        c->map = map;
        c->map_len = len;
        ok = ok && c->problems && copy_file(runner, runner_dst, 0755) == 0;
    }
    if (!ok) {
        if (!c->map)
            munmap(map, len);
        kevo_ref_cache__release(c);
        kevo_ref_cache__drop(key); /* damaged or foreign: the next store replaces it */
        return 0;
    }
    /* most recently used: the last to be evicted */
    char entry[4200];
    snprintf(entry, sizeof(entry), "%s/%s", dir, key);
    utimensat(AT_FDCWD, entry, NULL, 0);
    return 1;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return kevo_error_set(KEVO_EIO, "cannot write the reference cache: %s",
                                  strerror(errno));
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The results file: everything before the outputs built in memory, then
 * each output written from where it lies; the checksum chains the parts. */
static int write_results(int fd, const kevo_ref_cached *c, size_t size)
{
    static const unsigned char zeros[64];
    kevo_buf meta = {0};
    uint64_t plen = c->problems ? strlen(c->problems) : 0;
    uint64_t h[4] = {c->nids, c->nparams, (uint64_t)(int64_t)c->near_constant, plen};
    kevo_buf_put(&meta, MAGIC, 8);
    kevo_buf_put(&meta, h, sizeof(h));
    kevo_buf_put(&meta, &c->build_s, 8);
    for (size_t i = 0; i < c->nids; i++) {
        kevo_buf_put(&meta, &c->input_hash[i], 8);
        kevo_buf_put(&meta, &c->call_s[i], 8);
    }
    kevo_buf_put(&meta, c->bytes, 8 * c->nids * c->nparams);
    if (plen)
        kevo_buf_put(&meta, c->problems, plen);
    kevo_buf_put(&meta, zeros, pad(meta.len, 8) - meta.len);
    kevo_buf_put(&meta, zeros, pad(meta.len, 64) - meta.len);
    int error = meta.ptr ? write_all(fd, meta.ptr, meta.len)
                         : kevo_error_set(KEVO_ENOMEM, "out of memory");
    size_t written = meta.len;
    uint64_t check = meta.ptr ? kevo_hash64_words(meta.ptr, meta.len, CHECK_SEED) : 0;
    kevo_buf_free(&meta);
    for (size_t k = 0; error == 0 && k < c->nids * c->nparams; k++) {
        if (!c->bytes[k])
            continue;
        size_t tail = pad(c->bytes[k], 64) - c->bytes[k];
        if ((error = write_all(fd, c->out[k], c->bytes[k])) == 0)
            error = write_all(fd, zeros, tail);
        check = kevo_hash64_words(c->out[k], c->bytes[k], check);
        check = kevo_hash64_words(zeros, tail, check); /* every byte of the file counts */
        written += c->bytes[k] + tail;
    }
    if (error == 0 && written + 8 != size)
        error = kevo_error_set(KEVO_EINFRA, "reference cache: %zu bytes written, %zu expected",
                               written + 8, size);
    if (error == 0)
        error = write_all(fd, &check, 8);
    return error;
}

/* Bytes held by one entry folder. */
static uint64_t entry_bytes(int dirfd, const char *name)
{
    uint64_t total = 0;
    const char *files[] = {"results", "runner"};
    for (int i = 0; i < 2; i++) {
        char p[600];
        snprintf(p, sizeof(p), "%s/%s", name, files[i]);
        struct stat st;
        if (fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0)
            total += (uint64_t)st.st_size;
    }
    return total;
}

typedef struct {
    char name[256];
    time_t mtime;
    uint64_t bytes;
} entry_info;

static int by_age(const void *a, const void *b)
{
    const entry_info *x = a, *y = b;
    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* The cache's bound in bytes: KEVO_CACHE_MAX_MB, default 4096. */
static double cache_max_bytes(void)
{
    const char *env = getenv("KEVO_CACHE_MAX_MB");
    return (env && *env ? strtod(env, NULL) : 4096) * 1048576.0;
}

/* Oldest entries first until the cache fits KEVO_CACHE_MAX_MB; stale
 * temporary folders of killed processes (older than an hour) go too. */
static void evict(const char *dir, const char *keep)
{
    double max = cache_max_bytes();
    DIR *d = opendir(dir);
    if (!d)
        return;
    entry_info *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && strncmp(e->d_name, ".tmp-", 5))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (!strncmp(e->d_name, ".tmp-", 5)) {
            if (now - st.st_mtime > 3600)
                kevo_rmtree(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            entry_info *nv = realloc(v, cap * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
        v[n].mtime = st.st_mtime;
        v[n].bytes = entry_bytes(dirfd(d), e->d_name);
        total += v[n].bytes;
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof(*v), by_age);
    for (size_t i = 0; i < n && (double)total > max; i++) {
        if (!strcmp(v[i].name, keep))
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
        if (kevo_rmtree(path) == 0)
            total -= v[i].bytes;
    }
    free(v);
}

void kevo_ref_cache__drop(const char *key)
{
    const char *dir = kevo_ref_cache__dir();
    if (!dir || !key[0])
        return;
    /* out of the way first (one rename), then removed: a reader sees the
     * whole entry or none */
    char entry[4200], gone[4300];
    snprintf(entry, sizeof(entry), "%s/%s", dir, key);
    snprintf(gone, sizeof(gone), "%s/.tmp-drop-%s-%d-%llx", dir, key, (int)getpid(),
             (unsigned long long)kevo_now_ns());
    if (rename(entry, gone) == 0)
        kevo_rmtree(gone);
}

int kevo_ref_cache__store(const char *key, const char *runner_path, const kevo_ref_cached *c)
{
    const char *dir = kevo_ref_cache__dir();
    if (!dir || !key[0])
        return 0;
    size_t size = results_size(c->nids, c->nparams, c->problems ? strlen(c->problems) : 0,
                               c->bytes);
    if (size == 0 || (double)size > cache_max_bytes() / 4)
        return 0; /* too big to be worth a quarter of the cache */
    char tmp[4200], final_dir[4200], path[4300];
    snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%d-%llx", dir, key, (int)getpid(),
             (unsigned long long)kevo_now_ns());
    snprintf(final_dir, sizeof(final_dir), "%s/%s", dir, key);
    if (mkdir(tmp, 0700) < 0)
        return kevo_error_set(KEVO_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    snprintf(path, sizeof(path), "%s/runner", tmp);
    int error = copy_file(runner_path, path, 0700);
    snprintf(path, sizeof(path), "%s/results", tmp);
    int fd = error == 0 ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (error == 0 && fd < 0)
        error = kevo_error_set(KEVO_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (fd >= 0) {
        error = write_results(fd, c, size);
        if (close(fd) < 0 && error == 0)
            error = kevo_error_set(KEVO_EIO, "cannot write the reference cache: %s",
                                   strerror(errno));
    }
    /* a concurrent kevo may have stored the same entry first: keep theirs */
    if (error == 0 && rename(tmp, final_dir) < 0 && errno != EEXIST && errno != ENOTEMPTY)
        error = kevo_error_set(KEVO_EIO, "%s: cannot store: %s", final_dir, strerror(errno));
    kevo_rmtree(tmp);
    evict(dir, key);
    return error;
}
