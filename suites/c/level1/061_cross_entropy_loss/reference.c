#include <stdint.h>
#include <math.h>

void cross_entropy_loss(const float *logits, const int64_t *target, float *y,
                        int64_t B, int64_t C)
{
    for (int64_t b = 0; b < B; b++) {
        const float *row = logits + b * C;
        float m = row[0];
        for (int64_t c = 1; c < C; c++)
            if (row[c] > m)
                m = row[c];
        float s = 0.0f;
        for (int64_t c = 0; c < C; c++)
            s += expf(row[c] - m);
        y[b] = m + logf(s) - row[target[b]];
    }
}
