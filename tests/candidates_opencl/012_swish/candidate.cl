// kevo: launch swish global=ROUND_UP(N,256) local=256
// kevo: options -cl-mad-enable
__kernel void swish(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N) {
        float v = x[i];
        y[i] = v / (1.0f + native_exp(-v));
    }
}
