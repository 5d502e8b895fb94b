// kevo: cflags -fopenmp
/*
 * correct.c (matmul_square) - B is first packed into 16-column panels
 * stored k-major (contiguous, so no cache-set conflicts from the row
 * stride); then a register-blocked micro-kernel with GCC vector extensions
 * (8-float vectors: AVX/AVX2 registers, or halves of AVX-512 ones) keeps a
 * 6 x 16 tile of C in 12 vector accumulators while k runs over the whole
 * row. (panel, row tile) pairs are shared out by OpenMP, panel-major, so
 * a panel stays in L2. Tiles that do not fill 6 x 16 (N = 1, 2, 13, 67
 * and the edges) take a plain path that accumulates a row segment in a
 * local array.
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TR 6
#define TC 16

typedef float v8 __attribute__((vector_size(32)));

static inline v8 load8(const float *p)
{
    v8 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline void store8(float *p, v8 v)
{
    memcpy(p, &v, sizeof(v));
}

static void tile_generic(const float *A, const float *B, float *C, int64_t N, int64_t i0,
                         int64_t rows, int64_t j0, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) {
        float acc[TC];
        for (int64_t j = 0; j < cols; j++)
            acc[j] = 0.0f;
        const float *a = A + (i0 + r) * N;
        for (int64_t k = 0; k < N; k++) {
            float av = a[k];
            const float *b = B + k * N + j0;
            for (int64_t j = 0; j < cols; j++)
                acc[j] += av * b[j];
        }
        for (int64_t j = 0; j < cols; j++)
            C[(i0 + r) * N + j0 + j] = acc[j];
    }
}

/* Bp: the packed panel of columns j0 .. j0+15, element (k, j) at Bp[16 k + j]. */
static void tile_6x16(const float *A, const float *Bp, float *C, int64_t N, int64_t i0, int64_t j0)
{
    v8 c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v8 c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    const float *a = A + i0 * N;
    for (int64_t k = 0; k < N; k++) {
        const float *b = Bp + 16 * k;
        v8 b0 = load8(b), b1 = load8(b + 8);
        v8 x;
        x = (v8){0} + a[k];
        c00 += x * b0;
        c01 += x * b1;
        x = (v8){0} + a[N + k];
        c10 += x * b0;
        c11 += x * b1;
        x = (v8){0} + a[2 * N + k];
        c20 += x * b0;
        c21 += x * b1;
        x = (v8){0} + a[3 * N + k];
        c30 += x * b0;
        c31 += x * b1;
        x = (v8){0} + a[4 * N + k];
        c40 += x * b0;
        c41 += x * b1;
        x = (v8){0} + a[5 * N + k];
        c50 += x * b0;
        c51 += x * b1;
    }
    float *c = C + i0 * N + j0;
    store8(c, c00);
    store8(c + 8, c01);
    store8(c + N, c10);
    store8(c + N + 8, c11);
    store8(c + 2 * N, c20);
    store8(c + 2 * N + 8, c21);
    store8(c + 3 * N, c30);
    store8(c + 3 * N + 8, c31);
    store8(c + 4 * N, c40);
    store8(c + 4 * N + 8, c41);
    store8(c + 5 * N, c50);
    store8(c + 5 * N + 8, c51);
}

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    int64_t ntiles = (N + TR - 1) / TR;
    int64_t npanels = (N + TC - 1) / TC;
    int64_t full_panels = N / TC, full_tiles = N / TR;
    float *Bp = full_panels ? malloc((size_t)(full_panels * N * TC) * sizeof(float)) : NULL;
    if (!Bp)
        full_panels = 0; /* everything takes the plain path */
#pragma omp parallel if (N >= 128)
    {
#pragma omp for schedule(static)
        for (int64_t p = 0; p < full_panels; p++)
            for (int64_t k = 0; k < N; k++)
                memcpy(Bp + (p * N + k) * TC, B + k * N + p * TC, TC * sizeof(float));
#pragma omp for collapse(2) schedule(static)
        for (int64_t p = 0; p < npanels; p++)
            for (int64_t t = 0; t < ntiles; t++) {
                int64_t i0 = t * TR, j0 = p * TC;
                if (p < full_panels && t < full_tiles)
                    tile_6x16(A, Bp + p * N * TC, C, N, i0, j0);
                else
                    tile_generic(A, B, C, N, i0, N - i0 < TR ? N - i0 : TR, j0,
                                 N - j0 < TC ? N - j0 : TC);
            }
    }
    free(Bp);
}
