// kevo: scratch part f32 256
// kevo: launch mse_partial global=256*256 local=256
// kevo: launch mse_final global=256 local=256
// Two launches: 256 work-groups of 256 stride over all B*D squared
// differences and each reduces its share in __local memory into part[g];
// then one work-group sums the 256 partial sums and writes the mean y[0].
#define LS 256
#define NG 256

/* the sum of v over this work-group, left in red[0] for every work-item */
static float group_sum(__local float *red, float v, int l)
{
    red[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = LS / 2; s > 0; s >>= 1) {
        if (l < s)
            red[l] += red[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return red[0];
}

__kernel void mse_partial(__global const float *pred, __global const float *target,
                          __global float *y, const long B, const long D, __global float *part)
{
    __local float red[LS];
    const int l = (int)get_local_id(0);
    const long n = B * D;
    float s = 0.0f;
    for (long i = (long)get_global_id(0); i < n; i += (long)LS * NG) {
        float diff = pred[i] - target[i];
        s += diff * diff;
    }
    const float total = group_sum(red, s, l);
    if (l == 0)
        part[get_group_id(0)] = total;
}

__kernel void mse_final(__global const float *pred, __global const float *target,
                        __global float *y, const long B, const long D, __global float *part)
{
    __local float red[LS];
    const int l = (int)get_local_id(0);
    const float total = group_sum(red, part[l], l); /* NG == LS: one partial each */
    if (l == 0)
        y[0] = total / ((float)B * (float)D);
}
