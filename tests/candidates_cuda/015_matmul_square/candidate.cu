// Square matmul: 32x32 output tiles per block of 32x8 threads, each thread
// computing 4 outputs of a column; tiles of A and B staged in shared
// memory (B's tile padded against bank conflicts). Edges are zero-padded.
#include <cuda_runtime.h>
#include <stdint.h>

#define TILE 32
#define ROWS 8

__global__ void matmul_kernel(const float *__restrict__ A, const float *__restrict__ B,
                              float *__restrict__ C, int64_t N)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    const int64_t row0 = (int64_t)blockIdx.y * TILE + ty;
    float acc[TILE / ROWS] = {0.0f};
    for (int64_t k0 = 0; k0 < N; k0 += TILE) {
        for (int r = 0; r < TILE; r += ROWS) {
            int64_t ar = row0 + r, ac = k0 + tx;
            As[ty + r][tx] = (ar < N && ac < N) ? A[ar * N + ac] : 0.0f;
            int64_t br = k0 + ty + r;
            Bs[ty + r][tx] = (br < N && col < N) ? B[br * N + col] : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            float b = Bs[k][tx];
            for (int r = 0; r < TILE / ROWS; r++)
                acc[r] += As[ty + r * ROWS][k] * b;
        }
        __syncthreads();
    }
    for (int r = 0; r < TILE / ROWS; r++) {
        int64_t row = row0 + r * ROWS;
        if (row < N && col < N)
            C[row * N + col] = acc[r];
    }
}

extern "C" void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    dim3 block(TILE, ROWS);
    dim3 grid((unsigned)((N + TILE - 1) / TILE), (unsigned)((N + TILE - 1) / TILE));
    matmul_kernel<<<grid, block>>>(A, B, C, N);
}
