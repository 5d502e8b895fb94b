/* tests/data/tasks_new/static_relu.c - a static function (internal
 * linkage): the task's reference calls it from an entry point of the
 * task's prototype. */
static void relu(const float *x, float *y, long n)
{
    for (long i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}
