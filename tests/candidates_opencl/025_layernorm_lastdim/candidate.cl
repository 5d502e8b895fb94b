// kevo: launch layernorm_lastdim global=R*128 local=128
// One work-group of 128 per row: mean, then the biased variance of
// (x - mean) (two passes, as stable as the reference), then the affine map.
#define LS 128

static float group_sum(__local float *red, float v, int l)
{
    red[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] += red[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = red[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* red is reused by the next call */
    return total;
}

__kernel void layernorm_lastdim(__global const float *x, __global const float *gamma,
                                __global const float *beta, __global float *y, const long R,
                                const long C, const float eps)
{
    __local float red[LS];
    const size_t r = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *xr = x + r * C;
    __global float *yr = y + r * C;

    float s = 0.0f;
    for (long c = l; c < C; c += LS)
        s += xr[c];
    const float mean = group_sum(red, s, l) / (float)C;
    float v = 0.0f;
    for (long c = l; c < C; c += LS) {
        float d = xr[c] - mean;
        v += d * d;
    }
    const float inv = rsqrt(group_sum(red, v, l) / (float)C + eps);
    for (long c = l; c < C; c += LS)
        yr[c] = (xr[c] - mean) * inv * gamma[c] + beta[c];
}
