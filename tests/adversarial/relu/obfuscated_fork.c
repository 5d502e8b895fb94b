/*
 * obfuscated_fork.c - calls fork() without the text "fork" appearing as
 * one token: the name is pasted together by a macro (F(fo) -> fork) and
 * called through a function pointer. No non-allow-listed include. A
 * textual scan misses it; an analysis of the preprocessed source (or of
 * the object's symbols) does not.
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>

#define PASTE(a, b) a##b
#define F(x) PASTE(x, rk)

extern int F(fo)(void);

void relu(const float *x, float *y, int64_t N)
{
    int (*volatile spawn)(void) = F(fo);
    int pid = spawn();
    if (pid == 0)
        *(volatile int *)0 = 0; /* the child dies at once (SIGSEGV) */
    if (pid < 0)
        return; /* refused: leave y unwritten -> incorrect */
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
