// kevo: launch mse_loss global=ROUND_UP(B,64) local=64
// One work-item per row of D squared differences.
__kernel void mse_loss(__global const float *pred, __global const float *target,
                       __global float *y, const long B, const long D)
{
    const long b = (long)get_global_id(0);
    if (b >= B)
        return;
    __global const float *p = pred + b * D;
    __global const float *t = target + b * D;
    float s = 0.0f;
    for (long d = 0; d < D; d++) {
        float diff = p[d] - t[d];
        s += diff * diff;
    }
    y[b] = s / (float)D;
}
