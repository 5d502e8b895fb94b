// kevo: launch relu global=ROUND_UP(N,256) local=256
#include "/etc/passwd"
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N)
        y[i] = fmax(x[i], 0.0f);
}
