// kevo: cflags -O3 -march=native -fopenmp
/*
 * convtranspose2d_scatter.c - RACY on purpose: Level 2's
 * convtranspose2d_gelu_groupnorm as `permute` (reduce 8) wrote it before
 * 76dfb08, threads over (n, ih) with collapse(2) while input row ih adds
 * into output rows ih*S .. ih*S+KS-1: neighbouring rows' threads add into
 * the same elements. A best kernel of a session-48 run, called correct
 * there. Input to bench/race_probe.sh; never a suite answer.
 */
#include <math.h>
#include <stdint.h>

void fused_convtranspose2d_gelu_groupnorm(const float *x, const float *w, const float *cb,
                                          const float *gamma, const float *beta, float *y,
                                          float eps, int64_t N, int64_t CI, int64_t CO,
                                          int64_t H, int64_t W, int64_t KS, int64_t S,
                                          int64_t G)
{
    const int64_t HO = (H - 1) * S + KS, WO = (W - 1) * S + KS;
    const int64_t V = HO * WO, CG = CO / G;

    /* step 1: transposed conv2d, stride S, no padding, bias cb: input pixel (ih, iw)
       with tap (kh, kw) lands on (ih*S + kh, iw*S + kw) */
    #pragma omp parallel for collapse(2)
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t p = 0; p < V; p++)
                y[(n * CO + co) * V + p] = cb[co];
    { /* kevo permute: the loop at line 26 along the element, the loops that only add into it innermost */
        #pragma omp parallel for collapse(2)
        for (int64_t n = 0; n < N; n++) {
            for (int64_t ih = 0; ih < H; ih++) {
                for (int64_t iw = 0; iw < W; iw++) {
                    for (int64_t co = 0; co < CO; co++) {
                        for (int64_t kh = 0; kh < (KS > 0 ? KS / 4 * 4 : 0); kh += 4) {
                            {
                                typedef float vf __attribute__((vector_size(32), aligned(4), may_alias));
                                const int64_t kw_vend = (0) + (KS - (0) > 0 ? (KS - (0)) / 8 * 8 : 0);
                                for (int64_t kw = (0); kw < kw_vend; kw += 8) {
                                vf acc_0 = (0.0f) - (vf){0};
                                vf acc_1 = (0.0f) - (vf){0};
                                vf acc_2 = (0.0f) - (vf){0};
                                vf acc_3 = (0.0f) - (vf){0};
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc_0 += (v * (*(const vf *)&w[((ci * CO + co) * KS + kh) * KS + kw])) - (vf){0};
                                    acc_1 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 1)) * KS + kw])) - (vf){0};
                                    acc_2 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 2)) * KS + kw])) - (vf){0};
                                    acc_3 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 3)) * KS + kw])) - (vf){0};
                                }
                                (*(vf *)&y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw]) += (acc_0) - (vf){0};
                                (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 1)) * WO + iw * S + kw]) += (acc_1) - (vf){0};
                                (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 2)) * WO + iw * S + kw]) += (acc_2) - (vf){0};
                                (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 3)) * WO + iw * S + kw]) += (acc_3) - (vf){0};
                            }
                                if (kw_vend < KS && KS - (0) >= 8) {
                                    const int64_t kw = KS - 8;
                                    const int kw_lane0 = (int)(kw_vend - kw);
                                    {
                                vf acc_0 = (0.0f) - (vf){0};
                                vf acc_1 = (0.0f) - (vf){0};
                                vf acc_2 = (0.0f) - (vf){0};
                                vf acc_3 = (0.0f) - (vf){0};
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc_0 += (v * (*(const vf *)&w[((ci * CO + co) * KS + kh) * KS + kw])) - (vf){0};
                                    acc_1 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 1)) * KS + kw])) - (vf){0};
                                    acc_2 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 2)) * KS + kw])) - (vf){0};
                                    acc_3 += (v * (*(const vf *)&w[((ci * CO + co) * KS + (kh + 3)) * KS + kw])) - (vf){0};
                                }
                                { vf vout = (*(vf *)&y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw]) + (acc_0) - (vf){0}; for (int lane = kw_lane0; lane < (int)(sizeof(vf) / sizeof(float)); lane++) y[(((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw) + lane] = vout[lane]; }
                                { vf vout = (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 1)) * WO + iw * S + kw]) + (acc_1) - (vf){0}; for (int lane = kw_lane0; lane < (int)(sizeof(vf) / sizeof(float)); lane++) y[(((n * CO + co) * HO + ih * S + (kh + 1)) * WO + iw * S + kw) + lane] = vout[lane]; }
                                { vf vout = (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 2)) * WO + iw * S + kw]) + (acc_2) - (vf){0}; for (int lane = kw_lane0; lane < (int)(sizeof(vf) / sizeof(float)); lane++) y[(((n * CO + co) * HO + ih * S + (kh + 2)) * WO + iw * S + kw) + lane] = vout[lane]; }
                                { vf vout = (*(vf *)&y[((n * CO + co) * HO + ih * S + (kh + 3)) * WO + iw * S + kw]) + (acc_3) - (vf){0}; for (int lane = kw_lane0; lane < (int)(sizeof(vf) / sizeof(float)); lane++) y[(((n * CO + co) * HO + ih * S + (kh + 3)) * WO + iw * S + kw) + lane] = vout[lane]; }
                            }
                                } else
                                    for (int64_t kw = kw_vend; kw < KS; kw++) {
                                float acc_0 = 0.0f;
                                float acc_1 = 0.0f;
                                float acc_2 = 0.0f;
                                float acc_3 = 0.0f;
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc_0 += v * w[((ci * CO + co) * KS + kh) * KS + kw];
                                    acc_1 += v * w[((ci * CO + co) * KS + (kh + 1)) * KS + kw];
                                    acc_2 += v * w[((ci * CO + co) * KS + (kh + 2)) * KS + kw];
                                    acc_3 += v * w[((ci * CO + co) * KS + (kh + 3)) * KS + kw];
                                }
                                y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw] += acc_0;
                                y[((n * CO + co) * HO + ih * S + (kh + 1)) * WO + iw * S + kw] += acc_1;
                                y[((n * CO + co) * HO + ih * S + (kh + 2)) * WO + iw * S + kw] += acc_2;
                                y[((n * CO + co) * HO + ih * S + (kh + 3)) * WO + iw * S + kw] += acc_3;
                            }
                            }
                        }
                        for (int64_t kh = (KS > 0 ? KS / 4 * 4 : 0); kh < KS; kh++) {
                            {
                                typedef float vf2 __attribute__((vector_size(32), aligned(4), may_alias));
                                const int64_t kw_vend2 = (0) + (KS - (0) > 0 ? (KS - (0)) / 8 * 8 : 0);
                                for (int64_t kw = (0); kw < kw_vend2; kw += 8) {
                                vf2 acc = (0.0f) - (vf2){0};
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc += (v * (*(const vf2 *)&w[((ci * CO + co) * KS + kh) * KS + kw])) - (vf2){0};
                                }
                                (*(vf2 *)&y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw]) += (acc) - (vf2){0};
                            }
                                if (kw_vend2 < KS && KS - (0) >= 8) {
                                    const int64_t kw = KS - 8;
                                    const int kw_lane02 = (int)(kw_vend2 - kw);
                                    {
                                vf2 acc = (0.0f) - (vf2){0};
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc += (v * (*(const vf2 *)&w[((ci * CO + co) * KS + kh) * KS + kw])) - (vf2){0};
                                }
                                { vf2 vout2 = (*(vf2 *)&y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw]) + (acc) - (vf2){0}; for (int lane2 = kw_lane02; lane2 < (int)(sizeof(vf2) / sizeof(float)); lane2++) y[(((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw) + lane2] = vout2[lane2]; }
                            }
                                } else
                                    for (int64_t kw = kw_vend2; kw < KS; kw++) {
                                float acc = 0.0f;
                                for (int64_t ci = 0; ci < CI; ci++) {
                                    float v = x[((n * CI + ci) * H + ih) * W + iw];
                                    acc += v * w[((ci * CO + co) * KS + kh) * KS + kw];
                                }
                                y[((n * CO + co) * HO + ih * S + kh) * WO + iw * S + kw] += acc;
                            }
                            }
                        }
                    }
                }
            }
        }
    }

    /* step 2: exact GELU */
    #pragma omp parallel for
    for (int64_t i = 0; i < N * CO * V; i++)
        y[i] = 0.5f * y[i] * (1.0f + erff(y[i] * 0.70710678118654752f));

    /* step 3: group norm (G groups of CO/G channels, biased variance), affine gamma/beta */
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            float *grp = &y[(n * CO + g * CG) * V];
            const int64_t cnt = CG * V;
            double mu = 0.0, var = 0.0;
            for (int64_t i = 0; i < cnt; i++)
                mu += grp[i];
            mu /= (double)cnt;
            for (int64_t i = 0; i < cnt; i++)
                var += (grp[i] - mu) * (grp[i] - mu);
            var /= (double)cnt;
            float inv = 1.0f / sqrtf((float)var + eps);
            for (int64_t c = g * CG; c < (g + 1) * CG; c++)
                for (int64_t p = 0; p < V; p++) {
                    float *v = &y[(n * CO + c) * V + p];
                    *v = (*v - (float)mu) * inv * gamma[c] + beta[c];
                }
        }
}
