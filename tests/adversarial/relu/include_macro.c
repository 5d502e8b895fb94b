/*
 * include_macro.c - includes <stdio.h> through a macro (#include HDR), so a
 * check of the text after `#include` sees no forbidden header.
 * Defences: anti-hack (include allow-list checked on the preprocessor's
 * view, e.g. libclang's inclusion list); the object inspection rejects
 * the call to puts.
 * Expected: rejected; without anti-hack: rejected.
 */
#include <stdint.h>
#define KV_HDR <stdio.h>
#include KV_HDR

void relu(const float *x, float *y, int64_t N)
{
    puts("hello from the kernel");
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
