// kevo: launch cumsum_rows global=ROUND_UP(R,64) local=64
// One work-item per row, scanning it in order (the same rounding as the
// reference); rows are independent.
__kernel void cumsum_rows(__global const float *x, __global float *y, const long R,
                          const long C)
{
    const long r = (long)get_global_id(0);
    if (r >= R)
        return;
    __global const float *xr = x + r * C;
    __global float *yr = y + r * C;
    float acc = 0.0f;
    for (long c = 0; c < C; c++) {
        acc += xr[c];
        yr[c] = acc;
    }
}
