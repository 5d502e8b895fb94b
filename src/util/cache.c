/*
 * util/cache.c - the folder where kevo keeps what it can recompute
 * (reference results, harness objects): $KEVO_CACHE_DIR, else
 * $XDG_CACHE_HOME/kevo, else ~/.cache/kevo. Each part is a subfolder of
 * mode 0700 that must belong to kevo's user: anything else (a symlink, a
 * folder others can write) turns that cache off with one warning, because
 * what is read back from it is trusted as kevo's own. KEVO_CACHE=off turns
 * every cache off.
 */
#include "kevo/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PARTS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char name[32];
    char path[4096];
    bool usable;
} parts[MAX_PARTS];
static int nparts;

static bool cache_enabled(void)
{
    const char *off = getenv("KEVO_CACHE");
    return !(off && (!strcmp(off, "off") || !strcmp(off, "0")));
}

static bool private_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

static bool open_part(char *path, size_t cap, const char *name)
{
    const char *base = getenv("KEVO_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    char kevo[3900];
    if (base && *base)
        snprintf(kevo, sizeof(kevo), "%s", base);
    else if (xdg && *xdg)
        snprintf(kevo, sizeof(kevo), "%s/kevo", xdg);
    else if (home && *home)
        snprintf(kevo, sizeof(kevo), "%s/.cache/kevo", home);
    else
        return false;
    if ((size_t)snprintf(path, cap, "%s/%s", kevo, name) >= cap)
        return false;
    if (kevo_mkdirs(kevo, 0755) < 0 || (mkdir(path, 0700) < 0 && errno != EEXIST))
        return false;
    if (!private_dir(path)) {
        fprintf(stderr, "kevo: warning: %s is not a folder private to this user (mode 0700, "
                        "owned by uid %u): that cache is off\n", path, (unsigned)geteuid());
        return false;
    }
    return true;
}

const char *kevo_cache_dir(const char *name)
{
    if (!cache_enabled() || strlen(name) >= sizeof(parts[0].name))
        return NULL;
    const char *out = NULL;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < nparts && strcmp(parts[i].name, name))
        i++;
    if (i == nparts && nparts < MAX_PARTS) {
        snprintf(parts[i].name, sizeof(parts[i].name), "%s", name);
        parts[i].usable = open_part(parts[i].path, sizeof(parts[i].path), name);
        nparts++;
    }
    if (i < nparts && parts[i].usable)
        out = parts[i].path;
    pthread_mutex_unlock(&lock);
    return out;
}
