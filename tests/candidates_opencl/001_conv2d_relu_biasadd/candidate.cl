// kevo: launch conv_relu_bias global=ROUND_UP((H-KS+1)*(W-KS+1),64),CO,N local=64,1,1
// Direct convolution, one output pixel per work-item: dimension 0 walks
// the output pixels of one (n, co) plane, dimension 1 is co, dimension 2
// is n. Conv bias, ReLU and the second bias are applied in registers.
__kernel void conv_relu_bias(__global const float *x, __global const float *w,
                             __global const float *cb, __global const float *b,
                             __global float *y, const long N, const long CI, const long CO,
                             const long H, const long W, const long KS)
{
    const long HO = H - KS + 1, WO = W - KS + 1;
    const long p = (long)get_global_id(0);
    const long co = (long)get_global_id(1), n = (long)get_global_id(2);
    if (p >= HO * WO)
        return;
    const long oh = p / WO, ow = p % WO;
    float acc = cb[co];
    for (long ci = 0; ci < CI; ci++) {
        __global const float *xp = x + ((n * CI + ci) * H + oh) * W + ow;
        __global const float *wp = w + (co * CI + ci) * KS * KS;
        for (long kh = 0; kh < KS; kh++)
            for (long kw = 0; kw < KS; kw++)
                acc += xp[kh * W + kw] * wp[kh * KS + kw];
    }
    y[((n * CO + co) * HO) * WO + p] = fmax(acc, 0.0f) + b[co];
}
