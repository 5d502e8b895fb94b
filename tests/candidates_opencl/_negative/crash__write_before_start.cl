// kevo: launch relu global=ROUND_UP(N,256) local=256
/* Writes one float in front of y (y[-1]) from the first work-item, on
 * every call. The device buffer's front red zone must see it: `crash`. */
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    if (i == 0)
        y[-1] = 1.0f;
    if (i < N)
        y[i] = fmax(x[i], 0.0f);
}
