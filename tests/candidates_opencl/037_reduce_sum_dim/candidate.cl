// kevo: launch reduce_sum_dim global=CEIL_DIV(E,256),B local=1,1
// Each work-item owns 256 consecutive columns e of one b and walks d in
// order, adding row d of its chunk (1 KiB, contiguous) into 256 private
// accumulators: the same streaming order as a plain loop nest, on every core.
#define CHUNK 256
__kernel void reduce_sum_dim(__global const float *x, __global float *y, const long B,
                             const long D, const long E)
{
    const long e0 = (long)get_global_id(0) * CHUNK, b = (long)get_global_id(1);
    const long n = E - e0 < CHUNK ? E - e0 : CHUNK;
    __global const float *xb = x + b * D * E + e0;
    float acc[CHUNK];
    for (int k = 0; k < CHUNK; k++)
        acc[k] = 0.0f;
    if (n == CHUNK) {
        for (long d = 0; d < D; d++)
            for (int k = 0; k < CHUNK; k++)
                acc[k] += xb[d * E + k];
    } else {
        for (long d = 0; d < D; d++)
            for (int k = 0; k < n; k++)
                acc[k] += xb[d * E + k];
    }
    for (int k = 0; k < n; k++)
        y[b * E + e0 + k] = acc[k];
}
