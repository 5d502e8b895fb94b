/* tests/data/tasks_new/scale_add.c - an elementwise operator as a user
 * brings it to `kevo tasks new`: one size, so every buffer is [n]. */
static float scale(float v)
{
    return 2.0f * v;
}

void scale_add(const float *x, const float *y, float *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = scale(x[i]) + y[i];
}
