// kevo: launch relu global=N local=64
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    y[i] = fmax(x[i], 0.0f);
}
