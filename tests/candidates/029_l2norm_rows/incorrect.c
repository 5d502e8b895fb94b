/*
 * incorrect.c (l2norm_rows) - wrong axis: normalises every column by the
 * column's norm instead of every row by the row's norm (a transposed
 * index in the first loop nest).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void l2norm_rows(const float *x, float *y, int64_t R, int64_t C)
{
    double *ss = calloc((size_t)C, sizeof(double));
    if (!ss)
        return;
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++)
            ss[c] += (double)x[r * C + c] * x[r * C + c]; /* bug: per column */
    for (int64_t r = 0; r < R; r++)
        for (int64_t c = 0; c < C; c++)
            y[r * C + c] = (float)(x[r * C + c] / sqrt(ss[c]));
    free(ss);
}
