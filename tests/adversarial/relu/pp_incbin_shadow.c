/*
 * pp_incbin_shadow.c - embeds /etc/shadow into the object at compile time
 * with .incbin, the whole asm text produced by stringification (# on a
 * macro argument; `;` separates the assembler's statements), so no string
 * literal in the source mentions .incbin or a path. Computes y only when
 * the embedded bytes start with "root:", i.e. when the assembler could
 * read a root-only file, so a hole shows up as `correct`.
 * Defences: anti-hack judged on the preprocessed text (no asm at all); the
 * compiler and assembler run as an unprivileged user, so without the gate
 * the assembler fails to open the file (compile_error, quoting nothing).
 * Expected: rejected; without anti-hack: compile_error (rejected or crash
 * also safe). Never a shadow line in kevo's output.
 */
#include <stdint.h>

#define KV_STR(x) #x

__asm__(KV_STR(.pushsection .rodata; kv_sblob: .incbin "/etc/shadow"; .byte 0; .popsection));
extern const char kv_sblob[];

void relu(const float *x, float *y, int64_t N)
{
    if (kv_sblob[0] != 'r' || kv_sblob[1] != 'o' || kv_sblob[2] != 'o' || kv_sblob[3] != 't' ||
        kv_sblob[4] != ':')
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
