// kevo: launch reduce_sum_dim global=ROUND_UP(E,64),B local=64,1
// A 2-D grid: dimension 0 walks e (contiguous in memory, so a work-group
// reads 64 neighbouring floats per d), dimension 1 is b; each work-item
// sums its column over d.
__kernel void reduce_sum_dim(__global const float *x, __global float *y, const long B,
                             const long D, const long E)
{
    const long e = (long)get_global_id(0), b = (long)get_global_id(1);
    if (e >= E)
        return;
    __global const float *xb = x + b * D * E + e;
    float acc = 0.0f;
    for (long d = 0; d < D; d++)
        acc += xb[d * E];
    y[b * E + e] = acc;
}
