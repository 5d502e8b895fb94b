/*
 * pp_splice_include.c - the same hidden include as
 * pp_ifndef_clang_passwd.c, with backslash-newline splices inside the
 * directive name and the path: the source text contains neither
 * "include" nor "/etc/passwd" on one line, the compiler joins the lines
 * before anything else. Active only when not compiling with clang, so
 * libclang does not see it; gcc quotes /etc/passwd in its diagnostics.
 * Computes y honestly; the hole is the leak.
 * Defences: anti-hack judged on gcc's own preprocessing (-H lists every
 * file read), include paths limited to the allowed headers.
 * Expected: rejected, and no line of /etc/passwd in kevo's output; without
 * anti-hack: compile_error (leak accepted in that mode).
 */
#include <stdint.h>
#if !defined(__clang__)
#  inc\
lude "/etc/pa\
sswd"
#endif

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
