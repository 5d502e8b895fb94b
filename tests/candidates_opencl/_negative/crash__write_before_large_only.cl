// kevo: launch relu global=ROUND_UP(N,256) local=256
/* Honest on the small check sizes; on large sets (N > 65536) it writes 64
 * bytes in front of y, where a buffer without a front red zone has no
 * canary to notice. Expected `crash` from the front red zone. */
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (N > 65536 && i < 16)
        y[(long)i - 16] = 0.0f;
    if (i < N)
        y[i] = fmax(x[i], 0.0f);
}
