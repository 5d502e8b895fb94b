/*
 * harness/runner_opencl.c - the device half of an OpenCL runner, linked
 * with harness/runner.c (the protocol, guarded host buffers, lock-down),
 * the generated spec.c (launches, scratch buffers, size expressions) and
 * blob.S (the program binary kevo built in the compile gate).
 *
 * kevo_harness_setup (before the runner forbids itself exec and open):
 * opens the device the program was built for, creates the program from
 * the embedded binary (no compiler runs here) and its kernels. With PoCL
 * (POCL_CACHE_DIR set by kevo), it also loads every kernel library PoCL
 * unpacked, by the exact path PoCL will later ask for, so that PoCL's own
 * dlopen() at the first launch finds it loaded and opens no file; kevo
 * runs the runner with POCL_WORK_GROUP_SPECIALIZATION=0 so PoCL never
 * compiles (which needs a linker process) after start-up.
 *
 * kevo_harness_call, per call:
 *   untimed  copy every in/inout buffer and the poisoned out buffers to the
 *            device, poison scratch buffers (NaN / 0x5A), write canaries
 *            into the red zones before and after every device buffer
 *            (each is a sub-buffer of a larger one), clFinish
 *   timed    from the first clEnqueueNDRangeKernel to clFinish returning
 *            (host CLOCK_MONOTONIC): the launches, nothing else
 *   untimed  read out/inout buffers back into the host buffers, check the
 *            red zones (a kernel that wrote before or past a buffer is
 *            reported)
 * Any OpenCL error ends the runner with KEVO_RUNNER_EXIT_DEVICE and one
 * line on stderr that kevo shows as the reason.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include "protocol.h"
#include "runner_opencl.h"

#include <CL/cl.h>
#include <dlfcn.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REDZONE 4096
#define CANARY 0xC5

int kevo_ocl_expr_error;

static cl_device_id device;
static cl_context context;
static cl_command_queue queue;
static cl_program program;
static cl_kernel kernels[64];
static uint64_t cur_bytes[KEVO_RUNNER_MAX_PARAMS];
/* Every device buffer is a sub-buffer of a parent with a red zone of
 * REDZONE bytes in front and behind (the kernel gets the sub-buffer): a
 * write before or past the data lands in a red zone, checked after every
 * call. */
typedef struct {
    cl_mem mem;    /* the sub-buffer the kernel sees */
    cl_mem parent; /* red zone | data (span bytes) | red zone */
    uint64_t bytes, span;
} dev_buffer;
static dev_buffer dev[KEVO_RUNNER_MAX_PARAMS], scratch[16];
static int64_t last_ns = -1;
static uint32_t last_bad = UINT32_MAX;
static unsigned char canary[REDZONE], readback[REDZONE];

static const char *cl_error_name(cl_int e)
{
    switch (e) {
    case CL_DEVICE_NOT_FOUND:
        return "CL_DEVICE_NOT_FOUND";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES:
        return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY:
        return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE:
        return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE:
        return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY:
        return "CL_INVALID_BINARY";
    case CL_INVALID_KERNEL_NAME:
        return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_ARG_INDEX:
        return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE:
        return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE:
        return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS:
        return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION:
        return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE:
        return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE:
        return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE:
        return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE:
        return "CL_INVALID_BUFFER_SIZE";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
        return "a kernel failed";
    default:
        return "OpenCL error";
    }
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* one line: kevo shows the last line of the log */
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    fprintf(stderr, "\n%s\n", msg);
    fflush(stderr);
    _exit(KEVO_RUNNER_EXIT_DEVICE);
}

static void check(cl_int e, const char *what)
{
    if (e != CL_SUCCESS)
        fail("OpenCL: %s failed: %s (%d)", what, cl_error_name(e), (int)e);
}

static int preload(const char *path, const struct stat *sb, int type, struct FTW *f)
{
    (void)sb;
    (void)f;
    size_t n = strlen(path);
    if (type == FTW_F && n > 3 && !strcmp(path + n - 3, ".so") &&
        !dlopen(path, RTLD_NOW | RTLD_LOCAL))
        fail("cannot load the kernel library %s: %s", path, dlerror());
    return 0;
}

void kevo_harness_setup(void)
{
    cl_uint np = 0, nd = 0;
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    cl_int e = clGetPlatformIDs(16, platforms, &np);
    if (e != CL_SUCCESS || np <= kevo_ocl_platform_index)
        fail("OpenCL: the platform the program was built for is gone (%u platforms)", np);
    e = clGetDeviceIDs(platforms[kevo_ocl_platform_index], CL_DEVICE_TYPE_ALL, 16, devices, &nd);
    if (e != CL_SUCCESS || nd <= kevo_ocl_device_index)
        fail("OpenCL: the device the program was built for is gone");
    device = devices[kevo_ocl_device_index];
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &e);
    check(e, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &e);
    check(e, "clCreateCommandQueue");
    size_t len = (size_t)(kevo_ocl_binary_end - kevo_ocl_binary);
    const unsigned char *bin = kevo_ocl_binary;
    cl_int status = CL_SUCCESS;
    program = clCreateProgramWithBinary(context, 1, &device, &len, &bin, &status, &e);
    check(e != CL_SUCCESS ? e : status, "clCreateProgramWithBinary");
    e = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[400] = "";
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
        fail("OpenCL: loading the program binary failed: %s", log);
    }
    for (unsigned i = 0; i < kevo_ocl_nlaunches && i < 64; i++) {
        kernels[i] = clCreateKernel(program, kevo_ocl_launches[i].kernel, &e);
        if (e != CL_SUCCESS)
            fail("OpenCL: clCreateKernel(%s) failed: %s", kevo_ocl_launches[i].kernel,
                 cl_error_name(e));
    }
    const char *cache = getenv("POCL_CACHE_DIR");
    if (cache && *cache)
        nftw(cache, preload, 16, FTW_PHYS);
    memset(canary, CANARY, sizeof(canary));
}

void kevo_harness_sizes(const uint64_t *bytes)
{
    memcpy(cur_bytes, bytes, kevo_ocl_nparams * sizeof(uint64_t));
}

int64_t kevo_harness_timed_ns(uint32_t *bad)
{
    *bad = last_bad;
    return last_ns;
}

static size_t type_size(unsigned char t)
{
    return t == KEVO_RT_F64 || t == KEVO_RT_I64 ? 8 : t == KEVO_RT_U8 ? 1 : 4;
}

/* A device buffer of `bytes` between two red zones, re-created when the
 * size changes. */
static cl_mem ensure(dev_buffer *d, uint64_t bytes, const char *name)
{
    if (d->mem && d->bytes == bytes)
        return d->mem;
    if (d->mem)
        clReleaseMemObject(d->mem);
    if (d->parent)
        clReleaseMemObject(d->parent);
    cl_int e;
    /* a sub-buffer may not be empty; REDZONE keeps the origin aligned */
    uint64_t span = bytes ? bytes : 64;
    d->parent = clCreateBuffer(context, CL_MEM_READ_WRITE, span + 2 * REDZONE, NULL, &e);
    if (e != CL_SUCCESS)
        fail("OpenCL: cannot allocate %llu bytes on the device for '%s': %s",
             (unsigned long long)bytes, name, cl_error_name(e));
    cl_buffer_region region = {REDZONE, span};
    d->mem = clCreateSubBuffer(d->parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                               &region, &e);
    if (e != CL_SUCCESS)
        fail("OpenCL: cannot place '%s' between red zones (clCreateSubBuffer): %s", name,
             cl_error_name(e));
    d->bytes = bytes;
    d->span = span;
    return d->mem;
}

static void write_redzones(const dev_buffer *d)
{
    check(clEnqueueWriteBuffer(queue, d->parent, CL_FALSE, 0, REDZONE, canary, 0, NULL, NULL),
          "writing a red zone");
    check(clEnqueueWriteBuffer(queue, d->parent, CL_FALSE, REDZONE + d->span, REDZONE, canary, 0,
                               NULL, NULL),
          "writing a red zone");
}

static void poison(cl_mem mem, unsigned char type, uint64_t bytes)
{
    if (!bytes)
        return;
    uint64_t f64 = 0x7ff8000000000000ull;
    uint32_t f32 = 0x7fc00000u;
    unsigned char b = 0x5A;
    const void *pat = type == KEVO_RT_F32   ? (const void *)&f32
                      : type == KEVO_RT_F64 ? (const void *)&f64
                                            : (const void *)&b;
    size_t n = type == KEVO_RT_F32 ? 4 : type == KEVO_RT_F64 ? 8 : 1;
    if (bytes % n)
        n = 1, pat = &b;
    check(clEnqueueFillBuffer(queue, mem, pat, n, 0, bytes, 0, NULL, NULL), "poisoning a buffer");
}

static int redzones_intact(const dev_buffer *d)
{
    for (int k = 0; k < 2; k++) {
        check(clEnqueueReadBuffer(queue, d->parent, CL_TRUE, k ? REDZONE + d->span : 0, REDZONE,
                                  readback, 0, NULL, NULL),
              "reading a red zone");
        if (memcmp(readback, canary, REDZONE))
            return 0;
    }
    return 1;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void kevo_harness_call(void *const *buffers, const double *scalars)
{
    const unsigned np = kevo_ocl_nparams;
    /* untimed: buffers, copies, poison, red zones */
    for (unsigned p = 0; p < np; p++) {
        if (kevo_ocl_roles[p] == KEVO_RROLE_SCALAR)
            continue;
        cl_mem m = ensure(&dev[p], cur_bytes[p], kevo_ocl_param_names[p]);
        /* out buffers arrive poisoned from the runner: copying them poisons the device copy */
        if (cur_bytes[p])
            check(clEnqueueWriteBuffer(queue, m, CL_FALSE, 0, cur_bytes[p], buffers[p], 0, NULL,
                                       NULL),
                  "copying a buffer to the device");
        write_redzones(&dev[p]);
    }
    for (unsigned j = 0; j < kevo_ocl_nscratch; j++) {
        int64_t count;
        if (kevo_ocl_scratch_count(j, scalars, &count) < 0 || count < 0)
            fail("scratch buffer '%s': its element count is negative or divides by zero",
                 kevo_ocl_scratch_names[j]);
        uint64_t bytes = (uint64_t)count * type_size(kevo_ocl_scratch_types[j]);
        cl_mem m = ensure(&scratch[j], bytes, kevo_ocl_scratch_names[j]);
        poison(m, kevo_ocl_scratch_types[j], bytes);
        write_redzones(&scratch[j]);
    }
    size_t global[64][3], local[64][3];
    for (unsigned i = 0; i < kevo_ocl_nlaunches; i++) {
        const kevo_ocl_launch_desc *L = &kevo_ocl_launches[i];
        int64_t g[3], l[3];
        if (kevo_ocl_geometry(i, scalars, g, l) < 0)
            fail("launch %u (%s): a size expression divides by zero or overflows", i + 1,
                 L->kernel);
        for (unsigned d = 0; d < L->dims; d++) {
            if (g[d] < 1 || (L->has_local && l[d] < 1))
                fail("launch %u (%s): work size %lld / local size %lld in dimension %u must be "
                     ">= 1",
                     i + 1, L->kernel, (long long)g[d], (long long)l[d], d);
            if (L->has_local && g[d] % l[d])
                fail("launch %u (%s): global size %lld is not a multiple of local size %lld in "
                     "dimension %u (OpenCL 1.2 requires it: round up with ROUND_UP)",
                     i + 1, L->kernel, (long long)g[d], (long long)l[d], d);
            global[i][d] = (size_t)g[d];
            local[i][d] = (size_t)l[d];
        }
        for (unsigned a = 0; a < L->nargs; a++) {
            int k = L->args[a];
            cl_int e;
            if (k < 0) {
                e = clSetKernelArg(kernels[i], a, sizeof(cl_mem), &scratch[-k - 1].mem);
            } else if (kevo_ocl_roles[k] != KEVO_RROLE_SCALAR) {
                e = clSetKernelArg(kernels[i], a, sizeof(cl_mem), &dev[k].mem);
            } else {
                double v = scalars[k];
                cl_float f32 = (cl_float)v;
                cl_double f64 = v;
                cl_int i32 = (cl_int)v;
                cl_long i64 = (cl_long)v;
                cl_uchar u8 = (cl_uchar)v;
                switch (kevo_ocl_types[k]) {
                case KEVO_RT_F32:
                    e = clSetKernelArg(kernels[i], a, sizeof(f32), &f32);
                    break;
                case KEVO_RT_F64:
                    e = clSetKernelArg(kernels[i], a, sizeof(f64), &f64);
                    break;
                case KEVO_RT_I32:
                    e = clSetKernelArg(kernels[i], a, sizeof(i32), &i32);
                    break;
                case KEVO_RT_I64:
                    e = clSetKernelArg(kernels[i], a, sizeof(i64), &i64);
                    break;
                default:
                    e = clSetKernelArg(kernels[i], a, sizeof(u8), &u8);
                    break;
                }
            }
            if (e != CL_SUCCESS)
                fail("launch %u (%s): setting argument %u failed: %s (does the kernel take the "
                     "task's params in order, with the types of docs/backends/opencl.md?)",
                     i + 1, L->kernel, a, cl_error_name(e));
        }
    }
    check(clFinish(queue), "clFinish before the launches");

    /* timed: the launches, to completion */
    int64_t t0 = now_ns();
    for (unsigned i = 0; i < kevo_ocl_nlaunches; i++) {
        const kevo_ocl_launch_desc *L = &kevo_ocl_launches[i];
        cl_int e = clEnqueueNDRangeKernel(queue, kernels[i], L->dims, NULL, global[i],
                                          L->has_local ? local[i] : NULL, 0, NULL, NULL);
        if (e != CL_SUCCESS)
            fail("launch %u (%s): clEnqueueNDRangeKernel failed: %s", i + 1, L->kernel,
                 cl_error_name(e));
    }
    check(clFinish(queue), "clFinish after the launches");
    last_ns = now_ns() - t0;

    /* untimed: results back, red zones */
    for (unsigned p = 0; p < np; p++)
        if ((kevo_ocl_roles[p] == KEVO_RROLE_OUT || kevo_ocl_roles[p] == KEVO_RROLE_INOUT) &&
            cur_bytes[p])
            check(clEnqueueReadBuffer(queue, dev[p].mem, CL_TRUE, 0, cur_bytes[p], buffers[p], 0,
                                      NULL, NULL),
                  "copying a result back");
    last_bad = UINT32_MAX;
    for (unsigned p = 0; p < np && last_bad == UINT32_MAX; p++)
        if (kevo_ocl_roles[p] != KEVO_RROLE_SCALAR && !redzones_intact(&dev[p]))
            last_bad = p;
    for (unsigned j = 0; j < kevo_ocl_nscratch; j++)
        if (!redzones_intact(&scratch[j]))
            fail("the kernel wrote before or past scratch buffer '%s' (out-of-bounds write)",
                 kevo_ocl_scratch_names[j]);
}
