/*
 * pp_ifndef_clang_passwd.c - includes /etc/passwd only where the compiler
 * is not clang: libclang (which a static gate may use to parse the
 * candidate) defines __clang__ and skips the #include as an inactive
 * region, gcc (which builds the candidate) includes it, fails on its first
 * line and quotes the file's lines in its diagnostics, i.e. in the
 * feedback. Computes y honestly; the hole is the leak.
 * Defences: anti-hack judged on the translation unit as gcc sees it (gcc's
 * own preprocessor, -H), include paths limited to the allowed headers.
 * Expected: rejected, and no line of /etc/passwd in kevo's output; without
 * anti-hack: compile_error (that mode is unsafe by definition; the test
 * accepts the leak there).
 */
#include <stdint.h>
#ifndef __clang__
#include "/etc/passwd"
#endif

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
