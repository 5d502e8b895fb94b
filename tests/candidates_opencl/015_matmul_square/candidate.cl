// kevo: launch matmul_square global=ROUND_UP(N,16),ROUND_UP(N,16) local=16,16
// Classic 16x16 tiling: each work-group stages a tile of A and of B in
// __local memory per step along k. Dimension 0 is the column j (so
// neighbouring work-items read neighbouring addresses), dimension 1 the
// row i. Tiles past the edge are padded with zeros, and only in-range
// elements are stored.
#define TS 16

__attribute__((reqd_work_group_size(TS, TS, 1)))
__kernel void matmul_square(__global const float *A, __global const float *B,
                            __global float *C, const long N)
{
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    const int lj = (int)get_local_id(0), li = (int)get_local_id(1);
    const long j = (long)get_global_id(0), i = (long)get_global_id(1);
    float acc = 0.0f;
    for (long k0 = 0; k0 < N; k0 += TS) {
        As[li][lj] = (i < N && k0 + lj < N) ? A[i * N + k0 + lj] : 0.0f;
        Bs[li][lj] = (k0 + li < N && j < N) ? B[(k0 + li) * N + j] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            acc += As[li][k] * Bs[k][lj];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i < N && j < N)
        C[i * N + j] = acc;
}
