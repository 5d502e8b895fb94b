// kevo: launch softplus global=ROUND_UP(N,256) local=256
// Stable form: max(x, 0) + log1p(exp(-|x|)) never overflows.
__kernel void softplus(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N) {
        float v = x[i];
        y[i] = fmax(v, 0.0f) + log1p(exp(-fabs(v)));
    }
}
