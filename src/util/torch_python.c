/*
 * util/torch_python.c - where the Python with PyTorch is, for torch tasks
 * (docs/torch-tasks.md): KEVO_TORCH_PYTHON, else the venv that
 * `scripts/setup.sh --with-torch` makes. Finds; never runs it.
 */
#include "kevo/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEVO_TORCH_VENV_SYSTEM "/var/cache/kevo/torch-venv"

/* The venv (or install) tree of an interpreter .../bin/python: two levels up. */
static int tree_of(char **tree, const char *python)
{
    char *copy = strdup(python);
    if (!copy)
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(copy, '/');
        if (!slash || slash == copy) {
            free(copy);
            return kevo_error_set(KEVO_EINVAL, "%s: not of the form TREE/bin/python", python);
        }
        *slash = 0;
    }
    *tree = copy;
    return 0;
}

int kevo_torch_python(char **python, char **tree)
{
    *python = NULL;
    if (tree)
        *tree = NULL;
    const char *env = getenv("KEVO_TORCH_PYTHON");
    char home_venv[PATH_MAX] = "";
    const char *home = getenv("HOME");
    if (home && *home)
        snprintf(home_venv, sizeof(home_venv), "%s/.cache/kevo/torch-venv/bin/python", home);
    const char *candidates[] = {env && *env ? env : NULL, KEVO_TORCH_VENV_SYSTEM "/bin/python",
                                home_venv[0] ? home_venv : NULL};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !found; i++) {
        if (candidates[i] && access(candidates[i], X_OK) == 0)
            found = candidates[i];
        else if (i == 0 && candidates[i])
            return kevo_error_set(KEVO_ENOTFOUND, "KEVO_TORCH_PYTHON=%s is not an executable",
                                  candidates[i]);
    }
    if (!found)
        return kevo_error_set(KEVO_ENOTFOUND,
                              "this task's reference is a PyTorch module and no Python with "
                              "PyTorch was found: run `bash scripts/setup.sh --with-torch` "
                              "(a venv in " KEVO_TORCH_VENV_SYSTEM ", about 5.4 GB) or set "
                              "KEVO_TORCH_PYTHON to a python that imports torch");
    if (!(*python = strdup(found)))
        return kevo_error_set(KEVO_ENOMEM, "out of memory");
    int error = tree ? tree_of(tree, found) : 0;
    if (error < 0) {
        free(*python);
        *python = NULL;
    }
    return error;
}
