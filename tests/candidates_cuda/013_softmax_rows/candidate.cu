// Row softmax: one block of 256 threads per row. Each thread strides over
// the row; the maximum and the sum of exp(x - max) are reduced with warp
// shuffles and a small shared array.
#include <cuda_runtime.h>
#include <stdint.h>

#define THREADS 256

__device__ float block_reduce(float v, bool is_max, float *shared)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < THREADS / 32 ? shared[lane] : (is_max ? -INFINITY : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            float other = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, other) : v + other;
        }
        if (lane == 0)
            shared[0] = v;
    }
    __syncthreads();
    v = shared[0];
    __syncthreads(); /* shared is reused by the next reduction */
    return v;
}

__global__ void softmax_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t C)
{
    __shared__ float shared[THREADS / 32];
    const float *xr = x + (int64_t)blockIdx.x * C;
    float *yr = y + (int64_t)blockIdx.x * C;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < C; c += THREADS)
        m = fmaxf(m, xr[c]);
    m = block_reduce(m, true, shared);
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < C; c += THREADS)
        s += __expf(xr[c] - m);
    s = block_reduce(s, false, shared);
    const float inv = 1.0f / s;
    for (int64_t c = threadIdx.x; c < C; c += THREADS)
        yr[c] = __expf(xr[c] - m) * inv;
}

extern "C" void softmax_rows(const float *x, float *y, int64_t R, int64_t C)
{
    if (R > 0)
        softmax_kernel<<<(unsigned)R, THREADS>>>(x, y, C);
}
