// ReLU: one thread per element, grid-stride loop so any N fits a fixed grid.
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fmaxf(x[i], 0.0f);
}

extern "C" void relu(const float *x, float *y, int64_t N)
{
    const int threads = 256;
    int64_t blocks = (N + threads - 1) / threads;
    if (blocks > 65535)
        blocks = 65535;
    relu_kernel<<<(unsigned)blocks, threads>>>(x, y, N);
}
