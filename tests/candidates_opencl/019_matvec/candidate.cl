// kevo: launch matvec global=M*64 local=64
// One work-group of 64 per row of A: strided partial dot products, then a
// tree reduction in __local memory.
#define LS 64

__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     const long M, const long K)
{
    __local float red[LS];
    const size_t row = get_group_id(0);
    const int l = (int)get_local_id(0);
    __global const float *a = A + row * K;
    float s = 0.0f;
    for (long k = l; k < K; k += LS)
        s += a[k] * x[k];
    red[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = LS / 2; h > 0; h >>= 1) {
        if (l < h)
            red[l] += red[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        y[row] = red[0];
}
