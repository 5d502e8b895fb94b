/*
 * util/fs.c - whole-file reads and atomic writes, directories, temp dirs.
 */
#include "kevo/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kevo_file_read(char **out, size_t *out_len, const char *path)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int code = errno == ENOENT ? KEVO_ENOTFOUND : KEVO_EIO;
        return kevo_error_set(code, "%s: cannot open: %s", path, strerror(errno));
    }
    kevo_buf b = {0};
    char chunk[65536];
    size_t n;
    int error = 0;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if ((error = kevo_buf_put(&b, chunk, n)) < 0)
            goto done;
    }
    if (ferror(f)) {
        error = kevo_error_set(KEVO_EIO, "%s: read error: %s", path, strerror(errno));
        goto done;
    }
    if (out_len)
        *out_len = b.len;
    *out = kevo_buf_detach(&b);
done:
    fclose(f);
    kevo_buf_free(&b);
    return error;
}

int kevo_file_write(const char *path, const void *data, size_t len)
{
    kevo_buf tmp = {0};
    int error = 0, fd = -1;
    if ((error = kevo_buf_printf(&tmp, "%s.tmp.%d", path, (int)getpid())) < 0)
        return error;
    fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        error = kevo_error_set(KEVO_EIO, "%s: cannot create: %s", path, strerror(errno));
        goto done;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            error = kevo_error_set(KEVO_EIO, "%s: write failed: %s", path, strerror(errno));
            goto done;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        fd = -1;
        error = kevo_error_set(KEVO_EIO, "%s: cannot flush: %s", path, strerror(errno));
        goto done;
    }
    fd = -1;
    if (rename(tmp.ptr, path) < 0)
        error = kevo_error_set(KEVO_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
done:
    if (fd >= 0)
        close(fd);
    if (error < 0)
        unlink(tmp.ptr);
    kevo_buf_free(&tmp);
    return error;
}

bool kevo_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool kevo_dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *kevo_path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p)
        return NULL;
    memcpy(p, a, la);
    size_t n = la;
    if (n > 0 && p[n - 1] != '/')
        p[n++] = '/';
    memcpy(p + n, b, lb + 1);
    return p;
}

int kevo_mkdirs(const char *path, unsigned mode)
{
    char *copy = strdup(path);
    if (!copy)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, mode) < 0 && errno != EEXIST) {
            int error = kevo_error_set(KEVO_EIO, "%s: cannot create directory: %s", copy,
                                       strerror(errno));
            free(copy);
            return error;
        }
        *p = '/';
    }
    int error = 0;
    if (mkdir(copy, mode) < 0 && errno != EEXIST)
        error = kevo_error_set(KEVO_EIO, "%s: cannot create directory: %s", copy, strerror(errno));
    free(copy);
    return error;
}

static int rmtree_at(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0)
        return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        rmtree_at(fd, e->d_name);
    }
    closedir(d);
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

int kevo_rmtree(const char *path)
{
    if (!path || !*path || !strcmp(path, "/"))
        return kevo_error_set(KEVO_EINVAL, "refusing to remove '%s'", path ? path : "(null)");
    if (rmtree_at(AT_FDCWD, path) < 0 && errno != ENOENT)
        return kevo_error_set(KEVO_EIO, "%s: cannot remove: %s", path, strerror(errno));
    return 0;
}

int kevo_mkdtemp(char **out, const char *prefix)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    kevo_buf b = {0};
    int error;
    if ((error = kevo_buf_printf(&b, "%s/%sXXXXXX", base, prefix)) < 0)
        return error;
    if (!mkdtemp(b.ptr)) {
        error = kevo_error_set(KEVO_EIO, "cannot create a temporary directory under %s: %s", base,
                               strerror(errno));
        kevo_buf_free(&b);
        return error;
    }
    *out = kevo_buf_detach(&b);
    return 0;
}
