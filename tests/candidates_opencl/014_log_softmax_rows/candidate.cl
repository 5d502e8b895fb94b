// kevo: launch log_softmax_rows global=R*128 local=128
// One work-group of 128 per row: reduce the maximum, then the sum of
// exp(x - max), in __local memory; then every work-item writes its columns.
#define LS 128

__kernel void log_softmax_rows(__global const float *x, __global float *y, const long R,
                               const long C)
{
    __local float red[LS];
    const size_t r = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *xr = x + r * C;
    __global float *yr = y + r * C;

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
    barrier(CLK_LOCAL_MEM_FENCE);

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
    const float lse = log(red[0]);
    for (long c = l; c < C; c += LS)
        yr[c] = (xr[c] - m) - lse;
}
