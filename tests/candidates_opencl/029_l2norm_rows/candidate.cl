// kevo: launch l2norm_rows global=R*64 local=64
// One work-group of 64 per row. The sum of squares is accumulated in
// double (cl_khr_fp64) because the tolerance is tight.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define LS 64

__kernel void l2norm_rows(__global const float *x, __global float *y, const long R,
                          const long C)
{
    __local double red[LS];
    const size_t r = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *xr = x + r * C;
    __global float *yr = y + r * C;
    double ss = 0.0;
    for (long c = l; c < C; c += LS)
        ss += (double)xr[c] * xr[c];
    red[l] = ss;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] += red[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const double inv = 1.0 / sqrt(red[0]);
    for (long c = l; c < C; c += LS)
        yr[c] = (float)(xr[c] * inv);
}
