/*
 * incorrect.c (cumsum_rows) - an exclusive scan where the task asks for an
 * inclusive one: y[r][c] = sum_{j<c} x[r][j] (the store comes before the
 * add).
 */
#include <stdint.h>

void cumsum_rows(const float *x, float *y, int64_t R, int64_t C)
{
    for (int64_t r = 0; r < R; r++) {
        float acc = 0.0f;
        for (int64_t c = 0; c < C; c++) {
            y[r * C + c] = acc; /* bug: should add x first */
            acc += x[r * C + c];
        }
    }
}
