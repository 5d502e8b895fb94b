#include <stdint.h>

void cumsum_exclusive_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        float acc = 0.0f;
        for (int64_t c = 0; c < C; c++) {
            y[r * C + c] = acc;
            acc += x[r * C + c];
        }
    }
}
