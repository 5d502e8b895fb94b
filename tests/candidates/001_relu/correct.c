// kevo: cflags -fopenmp
/*
 * correct.c (relu) - AVX-512 where available: 64 floats per iteration
 * with max(x, 0), a masked tail, and OpenMP over large blocks. Handles any
 * N (1, 7, 1003, 2^24).
 */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>

#define BLOCK 65536

static void relu_block(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__)
    const __m512 zero = _mm512_setzero_ps();
    for (; i + 64 <= n; i += 64) {
        __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        __m512 c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
        _mm512_storeu_ps(y + i, _mm512_max_ps(a, zero));
        _mm512_storeu_ps(y + i + 16, _mm512_max_ps(b, zero));
        _mm512_storeu_ps(y + i + 32, _mm512_max_ps(c, zero));
        _mm512_storeu_ps(y + i + 48, _mm512_max_ps(d, zero));
    }
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_max_ps(_mm512_loadu_ps(x + i), zero));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, _mm512_max_ps(_mm512_maskz_loadu_ps(m, x + i), zero));
    }
#else
    for (; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
#endif
}

void relu(const float *x, float *y, int64_t N)
{
    int64_t nblocks = (N + BLOCK - 1) / BLOCK;
    if (nblocks <= 1) {
        relu_block(x, y, N);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t start = b * BLOCK;
        int64_t len = N - start < BLOCK ? N - start : BLOCK;
        relu_block(x + start, y + start, len);
    }
}
