/*
 * backend/elf_inspect.c - inspects a compiled candidate object (ELF64
 * relocatable) before it is linked: it must define the kernel, may call
 * only allow-listed library functions (maths, memory, OpenMP runtime,
 * libgcc helpers), and may not carry constructors or destructors. This is
 * the linker-level truth behind the static anti-hack gate: macro tricks
 * cannot hide a call from the symbol table.
 */
#include "elf_inspect.h"
#include "kevo/util.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

static const char *const math_names[] = {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "exp2", "expm1", "exp10", "log", "log2", "log10", "log1p", "logb",
    "pow", "sqrt", "cbrt", "hypot", "fabs", "fmod", "remainder", "floor", "ceil", "round",
    "trunc", "rint", "nearbyint", "lround", "llround", "lrint", "llrint", "fmin", "fmax", "fma",
    "fdim", "erf", "erfc", "tgamma", "lgamma", "frexp", "ldexp", "scalbn", "modf", "copysign",
    "nan", "sincos", "ilogb", "nextafter", "pow10", NULL};

static const char *const other_names[] = {
    "memcpy", "memmove", "memset", "memcmp", "malloc", "calloc", "realloc", "free",
    "aligned_alloc", "posix_memalign", "strlen", "qsort", "abs", "labs", "llabs",
    "__stack_chk_fail", "__muldc3", "__mulsc3", "__divdc3", "__divsc3", "__powisf2",
    "__powidf2", "__popcountdi2", "__cpu_model", "__cpu_indicators_init", "__cpu_features2",
    "_GLOBAL_OFFSET_TABLE_", "__errno_location", NULL};

static const char *const allowed_prefixes[] = {"GOMP_", "omp_", "_ZGV", NULL};

bool kevo_elf_symbol_allowed(const char *name)
{
    for (const char *const *p = other_names; *p; p++)
        if (!strcmp(*p, name))
            return true;
    for (const char *const *p = allowed_prefixes; *p; p++)
        if (!strncmp(*p, name, strlen(*p)))
            return true;
    size_t len = strlen(name);
    char base[64];
    /* __expf_finite and friends (older glibc -ffast-math) */
    if (len > 9 && len < sizeof(base) + 9 && !strncmp(name, "__", 2) &&
        !strcmp(name + len - 7, "_finite")) {
        memcpy(base, name + 2, len - 9);
        base[len - 9] = '\0';
        name = base;
        len = strlen(base);
    }
    for (const char *const *p = math_names; *p; p++) {
        size_t n = strlen(*p);
        if (!strncmp(*p, name, n) && (len == n || (len == n + 1 && (name[n] == 'f' ||
                                                                     name[n] == 'l'))))
            return true;
    }
    return false;
}

int kevo_elf_inspect(kevo_elf_report *out, const char *path, const char *kernel)
{
    return kevo_elf_inspect_with(out, path, kernel, NULL, false);
}

int kevo_elf_inspect_with(kevo_elf_report *out, const char *path, const char *kernel,
                          bool (*also_allowed)(const char *name), bool constructors_allowed)
{
    memset(out, 0, sizeof(*out));
    char *data = NULL;
    size_t len = 0;
    int error;
    if ((error = kevo_file_read(&data, &len, path)) < 0)
        return error;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len ||
        eh->e_shstrndx >= eh->e_shnum) {
        error = kevo_error_set(KEVO_EINFRA, "%s: not an ELF64 object", path);
        goto done;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
    const char *shstr = data + sh[eh->e_shstrndx].sh_offset;
    kevo_buf problems = {0};
    for (int i = 0; i < eh->e_shnum; i++) {
        const char *nm = shstr + sh[i].sh_name;
        if (sh[i].sh_type == SHT_INIT_ARRAY || sh[i].sh_type == SHT_FINI_ARRAY ||
            sh[i].sh_type == SHT_PREINIT_ARRAY || !strncmp(nm, ".ctors", 6) ||
            !strncmp(nm, ".dtors", 6) || !strcmp(nm, ".init") || !strcmp(nm, ".fini")) {
            if (constructors_allowed)
                continue;
            if (!out->has_constructor)
                kevo_buf_printf(&problems, "the object has a constructor/destructor section "
                                           "(%s): code that runs before or after the kernel "
                                           "is not allowed; ", nm);
            out->has_constructor = true;
        }
    }
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(data + sh[i].sh_offset);
        size_t nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
        const char *str = data + sh[sh[i].sh_link].sh_offset;
        for (size_t k = 1; k < nsyms; k++) {
            const char *name = str + syms[k].st_name;
            int bind = ELF64_ST_BIND(syms[k].st_info);
            if (ELF64_ST_TYPE(syms[k].st_info) == STT_GNU_IFUNC) {
                kevo_buf_printf(&problems, "'%s' is an indirect function (ifunc): its resolver "
                                           "would run before the kernel is called; ",
                                *name ? name : "?");
                out->has_constructor = true;
                continue;
            }
            if (!*name)
                continue;
            if (syms[k].st_shndx == SHN_UNDEF) {
                if (bind == STB_LOCAL || kevo_elf_symbol_allowed(name) ||
                    (also_allowed && also_allowed(name)))
                    continue;
                kevo_buf_printf(&problems, "calls '%s', which candidates may not use (allowed: "
                                           "maths, memory allocation/copies, OpenMP); ", name);
                out->forbidden_symbols++;
            } else if (!strcmp(name, kernel) && bind == STB_GLOBAL &&
                       ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC) {
                out->defines_kernel = true;
            }
        }
    }
    if (problems.len >= 2)
        problems.ptr[problems.len - 2] = '\0';
    out->problems = kevo_buf_detach(&problems);
done:
    free(data);
    return error;
}

void kevo_elf_report_clear(kevo_elf_report *r)
{
    free(r->problems);
    memset(r, 0, sizeof(*r));
}

int kevo_elf_inspect_shared(kevo_elf_report *out, const char *path)
{
    /* crtbegin's weak references, present in any linked shared object */
    static const char *const crt_weak[] = {"__gmon_start__", "_ITM_deregisterTMCloneTable",
                                           "_ITM_registerTMCloneTable", "__cxa_finalize", NULL};
    memset(out, 0, sizeof(*out));
    char *data = NULL;
    size_t len = 0;
    int error;
    if ((error = kevo_file_read(&data, &len, path)) < 0)
        return error;
    kevo_buf problems = {0};
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)data;
    if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len ||
        eh->e_shstrndx >= eh->e_shnum) {
        error = kevo_error_set(KEVO_EINFRA, "%s: not an ELF64 file", path);
        goto done;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(data + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_offset + sh[i].sh_size > len && sh[i].sh_type != SHT_NOBITS) {
            error = kevo_error_set(KEVO_EINFRA, "%s: truncated ELF file", path);
            goto done;
        }
    const char *shstr = data + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; i++) {
        const char *nm = shstr + sh[i].sh_name;
        if (sh[i].sh_type == SHT_INIT_ARRAY || sh[i].sh_type == SHT_FINI_ARRAY ||
            sh[i].sh_type == SHT_PREINIT_ARRAY || !strncmp(nm, ".ctors", 6) ||
            !strncmp(nm, ".dtors", 6) || !strcmp(nm, ".init") || !strcmp(nm, ".fini")) {
            if (!out->has_constructor)
                kevo_buf_printf(&problems, "the compiled kernel library has a constructor "
                                           "section (%s); ", nm);
            out->has_constructor = true;
        }
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(data + sh[i].sh_offset);
        size_t nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
        const char *str = data + sh[sh[i].sh_link].sh_offset;
        size_t strsize = sh[sh[i].sh_link].sh_size;
        for (size_t k = 1; k < nsyms; k++) {
            if (syms[k].st_shndx != SHN_UNDEF || syms[k].st_name >= strsize)
                continue;
            const char *name = str + syms[k].st_name;
            if (!*name || kevo_elf_symbol_allowed(name))
                continue;
            bool crt = false;
            for (const char *const *c = crt_weak; *c; c++)
                crt |= !strcmp(*c, name) && ELF64_ST_BIND(syms[k].st_info) == STB_WEAK;
            if (crt)
                continue;
            kevo_buf_printf(&problems, "the compiled kernel calls '%s', which kernels may not "
                                       "use (printf and host functions are not allowed); ", name);
            out->forbidden_symbols++;
        }
    }
    if (problems.len >= 2)
        problems.ptr[problems.len - 2] = '\0';
    out->problems = kevo_buf_detach(&problems);
done:
    kevo_buf_free(&problems);
    free(data);
    return error;
}
