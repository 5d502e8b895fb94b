/*
 * util/data_dir.c - where kevo's data is (harness/, prompts/, suites/):
 * $KEVO_DATA_DIR, else the share/kevo an installed kevo sits next to, else,
 * for a kevo still inside the build tree it was built in, the source tree,
 * else the configured prefix's share/kevo (docs/install.md, "Where kevo
 * finds its data"). It only finds folders (it reads no file in them) and
 * must never let an installed kevo fall back to the source tree it was
 * built from.
 */
#include "kevo/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KEVO_DATA_REL
#define KEVO_DATA_REL "../share/kevo" /* from the executable's folder; CMake sets it */
#endif

#ifdef KEVO_INSTALL_DATA_DIR
#define KEVO_INSTALL_DIR_TEXT KEVO_INSTALL_DATA_DIR
#else
#define KEVO_INSTALL_DIR_TEXT "the configured prefix"
#endif

/* A file every data directory holds: how an install is told from a folder
 * that merely has the right name. */
#define KEVO_DATA_MARKER "harness/protocol.h"

/* The paths handed out live as long as the process (callers keep them in
 * structs across threads), so each distinct one is kept once, here. */
typedef struct interned {
    struct interned *next;
    char s[];
} interned;

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static interned *intern_list;

static const char *intern(const char *s)
{
    const char *found = NULL;
    pthread_mutex_lock(&intern_lock);
    for (interned *i = intern_list; i && !found; i = i->next)
        if (!strcmp(i->s, s))
            found = i->s;
    if (!found) {
        size_t len = strlen(s);
        interned *n = malloc(sizeof(*n) + len + 1);
        if (n) {
            memcpy(n->s, s, len + 1);
            n->next = intern_list;
            intern_list = n;
            found = n->s;
        }
    }
    pthread_mutex_unlock(&intern_lock);
    if (!found)
        kevo_error_set(KEVO_ENOMEM, "out of memory");
    return found;
}

/* "a/bin/../share/kevo" -> "a/share/kevo" in place, by the text alone (for
 * messages: the folder may not exist, so realpath cannot). */
static void lexical_clean(char *path)
{
    char *out = path, *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.' && out > path) {
            while (out > path && *--out != '/')
                ;
        } else if (len && !(len == 1 && p[0] == '.')) {
            *out++ = '/';
            memmove(out, p, len);
            out += len;
        }
        p += len;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}

static bool holds_data(const char *dir)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, KEVO_DATA_MARKER);
    return n > 0 && (size_t)n < sizeof(path) && kevo_file_exists(path);
}

/* Whether the executable (a canonical path) lies under the build tree this
 * file was compiled in. */
static bool in_build_tree(const char *exe)
{
#ifdef KEVO_BUILD_DIR
    char build[PATH_MAX];
    if (!realpath(KEVO_BUILD_DIR, build))
        return false;
    size_t len = strlen(build);
    return !strncmp(exe, build, len) && exe[len] == '/';
#else
    (void)exe;
    return false;
#endif
}

const char *kevo_data_dir(void)
{
    char resolved[PATH_MAX];
    const char *env = getenv("KEVO_DATA_DIR");
    if (env && *env) {
        /* set means meant: a wrong value is an error, never a quiet fallback */
        if (!realpath(env, resolved)) {
            kevo_error_set(KEVO_ENOTFOUND, "KEVO_DATA_DIR=%s: %s", env, strerror(errno));
            return NULL;
        }
        if (!kevo_dir_exists(resolved)) {
            kevo_error_set(KEVO_ENOTFOUND, "KEVO_DATA_DIR=%s: not a directory", env);
            return NULL;
        }
        return intern(resolved);
    }

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        kevo_error_set(KEVO_EINFRA,
                       "kevo's data directory: cannot read /proc/self/exe (%s); set KEVO_DATA_DIR "
                       "to the folder holding harness/, prompts/ and suites/",
                       strerror(errno));
        return NULL;
    }
    exe[n] = '\0';
    char candidate[PATH_MAX];
    char *slash = strrchr(exe, '/');
    int len = snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)(slash ? slash - exe : 0), exe,
                       KEVO_DATA_REL);
    if (len > 0 && (size_t)len < sizeof(candidate) && realpath(candidate, resolved) &&
        holds_data(resolved))
        return intern(resolved);

#ifdef KEVO_SOURCE_DIR
    if (in_build_tree(exe) && holds_data(KEVO_SOURCE_DIR))
        return intern(KEVO_SOURCE_DIR);
#endif
#ifdef KEVO_INSTALL_DATA_DIR
    /* the prefix this build was configured for: a program embedding
     * libkevocore, or a kevo copied out of its prefix */
    if (holds_data(KEVO_INSTALL_DATA_DIR))
        return intern(KEVO_INSTALL_DATA_DIR);
#endif
    lexical_clean(candidate);
    kevo_error_set(KEVO_ENOTFOUND,
                   "kevo's data directory not found: neither %s (next to %s) nor %s holds "
                   "%s; set KEVO_DATA_DIR to the folder holding harness/, prompts/ and "
                   "suites/ (PREFIX/share/kevo of an install)",
                   candidate, exe, KEVO_INSTALL_DIR_TEXT, KEVO_DATA_MARKER);
    return NULL;
}

const char *kevo_data_path(const char *env_name, const char *sub)
{
    const char *env = env_name ? getenv(env_name) : NULL;
    if (env && *env)
        return intern(env);
    const char *dir = kevo_data_dir();
    if (!dir)
        return NULL;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, sub);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        kevo_error_set(KEVO_EINVAL, "%s/%s: path too long", dir, sub);
        return NULL;
    }
    return intern(path);
}
