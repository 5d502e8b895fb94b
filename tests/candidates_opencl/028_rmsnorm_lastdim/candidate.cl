// kevo: launch rmsnorm_lastdim global=ROUND_UP(N*H*W,256) local=256
// One work-item per (n, h, w) position: it walks the C channels, which lie
// H*W apart, so neighbouring work-items read neighbouring addresses at every
// step (coalesced); the grid is rounded up to whole work-groups, so
// work-items past the end return at once.
__kernel void rmsnorm_lastdim(__global const float *x, __global float *y, const long N,
                              const long C, const long H, const long W, const float eps)
{
    const long HW = H * W;
    const long p = (long)get_global_id(0);
    if (p >= N * HW)
        return;
    const long n = p / HW, i = p - n * HW;
    __global const float *xp = x + n * C * HW + i;
    __global float *yp = y + n * C * HW + i;
    float ss = 0.0f;
    for (long c = 0; c < C; c++)
        ss += xp[c * HW] * xp[c * HW];
    const float inv = rsqrt(ss / (float)C + eps);
    for (long c = 0; c < C; c++)
        yp[c * HW] = xp[c * HW] * inv;
}
