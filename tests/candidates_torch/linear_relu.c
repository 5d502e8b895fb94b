#include <stdint.h>
void t_linear_relu(const float *x, const float *w, const float *b, float *y, int64_t batch_size,
                   int64_t in_features, int64_t out_features)
{
    for (int64_t i = 0; i < batch_size; i++)
        for (int64_t o = 0; o < out_features; o++) {
            float acc = b[o];
            for (int64_t k = 0; k < in_features; k++)
                acc += x[i * in_features + k] * w[o * in_features + k];
            y[i * out_features + o] = (acc > 0 ? acc : 0.0f) * 0.5f;
        }
}
