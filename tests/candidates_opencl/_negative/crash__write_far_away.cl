// kevo: launch relu global=ROUND_UP(N,256) local=256
// Writes far outside the output buffer (host memory, on a CPU device).
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N)
        y[i] = fmax(x[i], 0.0f);
    if (i == 0)
        y[-((long)1 << 40)] = 1.0f;
}
