// kevo: launch relu global=ROUND_UP(N,256) local=256
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    y[i] = fmax(x[i < N ? i : 0], 0.0f);
}
