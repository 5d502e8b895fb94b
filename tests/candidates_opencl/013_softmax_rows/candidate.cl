// kevo: scratch stats f32 2*R
// kevo: launch row_stats global=R*64 local=64
// kevo: launch normalise global=ROUND_UP(R*C,256) local=256
// Two passes: row_stats gives each row to one work-group of 64, which
// reduces the row's maximum and then its sum of exp(x - max) in __local
// memory and stores both in the scratch buffer `stats`; normalise is
// elementwise. Every kernel takes the task's params (x, y, R, C) and then
// the scratch buffers, in declaration order.
#define LS 64

__kernel void row_stats(__global const float *x, __global float *y, const long R,
                        const long C, __global float *stats)
{
    __local float red[LS];
    const size_t r = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *xr = x + r * C;

    float m = -INFINITY;
    for (long c = l; c < C; c += LS)
        m = fmax(m, xr[c]);
    red[l] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] = fmax(red[l], red[l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read red[0] before it is reused */

    float sum = 0.0f;
    for (long c = l; c < C; c += LS)
        sum += exp(xr[c] - m);
    red[l] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] += red[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        stats[2 * r] = m;
        stats[2 * r + 1] = red[0];
    }
}

__kernel void normalise(__global const float *x, __global float *y, const long R,
                        const long C, __global const float *stats)
{
    const size_t i = get_global_id(0);
    if (i >= (size_t)(R * C))
        return;
    const size_t r = i / (size_t)C;
    y[i] = exp(x[i] - stats[2 * r]) / stats[2 * r + 1];
}
