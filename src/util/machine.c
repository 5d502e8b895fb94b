/*
 * util/machine.c - which machine this process runs on, as attempts record
 * it (kevo_machine_get): a stable id, the hostname, the CPU model, the
 * logical core count and the GPU model when a file says it cheaply. Reads
 * a few small files; must not run programs, query drivers or the network.
 */
#include "kevo/util.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Copy `src` into dst[size] with surrounding white space removed. */
static void copy_trimmed(char *dst, size_t size, const char *src, size_t len)
{
    while (len > 0 && isspace((unsigned char)*src)) {
        src++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)src[len - 1]))
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* The value of the first "key : value" line of `path` whose key is `key`
 * (white space around both ignored). 1 when found. */
static int read_field(const char *path, const char *key, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char name[128];
        copy_trimmed(name, sizeof(name), line, (size_t)(colon - line));
        if (strlen(name) != klen || strcmp(name, key) != 0)
            continue;
        copy_trimmed(out, size, colon + 1, strlen(colon + 1));
        found = out[0] != '\0';
    }
    fclose(f);
    return found;
}

static void join(char *out, size_t size, const char *root, const char *path)
{
    snprintf(out, size, "%s%s", root ? root : "", path);
}

static void cpu_model(char *out, size_t size, const char *root)
{
    char path[4096], impl[64] = "", part[64] = "";
    join(path, sizeof(path), root, "/proc/cpuinfo");
    if (read_field(path, "model name", out, size) || read_field(path, "Hardware", out, size))
        return;
    /* ARM without a "Hardware" line: the implementer and part numbers */
    int has_impl = read_field(path, "CPU implementer", impl, sizeof(impl));
    int has_part = read_field(path, "CPU part", part, sizeof(part));
    if (has_impl || has_part)
        snprintf(out, size, "CPU implementer %s part %s", has_impl ? impl : "?",
                 has_part ? part : "?");
    else
        snprintf(out, size, "unknown");
}

/* The model of the first NVIDIA GPU (by bus id) the driver lists. */
static void gpu_model(char *out, size_t size, const char *root)
{
    char dir[4096], best[256] = "", path[4608];
    out[0] = '\0';
    join(dir, sizeof(dir), root, "/proc/driver/nvidia/gpus");
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (best[0] && strcmp(e->d_name, best) >= 0))
            continue;
        char model[256];
        snprintf(path, sizeof(path), "%s/%s/information", dir, e->d_name);
        if (read_field(path, "Model", model, sizeof(model))) {
            snprintf(best, sizeof(best), "%s", e->d_name);
            snprintf(out, size, "%s", model);
        }
    }
    closedir(d);
}

/* /etc/machine-id's contents (trimmed); 1 when present and not empty. */
static int machine_id_file(char *out, size_t size, const char *root)
{
    char path[4096];
    join(path, sizeof(path), root, "/etc/machine-id");
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char buf[256];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    copy_trimmed(out, size, buf, n);
    return out[0] != '\0';
}

int kevo_machine_get_from(kevo_machine *out, const char *root)
{
    memset(out, 0, sizeof(*out));
    if (gethostname(out->hostname, sizeof(out->hostname) - 1) != 0 || !out->hostname[0])
        snprintf(out->hostname, sizeof(out->hostname), "unknown");
    cpu_model(out->cpu, sizeof(out->cpu), root);
    gpu_model(out->gpu, sizeof(out->gpu), root);
    out->cores = kevo_cpu_count();
    /* the id: machine-id (else hostname), then the CPU model, each with
     * its length so that no two different pairs hash alike by shifting */
    char base[256];
    const char *kind = "machine-id";
    if (!machine_id_file(base, sizeof(base), root)) {
        snprintf(base, sizeof(base), "%s", out->hostname);
        kind = "hostname";
    }
    uint64_t h1 = kevo_hash64(kind, strlen(kind), 0x6b65766f6d616368ULL);
    size_t lens[2] = {strlen(base), strlen(out->cpu)};
    h1 = kevo_hash64(lens, sizeof(lens), h1);
    h1 = kevo_hash64(base, lens[0], h1);
    h1 = kevo_hash64(out->cpu, lens[1], h1);
    uint64_t h2 = kevo_hash64(&h1, sizeof(h1), 0x9e3779b97f4a7c15ULL);
    h2 = kevo_hash64(base, lens[0], h2);
    h2 = kevo_hash64(out->cpu, lens[1], h2);
    snprintf(out->id, sizeof(out->id), "%016llx%016llx", (unsigned long long)h1,
             (unsigned long long)h2);
    return 0;
}

int kevo_machine_get(kevo_machine *out)
{
    return kevo_machine_get_from(out, NULL);
}
