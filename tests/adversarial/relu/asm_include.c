/*
 * asm_include.c - makes the assembler read a host file: a top-level asm
 * `.include "/etc/passwd"`. The assembler (run with kevo's own rights)
 * fails on the first line and quotes it, so the file's contents would
 * reach the feedback shown to an LLM. Only the source gate can stop it
 * (top-level asm, or any asm naming a file).
 * Expected: rejected, and the JSON must not contain "root:x:0:0".
 */
#include <stdint.h>

__asm__(".include \"/etc/passwd\"\n");

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
