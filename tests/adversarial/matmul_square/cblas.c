/*
 * cblas.c - hands the whole operation to a BLAS library (cblas_sgemm),
 * declared by hand so that no include betrays it. Not a kernel: DESIGN.md
 * forbids calling a library that does the whole operation.
 * Defences: anti-hack (calls outside the allowed library functions); the
 * object inspection sees the undefined symbol cblas_sgemm; without either,
 * the link fails (no BLAS is linked).
 * Expected: rejected; without anti-hack: rejected|compile_error.
 */
#include <stdint.h>

extern void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta, float *c,
                        int ldc);

void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    int n = (int)N;
    cblas_sgemm(101 /* RowMajor */, 111 /* NoTrans */, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
}
