/*
 * harness/ocl_build.c - the OpenCL half of the compile gate. kevo runs it
 * as a toolchain step (time and memory limits, scrubbed environment, its
 * own POCL_CACHE_DIR), never as part of a runner:
 *
 *     ocl_build kernel.cl plan.txt program.bin
 *
 * It builds the candidate for the chosen device (clBuildProgram; PoCL may
 * run a linker here, which a runner may not), checks every launch of the
 * plan against the built kernels (the kernel exists, takes the arguments
 * kevo will pass with the expected OpenCL types, fits the work-group and
 * local-memory limits), and writes the program binary the runner embeds.
 * It never runs a kernel.
 *
 * plan.txt, written by kevo (src/backend/opencl_backend.c):
 *     options OPTION...
 *     launch INDEX KERNEL NARGS
 *     arg buffer|scalar TYPE NAME          (NARGS lines after each launch)
 *     local INDEX L0 L1 L2 WHERE...        (one per launch and size set; 0 = not given)
 * Output: diagnostics on stdout; device.txt ("P D" and the names).
 * Exit status: 0 built, 1 the candidate's fault (stdout says why), 2 no
 * usable OpenCL platform or another failure of the machine.
 *
 * Device: KEVO_OPENCL_DEVICE="P:D" (indices) or a substring of
 * "platform / device"; by default the first GPU, else the first device.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LAUNCHES 64
#define MAX_ARGS 64

typedef struct {
    char kernel[128];
    int nargs;
    int filled; /* arg lines read so far */
    struct {
        int buffer;
        char type[32];
        char name[64];
    } args[MAX_ARGS];
} launch;

static launch launches[MAX_LAUNCHES];
static int nlaunches;
static char options[8192] = "-cl-std=CL1.2 -cl-kernel-arg-info";
static int problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    problems++;
}

static int infra(const char *what)
{
    printf("%s\n", what);
    return 2;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) {
        s[n] = '\0';
        if (len)
            *len = (size_t)n;
    }
    return s;
}

/* PoCL compiles a temporary copy of the source: name it as the candidate
 * knows it ("kernel.cl:4:32: error..."). */
static void print_log(const char *log)
{
    const char *p = log;
    while (*p) {
        const char *t = strstr(p, "tempfile_");
        const char *ext = t ? strstr(t, ".cl") : NULL;
        if (!t || !ext || memchr(t, '\n', (size_t)(ext - t))) {
            fputs(p, stdout);
            return;
        }
        const char *start = t;
        while (start > p && !isspace((unsigned char)start[-1]))
            start--;
        fwrite(p, 1, (size_t)(start - p), stdout);
        fputs("kernel.cl", stdout);
        p = ext + 3;
    }
}

static int pick_device(cl_device_id *out, unsigned *pi, unsigned *di, char *desc, size_t desc_len)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
        return -1;
    const char *want = getenv("KEVO_OPENCL_DEVICE");
    int best = -1;
    unsigned bp = 0, bd = 0;
    for (unsigned p = 0; p < np; p++) {
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        char pname[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(pname) - 1, pname, NULL);
        for (unsigned d = 0; d < nd; d++) {
            char dname[256] = "", both[600];
            cl_device_type type = 0;
            clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof(dname) - 1, dname, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
            snprintf(both, sizeof(both), "%s / %s", pname, dname);
            int score;
            if (want && *want) {
                unsigned wp, wd;
                if (sscanf(want, "%u:%u", &wp, &wd) == 2)
                    score = wp == p && wd == d ? 3 : -1;
                else
                    score = strcasestr(both, want) ? 3 : -1;
            } else {
                score = (type & CL_DEVICE_TYPE_GPU) ? 2 : 1;
            }
            if (score > best) {
                best = score;
                bp = p;
                bd = d;
                *out = devs[d];
                snprintf(desc, desc_len, "%s", both);
            }
        }
    }
    if (best < 0)
        return -1;
    *pi = bp;
    *di = bd;
    return 0;
}

static int read_plan(const char *path, char ***locals, int *nlocals)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    launch *cur = NULL;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "options", 7)) {
            size_t n = strlen(options);
            snprintf(options + n, sizeof(options) - n, "%s", line + 7);
        } else if (!strncmp(line, "launch ", 7) && nlaunches < MAX_LAUNCHES) {
            cur = &launches[nlaunches++];
            int idx;
            if (sscanf(line + 7, "%d %127s %d", &idx, cur->kernel, &cur->nargs) != 3 ||
                cur->nargs > MAX_ARGS)
                return -1;
        } else if (!strncmp(line, "arg ", 4) && cur) {
            int k = cur->filled;
            char kind[16];
            if (k >= MAX_ARGS ||
                sscanf(line + 4, "%15s %31s %63s", kind, cur->args[k].type, cur->args[k].name) != 3)
                return -1;
            cur->args[k].buffer = !strcmp(kind, "buffer");
            cur->filled++;
        } else if (!strncmp(line, "local ", 6)) {
            *locals = realloc(*locals, (size_t)(*nlocals + 1) * sizeof(char *));
            (*locals)[(*nlocals)++] = strdup(line + 6);
        }
    }
    fclose(f);
    return 0;
}

/* "float4*" -> base "float", width 4, pointer 1 */
static void split_type(const char *t, char *base, size_t cap, int *width, int *pointer)
{
    size_t n = 0;
    *pointer = strchr(t, '*') != NULL;
    while (*t && (isalpha((unsigned char)*t) || *t == '_' || *t == ' ') && n + 1 < cap)
        base[n++] = *t++;
    while (n && base[n - 1] == ' ')
        n--;
    base[n] = '\0';
    *width = isdigit((unsigned char)*t) ? atoi(t) : 1;
    if (!strcmp(base, "unsigned char"))
        strcpy(base, "uchar");
}

static void check_kernel(cl_program prog, cl_device_id dev, int li, const char *kernel_names,
                         char **locals, int nlocals)
{
    launch *L = &launches[li];
    cl_int e;
    cl_kernel k = clCreateKernel(prog, L->kernel, &e);
    if (e != CL_SUCCESS) {
        problem("launch %d: no kernel named `%s` in the program (kernels defined: %s)", li + 1,
                L->kernel, *kernel_names ? kernel_names : "none: declare them `__kernel void`");
        return;
    }
    cl_uint nargs = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
    char expected[2048] = "";
    for (int a = 0; a < L->nargs; a++) {
        size_t n = strlen(expected);
        snprintf(expected + n, sizeof(expected) - n, "%s%s%s%s%s", a ? ", " : "",
                 L->args[a].buffer ? "__global " : "", L->args[a].type,
                 L->args[a].buffer ? " *" : " ", L->args[a].name);
    }
    if ((int)nargs != L->nargs) {
        problem("launch %d: kernel `%s` takes %u argument%s but kevo passes %d: (%s); a kernel "
                "takes the task's params in order, then the scratch buffers (or what args= "
                "lists)",
                li + 1, L->kernel, nargs, nargs == 1 ? "" : "s", L->nargs, expected);
        clReleaseKernel(k);
        return;
    }
    for (int a = 0; a < L->nargs; a++) {
        cl_kernel_arg_address_qualifier aq = 0;
        char tname[128] = "";
        if (clGetKernelArgInfo(k, (cl_uint)a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(aq), &aq,
                               NULL) != CL_SUCCESS ||
            clGetKernelArgInfo(k, (cl_uint)a, CL_KERNEL_ARG_TYPE_NAME, sizeof(tname) - 1, tname,
                               NULL) != CL_SUCCESS)
            break; /* no argument information: the runtime will tell */
        char base[64];
        int width, pointer;
        split_type(tname, base, sizeof(base), &width, &pointer);
        const char *want = L->args[a].type;
        if (L->args[a].buffer) {
            if (!pointer ||
                (aq != CL_KERNEL_ARG_ADDRESS_GLOBAL && aq != CL_KERNEL_ARG_ADDRESS_CONSTANT))
                problem("launch %d: kernel `%s` argument %d (`%s`) must be a `__global %s *` "
                        "buffer, found `%s`",
                        li + 1, L->kernel, a + 1, L->args[a].name, want, tname);
            else if (strcmp(base, want) || !(width == 1 || width == 2 || width == 3 || width == 4 ||
                                             width == 8 || width == 16))
                problem("launch %d: kernel `%s` argument %d (`%s`) points to `%s`, but the "
                        "buffer holds `%s` (use `__global %s *` or a vector of it such as "
                        "`%s4`)",
                        li + 1, L->kernel, a + 1, L->args[a].name, tname, want, want, want);
        } else if (pointer || strcmp(base, want) || width != 1) {
            problem("launch %d: kernel `%s` argument %d (`%s`) must be a `%s` scalar, found "
                    "`%s`",
                    li + 1, L->kernel, a + 1, L->args[a].name, want, tname);
        }
    }
    size_t wg_max = 0, compile[3] = {0, 0, 0}, dev_items[3] = {0, 0, 0};
    cl_ulong lmem = 0, dev_lmem = 0;
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof(wg_max), &wg_max, NULL);
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof(compile), compile,
                             NULL);
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(lmem), &lmem, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(dev_items), dev_items, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(dev_lmem), &dev_lmem, NULL);
    if (dev_lmem && lmem > dev_lmem)
        problem("launch %d: kernel `%s` uses %llu bytes of __local memory; the device has %llu",
                li + 1, L->kernel, (unsigned long long)lmem, (unsigned long long)dev_lmem);
    for (int i = 0; i < nlocals; i++) {
        int idx, off = 0;
        unsigned long long l[3];
        if (sscanf(locals[i], "%d %llu %llu %llu %n", &idx, &l[0], &l[1], &l[2], &off) < 4 ||
            idx != li)
            continue;
        const char *where = locals[i] + off;
        int given = l[0] != 0;
        if (compile[0] &&
            (!given || l[0] != compile[0] || l[1] != compile[1] || l[2] != compile[2])) {
            problem("launch %d: kernel `%s` declares reqd_work_group_size(%zu,%zu,%zu) but the "
                    "launch uses local=%llu,%llu,%llu on %s",
                    li + 1, L->kernel, compile[0], compile[1], compile[2], l[0], l[1], l[2], where);
            break;
        }
        if (!given)
            continue;
        unsigned long long prod = l[0] * l[1] * l[2];
        if (wg_max && prod > wg_max) {
            problem("launch %d: work-group of %llu work-items on %s; kernel `%s` allows at most "
                    "%zu on this device",
                    li + 1, prod, where, L->kernel, wg_max);
            break;
        }
        for (int d = 0; d < 3; d++)
            if (dev_items[d] && l[d] > dev_items[d]) {
                problem("launch %d: local size %llu in dimension %d exceeds the device's "
                        "maximum %zu",
                        li + 1, l[d], d, dev_items[d]);
                d = 3;
                i = nlocals;
            }
    }
    clReleaseKernel(k);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return infra("usage: ocl_build kernel.cl plan.txt program.bin");
    size_t srclen = 0;
    char *src = read_file(argv[1], &srclen);
    char **locals = NULL;
    int nlocals = 0;
    if (!src || read_plan(argv[2], &locals, &nlocals) < 0)
        return infra("ocl_build: cannot read the source or the plan");
    cl_device_id dev;
    unsigned pi = 0, di = 0;
    char desc[600] = "";
    if (pick_device(&dev, &pi, &di, desc, sizeof(desc)) < 0)
        return infra(getenv("KEVO_OPENCL_DEVICE") && *getenv("KEVO_OPENCL_DEVICE")
                         ? "no OpenCL device matches KEVO_OPENCL_DEVICE"
                         : "no OpenCL platform with a device found (install an ICD such as "
                           "pocl-opencl-icd)");
    FILE *df = fopen("device.txt", "w");
    if (!df)
        return infra("ocl_build: cannot write device.txt");
    fprintf(df, "%u %u\n%s\n", pi, di, desc);
    fclose(df);
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    if (e != CL_SUCCESS)
        return infra("ocl_build: clCreateContext failed");
    const char *srcs[] = {src};
    cl_program prog = clCreateProgramWithSource(ctx, 1, srcs, &srclen, &e);
    if (e != CL_SUCCESS)
        return infra("ocl_build: clCreateProgramWithSource failed");
    e = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    if (e != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = calloc(1, n + 1);
        if (log)
            clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        printf("clBuildProgram failed (%d) on %s:\n", (int)e, desc);
        print_log(log ? log : "");
        putchar('\n');
        return e == CL_BUILD_PROGRAM_FAILURE || e == CL_INVALID_BUILD_OPTIONS ? 1 : 2;
    }
    char names[4096] = "";
    clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, sizeof(names) - 1, names, NULL);
    for (char *c = names; *c; c++)
        if (*c == ';')
            *c = ' ';
    for (int i = 0; i < nlaunches; i++)
        check_kernel(prog, dev, i, names, locals, nlocals);
    if (problems)
        return 1;
    size_t bin_len = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(bin_len), &bin_len, NULL) !=
            CL_SUCCESS ||
        bin_len == 0)
        return infra("ocl_build: the OpenCL implementation gives no program binary");
    unsigned char *bin = malloc(bin_len);
    if (!bin || clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) != CL_SUCCESS)
        return infra("ocl_build: cannot read the program binary");
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(bin, 1, bin_len, out) != bin_len || fclose(out) != 0)
        return infra("ocl_build: cannot write the program binary");
    return 0;
}
