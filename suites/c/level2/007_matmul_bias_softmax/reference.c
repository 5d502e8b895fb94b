#include <math.h>
#include <stdint.h>

void fused_matmul_bias_softmax(const float *x, const float *w, const float *b, float *y,
                               int64_t M, int64_t K, int64_t N)
{
    /* step 1: y = x @ w^T + b */
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            float acc = b[n];
            for (int64_t k = 0; k < K; k++)
                acc += x[m * K + k] * w[n * K + k];
            y[m * N + n] = acc;
        }

    /* step 2: softmax over each row (max-subtracted) */
    for (int64_t m = 0; m < M; m++) {
        float *row = &y[m * N];
        float mx = -INFINITY;
        for (int64_t n = 0; n < N; n++)
            mx = row[n] > mx ? row[n] : mx;
        double s = 0.0;
        for (int64_t n = 0; n < N; n++) {
            row[n] = expf(row[n] - mx);
            s += row[n];
        }
        for (int64_t n = 0; n < N; n++)
            row[n] = (float)(row[n] / s);
    }
}
