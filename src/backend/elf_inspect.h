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
/* Same, with more undefined symbols allowed (a device toolchain's runtime:
 * the CUDA backend's registration and launch calls) and, when
 * constructors_allowed, constructor sections not reported (nvcc registers
 * its kernels from one; the CUDA anti-hack gate judges them in the source). */
int kevo_elf_inspect_with(kevo_elf_report *out, const char *object_path, const char *kernel,
                          bool (*also_allowed)(const char *name), bool constructors_allowed);
/* A shared library a device compiler produced from a candidate (PoCL's
 * kernel libraries): its undefined dynamic symbols must be allow-listed
 * and it may have no constructor sections. defines_kernel is not set. */
int kevo_elf_inspect_shared(kevo_elf_report *out, const char *path);
void kevo_elf_report_clear(kevo_elf_report *r);
bool kevo_elf_symbol_allowed(const char *name);

#endif
