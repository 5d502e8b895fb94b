/*
 * util/sort.c - sorting numbers (for medians and quantiles).
 */
#include "kevo/util.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void kevo_sort_doubles(double *v, size_t n)
{
    if (v && n > 1)
        qsort(v, n, sizeof(double), cmp_double);
}
