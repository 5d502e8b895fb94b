/* tests/data/tasks_new/variadic.c - a variadic function: no fixed list of
 * arguments for kevo to pass. */
#include <stdarg.h>

void sum_all(float *out, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    float s = 0;
    for (int i = 0; i < n; i++)
        s += (float)va_arg(ap, double);
    va_end(ap);
    out[0] = s;
}
