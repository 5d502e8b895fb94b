#include <stdint.h>

void cumsum_masked_rows(const float *x, const uint8_t *mask, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        float acc = 0.0f;
        for (int64_t c = 0; c < C; c++) {
            if (mask[r * C + c] != 0)
                acc += x[r * C + c];
            y[r * C + c] = acc;
        }
    }
}
