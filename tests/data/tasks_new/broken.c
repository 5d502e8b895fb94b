/* tests/data/tasks_new/broken.c - a file that does not parse. */
void relu(const float *x, float *y, int n)
{
    for (int i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0
}
