/*
 * tests/helpers/fake_cuda/cuda_runtime.h - a host-memory stand-in for the
 * parts of the CUDA runtime harness/runner_cuda.cu uses, so that the CUDA
 * harness (copies, red zones, poison, error exits, the timing path) can be
 * built with g++ and tested on a machine without a GPU
 * (tests/integration/test_cuda_harness.sh). "Device" memory is host memory;
 * a "kernel" is a host function. Not a CUDA emulator: nothing else works.
 *
 * fake_cuda_fail_next_sync: set by a test candidate to make the next
 * cudaDeviceSynchronize report an illegal address, as a faulting kernel
 * would.
 */
#ifndef FAKE_CUDA_RUNTIME_H
#define FAKE_CUDA_RUNTIME_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum {
    cudaSuccess = 0,
    cudaErrorMemoryAllocation = 2,
    cudaErrorIllegalAddress = 700
} cudaError_t;
typedef enum { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 } cudaMemcpyKind;
typedef enum { cudaDevAttrL2CacheSize = 89 } cudaDeviceAttr;
typedef struct fake_event {
    double t;
} * cudaEvent_t;

extern "C" int fake_cuda_fail_next_sync;

static inline double fake_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
static inline cudaError_t cudaSetDevice(int d)
{
    (void)d;
    return cudaSuccess;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int d)
{
    (void)a;
    (void)d;
    *v = 1 << 20;
    return cudaSuccess;
}
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k)
{
    (void)k;
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void)
{
    if (fake_cuda_fail_next_sync) {
        fake_cuda_fail_next_sync = 0;
        return cudaErrorIllegalAddress;
    }
    return cudaSuccess;
}
static inline cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)calloc(1, sizeof(struct fake_event));
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, int stream)
{
    (void)stream;
    e->t = fake_now_ms();
    return cudaSuccess;
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess;
}
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(b->t - a->t);
    return cudaSuccess;
}
static inline const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaErrorIllegalAddress ? "cudaErrorIllegalAddress" : "cudaError";
}
static inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorIllegalAddress ? "an illegal memory access was encountered" : "error";
}

#endif
