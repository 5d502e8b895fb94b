#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Max pool 2x2x2, stride 2, over nc volumes of D x H x W; the trailing plane of an odd
   extent is dropped. Output nc x D/2 x H/2 x W/2. */
static void pool2(const float *in, float *out, int64_t nc, int64_t D, int64_t H, int64_t W)
{
    const int64_t DP = D / 2, HP = H / 2, WP = W / 2;
    for (int64_t c = 0; c < nc; c++)
        for (int64_t pd = 0; pd < DP; pd++)
            for (int64_t ph = 0; ph < HP; ph++)
                for (int64_t pw = 0; pw < WP; pw++) {
                    float mx = -INFINITY;
                    for (int64_t dd = 0; dd < 2; dd++)
                        for (int64_t dh = 0; dh < 2; dh++)
                            for (int64_t dw = 0; dw < 2; dw++) {
                                float v = in[((c * D + 2 * pd + dd) * H + 2 * ph + dh) * W + 2 * pw + dw];
                                mx = v > mx ? v : mx;
                            }
                    out[((c * DP + pd) * HP + ph) * WP + pw] = mx;
                }
}

void fused_conv3d_softmax_maxpool3d(const float *x, const float *w, const float *cb,
                                    float *y, int64_t N, int64_t CI, int64_t CO, int64_t D,
                                    int64_t H, int64_t W, int64_t KS)
{
    const int64_t DO = D - KS + 1, HO = H - KS + 1, WO = W - KS + 1;
    const int64_t V = DO * HO * WO;
    const int64_t DP = DO / 2, HP = HO / 2, WP = WO / 2;
    float *z = malloc((size_t)(N * CO * V) * sizeof(float));

    /* step 1: conv3d, stride 1, no padding, with bias cb */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t od = 0; od < DO; od++)
                for (int64_t oh = 0; oh < HO; oh++)
                    for (int64_t ow = 0; ow < WO; ow++) {
                        float acc = cb[co];
                        for (int64_t ci = 0; ci < CI; ci++)
                            for (int64_t kd = 0; kd < KS; kd++)
                                for (int64_t kh = 0; kh < KS; kh++)
                                    for (int64_t kw = 0; kw < KS; kw++)
                                        acc += x[(((n * CI + ci) * D + od + kd) * H + oh + kh) * W + ow + kw] *
                                               w[(((co * CI + ci) * KS + kd) * KS + kh) * KS + kw];
                        z[(((n * CO + co) * DO + od) * HO + oh) * WO + ow] = acc;
                    }

    /* step 2: softmax over channels at every voxel (max-subtracted) */
    for (int64_t n = 0; n < N; n++)
        for (int64_t v = 0; v < V; v++) {
            float mx = -INFINITY;
            for (int64_t co = 0; co < CO; co++)
                mx = z[(n * CO + co) * V + v] > mx ? z[(n * CO + co) * V + v] : mx;
            float s = 0.0f;
            for (int64_t co = 0; co < CO; co++) {
                z[(n * CO + co) * V + v] = expf(z[(n * CO + co) * V + v] - mx);
                s += z[(n * CO + co) * V + v];
            }
            for (int64_t co = 0; co < CO; co++)
                z[(n * CO + co) * V + v] /= s;
        }

    /* steps 3 and 4: max pool 2x2x2 stride 2 (trailing planes dropped), twice in a row */
    float *p1 = malloc((size_t)(N * CO * DP * HP * WP) * sizeof(float));
    pool2(z, p1, N * CO, DO, HO, WO);
    pool2(p1, y, N * CO, DP, HP, WP);
    free(p1);
    free(z);
}
