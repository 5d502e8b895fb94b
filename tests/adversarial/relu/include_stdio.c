/*
 * include_stdio.c - includes <stdio.h> (not on the allow-list) and prints
 * from the kernel. Harmless by itself, but stdio is the door to files.
 * Defences: anti-hack (include allow-list); the object inspection rejects
 * the call to printf/puts.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>
#include <stdio.h>

void relu(const float *x, float *y, int64_t N)
{
    printf("relu called with N=%ld\n", (long)N);
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
