/*
 * harness/runner_cuda.cu - the device half of a CUDA runner, linked with
 * harness/runner.c (protocol, guarded host buffers, lock-down), a
 * generated call stub (kevo_cuda_call: calls the candidate's extern "C"
 * launcher with device pointers) and the candidate.
 *
 * kevo_harness_setup (before the runner forbids itself exec and open):
 * initialises the device (context, eagerly loaded modules), creates the
 * timing events and a buffer of twice the L2 size used to flush it.
 *
 * kevo_harness_call, per call:
 *   untimed  copy every in/inout buffer and the poisoned out buffers to the
 *            device, write a canary into a red zone after each, flush the
 *            L2 cache (cudaMemset of the flush buffer), synchronise
 *   timed    CUDA events: start, the launcher, cudaDeviceSynchronize (so
 *            work on any stream counts), stop
 *   untimed  check for launch/kernel errors, read out/inout back, check
 *            the red zones
 * A CUDA error ends the runner with KEVO_RUNNER_EXIT_DEVICE and one line on
 * stderr that kevo shows.
 */
#include "protocol.h"

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REDZONE 4096
#define CANARY 0xC5

/* generated per task (call.c): the launcher call and the params' roles */
extern "C" void kevo_cuda_call(void *const *buffers, const double *scalars);
extern "C" const unsigned kevo_cuda_nparams;
extern "C" const unsigned char kevo_cuda_roles[];

static uint64_t cur_bytes[KEVO_RUNNER_MAX_PARAMS];
static struct {
    void *ptr;
    uint64_t bytes;
} dev[KEVO_RUNNER_MAX_PARAMS];
static void *flush_buf;
static size_t flush_bytes;
static cudaEvent_t ev_start, ev_stop;
static int64_t last_ns = -1;
static uint32_t last_bad = UINT32_MAX;
static unsigned char canary[REDZONE], readback[REDZONE];

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n')
            *c = ' ';
    fprintf(stderr, "\n%s\n", msg);
    fflush(stderr);
    _exit(KEVO_RUNNER_EXIT_DEVICE);
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        fail("CUDA: %s failed: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" void kevo_harness_setup(void)
{
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    if (n < 1)
        fail("CUDA: no device");
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaFree(0), "creating the context");
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    flush_bytes = (size_t)(l2 > 0 ? l2 : 64 << 20) * 2;
    check(cudaMalloc(&flush_buf, flush_bytes), "allocating the L2 flush buffer");
    check(cudaEventCreate(&ev_start), "cudaEventCreate");
    check(cudaEventCreate(&ev_stop), "cudaEventCreate");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    memset(canary, CANARY, sizeof(canary));
}

extern "C" void kevo_harness_sizes(const uint64_t *bytes)
{
    memcpy(cur_bytes, bytes, kevo_cuda_nparams * sizeof(uint64_t));
}

extern "C" int64_t kevo_harness_timed_ns(uint32_t *bad)
{
    *bad = last_bad;
    return last_ns;
}

static void *ensure(unsigned p)
{
    if (dev[p].ptr && dev[p].bytes == cur_bytes[p])
        return dev[p].ptr;
    if (dev[p].ptr)
        cudaFree(dev[p].ptr);
    dev[p].ptr = NULL;
    cudaError_t e = cudaMalloc(&dev[p].ptr, cur_bytes[p] + REDZONE);
    if (e != cudaSuccess)
        fail("CUDA: cannot allocate %llu bytes on the device: %s", (unsigned long long)cur_bytes[p],
             cudaGetErrorString(e));
    dev[p].bytes = cur_bytes[p];
    return dev[p].ptr;
}

extern "C" void kevo_harness_call(void *const *buffers, const double *scalars)
{
    void *dptr[KEVO_RUNNER_MAX_PARAMS] = {0};
    const unsigned np = kevo_cuda_nparams;
    for (unsigned p = 0; p < np; p++) {
        if (kevo_cuda_roles[p] == KEVO_RROLE_SCALAR)
            continue;
        dptr[p] = ensure(p);
        /* out buffers arrive poisoned from the runner: the device copy is poisoned too */
        if (cur_bytes[p])
            check(cudaMemcpy(dptr[p], buffers[p], cur_bytes[p], cudaMemcpyHostToDevice),
                  "copying a buffer to the device");
        check(cudaMemcpy((char *)dptr[p] + cur_bytes[p], canary, REDZONE, cudaMemcpyHostToDevice),
              "writing a red zone");
    }
    check(cudaMemset(flush_buf, 0, flush_bytes), "flushing the L2 cache");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before the call");

    check(cudaEventRecord(ev_start, 0), "cudaEventRecord");
    kevo_cuda_call(dptr, scalars);
    cudaError_t launch = cudaGetLastError();
    cudaError_t run = cudaDeviceSynchronize();
    if (launch != cudaSuccess)
        fail("CUDA: the launcher's kernel launch failed: %s (%s)", cudaGetErrorName(launch),
             cudaGetErrorString(launch));
    if (run != cudaSuccess)
        fail("CUDA: the kernel failed: %s (%s)", cudaGetErrorName(run), cudaGetErrorString(run));
    check(cudaEventRecord(ev_stop, 0), "cudaEventRecord");
    check(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, ev_start, ev_stop), "cudaEventElapsedTime");
    last_ns = (int64_t)((double)ms * 1e6);

    last_bad = UINT32_MAX;
    for (unsigned p = 0; p < np; p++) {
        if (kevo_cuda_roles[p] == KEVO_RROLE_SCALAR)
            continue;
        if ((kevo_cuda_roles[p] == KEVO_RROLE_OUT || kevo_cuda_roles[p] == KEVO_RROLE_INOUT) &&
            cur_bytes[p])
            check(cudaMemcpy(buffers[p], dptr[p], cur_bytes[p], cudaMemcpyDeviceToHost),
                  "copying a result back");
        check(cudaMemcpy(readback, (char *)dptr[p] + cur_bytes[p], REDZONE, cudaMemcpyDeviceToHost),
              "reading a red zone");
        if (last_bad == UINT32_MAX && memcmp(readback, canary, REDZONE))
            last_bad = p;
    }
}
