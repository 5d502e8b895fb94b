/* tests/data/tasks_new/rmsnorm.c - an RMS norm over the rows of a matrix
 * with an eps scalar: two sizes, so kevo tasks new needs --shape flags,
 * and a float scalar, so it needs --value eps=... */
#include <math.h>

void rmsnorm(const float *x, float *y, int rows, int cols, float eps)
{
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int c = 0; c < cols; c++)
            ss += (double)x[r * cols + c] * x[r * cols + c];
        float scale = (float)(1.0 / sqrt(ss / cols + eps));
        for (int c = 0; c < cols; c++)
            y[r * cols + c] = x[r * cols + c] * scale;
    }
}
