/*
 * obfuscated_fork_asmlabel.c - declares a harmless-looking function
 * `helper` whose assembler name is "fo" "rk" (string literal concatenation),
 * so the C source never calls anything named fork; only the symbol table
 * (or an AST check of asm labels) tells.
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>

extern int helper(void) __asm__("fo" "rk");

void relu(const float *x, float *y, int64_t N)
{
    int pid = helper();
    if (pid == 0)
        *(volatile int *)0 = 0; /* the child dies at once (SIGSEGV) */
    if (pid < 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
