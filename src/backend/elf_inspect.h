/*
 * backend/elf_inspect.h - linker-level checks of a candidate object.
 * Internal to src/backend.
 */
#ifndef KEVO_BACKEND_ELF_INSPECT_H
#define KEVO_BACKEND_ELF_INSPECT_H

#include "kevo/common.h"

#include <stdbool.h>

typedef struct kevo_elf_report {
    bool defines_kernel;
    bool has_constructor;
    int forbidden_symbols;
    char *problems; /* "" when clean; caller frees via kevo_elf_report_clear */
} kevo_elf_report;

int kevo_elf_inspect(kevo_elf_report *out, const char *object_path, const char *kernel);
void kevo_elf_report_clear(kevo_elf_report *r);
bool kevo_elf_symbol_allowed(const char *name);

#endif
