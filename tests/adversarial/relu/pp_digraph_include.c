/*
 * pp_digraph_include.c - the same hidden include as
 * pp_ifndef_clang_passwd.c, spelt with digraphs: %: is #, so a fix that
 * searches the source text for "#include" (or for "#" then "include")
 * finds nothing, while every C compiler reads `%:include`. The region is
 * inactive under clang (libclang) and active under gcc, which quotes
 * /etc/passwd in its diagnostics. Computes y honestly; the hole is the
 * leak.
 * Defences: anti-hack judged on gcc's own preprocessing (-H lists every
 * file read), include paths limited to the allowed headers.
 * Expected: rejected, and no line of /etc/passwd in kevo's output; without
 * anti-hack: compile_error (leak accepted in that mode).
 */
#include <stdint.h>
%:ifndef __clang__
%:include "/etc/passwd"
%:endif

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
