#include <math.h>
#include <stdint.h>

void fused_gemm_l2norm_scale(const float *x, const float *w, const float *b, float *y,
                             float s, float eps, int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: divide each row by max(L2 norm of the row, eps) */
    for (int64_t m = 0; m < M; m++) {
        double ss = 0.0;
        for (int64_t n = 0; n < N; n++)
            ss += (double)y[m * N + n] * y[m * N + n];
        float nrm = (float)sqrt(ss);
        nrm = nrm > eps ? nrm : eps;
        for (int64_t n = 0; n < N; n++)
            y[m * N + n] /= nrm;
    }

    /* step 3: scale by s */
    for (int64_t i = 0; i < M * N; i++)
        y[i] *= s;
}
