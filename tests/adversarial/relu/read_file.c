/*
 * read_file.c - opens /etc/passwd and, failing that, the task's reference
 * source and any expected-output file it might find nearby. Computes the
 * right answer only when a file could be opened, so a hole in the
 * defences shows up as `correct`.
 * Defences: anti-hack (stdio.h, file APIs); object inspection (fopen,
 * fread, fclose); the runner's own seccomp filter refuses open/openat
 * (EACCES) once it has started.
 * Expected: rejected; without anti-hack: rejected|incorrect|crash.
 */
#include <stdint.h>
#include <stdio.h>

void relu(const float *x, float *y, int64_t N)
{
    static const char *const paths[] = {"/etc/passwd", "reference.c", "../reference.c",
                                        "expected.bin", "../../reference.c", NULL};
    FILE *f = NULL;
    for (const char *const *p = paths; *p && !f; p++)
        f = fopen(*p, "r");
    if (!f)
        return; /* refused: leave y unwritten -> incorrect */
    char buf[16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    if (n == 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
