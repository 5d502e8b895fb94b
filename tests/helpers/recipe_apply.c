/*
 * tests/helpers/recipe_apply.c - applies recipes to a source file and prints
 * the result, for the integration tests that compile and judge recipe output
 * with the real toolchains (`kevo eval`).
 *   recipe_apply FILE KERNEL [port-opencl] [RECIPE[:P1,P2,...]]...
 * `port-opencl` first ports the C file to OpenCL (kevo_backend__opencl_port).
 * Exit 0 with the source on stdout; 1 with the reason on stderr.
 */
#include "backend/opencl_draft.h"
#include "kevo/recipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: recipe_apply FILE KERNEL [port-opencl] [RECIPE[:P1,...]]...\n");
        return 2;
    }
    char *src = NULL;
    if (kevo_file_read(&src, NULL, argv[1]) < 0) {
        fprintf(stderr, "%s\n", kevo_error_last());
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        char *next = NULL;
        int error;
        if (!strcmp(argv[i], "port-opencl")) {
            error = kevo_backend__opencl_port(&next, src, argv[2]);
        } else {
            char name[128];
            long p[KEVO_RECIPE_MAX_PARAMS];
            size_t n = 0;
            const char *colon = strchr(argv[i], ':');
            snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - argv[i]) : 127, argv[i]);
            for (const char *q = colon; q && n < KEVO_RECIPE_MAX_PARAMS; q = strchr(q + 1, ','))
                p[n++] = strtol(q + 1, NULL, 10);
            error = kevo_recipe_apply(&next, name, p, n, src, argv[2]);
        }
        if (error < 0) {
            fprintf(stderr, "%s: %s\n", argv[i], kevo_error_last());
            free(src);
            return 1;
        }
        free(src);
        src = next;
    }
    fputs(src, stdout);
    free(src);
    return 0;
}
