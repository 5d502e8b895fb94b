// kevo: launch sigmoid global=ROUND_UP(CEIL_DIV(N,4),256) local=256
// Four elements per work-item through float4 loads and stores; the last
// work-item with a partial group of four falls back to scalar code.
__kernel void sigmoid(__global const float *x, __global float *y, const long N)
{
    size_t q = get_global_id(0);
    size_t i = 4 * q;
    if (i + 4 <= (size_t)N) {
        float4 v = vload4(q, x);
        vstore4(1.0f / (1.0f + exp(-v)), q, y);
    } else {
        for (; i < (size_t)N; i++)
            y[i] = 1.0f / (1.0f + exp(-x[i]));
    }
}
