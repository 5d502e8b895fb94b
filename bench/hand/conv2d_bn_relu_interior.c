/*
 * bench/hand/conv2d_bn_relu_interior.c - the Level 2 task
 * suites/c/level2/004_conv2d_batchnorm_relu with its convolution split by
 * hand into the border outputs (whose 3x3 window crosses the zero padding:
 * the reference's bounds test on every tap) and the interior ones (whose
 * window lies inside the image: no test). Kept as a measured target for a
 * recipe the built-in generator does not have yet, index-set splitting of
 * a loop at the bounds its guards imply (docs/performance.md, "The border
 * split by hand"). Not used by kevo itself.
 *
 * The bounds test keeps `vectorize` and so `register_block` off the
 * reference; on the interior nest they apply as on Level 1's conv2d:
 *
 *   build/tests/recipe_apply bench/hand/conv2d_bn_relu_interior.c \
 *       fused_conv2d_batchnorm_relu register_block omp_parallel > K.c
 *   build/kevo eval suites/c/level2/004_conv2d_batchnorm_relu K.c --quick
 */
#include <math.h>
#include <stdint.h>

void fused_conv2d_batchnorm_relu(const float *x, const float *w, const float *gamma,
                                 const float *beta, const float *mean, const float *var,
                                 float *y, float eps, int64_t N, int64_t CI, int64_t CO,
                                 int64_t H, int64_t W)
{
    /* step 1: conv2d, 3x3 kernel, stride 1, zero padding 1, no bias */
    /* (by hand: rows/columns whose window lies inside the image split from the border ones) */
    const int64_t oh_lo = H < 1 ? H : 1, oh_hi = H - 1 > oh_lo ? H - 1 : oh_lo;
    const int64_t ow_lo = W < 1 ? W : 1, ow_hi = W - 1 > ow_lo ? W - 1 : ow_lo;
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t oh = 0; oh < H; oh++)
                for (int64_t ow = 0; ow < W; ow++) {
                    if (oh >= oh_lo && oh < oh_hi && ow >= ow_lo && ow < ow_hi)
                        continue;
                    float acc = 0.0f;
                    for (int64_t ci = 0; ci < CI; ci++)
                        for (int64_t kh = 0; kh < 3; kh++)
                            for (int64_t kw = 0; kw < 3; kw++) {
                                int64_t ih = oh + kh - 1, iw = ow + kw - 1;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                acc += x[((n * CI + ci) * H + ih) * W + iw] *
                                       w[((co * CI + ci) * 3 + kh) * 3 + kw];
                            }
                    y[((n * CO + co) * H + oh) * W + ow] = acc;
                }
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++)
            for (int64_t oh = oh_lo; oh < oh_hi; oh++)
                for (int64_t ow = ow_lo; ow < ow_hi; ow++) {
                    float acc = 0.0f;
                    for (int64_t ci = 0; ci < CI; ci++)
                        for (int64_t kh = 0; kh < 3; kh++)
                            for (int64_t kw = 0; kw < 3; kw++)
                                acc += x[((n * CI + ci) * H + oh + kh - 1) * W + ow + kw - 1] *
                                       w[((co * CI + ci) * 3 + kh) * 3 + kw];
                    y[((n * CO + co) * H + oh) * W + ow] = acc;
                }

    /* step 2: batch norm, inference mode (running mean / variance) */
    for (int64_t n = 0; n < N; n++)
        for (int64_t co = 0; co < CO; co++) {
            float inv = 1.0f / sqrtf(var[co] + eps);
            for (int64_t p = 0; p < H * W; p++) {
                float *v = &y[(n * CO + co) * H * W + p];
                *v = (*v - mean[co]) * inv * gamma[co] + beta[co];
            }
        }

    /* step 3: ReLU */
    for (int64_t i = 0; i < N * CO * H * W; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}
