// kevo: launch leaky_relu global=ROUND_UP(N,256) local=256
// One work-item per element; the float scalar negative_slope arrives as a
// kernel argument like the sizes.
__kernel void leaky_relu(__global const float *x, __global float *y, const long N,
                         const float negative_slope)
{
    size_t i = get_global_id(0);
    if (i >= (size_t)N)
        return;
    float v = x[i];
    y[i] = v > 0.0f ? v : negative_slope * v;
}
