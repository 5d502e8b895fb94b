#include <stdint.h>

void cumsum_reverse_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        float acc = 0.0f;
        for (int64_t c = C - 1; c >= 0; c--) {
            acc += x[r * C + c];
            y[r * C + c] = acc;
        }
    }
}
