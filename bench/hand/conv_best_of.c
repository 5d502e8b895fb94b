/*
 * bench/hand/conv_best_of.c - a driver (not a kernel; outside bench/*.c,
 * which CMake builds as programs of their own) that times a candidate
 * kernel of Level 1's conv2d (suites/c/level1/051_conv2d) or, built with
 * -DCONV3D, conv3d
 * (054_conv3d) at the suite's timed sizes: the best of R calls (default
 * 200) on the same inputs, in GFLOP/s. Where `kevo eval --versus` on this
 * shared 2-core machine reads the quartiles of two kernels' ratio across 1
 * (other tenants' load comes and goes between rounds), the best call of
 * many on one core separates differences of 10-20% (docs/performance.md,
 * "Register reuse for the direct convolutions"). Not used by kevo itself.
 *
 *   build/tests/recipe_apply suites/c/level1/051_conv2d/reference.c conv2d \
 *       register_block omp_parallel > K.c
 *   gcc -O3 -march=native -fopenmp -c K.c -o K.o
 *   gcc -O2 bench/hand/conv_best_of.c K.o -fopenmp -o conv_best_of
 *   OMP_NUM_THREADS=1 ./conv_best_of [R]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef CONV3D
void conv3d(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t D, int64_t H,
            int64_t W, int64_t OC, int64_t K);
static const int64_t N = 1, C = 8, D = 32, H = 32, W = 32, OC = 8, K = 3;
#else
void conv2d(const float *x, const float *w, float *y, int64_t N, int64_t C, int64_t H, int64_t W,
            int64_t OC, int64_t K);
static const int64_t N = 2, C = 32, D = 1, H = 48, W = 48, OC = 32, K = 3;
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s [ROUNDS >= 1]\n", argv[0]);
        return 2;
    }
#ifdef CONV3D
    const int64_t OD = D - K + 1, KD = K;
#else
    const int64_t OD = 1, KD = 1;
#endif
    const int64_t OH = H - K + 1, OW = W - K + 1;
    size_t nx = (size_t)(N * C * D * H * W), nw = (size_t)(OC * C * KD * K * K),
           ny = (size_t)(N * OC * OD * OH * OW);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float)),
          *y = malloc(ny * sizeof(float));
    if (!x || !w || !y) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < nw; i++)
        w[i] = (float)(i % 5) * 0.1f;
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        double t = now();
#ifdef CONV3D
        conv3d(x, w, y, N, C, D, H, W, OC, K);
#else
        conv2d(x, w, y, N, C, H, W, OC, K);
#endif
        t = now() - t;
        if (t < best)
            best = t;
    }
    double flops = 2.0 * (double)(N * OC * C * KD * K * K * OD * OH * OW);
    printf("best of %d: %.1f us, %.1f GFLOP/s\n", rounds, best * 1e6, flops / best * 1e-9);
    free(x);
    free(w);
    free(y);
    return 0;
}
