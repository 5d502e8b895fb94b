// kevo: launch tanh_activation global=ROUND_UP(N,128) local=128
__kernel void tanh_activation(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N)
        y[i] = tanh(x[i]);
}
