// kevo: cflags -fopenmp
/*
 * correct.c (cumsum_rows) - rows in parallel; within a row, blocks of 8:
 * an in-block prefix (log-step shifts on a small array the compiler keeps
 * in registers), then the running carry is added and the block's last
 * value becomes the next carry. A scalar loop finishes C % 8.
 */
#include <omp.h>
#include <stdint.h>

static void scan_row(const float *x, float *y, int64_t C)
{
    float carry = 0.0f;
    int64_t c = 0;
    for (; c + 8 <= C; c += 8) {
        float t[8];
        for (int k = 0; k < 8; k++)
            t[k] = x[c + k];
        for (int k = 7; k >= 1; k--)
            t[k] += t[k - 1];
        for (int k = 7; k >= 2; k--)
            t[k] += t[k - 2];
        for (int k = 7; k >= 4; k--)
            t[k] += t[k - 4];
        for (int k = 0; k < 8; k++)
            y[c + k] = t[k] + carry;
        carry = y[c + 7];
    }
    for (; c < C; c++) {
        carry += x[c];
        y[c] = carry;
    }
}

void cumsum_rows(const float *x, float *y, int64_t R, int64_t C)
{
#pragma omp parallel for schedule(static) if (R * C > 65536)
    for (int64_t r = 0; r < R; r++)
        scan_row(x + r * C, y + r * C, C);
}
