// kevo: launch gemm_scale_residual global=ROUND_UP(N,16),ROUND_UP(M,16) local=16,16
// Tiled GEMM with the scale and the residual (z itself) fused into the store.
#define TS 16

/* z[m][n] = b[n] + sum_k x[m][k] * w[n][k] for this work-item's (m, n), with
 * 16x16 tiles of x and w staged in __local memory. Dimension 0 is n,
 * dimension 1 is m; out-of-range work-items still help load tiles. */
static float gemm_bias(__global const float *x, __global const float *w,
                       __global const float *b, long M, long K, long N,
                       __local float (*xs)[TS + 1], __local float (*ws)[TS + 1])
{
    const int ln = (int)get_local_id(0), lm = (int)get_local_id(1);
    const long n0 = (long)get_group_id(0) * TS, m0 = (long)get_group_id(1) * TS;
    float acc = 0.0f;
    for (long k0 = 0; k0 < K; k0 += TS) {
        /* work-item (lm, ln) loads x[m0+lm][k0+ln] and w[n0+lm][k0+ln] */
        xs[lm][ln] = (m0 + lm < M && k0 + ln < K) ? x[(m0 + lm) * K + k0 + ln] : 0.0f;
        ws[lm][ln] = (n0 + lm < N && k0 + ln < K) ? w[(n0 + lm) * K + k0 + ln] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TS; k++)
            acc += xs[lm][k] * ws[ln][k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const long n = n0 + ln;
    return n < N ? acc + b[n] : 0.0f;
}

__attribute__((reqd_work_group_size(TS, TS, 1)))
__kernel void gemm_scale_residual(__global const float *x, __global const float *w,
                                  __global const float *b, __global float *y, const float s, const long M,
                                  const long K, const long N)
{
    __local float xs[TS][TS + 1], ws[TS][TS + 1];
    const float z = gemm_bias(x, w, b, M, K, N, xs, ws);
    const long n = (long)get_global_id(0), m = (long)get_global_id(1);
    if (m < M && n < N)
        y[m * N + n] = z * s + z; /* KernelBench 40: the residual is z itself */
}
