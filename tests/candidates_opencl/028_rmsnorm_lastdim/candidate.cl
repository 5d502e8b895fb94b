// kevo: launch rmsnorm_lastdim global=R*128 local=128
// One work-group of 128 per row: sum of squares reduced in __local memory.
#define LS 128

__kernel void rmsnorm_lastdim(__global const float *x, __global const float *weight,
                              __global float *y, const long R, const long C, const float eps)
{
    __local float red[LS];
    const size_t r = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *xr = x + r * C;
    __global float *yr = y + r * C;
    float ss = 0.0f;
    for (long c = l; c < C; c += LS)
        ss += xr[c] * xr[c];
    red[l] = ss;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] += red[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv = rsqrt(red[0] / (float)C + eps);
    for (long c = l; c < C; c += LS)
        yr[c] = xr[c] * inv * weight[c];
}
