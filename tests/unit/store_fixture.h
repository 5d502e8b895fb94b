/*
 * store_fixture.h - the cmocka fixture of the tests that build a store by
 * hand: a fresh experience store in a temporary folder, with the default
 * learning settings. Test-only; include after <cmocka.h> and the kevo
 * headers.
 */
#ifndef KEVO_TEST_STORE_FIXTURE_H
#define KEVO_TEST_STORE_FIXTURE_H

#include "kevo/memory.h"
#include "kevo/util.h"

#include <stdlib.h>

typedef struct fixture {
    char *dir;
    char *path;
    kevo_memory *mem;
    kevo_learn_config cfg;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || kevo_mkdtemp(&f->dir, "kevo-test-") < 0)
        return -1;
    f->path = kevo_path_join(f->dir, "kevo.db");
    if (kevo_memory_open(&f->mem, f->path) < 0)
        return -1;
    kevo_learn_config_init(&f->cfg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    kevo_memory_free(f->mem);
    kevo_rmtree(f->dir);
    free(f->path);
    free(f->dir);
    free(f);
    return 0;
}

#endif
