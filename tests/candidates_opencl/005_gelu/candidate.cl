// kevo: launch gelu_exact global=ROUND_UP(N,256) local=256
// Exact GELU with the erf built-in (not the tanh approximation).
__kernel void gelu_exact(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i < (size_t)N) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f));
    }
}
