// kevo: launch relu global=ROUND_UP(N,256) local=256
/* Casts the const away and scribbles in front of the input x (a place
 * the kernel may use as hidden scratch between calls if nothing looks).
 * The front red zone of x's device buffer must see it: `crash`. */
__kernel void relu(__global const float *x, __global float *y, const long N)
{
    size_t i = get_global_id(0);
    __global float *w = (__global float *)x;
    if (i == 0)
        w[-4] = 42.0f;
    if (i < N)
        y[i] = fmax(x[i], 0.0f);
}
