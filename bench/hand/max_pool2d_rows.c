// kevo: cflags -fopenmp -ffast-math
/*
 * bench/hand/max_pool2d_rows.c - a hand-written max_pool2d (the task
 * suites/c/level1/033_max_pool2d), kept as a measured target for a recipe
 * the built-in generator does not have yet (docs/performance.md, "Where
 * the rest of the gap lies"). Not used by kevo itself.
 *
 * Two moves on the reference: the output columns whose window lies inside
 * the row (ow_lo <= ow < ow_hi) are split from the border ones, so their
 * taps need no bounds test; and for those, the window loops run outside a
 * loop along the output row, which takes the running maximum in place in
 * the row (contiguous loads when S == 1: a vector loop). The border columns
 * run as the reference writes them.
 *
 *   kevo eval suites/c/level1/033_max_pool2d bench/hand/max_pool2d_rows.c --quick
 */
#include <math.h>
#include <stdint.h>

static void border(const float *xp, float *yr, int64_t oh, int64_t ow, int64_t H, int64_t W,
                   int64_t K, int64_t S, int64_t P)
{
    float m = -INFINITY;
    for (int64_t kh = 0; kh < K; kh++) {
        int64_t ih = oh * S - P + kh;
        if (ih < 0 || ih >= H)
            continue;
        for (int64_t kw = 0; kw < K; kw++) {
            int64_t iw = ow * S - P + kw;
            if (iw < 0 || iw >= W)
                continue;
            float v = xp[ih * W + iw];
            if (v > m)
                m = v;
        }
    }
    yr[ow] = m;
}

void max_pool2d(const float *x, float *y, int64_t N, int64_t C, int64_t H, int64_t W,
                int64_t K, int64_t S, int64_t P)
{
    int64_t OH = (H + 2 * P - K) / S + 1;
    int64_t OW = (W + 2 * P - K) / S + 1;
    /* interior: ow * S - P >= 0 and ow * S - P + K - 1 <= W - 1 */
    int64_t ow_lo = (P + S - 1) / S;
    int64_t ow_hi = W - K + P >= 0 ? (W - K + P) / S + 1 : 0;
    if (ow_hi > OW)
        ow_hi = OW;
    if (ow_lo > ow_hi)
        ow_lo = ow_hi;
#pragma omp parallel for
    for (int64_t nc = 0; nc < N * C; nc++) {
        const float *xp = x + nc * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + nc * OH * OW + oh * OW;
            for (int64_t ow = 0; ow < ow_lo; ow++)
                border(xp, yr, oh, ow, H, W, K, S, P);
            for (int64_t ow = ow_hi; ow < OW; ow++)
                border(xp, yr, oh, ow, H, W, K, S, P);
            for (int64_t ow = ow_lo; ow < ow_hi; ow++)
                yr[ow] = -INFINITY;
            for (int64_t kh = 0; kh < K; kh++) {
                int64_t ih = oh * S - P + kh;
                if (ih < 0 || ih >= H)
                    continue;
                const float *xr = xp + ih * W - P;
                for (int64_t kw = 0; kw < K; kw++) {
                    if (S == 1) {
#pragma omp simd
                        for (int64_t ow = ow_lo; ow < ow_hi; ow++)
                            yr[ow] = xr[ow + kw] > yr[ow] ? xr[ow + kw] : yr[ow];
                    } else {
#pragma omp simd
                        for (int64_t ow = ow_lo; ow < ow_hi; ow++)
                            yr[ow] = xr[ow * S + kw] > yr[ow] ? xr[ow * S + kw] : yr[ow];
                    }
                }
            }
        }
    }
}
